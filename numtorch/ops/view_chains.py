"""Chains of views replayed from their base: writing through a view (``view_scatter``,
PyTorch's CopySlices) and a view's grad_fn regenerated after an in-place write
(``view_replay``, PyTorch's AsStridedBackward0); a chain is a sequence of (view op, attrs)."""

from __future__ import annotations

import math

from .._core.dispatch import dispatch, run_kernel
from .._core.op import REGISTRY, defop
from .._core.out import INTERNAL_OVERLAP
from .._core.tensor import Tensor
from .._opdb.samples import S
from ._batching import materialize
from .creation import arange, zeros_like


def apply_chain(t, chain):
    """Re-create a view from its base by replaying the view ops (on tensors)."""
    for op, attrs in chain:
        t = dispatch(op, (t,), attrs)
    return t


def _apply_chain_arrays(a, chain):
    for op, attrs in chain:
        a = run_kernel(op, [a], attrs)
    return a


def dim_order(t) -> tuple | None:
    """The order of t's dims in memory, outermost first; None for a C-contiguous t. A chain
    of views from t replays on any tensor laid out in that order (``like_root``)."""
    if t.is_contiguous():
        return None
    st = t.stride()
    return tuple(sorted(range(len(st)), key=lambda d: -abs(st[d])))


def like_root(g, order):
    """g, or a copy of it laid out in ``order`` (``dim_order`` of the root of a view chain):
    PyTorch copies a gradient into a buffer laid out like the base before it replays the
    base's views on it (a ``view`` in the chain needs the base's layout)."""
    if order is None:
        return g if g.is_contiguous() else g.contiguous()
    return g.permute(order).contiguous().permute(_inverse(order))


def _inverse(order) -> list[int]:
    inverse = [0] * len(order)
    for k, d in enumerate(order):
        inverse[d] = k
    return inverse


def _copy_in(xp, a, order):
    """A copy of the array a laid out in ``order`` (C order for None)."""
    if order is None:
        return a.copy(order="C")
    return a.transpose(order).copy(order="C").transpose(_inverse(order))


def _view_scatter(xp, base, src, chain, order=None, overlap=False):
    out = _copy_in(xp, base, order)
    view = _apply_chain_arrays(out, chain)
    if not xp.shares_memory(view, out) and view.size:
        raise RuntimeError("numtorch: cannot replay this view chain for an in-place write")
    view[...] = src
    return out


def _scatter_into(base, src, chain, order=None, overlap=False, lift=False):
    """view_scatter written with other ops: a copy of base with src written into the view.
    ``lift``: src is batched at inner vmap levels too; the copy of base must carry those
    levels before src can be written into it (copy_ cannot add them)."""
    if lift:
        # Zeros of base's shape and dtype that carry base's levels and src's, then base.
        out = like_root(zeros_like(base) + zeros_like(src.sum(), dtype=base.dtype), order)
        out.copy_(base)
    else:
        out = like_root(base.clone(), order)
    apply_chain(out, chain).copy_(src)
    return out


def _view_scatter_rule(vmap, args, bdims, attrs):
    base, src = args
    bb, bs = bdims
    if bb is None:  # a batched src makes every batch element's result differ
        base, bb = materialize(vmap, base, None), 0
    lift = isinstance(src, Tensor) and src._level > 0
    return vmap.call(_scatter_into, (base, src), (bb, bs), dict(attrs, lift=lift))


def _region(g, chain, overlap):
    """The view's region of g (laid out like the root); a region whose elements share memory
    (a write through an expanded view) has no gradient, as PyTorch's CopySlices refuses."""
    if overlap:
        raise RuntimeError(INTERNAL_OVERLAP)
    return apply_chain(g, chain)


def _base_vjp(g, chain, order, overlap):
    g = like_root(g, order)
    return view_scatter(g, zeros_like(_region(g, chain, overlap)), chain, order)


# order: dim_order of the chain's root (the layout the chain was recorded on); overlap: the
# view's elements share memory
def _view_scatter_src_vjp(g, chain, order, overlap):
    return _region(like_root(g, order), chain, overlap)


view_scatter_p = defop(
    "view_scatter",
    _view_scatter,
    nin=2,
    vjp=(_base_vjp, _view_scatter_src_vjp),
    jvp=lambda tbase, tsrc, chain, order, overlap: view_scatter(tbase, tsrc, chain, order),
    node_name="torch::autograd::CopySlices",
    samples=None,
    batch_rule=_view_scatter_rule,
)
view_scatter = view_scatter_p.fn


def _view_replay(xp, input, chain, order=None):
    return _apply_chain_arrays(input, chain)


def _replay_chain(x, chain, order=None):
    return apply_chain(x, chain)


def _replay_vjp(g, shape, chain, order):
    """The gradient written into the view's region of zeros, or, where the chain may map
    two elements to one place, summed there by position."""
    if not any(op.overlapping_view for op, _ in chain):
        return view_scatter(g.new_zeros(shape), g, chain, order)
    n = math.prod(shape)
    pos = apply_chain(like_root(arange(n, device=g.device).reshape(shape), order), chain)
    return g.new_zeros(n).index_add(0, pos.reshape(-1), g.reshape(-1)).reshape(shape)


def _view_replay_samples(make):
    # the views live in views.py, which imports this module
    unsqueeze, t, select, view, narrow, expand = (
        REGISTRY[n] for n in ("unsqueeze", "t", "select", "view", "narrow", "expand")
    )
    yield S((make((2, 3)), ((unsqueeze, {"dim": 0}),)))
    yield S((make((3, 4)), ((t, {}), (select, {"dim": 0, "index": 1}))))
    yield S(
        (make((3, 4)), ((view, {"size": (12,)}), (narrow, {"dim": 0, "start": 2, "length": 5})))
    )
    yield S((make((4, 3)).T, ((narrow, {"dim": 0, "start": 1, "length": 2}),), (1, 0)))
    yield S((make((3, 1)), ((expand, {"size": (3, 4)}), (select, {"dim": 1, "index": 2}))))


# A view's grad_fn regenerated from its base after an in-place write (PyTorch's
# AsStridedBackward0): the chain replayed from the root in one node.
view_replay_p = defop(
    "view_replay",
    _view_replay,
    nin=1,
    view=True,
    vjp=lambda g, input_shape, chain, order: _replay_vjp(g, input_shape, chain, order),
    jvp=lambda t, chain, order: apply_chain(like_root(t, order), chain),
    node_name="AsStridedBackward0",
    api="ops.views.view_replay",
    test={"no_oracle": True},
    batch_rule=lambda vmap, args, bdims, attrs: vmap.call(_replay_chain, args, bdims, attrs),
    samples=_view_replay_samples,
)
view_replay = view_replay_p.fn
