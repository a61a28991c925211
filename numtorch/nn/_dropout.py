"""The dropout family beside ``dropout`` (numtorch/ops/random.py): channel-wise dropout
(dropout1d/2d/3d), alpha dropout and feature alpha dropout.

Each is written, as ``dropout`` is, with the random primitives (a Bernoulli mask from a
uniform draw) and ordinary ops, so vmap's randomness modes and autograd work through them.
"""

from __future__ import annotations

from .._core import dtype as dt
from .._core.tensor import Tensor
from ..ops.random import _bernoulli_draw, _check_dropout_p, _num, _real

# SELU's negative saturation value -scale * alpha, the value alpha dropout drops to.
_ALPHA = 1.7580993408473766


def _impl(input: Tensor, p: float, train: bool, inplace: bool, keep: int, alpha: bool):
    """PyTorch's dropout kernel. ``keep``: 0 draws one mask value per element, 2 one per
    (sample, channel) (the first two dims), 1 one per channel of an unbatched input (the
    first dim). ``alpha`` keeps the mean and variance by dropping to SELU's saturation value
    and rescaling."""
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        return input.mul_(0) if inplace else input * 0
    shape = tuple(input.shape)
    if keep:
        if len(shape) + 2 - keep < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = (*shape[:keep], *(1,) * (len(shape) - keep))
    d = input.dtype
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type {d.scalar_name}"
        )
    real = dt.from_np(_real(d.np))
    keep_mask = _bernoulli_draw(shape, 1 - p, real, None, input.device)
    if not alpha:
        noise = keep_mask / (1 - p)
        return input.mul_(noise) if inplace else input * noise
    a = 1.0 / ((_ALPHA * _ALPHA * p + 1) * (1 - p)) ** 0.5
    shift = (keep_mask - 1) * (_ALPHA * a) + _ALPHA * a * p
    noise = keep_mask * a
    return input.mul_(noise).add_(shift) if inplace else input * noise + shift


def _checked(p) -> None:
    _check_dropout_p(p, ValueError)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of an (N, C, L) or (C, L) input with probability p, scaling the
    rest by 1/(1-p)."""
    _checked(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note "
            "that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs)."
        )
    return _impl(input, p, training, inplace, 2 if input.dim() == 3 else 1, False)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels (dim 1) of an (N, C, H, W) input with probability p, scaling the
    rest by 1/(1-p). As in PyTorch, a 3-D input is taken as (N, C, L)."""
    _checked(p)
    return _impl(input, p, training, inplace, 2, False)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of an (N, C, D, H, W) or (C, D, H, W) input with probability p,
    scaling the rest by 1/(1-p)."""
    _checked(p)
    return _impl(input, p, training, inplace, 2 if input.dim() == 5 else 1, False)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Dropout for SELU networks: dropped elements take SELU's saturation value, and an
    affine map keeps the mean and variance."""
    _checked(p)
    return _impl(input, p, training, inplace, 0, True)


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
):
    """Alpha dropout of whole channels (dim 1)."""
    _checked(p)
    return _impl(input, p, training, inplace, 2, True)


__all__ = ["alpha_dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout"]


def _torch_form(name: str, keep: int, alpha: bool, inplace: bool):
    """torch.<name>(input, p, train): the ATen form (RuntimeError for a bad p)."""

    def fn(input: Tensor, p: float, train: bool) -> Tensor:
        _check_dropout_p(p, RuntimeError, _num)
        return _impl(input, p, train, inplace, keep, alpha)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}(input, p, train)``."
    return fn


alpha_dropout_ = _torch_form("alpha_dropout_", 0, True, True)
feature_alpha_dropout_ = _torch_form("feature_alpha_dropout_", 2, True, True)
feature_dropout = _torch_form("feature_dropout", 2, False, False)
feature_dropout_ = _torch_form("feature_dropout_", 2, False, True)
