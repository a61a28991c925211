"""numtorch.compile (torch.compile): a function or module run as generated code.

The first call with a new guard set is traced (``_dynamo._forward``): it runs eagerly
with the tracer recording every kernel call into a program, and the backward of its
outputs is captured from that run's graph into a second program. Later calls with the
same guards replay the forward program on the tensors' arrays and join its outputs to
autograd through one ``CompiledFunctionBackward`` node that runs the backward program.
The guards (``_Frame``) cover the modes, the arguments and tensors, and what the function
reads from modules, globals and closures. A call the tracer cannot turn into straight-line code (a value read into
Python, a tensor no guard covers, a custom autograd.Function, a module hook) finishes
eagerly, with one warning, and its guard set then always runs eagerly, its backward
passes compiled by compiled autograd. Under a function transform the function runs
eagerly. A captured backward graph (what ``_enable(numtorch.compile)`` hands over) is
already generated code and comes back as it is.

Sizes: a dim whose size changed between calls (``dynamic=None``), every dim of the
arguments (``dynamic=True``) or a dim given to ``_dynamo.mark_dynamic`` is dynamic: its
sizes share one graph (the guards, the recompile limit and the counters see one). Its
traces read sizes as symbols (``_core.symbolic``): once two traces at different sizes
make the same program, that program serves the graph's other sizes, its guards (the
decisions the trace took on sizes) checked as it runs; sizes it cannot serve are traced
into programs of their own (a graph whose trace breaks runs eagerly at all its sizes).
Sizes 0 and 1 are never dynamic, as in PyTorch.

A ``backward()`` inside the call is inlined into its program (``_dynamo._inline``), so
that a training step written as a bare loop replays as one function; callables whose code
names ``grad``, ``backward`` or ``zero_grad`` guard on each lifted tensor's ``.grad``.

Python side effects of the traced call other than writes into tensors (appending to a
list, setting an attribute) happen once, when it is traced; numbers the function reads
from globals of functions it calls (beyond two levels) are taken as they were then.
"""

from __future__ import annotations

import functools
import types
import warnings
from collections.abc import Callable
from typing import Any

from . import nn
from ._core import dtype as _dt
from ._core import symbolic as _symbolic
from ._core.device import _default as _device
from ._core.state import anomaly, compiled_nodes, state
from ._core.tensor import Tensor
from ._dynamo import BACKENDS, _forward, compiled_autograd
from ._dynamo._capture import CapturedGraph
from ._dynamo._ir import Op
from ._dynamo._trace import guards_first, same_consts
from ._dynamo.compiled_autograd import _Compiler
from ._dynamo.exc import InvalidBackend
from ._dynamo.utils import counters
from .autograd.node import HOOKS_ADDED as _HOOKS_ADDED
from .nn.modules.module import STATE as module_state

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


def compile(  # noqa: A001 - PyTorch's name
    model: Callable | None = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: str | Callable | None = None,
    mode: str | None = None,
    options: dict | None = None,
    name: str | None = None,
    disable: bool = False,
) -> Callable:
    """``model`` with its backward passes compiled (see the module doc); with no model, a
    decorator."""
    if mode is not None and options is not None:
        raise RuntimeError(
            "Either mode or options can be specified, but both can't be specified at the same time."
        )
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if backend is None:
        backend = "inductor"
    if isinstance(backend, str) and backend not in BACKENDS:
        raise InvalidBackend(backend)
    if model is None:
        return functools.partial(
            compile,
            fullgraph=fullgraph,
            dynamic=dynamic,
            backend=backend,
            mode=mode,
            options=options,
            name=name,
            disable=disable,
        )
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if disable or isinstance(model, CapturedGraph):
        return model
    compiler = _Compiler(backend if callable(backend) else _identity, dynamic is not False)
    if isinstance(model, nn.Module):
        return OptimizedModule(model, compiler, fullgraph, dynamic)
    return _compiled(model, compiler, fullgraph, dynamic=dynamic)


