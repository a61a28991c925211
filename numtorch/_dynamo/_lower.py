"""Kernel calls the generated code writes as NumPy expressions: for the ops that dominate
backward passes, what the kernel decides from shapes and attributes alone is decided once,
when the program is made for its sizes. Each rule takes the attributes, the input
arrays as traced (their shapes and dtypes, never their values; their strides only when
``static``: a forward program's, which its guards fix) and returns an expression over
``{0}``, ``{1}``... or None (the kernel is called). A rule sees the arguments before the op's ``prepare`` (type promotion):
it declines what promotion would change. The op database's bit-identity test runs every rule against eager.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._core.tensor import _wrap_dim
from ..ops._outer import by_kernel
from ..ops.comparison import _SELECT_MIN
from ..ops.reduction import count, dims_of
from ..ops.views import _expand as _expand_kernel
from ..ops.views import infer_size


class Fresh(str):
    """An expression whose result is always a new array (a ufunc's, matmul's, a
    reduction's): at the same sizes it has the same dims and no base."""

    __slots__ = ()


def _transpose(attrs: dict, ins: list, static: bool) -> str | None:
    n = ins[0].ndim
    if not n:
        return None
    d0, d1 = _wrap_dim(attrs["dim0"], n), _wrap_dim(attrs["dim1"], n)
    return f"{{0}}.swapaxes({d0}, {d1})"


def _matmul(attrs: dict, ins: list, static: bool) -> str | None:
    a, b = ins
    if a.ndim < 1 or b.ndim < 1 or a.dtype != b.dtype:
        return None
    if a.ndim >= 2 and b.ndim >= 2 and a.shape[-1] == 1:
        return None if by_kernel(a, b) else Fresh("np.multiply({0}, {1})")
    return Fresh("np.matmul({0}, {1})")


def _sum_to_size(attrs: dict, ins: list, static: bool) -> str | None:
    x, size = ins[0], tuple(attrs["size"])
    lead = x.ndim - len(size)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(size) if s == 1 and x.shape[i + lead] != 1
    )
    if not axes:
        return Fresh("{0}.copy()")
    out = f"{{0}}.sum(axis={axes}, keepdims=True)"
    return f"{out}.reshape({size})" if lead else Fresh(out)


def _where(attrs: dict, ins: list, static: bool) -> str | None:
    """where(cond, number, array) (relu's gradient): NumPy takes the number at the array's
    float dtype, as the kernel's promotion does; small enough for the kernel's plain path."""
    cond, *vals = ins
    arrays = [v for v in vals if isinstance(v, np.ndarray)]
    if len(arrays) != 1 or arrays[0].dtype.kind != "f" or cond.size >= _SELECT_MIN:
        return None
    if not all(isinstance(v, np.ndarray) or type(v) in (int, float) for v in vals):
        return None
    return Fresh("np.where({0}, {1}, {2})")


def _add(attrs: dict, ins: list, static: bool) -> str | None:
    """The kernel's ``a + b`` for two arrays of one float dtype (no promotion to decide)."""
    a, b = ins
    if attrs.get("alpha", 1) != 1 or type(a) is not np.ndarray or type(b) is not np.ndarray:
        return None
    return Fresh("({0} + {1})") if a.dtype == b.dtype and a.dtype.kind == "f" else None


def _reshape(attrs: dict, ins: list, static: bool) -> str | None:
    return f"{{0}}.reshape({infer_size(attrs['shape'], ins[0].size)})"


def _mean(attrs: dict, ins: list, static: bool) -> str | None:
    """The kernel's own arithmetic for a float32/64 mean with no dtype= (a sum, divided)."""
    x = ins[0]
    if attrs.get("dtype") is not None or x.dtype.kind != "f" or x.itemsize < 4 or not x.size:
        return None
    dims = dims_of(attrs.get("dim"), x.ndim)
    keep = bool(attrs.get("keepdim"))
    return Fresh(f"{{0}}.sum(axis={dims}, keepdims={keep}) / {count(x.shape, dims)}")


