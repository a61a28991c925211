"""Factory functions: tensors from data, constant fills, ranges; the random generators."""

from __future__ import annotations

import math
import numbers
import warnings
from functools import partial

import numpy as np

from .._core import dtype as dt
from .._core import scalars
from .._core.device import backend, placement
from .._core.device import device as Device
from .._core.dispatch import dispatch
from .._core.interpreter import factory
from .._core.layout import preserve
from .._core.messages import alloc_failed, check_alloc
from .._core.meta import by_kernel
from .._core.methods import tensor_methods
from .._core.op import defop
from .._core.pyargs import as_number, parsed
from .._core.tensor import Size, Tensor, ZeroVersion, _make
from .._opdb.samples import S
from ._batching import rule_generator
from ._families import COMPLEX_TOO
from .generator import (  # noqa: F401 (re-exported: callers import the generators from here)
    Generator,
    _default,
    _generators,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    rng,
    seed,
    set_rng_state,
)


def _xp(device):
    """The array module of the device a factory places its result on."""
    device = placement(device)
    return np if device is None else backend(Device(device))


def _finish(arr, requires_grad: bool, device=None) -> Tensor:
    device = placement(device)
    if arr.dtype == dt.C32:
        dt.warn_complex32()  # (a factory's complex32 allocation)
    if device is not None and Device(device).type != "cpu" and type(arr) is np.ndarray:
        arr = backend(Device(device)).asarray(arr)
    t = _make(arr)
    return require_grad(t) if requires_grad else t


def require_grad(t: Tensor) -> Tensor:
    """A factory's ``requires_grad=True``."""
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    return t._set_requires_grad(True)


def _infer_np_dtype(data) -> np.dtype:
    """numtorch's dtype for Python data: floats get the default dtype."""
    a = np.asarray(data)
    k = a.dtype.kind
    if k == "f":
        return dt.get_default_dtype().np
    if k in "iu":
        return np.dtype(np.int64)
    if k == "c":
        return dt.default_complex().np
    if k == "b":
        return np.dtype(np.bool_)
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _from_nested(data):
    if isinstance(data, Tensor):
        return data.numpy(force=True)
    if isinstance(data, (list, tuple)):
        return [_from_nested(d) for d in data]
    return data


def _copy_like(a: np.ndarray, npd) -> np.ndarray:
    """A copy of an array laid out as PyTorch's ``tensor`` copies one (``empty_like``'s
    layout: a dense array's strides kept; negative strides give a contiguous copy)."""
    if a.flags.c_contiguous or any(s < 0 for s in a.strides):
        return np.array(a, dtype=npd, order="C")
    return preserve(np.array(a, dtype=npd, order="K"), (a,))


@factory
def tensor(
    data, *, dtype=None, device=None, requires_grad: bool = False, pin_memory=False
) -> Tensor:
    """A new tensor holding a copy of `data`."""
    if isinstance(data, Tensor):
        arr = _copy_like(data.numpy(force=True), None)
        if dtype is not None:
            arr = dt.cast(arr, dt.to_dtype(dtype).np)
        return _finish(arr, requires_grad, device)
    if isinstance(data, np.generic):
        data = np.asarray(data)
    if isinstance(data, np.ndarray):
        npd = dt.to_dtype(dtype).np if dtype is not None else data.dtype
        arr = _copy_like(data, npd) if npd not in dt.REDUCED_NP else dt.cast(data, npd)
    else:
        data = _from_nested(data)
        npd = dt.to_dtype(dtype).np if dtype is not None else _infer_np_dtype(data)
        if npd in dt.REDUCED_NP:  # (PyTorch converts Python numbers through float32)
            arr = dt.cast(np.array(data, dtype=dt.WIDE[npd]), npd)
        else:
            try:
                arr = np.array(data, dtype=npd)
            except OverflowError:
                arr = np.array(scalars.tensor_data(data, npd), dtype=npd)
    if arr.dtype not in dt._FROM_NP:
        raise TypeError(f"can't convert np.ndarray of type {arr.dtype}")
    return _finish(arr, requires_grad, device)


@factory
def as_tensor(data, dtype=None, device=None) -> Tensor:
    """A tensor sharing memory with `data` when possible."""
    if isinstance(data, Tensor):
        device = placement(device)
        return data.to(device=device, dtype=dtype)
    if isinstance(data, np.generic):
        data = np.asarray(data)
    if isinstance(data, np.ndarray) and (dtype is None or dt.to_dtype(dtype).np == data.dtype):
        return _finish(data, False, device)
    return tensor(data, dtype=dtype, device=device)


