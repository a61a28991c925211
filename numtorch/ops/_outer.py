"""Stacked outer products, (..., m, 1) times (..., 1, n), as in per-sample weight gradients:
the one kernel that ``mul`` and ``matmul`` both run them with."""

from __future__ import annotations

import math

import numpy as np

from .._core import parallel
from .._core.layout import follow_inputs_empty

# Where a BLAS matmul beats NumPy's broadcast multiply (2-core x86, OpenBLAS; float32 and
# float64 alike; 64 x (m x 1) * (1 x n), ms broadcast / matmul):
#   m x n = 32 x 32: 0.030 / 0.014; 128 x 256: 0.68 / 0.18; 2048 x 32: 2.4 / 0.41;
#   64 x 2048: 7.8 / 6.5;
# and where it loses: short stacks (8 x 32 x 32: 0.005 / 0.006), fewer than 8 rows
# (1024 x (2 x 512): 0.50 / 0.62), rows of 4096 and more (128 x 9216: 33 / 226), and
# products large enough for OpenBLAS to run them on two threads (m * n * 2 over 2**18),
# which is slower under load and erratic (2048 x 256: 22 / 207; one thread: 19).
_MIN_ROWS = 8
_MAX_ROW = 2048
_MAX_PRODUCT = 2**17  # elements of one outer product (OpenBLAS stays on one thread)
_MIN_STACK = 2**15  # elements of the whole stack
# Rows from this long multiply faster on two threads in slabs than in one BLAS call (2-core
# x86, 64 x (128 x 1) * (1 x 784) float32: 1.7 ms in slabs, 2.6 by matmul; 128 x 256:
# 0.42 / 0.22).
_SLAB_ROW = 512
# Rows shorter than this multiply faster through einsum than through NumPy's broadcast
# multiply, which runs a (m x 1) * (1 x n) product row by row (2-core x86, one thread, ms
# multiply / einsum: float32 64 x 128 x 784: 3.1 / 1.5, 1024 x 2 x 512: 0.29 / 0.18;
# float64 64 x 128 x 256: 1.8 / 0.73; at rows of 2048 and more einsum loses: float32
# 128 x 128 x 9216: 70 / 113).
_EINSUM_ROW = 2048


def _stacked(a, b) -> bool:
    """Whether ``a * b`` is a stack of real outer products (..., m, 1) * (..., 1, n)."""
    return (
        type(a) is np.ndarray
        and type(b) is np.ndarray
        and a.ndim >= 3
        and a.ndim == b.ndim
        and a.shape[-1] == 1 == b.shape[-2]
        and a.shape[:-2] == b.shape[:-2]
        and a.dtype == b.dtype
        and a.dtype.char in "fd"
    )


def by_einsum(a, b):
    """The stack of outer products ``a * b`` through einsum, in slabs along the leading axis
    when large."""
    shape = (*a.shape[:-1], b.shape[-1])
    out = np.empty(shape, a.dtype)
    a, b = a[..., 0], b[..., 0, :]

    def body(i: int, n: int) -> None:
        s = parallel.bounds(i, n, shape[0])
        np.einsum("...i,...j->...ij", a[s], b[s], out=out[s])

    parallel.run(body, parallel.slabs(out.size, shape[0]))
    return out


def _route(a, b) -> str | None:
    """The path of the stack of outer products ``a * b``: "matmul" (BLAS), "einsum", or
    None (NumPy's multiply, or ``a * b`` is no such stack)."""
    if not _stacked(a, b):
        return None
    m, n = a.shape[-2], b.shape[-1]
    stack = a.size * n
    if stack < _MIN_STACK:
        return None
    if (
        m >= _MIN_ROWS
        and 2 <= n <= _MAX_ROW
        and m * n <= _MAX_PRODUCT
        and not (n >= _SLAB_ROW and parallel.slabs(stack, a.shape[0]) > 1)
    ):
        return "matmul"
    return "einsum" if n < _EINSUM_ROW else None


def by_kernel(a, b) -> bool:
    """Whether ``a * b`` is a stack of outer products that ``outer_product`` computes by a
    path of its own (compiled code calls the kernel for it rather than a multiply)."""
    return _route(a, b) is not None


def outer_product(xp, a, b):
    """``a * b`` (a kernel: ``xp`` the array module); a stack of outer products
    ``(..., m, 1) * (..., 1, n)`` goes through a BLAS matmul or einsum where that is faster.
    The values are the same either way (each element is one product); only a zero
    product's sign may differ: the matmul's and einsum's are +0."""
    route = _route(a, b) if type(a) is np.ndarray and a.ndim >= 3 else None  # (cheap first)
    if route == "matmul":
        # NumPy's matmul runs an inner dimension of 1 in a slow loop of its own; padded to 2
        # with zeros, the stack of outer products is one BLAS-backed matmul.
        a = np.concatenate([a, np.zeros_like(a)], -1)
        b = np.concatenate([b, np.zeros_like(b)], -2)
        return np.matmul(a, b)
    if route == "einsum":
        return by_einsum(a, b)
    if type(a) is np.ndarray and parallel.large(a, b):
        return parallel.ufunc(np.multiply, a, b)
    return a * b


_LAID_OUT_MIN = 2**16  # result elements: below, a copy into the layout costs less than this


def product(xp, a, b):
    """``a * b``, mul's kernel: outer_product, but a large product whose result PyTorch lays
    out as its operands are (not in C order) is written straight into that layout rather
    than copied there by the layout rule afterwards."""
    if (
        type(a) is np.ndarray
        and type(b) is np.ndarray
        and not (a.flags.c_contiguous and b.flags.c_contiguous)
        and a.dtype == b.dtype
        and a.dtype.kind in "fc"
    ):
        try:
            shape = np.broadcast_shapes(a.shape, b.shape)
        except ValueError:  # (the multiply raises it, for PyTorch's text)
            shape = None
        if shape is not None and math.prod(shape) >= _LAID_OUT_MIN:
            out = follow_inputs_empty(shape, a.dtype, (a, b))
            if out is not None:
                return np.multiply(a, b, out=out)
    return outer_product(xp, a, b)
