"""LAPACK's outcomes in PyTorch's terms: a failed factorization raised as LinAlgError with
torch's wording (which batch element, which pivot or minor), the info codes of the
``*_ex`` functions, and scipy.linalg or cupyx.scipy.linalg by backend."""

from __future__ import annotations

import numpy as np

from ..._core.device import xp_of
from ..._core.meta_array import has_values
from ._common import LinAlgError


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
    """Run a numpy.linalg kernel ``fn(A)``; on failure raise LinAlgError with torch's wording."""
    try:
        return fn(A)
    except np.linalg.LinAlgError as e:
        if kind != "pd":
            with np.errstate(invalid="ignore"):
                nonfinite = ~((A - A) == 0).all(axis=(-2, -1))
            if nonfinite.any():
                # LAPACK lets NaN/inf through where PyTorch calls it, NumPy's LU may stop on
                # them: those matrices give NaN, the others their result (or their error).
                xp = xp_of(A)
                keep = nonfinite[..., None, None]
                X = _np_linalg(
                    name, fn, xp.where(keep, xp.eye(A.shape[-1], dtype=A.dtype), A), kind
                )
                return xp.where(keep, xp.asarray(xp.nan, X.dtype), X)
        A = np.asarray(A.get() if hasattr(A, "get") else A)
        batch, where, bad = A.shape[:-2], "", A
        for idx in np.ndindex(batch):
            if _fails(A[idx], kind):
                where = (
                    f"(Batch element {int(np.ravel_multi_index(idx, batch))}): " if batch else ""
                )
                bad = A[idx]
                break
        if kind == "pd":
            what = (
                "The factorization could not be completed because the input is not positive-definite "
                f"(the leading minor of order {_not_pd_at(bad)} is not positive-definite)."
            )
        elif kind == "inv":
            what = (
                f"The diagonal element {_singular_at(bad)} is zero, the inversion could not be "
                "completed because the input matrix is singular."
            )
        else:
            what = "The solver failed because the input matrix is singular."
        prefix = "torch.linalg.solve" if kind == "solve" and where else name
        raise LinAlgError(f"{prefix}: {where}{what}") from e


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

    host = np.asarray(A.get() if hasattr(A, "get") else A)
    if host.size == 0:
        return xp.zeros(A.shape[:-2], xp.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lu, _ = scipy.linalg.lu_factor(host, check_finite=False)
    zero = np.diagonal(lu, axis1=-2, axis2=-1) == 0
    info = np.where(zero.any(-1), zero.argmax(-1) + 1, 0).astype(np.int32)
    return xp.asarray(info)


def _pd_info(xp, A):
    """The order of each matrix's first leading minor that is not positive-definite (0:
    none), from its lower triangle: Cholesky column by column over the whole batch."""
    n = A.shape[-1]
    L = xp.zeros_like(A)
    info = xp.zeros(A.shape[:-2], xp.int32)
    with np.errstate(all="ignore"):
        for j in range(n):
            d = A[..., j, j] - (L[..., j, :j] ** 2).sum(-1)
            info = xp.where(~(d > 0) & (info == 0), j + 1, info).astype(xp.int32)
            L[..., j, j] = xp.sqrt(xp.where(info > 0, 1.0, d))
            below = (L[..., j + 1 :, :j] * L[..., None, j, :j]).sum(-1)
            L[..., j + 1 :, j] = (A[..., j + 1 :, j] - below) / L[..., j, j][..., None]
    return info


def _or_nan(xp, fn, A, info):
    """fn(A) for the matrices with info 0; NaN for the others (their result is unspecified)."""
    bad = (info > 0)[..., None, None]
    X = fn(xp.where(bad, xp.eye(A.shape[-1], dtype=A.dtype), A))
    return xp.where(bad, xp.asarray(xp.nan, X.dtype), X)
