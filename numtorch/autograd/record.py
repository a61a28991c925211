"""Recording an op call on the eager tape: a node with an edge per differentiable input,
the inputs' metadata, and the values its formulas need, saved."""

from __future__ import annotations

from .._core import upcalls
from .._core.dtype import from_np
from .._core.state import anomaly
from .._core.tensor import Tensor, _new
from . import anomaly_mode
from .node import _NO_EDGE, Node, _edge, _seq, accumulate_node
from .node_classes import _name_params, _node_cls
from .saved import _OWN, Saved, SavedValues, _SavedList, _SavedTuple

_NOTHING_SAVED: dict = {}  # shared by the nodes that save nothing: never written to


def _add_names(names: dict | None, more) -> dict:
    """The names a node saves, in a fixed order (a dict as an ordered set): packing hooks
    see the same sequence in every run."""
    if names is None:
        return dict.fromkeys(more)
    names.update(dict.fromkeys(more))
    return names


def record(op, args: tuple, attrs: dict, outputs, inner=None) -> None:
    """Attach a node computing op's vjp to its outputs.

    At level 0 the node saves the arguments and outputs themselves. A grad level passes
    ``inner = (inner_args, inner_outputs)``: the node saves those (one level down), so its
    formulas run on them and record at the lower levels.

    As in PyTorch, a node has an edge per differentiable tensor input (``(None, 0)`` when
    that input needs no gradient) and none for non-differentiable inputs or numbers
    (but for ``op.number_edges`` ops, where a number stands for a wrapped 0-d tensor).
    """
    if op.recorder is not None:  # the op builds its own node (autograd.Function's ctx)
        return op.recorder(args, attrs, outputs, inner)
    node = _new(op.node_cls or _node_cls(op))
    node._seq = next(_seq)
    node.op = op
    node.attrs = attrs
    if inner is None and not op.list_inputs:
        names = _link_inputs(node, op, args)
    else:
        names = _link_inputs_general(node, op, args, inner)
    if op.nout == 1:
        m = (outputs._data.shape, outputs._data.dtype) if not outputs._level else _meta(outputs)
        if m[1].kind in "fc":
            outputs._grad_fn = node
            outputs._rg = True
        elif op.name not in _CONVERSIONS and _any_requires_grad(args):
            # PyTorch refuses a non-float result of a node (a conversion's, or a copy_ into
            # an integer tensor's, just leaves autograd)
            raise RuntimeError(f"Autograd not support dtype: {from_np(m[1]).scalar_name}")
        node._out_meta = (m,)
    else:
        out_meta = []
        for k, o in enumerate(outputs[: op.ndiff]):
            m = (o._data.shape, o._data.dtype) if not o._level else _meta(o)
            out_meta.append(m)
            if m[1].kind in "fc":
                o._grad_fn = node
                o._rg = True
                if k:
                    o._out_nr = k
        node._out_meta = tuple(out_meta)
    node.saved = _save(op, names, args, outputs, inner) if names else _NOTHING_SAVED
    if anomaly.enabled:
        anomaly_mode.store(node)


# Ops whose non-float result leaves autograd (PyTorch's copy_ into a non-float tensor too)
_CONVERSIONS = frozenset({"to_dtype", "copy"})


def _any_requires_grad(args) -> bool:
    return any(
        _any_requires_grad(a) if isinstance(a, (list, tuple)) else isinstance(a, Tensor) and a._rg
        for a in args
    )


def _link_inputs(node: Node, op, args: tuple) -> dict | None:
    """Edges and input metadata of a level-0 node with no list inputs (the common case);
    returns the names to save."""
    link = _LINKERS.get(op)
    if link is None:
        link = _LINKERS[op] = _make_linker(op)
    return link(node, args)


_LINKERS: dict = {}


