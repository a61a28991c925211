"""Tensor-shaped linear algebra and the Vandermonde matrix: linalg.tensorinv,
linalg.tensorsolve, linalg.vander and torch.vander, and the linalg spellings of diagonal
and matmul. All are written with other ops (reshape, inv, solve, cumprod)."""

from __future__ import annotations

import math

import numpy as np

from ..._core import dtype as dt
from ..._core.no_kernel import low_precision, raises
from ..._core.op import composite
from ..._core.tensor import wrap_dims
from ..._opdb.samples import ErrorInput as E
from ..._opdb.samples import S
from ..creation import ones
from ..shape import cat
from ..views import diagonal as _diagonal
from ._common import _CX, _write
from ._samples import _wc
from .solvers import linalg_inv, linalg_solve


# ------------------------------------------------------------------ tensorinv
def _tensorinv_samples(make):
    yield S((_wc(make, (6, 6)).reshape(2, 3, 6),), {"ind": 2})
    yield S((_wc(make, (4, 4)).reshape(4, 2, 2),), {"ind": 1})
    yield S((_wc(make, (4, 4)).reshape(2, 2, 2, 2),))


def _tensorinv_errors(make):
    yield E(
        S((make((4, 6, 8, 3)),), {"ind": 0}),
        RuntimeError,
        "Expected a strictly positive integer for 'ind', but got 0",
    )
    yield E(
        S((make((4, 6, 8, 2)),), {"ind": 2}),
        RuntimeError,
        r"Expected self to satisfy the requirement prod\(self.shape\[ind:\]\) == "
        r"prod\(self.shape\[:ind\]\), but got 16 != 24",
    )


@composite(
    name="linalg_tensorinv",
    api="linalg.tensorinv",
    test=_CX,
    samples=_tensorinv_samples,
    error_samples=_tensorinv_errors,
    complex32=low_precision("linalg.inv"),
)
def tensorinv(A, ind: int = 2, *, out=None):
    """The inverse of A for tensordot(., ., ind): A reshaped to a square matrix, inverted and
    reshaped to A.shape[ind:] + A.shape[:ind]."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if math.prod(cols) != math.prod(rows):
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {math.prod(cols)} != {math.prod(rows)}"
        )
    n = math.prod(rows)
    res = linalg_inv(A.reshape(n, n)).reshape(cols + rows)
    return res if out is None else _write(out, res)


# ------------------------------------------------------------------ tensorsolve
def _tensorsolve_samples(make):
    yield S((_wc(make, (6, 6)).reshape(2, 3, 6), make((2, 3))))
    yield S((_wc(make, (6, 6)).reshape(6, 2, 3), make((6,))))
    A = np.moveaxis(_wc(make, (6, 6)).reshape(3, 2, 6), 2, 1).copy()  # (3, 6, 2)
    yield S((A, make((3, 2))), {"dims": (1,)})


def _tensorsolve_errors(make):
    yield E(
        S((make((2, 3, 5)), make((2, 3)))),
        RuntimeError,
        r"Expected self to satisfy the requirement prod\(self.shape\[other.ndim:\]\) == "
        r"prod\(self.shape\[:other.ndim\]\), but got 5 != 6",
    )


@composite(
    name="linalg_tensorsolve",
    api="linalg.tensorsolve",
    test=_CX,
    samples=_tensorsolve_samples,
    error_samples=_tensorsolve_errors,
    complex32="lu_cpu",  # (PyTorch's kernel)
)
def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.ndim) = B; ``dims`` of A are moved to the end first."""
    if dims is not None:
        dims = list(wrap_dims(tuple(dims), A.dim()))
        rest = [d for d in range(A.dim()) if d not in dims]
        A = A.permute(rest + dims)
    cols = tuple(A.shape[B.dim() :])
    n = B.numel()
    if math.prod(cols) != n:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
            f"prod(self.shape[:other.ndim]), but got {math.prod(cols)} != {n}"
        )
    res = linalg_solve(A.reshape(n, n), B.reshape(n)).reshape(cols)
    return res if out is None else _write(out, res)


# ------------------------------------------------------------------ vander
def _powers(x, N: int):
    """[1, x, x^2, ..., x^(N-1)] along a new last dim (integers and bools as int64)."""
    if x.dtype == dt.bool_ or not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = x.to(dt.int64)
    col = x.unsqueeze(-1)
    one = ones(tuple(col.shape), dtype=x.dtype, device=x.device)
    if N <= 1:
        return one.expand(tuple(x.shape) + (N,))
    return cat([one, col.expand(tuple(x.shape) + (N - 1,)).cumprod(-1)], -1)


def _linalg_vander_samples(make):
    yield S((make((4,)),))
    yield S((make((2, 3)),), {"N": 4})
    yield S((np.array([0.0, 2.0, -1.0], make.dtype),), {"N": 3})
    yield S((make((3,)),), {"N": 2})


def _linalg_vander_errors(make):
    yield E(S((make((3,)),), {"N": 1}), RuntimeError, "N must be greater than 1.")
    yield E(
        S((np.array([True, False]),)),
        RuntimeError,
        "linalg.vander supports floating point, complex, and integer tensors, but got Bool",
    )


_VANDER_COMPLEX32 = (
    "linalg.vander supports floating point, complex, and integer tensors, but got ComplexHalf"
)


@composite(
    name="linalg_vander",
    api="linalg.vander",
    test=_CX,
    samples=_linalg_vander_samples,
    error_samples=_linalg_vander_errors,
    complex32=raises(RuntimeError, _VANDER_COMPLEX32),
)
def linalg_vander(x, *, N=None):
    """The Vandermonde matrices of the last dim of x, in increasing powers."""
    if x.dtype == dt.bool_:
        raise RuntimeError(
            "linalg.vander supports floating point, complex, and integer tensors, but got Bool"
        )
    n = x.shape[-1] if x.dim() else 1
    N = n if N is None else N
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    return _powers(x, N)


def _vander_samples(make):
    yield S((make((4,)),))
    yield S((make((3,)), 2, True))
    yield S((make((3,)), 0))
    yield S((make((3,)),), {"N": 1})


def _vander_errors(make):
    yield E(S((make((2, 3)),)), RuntimeError, "x must be a one-dimensional tensor.")
    yield E(S((make((3,)), -1)), RuntimeError, "N must be non-negative.")


@composite(
    samples=_vander_samples,
    error_samples=_vander_errors,
    # PyTorch's own backward fails (an in-place cumprod_ on a saved view) whenever N > 1:
    # the gradient is checked against finite differences in tests/test_linalg.py
    test={**_CX, "no_grad_test": True},
)
def vander(x, N=None, increasing: bool = False):
    """torch.vander: decreasing powers of a vector x (increasing with ``increasing``)."""
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    N = x.shape[0] if N is None else N
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    res = _powers(x, N)
    return res if increasing or N == 0 else res.flip(-1)


# ------------------------------------------------------------------ linalg spellings
def _diagonal_samples(make):
    yield S((make((3, 4)),))
    yield S((make((2, 3, 4)),), {"offset": 1})
    yield S((make((2, 3, 4)),), {"offset": -1, "dim1": 0, "dim2": 2})


@composite(
    name="linalg_diagonal",
    api="linalg.diagonal",
    samples=_diagonal_samples,
    test=_CX,
)
def diagonal(A, *, offset: int = 0, dim1: int = -2, dim2: int = -1):
    """linalg.diagonal: torch.diagonal with the matrix dims last by default."""
    return _diagonal(A, offset, dim1, dim2)
