"""Nodes of the eager tape: one per recorded op call, plus AccumulateGrad for leaves."""

from __future__ import annotations

import itertools
import re
import weakref

from .._core import upcalls
from .._core.dtype import from_np
from .._core.state import anomaly
from .._core.tensor import Tensor, _new
from ..ops.creation import zeros
from . import anomaly_mode

_seq = itertools.count()
_ACCUMULATE_SEQ = 1 << 62  # leaves accumulate as soon as they are ready

FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


class Node:
    """A backward function (torch.autograd.graph.Node)."""

    __slots__ = (
        "op", "attrs", "saved", "next_functions", "_seq", "in_meta", "_out_meta", "__weakref__",
        "__dict__",
    )  # fmt: skip
    # Rarely set; kept out of the slots so that recording a node stays cheap.
    _metadata = None
    _pre_hooks = None
    _post_hooks = None
    _tensor_pre_hooks = None
    _retain_hooks = None
    _hooked = False  # set once a tensor hook or retain_grad lives on this node

    def __init__(self):
        self._seq = next(_seq)
        self.saved = None

    def name(self) -> str:
        return self.op.node_name

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def _sequence_nr(self) -> int:
        return self._seq

    def _set_sequence_nr(self, n: int) -> None:
        self._seq = n

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) -> new grad_inputs or None, after the node runs."""
        if self._post_hooks is None:
            self._post_hooks = []
        return _Handle(self._post_hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) -> new grad_outputs or None, before the node runs."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        return _Handle(self._pre_hooks, fn)

    @property
    def num_outputs(self) -> int:
        return len(self._out_meta)

    def apply(self, grads: list, wanted) -> list:
        """Input gradients (flattened) from output gradients; computes only `wanted` ones."""
        op = self.op
        if op.ndiff == 1:
            g = grads[0] if grads[0] is not None else _zeros_for(self, 0)
        else:
            g = tuple(g if g is not None else _zeros_for(self, i) for i, g in enumerate(grads))
        saved = self.saved
        if saved is None:
            raise RuntimeError(FREED)
        attrs = self.attrs
        cache = {}

        def value(k):
            if k == "g":
                return g
            v = cache.get(k, cache)
            if v is cache:
                v = saved[k] if k in saved else attrs[k]
                if isinstance(v, Saved):
                    v = v.unpack(self)
                cache[k] = v
            return v

        out = []
        for i, fn in enumerate(op.vjps):
            if i in op.list_inputs:
                n = len(self.in_meta[i])
                if any(wanted[len(out) : len(out) + n]):
                    out.extend(fn(**{k: value(k) for k in op.vjp_args[i]}))
                else:
                    out.extend([None] * n)
            elif wanted[len(out)]:
                out.append(fn(**{k: value(k) for k in op.vjp_args[i]}))
            else:
                out.append(None)
        return out


class _Handle:
    """A removable hook handle."""

    _ids = itertools.count()

    def __init__(self, container, fn, key=None):
        self.id = next(self._ids)
        self._container = container
        self._key = key
        self._fn = fn
        if isinstance(container, dict):
            container.setdefault(key, []).append(fn)
        else:
            container.append(fn)

    def remove(self) -> None:
        c = self._container[self._key] if isinstance(self._container, dict) else self._container
        if self._fn in c:
            c.remove(self._fn)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


RemovableHandle = _Handle


def _zeros_for(node: Node, i: int):
    shape, dtype = node._out_meta[i]
    return zeros(shape, dtype=from_np(dtype))


class Saved:
    """A tensor saved for backward, with the version it was saved at."""

    __slots__ = ("t", "version", "is_output", "data", "nr")

    def __init__(self, t: Tensor, is_output: bool):
        self.version = t._ver.v
        self.is_output = is_output
        if is_output:  # no strong reference to the output: it would keep its node alive
            self.t = t._ver
            self.data = t._data
            self.nr = t._out_nr
        else:
            self.t = t

    def unpack(self, node: Node) -> Tensor:
        counter = self.t if self.is_output else self.t._ver
        if counter.v != self.version:
            self._raise_modified(node, counter.v)
        if not self.is_output:
            return self.t
        t = _new(Tensor)
        t._data = self.data
        t._ver = self.t
        t._base = None
        t._grad_fn = node
        t._rg = True
        if self.nr:
            t._out_nr = self.nr
        return t

    def _raise_modified(self, node: Node, current: int):
        if self.is_output:
            data, fn, nr = self.data, node, self.nr
        else:
            data, fn, nr = self.t._data, self.t._grad_fn, self.t._out_nr
        typ = f"{from_np(data.dtype).scalar_name}Tensor"
        sizes = ", ".join(str(s) for s in data.shape)
        where = f", which is output {nr} of {_short_name(fn)}," if fn is not None else ""
        hint = (
            "the backtrace further above shows the operation that failed to compute its "
            "gradient. The variable in question was changed in there or anywhere later. Good "
            "luck!"
            if anomaly.enabled
            else "enable anomaly detection to find the operation that failed to compute its "
            "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
        )
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [torch.{typ} [{sizes}]]{where} is at version {current}; "
            f"expected version {self.version} instead. Hint: {hint}"
        )


def _short_name(fn) -> str:
    """A node's name as PyTorch's version-mismatch error prints it (no BackwardN suffix)."""
    return re.sub(r"Backward\d*$", "", fn.name())


class AccumulateGrad(Node):
    """The sink of a leaf tensor: adds incoming gradients into ``variable.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor):
        self._seq = _ACCUMULATE_SEQ
        self.saved = None
        self.variable = variable
        self.next_functions = ()
        if anomaly.enabled:
            anomaly_mode.store(self)

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    @property
    def num_outputs(self) -> int:
        return 1