def _sum(attrs: dict, ins: list, static: bool) -> str | None:
    """The kernel's own call for a float32/64 sum with no dtype= (its axes decided once)."""
    x = ins[0]
    if attrs.get("dtype") is not None or not _wide_float(x):
        return None
    dims = dims_of(attrs.get("dim"), x.ndim)
    return Fresh(f"{{0}}.sum(axis={dims}, keepdims={bool(attrs.get('keepdim'))})")


def _expand(attrs: dict, ins: list, static: bool) -> str | None:
    """expand's view made directly over its input's buffer, its strides fixed by the
    guards (a forward program's only)."""
    x = ins[0]
    if not static or not (x.flags.c_contiguous or x.flags.f_contiguous):
        return None
    out = _expand_kernel(np, x, attrs["size"])
    return f"np.ndarray({out.shape}, {{0}}.dtype, {{0}}, 0, {out.strides})"


def _wide_float(a) -> bool:
    return type(a) is np.ndarray and a.dtype.kind == "f" and a.itemsize >= 4


def _operands(ins: list) -> bool:
    """An array of float32/64 with another of its dtype or a Python number."""
    a, b = ins
    if not _wide_float(a):
        return False
    return (type(b) is np.ndarray and b.dtype == a.dtype) or type(b) in (int, float)


def _binary(symbol: str) -> Callable:
    def rule(attrs: dict, ins: list, static: bool) -> str | None:
        if attrs.get("alpha", 1) != 1 or not _operands(ins):
            return None
        return Fresh(f"({{0}} {symbol} {{1}})")

    return rule


def _mul(attrs: dict, ins: list, static: bool) -> str | None:
    """The kernel's ``a * b``, where it takes no path of its own for outer products."""
    if not _operands(ins) or by_kernel(*ins):
        return None
    return Fresh("({0} * {1})")


def _t(attrs: dict, ins: list, static: bool) -> str | None:
    return "{0}.T" if type(ins[0]) is np.ndarray and ins[0].ndim == 2 else None


def _mm(attrs: dict, ins: list, static: bool) -> str | None:
    a, b = ins
    if not (_wide_float(a) and _wide_float(b)) or a.dtype != b.dtype or a.ndim != 2 != b.ndim:
        return None
    return Fresh("np.matmul({0}, {1})") if a.shape[1] == b.shape[0] else None


def _addmm(attrs: dict, ins: list, static: bool) -> str | None:
    """The kernel's ``m1 @ m2 + input`` with beta and alpha 1."""
    x = ins[0]
    if attrs.get("beta", 1) != 1 or attrs.get("alpha", 1) != 1 or not _wide_float(x):
        return None
    if _mm(attrs, ins[1:], static) is None or ins[1].dtype != x.dtype:
        return None
    return Fresh("(np.matmul({1}, {2}) + {0})")


def _relu(attrs: dict, ins: list, static: bool) -> str | None:
    return Fresh("np.maximum(0, {0})") if _wide_float(ins[0]) else None


# The kernel's own arithmetic, for a call whose ``prepare`` changes nothing (a plain call:
# the kernel would get these very arguments), at the sizes traced.
KERNELS: dict[str, Callable] = {
    "mul": _mul,
    "sub": _binary("-"),
    "le": _binary("<="),
    "lt": _binary("<"),
    "ge": _binary(">="),
    "gt": _binary(">"),
    "t": _t,
    "mm": _mm,
    "addmm": _addmm,
    "relu": _relu,
}

LOWER: dict[str, Callable] = {
    "add": _add,
    "reshape": _reshape,
    "mean": _mean,
    "sum": _sum,
    "expand": _expand,
    "where": _where,
    "transpose": _transpose,
    "matmul": _matmul,
    "sum_to_size": _sum_to_size,
}
