"""Embedding lookups: ``embedding`` (a row gather whose weight gradient is a scatter-add,
``embedding_dense_backward``) and ``embedding_bag`` (gathers reduced per bag with one
segment sum or segment max).

Both primitives take leading batch dims (weight ``(*B, V, D)`` with indices ``(*B, ...)``)
so that vmap folds its batch into them: one gather, one scatter-add, whatever the nesting.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtype as dt
from .._core.dispatch import dispatch
from .._core.meta import by_kernel
from .._core.meta_array import MetaArray
from .._core.op import LINEAR, composite, defop
from .._core.tensor import Tensor
from .._opdb.samples import ErrorInput as E
from .._opdb.samples import S
from ..autograd import no_grad
from ..ops._batching import front, materialize
from ..ops._families import COMPLEX_TOO
from ..ops._type_string import type_string
from ..ops.comparison import where
from ..ops.creation import ones, zeros
from ..ops.indexing._common import in_range
from ..ops.reduction import vector_norm
from ._checks import concrete


# ------------------------------------------------------------------ embedding (primitive)
def _embedding(xp, weight, indices, padding_idx=None, scale_grad_by_freq=False):
    if indices.size:
        indices = in_range(xp, indices, weight.shape[-2])
    lead = weight.ndim - 2
    if lead == 0:
        return xp.take(weight, indices, axis=0)
    flat = indices.reshape(*indices.shape[:lead], -1, 1)
    out = xp.take_along_axis(weight, flat, axis=-2)
    return out.reshape(*indices.shape, weight.shape[-1])


def _embedding_meta(op, arrays, attrs):
    """The rows' shape: PyTorch's meta kernel checks no index."""
    weight, indices = arrays[0], arrays[1]
    return MetaArray(indices.shape + weight.shape[-1:], weight.dtype)


def _embedding_rule(vmap, args, bdims, attrs):
    """Fold the vmap batch into the op's leading batch dims (an unbatched weight: the batch
    becomes one more index dim, after the weight's own leading dims)."""
    (w, i), (bw, bi) = args, bdims
    if bw is None:
        lead = w.dim() - 2
        return dispatch(embedding_p, (w, front(i, bi).movedim(0, lead)), attrs), lead
    return dispatch(embedding_p, (front(w, bw), materialize(vmap, i, bi)), attrs), 0


def _embedding_vjp(g, weight_shape, indices, padding_idx, scale_grad_by_freq):
    return embedding_dense_backward(
        g, indices, weight_shape[-2], padding_idx, scale_grad_by_freq, len(weight_shape) - 2
    )


def _embedding_samples(make):
    # padding_idx and scale_grad_by_freq change the gradient away from the derivative (as in
    # PyTorch), so finite differences can't check them here: embedding_dense_backward's
    # samples and tests/test_nn_misc.py (against torch) cover them.
    yield S((make.index((2, 3), 5), make((5, 3))))
    yield S((make.index((4,), 4), make((4, 2))))
    yield S((make.index((), 3), make((3, 2))), name="0-d index")
    yield S((make.index((2, 3), 4).astype(np.int32), make((3, 4)).T), name="int32, transposed")
    yield S((make.index((0, 2), 3), make((3, 2))), name="empty")


def _embedding_errors(make):
    yield E(S((np.array([5]), make((5, 3)))), IndexError, "index out of range in self")
    yield E(S((np.array([-1]), make((5, 3)))), IndexError, "index out of range in self")
    yield E(S((np.array([1]), make((5,)))), RuntimeError, "'weight' must be 2-D")
    yield E(
        S((make((2,)), make((5, 3)))),
        RuntimeError,
        "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
        "Long, Int; but got torch.(Float|Double)Tensor instead",
    )


embedding_p = defop(
    "embedding",
    _embedding,
    nin=2,
    vjp=(_embedding_vjp, None),
    jvp=LINEAR,
    batch_rule=_embedding_rule,
    api="nn.functional.embedding",
    samples=_embedding_samples,
    error_samples=_embedding_errors,
    test=COMPLEX_TOO,
    complex_grad=False,
    complex32=True,
    meta=_embedding_meta,
)
_raw_embedding = embedding_p.fn


