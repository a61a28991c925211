"""Recording an op call on the eager tape: a node with an edge per differentiable input,
the inputs' metadata, and the values its formulas need, saved."""

from __future__ import annotations

from .._core import upcalls
from .._core.dtype import from_np, inexact, is_complex_np
from .._core.interpreter import WrapperTensor
from .._core.state import anomaly, state
from .._core.tensor import Tensor, _new
from . import anomaly_mode
from .node import _NO_EDGE, _edge, _seq, accumulate_node, show_saved, wrapped_dtype
from .node_classes import _name_params, _node_cls
from .saved import _OWN, Saved, SavedValues, _SavedInnerOutputs, _SavedList, _SavedTuple

_NOTHING_SAVED: dict = {}  # shared by the nodes that save nothing: never written to


def _add_names(names: tuple, more: tuple) -> tuple:
    """The names a node saves, in a fixed order (a tuple without repeats): packing hooks
    see the same sequence in every run."""
    if names == more:
        return more
    return names + tuple(n for n in more if n not in names)


def record(op, args: tuple, attrs: dict, outputs, inner=None) -> None:
    """Attach a node computing op's vjp to its outputs.

    At level 0 the node saves the arguments and outputs themselves. A grad level passes
    ``inner = (inner_args, inner_outputs)``: the node saves those (one level down), so its
    formulas run on them and record at the lower levels.

    As in PyTorch, a node has an edge per differentiable tensor input (``(None, 0)`` when
    that input needs no gradient) and none for non-differentiable inputs or numbers
    (but for ``op.number_edges`` ops, where a number stands for a wrapped 0-d tensor).
    """
    if inner is None:  # (level 0: the op's generated recorder, which may call _finish)
        return (op.level0_recorder or _make_recorder(op))(args, attrs, outputs)
    if op.recorder is not None:  # the op builds its own node (autograd.Function's ctx)
        return op.recorder(args, attrs, outputs, inner)
    node = _new(op.node_cls or _node_class(op))
    node._seq = next(_seq)
    node._op = op
    node.attrs = attrs
    try:  # (free in Python 3.11+ where nothing raises)
        if inner is None:
            names = (_LINKERS.get(op) or _make_linker(op, False))(node, args)
        else:
            names = (_LEVEL_LINKERS.get(op) or _make_linker(op, True))(node, args, inner[0])
    except _Untracked:
        return
    _finish(op, node, names, args, outputs, inner)


def _node_class(op) -> type:
    """The class of op's nodes, made at its first record, when its nodes get the attributes
    of its saved values."""
    show_saved(op)
    return _node_cls(op)


def _finish(op, node, names, args: tuple, outputs, inner) -> None:
    """A linked node's outputs, their metadata and what it saves."""
    if op.nout == 1:
        if inner is not None and isinstance(inner[1], Tensor):
            m = _meta(inner[1])  # (a level's output: its inner value's metadata, the same)
        else:
            m = (outputs._data.shape, outputs._data.dtype) if not outputs._level else _meta(outputs)
        if m[1].kind in "fc" or inexact(m[1]):
            if is_complex_np(m[1]) and not op.complex_grad:
                raise RuntimeError(
                    f"{op.name} does not support automatic differentiation for outputs with "
                    "complex dtype."
                )
            outputs._grad_fn = node
            outputs._rg_bit = True
        elif not op.conversion and _any_requires_grad(args):
            # PyTorch refuses a non-float result of a node (a conversion's, or a copy_ into
            # an integer tensor's, just leaves autograd)
            raise RuntimeError(f"Autograd not support dtype: {from_np(m[1]).scalar_name}")
        node._out_meta = (m,)
    else:
        out_meta = []
        for k, o in enumerate(outputs[: op.ndiff]):
            m = (o._data.shape, o._data.dtype) if not o._level else _meta(o)
            out_meta.append(m)
            if m[1].kind in "fc" or inexact(m[1]):
                if m[1].kind == "c" and not op.complex_grad:
                    raise RuntimeError(
                        f"{op.name} does not support automatic differentiation for outputs "
                        "with complex dtype."
                    )
                o._grad_fn = node
                o._rg_bit = True
                if k:
                    o._out_nr = k
        node._out_meta = tuple(out_meta)
    node.saved = _save(op, names, args, outputs, inner) if names else _NOTHING_SAVED
    if anomaly.enabled:
        anomaly_mode.store(node)


