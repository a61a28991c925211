"""Conv1d/2d/3d, ConvTranspose1d/2d/3d and their lazy forms."""

from __future__ import annotations

from typing import Any, Literal

from ..._core.tensor import Tensor
from .. import functional as F
from .lazy import LazyModuleMixin, _lazy_weight_and_bias, _materialize_weight_and_bias
from .module import Module
from .utils import (
    _DeviceLike,
    _DTypeLike,
    _fan_in_uniform_,
    _ntuple,
    _per_dim,
    _reverse_repeat_tuple,
    _size_any_t,
    _weight_and_bias,
)

_PaddingMode = Literal["zeros", "reflect", "replicate", "circular"]


class _ConvNd(Module):
    """What every convolution layer holds: the settings, the weight of shape (out_channels,
    in_channels / groups, *kernel_size) ((in_channels, out_channels / groups, *kernel_size)
    when transposed) and the bias."""

    _nd: int  # spatial dims, set by each public class

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: tuple[int, ...],
        stride: tuple[int, ...],
        padding: str | tuple[int, ...],
        dilation: tuple[int, ...],
        transposed: bool,
        output_padding: tuple[int, ...],
        groups: int,
        bias: bool,
        padding_mode: _PaddingMode,
        device: _DeviceLike = None,
        dtype: _DTypeLike = None,
    ) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}"
                )
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(
                f"padding_mode must be one of {valid_padding_modes}, but got "
                f"padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's argument for the non-'zeros' padding modes: last dim first, (left, right)
        if padding == "valid":
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
        elif padding == "same":
            pads = []
            for d, k in zip(reversed(dilation), reversed(kernel_size)):
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
            self._reversed_padding_repeated_twice = pads
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(padding, 2)
        _weight_and_bias(self, self._weight_shape(), out_channels, bias, device, dtype)
        self.reset_parameters()

    def _weight_shape(self) -> tuple[int, ...]:
        per_group = (self.in_channels, self.out_channels // self.groups)
        if not self.transposed:
            per_group = (self.out_channels, self.in_channels // self.groups)
        return (*per_group, *self.kernel_size)

    def reset_parameters(self) -> None:
        """weight and bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = weight.size(1) *
        prod(kernel_size)."""
        _fan_in_uniform_(self.weight, self.bias)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    """Conv{1,2,3}d: cross-correlation of an (N, C_in, *spatial) or (C_in, *spatial) input
    with the weight."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: _size_any_t,
        stride: _size_any_t = 1,
        padding: str | _size_any_t = 0,
        dilation: _size_any_t = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: _PaddingMode = "zeros",
        device: _DeviceLike = None,
        dtype: _DTypeLike = None,
    ) -> None:
        tup = _ntuple(self._nd)
        super().__init__(
            in_channels,
            out_channels,
            tup(kernel_size),
            tup(stride),
            padding if isinstance(padding, str) else tup(padding),
            tup(dilation),
            False,
            tup(0),
            groups,
            bias,
            padding_mode,
            device=device,
            dtype=dtype,
        )

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        conv = (F.conv1d, F.conv2d, F.conv3d)[self._nd - 1]
        if self.padding_mode != "zeros":
            input = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(
                input, weight, bias, self.stride, (0,) * self._nd, self.dilation, self.groups
            )
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


Conv1d, Conv2d, Conv3d = _per_dim(
    _Conv,
    "Conv",
    "{nd}D convolution over an (N, C_in, {dims}) or (C_in, {dims}) input.",
    __name__,
)


class _ConvTransposeNd(_ConvNd):
    """Transposed convolutions: the output padding from ``output_size``."""

    def _output_padding(
        self,
        input: Tensor,
        output_size: list[int] | None,
        stride: list[int],
        padding: list[int],
        kernel_size: list[int],
        num_spatial_dims: int,
        dilation: list[int] | None = None,
    ) -> list[int]:
        """The output padding that makes the output spatial size ``output_size`` (with or
        without its batch and channel dims), or self.output_padding without one."""
        if output_size is None:
            return _ntuple(1)(self.output_padding)
        non_spatial = 2 if input.dim() == num_spatial_dims + 2 else 1
        if len(output_size) == non_spatial + num_spatial_dims:
            output_size = output_size[non_spatial:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(
                f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must "
                f"have {num_spatial_dims} or {non_spatial + num_spatial_dims} elements (got "
                f"{len(output_size)})"
            )
        min_sizes = [
            (input.size(d + non_spatial) - 1) * stride[d]
            - 2 * padding[d]
            + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1)
            + 1
            for d in range(num_spatial_dims)
        ]
        max_sizes = [m + s - 1 for m, s in zip(min_sizes, stride)]
        for size, lo, hi in zip(output_size, min_sizes, max_sizes):
            if size < lo or size > hi:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from "
                    f"{min_sizes} to {max_sizes} (for an input of {input.size()[2:]})"
                )
        return [output_size[d] - min_sizes[d] for d in range(num_spatial_dims)]


class _ConvTranspose(_ConvTransposeNd):
    """ConvTranspose{1,2,3}d: the gradient of Conv{1,2,3}d with respect to its input."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: _size_any_t,
        stride: _size_any_t = 1,
        padding: _size_any_t = 0,
        output_padding: _size_any_t = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: _size_any_t = 1,
        padding_mode: _PaddingMode = "zeros",
        device: _DeviceLike = None,
        dtype: _DTypeLike = None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(
                f'Only "zeros" padding mode is supported for {self.__class__.__name__}'
            )
        tup = _ntuple(self._nd)
        super().__init__(
            in_channels,
            out_channels,
            tup(kernel_size),
            tup(stride),
            tup(padding),
            tup(dilation),
            True,
            tup(output_padding),
            groups,
            bias,
            padding_mode,
            device=device,
            dtype=dtype,
        )

    def forward(self, input: Tensor, output_size: list[int] | None = None) -> Tensor:
        if self.padding_mode != "zeros":
            raise ValueError(f"Only `zeros` padding mode is supported for ConvTranspose{self._nd}d")
        output_padding = self._output_padding(
            input,
            output_size,
            self.stride,
            self.padding,
            self.kernel_size,
            self._nd,
            self.dilation,
        )
        conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self._nd - 1]
        return conv(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            output_padding,
            self.groups,
            self.dilation,
        )


ConvTranspose1d, ConvTranspose2d, ConvTranspose3d = _per_dim(
    _ConvTranspose,
    "ConvTranspose",
    "{nd}D transposed convolution over an (N, C_in, {dims}) or (C_in, {dims}) input.",
    __name__,
)


# ------------------------------------------------------------------ lazy forms
class _LazyConvXdMixin(LazyModuleMixin):
    """in_channels from the first input's channel dim."""

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            _materialize_weight_and_bias(self, self._weight_shape(), self.out_channels)

    def _get_in_channels(self, input: Tensor) -> int:
        unbatched = self._get_num_spatial_dims() + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(
                f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                f"{self.__class__.__name__}, but got input of size: {input.shape}"
            )
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]

    def _get_num_spatial_dims(self) -> int:
        return self._nd

    def _lazy_params(
        self, out_channels: int, bias: bool, device: _DeviceLike, dtype: _DTypeLike
    ) -> None:
        self.out_channels = out_channels
        _lazy_weight_and_bias(self, bias, device, dtype)


class _LazyConv(_LazyConvXdMixin):
    def __init__(
        self,
        out_channels: int,
        kernel_size: _size_any_t,
        stride: _size_any_t = 1,
        padding: str | _size_any_t = 0,
        dilation: _size_any_t = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: _PaddingMode = "zeros",
        device: _DeviceLike = None,
        dtype: _DTypeLike = None,
    ) -> None:
        super().__init__(
            0,
            0,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            False,
            padding_mode,
            device=device,
            dtype=dtype,
        )
        self._lazy_params(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvXdMixin):
    def __init__(
        self,
        out_channels: int,
        kernel_size: _size_any_t,
        stride: _size_any_t = 1,
        padding: _size_any_t = 0,
        output_padding: _size_any_t = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: _size_any_t = 1,
        padding_mode: _PaddingMode = "zeros",
        device: _DeviceLike = None,
        dtype: _DTypeLike = None,
    ) -> None:
        super().__init__(
            0,
            0,
            kernel_size,
            stride,
            padding,
            output_padding,
            groups,
            False,
            dilation,
            padding_mode,
            device=device,
            dtype=dtype,
        )
        self._lazy_params(out_channels, bias, device, dtype)


def _lazy(base: type, eager: list[type]) -> list[type]:
    """The lazy forms of the 1 to 3d classes ``eager``: ``base`` mixed into each, which
    each becomes on its first call."""
    name = eager[0].__name__[:-2]
    return _per_dim(
        lambda nd: (base, eager[nd - 1]),
        f"Lazy{name}",
        f"{name}{{nd}}d whose in_channels is inferred from the first input.",
        __name__,
        cls_to_become=lambda nd: eager[nd - 1],
    )


LazyConv1d, LazyConv2d, LazyConv3d = _lazy(_LazyConv, [Conv1d, Conv2d, Conv3d])
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = _lazy(
    _LazyConvTranspose, [ConvTranspose1d, ConvTranspose2d, ConvTranspose3d]
)
