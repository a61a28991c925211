"""Loss functions of ``torch.nn.functional``.

Every loss is a composite of public ops ending in one reduction helper (``_reduce``), with
three small primitives: ``_nll_pick``, the gather at the heart of ``nll_loss`` and
``cross_entropy`` (bounds-checked; under vmap one gather with the batch as one more spatial
dim, its vjp one scatter-add); ``_bce_pointwise``, binary_cross_entropy with PyTorch's
gradient; and ``_clamp_passthrough``, gaussian_nll_loss's clamp that reverse mode does not
see. ``ctc_loss`` runs the alpha recursion over time with ops (its gradient, the beta
recursion, is autograd's, to any order).
"""

from __future__ import annotations

import ast
import math
import warnings
from collections.abc import Callable

import numpy as np

from .._core import dtype as dt
from .._core.dispatch import dispatch
from .._core.inplace import cast_error
from .._core.layout import follow_inputs
from .._core.op import ELEMENTWISE, LINEAR, NoKernel, composite, defop
from .._core.tensor import Tensor
from ..ops._batching import elementwise, front
from ..ops.comparison import where
from ..ops.creation import arange, as_tensor, full_like, ones_like, zeros_like
from ..ops.reduction import log_softmax, scatter_add_dim
from ..ops.shape import cat as cat_op
from ..ops.shape import stack as stack_op
from ..ops.views import broadcast_tensors
from ..testing.samples import ErrorInput as E
from ..testing.samples import S
from ._checks import concrete
from ._distance import pairwise_distance

cat, stack = cat_op.fn, stack_op.fn

_REDUCTIONS = ("none", "mean", "sum")


# ------------------------------------------------------------------ shared helpers
def _reduction(size_average, reduce, reduction: str, check: bool = True) -> str:
    """The reduction string, with the legacy ``size_average``/``reduce`` pair mapped as
    PyTorch maps it (and its deprecation warning)."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
        warnings.warn(
            "size_average and reduce args will be deprecated, please use "
            f"reduction='{reduction}' instead.",
            stacklevel=3,
        )
    if reduction == "elementwise_mean":
        warnings.warn(
            "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
            stacklevel=3,
        )
        return "mean"
    if check and reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss: Tensor, reduction: str, msg: str = "{} is not a valid value for reduction"):
    """The elementwise ``loss`` reduced: kept ('none'), averaged ('mean') or summed ('sum')."""
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(msg.format(reduction))


def _size_warning(input: Tensor, target: Tensor) -> None:
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({_tsize(target)}) that is different to the input size "
            f"({_tsize(input)}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def _tsize(t: Tensor) -> str:
    return f"torch.Size({list(t.shape)})"


def _norm_probs(make, shape, dim=-1):
    p = make(shape, 0.1, 1.0)
    return p / p.sum(dim, keepdims=True)


def _with_ignored(target, value=-100, at=1):
    """``target`` with one entry set to the ignored class."""
    t = target.copy()
    t.reshape(-1)[at % max(t.size, 1)] = value
    return t


# ------------------------------------------------------------------ nll_loss
def _nll_pick(xp, input, target, *, ignore_index):
    """-input[n, target[n, ...], ...] (0 where the target is ignored): (N, C, *d) -> (N, *d)."""
    keep = target != ignore_index
    bad = keep & ((target < 0) | (target >= input.shape[1]))
    if bad.any():
        raise IndexError(f"Target {int(target[bad].reshape(-1)[0])} is out of bounds.")
    safe = xp.where(keep, target, 0).astype(xp.int64)
    picked = xp.take_along_axis(input, safe[:, None], axis=1)[:, 0]
    return xp.where(keep, -picked, xp.zeros((), input.dtype))


def _nll_pick_vjp(g, input_shape, target, ignore_index):
    """The scatter-add of -g to the picked classes."""
    keep = target != ignore_index
    index = where(keep, target, 0).unsqueeze(1)
    return scatter_add_dim.fn(where(keep, -g, 0.0).unsqueeze(1), index, 1, input_shape)


def _nll_pick_rule(vmap, args, bdims, attrs):
    """The vmap batch as one more trailing spatial dim: an unbatched operand is expanded
    as a view (the gather reads it strided), the result's batch dim is last."""
    (x, t), (bx, bt) = args, bdims
    x = front(x, bx).movedim(0, -1) if bx is not None else x.unsqueeze(-1)
    t = front(t, bt).movedim(0, -1) if bt is not None else t.unsqueeze(-1)
    x = x.expand(*x.shape[:-1], vmap.size)
    t = t.expand(*t.shape[:-1], vmap.size)
    out = dispatch(nll_pick, (x, t), attrs)
    return out, out.dim() - 1


def _nll_pick_samples(make):
    yield S((make((3, 4)), _with_ignored(make.index(3, 4))), {"ignore_index": -100})
    yield S((make((2, 3, 4)), make.index((2, 4), 3)), {"ignore_index": 1})


nll_pick = defop(
    "_nll_pick", _nll_pick, nin=2, vjp=(_nll_pick_vjp, None), jvp=LINEAR,
    batch_rule=_nll_pick_rule, samples=_nll_pick_samples, api="nn._loss.nll_pick.fn",
    # An internal piece of nll_loss (whose reduced form is checked against torch).
    test={"no_oracle": True},
)  # fmt: skip


def _check_nll(input: Tensor, target: Tensor, weight) -> None:
    """PyTorch's argument checks of nll_loss_nd, in its order and words."""
    n = input.dim()
    if n < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {n})")
    if n != 1 and input.shape[0] != (target.shape[0] if target.dim() else 0):
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
            f"({target.shape[0] if target.dim() else 0})."
        )
    if target.dtype not in (dt.int64, dt.uint8):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {target.dtype.scalar_name}"
        )
    c = input.shape[1] if n > 1 else input.shape[0]
    if n <= 2:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if n == 1 and target.dim() == 1 and target.shape[0] != 1:
            raise ValueError(
                f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}"
            )
        if weight is not None and (weight.dim() != 1 or weight.shape[0] != c):
            raise RuntimeError(
                f"weight tensor should be defined either for all {c} classes or no "
                f"classes but got weight tensor of shape: {list(weight.shape)}"
            )
    else:
        if n == 4 and target.dim() != 3:
            raise RuntimeError(
                "only batches of spatial targets supported (3D tensors) but got targets of "
                f"dimension: {target.dim()}"
            )
        if n != 4 and tuple(target.shape[1:]) != tuple(input.shape[2:]):
            want = [input.shape[0], *input.shape[2:]]
            raise RuntimeError(f"Expected target size {want}, got {list(target.shape)}")
        if weight is not None and weight.numel() != c:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
        if n == 4 and tuple(target.shape) != (input.shape[0], *input.shape[2:]):
            raise RuntimeError(
                f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}"
            )
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
    loss = nll_pick.fn(input, target, ignore_index=ignore_index)
    if weight is None and reduction != "mean":
        return _reduce(loss, reduction)
    w = _class_weights(target, weight, ignore_index)
    if weight is not None:
        loss = loss * w
    return loss.sum() / w.sum() if reduction == "mean" else _reduce(loss, reduction)


def _unbatched(input: Tensor, target: Tensor):
    """(C,) input and 0-d target as a batch of one (PyTorch's unbatched form)."""
    return input.unsqueeze(0), target.reshape(1)


