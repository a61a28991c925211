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
for. A hit gathers the saved arrays and calls it.

Shapes: with ``dynamic=True`` (the default) a captured graph serves every size; with
``dynamic=False`` the first change of a size recaptures once and marks the graph
dynamic. A graph keeps one specialized program per set of sizes it has met.
"""

from __future__ import annotations

import contextlib
import gc
import heapq
import itertools
import warnings
from collections.abc import Callable, Iterator

from .._core import upcalls
from .._core.device import _cuda_used
from .._core.state import anomaly, compiled_nodes, state
from .._core.tensor import Tensor, _make
from ..autograd import engine
from ..autograd.graph import (
    AccumulateGrad,
    CopySlices,
    Node,
    Saved,
    SavedValues,
    _running,
    _SavedList,
    _SavedTuple,
    _task_ids,
)
from . import _codegen
from ._trace import Tracer
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


# ------------------------------------------------------------------ the cache
class _Trie:
    __slots__ = ("children", "entry")

    def __init__(self) -> None:
        self.children: dict = {}
        self.entry: _Entry | None = None


class _Entry:
    """A captured graph: what ``compiler_fn`` made of it, and whether it serves any size."""

    __slots__ = ("fn", "graph", "dynamic", "sig")

    def __init__(self, fn, graph, dynamic: bool, sig) -> None:
        self.fn = fn
        self.graph = graph
        self.dynamic = dynamic
        self.sig = sig


_CACHE = _Trie()

# A node's kind in the walk: an op's node (its formulas are traced), a built-in node
# called as it is (a CopySlices, or a node whose saved values go through unpack hooks),
# a leaf's AccumulateGrad.
_OP, _OPAQUE, _LEAF = 0, 1, 2


class _Walk:
    """One backward call's graph as the cache and the compiled code see it."""

    __slots__ = (
        "keys", "nodes", "kinds", "arrays", "sig", "roots", "inputs", "accumulate",
        "keep_graph", "entry",
    )  # fmt: skip


class _Break(Exception):
    """The pass must run eagerly (a custom autograd.Function, a freed graph, a stale
    saved tensor: eager raises the exact error)."""


def _freeze(v):
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, dict):
        return tuple((k, _freeze(x)) for k, x in v.items())
    if isinstance(v, slice):
        return (slice, v.start, v.stop, v.step)
    try:
        hash(v)
    except TypeError:
        return _Same(v)
    return v


class _Same:
    """An unhashable value in a key: only the same object hits again (held, so that its
    id is not reused)."""

    __slots__ = ("v",)

    def __init__(self, v) -> None:
        self.v = v

    def __hash__(self) -> int:
        return id(self.v)

    def __eq__(self, other) -> bool:
        return type(other) is _Same and other.v is self.v


def _saved_arrays(saved, arrays: list, raws: list, metas: list) -> bool:
    """Append a node's saved arrays (version-checked), its saved sizes and its other saved
    values; False when a saved value goes through unpack hooks (the node is then called
    as it is)."""
    n = len(arrays)
    for name, v in saved.items():
        t = type(v)
        if t is Saved:
            _saved_array(v, arrays)
        elif t is _SavedTuple or t is _SavedList:
            for s in v.t:
                if type(s) is Saved:
                    _saved_array(s, arrays)
                elif isinstance(s, Saved):
                    del arrays[n:]
                    return False
                else:
                    raws.append(s)
        elif isinstance(v, Saved):
            del arrays[n:]
            return False
        elif name.endswith("_shape"):
            metas.append(v)
        else:
            raws.append(v)
    return True


def _saved_array(s: Saved, arrays: list) -> None:
    if s.is_output:
        if s.t.v != s.version:
            raise _Break
        arrays.append(s.data)
    else:
        t = s.t
        if t._ver.v != s.version or t._level:
            raise _Break
        arrays.append(t._data)


# Attributes that are sizes (a view's shape, an expand's size): with dynamic sizes a new
# value is a new specialization of the same captured graph, as PyTorch's SymInt sizes.
_SIZE_NAMES = frozenset(("shape", "size", "sizes", "output_size"))
_SIZED: dict = {}


def _hook_flags(node: Node) -> tuple:
    """Which hooks a node and (for a leaf) its tensor have: the calls its program makes."""
    var = getattr(node, "variable", None)
    return (
        bool(node._pre_hooks), bool(node._post_hooks), node._hooked,
        var is not None and bool(var._hooks),
        var is not None and bool(var.__dict__.get("_post_acc_hooks")),
    )  # fmt: skip