def _any_requires_grad(args) -> bool:
    return any(
        _any_requires_grad(a) if isinstance(a, (list, tuple)) else isinstance(a, Tensor) and a._rg
        for a in args
    )


class _Untracked(Exception):
    """Raised by the linker of an op with a non-differentiable input when only such inputs
    require grad: as in PyTorch, whose result then has no node and does not require grad
    (an input without a formula here is ``non_differentiable`` in derivatives.yaml;
    PyTorch's ``not_implemented`` ones have a formula that raises)."""


_LINKERS: dict = {}  # op -> its linker at level 0
_LEVEL_LINKERS: dict = {}  # op -> its linker on a grad level
_SKIP = object()  # an input with no edge (a number, where PyTorch has no wrapped tensor)


# An input's requires-grad flag: the slot, or for a view (or a root laid out anew, t_)
# the property, which first regenerates its history if a write into its base made it stale.
_RG = "({0}._rg_bit if {0}._view is None else {0}._rg)"


def _make_recorder(op):
    """record at level 0 for op, one function: the node made and linked (the linker's
    code inline), and for the commonest output, one float tensor, finished inline too."""
    if op.recorder is not None:
        rec = op.level0_recorder = lambda args, attrs, outputs: op.recorder(
            args, attrs, outputs, None
        )
        return rec
    cls = op.node_cls or _node_class(op)
    link = _make_linker(op, False)
    lines = link.__source__.split("\n")
    body = [ln for ln in lines[1:] if ln.strip() != "return names"]
    code = [
        "def rec(args, attrs, outputs):",
        "    node = _new(cls)",
        "    node._seq = next(_seq)",
        "    node._op = op",
        "    node.attrs = attrs",
        *(ln.replace("raise _Untracked", "return") for ln in body),
    ]
    if op.nout == 1:
        code += [
            "    if not outputs._level:",
            "        d = outputs._data",
            "        dt = d.dtype",
            "        if dt.kind == 'f' and not _anomaly.enabled:",
            "            outputs._grad_fn = node",
            "            outputs._rg_bit = True",
            "            node._out_meta = ((d.shape, dt),)",
            "            node.saved = _save0(op, names, args, outputs) if names else _NOTHING",
            "            return",
        ]
    code.append("    _finish(op, node, names, args, outputs, None)")
    env = dict(link.__globals__)
    env.update(
        op=op,
        cls=cls,
        _new=_new,
        _seq=_seq,
        _anomaly=anomaly,
        _save0=_save0,
        _NOTHING=_NOTHING_SAVED,
        _finish=_finish,
    )
    exec("\n".join(code), env)
    rec = op.level0_recorder = env["rec"]
    return rec