def _nll_samples(make):
    yield S((make((3, 4)), make.index(3, 4)))
    yield S((make((3, 4)), _with_ignored(make.index(3, 4)), make((4,), 0.5, 2.0)), {"reduction": "sum"})  # fmt: skip
    yield S((make((4, 3)).T, make.index(3, 4), make((4,), 0.5, 2.0)), {"ignore_index": 2})
    yield S((make((2, 3, 4)), _with_ignored(make.index((2, 4), 3))), {"reduction": "none"})
    yield S((make((2, 3, 2, 2)), make.index((2, 2, 2), 3), make((3,), 0.5, 2.0)))
    yield S((make((4,)), make.index((), 4)), {"reduction": "none"}, name="unbatched")
    yield S((make((0, 4)), make.index(0, 4)), {"reduction": "sum"}, name="empty batch")


# kl_div refuses a complex input or target, then an integral one, whatever the other is
_KL_INTEGRAL = (
    NoKernel("c", error=(RuntimeError, "kl_div: Complex inputs not supported."), inputs=(0, 1)),
    *(
        NoKernel("bi", error=(RuntimeError, "kl_div: Integral inputs not supported."), inputs=(i,))
        for i in (0, 1)
    ),
)


def _nll_errors(make, fn="nll_loss"):
    x, w = make((3, 4)), make((4,))
    t = np.array([0, 1, 2])
    yield E(S((x, t[:2])), ValueError, r"Expected input batch_size \(3\) to match target batch_size \(2\)\.")  # fmt: skip
    yield E(S((x, np.array([0, 5, 1]))), IndexError, "Target 5 is out of bounds.")
    yield E(S((x, np.array([0, -1, 1]))), IndexError, "Target -1 is out of bounds.")
    yield E(S((x, t[:, None])), RuntimeError, "0D or 1D target tensor expected, multi-target not supported")  # fmt: skip
    yield E(S((x, t, w[:3])), RuntimeError, r"weight tensor should be defined either for all 4 classes or no classes but got weight tensor of shape: \[3\]")  # fmt: skip
    yield E(S((x, t), {"reduction": "foo"}), ValueError, "foo is not a valid value for reduction")
    yield E(S((make((2, 3, 4)), np.zeros((2, 5), np.int64))), RuntimeError, r"Expected target size \[2, 4\], got \[2, 5\]")  # fmt: skip
    yield E(S((make((2, 3, 2, 2)), np.zeros((2, 2), np.int64))), RuntimeError, "only batches of spatial targets supported")  # fmt: skip
    if fn == "nll_loss":
        yield E(S((x, t.astype(np.float32))), RuntimeError, "expected target dtype to be Long or Byte, but got Float")  # fmt: skip
        yield E(S((make(()), np.array(0))), ValueError, r"Expected 1 or more dimensions \(got 0\)")


@composite(
    samples=_nll_samples, error_samples=_nll_errors, api="nn.functional.nll_loss",
    grad_args=(0,),  # PyTorch's nll_loss is not differentiable in its weight
    no_kernel=NoKernel("bic", "nll_loss_out_frame", inputs=(0,)),
)  # fmt: skip
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
    yield S((make((2, 3, 4)), _with_ignored(make.index((2, 4), 3), 1)), {"ignore_index": 1, "label_smoothing": 0.1, "reduction": "none"})  # fmt: skip
    yield S((make((3, 4)), _norm_probs(make, (3, 4))), name="probabilities")
    yield S((make((2, 4, 3)), _norm_probs(make, (2, 4, 3), 1), w), {"label_smoothing": 0.3, "reduction": "sum"})  # fmt: skip
    yield S((make((4,)), make.index((), 4)), {"label_smoothing": 0.1}, name="unbatched")
    yield S((make((0, 4)), make.index(0, 4)), {"reduction": "sum"}, name="empty batch")


def _ce_errors(make):
    yield from _nll_errors(make, "cross_entropy")
    x = make((3, 4))
    yield E(S((x, _norm_probs(make, (3, 4))), {"label_smoothing": 1.5}), RuntimeError, "label_smoothing must be between 0.0 and 1.0. Got: 1.5")  # fmt: skip
    yield E(S((x, make.index((3, 4), 4))), RuntimeError, "Expected floating point type for target with class probabilities, got Long")  # fmt: skip
    yield E(S((x, _norm_probs(make, (3, 4))), {"ignore_index": 1}), RuntimeError, "ignore_index is not supported for floating point target")  # fmt: skip
    yield E(S((x, _norm_probs(make, (3, 4)), make((3,)))), RuntimeError, r"cross_entropy: weight tensor should be defined either for all 4 classes or no classes but got weight tensor of shape: \[3\]")  # fmt: skip


@composite(
    samples=_ce_samples, error_samples=_ce_errors, api="nn.functional.cross_entropy",
    grad_args=(0, 1),  # not the weight: PyTorch's nll_loss is not differentiable in it
)  # fmt: skip
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
    cdim = 0 if input.dim() == 1 else 1
    if tuple(input.shape) == tuple(target.shape):
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
    if input.dim() == 1:
        logp, target = _unbatched(logp, target)
    if label_smoothing > 0:
        out = _ce_smoothed(logp, target, weight, ignore_index, reduction, label_smoothing)
    else:
        out = _nll(logp, target, weight, ignore_index, reduction)
    return out.reshape(()) if input.dim() == 1 and reduction == "none" else out


# ------------------------------------------------------------------ regression losses
_INVALID_MODE = "Invalid reduction mode: {}. Expected one of 'none', 'mean', 'sum'."


def _regression(
    elem: Callable, input, target, reduction, weight=None, weighted_mean=True, promote=False
):
    """``elem(input - target)`` broadcast, optionally weighted, then reduced. With a weight,
    'mean' divides by the weight's sum (``weighted_mean``) or by the element count.
    ``promote``: a bool operand takes the common dtype first (PyTorch's kernel computes in
    it, where ``input - target`` would refuse the bool)."""
    _size_warning(input, target)
    x, y = broadcast_tensors(input, target)
    if promote and x.dtype != y.dtype and dt.bool_ in (x.dtype, y.dtype):
        common = dt.result_type((x.dtype, x.dim()), (y.dtype, y.dim()))
        x, y = x.to(common), y.to(common)
    loss = elem(x - y)
    if weight is None:
        return _reduce(loss, reduction)
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "mean" and weighted_mean:
        return loss.sum() / weight.sum()
    return _reduce(loss, reduction, _INVALID_MODE)


def _pair(make, shape=(2, 3), low=-2.0, high=2.0):
    return make(shape, low, high), make(shape, low, high)


def _regression_samples(weighted: bool = False, **kw):
    """Samples of a loss of (input, target): every reduction, a broadcast target, an empty
    batch, a transposed input, and ``kw`` (option -> values) one at a time."""

    def samples(make):
        x, y = _pair(make)
        yield S((x, y))
        yield S((x, y), {"reduction": "sum"})
        yield S((make((3, 2)).T, y), {"reduction": "none"})
        yield S((make((0, 3)), make((0, 3))), {"reduction": "sum"}, name="empty batch")
        yield S((x, make((3,))), {"reduction": "none"}, name="broadcast target")  # warns
        for k, vals in kw.items():
            for v in vals:
                yield S((x, y), {k: v, "reduction": "none"})
        if weighted:
            w = make((2, 3), 0.5, 2.0)
            yield S((x, y), {"weight": w})
            yield S((x, y), {"weight": w, "reduction": "none"})

    return samples