def _identity(graph: CapturedGraph) -> CapturedGraph:
    return graph


def _compiled(
    fn: Callable, compiler: _Compiler, fullgraph: bool = False, module=None, dynamic=None
):
    frame = _Frame(fn, compiler, fullgraph, module, dynamic)
    return functools.wraps(fn)(frame) if module is None else frame


# PyTorch's torch._dynamo.config.recompile_limit: guard sets (graphs) per compiled callable
RECOMPILE_LIMIT = 8
# The programs kept per graph with dynamic dims, one per set of sizes (the oldest goes)
SPECIALIZATIONS = 64
# The programs per graph that serve any sizes their guards pass (the oldest goes)
GENERIC = 8


class _Frame:
    """A compiled callable: its programs, one per guard set. A guard set is the grad and
    inference modes, the default dtype and device, the arguments' structure and constants,
    each tensor's shape, dtype, strides and requires_grad, and the state of the modules,
    globals and closure variables the function reads (their identities, the modules'
    flags and attributes).

    Dynamic dims: an argument's dim whose size changed between calls (``dynamic=None``,
    PyTorch's automatic dynamic), every dim of the arguments (``dynamic=True``), or a dim
    given to ``mark_dynamic``. Sizes of dynamic dims (other than 0 and 1, which PyTorch
    specializes) are left out of the graph's guards: a new size is no new graph and no
    recompile; it is served by a program made alike at two other sizes, or traced."""

    def __init__(
        self, fn: Callable, compiler: _Compiler, fullgraph: bool, module, dynamic=None
    ) -> None:
        self.fn = fn
        self.compiler = compiler
        self.fullgraph = fullgraph
        self.module = module
        self.dynamic = dynamic
        self.entries: dict = {}  # guard key -> Program, or None (runs eagerly)
        self.graphs: dict = {}  # graph key (sizes of dynamic dims left out) -> its keys
        # graph key -> its symbolic traces (by code) and the programs that two traces at
        # different sizes made alike, which serve its other sizes (the newest first)
        self.traces: dict = {}
        self.generic: dict = {}
        self.marks: dict = {}  # argument position -> its dims marked dynamic
        self.version = -1  # the modules' STATE the structure was taken at
        self.sources: list = []
        self.struct = None
        self.structs: dict = {}  # the structures met, numbered
        self.lifted: list = []
        self.grads = False  # the guards cover the lifted tensors' .grad (see _restructure)
        # the last call's guard head, its tensors' arrays and flags, its key and program: a
        # call on the very same arrays (whose shapes, dtypes and strides cannot have
        # changed) skips making its key
        self.last: tuple | None = None
        self.warned = False
        _forward.FRAMES.add(self)

    def __call__(self, *args, **kwargs):
        if state.stack or state.modes or anomaly.enabled or compiled_autograd._disabled[0]:
            return self.eager(args, kwargs)
        if not kwargs and all(type(a) is Tensor for a in args):
            flat, spec = list(args), len(args)
        else:
            flat = []
            try:
                spec = _flatten((args, kwargs), flat)
            except TypeError:  # an unhashable argument: no guard can cover it
                return self.eager(args, kwargs)
        if self.version != _MODULES[0] or not _hold(self.sources):
            self._restructure()
        if self.struct is None:
            return self.eager(args, kwargs)
        lifted = flat + self.lifted
        head = (state.grad_enabled, state.inference, _dt.get_default_dtype(), _device[0], spec)
        head += (self.struct,)
        # (where a backward may be in the program: the hooks it saw, none added since)
        hooks = _HOOKS_ADDED[0] if self.grads else None
        last = self.last
        if (
            last is not None
            and last[0] == head
            and last[4] == hooks
            and _unchanged(lifted, last[1], self.grads)
        ):
            key, entry = last[2], last[3]
        else:
            key = head + tuple([_meta(t) for t in lifted])
            if self.grads:
                key += (tuple([t._grad is None for t in lifted]), hooks)
            entry = self.entries.get(key, _MISS)
            if entry is _MISS:
                return self._miss(key, flat, lifted, args, kwargs)
            if entry is None:
                return self.eager(args, kwargs)
            self.last = (head, _snapshot(lifted), key, entry, hooks)
        out = entry(lifted, (self, key, args, kwargs))
        spec = entry.out_spec
        return out[0] if spec is _T else _unflatten(spec, iter(out))

    def eager(self, args: tuple, kwargs: dict):
        """The call run eagerly, its backward passes compiled."""
        compiler = self._backward_compiler()
        with compiled_autograd._enable(compiler.fn, compiler.dynamic):
            out = self.fn(*args, **kwargs)
        _mark(out, self.compiler)
        return out

    def _backward_compiler(self) -> _Compiler:
        """What compiles the backward passes inside a call: compiled autograd's, where
        enabled around it (PyTorch's), else this callable's."""
        outer = state.compiler
        return outer if type(outer) is _Compiler else self.compiler

    def clear(self) -> None:
        self.last = None
        self.entries.clear()
        self.graphs.clear()
        self.marks.clear()
        self.traces.clear()
        self.generic.clear()

    def _miss(self, key: tuple, flat: list, lifted: list, args: tuple, kwargs: dict):
        """A guard set not met before: a new graph, or a new set of sizes of one."""
        self.last = None
        graph = self._graph_key(key, flat)
        if graph not in self.graphs and self.dynamic is None and self._mark_changed(graph, flat):
            graph = self._graph_key(key, flat)
        keys = self.graphs.get(graph, _MISS)
        if keys is None:  # the graph broke at another size of its dynamic dims
            return self.eager(args, kwargs)
        if keys is _MISS:
            if len(self.graphs) >= RECOMPILE_LIMIT:
                self._warn(f"hit the recompile limit ({RECOMPILE_LIMIT})")
                return self.eager(args, kwargs)
            keys = self.graphs[graph] = []
        elif len(keys) >= SPECIALIZATIONS:
            del self.entries[keys.pop(0)]
        keys.append(key)
        for generic in self.generic.get(graph, ()):
            if generic.fits(lifted) and key not in generic.program.vetoed:
                try:
                    out = generic.program(lifted, (self, key, args, kwargs))
                except _symbolic.Recheck:  # (before any write or draw: guards_first)
                    continue
                self.entries[key] = generic.program
                spec = generic.program.out_spec
                return out[0] if spec is _T else _unflatten(spec, iter(out))
        return self._trace(key, lifted, args, kwargs, graph, new_graph=len(keys) == 1)

    def _dims(self, i: int, t: Tensor, ndim: int):
        if self.dynamic is True:
            return range(ndim)
        return getattr(t, "_dynamo_dynamic_indices", frozenset()) | self.marks.get(i, frozenset())

    def _graph_key(self, key: tuple, flat: list) -> tuple:
        """The guard key with the sizes of the arguments' dynamic dims (and so their
        strides) left out."""
        metas = list(key[_HEAD:])
        for i, t in enumerate(flat):
            typ, shape, dtype, strides, rg = metas[i]
            dims = self._dims(i, t, len(shape))
            if dims:
                sizes = tuple(None if d in dims and n > 1 else n for d, n in enumerate(shape))
                order = tuple(sorted(range(len(shape)), key=lambda d: -abs(strides[d])))
                metas[i] = (typ, sizes, dtype, order, rg)
        return key[:_HEAD] + tuple(metas)

    def _mark_changed(self, graph: tuple, flat: list) -> bool:
        """Mark dynamic the argument dims whose sizes alone tell ``graph`` from a graph
        met before (PyTorch's automatic dynamic); whether any was newly marked."""
        n = len(flat)
        for old in self.graphs:
            if old[:_HEAD] != graph[:_HEAD] or old[_HEAD + n :] != graph[_HEAD + n :]:
                continue
            changed: dict = {}
            for i in range(n):
                (t0, s0, d0, _, r0), (t1, s1, d1, _, r1) = old[_HEAD + i], graph[_HEAD + i]
                if (t0, d0, r0, len(s0)) != (t1, d1, r1, len(s1)):
                    break
                dims = {
                    d
                    for d, (x, y) in enumerate(zip(s0, s1))
                    if x is not None and y is not None and x != y
                }
                if dims - self.marks.get(i, frozenset()):
                    changed[i] = dims
            else:
                if changed:
                    for i, dims in changed.items():
                        self.marks[i] = self.marks.get(i, frozenset()) | dims
                    return True
        return False

    def _trace(self, key: tuple, lifted: list, args: tuple, kwargs: dict, graph, new_graph=True):
        symbolic = graph != key  # a graph with dynamic dims: its sizes read are symbolic
        tracer = _forward.ForwardTracer(lifted, self.fullgraph, symbolic)
        tracer.grads = self.grads
        tracer.compiler = self._backward_compiler()
        if symbolic:  # the arguments as the tracer's values, whose sizes are expressions
            flat: list = []
            spec = _flatten((args, kwargs), flat)
            args, kwargs = _unflatten(spec, (tracer.wrap(t, i) for i, t in enumerate(flat)))
        with tracer:
            out = self.fn(*args, **kwargs)
        flat: list = []
        try:
            spec = _flatten_out(out, flat)
        except TypeError as e:
            spec, result = None, str(e)
        else:
            result = tracer.finish(flat)
        if isinstance(result, str):
            self._warn(result)
            if graph != key:  # a dynamic graph: its other sizes run eagerly, untraced
                for k in self.graphs[graph]:
                    self.entries.pop(k, None)
                self.graphs[graph] = None
            self.entries[key] = None
        else:
            result.out_spec = spec
            self.entries[key] = result
            if symbolic:
                self._generalize(graph, result, tracer.program, lifted)
            counters["stats"]["unique_graphs"] += new_graph
            counters["stats"]["calls_captured"] += sum(type(i) is Op for i in tracer.program)
        if spec is not None:
            out = _unflatten(spec, iter(_forward._inner1(t) for t in flat))
        _mark(out, self.compiler)
        return out

    def _generalize(self, graph, program, instructions: list, lifted: list) -> None:
        """Keep the symbolic trace of a dynamic graph; when it made the same program as the
        trace before it, at other sizes, that program serves the graph's other sizes."""
        backward = program.backward
        if (backward is not None and backward.sizes is None) or not guards_first(instructions):
            return
        shapes = [t._data.shape for t in lifted]
        traces = self.traces.setdefault(graph, {})
        last = traces.pop(program.code, None)
        traces[program.code] = (program, shapes)
        if len(traces) > SPECIALIZATIONS:
            del traces[next(iter(traces))]
        if last is not None and _same_program(last[0], program):
            generic = self.generic.setdefault(graph, [])
            generic.insert(0, _Generic(program, last[1], shapes))
            del generic[GENERIC:]

    def veto(self, key: tuple, program) -> None:
        """``program``'s backward needed its forward again at the sizes of ``key`` (a size
        decision of the backward alone went the other way): those sizes get a trace of
        their own from the next call on."""
        program.vetoed.add(key)
        self.last = None
        if self.entries.get(key) is program:
            del self.entries[key]

    def _warn(self, why: str) -> None:
        counters["graph_break"][why] += 1
        if not self.warned:
            self.warned = True
            name = getattr(self.fn, "__qualname__", type(self.fn).__name__)
            warnings.warn(f"numtorch.compile: {why}; {name} runs eagerly", stacklevel=3)

    def _restructure(self) -> None:
        """Find the modules, tensors and numbers the function reads, and the guard on
        them (taken again only when a module or a global moved)."""
        self.version = _MODULES[0]
        roots = [self.module] if self.module is not None else []
        fns = [self.fn]
        if self.module is not None:
            fns = [type(m).forward for m in self.module.modules()]
        sources: list = []
        for fn in fns:
            _code_sources(fn, sources, 2)
        self.sources = sources
        # a function that names .grad or backward may run a backward whose accumulation
        # the program holds: its guards cover each lifted tensor's .grad being None
        codes = [getattr(getattr(f, "__func__", f), "__code__", None) for f in fns]
        codes += [v.__code__ for _, _, v in sources if isinstance(v, types.FunctionType)]
        self.grads = any(_GRAD_NAMES & _names(c) for c in codes if c is not None)
        tensors = [v for _, _, v in sources if isinstance(v, Tensor)]
        roots += [v for _, _, v in sources if isinstance(v, nn.Module)]
        numbers = tuple(v for _, _, v in sources if type(v) in _NUMBERS)
        flags: list = [numbers]
        for root in roots:
            for m in root.modules():
                d = m.__dict__
                if any(d[h] for h in _HOOKS):
                    self.struct = None
                    return
                tensors += [p for p in d["_parameters"].values() if p is not None]
                tensors += [b for b in d["_buffers"].values() if b is not None]
                for k, v in d.items():
                    if isinstance(v, Tensor):
                        tensors.append(v)
                    elif type(v) in _NUMBERS or (type(v) is tuple and _hashable(v)):
                        flags.append((k, v))
        seen: set = set()
        self.lifted = [t for t in tensors if not (id(t) in seen or seen.add(id(t)))]
        struct = (tuple(map(id, self.lifted)), tuple(map(id, roots)), tuple(flags))
        self.struct = self.structs.setdefault(struct, len(self.structs))  # (keys stay short)


