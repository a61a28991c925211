"""Losses of class scores against class indices: ``nll_loss`` and ``cross_entropy`` (which also
takes class probabilities, and label smoothing).

Their heart is one primitive, ``nll_pick``: the bounds-checked gather of
``-input[n, target[n, ...], ...]`` (under vmap one gather with the batch as one more spatial
dim, its vjp one scatter-add).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._core import dtype as dt
from .._core.device import checked_index, raise_first
from .._core.dispatch import dispatch
from .._core.meta_array import MetaArray
from .._core.op import LINEAR, NoKernel, composite, defop
from .._core.state import state
from .._core.tensor import Tensor
from .._opdb.samples import ErrorInput as E
from .._opdb.samples import S
from ..ops._batching import front
from ..ops.comparison import where
from ..ops.reduction import log_softmax
from ._linear import _shape
from ._loss_common import _norm_probs, _reduce, _reduction


def _with_ignored(target, value=-100, at=1):
    """``target`` with one entry set to the ignored class."""
    t = target.copy()
    t.reshape(-1)[at % max(t.size, 1)] = value
    return t


# ------------------------------------------------------------------ nll_loss
def _nll_pick(xp, input, target, *, ignore_index):
    """-input[n, target[n, ...], ...] (0 where the target is ignored): (N, C, *d) -> (N, *d)."""
    if (
        xp is np
        and input.ndim == 2
        and target.shape == input.shape[:1]
        and target.dtype == np.int64
    ):
        # (a batch of rows, every target a class: one fancy index, nothing to mask)
        c = input.shape[1]
        if c and target.size and not 0 <= ignore_index < c:
            lo, hi = np.minimum.reduce(target, None), np.maximum.reduce(target, None)
            if 0 <= lo and hi < c:
                return -input[np.arange(len(target)), target]
    keep = target != ignore_index
    bad = keep & ((target < 0) | (target >= input.shape[1]))
    if xp is np or not input.shape[1]:  # (no class to read safely: read now)
        raise_first(target, bad, _target_out_of_bounds)
    else:
        target = checked_index(xp, target, bad, _target_out_of_bounds)
    safe = xp.where(keep, target, 0).astype(xp.int64)
    picked = xp.take_along_axis(input, safe[:, None], axis=1)[:, 0]
    return xp.where(keep, -picked, xp.zeros((), input.dtype))


def _target_out_of_bounds(v: int) -> IndexError:
    return IndexError(f"Target {v} is out of bounds.")


def _nll_pick_meta(op, arrays, attrs):
    """(N, C, *d) -> (N, *d): PyTorch's meta kernel checks no target."""
    input = arrays[0]
    return MetaArray(input.shape[:1] + input.shape[2:], input.dtype)


def _nll_pick_vjp(g, input_shape, target, ignore_index):
    """The scatter of -g to the picked classes."""
    return nll_unpick(g, target, ignore_index=ignore_index, shape=tuple(input_shape))


def _batch_last(op, vmap, args, bdims, attrs):
    """``op`` with the vmap batch as one more trailing spatial dim: an unbatched operand is
    expanded as a view (the kernels read it strided), the result's batch dim is last."""
    (x, t), (bx, bt) = args, bdims
    x = front(x, bx).movedim(0, -1) if bx is not None else x.unsqueeze(-1)
    t = front(t, bt).movedim(0, -1) if bt is not None else t.unsqueeze(-1)
    x = x.expand(*x.shape[:-1], vmap.size)
    t = t.expand(*t.shape[:-1], vmap.size)
    if "shape" in attrs:
        attrs = {**attrs, "shape": (*attrs["shape"], vmap.size)}
    out = dispatch(op, (x, t), attrs)
    return out, out.dim() - 1


def _nll_pick_rule(vmap, args, bdims, attrs):
    return _batch_last(nll_pick_p, vmap, args, bdims, attrs)


def _nll_pick_samples(make):
    yield S((make((3, 4)), _with_ignored(make.index(3, 4))), {"ignore_index": -100})
    yield S((make((2, 3, 4)), make.index((2, 4), 3)), {"ignore_index": 1})


def _nll_kernel(inputs, attrs) -> str:
    """PyTorch's nll_loss kernel: an input of 3 or more dims is reshaped for the 2-d one."""
    return "nll_loss2d_forward_out_frame" if len(inputs[0].shape) >= 3 else "nll_loss_out_frame"


