"""Pooling layers: max, average, power-average, adaptive max/average, fractional max and
max unpooling, each family generated over 1 to 3 spatial dims from one base."""

from __future__ import annotations

from ..._core.tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _fields_repr, _ntuple, _per_dim, _ratio_any_t, _single, _size_any_t

_MaybeIndices = Tensor | tuple[Tensor, Tensor]  # with return_indices: (output, indices)


def _family(
    base: type, name: str, fn: str, doc: str, nds: tuple[int, ...] = (1, 2, 3)
) -> list[type]:
    """The classes ``{name}{nd}d`` of ``base``, each with ``_fn`` = F.``fn`` of its nd."""
    fn_of = lambda nd: staticmethod(getattr(F, fn.format(nd)))
    return _per_dim(base, name, doc, __name__, nds, _fn=fn_of)


class _MaxPoolNd(Module):
    def __init__(
        self,
        kernel_size: _size_any_t,
        stride: _size_any_t | None = None,
        padding: _size_any_t = 0,
        dilation: _size_any_t = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> _MaybeIndices:
        return self._fn(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )

    def extra_repr(self) -> str:
        return _fields_repr(self, "kernel_size", "stride", "padding", "dilation", "ceil_mode")


MaxPool1d, MaxPool2d, MaxPool3d = _family(
    _MaxPoolNd,
    "MaxPool",
    "max_pool{}d",
    "Max pooling over the last {nd} dims (with indices if return_indices).",
)


class _MaxUnpoolNd(Module):
    def __init__(
        self, kernel_size: _size_any_t, stride: _size_any_t | None = None, padding: _size_any_t = 0
    ) -> None:
        super().__init__()
        tup = _ntuple(self._nd)
        self.kernel_size = tup(kernel_size)
        self.stride = tup(stride if stride is not None else kernel_size)
        self.padding = tup(padding)

    def forward(
        self, input: Tensor, indices: Tensor, output_size: list[int] | None = None
    ) -> Tensor:
        return self._fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return _fields_repr(self, "kernel_size", "stride", "padding")


MaxUnpool1d, MaxUnpool2d, MaxUnpool3d = _family(
    _MaxUnpoolNd,
    "MaxUnpool",
    "max_unpool{}d",
    "The partial inverse of MaxPool{nd}d: the values put back at their indices, zeros elsewhere.",
)


class _AvgPoolNd(Module):
    def __init__(
        self,
        kernel_size: _size_any_t,
        stride: _size_any_t | None,
        padding: _size_any_t,
        ceil_mode: bool,
        count_include_pad: bool,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def extra_repr(self) -> str:
        return _fields_repr(self, "kernel_size", "stride", "padding")


class AvgPool1d(_AvgPoolNd):
    """Average pooling over the last dim."""

    def __init__(
        self,
        kernel_size: _size_any_t,
        stride: _size_any_t | None = None,
        padding: _size_any_t = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        stride = stride if stride is not None else kernel_size
        super().__init__(
            _single(kernel_size), _single(stride), _single(padding), ceil_mode, count_include_pad
        )

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
        )


class _AvgPool(_AvgPoolNd):
    def __init__(
        self,
        kernel_size: _size_any_t,
        stride: _size_any_t | None = None,
        padding: _size_any_t = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad)
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )


AvgPool2d, AvgPool3d = _family(
    _AvgPool, "AvgPool", "avg_pool{}d", "Average pooling over the last {nd} dims.", (2, 3)
)


class _FractionalMaxPoolNd(Module):
    def __init__(
        self,
        kernel_size: _size_any_t,
        output_size: _size_any_t | None = None,
        output_ratio: _ratio_any_t | None = None,
        return_indices: bool = False,
        _random_samples: Tensor | None = None,
    ) -> None:
        super().__init__()
        nd, tup = self._nd, _ntuple(self._nd)
        if isinstance(kernel_size, (tuple, list)):
            bad_kernel = not all(k > 0 for k in kernel_size)
        else:
            bad_kernel = isinstance(kernel_size, int) and kernel_size <= 0
        if nd == 3 and bad_kernel:  # PyTorch checks the 3d kernel only
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = tup(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = tup(output_size) if output_size is not None else None
        self.output_ratio = tup(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"FractionalMaxPool{nd}d requires specifying either an output size, or a "
                "pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio[:nd]):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> _MaybeIndices:
        return self._fn(
            input,
            self.kernel_size,
            self.output_size,
            self.output_ratio,
            self.return_indices,
            _random_samples=self._random_samples,
        )


FractionalMaxPool2d, FractionalMaxPool3d = _family(
    _FractionalMaxPoolNd,
    "FractionalMaxPool",
    "fractional_max_pool{}d",
    "Fractional max pooling over the last {nd} dims: pseudo-random pooling regions of the "
    "given kernel size.",
    (2, 3),
)


class _LPPoolNd(Module):
    def __init__(
        self,
        norm_type: float,
        kernel_size: _size_any_t,
        stride: _size_any_t | None = None,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return _fields_repr(self, "norm_type", "kernel_size", "stride", "ceil_mode")


LPPool1d, LPPool2d, LPPool3d = _family(
    _LPPoolNd,
    "LPPool",
    "lp_pool{}d",
    "Power-average pooling over the last {nd} dims: (sum x^p)^(1/p) over each window.",
)


class _AdaptiveMaxPoolNd(Module):
    def __init__(
        self, output_size: _size_any_t | tuple[int | None, ...], return_indices: bool = False
    ) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> _MaybeIndices:
        return self._fn(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d = _family(
    _AdaptiveMaxPoolNd,
    "AdaptiveMaxPool",
    "adaptive_max_pool{}d",
    "Max pooling over the last {nd} dims to the given output size.",
)


class _AdaptiveAvgPoolNd(Module):
    def __init__(self, output_size: _size_any_t | tuple[int | None, ...]) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d = _family(
    _AdaptiveAvgPoolNd,
    "AdaptiveAvgPool",
    "adaptive_avg_pool{}d",
    "Average pooling over the last {nd} dims to the given output size.",
)
