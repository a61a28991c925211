"""The legacy tensor types (``torch.FloatTensor`` and its kin, ``torch.cuda.FloatTensor``):
constructors of tensors of one dtype and device, and ``isinstance`` targets matching them.

They are not the class of any tensor (that is always ``Tensor``): their metaclass checks
a tensor's dtype and device, as PyTorch's ``tensortype`` does."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import cuda
from ._core import dtype as dt
from ._core.device import device as _device
from ._core.layout import strided
from ._core.tensor import Size, Tensor
from .ops.creation import empty, tensor

__all__ = [
    "BFloat16Tensor",
    "BoolTensor",
    "ByteTensor",
    "CharTensor",
    "DoubleTensor",
    "FloatTensor",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "ShortTensor",
    "cuda_types",
]

_SIGNATURES = """, but expected one of:
 * (*, torch.device device = None)
 * (torch.Storage storage)
 * (Tensor other)
 * (tuple of ints size, *, torch.device device = None)
 * (object data, *, torch.device device = None)
"""


class tensortype(type):  # noqa: N801 - PyTorch's name
    """The metaclass of the legacy types: ``isinstance(t, FloatTensor)`` is a dtype and
    device check; calling one makes a tensor."""

    dtype: dt.dtype
    is_cuda: bool

    def __instancecheck__(cls, obj: Any) -> bool:
        return (
            isinstance(obj, Tensor)
            and obj.dtype is cls.dtype
            and (obj.device.type == "cuda") == cls.is_cuda
        )

    def __subclasscheck__(cls, sub: type) -> bool:
        return sub is cls

    def __repr__(cls) -> str:
        return f"<class '{cls._torch_name}'>"

    def __call__(cls, *args: Any, device: Any = None, **kwargs: Any) -> Tensor:
        if kwargs:
            got = ", ".join(
                [type(a).__name__ for a in args] + [f"{k}={_kind(v)}" for k, v in kwargs.items()]
            )
            raise TypeError(
                f"new() received an invalid combination of arguments - got ({got}){_SIGNATURES}"
            )
        where = "cuda" if cls.is_cuda else "cpu"
        if cls.is_cuda and not cuda.is_available():
            raise TypeError(
                f"type {cls._torch_name} not available. Torch not compiled with CUDA enabled."
            )
        if device is not None and _device(device).type != where:
            raise RuntimeError(
                f"legacy constructor expects device type: {where} but device type: "
                f"{_device(device).type} was passed"
            )
        return _new(cls.dtype, where, args)

    def __reduce__(cls):
        return (_legacy_type, (cls._torch_name,))


def _kind(v: Any) -> str:
    return "torch.dtype" if isinstance(v, dt.dtype) else type(v).__name__


def _is_size(args: tuple) -> bool:
    return all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args)


def _new(d: dt.dtype, where: str, args: tuple) -> Tensor:
    """PyTorch's legacy constructor: sizes (ints or a Size) give an uninitialized tensor,
    a tensor of the dtype an alias, anything else data to copy."""
    if not args:
        return empty(0, dtype=d, device=where)
    if len(args) == 1 and isinstance(args[0], Size):
        args = tuple(args[0])
    if _is_size(args):
        return empty(args, dtype=d, device=where)
    if len(args) > 1:
        if not _is_size(args[:1]):
            got = ", ".join(type(a).__name__ for a in args)
            raise TypeError(
                f"new() received an invalid combination of arguments - got ({got}){_SIGNATURES}"
            )
        for i, a in enumerate(args):
            if not _is_size((a,)):
                raise TypeError(
                    f"new(): argument 'size' failed to unpack the object at pos {i + 1} with "
                    f'error "type must be tuple of ints,but got {type(a).__name__}"'
                )
    (data,) = args
    if isinstance(data, Tensor):
        if data.dtype is not d:
            raise TypeError(f"expected {_options(d, where)} (got {_options(data.dtype, where)})")
        return data.view_as(data)
    if isinstance(data, str):
        raise TypeError("new(): invalid data type 'str'")
    if isinstance(data, (bool, float, complex, np.generic)):
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    return tensor(data, dtype=d, device=where)


def _options(d: dt.dtype, where: str) -> str:
    return (
        f"TensorOptions(dtype={d.cpp_name}, device={where}, layout=Strided, requires_grad=false "
        "(default), pinned_memory=false (default), memory_format=(nullopt))"
    )


_DTYPES = {
    "BFloat16": dt.bfloat16,
    "Bool": dt.bool_,
    "Byte": dt.uint8,
    "Char": dt.int8,
    "Double": dt.float64,
    "Float": dt.float32,
    "Half": dt.float16,
    "Int": dt.int32,
    "Long": dt.int64,
    "Short": dt.int16,
}


def _make(scalar: str, on_cuda: bool) -> tensortype:
    name = f"{scalar}Tensor"
    torch_name = f"torch.{'cuda.' if on_cuda else ''}{name}"
    attrs = {
        "__module__": "numtorch.cuda" if on_cuda else "numtorch",
        "__doc__": None,
        "dtype": _DTYPES[scalar],
        "is_cuda": on_cuda,
        "is_sparse": False,
        "layout": strided,
        "_torch_name": torch_name,
    }
    return tensortype(name, (), attrs)


_ALL = {f"torch.{s}Tensor": _make(s, False) for s in _DTYPES}
_ALL.update({f"torch.cuda.{s}Tensor": _make(s, True) for s in _DTYPES})


def _legacy_type(torch_name: str) -> tensortype:
    return _ALL[torch_name]


def cuda_types() -> dict:
    """``torch.cuda``'s legacy types by name (``FloatTensor``: torch.cuda.FloatTensor)."""
    return {k.rpartition(".")[2]: v for k, v in _ALL.items() if k.startswith("torch.cuda.")}


BFloat16Tensor = _ALL["torch.BFloat16Tensor"]
BoolTensor = _ALL["torch.BoolTensor"]
ByteTensor = _ALL["torch.ByteTensor"]
CharTensor = _ALL["torch.CharTensor"]
DoubleTensor = _ALL["torch.DoubleTensor"]
FloatTensor = _ALL["torch.FloatTensor"]
HalfTensor = _ALL["torch.HalfTensor"]
IntTensor = _ALL["torch.IntTensor"]
LongTensor = _ALL["torch.LongTensor"]
ShortTensor = _ALL["torch.ShortTensor"]
