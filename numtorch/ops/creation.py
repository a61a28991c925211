"""Factory functions: tensors from data, constant fills, ranges, random draws."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._core import dtype as dt
from .._core.device import backend
from .._core.device import device as Device
from .._core.tensor import Tensor, _make

_generators: dict = {}


def manual_seed(seed: int):
    """Seed the random generator of every device."""
    _generators["cpu"] = np.random.default_rng(int(seed))
    return _generators["cpu"]


def seed() -> int:
    s = int(np.random.SeedSequence().entropy % (2**63))
    manual_seed(s)
    return s


def default_generator(dev: str = "cpu"):
    g = _generators.get(dev)
    if g is None:
        g = manual_seed(int(np.random.SeedSequence().entropy % (2**63)))
    return g


def _xp(device):
    return np if device is None else backend(Device(device))


def _finish(arr, requires_grad: bool, device=None) -> Tensor:
    if device is not None and Device(device).type == "cuda":
        arr = backend(Device(device)).asarray(arr)
    t = _make(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


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


def tensor(
    data, *, dtype=None, device=None, requires_grad: bool = False, pin_memory=False
) -> Tensor:
    """A new tensor holding a copy of `data`."""
    if isinstance(data, Tensor):
        arr = np.array(data.numpy(force=True))
        if dtype is not None:
            arr = arr.astype(dt.to_dtype(dtype).np)
        return _finish(arr, requires_grad, device)
    if isinstance(data, np.generic):
        data = np.asarray(data)
    if isinstance(data, np.ndarray):
        npd = dt.to_dtype(dtype).np if dtype is not None else data.dtype
        arr = np.array(data, dtype=npd)
    else:
        data = _from_nested(data)
        npd = dt.to_dtype(dtype).np if dtype is not None else _infer_np_dtype(data)
        arr = np.array(data, dtype=npd)
    if arr.dtype not in dt._FROM_NP:
        raise TypeError(f"can't convert np.ndarray of type {arr.dtype}")
    return _finish(arr, requires_grad, device)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """A tensor sharing memory with `data` when possible."""
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype == dt.to_dtype(dtype) else data.to(dtype)
    if isinstance(data, np.generic):
        data = np.asarray(data)
    if isinstance(data, np.ndarray) and (dtype is None or dt.to_dtype(dtype).np == data.dtype):
        return _finish(data, False, device)
    return tensor(data, dtype=dtype, device=device)


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


def _size(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = int(s)
        if not isinstance(s, numbers.Integral):
            raise TypeError(
                f"{'empty'}(): argument 'size' must be tuple of ints, but found element of type "
                f"{type(s).__name__} at pos 0"
            )
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
        out.append(int(s))
    return tuple(out)


def _dtype_or_default(dtype) -> np.dtype:
    return dt.to_dtype(dtype).np if dtype is not None else dt.get_default_dtype().np


def _fill(value):
    def factory(
        *size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False
    ):
        arr = _xp(device).full(_size(size), value, dtype=_dtype_or_default(dtype))
        return _finish(arr, requires_grad)

    return factory


zeros = _fill(0)
ones = _fill(1)
empty = _fill(0)
zeros.__name__, ones.__name__, empty.__name__ = "zeros", "ones", "empty"


def full(
    size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = dt.result_type(fill_value)
    arr = _xp(device).full(_size((size,)), fill_value, dtype=dt.to_dtype(dtype).np)
    return _finish(arr, requires_grad)


def _like(fill):
    def factory(
        input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None
    ):
        d = dt.to_dtype(dtype).np if dtype is not None else input._data.dtype
        xp = _xp(device) if device is not None else _xp_of(input)
        return _finish(xp.full(input.shape, fill, dtype=d), requires_grad)

    return factory


def _xp_of(t: Tensor):
    return backend(t.device)


zeros_like = _like(0)
ones_like = _like(1)
empty_like = _like(0)
zeros_like.__name__, ones_like.__name__, empty_like.__name__ = (
    "zeros_like",
    "ones_like",
    "empty_like",
)


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
    d = dt.to_dtype(dtype).np if dtype is not None else input._data.dtype
    return _finish(_xp_of(input).full(input.shape, fill_value, dtype=d), requires_grad)


def arange(
    start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        dtype = dt.get_default_dtype() if any(isinstance(v, float) for v in vals) else dt.int64
    n = math.ceil((end - start) / step)
    arr = (
        (start + step * np.arange(n, dtype=np.float64))
        if dt.to_dtype(dtype).is_floating_point
        else np.arange(start, end, step)
    )
    return _finish(np.asarray(arr).astype(dt.to_dtype(dtype).np), requires_grad, device)


def linspace(
    start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    arr = np.linspace(float(start), float(end), int(steps))
    return _finish(arr.astype(_dtype_or_default(dtype)), requires_grad, device)


def logspace(
    start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False
) -> Tensor:
    arr = np.logspace(float(start), float(end), int(steps), base=base)
    return _finish(arr.astype(_dtype_or_default(dtype)), requires_grad, device)


def eye(
    n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    arr = np.eye(int(n), int(n if m is None else m), dtype=_dtype_or_default(dtype))
    return _finish(arr, requires_grad, device)


# ------------------------------------------------------------------ random
def rand(
    *size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    g = generator or default_generator()
    arr = g.random(_size(size)).astype(_dtype_or_default(dtype))
    return _finish(arr, requires_grad, device)


def randn(
    *size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    g = generator or default_generator()
    arr = g.standard_normal(_size(size)).astype(_dtype_or_default(dtype))
    return _finish(arr, requires_grad, device)


def randint(
    low,
    high=None,
    size=None,
    *,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
) -> Tensor:
    if size is None:
        low, high, size = 0, low, high
    elif high is None:
        raise TypeError("randint() missing required argument 'size'")
    g = generator or default_generator()
    arr = g.integers(low, high, size=_size((size,)))
    return _finish(
        arr.astype(dt.to_dtype(dtype).np if dtype is not None else np.int64), requires_grad, device
    )


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    g = generator or default_generator()
    return _finish(
        g.permutation(int(n)).astype(np.int64 if dtype is None else dt.to_dtype(dtype).np),
        False,
        device,
    )


def normal(
    mean=0.0,
    std=1.0,
    size=None,
    *,
    generator=None,
    out=None,
    dtype=None,
    device=None,
    requires_grad=False,
) -> Tensor:
    g = generator or default_generator()
    m = mean.numpy(force=True) if isinstance(mean, Tensor) else mean
    s = std.numpy(force=True) if isinstance(std, Tensor) else std
    if size is not None:
        shape = _size((size,))
    else:
        shape = np.broadcast_shapes(np.shape(m), np.shape(s))
    d = _dtype_or_default(dtype)
    for v in (m, s):
        if isinstance(v, np.ndarray) and dtype is None:
            d = v.dtype
    if isinstance(s, np.ndarray) and (s < 0).any() or not isinstance(s, np.ndarray) and s < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {s}")
    arr = (m + s * g.standard_normal(shape)).astype(d)
    return _finish(arr, requires_grad, device)


def _rand_like(fn):
    def like(
        input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None
    ):
        return fn(*input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)

    return like


rand_like = _rand_like(rand)
randn_like = _rand_like(randn)


def randint_like(
    input, low=0, high=None, *, dtype=None, device=None, requires_grad=False
) -> Tensor:
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype)


__all__ = [
    "arange", "as_tensor", "empty", "empty_like", "eye", "from_numpy", "full", "full_like",
    "linspace", "logspace", "manual_seed", "normal", "ones", "ones_like", "rand", "rand_like",
    "randint", "randint_like", "randn", "randn_like", "randperm", "seed", "tensor", "zeros",
    "zeros_like",
]  # fmt: skip
