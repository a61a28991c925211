"""Fold (columns to image) and Unfold (image to sliding-window columns)."""

from __future__ import annotations

from ..._core.tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _fields_repr, _size_any_t


class Fold(Module):
    """Sums sliding-window columns (N, C * prod(kernel_size), L) into an image of
    output_size."""

    def __init__(
        self,
        output_size: _size_any_t,
        kernel_size: _size_any_t,
        dilation: _size_any_t = 1,
        padding: _size_any_t = 0,
        stride: _size_any_t = 1,
    ) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(
            input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )

    def extra_repr(self) -> str:
        return _fields_repr(self, "output_size", "kernel_size", "dilation", "padding", "stride")


class Unfold(Module):
    """The sliding windows of an (N, C, H, W) image as columns (N, C * prod(kernel_size),
    L)."""

    def __init__(
        self,
        kernel_size: _size_any_t,
        dilation: _size_any_t = 1,
        padding: _size_any_t = 0,
        stride: _size_any_t = 1,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return _fields_repr(self, "kernel_size", "dilation", "padding", "stride")
