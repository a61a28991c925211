"""A captured backward pass: the eager engine's schedule run once on traced values, and
the generated programs it makes, one per set of sizes."""

from __future__ import annotations

import heapq
import itertools
from typing import Any, NamedTuple

from .._core.state import state
from .._core.symbolic import Recheck, concrete, map_syms, symbolize
from .._core.tensor import Tensor, _make
from ..autograd import engine
from ..autograd.graph import (
    AccumulateGrad,
    Node,
    Saved,
    SavedValues,
    _running,
    _SavedList,
    _SavedTuple,
    _task_ids,
)
from . import _codegen, _match
from ._ir import Call
from ._trace import Tracer, guards_first, hoist_guards, same_consts
from ._walk import _LEAF, _OPAQUE, _Walk, complete, kept_sig


class Variant(NamedTuple):
    """A captured graph's program for one set of sizes and layouts (``sig``), and the
    nodes whose saved values it frees."""

    sig: tuple
    fn: Any
    frees: tuple


class Generic(NamedTuple):
    """A program two captures at different sizes made alike: it serves any sizes its
    guards pass, at its ``layouts``."""

    layouts: list
    fn: Any
    frees: tuple


class NodeSizes(NamedTuple):
    """A node's sizes as a symbolic capture sees them: its attributes, in_meta and
    _out_meta (and, from the forward tracer, the saved values that are sizes)."""

    attrs: dict
    in_meta: Any
    out_meta: Any
    saved: dict | None = None


class CapturedGraph:
    """A captured backward pass, callable as ``graph(inputs, walk)``: ``inputs`` the root
    gradients and saved arrays in walk order. ``nodes`` lists its calls (the graph IR);
    ``code`` is the generated source of the program for the sizes it last compiled."""

    def __init__(self) -> None:
        self.variants: list[Variant] = []  # newest first
        # programs two captures at different sizes made alike, and the symbolic captures,
        # by code
        self.generic: list[Generic] = []
        self.symbolic: dict = {}
        self.nodes: list = []
        self.code = ""

    def __call__(self, inputs: list, w: _Walk):
        sig = (w.sig, w.layouts)
        if w.variant is not None:  # a template matched: its program (sizes checked)
            out = self._replay(w.variant.fn, w.variant.frees, inputs, w)
            return None if out is None else [[None if a is None else _make(a)] for a in out]
        for variant in self.variants:
            if variant.sig == sig:
                if w.entry is not None:
                    _match.remember(w, w.entry, variant)
                out = self._replay(variant.fn, variant.frees, inputs, w)
                break
        else:
            for generic in self.generic:
                if generic.layouts == w.layouts:
                    try:
                        out = self._replay(generic.fn, generic.frees, inputs, w)
                    except (Recheck, IndexError):  # (before any call into eager code)
                        # IndexError: the program reads a size of a rank the call's
                        # metadata does not have (made at other ranks); the call is
                        # captured on its own, where eager code raises any real error
                        continue
                    break
            else:  # a new size: captured with symbolic sizes, to serve others
                return self.capture(w, symbolic=bool(self.variants))
        return None if out is None else [[None if a is None else _make(a)] for a in out]

    @staticmethod
    def _replay(fn, frees, inputs: list, w: _Walk):
        with _task(w):
            out = fn(inputs, w.nodes, w.sig)
        if not w.keep_graph:
            nodes = w.nodes
            for k in frees:
                nodes[k].saved = None
        return out

    def capture(self, w: _Walk, symbolic: bool = False):
        """Run the pass once on traced values, make the program for its sizes (symbolic:
        for any sizes its guards pass), and return the pass's result."""
        run = _Capture(w, symbolic=symbolic)
        with _task(w):
            out = run.run()
        self.nodes = run.calls
        program = run.tracer.program
        if symbolic:
            _defer_accumulation(program)
            hoist_guards(program)
        fn, self.code = _codegen.generate(program, len(w.arrays), run.outputs)
        frees = tuple(run.frees)
        self.variants.insert(0, Variant(kept_sig(w), fn, frees))
        if symbolic and guards_first(program):
            key = (self.code, tuple(w.layouts))
            last = self.symbolic.pop(key, None)
            self.symbolic[key] = fn
            if len(self.symbolic) > _KEPT:
                del self.symbolic[next(iter(self.symbolic))]
            if last is not None and same_consts(last.consts, fn.consts):
                self.generic.insert(0, Generic(w.layouts, fn, frees))
                del self.generic[_KEPT:]
        return out