def _make_linker(op):
    """``_link_inputs`` unrolled for op's inputs (generated once per op: recording is the
    hottest path there is, and a loop over the inputs costs a third of it)."""
    n = len(op.vjps)
    named = callable(op.node_name) and _name_params(op.node_name)
    lines = ["def link(node, args):", f"    {''.join(f'a{i}, ' for i in range(n))}= args"]
    lines.append("    names = None\n    skipped = False")
    for i, (f, save) in enumerate(zip(op.vjps, op.saves)):
        a = f"a{i}"
        lines += [
            f"    if isinstance({a}, Tensor):",
            f"        if {a}._level:",
            f"            m{i} = _meta({a})",
            "        else:",
            f"            d = {a}._data",
            # (a name that depends on an input's layout: its C-contiguity too)
            f"            m{i} = (d.shape, d.dtype, d.flags.c_contiguous)"
            if named and f"{op.inputs[i]}_contiguous" in named
            else f"            m{i} = (d.shape, d.dtype)",
        ]
        if f is not None:
            lines += [
                f"        if {a}._rg:",
                f"            fn = {a}._grad_fn",
                f"            e{i} = (fn, {a}._out_nr) if fn is not None else (_acc({a}), 0)",
            ]
            if save:
                lines.append(f"            names = _add_names(names, {tuple(save)!r})")
            lines += ["        else:", f"            e{i} = _NO_EDGE"]
        lines += ["    else:", f"        m{i} = None"]
        if f is not None:
            if op.number_edges:
                lines.append(f"        e{i} = _NO_EDGE")
            else:
                lines += [f"        e{i} = _SKIP", "        skipped = True"]
    edges = "".join(f"e{i}, " for i, f in enumerate(op.vjps) if f is not None)
    lines += [
        f"    edges = ({edges})",
        "    node.next_functions = edges if not skipped else tuple(e for e in edges if e is not _SKIP)",
        f"    node.in_meta = [{', '.join(f'm{i}' for i in range(n))}]",
        "    return names",
    ]
    env = {
        "Tensor": Tensor, "_meta": _meta, "_acc": accumulate_node, "_add_names": _add_names,
        "_NO_EDGE": _NO_EDGE, "_SKIP": _SKIP,
    }  # fmt: skip
    exec("\n".join(lines), env)
    return env["link"]


_SKIP = object()  # an input with no edge (a number, where PyTorch has no wrapped tensor)


def _link_inputs_general(node: Node, op, args: tuple, inner) -> dict | None:
    """Edges and input metadata with list inputs, or on a grad level (where only this
    level's tensors, those unwrapping changes, have edges); returns the names to save."""
    edges, meta = [], []
    names = None
    lists = op.list_inputs
    saves = op.saves
    own = args if inner is None else inner[0]
    i = 0
    for a, f, ia in zip(args, op.vjps, own):
        if i in lists:
            if f is not None:
                sub = [
                    _edge(t)
                    if isinstance(t, Tensor) and t._rg and (inner is None or t is not it)
                    else _NO_EDGE
                    for t, it in zip(a, ia)
                ]
                edges.extend(sub)
                if saves[i] and any(e[0] is not None for e in sub):
                    names = _add_names(names, saves[i])
            meta.append([_meta(t) for t in a])
        elif isinstance(a, Tensor):
            meta.append((a._data.shape, a._data.dtype) if not a._level else _meta(a))
            if f is not None:
                if a._rg and (inner is None or a is not ia):
                    edges.append(_edge(a))
                    if saves[i]:
                        names = _add_names(names, saves[i])
                else:
                    edges.append(_NO_EDGE)
        else:
            meta.append(None)
            if f is not None and op.number_edges:
                edges.append(_NO_EDGE)
        i += 1
    node.next_functions = tuple(edges)
    node.in_meta = meta
    return names


def _save(op, names: dict, args: tuple, outputs, inner) -> dict:
    """What a node keeps for its formulas: saved tensors (version-checked), shapes, values."""
    saved = {}
    tensors = False
    outer = args
    if inner is not None:
        args, outputs = inner
    for n in names:
        if n == "result":
            tensors = True
            if inner is not None or _is_wrapped(outputs):
                # inner outputs hold no reference to this node; a transform's wrapper
                # (a dual tensor) has no storage to save apart from itself
                if op.nout == 1:
                    s = saved[n] = Saved(outputs, False)
                    s.src = _OWN
                else:
                    saved[n] = outputs
            else:
                saved[n] = Saved(outputs, True) if op.nout == 1 else _SavedTuple(outputs)
            continue
        if n.endswith("_shape") and n not in op.inputs:
            v = args[op.inputs.index(n[:-6])]
            saved[n] = [t.shape for t in v] if isinstance(v, (list, tuple)) else v.shape
            continue
        k = op.inputs.index(n)
        v = args[k]
        if isinstance(v, Tensor):
            s = saved[n] = Saved(v, False)
            if inner is not None and isinstance(outer[k], Tensor):  # for its error's text
                s.src = outer[k]
            tensors = True
        elif isinstance(v, (list, tuple)) and any(isinstance(x, Tensor) for x in v):
            saved[n] = _SavedList(v)
            tensors = True
        else:
            saved[n] = v
    return saved if tensors else SavedValues(saved)


def _is_wrapped(outputs) -> bool:
    first = outputs if isinstance(outputs, Tensor) else outputs[0]
    return bool(first._level)


def _meta(a):
    """(shape, numpy dtype) of a tensor argument; a wrapper's logical ones."""
    if isinstance(a, Tensor):
        if a._level:
            return (tuple(a.shape), a.dtype.np)
        return (a._data.shape, a._data.dtype)
    return None


upcalls.provide(record=record)
