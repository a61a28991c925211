"""LAPACK's outcomes in PyTorch's terms: a failed factorization raised as LinAlgError with
torch's wording (which batch element, which pivot or minor), the info codes of the
``*_ex`` functions, and scipy.linalg or cupyx.scipy.linalg by backend."""

from __future__ import annotations

import numpy as np

from ..._core.device import cupyx, xp_of
from ..._core.meta_array import has_values
from ._common import LinAlgError


def on_device(xp, A) -> bool:
    """Whether A is CuPy data: CuPy's linalg reports no failure unless asked to."""
    return xp is not np and has_values(A)


def _singular_at(m) -> int:
    """1-based index of the first zero pivot of an LU factorization of m (0: none)."""
    import warnings

    import scipy.linalg

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lu, _ = scipy.linalg.lu_factor(m, check_finite=False)
    zero = np.flatnonzero(np.diagonal(lu) == 0)
    return int(zero[0]) + 1 if zero.size else 0


def _chol(xp, m):
    """The Cholesky factor; a NaN pivot fails as a non-positive one does (LAPACK's potrf in
    PyTorch stops there, NumPy's lets it through)."""
    L = xp.linalg.cholesky(m)
    if m.size and has_values(L) and xp.isnan(xp.diagonal(L, axis1=-2, axis2=-1)).any():
        raise np.linalg.LinAlgError("not positive-definite")
    return L


