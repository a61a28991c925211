"""The dropout layers: random in training mode, the identity in evaluation mode."""

from __future__ import annotations

from collections.abc import Callable

from ..._core.tensor import Tensor
from .. import functional as F
from .module import Module


class _DropoutNd(Module):
    """A dropout layer: ``_fn(input, p, training, inplace)``, where ``_takes_inplace``."""

    _fn: Callable
    _takes_inplace: bool = True

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        if self._takes_inplace:
            return self._fn(input, self.p, self.training, self.inplace)
        return self._fn(input, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zeroes each element with probability ``p`` in training, scaling the others by
    1 / (1 - p)."""

    _fn = staticmethod(F.dropout)


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of a (N, C, L) or (C, L) input with probability ``p`` in
    training, scaling the others by 1 / (1 - p)."""

    _fn = staticmethod(F.dropout1d)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels of a (N, C, H, W) or (C, H, W) input with probability ``p``
    in training, scaling the others by 1 / (1 - p)."""

    _fn = staticmethod(F.dropout2d)


class Dropout3d(_DropoutNd):
    """Zeroes whole channels of a (N, C, D, H, W) or (C, D, H, W) input with probability
    ``p`` in training, scaling the others by 1 / (1 - p)."""

    _fn = staticmethod(F.dropout3d)


class AlphaDropout(_DropoutNd):
    """Dropout that keeps a SELU network's zero mean and unit variance: dropped elements
    take SELU's negative saturation value, then an affine map restores the moments
    (``inplace`` is ignored, as in PyTorch)."""

    _fn = staticmethod(F.alpha_dropout)
    _takes_inplace = False


class FeatureAlphaDropout(_DropoutNd):
    """AlphaDropout of whole channels (``inplace`` is ignored, as in PyTorch)."""

    _fn = staticmethod(F.feature_alpha_dropout)
    _takes_inplace = False