_MISS = object()
_GRAD_NAMES = frozenset(("grad", "backward", "zero_grad"))
_HEAD = 6  # a guard key's items before the tensors' metadata
_MODULES = module_state
_NUMBERS = (bool, int, float, complex, str, type(None))
_HOOKS = (
    "_forward_hooks",
    "_forward_pre_hooks",
    "_backward_hooks",
    "_backward_pre_hooks",
)


def _hashable(v) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


def _snapshot(lifted: list) -> list:
    """What ``_unchanged`` compares: each tensor's array (held), requires_grad and .grad."""
    return [(t._data, t._rg, t._grad is None) for t in lifted]


def _unchanged(lifted: list, snapshot: list, grads: bool) -> bool:
    """Whether the tensors hold the arrays of ``snapshot`` with its flags (and, where the
    guards cover .grad, whether each is None)."""
    for t, (data, rg, none) in zip(lifted, snapshot):
        if t._data is not data or t._rg is not rg or (grads and (t._grad is None) is not none):
            return False
    return True


def _meta(t: Tensor) -> tuple:
    d = t._data
    return (type(d), d.shape, d.dtype, d.strides, t._rg)


def _code_sources(fn, out: list, depth: int) -> None:
    """(where, name, value) of the globals and closure variables ``fn`` names that a
    guard covers: tensors, modules and numbers; the functions it names, ``depth`` deep."""
    fn = getattr(fn, "__func__", fn)
    self = getattr(fn, "__self__", None)
    if isinstance(self, nn.Module):
        out.append((None, None, self))
    code = getattr(fn, "__code__", None)
    if code is None:
        return
    g = fn.__globals__
    for name in _names(code):
        if name in g:
            _consider(g[name], (g, name), out, depth)
    for cell in fn.__closure__ or ():
        try:
            v = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        _consider(v, (cell, None), out, depth)