def _backward_kernel(
    xp, grad, indices, num_weights, padding_idx=None, scale_grad_by_freq=False, batch_dims=0
):
    lead = indices.shape[:batch_dims]
    n_lead = math.prod(lead)
    d = grad.shape[-1]
    idx = indices.reshape(n_lead, -1).astype(np.int64)
    keys = (idx + xp.arange(n_lead)[:, None] * num_weights).reshape(-1)
    g = grad.reshape(keys.size, d)
    if padding_idx is not None:
        g = g * (idx != padding_idx).reshape(-1, 1)
    if scale_grad_by_freq:
        counts = xp.bincount(keys, minlength=n_lead * num_weights)
        g = g / counts[keys][:, None].astype(g.dtype)
    out = xp.zeros(n_lead * num_weights * d, dtype=grad.dtype)
    # element-wise (1-D) add.at: numpy's fast path, ~3x faster than adding whole rows
    xp.add.at(out, (keys[:, None] * d + xp.arange(d)).reshape(-1), g.reshape(-1))
    return out.reshape(*lead, num_weights, d)


def _row_factor(like, indices, num_weights, padding_idx, scale_grad_by_freq, batch_dims):
    """The weight each gathered row's gradient carries: 0 at padding_idx, 1/count of its
    index with scale_grad_by_freq (computed with the ops themselves, so it batches)."""
    f = None
    if scale_grad_by_freq:
        one = ones(*indices.shape, 1, dtype=like.dtype, device=like.device)
        counts = embedding_dense_backward(one, indices, num_weights, None, False, batch_dims)
        f = 1 / _raw_embedding(counts, indices)
    if padding_idx is not None:
        keep = (indices != padding_idx).unsqueeze(-1).to(like.dtype)
        f = keep if f is None else f * keep
    return f


def _backward_vjp(g, indices, num_weights, padding_idx, scale_grad_by_freq, batch_dims):
    out = _raw_embedding(g, indices)
    f = _row_factor(out, indices, num_weights, padding_idx, scale_grad_by_freq, batch_dims)
    return out if f is None else out * f


def _backward_rule(vmap, args, bdims, attrs):
    (g, i), (bg, bi) = args, bdims
    new = {**attrs, "batch_dims": attrs["batch_dims"] + 1}
    return dispatch(
        embedding_dense_backward_p, (materialize(vmap, g, bg), materialize(vmap, i, bi)), new
    ), 0


def _backward_samples(make):
    return [
        S((make((2, 3, 4)), make.index((2, 3), 5), 5)),
        S((make((4, 2)), np.array([1, 3, 1, 0]), 4, 1, True), name="padding, freq"),
        S((make((2, 3, 2)), make.index((2, 3), 3), 3, None, True, 1), name="batch dims"),
        S((make((0, 2)), make.index((0,), 3), 3), name="empty"),
    ]


embedding_dense_backward_p = defop(
    "embedding_dense_backward",
    _backward_kernel,
    nin=2,
    vjp=(_backward_vjp, None),
    jvp=LINEAR,
    batch_rule=_backward_rule,
    api="nn._embedding.embedding_dense_backward",
    test={"no_oracle": True},
    samples=_backward_samples,
    meta=by_kernel,
)
embedding_dense_backward = embedding_dense_backward_p.fn


# ------------------------------------------------------------------ public functions
def _check_padding(padding_idx: int | None, num: int) -> int | None:
    if padding_idx is None:
        return None
    if padding_idx >= num or padding_idx < -num:
        raise AssertionError("Padding_idx must be within num_embeddings")
    return padding_idx + num if padding_idx < 0 else padding_idx


def _check_indices(input: Tensor, what: str) -> None:
    if input.dtype.name not in ("int64", "int32"):
        raise RuntimeError(
            f"Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {type_string(input.dtype, input.device.type)} instead (while "
            f"checking arguments for {what})"
        )