def _walk(roots, grads, inputs, accumulate: bool, keep_graph: bool) -> _Walk:
    """The graph breadth first from the roots: each node's cache key, its kind, the saved
    arrays in order, and the sizes a program is specialized to; the trie entry found (on
    ``w.entry``, None on a miss)."""
    w = _Walk()
    nodes: list = []
    index: dict = {}
    for node, _ in roots:
        if node is not None and node not in index:
            index[node] = len(nodes)
            nodes.append(node)
    arrays = []
    metas = []
    for g in grads:
        if g is None:
            arrays.append(None)
            continue
        if type(g) is not Tensor and g._level:
            raise _Break
        arrays.append(g._data)
    keys = [(tuple(None if n is None else (index[n], nr) for n, nr in roots), accumulate)]
    trie = _CACHE.children.get(keys[0])
    kinds = []
    push, find = nodes.append, index.get
    ordered = True  # sequence numbers fall along the walk
    last = 1 << 64
    i = 0
    while i < len(nodes):
        node = nodes[i]
        i += 1
        edges = []
        for nxt, nr in node.next_functions:
            if nxt is None:
                edges.append(-1)
                continue
            j = find(nxt)
            if j is None:
                j = index[nxt] = len(nodes)
                push(nxt)
            edges.append(j if not nr else (j, nr))
        seq = node._seq
        if seq >= last:
            ordered = False
        last = seq
        cls = type(node)
        if cls is AccumulateGrad:
            kind = _LEAF
            key = (_LEAF, _hook_flags(node), node.variable._grad is None)
        else:
            hooks = _hook_flags(node) if node._any_hooks else 0
            saved = node.saved
            if saved is None:
                raise _Break  # freed: eager raises
            if cls is CopySlices:
                kind = _OPAQUE
                key = (_OPAQUE, node.fn.op, _freeze(node.attrs), hooks, *edges)
                metas.append((node._out_meta, node.fn.in_meta))
            else:
                op = node.op if cls is not Node else None
                if op is None or op.recorder is not None:
                    raise _Break  # a user-defined Function: its backward may read values
                attrs = node.attrs
                sized = _SIZED.get(op)
                if sized is None:
                    sized = _SIZED[op] = tuple(n for n, *_ in op.attrs if n in _SIZE_NAMES)
                if sized:  # sizes are the program's business, not the key's
                    metas.append(tuple(attrs.get(n) for n in sized))
                    attrs = {n: v for n, v in attrs.items() if n not in sized}
                if saved:
                    raws: list = []
                    kind = _OP if _saved_arrays(saved, arrays, raws, metas) else _OPAQUE
                    key = (op, tuple(attrs.items()), hooks, kind, tuple(raws), *edges)
                else:
                    kind = _OP
                    key = (op, tuple(attrs.items()), hooks, *edges)
                metas.append((node._out_meta, node.in_meta))
        kinds.append(kind)
        keys.append(key)
        try:
            if trie is not None:
                trie = trie.children.get(key)
            else:
                hash(key)
        except TypeError:  # an unhashable attribute
            keys[-1] = key = _freeze(key)
            if trie is not None:
                trie = trie.children.get(key)
    tail = []
    if not ordered:  # the engine runs nodes by sequence number
        tail.append(tuple(sorted(range(len(nodes)), key=lambda k: nodes[k]._seq)))
    if inputs is not None:  # where the gradients to capture or accumulate are
        edges = (engine.edge_of(t) if isinstance(t, Tensor) else (t.node, t.output_nr)
                 for t in inputs)  # fmt: skip
        tail.append(tuple(None if n not in index else (index[n], nr) for n, nr in edges))
    tail.append((keep_graph, tuple(None if a is None else a.dtype for a in arrays)))
    if _cuda_used[0]:  # a program made for NumPy arrays is not one for CuPy arrays
        tail.append(tuple(type(a) for a in arrays))
    for key in tail:
        keys.append(key)
        if trie is not None:
            trie = trie.children.get(key)
    w.entry = None if trie is None else trie.entry
    w.keys = keys
    w.nodes = nodes
    w.kinds = kinds
    w.arrays = arrays
    metas.append([None if a is None else a.shape for a in arrays])
    w.sig = metas  # compared, not hashed: it holds lists
    w.roots = roots
    w.inputs = inputs
    w.accumulate = accumulate
    w.keep_graph = keep_graph
    return w