# PyTorch's profiler shows no aten op of their names (their copies and casts instead)
tensor.__wrapped__._aten_name = as_tensor.__wrapped__._aten_name = None


def from_numpy(arr: np.ndarray) -> Tensor:
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    if arr.dtype not in dt._FROM_NP:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{arr.dtype}. The only supported types "
            "are: float64, float32, float16, complex64, complex128, int64, int32, int16, "
            "int8, uint8, and bool."
        )
    return _make(arr)


def _size(size, name: str = "empty") -> tuple:
    """A shape from ``*size`` arguments (ints, or one sequence of ints)."""
    if len(size) == 1 and not isinstance(size[0], numbers.Integral):
        size = size[0]
        if isinstance(size, Tensor) and size.dim() == 0:
            size = (size,)
        elif not isinstance(size, (tuple, list)):
            raise TypeError(
                f"{name}(): argument 'size' (position 1) must be tuple of ints, not "
                f"{type(size).__name__}"
            )
    out = []
    for i, s in enumerate(size):
        if isinstance(s, Tensor) and s.dim() == 0 and not s.is_floating_point():
            s = int(s)
        if not isinstance(s, numbers.Integral):
            raise TypeError(
                f"{name}(): argument 'size' failed to unpack the object at pos {i + 1} with "
                f'error "type must be tuple of ints,but got {type(s).__name__}"'
            )
        if s < 0:
            if name == "zeros":  # PyTorch's zeros checks its sizes itself
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
        out.append(int(s))
    return tuple(out)


def given_size(sizes: tuple, size, name: str) -> tuple:
    """The shape of a ``*size`` function, given as positional sizes or as ``size=``."""
    if size is not None:
        if sizes:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        if not isinstance(size, (tuple, list, Tensor)):
            raise TypeError(
                f"{name}(): argument 'size' must be tuple of ints, not {type(size).__name__}"
            )
        return _size((size,), name)
    if not sizes:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    return _size(sizes, name)


def _dtype_or_default(dtype) -> np.dtype:
    return dt.to_dtype(dtype).np if dtype is not None else dt.get_default_dtype().np


def _allocate(make, shape: tuple, dtype: np.dtype):
    """``make()``, an array of ``shape`` and ``dtype``, failing as PyTorch's allocator does
    for a size too large."""
    check_alloc(shape, dtype.itemsize)
    try:
        return make()
    except MemoryError:
        raise RuntimeError(alloc_failed(math.prod(shape) * dtype.itemsize)) from None


def _full(xp, shape: tuple, value, dtype: np.dtype):
    if dtype in dt.REDUCED_NP:  # (PyTorch converts the number through float32)
        return _allocate(
            lambda: dt.cast(np.full(shape, value, dt.WIDE[dtype]), dtype), shape, dtype
        )
    if type(value) is int:  # (PyTorch's Scalar, then its checked conversion)
        value = scalars.scalar(value)
        if dtype.kind in "biu":
            value = scalars.checked(value, dtype)
    return _allocate(lambda: xp.full(shape, value, dtype=dtype), shape, dtype)


def _fill(name, value):
    def make(
        *sizes,
        size=None,
        out=None,
        dtype=None,
        layout=None,
        device=None,
        requires_grad=False,
        pin_memory=False,
    ):
        shape = given_size(sizes, size, name)
        arr = _full(_xp(device), shape, value, _dtype_or_default(dtype))
        return _finish(arr, requires_grad)

    make.__name__ = make.__qualname__ = name
    return factory(make)


zeros = _fill("zeros", 0)
ones = _fill("ones", 1)
empty = _fill("empty", 0)


@factory
def _efficientzerotensor(
    *sizes, size=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False
) -> Tensor:
    """A ZeroTensor (PyTorch's zero gradients): zeros that refuse in-place writes (its views
    and detached aliases too)."""
    shape = given_size(sizes, size, "_efficientzerotensor")
    t = zeros(shape, dtype=dtype, device=device, requires_grad=requires_grad)
    t._ver = ZeroVersion()
    return t


