"""Randomized low-rank approximations and extreme eigenpairs: torch.svd_lowrank,
torch.pca_lowrank (Halko,
Martinsson and Tropp's range finder with ``niter`` subspace iterations), written with
numtorch ops, so they differentiate and batch like them. The random test matrix comes from
numtorch's generator, so the result matches PyTorch's exactly only where q covers the rank
of A. torch.lobpcg's pairs come from a dense eigensolver (see lobpcg)."""

from __future__ import annotations

from ..random import randn
from .decompositions import linalg_eigh, linalg_qr, linalg_svd
from .triangular import linalg_cholesky, linalg_solve_triangular


def _basis(A, q: int, niter: int):
    """An orthonormal basis Q (m x q) of the range of A, refined by subspace iterations."""
    R = randn(tuple(A.shape[:-2]) + (A.shape[-1], q), dtype=A.dtype, device=A.device)
    Q = linalg_qr(A @ R)[0]
    for _ in range(niter):
        Q = linalg_qr(A.mH @ Q)[0]
        Q = linalg_qr(A @ Q)[0]
    return Q


def _lowrank(A, q: int, niter: int):
    m, n = A.shape[-2], A.shape[-1]
    if m < n:  # work on A^H, whose range is the smaller one
        U, S, V = _lowrank(A.mH, q, niter)
        return V, S, U
    Q = _basis(A, q, niter)
    U, S, Vh = linalg_svd(Q.mH @ A, False)
    return Q @ U, S, Vh.mH


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A - M ~ U diag(S) V^H, of rank at most q."""
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    return _lowrank(A if M is None else A - M, q, niter)


def pca_lowrank(A, q=None, center: bool = True, niter: int = 2):
    """(U, S, V): svd_lowrank of A with its column means taken away (``center``)."""
    m, n = A.shape[-2:]
    q = min(6, m, n) if q is None else q
    if not (isinstance(q, int) and 0 <= q <= min(m, n)):
        raise ValueError(
            f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}"
        )
    if not (isinstance(niter, int) and niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if center:
        A = A - A.mean(-2, keepdim=True)
    return _lowrank(A, q, niter)


def lobpcg(
    A,
    k=None,
    B=None,
    X=None,
    n=None,
    iK=None,
    niter=None,
    tol=None,
    largest=None,
    method=None,
    tracker=None,
    ortho_iparams=None,
    ortho_fparams=None,
    ortho_bparams=None,
):
    """(E, X): the k largest (or smallest) eigenpairs of A x = E B x for symmetric A and
    positive-definite B, E ordered from the extreme inwards and X^T B X = I.

    LOBPCG converges to these pairs; numtorch computes them with a dense symmetric
    eigensolver (after B's Cholesky factor), so the iteration's own parameters (X, n, iK,
    niter, tol, method, tracker, ortho_*) only enter the checks, and the gradients are
    those of the exact pairs (PyTorch's LOBPCG backward, for B None)."""
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and tuple(A.shape) != tuple(B.shape):
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(
            f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller "
            f"than 3 x the number of requested eigenpairs (={n})"
        )
    largest = True if largest is None else largest
    if B is None:
        E, V = linalg_eigh(A)
    else:
        L = linalg_cholesky(B)
        C = linalg_solve_triangular(L, A, upper=False)
        C = linalg_solve_triangular(L, C.mH, upper=False).mH
        E, V = linalg_eigh(C)
        V = linalg_solve_triangular(L.mH, V, upper=True)
    if largest:
        E, V = E.narrow(-1, m - k, k).flip(-1), V.narrow(-1, m - k, k).flip(-1)
    else:
        E, V = E.narrow(-1, 0, k), V.narrow(-1, 0, k)
    return E, V