def _make_linker(op, level: bool):
    """The function that links a node of op to its inputs: sets the node's edges and
    ``in_meta`` and returns the names to save (None for none). Generated once per op (and
    once more for a grad level, ``level``), unrolled over op's inputs: recording is the
    hottest path there is, and a loop over the inputs costs a third of it.

    Per input: a tensor's metadata is its (shape, dtype), a wrapper's logical ones, with
    its C-contiguity where op's node name reads it; a list input's, one per element; a
    number's, None. A differentiable tensor input has an edge where it requires grad (on a
    grad level, only where it is that level's: unwrapping changed it), else (None, 0); a
    list input, an edge per element; a number, none (but (None, 0) for ``number_edges``
    ops). An input that gets an edge adds the names its formula saves."""
    n = len(op.vjps)
    named = callable(op.node_name) and _name_params(op.node_name)
    lines = [
        "def link(node, args, own):" if level else "def link(node, args):",
        f"    {''.join(f'a{i}, ' for i in range(n))}= args",
    ]
    if level:  # (the unwrapped arguments: a tensor of this level is not its inner value)
        lines.append(f"    {''.join(f'b{i}, ' for i in range(n))}= own")
    # (an input may have no edge, _SKIP, only where a number has none)
    skips = not op.number_edges and any(
        f is not None and i not in op.list_inputs for i, f in enumerate(op.vjps)
    )
    lines.append("    names = None\n    skipped = False" if skips else "    names = None")
    edges = []
    live = []  # per input with a formula, whether it has an edge
    checked = any(f is None for f in op.vjps)
    for i, (f, save) in enumerate(zip(op.vjps, op.saves)):
        if checked and f is not None:
            live.append(
                f"any(e is not _NO_EDGE for e in e{i})"
                if i in op.list_inputs
                else f"(e{i} is not _NO_EDGE and e{i} is not _SKIP)"
            )
        a = f"a{i}"
        if i in op.list_inputs:
            lines.append(f"    m{i} = [_meta(t) for t in {a}]")
            if f is not None:
                mine, each = (
                    (" and t is not u", f"t, u in zip({a}, b{i})") if level else ("", f"t in {a}")
                )
                lines.append(
                    f"    e{i} = [_edge(t) if isinstance(t, Tensor) and {_RG.format('t')}{mine}"
                    f" else _NO_EDGE"
                    f" for {each}]"
                )
                if save:
                    lines += [
                        f"    if any(e[0] is not None for e in e{i}):",
                        f"        names = {tuple(save)!r} if names is None else"
                        f" _add_names(names, {tuple(save)!r})",
                    ]
                edges.append(f"*e{i}, ")
            continue
        lines.append(f"    if isinstance({a}, Tensor):")
        if level:  # (this level's wrapper: the metadata of its inner value, the same)
            lines += [f"        if {a} is not b{i}:", f"            m{i} = _meta(b{i})"]
        lines += [
            f"        {'elif' if level else 'if'} {a}._level:",
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
                f"        if {_RG.format(a)} and {a} is not b{i}:"
                if level
                else f"        if {_RG.format(a)}:",
                f"            fn = {a}._grad_fn",
                f"            e{i} = (fn, {a}._out_nr) if fn is not None else (_acc({a}), 0)",
            ]
            if save:
                lines.append(
                    f"            names = {tuple(save)!r} if names is None else"
                    f" _add_names(names, {tuple(save)!r})"
                )
            lines += ["        else:", f"            e{i} = _NO_EDGE"]
            edges.append(f"e{i}, ")
        lines += ["    else:", f"        m{i} = None"]
        if f is not None:
            if op.number_edges:
                lines.append(f"        e{i} = _NO_EDGE")
            else:
                lines += [f"        e{i} = _SKIP", "        skipped = True"]
    if live:  # (only where an input has no formula: the others need no check)
        lines += [f"    if not ({' or '.join(live)}):", "        raise _Untracked"]
    lines += [
        f"    edges = ({''.join(edges)})",
        "    node.next_functions = edges if not skipped else tuple(e for e in edges if e is not _SKIP)"
        if skips
        else "    node.next_functions = edges",
        f"    node.in_meta = [{', '.join(f'm{i}' for i in range(n))}]",
        "    return names",
    ]
    env = {
        "Tensor": Tensor,
        "_meta": _meta,
        "_acc": accumulate_node,
        "_edge": _edge,
        "_add_names": _add_names,
        "_NO_EDGE": _NO_EDGE,
        "_SKIP": _SKIP,
        "_Untracked": _Untracked,
    }
    exec("\n".join(lines), env)
    link = env["link"]
    link.__source__ = "\n".join(lines)
    (_LEVEL_LINKERS if level else _LINKERS)[op] = link
    return link


_SAVE_PLANS: dict = {}  # (op, names) -> per name: (name, kind, input index); see _save_plan