def accumulate_node(t: Tensor) -> AccumulateGrad:
    ref = t._accum
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(t)
        t._accum = weakref.ref(node)
    return node


def edge_of(t: Tensor):
    """The (node, output_nr) a gradient for t flows into, or (None, 0)."""
    if not t._rg:
        return (None, 0)
    fn = t.grad_fn
    if fn is None:
        return (accumulate_node(t), 0)
    return (fn, t._out_nr)


def _edge(t: Tensor):
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._out_nr)
    return (accumulate_node(t), 0)


_NO_EDGE = (None, 0)


def record(op, args: tuple, attrs: dict, outputs, inner=None) -> None:
    """Attach a node computing op's vjp to its outputs.

    At level 0 the node saves the arguments and outputs themselves. A grad level passes
    ``inner = (inner_args, inner_outputs)``: the node saves those (one level down), so its
    formulas run on them and record at the lower levels.
    """
    node = _new(Node)
    node._seq = next(_seq)
    node.op = op
    node.attrs = attrs
    edges, meta = [], []
    names = None
    lists = op.list_inputs
    saves = op.saves
    # On a grad level only this level's tensors (those unwrapping changes) have edges.
    own = args if inner is None else inner[0]
    i = 0
    for a, f, ia in zip(args, op.vjps, own):
        if i in lists:
            sub = [
                _edge(t)
                if f is not None
                and isinstance(t, Tensor)
                and t._rg
                and (inner is None or t is not it)
                else _NO_EDGE
                for t, it in zip(a, ia)
            ]
            edges.extend(sub)
            meta.append([_meta(t) for t in a])
            if saves[i] and any(e[0] is not None for e in sub):
                names = set(saves[i]) if names is None else names.union(saves[i])
        elif isinstance(a, Tensor):
            meta.append((a._data.shape, a._data.dtype) if not a._level else _meta(a))
            if f is not None and a._rg and (inner is None or a is not ia):
                edges.append(_edge(a))
                if saves[i]:
                    names = set(saves[i]) if names is None else names.union(saves[i])
            else:
                edges.append(_NO_EDGE)
        else:
            meta.append(None)
            edges.append(_NO_EDGE)
        i += 1
    node.next_functions = tuple(edges)
    node.in_meta = meta
    outs = (outputs,) if op.nout == 1 else outputs[: op.ndiff]
    out_meta = []
    for k, o in enumerate(outs):
        m = (o._data.shape, o._data.dtype) if not o._level else _meta(o)
        out_meta.append(m)
        if m[1].kind in "fc":
            o._grad_fn = node
            o._rg = True
            if k:
                o._out_nr = k
    node._out_meta = tuple(out_meta)
    saved = {}
    if names:
        if inner is not None:
            args, outputs = inner
        for n in names:
            if n == "result":
                if inner is not None or _is_wrapped(outputs):
                    # inner outputs hold no reference to this node; a transform's wrapper
                    # (a dual tensor) has no storage to save apart from itself
                    saved[n] = Saved(outputs, False) if op.nout == 1 else outputs
                else:
                    saved[n] = Saved(outputs, True) if op.nout == 1 else _SavedTuple(outputs)
                continue
            if n.endswith("_shape") and n not in op.inputs:
                v = args[op.inputs.index(n[:-6])]
                saved[n] = [t.shape for t in v] if isinstance(v, (list, tuple)) else v.shape
                continue
            v = args[op.inputs.index(n)]
            if isinstance(v, Tensor):
                saved[n] = Saved(v, False)
            elif isinstance(v, (list, tuple)) and any(isinstance(x, Tensor) for x in v):
                saved[n] = _SavedList(v)
            else:
                saved[n] = v
    node.saved = saved
    if anomaly.enabled:
        anomaly_mode.store(node)


def _is_wrapped(outputs) -> bool:
    first = outputs if isinstance(outputs, Tensor) else outputs[0]
    return bool(first._level)


class _SavedTuple(Saved):
    """All outputs of a multi-output op; only floating ones carry the node."""

    __slots__ = ()

    def __init__(self, outs):
        self.t = [Saved(o, True) for o in outs]
        self.is_output = True

    def unpack(self, node):
        res = []
        for s in self.t:
            t = s.unpack(node)
            if not (t.dtype.is_floating_point or t.dtype.is_complex):
                t._grad_fn = None
                t._rg = False
            res.append(t)
        return tuple(res)


class _SavedList(Saved):
    __slots__ = ()

    def __init__(self, ts):
        self.t = [Saved(t, False) if isinstance(t, Tensor) else t for t in ts]
        self.is_output = False

    def unpack(self, node):
        return [s.unpack(node) if isinstance(s, Saved) else s for s in self.t]


def _meta(a):
    """(shape, numpy dtype) of a tensor argument; a wrapper's logical ones."""
    if isinstance(a, Tensor):
        if a._level:
            return (tuple(a.shape), a.dtype.np)
        return (a._data.shape, a._data.dtype)
    return None


upcalls.provide(record=record)