def _store(keys, entry: _Entry) -> None:
    t = _CACHE
    for k in keys:
        nxt = t.children.get(k)
        if nxt is None:
            nxt = t.children[k] = _Trie()
        t = nxt
    t.entry = entry


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
    try:
        w = _walk(roots, grads, inputs, accumulate, keep_graph)
    except _Break:
        return NotImplemented
    if compiler is compiled_nodes:  # compiled if an output of numtorch.compile is in it
        if _disabled[0]:
            return NotImplemented
        compiler = next((n._compiler for n in w.nodes if n._compiler is not None), None)
        if compiler is None:
            return NotImplemented
    entry = w.entry
    if entry is None:
        counters["compiled_autograd"]["captures"] += 1
        graph = CapturedGraph()
        result = graph.capture(w)
        fn = compiler.fn(graph)
        counters["compiled_autograd"]["compiles"] += 1
        _store(w.keys, _Entry(fn, graph, compiler.dynamic, w.sig))
        return result
    if not entry.dynamic and w.sig != entry.sig:  # a size changed: recapture, dynamic
        counters["compiled_autograd"]["captures"] += 1
        counters["compiled_autograd"]["compiles"] += 1
        entry.dynamic = True
    return entry.fn(w.arrays, w)


# ------------------------------------------------------------------ the captured graph
class CapturedGraph:
    """A captured backward pass, callable as ``graph(inputs, walk)``: ``inputs`` the root
    gradients and saved arrays in walk order. ``nodes`` lists its calls (the graph IR);
    ``code`` is the generated source of the program for the sizes it last compiled."""

    def __init__(self) -> None:
        self.variants: list = []  # (sizes, function, nodes to free), newest first
        self.nodes: list = []
        self.code = ""

    def __call__(self, inputs: list, w: _Walk):
        sig = w.sig
        for variant in self.variants:
            if variant[0] == sig:
                break
        else:
            return self.capture(w)
        _, fn, frees = variant
        with _task(w):
            out = fn(inputs, w.nodes)
        if not w.keep_graph:
            nodes = w.nodes
            for k in frees:
                nodes[k].saved = None
        return None if out is None else [[None if a is None else _make(a)] for a in out]

    def capture(self, w: _Walk):
        """Run the pass once on traced values, make the program for its sizes, and return
        the pass's result."""
        run = _Capture(w)
        with _task(w):
            out = run.run()
        self.nodes = run.calls
        fn, self.code = _codegen.generate(run.tracer.program, len(w.arrays), run.outputs)
        self.variants.insert(0, (w.sig, fn, tuple(run.frees)))
        return out


class _task:  # noqa: N801 - a cheap context manager
    """The graph task that hooks see while the pass runs, under no_grad."""

    __slots__ = ("w", "enabled")

    def __init__(self, w: _Walk) -> None:
        self.w = w

    def __enter__(self) -> None:
        w = self.w
        task = engine._GraphTask(w.keep_graph, False, w.accumulate)
        _running.append((task, w.roots, next(_task_ids)))
        self.enabled = state.grad_enabled
        state.grad_enabled = False

    def __exit__(self, *exc) -> None:
        state.grad_enabled = self.enabled
        _running.pop()


