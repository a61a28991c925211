"""What the loss functions share. Every loss is a composite of public ops ending in one
reduction helper, ``_reduce``; here too are the ``reduction`` argument (with the legacy
``size_average``/``reduce`` pair and their warnings), the target-size warning, PyTorch's cast
check of an in-place step, a stable ``log(1 + exp(-x))``, and helpers of the losses' samples.
"""

from __future__ import annotations

import warnings

from .._core import dtype as dt
from .._core.inplace import cast_error
from .._core.tensor import Tensor
from ..ops.creation import zeros_like

_REDUCTIONS = ("none", "mean", "sum")


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


def _pair(make, shape=(2, 3), low=-2.0, high=2.0):
    return make(shape, low, high), make(shape, low, high)


def _into(out: Tensor, *others) -> None:
    """PyTorch's in-place step into ``out``: a result type of a higher kind can't be cast
    to ``out``'s dtype."""
    d = dt.result_type((out.dtype, out.dim()), *((o.dtype, o.dim()) for o in others))
    if not dt.can_cast(d, out.dtype):
        raise RuntimeError(cast_error(d, out.dtype))


def _softplus_neg(x):
    """log(1 + exp(-x)), stable for any x (logaddexp's formulas are)."""
    return zeros_like(x).logaddexp(-x)