def _regression_errors(weighted: bool = False, **kw):
    def errors(make):
        x = make((2, 3))
        yield E(S((x, make((3,))), {"reduction": "foo"}), ValueError, "foo is not a valid value for reduction")  # fmt: skip
        if weighted:
            yield E(S((x, x), {"weight": make((3,))}), ValueError, "Weights and input must have the same size.")  # fmt: skip
            yield E(S((x, x), {"weight": x, "reduction": "foo"}), ValueError, "Invalid reduction mode: foo. Expected one of 'none', 'mean', 'sum'.")  # fmt: skip
        for k, (v, msg) in kw.items():
            yield E(S((x, x), {k: v}), RuntimeError, msg)

    return errors


@composite(
    samples=_regression_samples(weighted=True), error_samples=_regression_errors(True),
    api="nn.functional.mse_loss", grad_args=(0, 1),
    no_kernel=NoKernel("bic", "mse_cpu", inputs=(0, 1)),
)  # fmt: skip
def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """The squared error ``(input - target) ** 2``."""
    reduction = _reduction(size_average, reduce, reduction, check=weight is None)
    return _regression(lambda d: d * d, input, target, reduction, weight, promote=True)


@composite(
    samples=_regression_samples(weighted=True), error_samples=_regression_errors(True),
    api="nn.functional.l1_loss", grad_args=(0, 1),
)  # fmt: skip
def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """The absolute error ``|input - target|``."""
    reduction = _reduction(size_average, reduce, reduction, check=weight is None)
    return _regression(lambda d: d.abs(), input, target, reduction, weight)


def _smooth(z, beta: float, scale_linear: bool):
    """Quadratic below ``beta``, linear above (Huber: the quadratic unscaled, the linear
    part times beta; smooth L1: the quadratic divided by beta)."""
    if scale_linear:
        return where(z < beta, 0.5 * z * z, beta * (z - 0.5 * beta))
    return where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta)


@composite(
    samples=_regression_samples(beta=(0.5, 0.0)),
    error_samples=_regression_errors(beta=(-1.0, "smooth_l1_loss does not support negative values for beta.")),  # fmt: skip
    api="nn.functional.smooth_l1_loss", grad_args=(0, 1),
    no_kernel=NoKernel("bic", "smooth_l1_cpu", inputs=(0, 1)),
)  # fmt: skip
def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """``0.5 d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (L1 for beta=0)."""
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:
        return _regression(lambda d: d.abs(), input, target, reduction, promote=True)
    elem = lambda d: _smooth(d.abs(), beta, False)  # noqa: E731
    return _regression(elem, input, target, reduction, promote=True)


@composite(
    samples=_regression_samples(weighted=True, delta=(0.5, 2.0)),
    error_samples=_regression_errors(True, delta=(0.0, "huber_loss does not support non-positive values for delta.")),  # fmt: skip
    api="nn.functional.huber_loss", grad_args=(0, 1),
    no_kernel=NoKernel("bic", "huber_cpu", inputs=(0, 1), out=0),  # into input's dtype
)  # fmt: skip
def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """``0.5 d**2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``."""
    reduction = _reduction(None, None, reduction, check=weight is None)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    elem = lambda d: _smooth(d.abs(), delta, True)  # noqa: E731
    out = _regression(elem, input, target, reduction, weight, weighted_mean=False, promote=True)
    return out if out.dtype == input.dtype else out.to(input.dtype)


# ------------------------------------------------------------------ likelihood losses
def _bce_samples(make):
    x, y = make((2, 3), 0.05, 0.95), make((2, 3), 0.0, 1.0)
    yield S((x, y))
    yield S((x, y, make((2, 3), 0.5, 2.0)), {"reduction": "sum"})
    yield S((x, y, make((3,), 0.5, 2.0)), {"reduction": "none"}, name="broadcast weight")
    yield S((make((3, 2), 0.05, 0.95).T, y), {"reduction": "none"})
    yield S((make((0, 3), 0.05, 0.95), make((0, 3), 0.0, 1.0)), {"reduction": "sum"})


def _bce_errors(make):
    x = make((2, 3), 0.1, 0.9)
    yield E(S((x, make((3,), 0.1, 0.9))), ValueError, r"Using a target size \(torch.Size\(\[3\]\)\) that is different to the input size \(torch.Size\(\[2, 3\]\)\) is deprecated")  # fmt: skip
    yield E(S((x, x), {"reduction": "foo"}), ValueError, "foo is not a valid value for reduction")
    yield E(S((x + 1.0, x)), RuntimeError, "all elements of input should be between 0 and 1")


def _bce(xp, input, target):
    with np.errstate(divide="ignore"):
        lx, l1x = xp.maximum(xp.log(input), -100), xp.maximum(xp.log1p(-input), -100)
    return -(target * lx + (1 - target) * l1x)


# A primitive for PyTorch's gradient, finite where an input is exactly 0 or 1 (a saturated
# sigmoid), where the clamped logs' derivative is 0 / 0.
bce_pointwise = defop(
    "_bce_pointwise", _bce, nin=2, batch_rule=elementwise(), jvp=ELEMENTWISE, layout=follow_inputs,
    vjp=(
        lambda g, input, target: g * (input - target) / (input * (1 - input)).clamp_min(1e-12),
        lambda g, input: -g * input.logit(),
    ),
    samples=lambda make: [S((make((2, 3), 0.05, 0.95), make((2, 3), 0.0, 1.0)))],
    api="nn._loss.bce_pointwise.fn", test={"no_oracle": True},  # binary_cross_entropy's is
)  # fmt: skip


@composite(
    samples=_bce_samples, error_samples=_bce_errors, api="nn.functional.binary_cross_entropy",
    grad_args=(0, 1),  # PyTorch's binary_cross_entropy is not differentiable in its weight
)  # fmt: skip
def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``-(t log x + (1 - t) log(1 - x))`` for probabilities ``x``, each log clamped at -100."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({_tsize(target)}) that is different to the input size "
            f"({_tsize(input)}) is deprecated. Please ensure they have the same size."
        )
    if target.dtype != input.dtype:
        raise RuntimeError(
            f"Found dtype {target.dtype.scalar_name} but expected {input.dtype.scalar_name}"
        )
    if not input.dtype.is_floating_point:
        raise dt.not_implemented("binary_cross_entropy", input.dtype)
    v = concrete(input)
    if v is not None and ((v < 0) | (v > 1)).any():
        raise RuntimeError("all elements of input should be between 0 and 1")
    loss = bce_pointwise.fn(input, target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


_NEG_BOOL = (
    "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
    "invert a mask, use the `~` or `logical_not()` operator instead."
)


def _one_minus_into(target: Tensor, input: Tensor) -> None:
    """PyTorch's ``(1 - target).mul_(input)``: refused for a bool target (C++'s ``1 -``
    takes the bool's dtype), and where input's dtype can't be written into target's."""
    if target.dtype == dt.bool_:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
            "`^` or `logical_xor()` operator instead."
        )
    _into(target, input)


def _into(out: Tensor, *others) -> None:
    """PyTorch's in-place step into ``out``: a result type of a higher kind can't be cast
    to ``out``'s dtype."""
    d = dt.result_type((out.dtype, out.dim()), *((o.dtype, o.dim()) for o in others))
    if not dt.can_cast(d, out.dtype):
        raise RuntimeError(cast_error(d, out.dtype))