def _names(code) -> set:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _names(c)
    return names


def _consider(v, where: tuple, out: list, depth: int) -> None:
    if isinstance(v, (Tensor, nn.Module)) or type(v) in _NUMBERS:
        out.append((*where, v))
    elif isinstance(v, types.FunctionType) and depth:
        out.append((*where, v))
        _code_sources(v, out, depth - 1)


def _hold(sources: list) -> bool:
    """Whether each global and closure variable still holds what the guard saw."""
    for where, name, v in sources:
        if where is None:
            continue
        if name is None:
            try:
                if where.cell_contents is not v:
                    return False
            except ValueError:
                return False
        elif where.get(name, _MISS) is not v:
            return False
    return True


def _flatten(x, out: list):
    """x's structure, with its tensors appended to ``out``; TypeError for a value no
    guard can compare."""
    if isinstance(x, Tensor):
        out.append(x)
        return _T
    t = type(x)
    if t is tuple or t is list:
        return (t, tuple(_flatten(v, out) for v in x))
    if t is dict:
        return (t, tuple((k, _flatten(v, out)) for k, v in x.items()))
    hash(x)
    return (t, x)


def _flatten_out(x, out: list):
    """An output's structure (its tensors appended to ``out``); TypeError for an output
    the replay cannot rebuild."""
    if isinstance(x, Tensor):
        out.append(x)
        return _T
    t = type(x)
    if t is tuple or t is list or (isinstance(x, tuple) and _named(t)):
        return (t, tuple(_flatten_out(v, out) for v in x))
    if t is dict:
        return (t, tuple((k, _flatten_out(v, out)) for k, v in x.items()))
    if t in _NUMBERS:
        return (t, x)
    raise TypeError(f"an output of type {t.__name__}")


