"""The op behind in-place writes through views (PyTorch's CopySlices)."""

from __future__ import annotations

from .._core.dispatch import dispatch, run_kernel
from .._core.op import defop
from .._core.tensor import Tensor
from ._batching import materialize
from .creation import zeros_like


def apply_chain(t, chain):
    """Re-create a view from its base by replaying the view ops (on tensors)."""
    for op, attrs in chain:
        t = dispatch(op, (t,), attrs)
    return t


def _apply_chain_arrays(a, chain):
    for op, attrs in chain:
        a = run_kernel(op, [a], attrs)
    return a


def _view_scatter(xp, base, src, chain):
    out = base.copy(order="K")
    view = _apply_chain_arrays(out, chain)
    if not xp.shares_memory(view, out) and view.size:
        raise RuntimeError("numtorch: cannot replay this view chain for an in-place write")
    view[...] = src
    return out


def _scatter_into(base, src, chain, lift=False):
    """view_scatter written with other ops: a copy of base with src written into the view.
    ``lift``: src is batched at inner vmap levels too; the copy of base must carry those
    levels before src can be written into it (copy_ cannot add them)."""
    if lift:
        from .indexing import copy

        # Only the shape, dtype and batching of the first argument of copy matter.
        carrier = src.sum().to(base.dtype).expand(base.shape)
        out = copy.fn(carrier, base)
    else:
        out = base.clone()
    apply_chain(out, chain).copy_(src)
    return out


def _view_scatter_rule(ax, args, bdims, attrs):
    base, src = args
    bb, bs = bdims
    if bb is None:  # a batched src makes every batch element's result differ
        base, bb = materialize(ax, base, None), 0
    lift = isinstance(src, Tensor) and src._level > 0
    return ax.call(_scatter_into, (base, src), (bb, bs), dict(attrs, lift=lift))


def _base_vjp(g, chain):

    return view_scatter.fn(g, zeros_like(apply_chain(g, chain)), chain)


view_scatter = defop(
    "view_scatter", _view_scatter, nin=2,
    vjp=(_base_vjp, lambda g, chain: apply_chain(g, chain)),
    jvp=lambda tbase, tsrc, chain: view_scatter.fn(tbase, tsrc, chain),
    node_name="torch::autograd::CopySlices", samples=None, batch_rule=_view_scatter_rule,
)  # fmt: skip