def _softplus_neg(x):
    """log(1 + exp(-x)), stable for any x (logaddexp's formulas are)."""
    return zeros_like(x).logaddexp(-x)


def _bcel_samples(make):
    x, y = make((2, 3), -3.0, 3.0), make((2, 3), 0.0, 1.0)
    yield S((x, y))
    yield S((x, y, make((2, 3), 0.5, 2.0)), {"reduction": "sum"})
    yield S((x, y, None, None, None, "none", make((3,), 0.5, 2.0)), name="pos_weight")
    yield S((x, y, make((3,), 0.5, 2.0), None, None, "mean", make((3,), 0.5, 2.0)))
    yield S((make((3, 2), -40.0, 40.0).T, y), {"reduction": "none"}, name="large logits")
    yield S((make((0, 3)), make((0, 3))), {"reduction": "sum"})


def _bcel_errors(make):
    x = make((2, 3))
    yield E(S((x, make((3,)))), ValueError, r"Target size \(torch.Size\(\[3\]\)\) must be the same as input size \(torch.Size\(\[2, 3\]\)\)")  # fmt: skip
    yield E(S((x, x), {"reduction": "foo"}), ValueError, "foo is not a valid value for reduction")


@composite(
    samples=_bcel_samples, error_samples=_bcel_errors,
    api="nn.functional.binary_cross_entropy_with_logits",
    grad_args=(0, 1),  # PyTorch's is not differentiable in weight and pos_weight
    no_kernel=NoKernel("bic", "log_sigmoid_cpu", inputs=(0,)),  # log_sigmoid(input) first
)  # fmt: skip
def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Binary cross entropy of ``sigmoid(input)``, computed from the logits stably:
    ``(1 - t) x + (1 + (pos_weight - 1) t) log(1 + exp(-x))``."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Target size ({_tsize(target)}) must be the same as input size ({_tsize(input)})"
        )
    _one_minus_into(target, input)
    sp = _softplus_neg(input)
    if pos_weight is not None:
        sp = sp * ((pos_weight - 1) * target + 1)
    loss = (1 - target) * input + sp
    if loss.dtype != target.dtype:  # PyTorch's result is in target's dtype
        loss = loss.to(target.dtype)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _kl_samples(make):
    x, p = make((2, 3), -2.0, 0.0), _norm_probs(make, (2, 3))
    yield S((x, p), {"reduction": "batchmean"})
    yield S((x, p), {"reduction": "sum"})
    yield S((x, p), {"reduction": "none"})
    yield S((x, np.log(p)), {"reduction": "batchmean", "log_target": True})
    yield S((make((3,), -2.0, 0.0), _norm_probs(make, (3,))), {"reduction": "batchmean"})
    yield S((make((0, 3)), make((0, 3), 0.1, 1.0)), {"reduction": "sum"})


@composite(
    samples=_kl_samples,
    error_samples=lambda make: [E(S((make((2, 3)), make((2, 3), 0.1, 1.0)), {"reduction": "foo"}), ValueError, "foo is not a valid value for reduction")],  # fmt: skip
    api="nn.functional.kl_div", grad_args=(0, 1),
    no_kernel=_KL_INTEGRAL,
)  # fmt: skip
def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """The pointwise KL divergence ``t (log t - input)`` of log-probabilities ``input``;
    'batchmean' divides the sum by the batch size."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.",
            stacklevel=2,
        )
    elif reduction != "batchmean":
        reduction = _reduction(None, None, reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = target.xlogy(target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    return _reduce(loss, reduction)


def _poisson_samples(make):
    x, y = make((2, 3), -1.0, 1.0), make((2, 3), 0.5, 3.0)
    yield S((x, y))
    yield S((x, y), {"full": True, "reduction": "sum"})
    yield S((make((2, 3), 0.5, 2.0), y), {"log_input": False, "reduction": "none"})
    yield S((make((2, 3), 0.5, 2.0), y, False, True, None, 1e-3), name="full, eps")
    yield S((make((0, 3)), make((0, 3), 0.5, 3.0)), {"reduction": "sum"})


@composite(
    samples=_poisson_samples,
    error_samples=lambda make: [E(S((make((2, 3)), make((2, 3))), {"reduction": "foo"}), ValueError, "foo is not a valid value for reduction")],  # fmt: skip
    api="nn.functional.poisson_nll_loss", grad_args=(0, 1),
)  # fmt: skip
def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: bool | None = None,
    eps: float = 1e-8,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The Poisson negative log likelihood of ``target`` with rate ``exp(input)``
    (``log_input``) or ``input``; ``full`` adds Stirling's term where the target exceeds 1."""
    reduction = _reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + where(target > 1, stirling, 0.0)
    return _reduce(loss, reduction)


def _gauss_samples(make):
    x, y = _pair(make)
    yield S((x, y, make((2, 3), 0.1, 2.0)))
    yield S((x, y, make((2,), 0.1, 2.0)), {"reduction": "sum"}, name="homoscedastic")
    yield S((x, y, make((2, 1), 0.1, 2.0)), {"full": True, "reduction": "none"})
    yield S((x, y, make((1, 3), 0.1, 2.0)), {"eps": 0.05})
    yield S((x, y, 0.7), name="float var")
    yield S((make((0, 3)), make((0, 3)), make((0, 3), 0.1, 2.0)), {"reduction": "sum"})


def _gauss_errors(make):
    x = make((2, 3))
    v = make((2, 3), 0.1, 1.0)
    yield E(S((x, x, make((3, 2), 0.1, 1.0))), ValueError, "var is of incorrect size")
    yield E(S((x, x, v - 2.0)), ValueError, "var has negative entry/entries")
    yield E(S((x, x, -1.0)), ValueError, "var has negative entry/entries")
    yield E(S((x, x, v), {"reduction": "foo"}), ValueError, "foo is not valid")


# PyTorch clamps var in place under no_grad: reverse mode passes the gradient as if the clamp
# were not there, forward mode (which no_grad does not stop) sees it. A primitive, so that
# every transform follows those rules.
clamp_passthrough = defop(
    "_clamp_passthrough", lambda xp, input, min: xp.maximum(input, xp.asarray(min, input.dtype)),
    nin=1, vjp=lambda g: g, jvp=lambda t, input, min: where(input < min, 0.0, t),
    batch_rule=elementwise(),
    samples=lambda make: [S((make((2, 3), 0.5, 2.0), 0.1)), S((make(()), -3.0))],
    api="nn._loss.clamp_passthrough.fn", test={"no_oracle": True},
)  # fmt: skip