def _unflatten(spec, tensors):
    if spec is _T:
        return next(tensors)
    t, items = spec
    if t is tuple or t is list:
        return t(_unflatten(v, tensors) for v in items)
    if t is dict:
        return {k: _unflatten(v, tensors) for k, v in items}
    if isinstance(t, type) and issubclass(t, tuple):  # a named tuple or a return type
        values = [_unflatten(v, tensors) for v in items]
        if hasattr(t, "n_fields") or t.__module__.endswith("return_types"):
            return t(values)  # (built from one sequence, as torch's structseqs)
        return t(*values)
    return items


def _named(t: type) -> bool:
    """A named tuple or a torch.return_types tuple."""
    return hasattr(t, "_fields") or hasattr(t, "n_fields")


class _Tensor:
    def __repr__(self) -> str:
        return "<tensor>"


_T = _Tensor()


def _mark(out: Any, compiler: _Compiler) -> None:
    """Outputs' backward passes run compiled, wherever they are called."""
    if isinstance(out, Tensor):
        fn = out.grad_fn
        if fn is not None:
            fn._compiler = compiler
            compiled_nodes.add(fn)
    elif isinstance(out, (list, tuple)):
        for o in out:
            _mark(o, compiler)
    elif isinstance(out, dict):
        for o in out.values():
            _mark(o, compiler)


