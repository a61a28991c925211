"""Identity, Linear, Bilinear and LazyLinear."""

from __future__ import annotations

import math
from typing import Any

from ..._core.tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import UninitializedParameter
from .lazy import LazyModuleMixin, _lazy_weight_and_bias, _materialize_weight_and_bias
from .module import Module
from .utils import _DeviceLike, _DTypeLike, _fan_in_uniform_, _weight_and_bias


class Identity(Module):
    """Returns its input; the constructor takes and ignores any arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """y = x W^T + b, W of shape (out_features, in_features)."""

    in_features: int
    out_features: int
    weight: Tensor

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: _DeviceLike = None,
        dtype: _DTypeLike = None,
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        _weight_and_bias(self, (out_features, in_features), out_features, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """W and b ~ U(-1/sqrt(in_features), 1/sqrt(in_features))."""
        _fan_in_uniform_(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class NonDynamicallyQuantizableLinear(Linear):
    """Linear under the name MultiheadAttention's out_proj has in PyTorch."""


class Bilinear(Module):
    """y = x1^T A x2 + b, A of shape (out_features, in1_features, in2_features)."""

    in1_features: int
    in2_features: int
    out_features: int
    weight: Tensor

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device: _DeviceLike = None,
        dtype: _DTypeLike = None,
    ) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        shape = (out_features, in1_features, in2_features)
        _weight_and_bias(self, shape, out_features, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """A and b ~ U(-1/sqrt(in1_features), 1/sqrt(in1_features))."""
        if self.in1_features <= 0:
            raise ValueError(
                f"in1_features must be > 0, but got (in1_features={self.in1_features})"
            )
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class LazyLinear(LazyModuleMixin, Linear):
    """Linear whose in_features is the last dim of the first input."""

    cls_to_become = Linear
    weight: UninitializedParameter
    bias: UninitializedParameter

    def __init__(
        self,
        out_features: int,
        bias: bool = True,
        device: _DeviceLike = None,
        dtype: _DTypeLike = None,
    ) -> None:
        super().__init__(0, 0, False)
        self.out_features = out_features
        _lazy_weight_and_bias(self, bias, device, dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            self.in_features = input.shape[-1]
            shape = (self.out_features, self.in_features)
            _materialize_weight_and_bias(self, shape, self.out_features)
        if self.in_features == 0:
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(
                    f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                    f"in_features from self.weight: {self.weight.shape[-1]}"
                )
            self.in_features = input.shape[-1]