_KEPT = 8  # symbolic captures and generic programs kept per graph


def _defer_accumulation(program: list) -> None:
    """Move a program's accumulations into ``.grad`` to its end when it makes no other call
    (no hook can see when they happen), so that its guards come before them."""
    calls = [ins for ins in program if type(ins) is Call]
    if all(ins.what == "accumulate" and ins.extra in ("new", "add") for ins in calls):
        program[:] = [ins for ins in program if type(ins) is not Call] + calls


class _task:  # noqa: N801 - a cheap context manager
    """The graph task that hooks see while the pass runs, under no_grad."""

    __slots__ = ("w", "enabled")

    def __init__(self, w: _Walk) -> None:
        self.w = w

    def __enter__(self) -> None:
        w = self.w
        task = engine.GraphTask(w.keep_graph, False, w.accumulate)
        _running.append((task, w.roots, next(_task_ids)))
        self.enabled = state.grad_enabled
        state.grad_enabled = False

    def __exit__(self, *exc) -> None:
        state.grad_enabled = self.enabled
        _running.pop()


class _Capture:
    """The eager engine's schedule, run on traced values: every kernel call, hook call and
    gradient accumulation becomes an instruction of the tracer's program."""

    def __init__(
        self,
        w: _Walk,
        joint: bool = False,
        symbolic: bool = False,
        sizes: dict | None = None,
        static: bool = False,
    ) -> None:
        complete(w)
        self.w = w
        self.joint = joint  # the backward of a compiled forward: gradients for its inputs
        self.tracer = Tracer(symbolic)
        # the inputs' strides are fixed (a pass inlined into a forward program)
        self.tracer.static = static
        self.metas: dict = {}  # node -> its NodeSizes, symbolic
        # a joint capture's nodes' symbolic sizes, as the forward tracer saw them: the
        # backward reads them as m values the forward program computes (forward_sizes)
        self.sizes = sizes
        self.forward_sizes: list = []
        self.size_at: dict = {}
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
        """engine.execute's order and steps (one queue: the CPU's)."""
        w = self.w
        buffers: dict = {}
        ready: list = []
        counter = itertools.count()
        deps, exec_info, targets, captures = task.deps, task.exec_info, task.targets, task.captures
        saved_inputs = {
            node: self._saved_values(node, kind, k)
            for k, (node, kind) in enumerate(zip(w.nodes, w.kinds))
            if kind != _LEAF
        }
        for (node, nr), g in zip(w.roots, root_grads):
            if node is not None:
                buf = buffers.setdefault(node, [None] * len(node._out_meta))
                engine.add_to_buffer(buf, nr, g)
        for node in buffers:
            if deps.get(node, 0) == 0:
                heapq.heappush(ready, (-node._seq, next(counter), node))

        def send(nexts, outs) -> None:
            """A node's gradients to the next nodes of the walk (past an input's node under
            a compiled forward, the others are not needed)."""
            for (nxt, nr), g in zip(nexts, outs):
                if nxt is None or nxt not in index:
                    continue
                buf = buffers.get(nxt)
                if buf is None:
                    buf = buffers[nxt] = [None] * len(nxt._out_meta)
                if g is not None:
                    engine.add_to_buffer(buf, nr, g)
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    heapq.heappush(ready, (-nxt._seq, next(counter), nxt))

        while ready:
            node = heapq.heappop(ready)[2]
            k = index[node]
            grads = buffers.pop(node)
            is_leaf = type(node) is AccumulateGrad
            # An input's node under a compiled forward: the engine runs it (and its hooks)
            # after the compiled node; here it only passes nothing on.
            stopped = self.joint and node in targets
            if not stopped:
                if is_leaf and node.variable._hooks and grads[0] is not None:
                    grads = self._hook("leaf", k, grads)
                if node._hooked:
                    grads = self._hook("tensor_pre", k, grads)
            if captures and node in captures:
                for nr, slot in captures[node]:
                    slot[0] = grads[nr] if slot[0] is None else slot[0] + grads[nr]
            nexts = node.next_functions
            if stopped:
                send(nexts, [None] * len(nexts))
                continue
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
            wanted = engine.wanted_edges(nexts, exec_info, targets)
            if True in wanted:
                outs = self._apply(node, k, grads, wanted, saved_inputs[node])
            else:
                outs = [None] * len(nexts)
            if node._post_hooks:
                outs = self._hook("node_post", k, [*outs, *grads])
            if not w.keep_graph and node.saved and type(node.saved) is not SavedValues:
                node.saved = None
                self.frees.append(k)
            send(nexts, outs)

    def _saved_values(self, node: Node, kind: int, k: int):
        """The node's saved dict with each saved array replaced by its traced input (in the
        walk's order); None for a node called as it is. A symbolic capture takes the sizes
        the walk gathered (its attributes', saved shapes, in_meta, _out_meta) as the
        program's ``m`` values, in the walk's order from ``w.at[k]``."""
        if kind == _OPAQUE:
            return None
        symbolic = self.tracer.symbolic and self.sizes is None  # sizes from the walk's
        if symbolic:  # (plain values: a node recorded above the tracer keeps symbolic ones)
            at = self.w.at[k]
            attrs = concrete(node.attrs)
            sized = node._op.size_attrs
            if sized:
                attrs = dict(attrs)
                for j, n in enumerate(sized):
                    attrs[n] = symbolize(attrs[n], f"m[{at}][{j}]")
                at += 1
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
            elif symbolic and name.endswith("_shape"):
                out[name] = symbolize(concrete(v), f"m[{at}]")
                at += 1
            else:
                out[name] = concrete(v) if symbolic else v
        if symbolic:
            self.metas[node] = NodeSizes(
                attrs,
                symbolize(node.in_meta, f"m[{at + 1}]"),
                symbolize(node._out_meta, f"m[{at}]"),
            )
        elif self.tracer.symbolic:
            self._joint_sizes(node, out)
        return out

    def _joint_sizes(self, node: Node, saved: dict) -> None:
        """A joint capture's node sizes: those the forward tracer gave it, each an m value
        the forward program computes."""
        sizes = self.sizes.get(node)
        if sizes is None:
            sizes = NodeSizes(node.attrs, node.in_meta, node._out_meta, {})
        for name, v in saved.items():
            saved[name] = self._forward(sizes.saved.get(name, v))
        self.metas[node] = NodeSizes(
            self._forward(sizes.attrs),
            self._forward(sizes.in_meta),
            self._forward(sizes.out_meta),
        )

    def _forward(self, v):
        """v with the forward's symbolic sizes as m values (``forward_sizes``)."""
        return map_syms(v, self._as_m)

    def _as_m(self, v):
        k = self.size_at.get(v.expr)
        if k is None:
            k = self.size_at[v.expr] = len(self.forward_sizes)
            self.forward_sizes.append(v)
        return type(v)(v._raw(), f"m[{k}]", frozenset())

    def _apply(self, node: Node, k: int, grads: list, wanted: list, saved) -> list:
        self.calls.append((node.name(), k))
        program = self.tracer.program
        mark = len(program)
        if saved is not None:
            stand = _stand_in(node, saved, self.metas.get(node))
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
        tracer.program.append(
            Call(
                kind,
                k,
                [None if v is None else v._slot for v in values],
                [None if o is None else o._slot for o in out],
                extra,
            )
        )
        return out


def _traced(tracer: Tracer, v) -> bool:
    return isinstance(v, Tensor) and getattr(v, "_interp", None) is tracer


def _stand_in(node: Node, saved: dict, metas: NodeSizes | None) -> Node:
    """A node like ``node`` whose saved values are the traced ones (the functional form
    of its formulas: Node.apply on it), and its sizes the symbolic ones where given."""
    stand = Node.__new__(Node)
    stand._op = node._op
    if metas is None:
        stand.attrs, stand.in_meta, stand._out_meta = node.attrs, node.in_meta, node._out_meta
    else:
        stand.attrs, stand.in_meta, stand._out_meta = metas.attrs, metas.in_meta, metas.out_meta
    stand.saved = saved
    return stand
