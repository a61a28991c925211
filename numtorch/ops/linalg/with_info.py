"""The ``*_ex`` functions: linalg.inv_ex, linalg.cholesky_ex and linalg.solve_ex, which
return an info code per matrix instead of raising on a singular or indefinite one."""

from __future__ import annotations

import math

import numpy as np

from ..._core import dtype as dt
from ..._core.layout import column_major
from ..._core.meta import by_kernel
from ..._core.no_kernel import low_precision, unless_empty
from ..._core.op import composite, defop
from ..._opdb.samples import ErrorInput as E
from ..._opdb.samples import S
from ..comparison import where
from ..creation import eye, zeros
from ._common import _CX, LinAlgError, _float_only, _square, _tuple_out, linalg_solve_ex_rt, stacked
from ._lapack import _chol, _lu_info, _np_linalg, _or_nan, _pd_info, on_device, raise_on_info
from ._samples import _not_pd, _singular, _spd, _sq_errors, _wc
from .solvers import _is_vector_rhs, linalg_solve
from .triangular import _cholesky_jvp, _cholesky_vjp


def _inv_ex(xp, A, *, check_errors=False):
    _square("linalg.inv", A)
    if on_device(xp, A):  # CuPy's inverse of a singular matrix raises nothing: info first
        info = _lu_info(xp, A)
        if check_errors:
            raise_on_info("linalg.inv_ex", "inv", info, A.ndim > 2)
        return _or_nan(xp, xp.linalg.inv, A, info), info
    try:
        return xp.linalg.inv(A), xp.zeros(A.shape[:-2], xp.int32)
    except np.linalg.LinAlgError:
        if check_errors:
            _np_linalg("linalg.inv_ex", lambda A: xp.linalg.inv(A), A, "inv")
        info = _lu_info(xp, A)
        inv = lambda M: _np_linalg("linalg.inv_ex", lambda M: xp.linalg.inv(M), M, "inv")  # noqa: E731
        return _or_nan(xp, inv, A, info), info


def _cholesky_ex(xp, A, *, upper=False, check_errors=False):
    _square("linalg.cholesky", A)
    if on_device(xp, A):  # CuPy's factor of an indefinite matrix raises nothing: info first
        info = _pd_info(xp, A)
        if check_errors:
            raise_on_info("linalg.cholesky_ex", "pd", info, A.ndim > 2)
        L = _or_nan(xp, xp.linalg.cholesky, A, info)
        return (xp.swapaxes(L, -1, -2).conj() if upper else L), info
    try:
        L, info = _chol(xp, A), xp.zeros(A.shape[:-2], xp.int32)
    except np.linalg.LinAlgError:
        if check_errors:
            _np_linalg("linalg.cholesky_ex", lambda A: _chol(xp, A), A, "pd")
        info = _pd_info(xp, A)
        L = _or_nan(xp, lambda M: _chol(xp, M), A, info)
    return (xp.swapaxes(L, -1, -2).conj() if upper else L), info


def _linalg_inv_ex_samples(make):
    return [
        S((_wc(make, (3, 3)),)),
        S((_wc(make, (2, 2, 2)),), {"check_errors": True}),
        S((_wc(make, (0, 2, 2)),)),
    ]


def _linalg_inv_ex_error_samples(make):
    return [
        *_sq_errors("linalg.inv")(make),
        E(
            S((_singular(make, (2, 3, 3)),), {"check_errors": True}),
            LinAlgError,
            r"linalg.inv_ex: \(Batch element 1\): The diagonal element 1 is zero",
        ),
    ]


linalg_inv_ex_p = defop(
    "linalg_inv_ex",
    _inv_ex,
    nout=2,
    out_names=("inverse", "info"),
    saved_outputs=(0,),
    ndiff=1,
    layout=column_major,
    vjp=lambda g, result: -(result[0].mH @ g @ result[0].mH),
    jvp=lambda t, result: -(result[0] @ t @ result[0]),
    prepare=_float_only("linalg.inv"),
    batch_rule=stacked("linalg.inv_ex"),
    api="linalg.inv_ex",
    samples=_linalg_inv_ex_samples,
    error_samples=_linalg_inv_ex_error_samples,
    test=_CX,
    complex32=low_precision("linalg.inv"),
    autocast="fp32",
    meta=by_kernel,
)
linalg_inv_ex = linalg_inv_ex_p.fn


