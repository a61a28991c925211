"""Padding layers: zero, constant, reflection, replication and circular, each over 1 to 3
spatial dims, generated from one base per mode."""

from __future__ import annotations

from ..._core.tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _ntuple, _per_dim, _size_any_t


class _PadNd(Module):
    """F.pad with this layer's mode; padding is an int or 2 * nd ints (left, right, top,
    bottom, front, back)."""

    _mode: str

    def __init__(self, padding: _size_any_t) -> None:
        super().__init__()
        self.padding = _ntuple(2 * self._nd)(padding)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in (self._nd + 1, self._nd + 2):
            raise ValueError(
                f"expected {self._nd + 1}D or {self._nd + 2}D input (got {input.dim()}D input)"
            )

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        return super().forward(input)


class _ConstantPadNd(_PadNd):
    _mode = "constant"

    def __init__(self, padding: _size_any_t, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


_DOC = "Pads the last {{nd}} dims of the input {}."

ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = _per_dim(
    _ReflectionPadNd, "ReflectionPad", _DOC.format("with its reflection"), __name__
)
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = _per_dim(
    _ReplicationPadNd, "ReplicationPad", _DOC.format("with copies of its edge"), __name__
)
CircularPad1d, CircularPad2d, CircularPad3d = _per_dim(
    _CircularPadNd, "CircularPad", _DOC.format("circularly (wrapping around)"), __name__
)
ConstantPad1d, ConstantPad2d, ConstantPad3d = _per_dim(
    _ConstantPadNd, "ConstantPad", _DOC.format("with a constant value"), __name__
)


class _ZeroPad:
    """ConstantPad with value 0."""

    def __init__(self, padding: _size_any_t) -> None:
        super().__init__(padding, 0.0)

    extra_repr = _PadNd.extra_repr


_CONSTANT_PADS = (ConstantPad1d, ConstantPad2d, ConstantPad3d)
ZeroPad1d, ZeroPad2d, ZeroPad3d = _per_dim(
    lambda nd: (_ZeroPad, _CONSTANT_PADS[nd - 1]), "ZeroPad", _DOC.format("with zeros"), __name__
)
