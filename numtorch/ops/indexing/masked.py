"""masked_fill, masked_scatter and masked_select."""

from __future__ import annotations

import math

import numpy as np

from ..._core.device import defer_check
from ..._core.inplace import expand_error
from ..._core.interpreter import values_hidden
from ..._core.messages import broadcast_mismatch
from ..._core.meta import by_kernel, value_sized
from ..._core.meta_array import MetaArray
from ..._core.op import LINEAR, ErrorInput, defop
from ..._core.policy import BatchedWrite, InplacePolicy
from ..._opdb.samples import S
from .._batching import front, lrank, lshape, materialize, pad_to
from .._families import COMPLEX_TOO
from ..comparison import where
from ..creation import zeros
from ._common import _OOB, _same_dtype, _tname
from .gather_scatter import _scatter_add


def _check_mask(mask, name: str, np_style: bool = False):
    if not hasattr(mask, "dtype") or mask.dtype.kind != "b":
        d = _tname(mask).lower() if not np_style else _tname(mask)
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype {d}")


def _mask_broadcast(mask, input) -> tuple:
    """The shape mask and input broadcast to (PyTorch expands the mask first)."""
    msg = broadcast_mismatch((mask.shape, input.shape))
    if msg is not None:
        raise RuntimeError(msg)
    return np.broadcast_shapes(input.shape, mask.shape)


def _masked_fill(xp, input, mask, value):
    _check_mask(mask, "masked_fill_")
    if hasattr(value, "ndim") and value.ndim:
        raise RuntimeError(
            f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.ndim} dimension(s)."
        )
    try:
        return xp.where(mask, xp.asarray(value, dtype=input.dtype), input).astype(input.dtype)
    except ValueError:
        _mask_broadcast(mask, input)  # PyTorch's text: the mask's shape first
        raise


def _masked_samples(make, with_value):
    def mask(shape):
        return make.rng.random(shape) < 0.5

    v = (lambda: make(())) if with_value else None
    yield S((make((3, 4)), mask((3, 4)), v() if v else make((12,))))
    yield S((make((3, 4)), mask((4,)), v() if v else make((13,))))
    yield S((make((4,)), mask((3, 4)), v() if v else make((3, 4))))
    yield S((make(()), np.array(True), v() if v else make((2,))))
    yield S((make((0, 3)), mask((0, 3)), v() if v else make((1,))))


def _masked_fill_rule(vmap, args, bdims, attrs):
    """Elementwise over input and mask; a batched value goes through where()."""
    (x, mask, value), (xb, mb, vb) = args, bdims
    rank = max(lrank(x, xb), lrank(mask, mb))
    xf = x if xb is None else pad_to(front(x, xb), rank)
    mf = mask if mb is None else pad_to(front(mask, mb), rank)
    if vb is None:
        return masked_fill(xf, mf, value), 0
    if lrank(value, vb):
        raise RuntimeError(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{lrank(value, vb)} dimension(s)."
        )
    if mask.dtype.name != "bool":
        raise RuntimeError(
            "masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{mask.dtype.cpp_name}"
        )
    v = front(value, vb).to(x.dtype).reshape(vmap.size, *((1,) * rank))
    return where(mf, v, xf), 0


def _masked_fill_samples(make):
    return [*_masked_samples(make, True), S((make((2, 3)), make.rng.random((2, 3)) < 0.5, -1.5))]


def _masked_fill_errors(make):
    yield ErrorInput(
        S((make((3, 4)), np.ones(4, dtype=np.float32), 1.0)),
        RuntimeError,
        "masked_fill_ only supports boolean masks, but got mask with dtype float",
    )
    yield ErrorInput(
        S((make((3, 4)), np.ones(4, dtype=bool), make((1,)))),
        RuntimeError,
        "masked_fill_ only supports a 0-dimensional value tensor",
    )