nll_pick_p = defop(
    "_nll_pick",
    _nll_pick,
    nin=2,
    vjp=(_nll_pick_vjp, None),
    jvp=LINEAR,
    batch_rule=_nll_pick_rule,
    samples=_nll_pick_samples,
    api="nn._loss_classification.nll_pick",
    # An internal piece of nll_loss (whose reduced form is checked against torch).
    test={"no_oracle": True},
    complex32=_nll_kernel,  # (reached by cross_entropy on an empty batch),
    meta=_nll_pick_meta,
)
nll_pick = nll_pick_p.fn


def _nll_unpick(xp, grad, target, *, ignore_index, shape):
    """_nll_pick's vjp: -grad at each kept target's class, 0 elsewhere: (N, *d) -> ``shape``
    (N, C, *d)."""
    classes = xp.arange(shape[1]).reshape((-1,) + (1,) * (target.ndim - 1))
    hit = (target[:, None] == classes) & (target != ignore_index)[:, None]
    # (0 - grad: a zero gradient gives +0, as a sum into zeros does)
    return xp.where(hit, 0.0 - grad[:, None], 0.0).astype(grad.dtype, copy=False)


def _nll_unpick_meta(op, arrays, attrs):
    return MetaArray(tuple(attrs["shape"]), arrays[0].dtype)


def _nll_unpick_rule(vmap, args, bdims, attrs):
    return _batch_last(nll_unpick_p, vmap, args, bdims, attrs)


def _nll_unpick_samples(make):
    t = _with_ignored(make.index(3, 4))
    yield S((make((3,)), t), {"ignore_index": -100, "shape": (3, 4)})
    yield S((make((2, 4)), make.index((2, 4), 3)), {"ignore_index": 1, "shape": (2, 3, 4)})
    yield S((make((0,)), make.index(0, 4)), {"ignore_index": -100, "shape": (0, 4)})


nll_unpick_p = defop(
    "_nll_unpick",
    _nll_unpick,
    nin=2,
    vjp=(lambda g, target, ignore_index: nll_pick(g, target, ignore_index=ignore_index), None),
    jvp=LINEAR,
    batch_rule=_nll_unpick_rule,
    samples=_nll_unpick_samples,
    api="nn._loss_classification.nll_unpick",
    # An internal piece of nll_loss's gradient (checked against torch through it).
    test={"no_oracle": True},
    meta=_nll_unpick_meta,
)
nll_unpick = nll_unpick_p.fn


def _check_nll(input: Tensor, target: Tensor, weight) -> None:
    """PyTorch's argument checks of nll_loss_nd, in its order and words."""
    si, st = _shape(input), _shape(target)
    n, nt = len(si), len(st)
    if n < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {n})")
    if n != 1 and si[0] != (st[0] if nt else 0):
        raise ValueError(
            f"Expected input batch_size ({si[0]}) to match target batch_size "
            f"({st[0] if nt else 0})."
        )
    if target.dtype not in (dt.int64, dt.uint8):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {target.dtype.scalar_name}"
        )
    c = si[1] if n > 1 else si[0]
    if n <= 2:
        if nt > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if n == 1 and nt == 1 and st[0] != 1:
            raise ValueError(
                f"For 1D input, 1D target must have size 1, but got target size: {st[0]}"
            )
        if weight is not None and (weight.dim() != 1 or weight.shape[0] != c):
            raise RuntimeError(
                f"weight tensor should be defined either for all {c} classes or no "
                f"classes but got weight tensor of shape: {list(weight.shape)}"
            )
    else:
        if n == 4 and nt != 3:
            raise RuntimeError(
                "only batches of spatial targets supported (3D tensors) but got targets of "
                f"dimension: {nt}"
            )
        if n != 4 and st[1:] != si[2:]:
            want = [si[0], *si[2:]]
            raise RuntimeError(f"Expected target size {want}, got {list(st)}")
        if weight is not None and weight.numel() != c:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
        if n == 4 and st != (si[0], *si[2:]):
            raise RuntimeError(f"size mismatch (got input: {list(si)} , target: {list(st)}")
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(
            f"expected scalar type {input.dtype.scalar_name} but found {weight.dtype.scalar_name}"
        )


def _class_weights(target: Tensor, weight, ignore_index: int):
    """Each target's class weight (0 where ignored): PyTorch's normalizer for 'mean'."""
    keep = target != ignore_index
    if weight is None:
        return keep
    return weight[where(keep, target, 0)] * keep