class _Capture:
    """The eager engine's schedule, run on traced values: every kernel call, hook call and
    gradient accumulation becomes an instruction of the tracer's program."""

    def __init__(self, w: _Walk) -> None:
        self.w = w
        self.tracer = Tracer()
        self.calls: list = []  # (PyTorch's node name, its index) in execution order
        self.frees: list = []
        self.outputs: list | None = None

    def run(self):
        w, tracer = self.w, self.tracer
        wrap = tracer.wrap
        values = [None if a is None else wrap(_make(a), i) for i, a in enumerate(w.arrays)]
        tracer.nslots = len(values)
        self.inputs = iter(values[len(w.roots) :])
        task, slots = engine.plan_task(w.roots, w.inputs, w.keep_graph, False, w.accumulate)
        index = {n: k for k, n in enumerate(w.nodes)}
        with tracer:
            self._schedule(task, values[: len(w.roots)], index)
        if slots is None:
            return None
        self.outputs = [None if s[0] is None else s[0]._slot for s in slots]
        return [[None if s[0] is None else s[0]._inner] for s in slots]

    def _schedule(self, task, root_grads, index) -> None:
        """engine._execute's order and steps (one queue: the CPU's)."""
        w = self.w
        buffers: dict = {}
        ready: list = []
        counter = itertools.count()
        deps, exec_info, targets, captures = task.deps, task.exec_info, task.targets, task.captures
        saved_inputs = {}
        for k, node in enumerate(w.nodes):
            kind = w.kinds[k] if k < len(w.kinds) else None
            if kind is not None and kind != _LEAF:
                saved_inputs[node] = self._saved_values(node, kind)
        for (node, nr), g in zip(w.roots, root_grads):
            if node is not None:
                buf = buffers.setdefault(node, [None] * len(node._out_meta))
                engine._accumulate(buf, nr, g)
        for node in buffers:
            if deps.get(node, 0) == 0:
                heapq.heappush(ready, (-node._seq, next(counter), node))
        while ready:
            node = heapq.heappop(ready)[2]
            k = index[node]
            grads = buffers.pop(node)
            is_leaf = type(node) is AccumulateGrad
            if is_leaf and node.variable._hooks and grads[0] is not None:
                grads = self._hook("leaf", k, grads)
            if node._hooked:
                grads = self._hook("tensor_pre", k, grads)
            if captures and node in captures:
                for nr, slot in captures[node]:
                    slot[0] = grads[nr] if slot[0] is None else slot[0] + grads[nr]
            if exec_info is not None and node not in exec_info:
                continue
            if node._pre_hooks:
                grads = self._hook("node_pre", k, grads)
            if is_leaf:
                if task.accumulate:  # "new", "add": a first or a later .grad, no hooks
                    var = node.variable
                    plain = grads[0] is not None and not var.__dict__.get("_post_acc_hooks")
                    how = "new" if var._grad is None else "add"
                    self._hook("accumulate", k, grads, plain and how)
                if node._post_hooks:
                    self._hook("leaf_post", k, grads)
                continue
            nexts = node.next_functions
            if exec_info is None:
                wanted = [n is not None for n, _ in nexts]
            else:
                wanted = [n is not None and (n in exec_info or n in targets) for n, _ in nexts]
            if True in wanted:
                outs = self._apply(node, k, grads, wanted, saved_inputs[node])
            else:
                outs = [None] * len(nexts)
            if node._post_hooks:
                outs = self._hook("node_post", k, [*outs, *grads])
            if not w.keep_graph and node.saved and type(node.saved) is not SavedValues:
                node.saved = None
                self.frees.append(k)
            for (nxt, nr), g in zip(nexts, outs):
                if nxt is None:
                    continue
                buf = buffers.get(nxt)
                if buf is None:
                    buf = buffers[nxt] = [None] * len(nxt._out_meta)
                if g is not None:
                    engine._accumulate(buf, nr, g)
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    heapq.heappush(ready, (-nxt._seq, next(counter), nxt))

    def _saved_values(self, node: Node, kind: int):
        """The node's saved dict with each saved array replaced by its traced input (in the
        walk's order); None for a node called as it is."""
        if kind == _OPAQUE:
            return None
        inputs = self.inputs
        out = {}
        for name, v in node.saved.items():
            t = type(v)
            if t is Saved:
                out[name] = next(inputs)
            elif t is _SavedTuple:
                out[name] = tuple(next(inputs) for _ in v.t)
            elif t is _SavedList:
                out[name] = [next(inputs) if type(s) is Saved else s for s in v.t]
            else:
                out[name] = v
        return out

    def _apply(self, node: Node, k: int, grads: list, wanted: list, saved) -> list:
        self.calls.append((node.name(), k))
        program = self.tracer.program
        mark = len(program)
        if saved is not None:
            stand = _stand_in(node, saved)
            try:
                outs = Node.apply(stand, grads, wanted)
                if all(o is None or _traced(self.tracer, o) for o in outs):
                    return outs
            except Exception:  # noqa: BLE001 - Untraceable, or a formula that looks at levels
                pass  # (eager, called as it is, gives the node's own result or error)
            del program[mark:]
        return self._hook("opaque", k, grads, tuple(wanted))

    def _hook(self, kind: str, k: int, values: list, extra=None) -> list:
        """A call into eager code (hooks, accumulation, a node called as it is): run now on
        the real values, recorded as one instruction."""
        tracer = self.tracer
        real = [None if v is None else v._inner for v in values]
        node = self.w.nodes[k]
        with tracer.paused():
            res = _codegen.RUNTIME[kind](node, real, extra)
        out = [None if r is None else tracer.wrap(r) for r in res]
        tracer.program.append((
            "call", kind, k, [None if v is None else v._slot for v in values],
            [None if o is None else o._slot for o in out], extra,
        ))  # fmt: skip
        return out


def _traced(tracer: Tracer, v) -> bool:
    return isinstance(v, Tensor) and getattr(v, "_interp", None) is tracer


def _stand_in(node: Node, saved: dict) -> Node:
    """A node like ``node`` whose saved values are the traced ones (the functional form
    of its formulas: Node.apply on it)."""
    stand = Node.__new__(Node)
    stand.op = node.op
    stand.attrs = node.attrs
    stand.in_meta = node.in_meta
    stand._out_meta = node._out_meta
    stand.saved = saved
    return stand


upcalls.provide(compiled_backward=compiled_backward)