@factory
def full(
    size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    if isinstance(fill_value, Tensor):
        fill_value = as_number(fill_value)
    if dtype is None:
        dtype = dt.result_type(fill_value)
    arr = _full(_xp(device), _size((size,), "full"), fill_value, dt.to_dtype(dtype).np)
    return _finish(arr, requires_grad)


def _full_like_kernel(xp, input, fill_value=0, dtype=None, device=None):
    if device is not None:
        xp = backend(device)
    return xp.full(input.shape, fill_value, dtype=input.dtype if dtype is None else dtype.np)


def _keep_batch(op):
    """The output is batched like the input (its fill does not depend on the values)."""

    def rule(vmap, args, bdims, attrs):
        return dispatch(op, (args[0],), attrs), bdims[0]

    return rule


def _full_like_samples(make):
    yield S((make((2, 3)), 2.5))
    yield S((make(()), -1.0))
    yield S((make((0, 3)), 1.0))
    yield S((make((2, 3)), 3), {"dtype": dt.int64})
    yield S((make((3,)), True), {"dtype": dt.bool_})
    if make.dtype.kind == "c":
        yield S((make((2, 3)), 1.5 - 2j), name="complex fill")
        yield S((make((2,), dtype="float64"), 1j), {"dtype": dt.complex64}, name="complex dtype")


full_like_p = defop(
    "full_like",
    _full_like_kernel,
    nin=1,
    api="full_like",
    batch_rule=rule_generator(_keep_batch)(),
    samples=_full_like_samples,
    layout=preserve,
    float8=True,  # (PyTorch copies float8)
    test=COMPLEX_TOO,
    complex32=True,
    checked_scalars=("fill_value",),
    complex32_unchecked=True,
    meta=by_kernel,
)


def _like(input, fill_value, dtype, device, requires_grad) -> Tensor:
    attrs = {
        "fill_value": fill_value,
        "dtype": None if dtype is None else dt.to_dtype(dtype),
        "device": None if device is None else Device(device),
    }
    out = dispatch(full_like_p, (input,), attrs)
    return require_grad(out) if requires_grad else out


@parsed("torch.zeros_like")
def zeros_like(
    input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None
) -> Tensor:
    """A tensor of zeros shaped like ``input`` (batched like it under vmap)."""
    return _like(input, 0, dtype, device, requires_grad)


@parsed("torch.ones_like")
def ones_like(
    input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None
) -> Tensor:
    """A tensor of ones shaped like ``input``."""
    return _like(input, 1, dtype, device, requires_grad)


@parsed("torch.empty_like")
def empty_like(
    input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None
) -> Tensor:
    """An uninitialized tensor shaped like ``input`` (numtorch fills it with zeros)."""
    return _like(input, 0, dtype, device, requires_grad)


@parsed("torch.full_like")
def full_like(
    input,
    fill_value,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
) -> Tensor:
    """A tensor shaped like ``input`` filled with ``fill_value``."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _like(input, fill_value, dtype, device, requires_grad)


def _no_complex32(dtype, kernel: str, reached: bool = True) -> None:
    """A factory's kernel that has no ComplexHalf version refuses complex32 (``reached``:
    where PyTorch runs it; a linspace of 0 or 1 steps fills without it)."""
    if reached and dtype is not None and dt.to_dtype(dtype) is dt.complex32:
        raise dt.not_implemented(kernel, dt.complex32)


_ARANGE_SIGNATURES = (
    "arange() received an invalid combination of arguments - got (), but expected one of:\n"
    " * (Number end, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = "
    "None, torch.device device = None, bool pin_memory = False, bool requires_grad = False)\n"
    " * (Number start, Number end, *, torch.dtype dtype = None, torch.layout layout = None, "
    "torch.device device = None, bool pin_memory = False, bool requires_grad = False)\n"
    " * (Number start, Number end, Number step = 1, *, Tensor out = None, torch.dtype dtype = "
    "None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
    "bool requires_grad = False)\n"
)


@factory
def arange(
    start=None,
    end=None,
    step=1,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
) -> Tensor:
    if end is None:
        if start is None:
            raise TypeError(_ARANGE_SIGNATURES)
        start, end = 0, start
    elif start is None:  # arange(end=n)
        start = 0
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    _no_complex32(dtype, "arange_cpu")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        dtype = dt.get_default_dtype() if any(isinstance(v, float) for v in vals) else dt.int64
    n = math.ceil((end - start) / step)
    itemsize = dt.to_dtype(dtype).np.itemsize
    check_alloc((n,), itemsize)
    try:
        arr = (
            (start + step * np.arange(n, dtype=np.float64))
            if dt.to_dtype(dtype).is_floating_point
            else np.arange(start, end, step)
        )
    except MemoryError:
        raise RuntimeError(alloc_failed(n * itemsize)) from None
    return _finish(dt.cast(np.asarray(arr), dt.to_dtype(dtype).np), requires_grad, device)


def _check_steps(steps) -> None:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")


@factory
def linspace(
    start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    _check_steps(steps)
    d = _dtype_or_default(dtype)
    _no_complex32(dtype, "linspace_cpu", steps > 1)
    arr = _allocate(
        lambda: dt.cast(np.linspace(float(start), float(end), int(steps)), d), (int(steps),), d
    )
    return _finish(arr, requires_grad, device)


@factory
def logspace(
    start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False
) -> Tensor:
    _check_steps(steps)
    d = _dtype_or_default(dtype)
    _no_complex32(dtype, "logspace_cpu", steps > 1)
    arr = _allocate(
        lambda: np.logspace(float(start), float(end), int(steps), base=base).astype(d),
        (int(steps),),
        d,
    )
    return _finish(arr, requires_grad, device)


@factory
def eye(
    n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    if m is None and isinstance(n, float):
        raise TypeError("eye(): argument 'n' (position 1) must be int, not float")
    m = n if m is None else m
    for name, v in (("n", n), ("m", m)):
        if v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    _no_complex32(dtype, "eye")
    d = _dtype_or_default(dtype)
    arr = _allocate(lambda: np.eye(int(n), int(m), dtype=d), (int(n), int(m)), d)
    return _finish(arr, requires_grad, device)


# ------------------------------------------------------------------ given strides
def _sequence(v, name: str, what: str) -> tuple:
    if not isinstance(v, (tuple, list)):
        raise TypeError(
            f"{name}(): argument '{what}' (position {1 + (what != 'size')}) must be tuple of "
            f"ints, not {type(v).__name__}"
        )
    return tuple(int(s) for s in v)


def _strided_array(xp, shape: tuple, strides: tuple, dtype: np.dtype):
    """A zeroed array of ``shape`` with these (element) strides over a buffer just large
    enough, as PyTorch's empty_strided allocates its storage."""
    n = 0 if 0 in shape else 1 + sum((k - 1) * st for k, st in zip(shape, strides))
    flat = _allocate(lambda: xp.zeros(n, dtype=dtype), (n,), dtype)
    item = dtype.itemsize
    return dt.as_strided(xp, flat, shape, tuple(st * item for st in strides))


