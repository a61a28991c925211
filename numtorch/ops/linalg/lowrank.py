"""Randomized low-rank approximations: torch.svd_lowrank and torch.pca_lowrank (Halko,
Martinsson and Tropp's range finder with ``niter`` subspace iterations), written with
numtorch ops, so they differentiate and batch like them. The random test matrix comes from
numtorch's generator, so the result matches PyTorch's exactly only where q covers the rank
of A."""

from __future__ import annotations

from ..random import randn
from .decompositions import linalg_qr, linalg_svd


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
