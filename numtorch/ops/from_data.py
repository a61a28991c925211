"""Factories from Python data and buffers, and dtype queries: ``asarray``, ``frombuffer``,
``scalar_tensor``, the deprecated inclusive ``range``, and ``result_type``."""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .._core import dtype as dt
from .._core import scalars
from .._core.interpreter import factory
from .._core.messages import alloc_failed, check_alloc
from .._core.tensor import Tensor
from .creation import _finish, _no_complex32, as_tensor, require_grad, tensor

# ------------------------------------------------------------------ asarray
_ASARRAY_GRAD = (
    "torch.asarray: unspecified requires_grad now defaults to obj.requires_grad instead of "
    "False. Pass requires_grad=False explicitly to get the old behavior and silence this "
    "warning."
)


def _from_tensor(obj: Tensor, dtype, device, copy, requires_grad) -> Tensor:
    d = obj.dtype if dtype is None else dt.to_dtype(dtype)
    if copy is False and d != obj.dtype:
        raise ValueError(
            f"can't alias tensor with dtype '{obj.dtype.scalar_name}' into dtype '{d.scalar_name}'."
        )
    if requires_grad is None and obj.requires_grad:
        warnings.warn(_ASARRAY_GRAD, UserWarning, stacklevel=4)
    out = obj
    if d != obj.dtype or device is not None:
        out = obj.to(dtype=d, device=device)
    if copy:
        out = out.clone() if out is obj else out
        out = out.detach()
    if requires_grad is not None and out.requires_grad != requires_grad:
        out._set_requires_grad(requires_grad)
    return out


@factory
def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None) -> Tensor:
    """``obj`` as a tensor: a tensor or an array (shared unless ``copy`` or a conversion
    asks for new memory), a buffer, a scalar or a sequence (new memory; ``copy=False``
    refuses a sequence)."""
    if isinstance(obj, Tensor):
        return _from_tensor(obj, dtype, device, copy, requires_grad)
    if isinstance(obj, np.generic):
        obj = np.asarray(obj)
    if not isinstance(obj, np.ndarray):
        try:
            view = memoryview(obj)
        except TypeError:
            view = None
        if view is not None and dtype is not None:
            obj = np.frombuffer(view, dtype=dt.to_dtype(dtype).np)
        elif view is not None:
            obj = np.asarray(view)
    if isinstance(obj, np.ndarray):
        if copy:
            out = tensor(obj, dtype=dtype, device=device)
        else:
            out = as_tensor(obj, dtype=dtype, device=device)
            if copy is False and out.numpy(force=True) is not obj and out._data.base is None:
                raise ValueError(
                    f"can't alias NumPy array with dtype '{obj.dtype}' into dtype "
                    f"'{dt.to_dtype(dtype).scalar_name}'."
                )
    else:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        out = tensor(obj, dtype=dtype, device=device)
    return require_grad(out) if requires_grad else out


# ------------------------------------------------------------------ frombuffer
_NOT_WRITABLE = (
    "The given buffer is not writable, and PyTorch does not support non-writable tensors. This "
    "means you can write to the underlying (supposedly non-writable) buffer using the tensor. "
    "You may want to copy the buffer to protect its data or make it writable before converting "
    "it to a tensor. This type of warning will be suppressed for the rest of this program."
)
_warned_not_writable = [False]


@factory
def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False) -> Tensor:
    """A 1-d tensor over the bytes of ``buffer`` after ``offset`` (``count`` elements, or
    all), sharing its memory."""
    view = memoryview(buffer).cast("B")
    n = view.nbytes
    d = dt.to_dtype(dtype)
    size = d.np.itemsize
    if n <= 0 or count == 0:
        raise ValueError(f"both buffer length ({n}) and count ({count}) must not be 0")
    if offset < 0 or offset >= n:
        raise ValueError(
            f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
            f"({n} bytes) minus 1"
        )
    if count < 0:
        if (n - offset) % size:
            raise ValueError(
                f"buffer length ({n - offset} bytes) after offset ({offset} bytes) must be a "
                f"multiple of element size ({size})"
            )
        count = (n - offset) // size
    elif offset + count * size > n:
        raise ValueError(
            f"requested buffer length ({count} * {size} bytes) after offset ({offset} bytes) "
            f"must not be greater than actual buffer length ({n} bytes)"
        )
    if view.readonly and not _warned_not_writable[0]:
        _warned_not_writable[0] = True
        warnings.warn(_NOT_WRITABLE, UserWarning, stacklevel=3)
    arr = np.frombuffer(view, dtype=d.np, count=count, offset=offset)
    if view.readonly:
        arr = arr.view()
        arr.flags.writeable = False
    return _finish(arr, requires_grad)


# ------------------------------------------------------------------ scalar_tensor, range
@factory
def scalar_tensor(
    s, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False
) -> Tensor:
    """A 0-d tensor of ``s``, in the default float dtype unless ``dtype`` says."""
    if isinstance(s, Tensor):
        s = s.item()
    d = dt.get_default_dtype() if dtype is None else dt.to_dtype(dtype)
    if isinstance(s, complex) and not d.is_complex:
        raise RuntimeError(f"value cannot be converted to type {d.cpp_name} without overflow")
    if d is dt.complex32:
        scalars.check_complex32(s)
    return _finish(np.asarray(s).astype(d.np), requires_grad, device)


_RANGE_DEPRECATED = (
    "torch.range is deprecated and will be removed in a future release because its behavior "
    "is inconsistent with Python's range builtin. Instead, use torch.arange, which produces "
    "values in [start, end)."
)


@factory
def range(  # noqa: A001 (PyTorch's name)
    start=0,
    end=None,
    step=1,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
) -> Tensor:
    """Deprecated: ``start, start + step, ...`` up to and including ``end``."""
    warnings.warn(_RANGE_DEPRECATED, UserWarning, stacklevel=3)
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    _no_complex32(dtype, "range_cpu")
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    d = dt.get_default_dtype() if dtype is None else dt.to_dtype(dtype)
    n = int(math.floor((end - start) / step)) + 1
    check_alloc((n,), d.np.itemsize)
    try:
        if d.is_floating_point or d.is_complex:
            arr = start + step * np.arange(n, dtype=np.float64)
        else:
            arr = int(start) + int(step) * np.arange(n, dtype=np.int64)
    except MemoryError:
        raise RuntimeError(alloc_failed(n * d.np.itemsize)) from None
    res = _finish(arr.astype(d.np), requires_grad, device)
    if out is not None:
        from .._core.out import write_out

        return write_out(out, res)
    return res


# ------------------------------------------------------------------ result_type
def _operand(x):
    if isinstance(x, Tensor):
        return (x.dtype, x.dim())
    if isinstance(x, (bool, numbers.Number)):
        return x
    raise TypeError(
        "result_type() received an invalid combination of arguments - got "
        f"({type(x).__name__}), but expected one of:\n"
        " * (Tensor tensor, Tensor other)\n"
        " * (Tensor tensor, Number other)\n"
        " * (Number scalar, Tensor tensor)\n"
        " * (Number scalar1, Number scalar2)\n"
    )


def result_type(tensor1, tensor2):
    """The dtype PyTorch's type promotion gives an arithmetic op of the two operands
    (tensors or Python numbers)."""
    return dt.result_type(_operand(tensor1), _operand(tensor2))


__all__ = ["asarray", "frombuffer", "range", "result_type", "scalar_tensor"]