def _nll(input, target, weight, ignore_index: int, reduction: str):
    """nll_loss on checked arguments; ``input`` has a batch dim."""
    loss = nll_pick(input, target, ignore_index=ignore_index)
    if weight is None and reduction != "mean":
        return _reduce(loss, reduction)
    if weight is None and not (state.stack or state.modes) and isinstance(target, Tensor):
        t = target._data
        if not target._level and type(t) is np.ndarray:  # (the count read off the array)
            kept = int(np.count_nonzero(t != ignore_index))
            # (all kept: the same sum divided by the same count, as one op)
            return loss.mean() if kept == t.size and kept else loss.sum() / kept
    w = _class_weights(target, weight, ignore_index)
    if weight is not None:
        loss = loss * w
    return loss.sum() / w.sum() if reduction == "mean" else _reduce(loss, reduction)


def _unbatched(input: Tensor, target: Tensor):
    """(C,) input and 0-d target as a batch of one (PyTorch's unbatched form)."""
    return input.unsqueeze(0), target.reshape(1)


def _nll_samples(make):
    yield S((make((3, 4)), make.index(3, 4)))
    yield S(
        (make((3, 4)), _with_ignored(make.index(3, 4)), make((4,), 0.5, 2.0)), {"reduction": "sum"}
    )
    yield S((make((4, 3)).T, make.index(3, 4), make((4,), 0.5, 2.0)), {"ignore_index": 2})
    yield S((make((2, 3, 4)), _with_ignored(make.index((2, 4), 3))), {"reduction": "none"})
    yield S((make((2, 3, 2, 2)), make.index((2, 2, 2), 3), make((3,), 0.5, 2.0)))
    yield S((make((4,)), make.index((), 4)), {"reduction": "none"}, name="unbatched")
    yield S((make((0, 4)), make.index(0, 4)), {"reduction": "sum"}, name="empty batch")


def _nll_errors(make, fn="nll_loss"):
    x, w = make((3, 4)), make((4,))
    t = np.array([0, 1, 2])
    yield E(
        S((x, t[:2])),
        ValueError,
        r"Expected input batch_size \(3\) to match target batch_size \(2\)\.",
    )
    yield E(S((x, np.array([0, 5, 1]))), IndexError, "Target 5 is out of bounds.")
    yield E(S((x, np.array([0, -1, 1]))), IndexError, "Target -1 is out of bounds.")
    yield E(
        S((x, t[:, None])),
        RuntimeError,
        "0D or 1D target tensor expected, multi-target not supported",
    )
    yield E(
        S((x, t, w[:3])),
        RuntimeError,
        r"weight tensor should be defined either for all 4 classes or no classes "
        r"but got weight tensor of shape: \[3\]",
    )
    yield E(S((x, t), {"reduction": "foo"}), ValueError, "foo is not a valid value for reduction")
    yield E(
        S((make((2, 3, 4)), np.zeros((2, 5), np.int64))),
        RuntimeError,
        r"Expected target size \[2, 4\], got \[2, 5\]",
    )
    yield E(
        S((make((2, 3, 2, 2)), np.zeros((2, 2), np.int64))),
        RuntimeError,
        "only batches of spatial targets supported",
    )
    if fn == "nll_loss":
        yield E(
            S((x, t.astype(np.float32))),
            RuntimeError,
            "expected target dtype to be Long or Byte, but got Float",
        )
        yield E(S((make(()), np.array(0))), ValueError, r"Expected 1 or more dimensions \(got 0\)")


@composite(
    samples=_nll_samples,
    error_samples=_nll_errors,
    api="nn.functional.nll_loss",
    grad_args=(0,),  # PyTorch's nll_loss is not differentiable in its weight
    no_kernel=NoKernel("bic", _nll_kernel, inputs=(0,)),
    autocast="fp32",
)
def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The negative log likelihood loss: ``-weight[t] * input[n, t]`` for targets ``t``."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_nll(input, target, weight)
    unbatched = input.dim() == 1
    if unbatched:
        input, target = _unbatched(input, target)
    out = _nll(input, target, weight, ignore_index, reduction)
    return out.reshape(()) if unbatched and reduction == "none" else out


# ------------------------------------------------------------------ cross_entropy
def _along_classes(weight: Tensor, logp: Tensor, cdim: int) -> Tensor:
    """The class weights shaped to broadcast along ``logp``'s class dim."""
    return weight.reshape(-1, *(1,) * (logp.dim() - cdim - 1))


