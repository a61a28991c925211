"""The profiler's recording: timed ranges for op calls, backward nodes and
``record_function`` blocks, collected by the sessions that are on.

While a session is on, the profiler observes the dispatcher and the engine the way a
dispatch mode does: ``state.modes`` becomes a list that is true even when empty, so the
dispatcher's existing mode check sends each level-0 op call to ``upcalls.dispatch_mode``,
which is then a timing wrapper; the engine's node step and leaf accumulation are swapped
for timing wrappers too. When the last session stops, everything is put back, so the
dispatcher's fast path has no check of its own for the profiler.
"""

from __future__ import annotations

import os
import sys
import threading
from time import perf_counter_ns

from .._core import upcalls
from .._core.aten import aten_call
from .._core.dispatch import dispatch
from .._core.state import state
from .._core.tensor import Tensor
from . import engine
from .node import AccumulateGrad

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EVALUATE = "autograd::engine::evaluate_function: "


class Range:
    """One timed range: name, thread, start and end (perf_counter ns), its parent range,
    the input shapes and the bytes it allocated itself, the backward node's sequence
    number, the Python stack, and whether a user named it (``record_function``)."""

    __slots__ = (
        "name",
        "thread",
        "start",
        "end",
        "parent",
        "shapes",
        "mem",
        "seq",
        "stack",
        "user",
    )

    def __init__(self, name: str, parent: Range | None, user: bool) -> None:
        self.name = name
        self.user = user
        self.thread = threading.get_ident()
        self.parent = parent
        self.shapes: list | None = None
        self.mem = 0
        self.seq = -1
        self.stack: list | None = None
        self.end: int | None = None
        self.start = perf_counter_ns()


class Session:
    """What one profiler collects: its options and the ranges opened while it is on."""

    def __init__(self, record_shapes: bool, profile_memory: bool, with_stack: bool) -> None:
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.ranges: list[Range] = []
        self.start = self.stop = 0


class _Open(threading.local):
    def __init__(self) -> None:
        self.stack: list[Range] = []


_open = _Open()
_sessions: list[Session] = []  # the sessions now on, oldest first
_saved: list = []  # what the observers replaced, while any session is on
# (the options of the sessions on, or-ed: what a range must record)
_wants = {"shapes": False, "memory": False, "stack": False}


def enabled() -> bool:
    """Whether a profiler session is on."""
    return bool(_sessions)


def open_range(name: str, user: bool = False) -> Range:
    """Start a range inside the innermost open one of this thread (``user``: named by
    ``record_function``)."""
    stack = _open.stack
    r = Range(name, stack[-1] if stack else None, user)
    if _wants["stack"]:
        r.stack = _user_stack()
    for s in _sessions:
        s.ranges.append(r)
    stack.append(r)
    return r


def close_range(r: Range) -> None:
    """End a range (and any left open inside it by an exception)."""
    r.end = perf_counter_ns()
    stack = _open.stack
    while stack:
        if stack.pop() is r:
            break


def _user_stack() -> list[str]:
    """The calling Python frames outside numtorch (its files and the generated op
    functions), innermost first, as PyTorch writes them (``file.py(12): function``)."""
    out = []
    f = sys._getframe(1)
    while f is not None:
        code = f.f_code
        if (
            not code.co_filename.startswith(_PACKAGE)
            and f.f_globals.get("_dispatch") is not dispatch
        ):
            out.append(f"{code.co_filename}({f.f_lineno}): {code.co_name}")
        f = f.f_back
    return out


class _ProfiledModes(list):
    """``state.modes`` while profiling: true even when empty, so the dispatcher's mode
    check hands each level-0 op call to the profiler; real modes are its items."""

    __slots__ = ()

    def __bool__(self) -> bool:
        return True


def _shape(a) -> list:
    return list(a.shape) if isinstance(a, Tensor) else []


def _allocated(res, op) -> int:
    """The bytes an op call's results own (a view's and an in-place write's: none)."""
    if op.view:
        return 0
    outs = res if isinstance(res, tuple) else (res,)
    return sum(o._data.nbytes for o in outs if isinstance(o, Tensor) and o._data.base is None)


