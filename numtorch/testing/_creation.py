"""``torch.testing.make_tensor`` over numtorch: a tensor of uniform random values in
PyTorch's range for its dtype (the values themselves are numtorch's own draws)."""

from __future__ import annotations

import collections.abc
import math
import warnings

import numtorch

__all__ = ["make_tensor"]


def _integer_dtypes() -> tuple:
    names = "uint8 int8 int16 int32 int64 uint16 uint32 uint64".split()
    return tuple(getattr(numtorch, n) for n in names if hasattr(numtorch, n))


def _float_dtypes() -> tuple:
    return (numtorch.float16, numtorch.bfloat16, numtorch.float32, numtorch.float64)


def _complex_dtypes() -> tuple:
    return (numtorch.complex32, numtorch.complex64, numtorch.complex128)


def _float8_dtypes() -> tuple:
    names = "float8_e4m3fn float8_e5m2 float8_e4m3fnuz float8_e5m2fnuz".split()
    return tuple(getattr(numtorch, n) for n in names if hasattr(numtorch, n))


def _bounds(low, high, *, dtype, lowest, highest, default_low, default_high, whole):
    """``[low, high)`` from the caller's bounds or the defaults, checked, then clamped to
    what ``dtype`` holds (rounded up to whole numbers for integer dtypes)."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
    if low == high and not whole:
        warnings.warn(
            "Passing `low==high` to `torch.testing.make_tensor` for floating or complex types "
            "is deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
            FutureWarning,
            stacklevel=3,
        )
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), "
            f"but {dtype} only supports [{lowest}, {highest})"
        )
    low = min(max(low, lowest), highest)
    high = min(max(high, lowest), highest)
    if whole:
        return math.ceil(low), math.ceil(high)
    return low, high


def _uniform(shape, dtype, low, high):
    """Uniform draws in [low, high) (halved then doubled where the span overflows)."""
    out = numtorch.empty(shape, dtype=dtype)
    if high - low >= numtorch.finfo(dtype).max:
        return out.uniform_(low / 2, high / 2).mul_(2)
    return out.uniform_(low, high)


def _draw(shape, dtype, low, high):
    if dtype is numtorch.bool:
        low, high = _bounds(
            low, high, dtype=dtype, lowest=0, highest=2, default_low=0, default_high=2, whole=True
        )
        return numtorch.randint(low, high, shape, dtype=dtype)
    if dtype in _integer_dtypes():
        info = numtorch.iinfo(dtype)
        # int64's top value cannot be an exclusive bound for randint: PyTorch stops one short
        highest = info.max + (0 if dtype is numtorch.int64 else 1)
        low, high = _bounds(
            low,
            high,
            dtype=dtype,
            lowest=info.min,
            highest=highest,
            default_low=-9,
            default_high=10,
            whole=True,
        )
        return numtorch.randint(low, high, shape, dtype=dtype)
    floating = dtype in _float_dtypes() or dtype in _float8_dtypes()
    if floating or dtype in _complex_dtypes():
        info = numtorch.finfo(dtype)
        low, high = _bounds(
            low,
            high,
            dtype=dtype,
            lowest=info.min,
            highest=info.max,
            default_low=-9,
            default_high=9,
            whole=False,
        )
        if dtype in _float8_dtypes():
            return _uniform(shape, numtorch.float32, low, high).to(dtype)
        if floating:
            return _uniform(shape, dtype, low, high)
        part = numtorch.float16 if dtype is numtorch.complex32 else info.dtype
        part = getattr(numtorch, part) if isinstance(part, str) else part
        real, imag = (_uniform(shape, part, low, high) for _ in range(2))
        return numtorch.complex(real, imag).to(dtype)
    raise TypeError(
        f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor()."
        " To request support, file an issue at: https://github.com/pytorch/pytorch/issues"
    )


def make_tensor(
    *shape,
    dtype,
    device,
    low=None,
    high=None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format=None,
):
    """A tensor of ``shape`` filled with values drawn uniformly from ``[low, high)``,
    as ``torch.testing.make_tensor``."""
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(
            "The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
            f"but got {noncontiguous=} and {memory_format=}"
        )
    whole = dtype is numtorch.bool or dtype in _integer_dtypes()
    if requires_grad and whole:
        raise ValueError(
            "`requires_grad=True` is not supported for boolean and integral dtypes, "
            f"but got {dtype=}"
        )
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    result = _draw(shape, dtype, low, high)
    result = result.to(device)
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if whole else numtorch.finfo(dtype).tiny
    if not whole and dtype not in _float8_dtypes():
        result.requires_grad = requires_grad
    return result