def _renorm_(weight: Tensor, input: Tensor, max_norm: float, norm_type: float) -> None:
    """Scale, in place, the rows of weight that input references to norm <= max_norm."""
    with no_grad():
        idx = input.reshape(-1)
        rows = weight.index_select(0, idx)
        norms = vector_norm(rows, norm_type, dim=-1, keepdim=True)
        scale = where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight.index_copy_(0, idx, rows * scale)


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows ``weight[input]``; the padding_idx row gets no gradient; max_norm renormalizes the
    referenced rows of weight in place. ``sparse`` gradients are returned dense."""
    padding_idx = _check_padding(padding_idx, weight.shape[0])
    _check_indices(input, "embedding")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if max_norm is not None:
        if input.numel() and (int(input.min()) < 0 or int(input.max()) >= weight.shape[0]):
            raise IndexError("index out of range in self")
        _renorm_(weight, input, max_norm, norm_type)
    return _raw_embedding(
        weight, input, padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq
    )


def torch_embedding(
    weight: Tensor,
    indices: Tensor,
    padding_idx: int = -1,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """``torch.embedding``: the rows ``weight[indices]`` (a negative padding_idx: none)."""
    _check_indices(indices, "embedding")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    return _raw_embedding(
        weight,
        indices,
        padding_idx=None if padding_idx < 0 else padding_idx,
        scale_grad_by_freq=scale_grad_by_freq,
    )


torch_embedding.__name__ = torch_embedding.__qualname__ = "embedding"


def _fast_path_range(ind: np.ndarray, off: np.ndarray | None, v: int) -> str:
    """PyTorch's float32 sum/mean kernel (FBGEMM) reports an index out of range per bag, by a
    loop that reads a bag after the first one at its offset counted twice: the text of that
    loop for the first bag holding a bad index."""
    flat = ind.reshape(-1)
    n = flat.shape[0]
    starts = [int(o) for o in off] if off is not None else list(range(0, n, ind.shape[-1]))
    for s, e in zip(starts, [*starts[1:], n]):
        if not ((flat[s:e] < 0) | (flat[s:e] >= v)).any():
            continue
        for i in range(s, e):
            if i >= e - s:
                return (
                    "Expected i < index_size to be true, but got false.  (Could this error "
                    "message be improved?  If so, please report an enhancement request to "
                    "PyTorch.)"
                )
            if not 0 <= flat[s + i] < v:
                return (
                    f"Index {i} of input takes value {int(flat[s + i])} which is not in the "
                    f"valid range [0, {v})"
                )
    return (
        "Your input appears to be incorrect: the last offset value should be the size of the "
        "indices tensor, but it appears not."
    )


def _type_name(d) -> str:
    """PyTorch's name of a CPU tensor type in argument checks: the legacy tensor type where
    there is one, else the backend's type name."""
    return f"CPU{d.scalar_name}Type" if d.is_complex or d == dt.bool_ else d.tensor_type


def _bag_checks(input, weight, offsets, mode, per_sample_weights, include_last_offset, padding_idx):
    if weight.dim() != 2:
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}"
        )
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch "
                f"of fixed length sequences. However, found offsets of type {type(offsets)}"
            )
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}"
        )
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(
                "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                "on GitHub."
            )
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(
                f"embedding_bag: If per_sample_weights (torch.Size({list(per_sample_weights.shape)}"
                f")) is not None, then it must have the same shape as the input "
                f"(torch.Size({list(input.shape)}))"
            )
    _check_indices(input, "embedding_bag")
    if offsets is not None:
        _check_indices(offsets, "embedding_bag")
    if not weight.dtype.is_floating_point:
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have one of the following scalar "
            f"types: Half, BFloat16, Float, Double; but got {_type_name(weight.dtype)} instead "
            "(while checking arguments for embedding_bag)"
        )
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have the same type as tensor for "
            "argument #1 'per_sample_weights'; but type "
            f"torch.{weight.dtype.scalar_name}Tensor does not equal "
            f"torch.{per_sample_weights.dtype.scalar_name}Tensor (while checking arguments "
            "for embedding_bag)"
        )
    ind, off = concrete(input), None if offsets is None else concrete(offsets)
    v = weight.shape[0]
    if ind is not None and ind.size:
        bad = (ind.reshape(-1) < 0) | (ind.reshape(-1) >= v)
        if bad.any():
            if weight.dtype == dt.float32 and mode != "max" and padding_idx is None:
                raise RuntimeError(_fast_path_range(ind, off, v))
            raise RuntimeError(
                "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be "
                f"{int(ind.reshape(-1)[int(bad.argmax())])}"
            )
    if off is not None and off.size:
        if off[0] != 0:
            raise RuntimeError(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                f"from position 0. However, got {int(off[0])}"
            )
        if off[-1] > input.numel():
            raise RuntimeError(
                f"offsets[-1] can not be greater than input's length {input.numel()} but got "
                f"offsets[-1] of {int(off[-1])}"
            )


def _bag_samples(make):
    w = make((5, 3))
    yield S((np.array([1, 2, 4, 0, 3]), w, np.array([0, 2, 2])), name="mean, empty bag")
    yield S((make.index((2, 3), 5), w), {"mode": "sum"}, name="2-D sum")
    yield S((make.index((2, 3), 5), w), {"mode": "max"}, name="2-D max")
    yield S(
        (np.array([1, 2, 4, 0]), w, np.array([0, 1, 1])),
        {"mode": "max", "padding_idx": 2},
        name="max, padding, empty bag",
    )
    yield S(
        (np.array([1, 2, 4, 2]), w, np.array([0, 1, 4])),
        {"mode": "sum", "per_sample_weights": make((4,)), "include_last_offset": True},
        name="sum, weights, last offset",
    )
    yield S(
        (np.array([[1, 2, 2], [2, 2, 2]]), w),
        {"mode": "mean", "padding_idx": 2},
        name="mean, all-padding bag",
    )
    yield S((make.index((0,), 5), w, np.array([0, 0])), {"mode": "sum"}, name="empty")