def _not_pd_at(m) -> int:
    """The order of the first leading minor of m that is not positive-definite."""
    for k in range(1, m.shape[-1] + 1):
        try:
            _chol(np, m[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return m.shape[-1]


def _fails(m, kind: str) -> bool:
    if kind != "pd":
        return _singular_at(m) > 0
    try:
        _chol(np, m)
        return False
    except np.linalg.LinAlgError:
        return True


def _np_linalg(name, fn, A, kind):
    """Run a numpy.linalg kernel ``fn(A)``; on failure raise LinAlgError with torch's wording.
    On the GPU, CuPy is asked to check its info codes (a synchronization, as PyTorch's
    check of its info codes is)."""
    xp = xp_of(A)
    try:
        if on_device(xp, A):
            with cupyx().errstate(linalg="raise"):
                return fn(A)
        return fn(A)
    except np.linalg.LinAlgError as e:
        if kind != "pd":
            with np.errstate(invalid="ignore"):
                nonfinite = ~((A - A) == 0).all(axis=(-2, -1))
            if nonfinite.any():
                # LAPACK lets NaN/inf through where PyTorch calls it, NumPy's LU may stop on
                # them: those matrices give NaN, the others their result (or their error).
                keep = nonfinite[..., None, None]
                X = _np_linalg(
                    name, fn, xp.where(keep, xp.eye(A.shape[-1], dtype=A.dtype), A), kind
                )
                return xp.where(keep, xp.asarray(xp.nan, X.dtype), X)
        failed = _first_failure(xp, A, kind)
        if failed is None:
            raise
        raise LinAlgError(_failure_text(name, kind, A.ndim > 2, *failed)) from e


def _first_failure(xp, A, kind: str):
    """(batch element, info code) of the first matrix of A whose factorization fails; None
    if none does. On the GPU the info codes are computed there and only they are copied."""
    batch = A.shape[:-2]
    if on_device(xp, A):
        info = (_pd_info if kind == "pd" else _lu_info)(xp, A).reshape(-1).get()
        bad = np.flatnonzero(info > 0)
        if bad.size:
            return int(bad[0]), int(info[bad[0]])
        A = A.get()  # rounding put a pivot off zero here: LAPACK's own verdict decides
    for idx in np.ndindex(batch):
        if _fails(A[idx], kind):
            code = _not_pd_at(A[idx]) if kind == "pd" else _singular_at(A[idx])
            return int(np.ravel_multi_index(idx, batch)) if batch else 0, code
    return None


def _failure_text(name: str, kind: str, batched: bool, element: int, code: int) -> str:
    """PyTorch's text for a failed factorization: ``code`` is LAPACK's info of the matrix."""
    where = f"(Batch element {element}): " if batched else ""
    if kind == "pd":
        what = (
            "The factorization could not be completed because the input is not positive-definite "
            f"(the leading minor of order {code} is not positive-definite)."
        )
    elif kind == "inv":
        what = (
            f"The diagonal element {code} is zero, the inversion could not be "
            "completed because the input matrix is singular."
        )
    else:
        what = "The solver failed because the input matrix is singular."
    prefix = f"torch.{name}" if kind == "solve" else name
    return f"{prefix}: {where}{what}"


def raise_on_info(name: str, kind: str, info, batched: bool) -> None:
    """Raise PyTorch's LinAlgError for the first matrix whose info code is not 0 (reads the
    codes on the host: the synchronization PyTorch's ``check_errors`` makes too)."""
    codes = np.asarray(info.get() if on_device(xp_of(info), info) else info).reshape(-1)
    bad = np.flatnonzero(codes > 0)
    if bad.size:
        raise LinAlgError(_failure_text(name, kind, batched, int(bad[0]), int(codes[bad[0]])))


def _scipy_linalg(xp):
    """scipy.linalg for NumPy arrays, cupyx.scipy.linalg for CuPy arrays."""
    if xp is np:
        import scipy.linalg

        return scipy.linalg
    from ..._core.device import cupyx

    return cupyx().scipy.linalg


def _lu_info(xp, A):
    """1-based index of the first zero pivot of each matrix's LU factorization (0: none)."""
    import warnings

    import scipy.linalg

    if A.size == 0:
        return xp.zeros(A.shape[:-2], xp.int32)
    if on_device(xp, A):
        return _lu_info_by_elimination(xp, A)
    host = A
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lu, _ = scipy.linalg.lu_factor(host, check_finite=False)
    zero = np.diagonal(lu, axis1=-2, axis2=-1) == 0
    info = np.where(zero.any(-1), zero.argmax(-1) + 1, 0).astype(np.int32)
    return xp.asarray(info)


def _pivot_size(xp, x):
    """|Re| + |Im|: how LAPACK's getrf compares pivot candidates."""
    return xp.abs(x.real) + xp.abs(x.imag) if x.dtype.kind == "c" else xp.abs(x)


def _lu_info_by_elimination(xp, A):
    """getrf's info, on A's device. Which matrices are singular is the device's own LU's
    verdict (slogdet's sign 0: CuPy's batched LU keeps its info codes to itself); the zero
    pivot's place comes from Gaussian elimination with partial pivoting, column by column
    over the whole batch (its smallest pivot where rounding kept that one off zero)."""
    n = A.shape[-1]
    U = A.reshape((-1, n, n)).copy()
    rows = xp.arange(U.shape[0])
    pivots = xp.zeros(U.shape, U.real.dtype)[:, 0]
    with np.errstate(all="ignore"):
        for j in range(n):
            p = xp.argmax(_pivot_size(xp, U[:, j:, j]), axis=-1) + j
            pivot_row = U[rows, p]
            U[rows, p] = U[:, j].copy()
            U[:, j] = pivot_row
            pivot = pivot_row[:, j]
            pivots[:, j] = xp.abs(pivot)
            factors = U[:, j + 1 :, j] / xp.where(pivot == 0, 1, pivot)[:, None]
            U[:, j + 1 :, j + 1 :] -= factors[:, :, None] * pivot_row[:, None, j + 1 :]
    zero = pivots == 0
    at = xp.where(zero.any(-1), zero.argmax(-1), xp.argmin(pivots, axis=-1)) + 1
    singular = xp.linalg.slogdet(A)[0].reshape(-1) == 0
    return xp.where(singular, at, 0).astype(xp.int32).reshape(A.shape[:-2])


def _pd_info(xp, A):
    """The order of each matrix's first leading minor that is not positive-definite (0:
    none), from its lower triangle: Cholesky column by column over the whole batch."""
    n = A.shape[-1]
    L = xp.zeros_like(A)
    info = xp.zeros(A.shape[:-2], xp.int32)
    with np.errstate(all="ignore"):
        for j in range(n):
            row = L[..., j, :j]
            d = A[..., j, j].real - (row * row.conj()).real.sum(-1)
            info = xp.where(~(d > 0) & (info == 0), j + 1, info).astype(xp.int32)
            L[..., j, j] = xp.sqrt(xp.where(info > 0, 1.0, d))
            below = (L[..., j + 1 :, :j] * row[..., None, :].conj()).sum(-1)
            L[..., j + 1 :, j] = (A[..., j + 1 :, j] - below) / L[..., j, j][..., None]
    return info


def _or_nan(xp, fn, A, info):
    """fn(A) for the matrices with info 0; NaN for the others (their result is unspecified)."""
    bad = (info > 0)[..., None, None]
    X = fn(xp.where(bad, xp.eye(A.shape[-1], dtype=A.dtype), A))
    return xp.where(bad, xp.asarray(xp.nan, X.dtype), X)