def _linalg_cholesky_ex_samples(make):
    return [
        S((_spd(make, (3, 3)),)),
        S((_spd(make, (2, 2, 2)),), {"upper": True, "check_errors": True}),
    ]


def _linalg_cholesky_ex_error_samples(make):
    return [
        *_sq_errors("linalg.cholesky")(make),
        E(
            S((_not_pd(make, (2, 3, 3)),), {"check_errors": True}),
            LinAlgError,
            r"linalg.cholesky_ex: \(Batch element 1\): The factorization could not be completed",
        ),
    ]


linalg_cholesky_ex_p = defop(
    "linalg_cholesky_ex",
    _cholesky_ex,
    nout=2,
    out_names=("L", "info"),
    saved_outputs=(0,),
    ndiff=1,
    layout=column_major,
    vjp=lambda g, result, upper: _cholesky_vjp(g, result[0], upper),
    jvp=lambda t, result, upper: _cholesky_jvp(t, result[0], upper),
    prepare=_float_only("linalg.cholesky"),
    batch_rule=stacked("linalg.cholesky_ex"),
    api="linalg.cholesky_ex",
    test={**_CX, "no_grad_test": True},  # reads one triangle: see tests/test_linalg_decomp.py
    samples=_linalg_cholesky_ex_samples,
    error_samples=_linalg_cholesky_ex_error_samples,
    complex32=unless_empty("cholesky_cpu"),  # (PyTorch's kernel)
    autocast="fp32",
    meta=by_kernel,
)
linalg_cholesky_ex = linalg_cholesky_ex_p.fn


def _solve_ex_samples(make):
    yield S((_wc(make, (3, 3)), make((3, 2))))
    yield S((_wc(make, (2, 3, 3)), make((2, 3))), {"check_errors": True})
    yield S((_wc(make, (3, 3)), make((2, 3))), {"left": False})


def _solve_ex_errors(make):
    yield E(
        S((_singular(make, (2, 3, 3)), make((3,))), {"check_errors": True}),
        LinAlgError,
        r"torch.linalg.solve_ex: \(Batch element 1\): The solver failed because the input matrix is singular",
    )
    yield E(S((make((3, 2)), make((3,)))), RuntimeError, "must be batches of square matrices")


@composite(
    samples=_solve_ex_samples,
    error_samples=_solve_ex_errors,
    nout=2,
    api="linalg.solve_ex",
    test=_CX,
    complex32=unless_empty("lu_cpu"),  # (PyTorch's LU refuses ComplexHalf)
    autocast="keep",  # (linalg_solve_ex is in no list; linalg_solve, written with it, is)
)
def solve_ex(A, B, *, left: bool = True, check_errors: bool = False, out=None):
    """(result, info): info > 0 marks a singular matrix of A (its result is NaN) instead of
    an error, unless ``check_errors``."""
    try:
        X = linalg_solve(A, B, left=left)
        info = zeros(A.shape[:-2], dtype=dt.int32, device=A.device)
    except LinAlgError:
        info = linalg_inv_ex(A)[1]
        bad = info > 0
        if check_errors:
            k = int(bad.reshape(-1).to(dt.uint8).argmax().item())
            where_ = f"(Batch element {k}): " if A.dim() > 2 else ""
            raise LinAlgError(
                f"torch.linalg.solve_ex: {where_}The solver failed because the input matrix is "
                "singular."
            ) from None
        mask = bad[..., None, None]
        X = linalg_solve(
            where(mask, eye(A.shape[-1], dtype=A.dtype, device=A.device), A), B, left=left
        )
        X = where(bad[..., None] if _is_vector_rhs(A, B) else mask, math.nan, X)
    return _tuple_out(linalg_solve_ex_rt((X, info)), out)