def _save_plan(op, names: tuple) -> tuple:
    """Per saved name: 0 for the result, 1 for an input's shape, 2 for an input; with the
    input's index (made once per op and names)."""
    plan = []
    for n in names:
        if n == "result":
            plan.append((n, 0, -1))
        elif n.endswith("_shape") and n not in op.inputs:
            plan.append((n, 1, op.inputs.index(n[:-6])))
        else:
            plan.append((n, 2, op.inputs.index(n)))
    plan = _SAVE_PLANS[(op, names)] = tuple(plan)
    return plan


def _save(op, names: tuple, args: tuple, outputs, inner) -> dict:
    """What a node keeps for its formulas: saved tensors (version-checked), shapes, values;
    under a transform (``inner``: its unwrapped arguments and outputs) the inner ones."""
    saved = {}
    tensors = False
    outer = args
    if inner is not None:
        args, outputs = inner
    for n, kind, k in _SAVE_PLANS.get((op, names)) or _save_plan(op, names):
        if kind == 2:
            v = args[k]
            if isinstance(v, Tensor):  # (_saved_arg, inline)
                s = saved[n] = Saved(v, False)
                tensors = True
                if inner is not None and isinstance(outer[k], Tensor):
                    s.src = outer[k]  # (for its error's text)
            else:
                s = saved[n] = _saved_arg(v)
                if s is not v:
                    tensors = True
        elif kind == 1:
            v = args[k]
            saved[n] = [t.shape for t in v] if isinstance(v, (list, tuple)) else v.shape
        else:
            tensors = True  # (inner outputs hold no reference to this node)
            saved[n] = _saved_outputs(op, outputs, inner is not None or _is_wrapped(outputs))
    return saved if tensors else SavedValues(saved)


def _save0(op, names: tuple, args: tuple, outputs: Tensor) -> dict:
    """``_save`` at level 0 for one plain output (the generated recorder's commonest call)."""
    saved = {}
    tensors = False
    for n, kind, k in _SAVE_PLANS.get((op, names)) or _save_plan(op, names):
        if kind == 2:
            v = args[k]
            if isinstance(v, Tensor):
                saved[n] = Saved(v, False)
                tensors = True
            else:
                s = saved[n] = _saved_arg(v)
                if s is not v:
                    tensors = True
        elif kind == 1:
            v = args[k]
            saved[n] = [t.shape for t in v] if isinstance(v, (list, tuple)) else v.shape
        else:
            tensors = True
            saved[n] = _saved_outputs(op, outputs, False) if state.modes else Saved(outputs, True)
    return saved if tensors else SavedValues(saved)


def _saved_arg(v):
    """An argument as a node keeps it: a tensor, or a list holding tensors, version-checked;
    any other value as it is."""
    if isinstance(v, Tensor):
        return Saved(v, False)
    if isinstance(v, (list, tuple)) and any(isinstance(x, Tensor) for x in v):
        return _SavedList(v)
    return v


def _saved_outputs(op, outputs, own: bool):
    """A call's outputs as its node keeps them: ``own`` (a transform's inner values, or its
    wrapper, a dual tensor, with no storage apart from itself) saved as themselves."""
    if own:
        if op.nout == 1:
            s = Saved(outputs, False)
            s.src = _OWN
            return s
        return _SavedInnerOutputs(outputs, op.ndiff)
    if state.modes:  # PyTorch's saving of an output detaches it: modes see that
        for o in (outputs,) if op.nout == 1 else outputs:
            o.detach()
    return Saved(outputs, True) if op.nout == 1 else _SavedTuple(outputs, op.ndiff)


def _is_wrapped(outputs) -> bool:
    first = outputs if isinstance(outputs, Tensor) else outputs[0]
    return bool(first._level)


def _meta(a):
    """(shape, numpy dtype) of a tensor argument; a wrapper's logical ones."""
    if type(a) is Tensor:
        d = a._data
        return (d.shape, d.dtype)
    if isinstance(a, WrapperTensor):
        return (tuple(a.shape), wrapped_dtype(a))
    if isinstance(a, Tensor):
        return (a._data.shape, a._data.dtype)
    return None


def recorder(op):
    """op's recorder at level 0 (``record`` of a level-0 call, less the lookup)."""
    return op.level0_recorder or _make_recorder(op)


upcalls.provide(record=record, recorder=recorder)