def _bag_errors(make):
    w = make((5, 3))
    yield E(S((np.array([1, 2]), w, np.array([0])), {"mode": "foo"}), ValueError, "mode has")
    yield E(S((np.array([1, 2]), w)), ValueError, "offsets has to be a 1D Tensor but got None")
    yield E(S((np.array([1, 2]), w, np.array([1]))), RuntimeError, r"offsets\[0\] has to be 0")
    yield E(
        S((np.array([1, 7]), w, np.array([0])), {"mode": "max"}),
        RuntimeError,
        "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be 7",
    )
    yield E(
        S((np.array([1, 2]), w, np.array([0])), {"mode": "max", "per_sample_weights": make(2)}),
        NotImplementedError,
        "per_sample_weights is only supported for mode='sum'",
    )
    yield E(S((np.array([[[1]]]), w)), ValueError, "input has to be 1D or 2D Tensor")


@composite(
    api="nn.functional.embedding_bag",
    samples=_bag_samples,
    error_samples=_bag_errors,
    grad_args=(1, 8),
)
def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """The sum, mean or max of the embeddings of each bag (a row of a 2-D input, or the
    slice of a 1-D input between consecutive offsets); empty bags give zeros."""
    _bag_checks(input, weight, offsets, mode, per_sample_weights, include_last_offset, padding_idx)
    padding_idx = _check_padding(padding_idx, weight.shape[0])
    flat = input.reshape(-1)
    if max_norm is not None:
        _renorm_(weight, flat, max_norm, norm_type)
    rows = _raw_embedding(
        weight, flat, padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq
    )
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1)
    if input.dim() == 2:
        return _fixed_bags(rows.reshape(*input.shape, -1), input, mode, padding_idx)
    return _segment_bags(rows, flat, offsets, include_last_offset, mode, padding_idx)


def _fixed_bags(rows: Tensor, input: Tensor, mode: str, padding_idx: int | None) -> Tensor:
    """Bags that are the rows of a 2-D input: plain reductions over dim 1."""
    keep = None if padding_idx is None else (input != padding_idx).unsqueeze(-1)
    if mode == "max":
        if rows.shape[1] == 0:
            return rows.sum(1)
        if keep is not None:
            rows = rows.masked_fill(keep.logical_not(), -math.inf)
        out = rows.amax(1)
        return out if keep is None else where(keep.any(1), out, 0.0)
    if keep is not None:
        rows = rows * keep
    out = rows.sum(1)
    if mode == "mean":
        n = rows.shape[1] if keep is None else keep.sum(1).clamp_min(1)
        out = out / (n if keep is not None else max(n, 1))
    return out


def _segment_bags(rows, flat, offsets, include_last_offset, mode, padding_idx) -> Tensor:
    """Bags between consecutive offsets of a 1-D input: one segment sum (or max) into a row
    per bag plus one dropped row that takes padding and entries past the last offset."""
    n, d = flat.shape[0], rows.shape[1]
    bags = offsets.shape[0] - include_last_offset
    starts = offsets[1:].to(flat.dtype)
    marks = zeros(n + 1, dtype=flat.dtype, device=flat.device)
    seg = marks.index_add(0, starts, ones(starts.shape, dtype=flat.dtype, device=flat.device))[
        :n
    ].cumsum(0)
    if padding_idx is not None:
        seg = where(flat == padding_idx, bags, seg)
    seg = seg.clamp_max(bags)
    out = zeros((bags + 1, d), dtype=rows.dtype, device=rows.device)
    if mode == "max":
        index = seg.unsqueeze(1).expand(n, d)
        return out.scatter_reduce(0, index, rows, "amax", include_self=False)[:bags]
    out = out.index_add(0, seg, rows)[:bags]
    if mode == "mean":
        one = ones(n, dtype=rows.dtype, device=rows.device)
        count = zeros(bags + 1, dtype=rows.dtype, device=rows.device).index_add(0, seg, one)
        out = out / count[:bags].clamp_min(1).unsqueeze(1)
    return out


def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> Tensor:
    """Scale, in place, the rows of ``input`` that ``indices`` name to norm <= max_norm."""
    _renorm_(input, indices, max_norm, norm_type)
    return input