masked_fill_p = defop(
    "masked_fill",
    _masked_fill,
    nin=3,
    vjp=(
        lambda g, mask: g.masked_fill(mask, 0.0),
        None,
        lambda g, mask: where(mask, g, 0.0).sum(),
    ),
    jvp=LINEAR,
    batch_rule=_masked_fill_rule,
    node_name=lambda value: "MaskedFillBackward0" if value is None else "MaskedFillBackward1",
    checked_scalars=("value",),
    samples=_masked_fill_samples,
    error_samples=_masked_fill_errors,
    methods=True,
    inplace=True,
    inplace_policy=InplacePolicy(
        shared_ok=True,
        operand_overlap_ok=True,
        batched=BatchedWrite.ARITHMETIC,
        batched_tensor_value=BatchedWrite.FALLBACK,
    ),
    test=COMPLEX_TOO,
    complex32=True,
    meta=by_kernel,
)
masked_fill = masked_fill_p.fn


def _masked_scatter(xp, input, mask, source):
    _same_dtype("masked_scatter", input, source)
    _check_mask(mask, "masked_scatter_", np_style=True)
    shape = _mask_broadcast(mask, input)
    out = xp.array(xp.broadcast_to(input, shape))
    m = xp.broadcast_to(mask, shape)
    n = int(m.sum())
    if n > source.size:
        raise _too_few_source()
    out[m] = source.reshape(-1)[:n]
    return out


def _too_few_source() -> RuntimeError:
    return RuntimeError("Number of elements of source < number of ones in mask")


def _masked_scatter_rule(vmap, args, bdims, attrs):
    """Each batch element takes its own source from the start. An unbatched mask runs the
    kernel once with the batch dim last (the source as (numel, B)); a batched mask picks
    source elements by a running count of the mask."""
    (x, mask, src), (xb, mb, sb) = args, bdims
    _same_dtype("masked_scatter", x, src)  # (the kernel's first check)
    rank = max(lrank(x, xb), lrank(mask, mb))
    b = vmap.size
    xf = pad_to(materialize(vmap, x, xb), rank)
    s = materialize(vmap, src, sb).reshape(b, -1)
    if mb is None:
        out = masked_scatter(xf.movedim(0, -1), mask.unsqueeze(-1), s.movedim(0, 1))
        return out, rank
    if mask.dtype.name != "bool":
        _check_mask(np.empty(0, mask.dtype.np), "masked_scatter_", np_style=True)
    shape = np.broadcast_shapes(lshape(x, xb), lshape(mask, mb))
    mf = pad_to(front(mask, mb), rank).expand(b, *shape)
    xf = xf.expand(b, *shape)
    if s.shape[1] == 0:  # nothing to take: the kernel checks that nothing is selected
        return masked_scatter(xf, mf, s), 0
    flat = mf.reshape(b, -1)
    pos = (flat.cumsum(1) - 1).clamp(min=0)
    if xf.device.type == "cuda" and flat.shape[1] and not values_hidden(pos):
        # (a deferred check of its own, before the gather's, whose text the CPU rewrites)
        defer_check((pos[:, -1] >= s.shape[1]).any()._data, _too_few_source)
    try:
        vals = s.gather(1, pos)
    except RuntimeError as e:
        if _OOB.fullmatch(str(e)) is None:
            raise
        raise _too_few_source() from None
    out = where(flat, vals.to(x.dtype), xf.reshape(b, -1))
    return out.reshape(b, *shape), 0


def _masked_scatter_vjp_src(g, mask, source_shape):
    # The k-th selected element of g goes to source element k: a running count of the mask
    # places them (no masked_select, whose length would differ across a batched mask).
    # Only source's shape is saved, so ``y.masked_scatter_(m, y)`` differentiates.
    n = math.prod(source_shape)
    if n == 0:
        return zeros(source_shape, dtype=g.dtype, device=g.device)
    m = mask.expand(g.shape).reshape(-1)
    pos = (m.cumsum(0) - 1).clamp(min=0)
    vals = where(m, g.reshape(-1), 0.0)
    return _scatter_add(zeros(n, dtype=g.dtype, device=g.device), pos, vals, dim=0).reshape(
        source_shape
    )