def _ce_probs(logp, target, weight, reduction, smoothing, cdim):
    """Cross entropy against class probabilities (optionally smoothed)."""
    c = logp.shape[cdim]
    if smoothing > 0:
        target = target * (1 - smoothing) + smoothing / c
    prod = logp * target
    if weight is not None:
        prod = prod * _along_classes(weight, logp, cdim)
    loss = -prod.sum(cdim)
    if reduction == "mean":  # over the positions, not the classes; NaN for no positions
        n = logp.numel() // c if logp.numel() else math.nan
        return loss.sum() / n
    return _reduce(loss, reduction)


def _ce_smoothed(logp, target, weight, ignore_index, reduction, smoothing):
    """(1 - s) nll + s / C (the loss against the uniform distribution); ``logp`` batched."""
    nll = _nll(logp, target, weight, ignore_index, reduction)
    smooth = -(logp if weight is None else logp * _along_classes(weight, logp, 1)).sum(1)
    smooth = where(target != ignore_index, smooth, 0.0)
    if reduction == "mean":
        smooth = smooth.sum() / _class_weights(target, weight, ignore_index).sum()
    else:
        smooth = _reduce(smooth, reduction)
    return (1 - smoothing) * nll + smooth * (smoothing / logp.shape[1])


def _ce_samples(make):
    yield S((make((3, 4)), make.index(3, 4)))
    w = make((4,), 0.5, 2.0)
    yield S((make((3, 4)), _with_ignored(make.index(3, 4)), w), {"reduction": "sum"})
    yield S((make((3, 4)), _with_ignored(make.index(3, 4)), w), {"label_smoothing": 0.2})
    yield S(
        (make((2, 3, 4)), _with_ignored(make.index((2, 4), 3), 1)),
        {"ignore_index": 1, "label_smoothing": 0.1, "reduction": "none"},
    )
    yield S((make((3, 4)), _norm_probs(make, (3, 4))), name="probabilities")
    yield S(
        (make((2, 4, 3)), _norm_probs(make, (2, 4, 3), 1), w),
        {"label_smoothing": 0.3, "reduction": "sum"},
    )
    yield S((make((4,)), make.index((), 4)), {"label_smoothing": 0.1}, name="unbatched")
    yield S((make((0, 4)), make.index(0, 4)), {"reduction": "sum"}, name="empty batch")


def _ce_errors(make):
    yield from _nll_errors(make, "cross_entropy")
    x = make((3, 4))
    yield E(
        S((x, _norm_probs(make, (3, 4))), {"label_smoothing": 1.5}),
        RuntimeError,
        "label_smoothing must be between 0.0 and 1.0. Got: 1.5",
    )
    yield E(
        S((x, make.index((3, 4), 4))),
        RuntimeError,
        "Expected floating point type for target with class probabilities, got Long",
    )
    yield E(
        S((x, _norm_probs(make, (3, 4))), {"ignore_index": 1}),
        RuntimeError,
        "ignore_index is not supported for floating point target",
    )
    yield E(
        S((x, _norm_probs(make, (3, 4)), make((3,)))),
        RuntimeError,
        r"cross_entropy: weight tensor should be defined either for all 4 classes or no classes "
        r"but got weight tensor of shape: \[3\]",
    )


@composite(
    samples=_ce_samples,
    error_samples=_ce_errors,
    api="nn.functional.cross_entropy",
    grad_args=(0, 1),  # not the weight: PyTorch's nll_loss is not differentiable in it,
    autocast="fp32",
)
def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """log_softmax over the class dim, then the nll loss against class indices, or the cross
    entropy against class probabilities (``target`` shaped like ``input``)."""
    reduction = _reduction(size_average, reduce, reduction)
    if label_smoothing > 1.0:  # a negative one is no smoothing, as in PyTorch
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    si = _shape(input)
    cdim = 0 if len(si) == 1 else 1
    if si == _shape(target):
        if not target.dtype.is_floating_point:
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, got "
                f"{target.dtype.scalar_name}"
            )
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        c = input.shape[cdim] if input.dim() else 1
        if weight is not None and (weight.dim() != 1 or weight.numel() != c):
            raise RuntimeError(
                f"cross_entropy: weight tensor should be defined either for all {c} classes or "
                f"no classes but got weight tensor of shape: {list(weight.shape)}"
            )
        logp = log_softmax(input, cdim)
        return _ce_probs(logp, target, weight, reduction, label_smoothing, cdim)
    _check_nll(input, target, weight)
    logp = log_softmax(input, cdim)
    if len(si) == 1:
        logp, target = _unbatched(logp, target)
    if label_smoothing > 0:
        out = _ce_smoothed(logp, target, weight, ignore_index, reduction, label_smoothing)
    else:
        out = _nll(logp, target, weight, ignore_index, reduction)
    return out.reshape(()) if len(si) == 1 and reduction == "none" else out


