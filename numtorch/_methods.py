"""Tensor methods and Python operators, installed from the op registry."""

from __future__ import annotations

import builtins

from ._core import dtype as dt
from ._core.device import device as Device
from ._core.dispatch import dispatch
from ._core.inplace import run_inplace
from ._core.tensor import Tensor
from .ops import _families as fam
from .ops import conversion, pointwise

_ALPHA = {"alpha": 1}


def _inplace_method(op):
    def m(self, *args, **kwargs):
        return run_inplace(op, self, args, kwargs)

    m.__name__ = op.name + "_"
    return m


def _sizes_method(op):
    fn = op.fn

    def m(self, *size):
        if len(size) == 1 and not isinstance(size[0], int):
            size = size[0]
        return fn(self, tuple(size))

    m.__name__ = op.name
    return m


_KINDS = {"fn": lambda op: op.fn, "sizes": _sizes_method, "inplace": _inplace_method}


def install() -> None:
    for name, (op, kind) in fam.METHODS.items():
        setattr(Tensor, name, _KINDS[kind](op))

    add, sub, mul = pointwise.add, pointwise.sub, pointwise.mul
    T = Tensor
    T.__add__ = lambda self, other: dispatch(add, (self, other), _ALPHA)
    T.__radd__ = lambda self, other: dispatch(add, (other, self), _ALPHA)
    T.__sub__ = lambda self, other: dispatch(sub, (self, other), _ALPHA)
    T.__rsub__ = lambda self, other: dispatch(sub, (other, self), _ALPHA)
    T.__mul__ = lambda self, other: dispatch(mul, (self, other), {})
    T.__rmul__ = lambda self, other: dispatch(mul, (other, self), {})
    T.__neg__ = lambda self: dispatch(pointwise.neg, (self,), {})
    T.__pos__ = lambda self: self
    T.__iadd__ = lambda self, other: run_inplace(add, self, (other,), _ALPHA)
    T.__isub__ = lambda self, other: run_inplace(sub, self, (other,), _ALPHA)
    T.__imul__ = lambda self, other: run_inplace(mul, self, (other,), {})
    _binary_dunders()
    T.to = _to
    T.type_as = lambda self, other: _to(self, other.dtype)
    for name, d in [
        ("float", dt.float32), ("double", dt.float64), ("half", dt.float16), ("long", dt.int64),
        ("int", dt.int32), ("short", dt.int16), ("char", dt.int8), ("byte", dt.uint8),
        ("bool", dt.bool_), ("cfloat", dt.complex64), ("cdouble", dt.complex128),
    ]:  # fmt: skip
        setattr(T, name, _caster(d))
    T.cpu = lambda self, memory_format=None: _to(self, "cpu")
    T.cuda = lambda self, device=None, non_blocking=False: _to(self, "cuda")
    T.type = _type


def _binary_dunders() -> None:
    """Operators whose ops live in other modules; bound lazily by name."""
    import numtorch as nt

    T = Tensor
    table = {
        "truediv": "div", "floordiv": "floor_divide", "mod": "remainder", "pow": "pow",
        "matmul": "matmul", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
        "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift",
    }  # fmt: skip
    for dunder, name in table.items():
        fn = getattr(nt, name, None)
        if fn is None:
            continue
        setattr(T, f"__{dunder}__", _fwd(fn))
        setattr(T, f"__r{dunder}__", _rev(fn))
        if name in fam.METHODS and f"{name}_" in fam.METHODS:
            setattr(T, f"__i{dunder}__", getattr(T, f"{name}_"))
    for dunder, name in {
        "eq": "eq",
        "ne": "ne",
        "lt": "lt",
        "le": "le",
        "gt": "gt",
        "ge": "ge",
    }.items():
        fn = getattr(nt, name, None)
        if fn is not None:
            setattr(T, f"__{dunder}__", _cmp(fn))
    for dunder, name in {"abs": "abs", "invert": "bitwise_not"}.items():
        fn = getattr(nt, name, None)
        if fn is not None:
            setattr(T, f"__{dunder}__", fn)


def _fwd(fn):
    return lambda self, other: fn(self, other)


def _rev(fn):
    def r(self, other):
        if not isinstance(other, (Tensor, int, float, complex, bool)):
            return NotImplemented
        return fn(other, self)

    return r


def _cmp(fn):
    def c(self, other):
        if not isinstance(other, (Tensor, int, float, complex, bool)):
            return NotImplemented
        return fn(self, other)

    return c


def _caster(d):
    def cast(self, memory_format=None):
        return _to(self, d)

    return cast


def _to(self, *args, **kwargs) -> Tensor:
    """Tensor.to(dtype) / to(device) / to(other) / to(device, dtype), copy=False."""
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (str, Device)):
            device = a
        elif a is not None and not isinstance(a, builtins.bool):
            dtype = a
    out = self
    if dtype is not None:
        d = dt.to_dtype(dtype)
        if d != self.dtype:
            out = conversion.to_dtype.fn(self, d)
    if device is not None and Device(device) != self.device:
        out = conversion.to_device.fn(out, Device(device))
    if copy and out is self:
        out = conversion.clone.fn(self)
    return out


def _type(self, dtype=None, non_blocking=False):
    if dtype is None:
        return self.dtype.tensor_type
    if isinstance(dtype, str):
        dtype = dt.from_tensor_type(dtype)
    return _to(self, dtype)