def _masked_scatter_errors(make):
    yield ErrorInput(
        S((make((3, 4)), np.ones(4, dtype=np.float32), make((12,)))),
        RuntimeError,
        "masked_scatter_ only supports boolean masks, but got mask with dtype Float",
    )
    yield ErrorInput(
        S((make((3, 4)), np.ones(4, dtype=bool), make((2,)))),
        RuntimeError,
        "Number of elements of source < number of ones in mask",
    )


def _masked_scatter_meta(op, arrays, attrs):
    """The input and mask broadcast together; how much of source is read is the mask's
    values, which PyTorch's meta kernel does not check."""
    input, mask, source = arrays
    _same_dtype("masked_scatter", input, source)
    return MetaArray(np.broadcast_shapes(input.shape, mask.shape), input.dtype)


masked_scatter_p = defop(
    "masked_scatter",
    _masked_scatter,
    nin=3,
    vjp=(lambda g, mask: g.masked_fill(mask, 0.0), None, _masked_scatter_vjp_src),
    jvp=LINEAR,
    batch_rule=_masked_scatter_rule,
    samples=lambda make: list(_masked_samples(make, False)),
    error_samples=_masked_scatter_errors,
    methods=True,
    inplace=True,
    # self takes the mask's broadcast shape only where the mask expands to self
    inplace_policy=InplacePolicy(
        operand_overlap_ok=True,
        shape_error=lambda self, args: expand_error(list(args[0].shape), list(self.shape)),
    ),
    test=COMPLEX_TOO,
    complex32="masked_scatter",  # (PyTorch's kernel that refuses ComplexHalf)
    meta=_masked_scatter_meta,
)
masked_scatter = masked_scatter_p.fn


def _masked_select(xp, input, mask):
    if not hasattr(mask, "dtype") or mask.dtype.kind != "b":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = _mask_broadcast(mask, input)
    return xp.broadcast_to(input, shape)[xp.broadcast_to(mask, shape)]


_MASKED_SELECT = (
    "vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot support "
    "this because for each batch this would return a differently shaped Tensor. Please file an "
    "issue at https://github.com/pytorch/pytorch/issues if you need this feature."
)


def _masked_select_rule(vmap, args, bdims, attrs):
    (x, mask), (xb, mb) = args, bdims
    if mb is not None:
        raise RuntimeError(_MASKED_SELECT)
    xf = pad_to(front(x, xb), max(lrank(x, xb), mask.dim()))
    return masked_select(xf, mask).reshape(vmap.size, -1), 0


def _masked_select_vjp(g, input, mask):
    shape = np.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    return masked_scatter(zeros(shape, dtype=g.dtype, device=g.device), mask, g)


masked_select_p = defop(
    "masked_select",
    _masked_select,
    out=True,
    value_shaped=True,
    vjp=(_masked_select_vjp, None),
    jvp=LINEAR,
    batch_rule=_masked_select_rule,
    test={**COMPLEX_TOO, "vmap_unbatched": (1,)},
    samples=lambda make: [
        S((make((3, 4)), make.rng.random((3, 4)) < 0.5)),
        S((make((3, 4)), make.rng.random((4,)) < 0.5)),
        S((make((4,)), make.rng.random((2, 4)) < 0.5)),
        S((make(()), np.array(True))),
    ],
    error_samples=lambda make: [
        ErrorInput(
            S((make((3, 4)), np.ones(4, dtype=np.float32))),
            RuntimeError,
            "masked_select: expected BoolTensor for mask",
        )
    ],
    methods=True,
    complex32=True,
    meta=value_sized,
)
masked_select = masked_select_p.fn


masked_select.__doc__ = """The elements of ``input`` where ``mask`` holds, as a 1-d tensor.

Under vmap, as in PyTorch, a batched ``mask`` is an error (each batch element could select
a different count); a batched ``input`` with an unbatched mask selects the same count from
every element and gives a (B, count) result.
"""