# ------------------------------------------------------------------ linear_cross_entropy
def _check_linear_ce(input, linear_weight, target, linear_bias, ignore_index) -> tuple:
    """PyTorch's checks; returns (logits shape, out_features)."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(
            f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}"
        )
    batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), got "
            f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively"
        )
    classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(
            f"expected linear_bias shape {(classes, *out_features)}, got {tuple(linear_bias.shape)}"
        )
    if out_features and not batches:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(input.shape)}"
        )
    logits_shape = (*batches, classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    return logits_shape, out_features


def _lce_samples(make):
    yield S((make((3, 4)), make((5, 4)), make.index(3, 5)))
    w = make((5,), 0.5, 2.0)
    yield S(
        (make((3, 4)), make((5, 4)), _with_ignored(make.index(3, 5), 2)),
        {"linear_bias": make((5,)), "weight": w, "ignore_index": 2, "reduction": "sum"},
    )
    yield S((make((4,)), make((5, 4)), make.index((), 5)), {"label_smoothing": 0.1})
    yield S(
        (make((2, 4)), make((3, 2, 4)), make.index((2, 2), 3)),
        {"linear_bias": make((3, 2)), "reduction": "none"},
        name="K-dimensional",
    )
    yield S((make((3, 4)), make((5, 4)), _norm_probs(make, (3, 5))), name="probabilities")


def _lce_errors(make):
    x, w, t = make((3, 4)), make((5, 4)), make.index(3, 5)
    yield E(S((make((2, 3, 4)), w, t)), RuntimeError, "expected input with dimensionality 1 or 2")
    yield E(S((x, make((4,)), t)), RuntimeError, "expected linear_weight with dimensionality")
    yield E(S((x, make((5, 3)), t)), RuntimeError, "expected equal input and linear_weight last")
    yield E(
        S((x, w, t), {"linear_bias": make((4,))}),
        RuntimeError,
        r"expected linear_bias shape \(5,\), got \(4,\)",
    )
    yield E(
        S((make((4,)), make((5, 2, 4)), make.index((2,), 5))),
        RuntimeError,
        "K-dimensional loss defined by linear_weight shape",
    )
    yield E(
        S((x, w, _norm_probs(make, (3, 5))), {"ignore_index": 1}),
        RuntimeError,
        "ignore_index cannot be specified when target contains probabilities",
    )


@composite(
    samples=_lce_samples,
    error_samples=_lce_errors,
    api="nn.functional.linear_cross_entropy",
    grad_args=(0, 1, 2),
)
def linear_cross_entropy(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    *,
    linear_bias: Tensor | None = None,
    weight: Tensor | None = None,
    reduction: str = "mean",
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    options=None,
) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target)``; a
    ``linear_weight`` of shape (C, d_1, ..., d_K, in_features) gives K-dimensional logits.
    ``options`` (PyTorch's chunked path) computes the same loss: numtorch always takes the
    reference path."""
    logits_shape, out_features = _check_linear_ce(
        input, linear_weight, target, linear_bias, ignore_index
    )
    ignore_index = -100 if ignore_index is None else ignore_index
    if options is not None and (
        out_features
        or reduction not in {"mean", "sum", "none"}
        or label_smoothing != 0.0
        or target.dtype != dt.int64
    ):
        warnings.warn(
            "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
            "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features "
            f"== (). Got reduction={reduction!r}, label_smoothing={label_smoothing}, "
            f"target.dtype={target.dtype}, out_features={out_features}, tracing=False, "
            "linear_bias.shape="
            f"{tuple(linear_bias.shape) if linear_bias is not None else None}.",
            stacklevel=2,
        )
    if out_features:
        rows = math.prod(linear_weight.shape[:-1])
        linear_weight = linear_weight.reshape(rows, input.shape[-1])
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = input @ linear_weight.mT
    if linear_bias is not None:
        logits = logits + linear_bias
    return cross_entropy(
        logits.reshape(logits_shape),
        target,
        weight,
        ignore_index=ignore_index,
        reduction=reduction,
        label_smoothing=label_smoothing,
    )
