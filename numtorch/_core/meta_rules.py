"""Explicit metadata rules (``Op.meta``) for ops whose kernels call LAPACK through SciPy or
read values to decide their work (factorizations, solves, medians, matrix_exp): their
outputs' shapes, dtypes and strides as PyTorch's meta functions give them."""

from __future__ import annotations

import numpy as np

from .meta_array import MetaArray, c_strides


def _column_major(shape, dtype) -> MetaArray:
    """A batch of column-major matrices (LAPACK's layout, which PyTorch's results keep)."""
    shape = tuple(shape)
    if len(shape) < 2:
        return MetaArray(shape, dtype)
    d = np.dtype(dtype)
    st = c_strides(shape[:-2] + (shape[-1], shape[-2]), d.itemsize)
    return MetaArray(shape, d, st[:-2] + (st[-1], st[-2]))


def _square(name: str, a: MetaArray) -> None:
    if a.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are "
            f"{a.shape[-2]} by {a.shape[-1]} matrices"
        )


def factor(op, arrays: list, attrs: dict):
    """ldl_factor and lu_factor (and their ``_ex`` forms): the factor column-major, int32
    pivots of length min(m, n), and an int32 info per matrix."""
    a = arrays[0]
    if op.name.startswith("linalg_ldl"):
        _square("torch.linalg.ldl_factor_ex", a)
    elif a.ndim < 2:
        raise RuntimeError(
            "torch.linalg.lu_factor: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(a.shape)} instead"
        )
    k = min(a.shape[-2:])
    out = (_column_major(a.shape, a.dtype), MetaArray(a.shape[:-2] + (k,), np.int32))
    return out + (MetaArray(a.shape[:-2], np.int32),) if op.nout == 3 else out


def factor_solve(op, arrays: list, attrs: dict) -> MetaArray:
    """lu_solve and ldl_solve: B's matrices over the factor's and B's broadcast batch,
    column-major (row-major for lu_solve's ``left=False``)."""
    f, b = arrays[0], arrays[-1]
    shape = np.broadcast_shapes(f.shape[:-2], b.shape[:-2]) + b.shape[-2:]
    if not attrs.get("left", True):
        return MetaArray(shape, f.dtype)
    return _column_major(shape, f.dtype)


def solve_triangular(op, arrays: list, attrs: dict) -> MetaArray:
    """B's matrices over A's and B's broadcast batch, column-major."""
    a, b = arrays
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:]
    return _column_major(shape, np.result_type(a.dtype, b.dtype))


def _plu(batch, m: int, n: int, dtype, p: bool, lu: bool) -> tuple:
    k = min(m, n)
    none = MetaArray((0,), dtype)
    return (  # (the kernels' order: L, U, P)
        MetaArray(batch + (m, k), dtype) if lu else none,
        MetaArray(batch + (k, n), dtype) if lu else none,
        MetaArray(batch + (m, m), dtype) if p else none,
    )


def lu(op, arrays: list, attrs: dict) -> tuple:
    """linalg.lu's L (m x k), U (k x n) and P (none without pivoting)."""
    a = arrays[0]
    if a.ndim < 2:
        raise RuntimeError(
            "linalg.lu: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(a.shape)} instead"
        )
    return _plu(a.shape[:-2], *a.shape[-2:], a.dtype, attrs.get("pivot", True), True)


def lu_unpack(op, arrays: list, attrs: dict) -> tuple:
    """lu_unpack's L, U and P (each empty where not asked for)."""
    a = arrays[0]
    return _plu(a.shape[:-2], *a.shape[-2:], a.dtype, attrs["unpack_pivots"], attrs["unpack_data"])


def square_like(op, arrays: list, attrs: dict) -> MetaArray:
    """matrix_exp: the input's shape and dtype, contiguous."""
    a = arrays[0]
    _square("linalg.matrix_exp", a)
    return MetaArray(a.shape, a.dtype)


def to_scalar(op, arrays: list, attrs: dict) -> MetaArray:
    """median and nanmedian of everything: a 0-d result of the input's dtype."""
    return MetaArray((), arrays[0].dtype)


def nonzero_static(op, arrays: list, attrs: dict) -> MetaArray:
    """``size`` rows of indices, one column per dim, column-major."""
    return _column_major((attrs["size"], arrays[0].ndim), np.int64)
