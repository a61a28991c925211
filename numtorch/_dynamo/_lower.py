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
from ..ops._outer import by_matmul
from ..ops.comparison import _SELECT_MIN
from ..ops.reduction import count, dims_of
from ..ops.views import _expand as _expand_kernel
from ..ops.views import infer_size


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
        return None if by_matmul(a, b) else "np.multiply({0}, {1})"
    return "np.matmul({0}, {1})"


def _sum_to_size(attrs: dict, ins: list, static: bool) -> str | None:
    x, size = ins[0], tuple(attrs["size"])
    lead = x.ndim - len(size)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(size) if s == 1 and x.shape[i + lead] != 1
    )
    if not axes:
        return "{0}.copy()"
    out = f"{{0}}.sum(axis={axes}, keepdims=True)"
    return f"{out}.reshape({size})" if lead else out


def _where(attrs: dict, ins: list, static: bool) -> str | None:
    """where(cond, number, array) (relu's gradient): NumPy takes the number at the array's
    float dtype, as the kernel's promotion does; small enough for the kernel's plain path."""
    cond, *vals = ins
    arrays = [v for v in vals if isinstance(v, np.ndarray)]
    if len(arrays) != 1 or arrays[0].dtype.kind != "f" or cond.size >= _SELECT_MIN:
        return None
    if not all(isinstance(v, np.ndarray) or type(v) in (int, float) for v in vals):
        return None
    return "np.where({0}, {1}, {2})"


def _add(attrs: dict, ins: list, static: bool) -> str | None:
    """The kernel's ``a + b`` for two arrays of one float dtype (no promotion to decide)."""
    a, b = ins
    if attrs.get("alpha", 1) != 1 or type(a) is not np.ndarray or type(b) is not np.ndarray:
        return None
    return "np.add({0}, {1})" if a.dtype == b.dtype and a.dtype.kind == "f" else None


def _reshape(attrs: dict, ins: list, static: bool) -> str | None:
    return f"{{0}}.reshape({infer_size(attrs['shape'], ins[0].size)})"


def _mean(attrs: dict, ins: list, static: bool) -> str | None:
    """The kernel's own arithmetic for a float32/64 mean with no dtype= (a sum, divided)."""
    x = ins[0]
    if attrs.get("dtype") is not None or x.dtype.kind != "f" or x.itemsize < 4 or not x.size:
        return None
    dims = dims_of(attrs.get("dim"), x.ndim)
    return f"{{0}}.sum(axis={dims}, keepdims={bool(attrs.get('keepdim'))}) / {count(x.shape, dims)}"


def _expand(attrs: dict, ins: list, static: bool) -> str | None:
    """expand's view made directly over its input's buffer, its strides fixed by the
    guards (a forward program's only)."""
    x = ins[0]
    if not static or not (x.flags.c_contiguous or x.flags.f_contiguous):
        return None
    out = _expand_kernel(np, x, attrs["size"])
    return f"np.ndarray({out.shape}, {{0}}.dtype, {{0}}, 0, {out.strides})"


LOWER: dict[str, Callable] = {
    "add": _add,
    "reshape": _reshape,
    "mean": _mean,
    "expand": _expand,
    "where": _where,
    "transpose": _transpose,
    "matmul": _matmul,
    "sum_to_size": _sum_to_size,
}