class OptimizedModule(nn.Module):
    """A module under compile: its calls are the original module's, compiled
    (torch._dynamo.eval_frame.OptimizedModule)."""

    def __init__(
        self, mod: nn.Module, compiler: _Compiler, fullgraph: bool = False, dynamic=None
    ) -> None:
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_call"] = _compiled(mod.__call__, compiler, fullgraph, mod, dynamic)

    def forward(self, *args, **kwargs):
        return self.__dict__["_call"](*args, **kwargs)

    def __getattr__(self, name: str):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._orig_mod, name)


class _Generic:
    """A program made twice, at two sets of sizes: it serves any sizes whose dims are those
    it was traced at or ones that took two sizes (the others may have been read as
    constants)."""

    __slots__ = ("program", "shapes", "varying")

    def __init__(self, program, before: list, shapes: list) -> None:
        self.program = program
        self.shapes = shapes
        self.varying = [tuple(x != y for x, y in zip(a, b)) for a, b in zip(before, shapes)]

    def fits(self, lifted: list) -> bool:
        for t, shape, varying in zip(lifted, self.shapes, self.varying):
            now = t._data.shape
            if now != shape and any(n != s and not v for n, s, v in zip(now, shape, varying)):
                return False
        return True


def _same_program(a, b) -> bool:
    """Whether two traced programs (and their backward) are the same code on the same
    constants."""
    if a.code != b.code or not same_consts(a.fn.consts, b.fn.consts):
        return False
    ab, bb = a.backward, b.backward
    return ab is None or (ab.code == bb.code and same_consts(ab.fn.consts, bb.fn.consts))
