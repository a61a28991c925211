"""Triangular matrices: linalg.solve_triangular and the Cholesky factor (linalg.cholesky)."""

from __future__ import annotations

import numpy as np

from ..._core import meta_rules
from ..._core.dispatch import dispatch
from ..._core.layout import column_major
from ..._core.meta import by_kernel
from ..._core.no_kernel import unless_empty
from ..._core.op import NoKernel, defop
from ..._opdb.samples import ErrorInput as E
from ..._opdb.samples import S
from .._batching import lshape
from ._common import _CX, LinAlgError, _align, _eye, _float_only, _min_rank, _square, _tri, stacked
from ._lapack import _chol, _np_linalg, _scipy_linalg
from ._samples import _spd, _sq_errors, _wc


def _solve_tri_kernel(xp, A, B, *, upper, left=True, unitriangular=False):
    sl = _scipy_linalg(xp)
    _min_rank("linalg.solve_triangular", A.shape)
    _min_rank("linalg.solve_triangular", B.shape, "B")
    _square("linalg.solve_triangular", A)
    if not left:
        A, B, upper = xp.swapaxes(A, -1, -2), xp.swapaxes(B, -1, -2), not upper
    if A.shape[-1] != B.shape[-2]:
        raise RuntimeError(
            f"linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B "
            f"({A.shape[-2]}x{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})"
        )
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    try:
        if not batch:
            X = sl.solve_triangular(
                A, B, lower=not upper, unit_diagonal=unitriangular, check_finite=False
            )
        else:  # a stack: one vectorized solve of the triangular parts (scipy loops per matrix)
            T = xp.triu(A) if upper else xp.tril(A)
            if unitriangular:
                n = T.shape[-1]
                T = T.copy()
                T[..., range(n), range(n)] = 1
            X = xp.linalg.solve(
                xp.broadcast_to(T, batch + T.shape[-2:]), xp.broadcast_to(B, batch + B.shape[-2:])
            )
    except np.linalg.LinAlgError:  # a zero on the diagonal: PyTorch's trsm divides by it
        X = _substitute(xp, A, B, batch, upper, unitriangular)
    return xp.swapaxes(X, -1, -2) if not left else X


def _substitute(xp, A, B, batch, upper, unitriangular):
    """A X = B by substitution, row by row as BLAS's trsm solves it: a zero on the diagonal
    gives inf and NaN rather than an error."""
    T = xp.broadcast_to(A, batch + A.shape[-2:])
    X = xp.broadcast_to(B, batch + B.shape[-2:]).copy()
    n = T.shape[-1]
    with np.errstate(all="ignore"):
        for i in range(n - 1, -1, -1) if upper else range(n):
            rest = slice(i + 1, n) if upper else slice(0, i)
            X[..., i, :] -= (T[..., i, None, rest] @ X[..., rest, :])[..., 0, :]
            if not unitriangular:
                d = T[..., i, i, None]
                x = X[..., i, :] / d
                if x.dtype.kind == "c":  # PyTorch's complex division by 0 is NaN in both parts
                    x = xp.where(d == 0, xp.asarray(complex(np.nan, np.nan), x.dtype), x)
                X[..., i, :] = x
    return X


def _solve_tri_rule(vmap, args, bdims, attrs):
    """Both operands batch-first with the same number of dims (the kernel broadcasts)."""
    (A, B), (bA, bB) = args, bdims
    sA, sB = lshape(A, bA), lshape(B, bB)
    _min_rank("linalg.solve_triangular", sA)
    _min_rank("linalg.solve_triangular", sB, "B")
    r = max(len(sA), len(sB))
    return dispatch(linalg_solve_triangular_p, (_align(A, bA, r), _align(B, bB, r)), attrs), 0


def _tri_part(x, upper, unitriangular):
    """The part of x that a triangular solve reads (strict when unitriangular)."""
    k = 1 if unitriangular else 0
    return x * _tri(x.shape[-1], x, -k if not upper else k, upper)


def _solve_tri_vjp_B(g, A, upper, left, unitriangular):
    return linalg_solve_triangular(A.mH, g, upper=not upper, left=left, unitriangular=unitriangular)


def _solve_tri_vjp_A(g, A, result, upper, left, unitriangular):
    gB = _solve_tri_vjp_B(g, A, upper, left, unitriangular)
    gA = -(gB @ result.mH) if left else -(result.mH @ gB)
    return _tri_part(gA, upper, unitriangular)


def _solve_tri_jvp(tA, tB, A, result, upper, left, unitriangular):
    tA = _tri_part(tA, upper, unitriangular)
    rhs = tB - (tA @ result if left else result @ tA)
    return linalg_solve_triangular(A, rhs, upper=upper, left=left, unitriangular=unitriangular)


