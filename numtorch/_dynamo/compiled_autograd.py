"""Compiled autograd: a backward pass captured once as a program of kernel calls on
arrays, cached, and replayed as generated Python code (torch._dynamo.compiled_autograd).

A ``backward()`` or ``autograd.grad`` under ``_enable(compiler_fn)`` walks its graph
and looks the walk up in a cache: a trie keyed node by node (breadth first from the
roots) on each node's type, non-tensor attributes, edges and hooks, so graphs with a
common prefix share entries. On a miss the pass is captured: it runs once with the
tracer on the stack, each node's vjp formulas called in one functional form
``(grads, saved values, attributes) -> grads`` on traced values, hooks and gradient
accumulation recorded as calls, in the eager engine's order. The program becomes a
Python function (``CapturedGraph``) that ``compiler_fn`` receives and returns a callable
for. A hit gathers the saved arrays and calls it. A hit that ran the program made for
its exact sizes also leaves a template of its graph (``_match``): a later pass on an
equal graph is checked against it node by node, without the walk, the trie or the size
comparison, and runs that program.

Shapes: with ``dynamic=True`` (the default) a captured graph serves every size; with
``dynamic=False`` the first change of a size recaptures once and marks the graph
dynamic. Inside, a graph's first program is specialized to its sizes; new sizes are
captured with symbolic sizes (``_core.symbolic``), and once two such captures make the
same program, it serves every size its guards pass.
"""

from __future__ import annotations

import contextlib
import gc
import warnings
from collections.abc import Callable, Iterator

from .._core import upcalls
from .._core.state import anomaly, compiled_nodes, state
from . import _match
from ._capture import CapturedGraph
from ._walk import _CACHE, _Break, _Entry, kept_sig, lookup, store, walk
from .utils import counters


class _Compiler:
    """An active ``_enable`` context: the compiler function and the dynamic flag."""

    __slots__ = ("fn", "dynamic")

    def __init__(self, fn: Callable, dynamic: bool) -> None:
        self.fn = fn
        self.dynamic = dynamic


compiled_autograd_enabled = False


@contextlib.contextmanager
def _enable(
    compiler_fn: Callable, dynamic: bool = True, ignore_active_disable_ctx: bool = True
) -> Iterator[None]:
    """Run every backward pass inside the block as compiled code (``compiler_fn(graph)``
    returns the callable that runs a captured graph)."""
    global compiled_autograd_enabled
    if dynamic and type(dynamic) is not bool:
        raise AssertionError(f"Expected dynamic to be bool, got {type(dynamic)}")
    if not ignore_active_disable_ctx and _disabled[0]:
        yield
        return
    prior, prior_enabled = state.compiler, compiled_autograd_enabled
    state.compiler = _Compiler(compiler_fn, bool(dynamic))
    compiled_autograd_enabled = True
    try:
        yield
    finally:
        state.compiler = prior
        compiled_autograd_enabled = prior_enabled


_disabled = [False]


@contextlib.contextmanager
def _disable() -> Iterator[None]:
    """Run backward passes eagerly inside the block."""
    global compiled_autograd_enabled
    prior, prior_enabled, prior_disabled = state.compiler, compiled_autograd_enabled, _disabled[0]
    state.compiler = None
    compiled_autograd_enabled = False
    _disabled[0] = True
    try:
        yield
    finally:
        state.compiler = prior
        compiled_autograd_enabled = prior_enabled
        _disabled[0] = prior_disabled


def reset() -> None:
    """Forget every captured graph (the cache outlives ``_enable`` until this)."""
    global compiled_autograd_enabled
    compiled_autograd_enabled = False
    state.compiler = None
    _CACHE.children.clear()
    _CACHE.entry = None
    _match._TEMPLATES.clear()


_warned: set = set()


def _warn_once(why: str) -> None:
    if why not in _warned:
        _warned.add(why)
        warnings.warn(f"compiled autograd: {why}; running this backward pass eagerly", stacklevel=4)


def compiled_backward(compiler: _Compiler, roots, grads, inputs, keep_graph, accumulate):
    """The engine's entry: run the pass as compiled code, or NotImplemented (eager)."""
    if anomaly.enabled:
        _warn_once("anomaly mode is on")
        return NotImplemented
    if state.stack or state.modes:
        return NotImplemented
    collecting = gc.isenabled()
    if collecting:  # the walk makes many small acyclic tuples: no cycles to look for
        gc.disable()
    try:
        return _run(compiler, roots, grads, inputs, keep_graph, accumulate)
    finally:
        if collecting:
            gc.enable()


def _run(compiler: _Compiler, roots, grads, inputs, keep_graph: bool, accumulate: bool):
    if compiler is not compiled_nodes:
        hit = _match.match(roots, grads, inputs, accumulate, keep_graph)
        if hit is not None:
            entry, w = hit
            return entry.fn(w.arrays, w)
    try:
        w = walk(roots, grads, inputs, accumulate, keep_graph, full=False)
    except _Break as e:
        if e.args:  # (else eager raises the error: a freed graph, a stale saved tensor)
            _warn_once(e.args[0])
        return NotImplemented
    if compiler is compiled_nodes:  # compiled if an output of numtorch.compile is in it
        if _disabled[0]:
            return NotImplemented
        compiler = next((n._compiler for n in w.nodes if n._compiler is not None), None)
        if compiler is None:
            return NotImplemented
    entry = lookup(w)
    if entry is None:
        graph = CapturedGraph()
        result = graph.capture(w)
        _keep(compiler, w, graph)
        return result
    _recount(entry, w)
    if entry.fn is None:  # a graph first met inlined into a compiled program: captured now
        entry.graph = CapturedGraph()
        result = entry.graph.capture(w)
        entry.fn = compiler.fn(entry.graph)
        return result
    if compiler is not compiled_nodes:
        w.entry = entry  # (a template of the graph, if its sizes' program runs)
    return entry.fn(w.arrays, w)


def _keep(compiler: _Compiler, w, graph: CapturedGraph) -> None:
    """A new captured graph: counted, handed to the compiler function, and cached."""
    counters["compiled_autograd"]["captures"] += 1
    fn = compiler.fn(graph)
    counters["compiled_autograd"]["compiles"] += 1
    store(w, _Entry(fn, graph, compiler.dynamic, kept_sig(w)))


def _recount(entry: _Entry, w) -> None:
    """A static graph met at new sizes or strides is captured again, as dynamic."""
    if not entry.dynamic and (w.sig, w.layouts) != entry.sig:
        counters["compiled_autograd"]["captures"] += 1
        counters["compiled_autograd"]["compiles"] += 1
        entry.dynamic = True


def account(compiler: _Compiler, w) -> None:
    """A pass captured elsewhere (inlined into numtorch.compile's program, specialized to
    its strides) counted and cached as a pass captured here would be; an eager pass of the
    same graph captures its own program uncounted, at its first hit."""
    entry = lookup(w)
    if entry is None:
        counters["compiled_autograd"]["captures"] += 1
        counters["compiled_autograd"]["compiles"] += 1
        store(w, _Entry(None, None, compiler.dynamic, kept_sig(w)))
    else:
        _recount(entry, w)


upcalls.provide(compiled_backward=compiled_backward)