@composite(
    samples=_gauss_samples, error_samples=_gauss_errors,
    api="nn.functional.gaussian_nll_loss", grad_args=(0, 1, 2),
)  # fmt: skip
def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """The Gaussian negative log likelihood ``0.5 (log var + (input - target)**2 / var)``;
    ``var`` is clamped at ``eps`` (the clamp passes gradients through, as in PyTorch)."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif (v := concrete(var)) is not None and (v < 0).any():
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (
            input.dim() == var.dim()
            and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1
        ):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    var = clamp_passthrough.fn(var, eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# ------------------------------------------------------------------ margin losses
def _signs(make, shape):
    """Targets of +1 and -1 in the sample dtype."""
    return np.where(make(shape) > 0, 1.0, -1.0).astype(make.dtype)


def _reduction_errors(*args):
    """An error sample with an invalid reduction for a loss of ``args``."""
    return [E(S(args, {"reduction": "foo"}), ValueError, "foo is not a valid value for reduction")]


def _soft_margin_samples(make):
    x, y = make((2, 3)), _signs(make, (2, 3))
    yield S((x, y))
    yield S((x, y), {"reduction": "sum"})
    yield S((make((3, 2)).T, y), {"reduction": "none"})
    yield S((make((0, 3)), make((0, 3))), {"reduction": "sum"})


@composite(
    samples=_soft_margin_samples,
    error_samples=lambda make: _reduction_errors(make((2, 3)), make((2, 3))),
    api="nn.functional.soft_margin_loss",
    grad_args=(0,),  # PyTorch's is not differentiable in the target
)  # fmt: skip
def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The two-class logistic loss ``log(1 + exp(-target * input))``."""
    reduction = _reduction(size_average, reduce, reduction)
    # PyTorch's neg(input).mul_(target).exp_().add_(1).log_(): in input's dtype
    if input.dtype == dt.bool_:
        raise RuntimeError(_NEG_BOOL)
    _into(input, target)
    if input.dtype.is_complex:
        return _reduce((1 + (-input * target).exp()).log(), reduction)
    if not input.dtype.is_floating_point:
        raise RuntimeError(cast_error(dt.get_default_dtype(), input.dtype))
    loss = _softplus_neg(input * target)
    return _reduce(loss if loss.dtype == input.dtype else loss.to(input.dtype), reduction)


def _mlsm_samples(make):
    x, y = make((2, 3)), make((2, 3), 0.0, 1.0)
    yield S((x, y))
    yield S((x, y, make((3,), 0.5, 2.0)), {"reduction": "sum"})
    yield S((x, y, make((2, 3), 0.5, 2.0)), {"reduction": "none"})
    yield S((make((3,)), make((3,), 0.0, 1.0)), name="unbatched")
    yield S((make((0, 3)), make((0, 3))), {"reduction": "sum"})


@composite(
    samples=_mlsm_samples,
    error_samples=lambda make: [E(S((make((2, 3)), make((2, 3))), {"reduction": "foo"}), ValueError, "foo is not valid")],  # fmt: skip
    api="nn.functional.multilabel_soft_margin_loss",
    no_kernel=NoKernel("bic", "log_sigmoid_cpu", inputs=(0,)),  # logsigmoid(input) first
)  # fmt: skip
def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The per-class logistic loss averaged over the classes (the last dim)."""
    reduction = _reduction(size_average, reduce, reduction, check=False)
    # -(t log sigmoid(x) + (1 - t) log sigmoid(-x)), with log sigmoid(x) = -softplus(-x)
    loss = (1 - target) * input + _softplus_neg(input)
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(-1) / input.shape[-1]
    return _reduce(loss, reduction, "{} is not valid")


def _mr_samples(make):
    x1, x2, y = make((3,)), make((3,)), _signs(make, (3,))
    yield S((x1, x2, y))
    yield S((x1, x2, y, 0.5), {"reduction": "sum"})
    yield S((make((2, 3)), make((2, 3)), _signs(make, (2, 3)), -0.3), {"reduction": "none"})
    yield S((make((0,)), make((0,)), make((0,))), {"reduction": "sum"})


def _mr_errors(make):
    yield from _reduction_errors(make((3,)), make((3,)), make((3,)))
    yield E(
        S((make((2, 3)), make((2, 3)), make((2,)))), RuntimeError,
        r"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
        r"input1: torch.Size\(\[2, 3\]\), input2: torch.Size\(\[2, 3\]\), target: torch.Size\(\[2\]\)",
    )  # fmt: skip


@composite(samples=_mr_samples, error_samples=_mr_errors, api="nn.functional.margin_ranking_loss")
def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``."""
    reduction = _reduction(size_average, reduce, reduction)
    if not input1.dim() == input2.dim() == target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {_tsize(input1)}, input2: {_tsize(input2)}, target: {_tsize(target)} "
        )
    diff = input1 - input2  # before -target, as PyTorch's
    return _reduce((-target * diff + margin).clamp_min(0), reduction)


def _hinge_samples(make):
    x, y = make((2, 3)), _signs(make, (2, 3))
    yield S((x, y))
    yield S((x, y, 0.5), {"reduction": "sum"})
    yield S((x, _signs(make, (3,)), 2.0), {"reduction": "none"}, name="broadcast target")
    yield S((make((0, 3)), make((0, 3))), {"reduction": "sum"})


@composite(
    samples=_hinge_samples,
    error_samples=lambda make: _reduction_errors(make((2, 3)), make((2, 3))),
    api="nn.functional.hinge_embedding_loss",
    grad_args=(0,),  # the target (+1 or -1) only selects a branch
)  # fmt: skip
def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``input`` where the target is 1, ``max(0, margin - input)`` where it is -1."""
    reduction = _reduction(size_average, reduce, reduction)
    zeros = zeros_like(input)
    # PyTorch's ``margin - input`` runs in input's dtype (an integral input stays integral)
    margin_ = margin if input.dtype.is_floating_point else full_like(input, margin)
    loss = where(target != 1, (margin_ - input).clamp_min(0), zeros)
    return _reduce(loss + where(target != -1, input, zeros), reduction)


def _cos_samples(make):
    y = np.array([1, -1, 1])
    yield S((make((3, 4)), make((3, 4)), y))
    yield S((make((3, 4)), make((3, 4)), _signs(make, (3,)), 0.2), {"reduction": "sum"})
    yield S((make((3, 4)), make((3, 4)), y, -0.5), {"reduction": "none"})
    yield S((make((4,)), make((4,)), np.array(-1)), name="unbatched")
    yield S((make((0, 4)), make((0, 4)), np.zeros(0, np.int64)), {"reduction": "sum"})


def _cos_errors(make):
    x = make((3, 4))
    yield from _reduction_errors(x, x, np.array([1, -1, 1]))
    yield E(S((x, x, np.ones((3, 1)))), RuntimeError, "0D or 1D target tensor expected, multi-target not supported")  # fmt: skip
    yield E(S((x[0], x[0], np.ones(1))), RuntimeError, r"1D target tensor expects 2D input tensors, but found inputs with sizes \[4\] and \[4\].")  # fmt: skip
    yield E(S((x, x, np.array(1.0))), RuntimeError, r"0D target tensor expects 1D input tensors, but found inputs with sizes \[3, 4\] and \[3, 4\].")  # fmt: skip


@composite(
    samples=_cos_samples, error_samples=_cos_errors, api="nn.functional.cosine_embedding_loss",
    grad_args=(0, 1),  # the target (+1 or -1) only selects a branch
)  # fmt: skip
def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``1 - cos(input1, input2)`` where the target is 1, ``max(0, cos - margin)`` where -1."""
    reduction = _reduction(size_average, reduce, reduction)
    d = target.dim()
    if d > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != d + 1 or input2.dim() != d + 1:
        raise RuntimeError(
            f"{d}D target tensor expects {d + 1}D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    eps = 1e-12  # PyTorch's EPSILON, added to each squared magnitude
    den = (((input1 * input1).sum(d) + eps) * ((input2 * input2).sum(d) + eps)).sqrt()
    cos = (input1 * input2).sum(d) / den
    loss = where(target == 1, 1 - cos, 0.0) + where(target == -1, (cos - margin).clamp_min(0), 0.0)
    return _reduce(loss, reduction)


def _triplets(make, shape=(3, 4)):
    return make(shape), make(shape), make(shape)


def _triplet_samples(make):
    a, p, n = _triplets(make)
    yield S((a, p, n))
    yield S((a, p, n, 0.5, 1), {"swap": True, "reduction": "sum"})
    yield S((a, p, n, 2.0, 3, 1e-3), {"reduction": "none"})
    yield S(_triplets(make, (4,)), {"swap": True}, name="unbatched")
    yield S(_triplets(make, (0, 4)), {"reduction": "sum"})


def _triplet_errors(make):
    a, p, n = _triplets(make)
    yield from _reduction_errors(a, p, n)
    yield E(S((a, p, n, 0.0)), ValueError, "margin must be greater than 0, got 0.0")
    yield E(S((a, p, n[0])), RuntimeError, "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: anchor 2D, positive 2D, and negative 1D inputs")  # fmt: skip


def _triplet_loss(anchor, positive, negative, dist: Callable, margin, swap, reduction):
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not a == p == n:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs"
        )
    d_pos, d_neg = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