def _observe_op(op, args: tuple, attrs: dict):
    """An op call timed as a range named as PyTorch names it (``aten::mul``)."""
    modes = state.modes
    below = _saved[0]
    if type(modes) is not _ProfiledModes:  # another thread, or inside a mode's handler
        return below(op, args, attrs)
    inplace = state.inplace_op is op
    try:
        func, targs, _ = aten_call(op, args, attrs)
        name = f"aten::{func._opname}{'_' if inplace else ''}"
    except Exception:  # (an odd call its own error will report)
        name, targs = f"aten::{op.name}", args
    r = open_range(name)
    try:
        if len(modes):
            res = below(op, args, attrs)
        else:
            state.modes = []
            try:
                res = dispatch(op, args, attrs)
            finally:
                state.modes = modes
    finally:
        close_range(r)
    if _wants["shapes"]:
        r.shapes = [_shape(a) for a in targs]
    if _wants["memory"] and not inplace:
        r.mem = _allocated(res, op)
    return res


def _observe_factory(fn, args: tuple, kwargs: dict):
    """A factory call (which never reaches the dispatcher) as PyTorch names it
    (``aten::ones``); the ops it calls are ranges inside it."""
    name = getattr(fn, "_aten_name", fn.__name__)
    if type(state.modes) is not _ProfiledModes or name is None:
        return _saved[3](fn, args, kwargs)
    r = open_range(f"aten::{name}")
    try:
        return fn(*args, **kwargs)
    finally:
        close_range(r)


class named_range:
    """A range around a block while a profiler is on (an autograd.Function's forward, named
    for its class, as PyTorch shows it); nothing otherwise."""

    __slots__ = ("name", "r")

    def __init__(self, name: str) -> None:
        self.name = name
        self.r: Range | None = None

    def __enter__(self) -> None:
        if type(state.modes) is _ProfiledModes:
            self.r = open_range(self.name)

    def __exit__(self, *exc) -> None:
        if self.r is not None:
            close_range(self.r)


def _observe_node(task, node, grads: list):
    """A backward node's step, as ``autograd::engine::evaluate_function: <node>`` around
    the node's own range."""
    run = _saved[1]
    if type(node) is AccumulateGrad:  # (timed by _observe_accumulate)
        return run(task, node, grads)
    name = node.name()
    outer = open_range(EVALUATE + name)
    inner = open_range(name)
    inner.seq = outer.seq = node._seq
    try:
        return run(task, node, grads)
    finally:
        close_range(inner)
        close_range(outer)


def _observe_accumulate(var, g, create_graph: bool) -> None:
    """A leaf's accumulation, as PyTorch shows its AccumulateGrad node."""
    accumulate = _saved[2]
    if g is None:
        return accumulate(var, g, create_graph)
    outer = open_range(EVALUATE + "torch::autograd::AccumulateGrad")
    inner = open_range("torch::autograd::AccumulateGrad")
    try:
        return accumulate(var, g, create_graph)
    finally:
        close_range(inner)
        close_range(outer)


def start(session: Session) -> None:
    """Turn a session on (the observers go in with the first session)."""
    if not _sessions:
        _saved[:] = [
            upcalls.dispatch_mode,
            *engine.swap_steps(_observe_node, _observe_accumulate),
            upcalls.factory_mode,
        ]
        upcalls.provide(dispatch_mode=_observe_op, factory_mode=_observe_factory)
        state.modes = _ProfiledModes(state.modes)
    _sessions.append(session)
    _update_wants()
    session.start = perf_counter_ns()


def stop(session: Session) -> None:
    """Turn a session off (the observers go out with the last session)."""
    session.stop = perf_counter_ns()
    if session in _sessions:
        _sessions.remove(session)
    _update_wants()
    if not _sessions and _saved:
        upcalls.provide(dispatch_mode=_saved[0], factory_mode=_saved[3])
        engine.swap_steps(_saved[1], _saved[2])
        _saved.clear()
        state.modes = list(state.modes)


def _update_wants() -> None:
    _wants["shapes"] = any(s.record_shapes for s in _sessions)
    _wants["memory"] = any(s.profile_memory for s in _sessions)
    _wants["stack"] = any(s.with_stack for s in _sessions)