def _size_and_strides(size, stride, name: str) -> tuple:
    """(shape, strides) of a strided allocation, checked as PyTorch's empty_strided does."""
    shape = _size((_sequence(size, name, "size"),), name)
    strides = _sequence(stride, name, "stride")
    if len(shape) != len(strides):
        raise RuntimeError(
            f"dimensionality of sizes ({len(shape)}) must match dimensionality of strides "
            f"({len(strides)})"
        )
    if any(st < 0 for st in strides):
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={list(shape)} and "
            f"strides={list(strides)}"
        )
    return shape, strides


@factory
def empty_strided(
    size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False
) -> Tensor:
    """An uninitialized tensor (numtorch fills it with zeros) with the given strides."""
    shape, strides = _size_and_strides(size, stride, "empty_strided")
    arr = _strided_array(_xp(device), shape, strides, _dtype_or_default(dtype))
    return _finish(arr, requires_grad)


@factory
def empty_permuted(
    size,
    physical_layout,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """An uninitialized tensor (zeros) whose dims lie in memory in ``physical_layout``'s
    order, outermost first."""
    shape = _size((_sequence(size, "empty_permuted", "size"),), "empty_permuted")
    order = _sequence(physical_layout, "empty_permuted", "physical_layout")
    n = len(shape)
    if len(order) != n:
        raise RuntimeError(
            "Number of dimensions in size does not match the length of the physical_layout; "
            f"i.e. len(size) = {n} is not equal to len(physical_layout) = {len(order)}"
        )
    seen = set()
    for i, d in enumerate(order):
        if not 0 <= d < n:
            raise RuntimeError(
                f"Dimension out of range (expected to be between 0 and {n - 1}, but got {d} at "
                f"index {i}).  NB: negative dims not currently supported; file an issue if you "
                "want it."
            )
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    strides, step = [0] * n, 1
    for d in reversed(order):
        strides[d] = step
        step *= max(shape[d], 1)
    arr = _strided_array(_xp(device), shape, tuple(strides), _dtype_or_default(dtype))
    return _finish(arr, requires_grad)


def _new_empty_strided_kernel(xp, input, size, stride, *, dtype=None, device=None):
    if device is not None:
        xp = backend(device)
    return _strided_array(xp, size, stride, input.dtype if dtype is None else dtype.np)


def _new_empty_strided_rule(op):
    """One allocation for the batch: the batch dim first, over each example's extent."""

    def rule(vmap, args, bdims, attrs):
        size, stride = attrs["size"], attrs["stride"]
        extent = 0 if 0 in size else 1 + sum((n - 1) * st for n, st in zip(size, stride))
        batched = {**attrs, "size": (vmap.size, *size), "stride": (max(extent, 1), *stride)}
        return dispatch(op, (args[0],), batched), 0

    return rule


def _new_empty_strided_samples(make):
    yield S((make((2, 3)), (2, 3), (3, 1)))
    yield S((make((2, 3)), (3, 2), (1, 3)), name="column-major")
    yield S((make(()), (2, 2), (0, 1)), name="expanded")
    yield S((make((2,)), (0, 3), (3, 1)))
    yield S((make((2,)), (2,), (1,)), {"dtype": dt.float64})


# (values: numtorch's zeros, PyTorch's whatever was in memory; tests/test_layout.py compares
# the strides)
new_empty_strided_p = defop(
    "new_empty_strided",
    _new_empty_strided_kernel,
    nin=1,
    api="Tensor.new_empty_strided",
    batch_rule=rule_generator(_new_empty_strided_rule)(),
    samples=_new_empty_strided_samples,
    layout=None,
    test={"no_oracle": True},
)


def _new_empty_strided(
    self,
    size,
    stride,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """Tensor.new_empty_strided: empty_strided with self's dtype and device by default (an
    op, so that dispatch modes see it as PyTorch's do)."""
    shape, strides = _size_and_strides(size, stride, "new_empty_strided")
    attrs = {
        "size": shape,
        "stride": strides,
        "dtype": None if dtype is None else dt.to_dtype(dtype),
        "device": None if device is None else Device(device),
    }
    out = dispatch(new_empty_strided_p, (self,), attrs)
    return require_grad(out) if requires_grad else out


# ------------------------------------------------------------------ Tensor.new_*
def _new_filled_kernel(xp, input, size, fill_value=0, *, dtype=None, device=None):
    if device is not None:
        xp = backend(device)
    np_dtype = input.dtype if dtype is None else dtype.np
    return _allocate(lambda: xp.full(size, fill_value, dtype=np_dtype), size, np.dtype(np_dtype))


def _new_filled_rule(op):
    """One allocation for the batch: the batch dim first (PyTorch's rule for new_*)."""

    def rule(vmap, args, bdims, attrs):
        return dispatch(op, (args[0],), {**attrs, "size": (vmap.size, *attrs["size"])}), 0

    return rule


def _new_filled_samples(fill):
    def samples(make):
        extra = () if fill is None else (fill,)
        yield S((make((2, 3)), (2, 3), *extra))
        yield S((make(()), (), *extra), name="scalar")
        yield S((make((2,)), (0, 3), *extra), name="empty")
        yield S((make((2,)), (3,), *extra), {"dtype": dt.float64})
        if fill is None:
            yield S((make((2,)), (2, 1)), {"dtype": dt.int64})
        else:
            yield S((make((2,)), (2, 1), 3), {"dtype": dt.int64})

    return samples


def _new_filled_op(name: str, fill):
    """The op Tensor.<name>: a tensor of ``size`` filled (with ``fill``, or the
    ``fill_value`` argument where ``fill`` is None), of self's dtype and device by default."""
    kernel = _new_filled_kernel if fill is None else partial(_new_filled_kernel, fill_value=fill)
    return defop(
        name,
        kernel,
        nin=1,
        api=f"Tensor.{name}",
        batch_rule=rule_generator(_new_filled_rule)(),
        samples=_new_filled_samples(2.5 if fill is None else None),
        layout=None,
        # (new_empty's values: numtorch's zeros, PyTorch's whatever was in memory)
        test={"no_oracle": True} if name == "new_empty" else None,
        checked_scalars=("fill_value",) if fill is None else (),
        float8=True,
        complex32=True,
        complex32_unchecked=True,
        meta=by_kernel,
    )


new_zeros_p = _new_filled_op("new_zeros", 0)
new_ones_p = _new_filled_op("new_ones", 1)
new_empty_p = _new_filled_op("new_empty", 0)
new_full_p = _new_filled_op("new_full", None)


def _new_attrs(self, dtype, device) -> dict:
    return {
        "dtype": None if dtype is None else dt.to_dtype(dtype),
        "device": None if device is None else Device(device),
    }


def _new_factory(op):
    """Tensor.new_<make>: ``make(size)`` with the tensor's dtype and device by default (an
    op: batched under vmap, seen by dispatch modes, as PyTorch's)."""

    name = op.name

    def method(
        self,
        *sizes,
        size=None,
        dtype=None,
        device=None,
        requires_grad=False,
        layout=None,
        pin_memory=False,
    ) -> Tensor:
        attrs = {"size": given_size(sizes, size, name), **_new_attrs(self, dtype, device)}
        out = dispatch(op, (self,), attrs)  # (the size checked under the method's name)
        return require_grad(out) if requires_grad else out

    method.__name__ = name
    return method


def _new_full(
    self,
    size,
    fill_value,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    layout=None,
    pin_memory=False,
) -> Tensor:
    attrs = {"size": given_size((size,), None, "new_full"), "fill_value": fill_value}
    out = dispatch(new_full_p, (self,), attrs | _new_attrs(self, dtype, device))
    return require_grad(out) if requires_grad else out


def _new_tensor(
    self,
    data,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    layout=None,
    pin_memory=False,
) -> Tensor:
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use "
            "sourceTensor.detach().clone() or sourceTensor.detach().clone()"
            ".requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
    return tensor(
        data,
        dtype=self.dtype if dtype is None else dtype,
        device=self.device if device is None else device,
        requires_grad=requires_grad,
    )


def _options(t: Tensor) -> str:
    """A tensor's TensorOptions as PyTorch's C++ prints them."""
    return (
        f"TensorOptions(dtype={t.dtype.cpp_name}, device={t.device}, layout=Strided, "
        "requires_grad=false (default), pinned_memory=false (default), "
        "memory_format=(nullopt))"
    )


def _new_legacy(self, *args, device=None) -> Tensor:
    """Tensor.new (legacy): ``new(*sizes)`` or ``new(Size)`` is uninitialized, ``new(data)``
    a tensor of the data, ``new(tensor)`` the same tensor; all of self's dtype."""
    if device is None:
        device = self.device
    if not args:
        return empty(0, dtype=self.dtype, device=device)
    first = args[0]
    if len(args) == 1 and isinstance(first, Tensor):
        if first.dtype != self.dtype:
            raise TypeError(f"expected {_options(self)} (got {_options(first)})")
        return first.detach()
    if all(isinstance(a, numbers.Integral) for a in args) or (
        len(args) == 1 and isinstance(first, Size)
    ):
        return empty(*args, dtype=self.dtype, device=device)
    if len(args) == 1 and isinstance(first, (list, tuple)) or hasattr(first, "__array__"):
        return tensor(first, dtype=self.dtype, device=device)
    raise TypeError(f"new(): data must be a sequence (got {type(first).__name__})")


tensor_methods(
    {"new": _new_legacy}
    | {
        name: parsed(f"Tensor.{name}", method=True)(fn)
        for name, fn in {
            "new_zeros": _new_factory(new_zeros_p),
            "new_ones": _new_factory(new_ones_p),
            "new_empty": _new_factory(new_empty_p),
            "new_empty_strided": _new_empty_strided,
            "new_full": _new_full,
            "new_tensor": _new_tensor,
        }.items()
    }
)


__all__ = [
    "Generator",
    "arange",
    "as_tensor",
    "empty",
    "empty_like",
    "empty_permuted",
    "empty_strided",
    "eye",
    "from_numpy",
    "full",
    "full_like",
    "get_rng_state",
    "initial_seed",
    "linspace",
    "logspace",
    "manual_seed",
    "ones",
    "ones_like",
    "seed",
    "set_rng_state",
    "tensor",
    "zeros",
    "zeros_like",
]
