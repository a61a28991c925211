"""LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm and CrossMapLRN2d."""

from __future__ import annotations

import numbers
from collections.abc import Sequence

from ..._core.tensor import Tensor
from ...ops.creation import arange, empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

_shape_t = int | Sequence[int]


def _affine_parameters(
    module: Module, shape: tuple, affine: bool, bias: bool, device, dtype
) -> None:
    """Register ``weight`` (and ``bias`` when asked) of the given shape, or None for both."""
    make = lambda: Parameter(empty(shape, device=device, dtype=dtype))  # noqa: E731
    module.register_parameter("weight", make() if affine else None)
    module.register_parameter("bias", make() if affine and bias else None)


def _reset_affine(module: Module) -> None:
    """weight = 1, bias = 0 (where present)."""
    if module.weight is not None:
        init.ones_(module.weight)
    if getattr(module, "bias", None) is not None:
        init.zeros_(module.bias)


def _as_shape(normalized_shape: _shape_t) -> tuple:
    if isinstance(normalized_shape, numbers.Integral):
        return (normalized_shape,)
    return tuple(normalized_shape)


class _AffineNorm(Module):
    """A norm whose ``weight`` starts at 1 and ``bias`` (where it has one) at 0."""

    def reset_parameters(self) -> None:
        _reset_affine(self)


class _LRN(Module):
    """The settings of the two local response norms."""

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size: int, alpha: float, beta: float, k: float) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class LocalResponseNorm(_LRN):
    """Normalize each value by the energy of a window of ``size`` neighbouring channels
    (``F.local_response_norm``)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__(size, alpha, beta, k)

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)


class CrossMapLRN2d(_LRN):
    """Lua Torch's cross-channel LRN of a 4-D input, with PyTorch's outputs: channel c is
    divided by (k + alpha / size * sum of squares over channels c - h .. c + h, h =
    (size - 1) // 2, plus channel 0 once c > h) ** beta. (PyTorch's running window never
    drops channel 0; its hand-written backward is not the derivative of that forward, so the
    gradient here is the true one.)"""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__(size, alpha, beta, k)

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        c, h = input.shape[1], int((self.size - 1) / 2)
        # window[c, j] = 1 where channel j counts for channel c: one matmul sums them all.
        i = arange(c, device=input.device)
        off = (i.unsqueeze(0) - i.unsqueeze(1)).abs()
        window = (off <= h) | ((i.unsqueeze(0) == 0) & (i.unsqueeze(1) > h))
        sq = (input * input).movedim(1, -1)
        scale = (sq @ window.to(input.dtype).T).movedim(-1, 1) * (self.alpha / self.size) + self.k
        return input * scale.pow(-self.beta)


class LayerNorm(_AffineNorm):
    """Normalize over the trailing ``normalized_shape`` dims, then an elementwise affine map
    (``F.layer_norm``)."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(
        self,
        normalized_shape: _shape_t,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, device, dtype)
        self.reset_parameters()

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )


class GroupNorm(_AffineNorm):
    """Normalize each group of ``num_channels // num_groups`` channels of each sample, then a
    per-channel affine map (``F.group_norm``)."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, (num_channels,), affine, bias, device, dtype)
        self.reset_parameters()

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class RMSNorm(_AffineNorm):
    """Divide by the root mean square over the trailing ``normalized_shape`` dims, then an
    elementwise scale (``F.rms_norm``; eps=None: the dtype's machine epsilon)."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(
        self,
        normalized_shape: _shape_t,
        eps: float | None = None,
        elementwise_affine: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        shape, like = self.normalized_shape, {"device": device, "dtype": dtype}
        weight = Parameter(empty(shape, **like)) if elementwise_affine else None
        self.register_parameter("weight", weight)
        self.reset_parameters()

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )
