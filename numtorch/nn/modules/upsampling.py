"""Upsample, UpsamplingNearest2d and UpsamplingBilinear2d."""

from __future__ import annotations

from ..._core.tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _ratio_any_t, _size_any_t


class Upsample(Module):
    """F.interpolate with this layer's size or scale_factor, mode and align_corners."""

    def __init__(
        self,
        size: _size_any_t | None = None,
        scale_factor: _ratio_any_t | None = None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def __setstate__(self, state: dict) -> None:
        state.setdefault("recompute_scale_factor", True)
        super().__setstate__(state)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of an (N, C, H, W) input."""

    def __init__(
        self, size: _size_any_t | None = None, scale_factor: _ratio_any_t | None = None
    ) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling (align_corners=True) of an (N, C, H, W) input."""

    def __init__(
        self, size: _size_any_t | None = None, scale_factor: _ratio_any_t | None = None
    ) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