def _linalg_solve_triangular_samples(make):
    return [
        S((_wc(make, (3, 3)), make((3, 2))), {"upper": True}),
        S((_wc(make, (3, 3)), make((3, 2))), {"upper": False}),
        S((_wc(make, (2, 3, 3)), make((3, 1))), {"upper": True, "unitriangular": True}),
        S((_wc(make, (3, 3)), make((2, 3))), {"upper": False, "left": False}),
        S(
            (_wc(make, (2, 2, 2)), make((2, 2, 2))),
            {"upper": True, "left": False, "unitriangular": True},
        ),
    ]


def _linalg_solve_triangular_error_samples(make):
    return [
        E(
            S((_wc(make, (3, 3)), make((3,))), {"upper": True}),
            RuntimeError,
            "The input tensor B must have at least 2 dimensions.",
        ),
        # upper is keyword-only, and required
        E(
            S((_wc(make, (3, 3)), make((3, 2)))),
            TypeError,
            r'^linalg_solve_triangular\(\) missing 1 required positional arguments: "upper"$',
        ),
        E(
            S((_wc(make, (3, 3)), make((3, 2)), True)),
            TypeError,
            r"^linalg_solve_triangular\(\) takes from 3 to 2 positional arguments but 3 were given$",
        ),
    ]


linalg_solve_triangular_p = defop(
    "linalg_solve_triangular",
    _solve_tri_kernel,
    nin=2,
    layout=column_major,
    vjp=(_solve_tri_vjp_A, _solve_tri_vjp_B),
    jvp=_solve_tri_jvp,
    prepare=_float_only("linalg.solve_triangular"),
    batch_rule=_solve_tri_rule,
    no_kernel=NoKernel(
        "bi",
        "triangular_solve_cpu",
        inputs=(0,),
        first=lambda arrays, attrs: _min_rank("linalg.solve_triangular", arrays[0].shape),
    ),
    api="linalg.solve_triangular",
    out=True,
    samples=_linalg_solve_triangular_samples,
    error_samples=_linalg_solve_triangular_error_samples,
    test=_CX,
    complex32="triangular_solve_cpu",  # (PyTorch's kernel)
    meta=meta_rules.solve_triangular,
)
linalg_solve_triangular = linalg_solve_triangular_p.fn


def _phi(x):
    """Lower triangle with the diagonal halved."""
    n = x.shape[-1]
    return x * (_tri(n, x, -1) + _eye(n, x) * 0.5)


def _cholesky_kernel(xp, A, *, upper=False):
    _square("linalg.cholesky", A)
    L = _np_linalg("linalg.cholesky", lambda A: _chol(xp, A), A, "pd")
    return xp.swapaxes(L, -1, -2).conj() if upper else L


def _cholesky_vjp(g, result, upper):
    """L^-H H L^-1, H = (T + tril(T, -1)^H) / 2 for T = tril(L^H gL) (PyTorch's form: the
    diagonal keeps its imaginary part)."""
    L, gL = (result.mH, g.mH) if upper else (result, g)
    M = L.mH @ gL
    n = M.shape[-1]
    H = (M * _tri(n, M, 0) + (M * _tri(n, M, -1)).mH) * 0.5
    X = linalg_solve_triangular(L.mH, H, upper=True)
    return linalg_solve_triangular(L, X, upper=False, left=False)


def _cholesky_jvp(t, result, upper):
    L = result.mH if upper else result
    X = linalg_solve_triangular(L, t, upper=False)
    X = linalg_solve_triangular(L.mH, X, upper=True, left=False)
    tL = L @ _phi(X)
    return tL.mH if upper else tL


def _linalg_cholesky_samples(make):
    return [
        S((_spd(make, (3, 3)),)),
        S((_spd(make, (2, 2, 2)),), {"upper": True}),
    ]


def _linalg_cholesky_error_samples(make):
    return [
        *_sq_errors("linalg.cholesky")(make),
        E(S((-np.eye(3, dtype=np.float32),)), LinAlgError, "not positive-definite"),
    ]


linalg_cholesky_p = defop(
    "linalg_cholesky",
    _cholesky_kernel,
    vjp=_cholesky_vjp,
    jvp=_cholesky_jvp,
    layout=column_major,
    prepare=_float_only("linalg.cholesky"),
    batch_rule=stacked("linalg.cholesky"),
    api="linalg.cholesky",
    node_name="LinalgCholeskyExBackward0",  # (PyTorch's linalg.cholesky is cholesky_ex's)
    out=True,
    test={**_CX, "no_grad_test": True},  # reads one triangle: see tests/test_linalg_decomp.py
    samples=_linalg_cholesky_samples,
    error_samples=_linalg_cholesky_error_samples,
    complex32=unless_empty("cholesky_cpu"),  # (PyTorch's kernel)
    autocast="fp32",
    meta=by_kernel,
)
linalg_cholesky = linalg_cholesky_p.fn