@composite(
    samples=_triplet_samples, error_samples=_triplet_errors,
    api="nn.functional.triplet_margin_loss",
)  # fmt: skip
def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` for the p-norm distance
    (``swap``: the smaller of d(a, n) and d(p, n))."""
    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dist = lambda x1, x2: pairwise_distance(x1, x2, p, eps)  # noqa: E731
    return _triplet_loss(anchor, positive, negative, dist, margin, swap, reduction)


def _l1_distance(x1, x2):
    return (x1 - x2).abs().sum(-1)


def _twd_samples(make):
    a, p, n = _triplets(make)
    yield S((a, p, n))
    yield S((a, p, n), {"margin": 0.5, "swap": True, "reduction": "sum"})
    yield S((a, p, n), {"distance_function": _l1_distance, "margin": 2.0, "reduction": "none"})
    yield S(_triplets(make, (4,)), {"distance_function": _l1_distance, "swap": True})
    yield S(_triplets(make, (0, 4)), {"reduction": "sum"})


def _twd_errors(make):
    a, p, n = _triplets(make)
    yield from _reduction_errors(a, p, n)
    yield E(S((a, p, n), {"margin": -1.0}), ValueError, "margin must be greater than 0, got -1.0")
    yield E(S((a, p, n[0])), RuntimeError, "anchor 2D, positive 2D, and negative 1D inputs")


@composite(
    samples=_twd_samples, error_samples=_twd_errors,
    api="nn.functional.triplet_margin_with_distance_loss",
)  # fmt: skip
def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """The triplet margin loss for any ``distance_function`` (default: the 2-norm)."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dist = distance_function or pairwise_distance
    return _triplet_loss(anchor, positive, negative, dist, margin, swap, reduction)


def _long_target(target: Tensor) -> None:
    """The margin losses' kernels read int64 class indices only."""
    if target.dtype != dt.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype.scalar_name}")


def _check_margin_input(input: Tensor) -> None:
    n = input.dim()
    if not ((n == 2 and input.shape[1]) or (n == 1 and input.shape[0]) or n == 0):
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{list(input.shape)}"
        )


def _mm_samples(make):
    x = make((3, 4))
    yield S((x, np.array([0, 3, 1])))
    yield S((x, make.index(3, 4), 2, 0.5), {"reduction": "sum"})
    yield S((x, make.index(3, 4), 1, 1.5, make((4,), 0.5, 2.0)), {"reduction": "none"})
    yield S((x, make.index(3, 4), 2), {"weight": make((4,), 0.5, 2.0)})
    yield S((make((4,)), make.index((), 4)), {"reduction": "none"}, name="unbatched")
    # not 'sum': PyTorch (2.13, CPU) returns uninitialized memory for an empty float32 batch
    yield S((make((0, 4)), make.index(0, 4)), {"reduction": "none"})


def _mm_errors(make):
    x = make((3, 4))
    t = np.array([0, 3, 1])
    yield from _reduction_errors(x, t)
    yield E(S((x, t, 3)), ValueError, "only p == 1 and p == 2 supported")
    yield E(S((x, t), {"weight": make((2, 2))}), ValueError, "weight must be one-dimensional")
    yield E(S((x, t), {"weight": make((3,))}), RuntimeError, r"inconsistent weight size, expected 4 but got \[3\]")  # fmt: skip
    yield E(S((x, np.array([0, 4, 1]))), RuntimeError, "target out of range")
    yield E(S((x, t[:2])), RuntimeError, r"multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples \(batch size\). Expected target size \[3\], but got \[2\]. Input has shape \[3, 4\].")  # fmt: skip
    yield E(S((make((3, 2, 2)), t)), RuntimeError, r"Expected non-empty vector or matrix with optional 0-dim batch size, but got: \[3, 2, 2\]")  # fmt: skip


@composite(
    samples=_mm_samples, error_samples=_mm_errors, api="nn.functional.multi_margin_loss",
    grad_args=(0,),  # PyTorch's is not differentiable in its weight
    # PyTorch has no second derivative (multi_margin_loss_backward is not differentiable);
    # ours is the composite's, checked against finite differences in test_func_ops.
    test={"no_gradgrad": True},
    no_kernel=NoKernel("bic", "multi_margin_loss_cpu_kernel", inputs=(0,)),
)  # fmt: skip
def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-class hinge loss: ``max(0, margin - x[y] + x[i])**p`` over the classes
    ``i != y``, times ``weight[y]``, averaged over the classes."""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _check_margin_input(input)
    n, c = (input.shape[0], input.shape[1]) if input.dim() == 2 else (1, input.numel())
    if target.dim() > 1 or target.numel() != n:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{n}], but got "
            f"{list(target.shape)}. Input has shape {list(input.shape)}."
        )
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    _long_target(target)
    v = concrete(target)
    if v is not None and ((v < 0) | (v >= c)).any():
        raise RuntimeError("target out of range")
    x, t = input.reshape(n, c), target.reshape(n, 1)
    z = _positive_part(margin - x.gather(1, t) + x)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[t]
    loss = where(arange(c, device=t.device) != t, z, 0.0).sum(1) / c
    if input.dim() < 2 and reduction == "none":
        return loss.reshape(())
    return _reduce(loss, reduction)


def _positive_part(z: Tensor) -> Tensor:
    """z where z > 0, else 0: the margin kernels' test, which skips a NaN term."""
    return where(z > 0, z, 0.0)


def _mlm_target(make, n, c):
    """Label lists: each row's labels (distinct, some repeated after a -1) end at a -1."""
    t = np.stack([make.perm(c) for _ in range(n)])
    for row, k in zip(t, range(1, n + 1)):
        row[min(k, c - 1)] = -1
    return t


def _mlm_samples(make):
    x = make((3, 4))
    yield S((x, _mlm_target(make, 3, 4)))
    yield S((x, _mlm_target(make, 3, 4)), {"reduction": "sum"})
    yield S((x, _mlm_target(make, 3, 4)), {"reduction": "none"})
    yield S((x, np.array([[0, 0, 2, 1], [3, 2, 1, 0], [-1, 1, 2, 3]])), name="repeats, full, none")  # fmt: skip
    yield S((make((4,)), _mlm_target(make, 1, 4)[0]), {"reduction": "none"}, name="unbatched")
    # not 'sum': PyTorch (2.13, CPU) returns uninitialized memory for an empty float32 batch
    yield S((make((0, 4)), np.zeros((0, 4), np.int64)), {"reduction": "none"})


def _mlm_errors(make):
    x = make((3, 4))
    t = np.array([[0, 1, -1, 0]] * 3)
    yield from _reduction_errors(x, t)
    yield E(S((x, t + 4)), RuntimeError, "argument #2 'target' is out of range")
    yield E(S((x, t - 2)), RuntimeError, "argument #2 'target' is out of range")
    yield E(S((x, t[:, :3])), RuntimeError, r"inconsistent target size: \[3, 3\] for input of size: \[3, 4\]")  # fmt: skip
    yield E(S((make((3, 2, 2)), t)), RuntimeError, "Expected non-empty vector or matrix")


@composite(
    samples=_mlm_samples, error_samples=_mlm_errors, api="nn.functional.multilabel_margin_loss",
    # PyTorch has no second derivative (multilabel_margin_loss_backward is not differentiable);
    # ours is the composite's, checked against finite differences in test_func_ops.
    test={"no_gradgrad": True},
    no_kernel=NoKernel("bic", "multilabel_margin_loss_forward_out_frame", inputs=(0,)),
)  # fmt: skip
def multilabel_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-label hinge loss: ``max(0, 1 - (x[y_j] - x[i]))`` for each label ``y_j``
    (a row's labels end at its first -1) and each class ``i`` not among the labels, averaged
    over the classes."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_margin_input(input)
    n, c = (input.shape[0], input.shape[1]) if input.dim() == 2 else (1, input.numel())
    if input.dim() == 2:
        fits = tuple(target.shape) == (n, c)
    else:
        fits = target.dim() <= 1 and target.numel() == c
    if not fits:
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}"
        )
    _long_target(target)
    v = concrete(target)
    if v is not None and ((v < -1) | (v >= c)).any():
        raise RuntimeError("argument #2 'target' is out of range")
    x, t = input.reshape(n, c), target.reshape(n, c)
    labels = (t == -1).cumsum(-1) == 0  # the entries before the first -1
    safe = where(labels, t, 0)
    is_label = ((safe.unsqueeze(-1) == arange(c, device=safe.device)) & labels.unsqueeze(-1)).any(
        -2
    )
    z = _positive_part(1 - x.gather(1, safe).unsqueeze(-1) + x.unsqueeze(-2))
    pairs = labels.unsqueeze(-1) & is_label.logical_not().unsqueeze(-2)
    loss = where(pairs, z, 0.0).sum((-2, -1)) / c
    if input.dim() < 2 and reduction == "none":
        return loss.reshape(())
    return _reduce(loss, reduction)


# ------------------------------------------------------------------ ctc_loss
_CTC_FROM = " (while checking arguments for ctc_loss_allocate_outputs)"


def _ctc_lengths(lengths, name: str, n: int, device) -> tuple[Tensor, list | None]:
    """The lengths as an int64 tensor of n entries on ``device``, and their values where
    readable."""
    if isinstance(lengths, (list, tuple)):
        values = [int(v) for v in lengths]
        t = as_tensor(values, dtype=dt.int64, device=device)
    else:
        if lengths.dtype.is_floating_point or lengths.dtype.is_complex or lengths.dtype == dt.bool_:
            raise RuntimeError(f"{name} must be integral")
        t = lengths.reshape(-1).to(dt.int64, device=device)
        v = concrete(t)
        values = None if v is None else v.tolist()
    if t.numel() != n:
        raise RuntimeError(f"{name} must be of size batch_size")
    return t, values


def _check_ctc(targets, n: int, steps: int, il: list | None, tl: list | None) -> None:
    """PyTorch's checks of the lengths against the targets and the time steps."""
    if targets.dim() not in (1, 2):
        raise RuntimeError(
            f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional tensor for "
            f"argument #2 'targets'{_CTC_FROM}"
        )
    if tl is not None:
        for v in tl:
            if v < 0:
                raise RuntimeError(
                    f"Expected target_lengths to have value at least 0, but got value {v}{_CTC_FROM}"
                )
        want, got = (sum(tl), targets.shape[0]) if targets.dim() == 1 else (n, targets.shape[0])
        if got != want:
            raise RuntimeError(
                f"Expected tensor to have size {want} at dimension 0, but got size {got} for "
                f"argument #2 'targets'{_CTC_FROM}"
            )
        if targets.dim() == 2 and tl and targets.shape[1] < max(tl):
            raise RuntimeError(
                f"Expected tensor to have size at least {max(tl)} at dimension 1, but got size "
                f"{targets.shape[1]} for argument #2 'targets'{_CTC_FROM}"
            )
    for v in il or ():
        if v < 0:
            raise RuntimeError(
                f"Expected input_lengths to have value at least 0, but got value {v}{_CTC_FROM}"
            )
        if v > steps:
            raise RuntimeError(
                f"Expected input_lengths to have value at most {steps}, but got value {v}"
                f"{_CTC_FROM}"
            )


def _ctc_padded(targets, tl: Tensor, tl_values, blank: int) -> Tensor:
    """(N, S) labels, padded with the blank: concatenated targets are cut at their offsets
    (S is the longest target where the lengths are known, the whole length otherwise)."""
    if targets.dim() == 2:
        padded, s = targets, targets.shape[1]
    else:
        s = max(tl_values, default=0) if tl_values is not None else targets.shape[0]
        at = (tl.cumsum(0) - tl).unsqueeze(1) + arange(s, device=tl.device)
        padded = targets[at.clamp_max(max(targets.shape[0] - 1, 0))]
    return where(arange(s, device=tl.device) < tl.unsqueeze(1), padded.to(dt.int64), blank)


def _lse(xs) -> Tensor:
    """logsumexp over a sequence of equal-shaped tensors; -inf where all are -inf, with zero
    (not NaN) gradients there."""
    x = stack(xs)
    none = (x == -math.inf).all(0)
    return where(none, -math.inf, where(none, 0.0, x).logsumexp(0))


def _shift(x: Tensor, pad: Tensor, k: int) -> Tensor:
    """x moved k places right along dim 1, -inf coming in."""
    return cat((pad[:, :k], x), 1)[:, : x.shape[1]]


def _ctc_nll(lp, labels, il: Tensor, tl: Tensor, blank: int) -> Tensor:
    """-log p(labels | lp) per batch entry, by the forward (alpha) recursion over time in
    log space over the labels interleaved with blanks; vectorized over the batch."""
    steps, n = lp.shape[0], lp.shape[1]
    blanks = zeros_like(tl).unsqueeze(1) + blank
    ext = cat((stack((zeros_like(labels) + blank, labels), -1).reshape(n, -1), blanks), 1)
    width = ext.shape[1]
    lpe = lp.gather(2, ext.unsqueeze(0).expand(steps, n, width))  # (T, N, 2S + 1)
    # a label may follow the one two places back unless it is a blank or a repeat
    skip = (ext != blank) & (ext != _shift(ext, cat((blanks, blanks), 1), 2))
    pad = zeros_like(lpe[0, :, :2]) - math.inf
    alpha = where(arange(width) == 0, zeros_like(lpe[0]), -math.inf)  # before the first step
    live = il.unsqueeze(1)
    for t in range(steps):
        came = (alpha, _shift(alpha, pad, 1), where(skip, _shift(alpha, pad, 2), -math.inf))
        alpha = where(t < live, _lse(came) + lpe[t], alpha)
    end = (2 * tl).unsqueeze(1)
    last = alpha.gather(1, end).squeeze(1)
    before = where(tl > 0, alpha.gather(1, (end - 1).clamp_min(0)).squeeze(1), -math.inf)
    return -_lse((last, before))


def _log_probs(make, shape):
    x = make(shape)
    if not make.is_float:
        return x
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _ctc_samples(make):
    lp = _log_probs(make, (6, 2, 4))
    tg = make.index((2, 3), 3) + 1
    yield S((lp, tg, [6, 5], [3, 2]))
    yield S((lp, make.index((2, 3), 3), np.array([5, 6]), np.array([2, 3]), 3), {"reduction": "none"})  # fmt: skip
    yield S((lp, make.index(5, 3) + 1, [6, 4], [3, 2]), {"reduction": "sum"}, name="concatenated")
    yield S((_log_probs(make, (5, 4)), make.index(3, 3) + 1, np.array(5), np.array(3)), {"reduction": "none"}, name="unbatched")  # fmt: skip
    # the first needs 4 steps (a repeat takes a blank between), has 3: an infinite loss
    yield S((lp, np.array([[2, 2, 1], [1, 3, 0]]), [3, 6], [3, 0]), {"zero_infinity": True, "reduction": "none"})  # fmt: skip
    yield S((lp, tg, [0, 4], [0, 1]), {"reduction": "mean", "zero_infinity": True}, name="empty")


def _ctc_errors(make):
    lp, tg = _log_probs(make, (5, 2, 4)), np.array([[1, 2, 2], [3, 1, 0]])
    yield E(S((lp, tg, [5, 4], [3, 2]), {"reduction": "foo"}), ValueError, "foo is not a valid value for reduction")  # fmt: skip
    yield E(S((lp, tg, [5, 4], [3, 2], 4)), RuntimeError, "blank must be in label range")
    yield E(S((lp, tg, [5, 4, 3], [3, 2])), RuntimeError, "input_lengths must be of size batch_size")  # fmt: skip
    yield E(S((lp, tg, [5, 4], [3])), RuntimeError, "target_lengths must be of size batch_size")
    yield E(S((lp, tg, [6, 4], [3, 2])), RuntimeError, r"Expected input_lengths to have value at most 5, but got value 6 \(while checking arguments for ctc_loss_allocate_outputs\)")  # fmt: skip
    yield E(S((lp, tg, [5, 4], [4, 2])), RuntimeError, "Expected tensor to have size at least 4 at dimension 1, but got size 3 for argument #2 'targets'")  # fmt: skip
    yield E(S((lp, tg, [5, 4], [-1, 2])), RuntimeError, "Expected target_lengths to have value at least 0, but got value -1")  # fmt: skip
    yield E(S((lp, np.array([1, 2, 3, 1]), [5, 4], [3, 2])), RuntimeError, "Expected tensor to have size 5 at dimension 0, but got size 4 for argument #2 'targets'")  # fmt: skip
    yield E(S((lp, tg[:, :, None], [5, 4], [3, 2])), RuntimeError, "Expected 1 to 2 dimensions, but got 3-dimensional tensor for argument #2 'targets'")  # fmt: skip
    yield E(S((lp, tg, np.array([5.0, 4.0]), np.array([3, 2]))), RuntimeError, "input_lengths must be integral")  # fmt: skip


@composite(
    samples=_ctc_samples, error_samples=_ctc_errors, api="nn.functional.ctc_loss",
    # PyTorch's gradient is not the derivative: it adds exp(log_probs) (what the gradient
    # becomes after a log_softmax, where the term cancels). Ours is the derivative, so finite
    # differences decide; tests/test_nn_loss.py compares values, and gradients through a
    # log_softmax, with PyTorch.
    test={"no_oracle": True},
    no_kernel=NoKernel("bi", "ctc_loss_cpu", inputs=(0,)),
)  # fmt: skip
def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Tensor | list[int] | tuple[int, ...],
    target_lengths: Tensor | list[int] | tuple[int, ...],
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """The connectionist temporal classification loss: -log of the total probability of the
    alignments of ``targets`` to ``log_probs`` ((T, N, C) or unbatched (T, C)); 'mean'
    divides each loss by its target length before averaging over the batch."""
    reduction = _reduction(None, None, reduction)
    lp = log_probs if log_probs.dim() == 3 else log_probs.unsqueeze(1)
    steps, n, c = lp.shape
    if lp.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    il, il_values = _ctc_lengths(input_lengths, "input_lengths", n, lp.device)
    tl, tl_values = _ctc_lengths(target_lengths, "target_lengths", n, lp.device)
    _check_ctc(targets, n, steps, il_values, tl_values)
    nll = _ctc_nll(lp, _ctc_padded(targets, tl, tl_values, blank), il, tl, blank)
    if zero_infinity:
        nll = where(nll == math.inf, 0.0, nll)
    if reduction == "mean":
        return (nll / tl.clamp_min(1).to(nll.dtype)).mean()
    if reduction == "sum":
        return nll.sum()
    return nll if log_probs.dim() == 3 else nll.squeeze(0)


# ------------------------------------------------------------------ torch's top-level forms
def _aten_loss(fn: Callable, params: str) -> Callable:
    """``torch.<name>``: ``fn`` with ATen's positional parameters (space-separated
    ``params``, ``name=default`` for optional ones) and its integer ``reduction`` (0 none,
    1 mean, 2 sum; torch's binding defaults it to 0)."""
    names = [p.split("=")[0] for p in params.split()]
    defaults = {
        n: ast.literal_eval(d) for n, _, d in (p.partition("=") for p in params.split()) if d
    }

    def aten(*args, **kwargs):
        if len(args) > len(names):
            raise TypeError(f"{fn.__name__}() takes {len(names)} positional arguments")
        bound = {**defaults, **dict(zip(names, args)), **kwargs}
        missing = [n for n in names if n not in bound]
        if missing:
            raise TypeError(f"{fn.__name__}() missing {len(missing)} required positional "
                            f"argument: {', '.join(map(repr, missing))}")  # fmt: skip
        if "reduction" in bound:
            bound["reduction"] = ("none", "mean", "sum")[bound["reduction"]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # F's deprecation notes are not ATen's
            return fn(**bound)

    aten.__name__ = aten.__qualname__ = fn.__name__
    aten.__doc__ = f"``torch.{fn.__name__}({', '.join(params.split())})``, reduction an int."
    return aten


ATEN_LOSSES = {
    f.__name__: _aten_loss(f, params)
    for f, params in (
        (binary_cross_entropy_with_logits,
         "input target weight=None pos_weight=None reduction=0"),
        (cosine_embedding_loss, "input1 input2 target margin=0.0 reduction=0"),
        (ctc_loss, "log_probs targets input_lengths target_lengths blank=0 reduction=0 "
                   "zero_infinity=False"),
        (hinge_embedding_loss, "input target margin=1.0 reduction=0"),
        (kl_div, "input target reduction=0 log_target=False"),
        (margin_ranking_loss, "input1 input2 target margin=0.0 reduction=0"),
        (poisson_nll_loss, "input target log_input full eps reduction"),
        (triplet_margin_loss,
         "anchor positive negative margin=1.0 p=2 eps=1e-06 swap=False reduction=0"),
    )
}  # fmt: skip
