"""Matrix decompositions: linalg.qr, linalg.eigh and linalg.eigvalsh, linalg.svd and
linalg.svdvals."""

from __future__ import annotations

import numpy as np

from ..._core.dispatch import dispatch
from ..._core.layout import column_major
from ..._core.meta import by_kernel
from ..._core.no_kernel import unless_empty
from ..._core.op import NoKernel, defop
from ..._opdb.samples import ErrorInput as E
from ..._opdb.samples import S
from .._batching import front, lshape
from ..comparison import where
from ..shape import cat
from ._common import _CX, LinAlgError, _eye, _float_only, _min_rank, _square, _tri, stacked
from ._samples import _spd, _sq_errors, _wc
from .triangular import linalg_solve_triangular


def _no_eigh_kernel(name: str) -> NoKernel:
    """eigh's LAPACK kernel has no bool or integer version (after the shape checks)."""
    return NoKernel("bi", "linalg_eigh_cpu", first=lambda arrays, attrs: _square(name, arrays[0]))


def _qr_kernel(xp, A, mode="reduced"):
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'"
        )
    if A.ndim < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    if mode == "r":
        return xp.empty((0,), dtype=A.dtype), xp.linalg.qr(A, mode="r")
    Q, R = xp.linalg.qr(A, mode=mode)
    return Q, R


def _qr_rule(vmap, args, bdims, attrs):
    """Stacked QR; mode='r' returns one empty Q, which is not batched."""
    x, bd = args[0], bdims[0]
    if attrs["mode"] in ("reduced", "complete", "r"):
        _min_rank("linalg.qr", lshape(x, bd))
    out = dispatch(linalg_qr_p, (front(x, bd),), attrs)
    return out, (None if attrs["mode"] == "r" else 0, 0)


def _copyltu(M):
    """The Hermitian matrix with M's strict lower triangle and the real part of its
    diagonal."""
    low = M * _tri(M.shape[-1], M, -1)
    return low + low.mH + (M * _eye(M.shape[-1], M)).real


def _qr_check(mode, m, n):
    if mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
            "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr."
        )
    if mode == "complete" and m > n:
        raise RuntimeError(
            "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
        )


def _qr_tall_vjp(gQ, gR, Q, R):
    """A = QR with m >= n: gA = (gQ + Q copyltu(R gR^T - gQ^T Q)) R^{-T}."""
    M = R @ gR.mH - gQ.mH @ Q
    b = gQ + Q @ _copyltu(M)
    return linalg_solve_triangular(R.mH, b, upper=False, left=False)


def _qr_tall_jvp(tA, Q, R):
    dAR = linalg_solve_triangular(R, tA, upper=True, left=False)
    X = Q.mH @ dAR
    low = X * _tri(X.shape[-1], X, -1)
    upper_part = X - (low - low.mH)  # dR R^-1: X less Q^H dQ, which is skew-Hermitian
    if X.is_complex():  # (whose diagonal is imaginary: dR's is real, as R's)
        upper_part = upper_part - (X * _eye(X.shape[-1], X)).imag * 1j
    return dAR - Q @ upper_part, upper_part @ R


def _split_wide(x, m, n):
    return x.narrow(-1, 0, m), x.narrow(-1, m, n - m)


def _qr_vjp(g, A, result, mode):
    gQ, gR = g
    Q, R = result
    m, n = A.shape[-2], A.shape[-1]
    _qr_check(mode, m, n)
    if m >= n:
        return _qr_tall_vjp(gQ, gR, Q, R)
    # A = [X Y], X = Q R1 square, R2 = Q^T Y.
    (_, Y), (R1, _), (gR1, gR2) = _split_wide(A, m, n), _split_wide(R, m, n), _split_wide(gR, m, n)
    gX = _qr_tall_vjp(gQ + Y @ gR2.mH, gR1, Q, R1)
    return cat([gX, Q @ gR2], -1)


def _qr_jvp(t, A, result, mode):
    Q, R = result
    m, n = A.shape[-2], A.shape[-1]
    _qr_check(mode, m, n)
    if m >= n:
        return _qr_tall_jvp(t, Q, R)
    (_, Y), (R1, _), (tX, tY) = _split_wide(A, m, n), _split_wide(R, m, n), _split_wide(t, m, n)
    dQ, dR1 = _qr_tall_jvp(tX, Q, R1)
    return dQ, cat([dR1, dQ.mH @ Y + Q.mH @ tY], -1)


def _linalg_qr_samples(make):
    return [
        S((_wc(make, (3, 3)),)),
        S((make((4, 3)),)),
        S((make((2, 4, 2)),), {"mode": "reduced"}),
        S((_wc(make, (3, 3))[:, :2].T.copy(),)),
        S((make((2, 4)) + np.eye(2, 4, dtype=make.dtype) * 3,), {"mode": "complete"}),
    ]


def _linalg_qr_error_samples(make):
    return [
        E(S((make((3, 3)),), {"mode": "foo"}), RuntimeError, "qr received unrecognized mode 'foo'"),
    ]


linalg_qr_p = defop(
    "linalg_qr",
    _qr_kernel,
    nin=1,
    nout=2,
    out_names=("Q", "R"),
    saved_outputs=(0, 1),
    ndiff=2,
    vjp=_qr_vjp,
    jvp=_qr_jvp,
    layout=column_major,
    prepare=_float_only("linalg.qr"),
    batch_rule=_qr_rule,
    api="linalg.qr",
    samples=_linalg_qr_samples,
    error_samples=_linalg_qr_error_samples,
    test=_CX,
    complex32=unless_empty("geqrf_cpu"),  # (PyTorch's kernel)
    autocast="fp32",
    meta=by_kernel,
)
linalg_qr = linalg_qr_p.fn


def _eigh_kernel(xp, A, UPLO="L"):
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _square("linalg.eigh", A)
    w, v = xp.linalg.eigh(A, UPLO=UPLO.upper())
    return w, v


def _gap_inverse(w):
    """F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it."""
    E_ = w.unsqueeze(-2) - w.unsqueeze(-1)
    eye = _eye(w.shape[-1], w)
    return (E_ + eye).reciprocal() - eye


def _times_gap(F, P):
    """F * P, 0 where P is 0 even where F is infinite (a repeated eigen/singular value): a
    zero cotangent or tangent of the vectors contributes nothing, as an absent one does in
    PyTorch, instead of 0 * inf = NaN."""
    return where(P == 0, 0.0, F) * P


def _eigh_vjp(g, result):
    gL, gV = g
    L, V = result
    inner = _times_gap(_gap_inverse(L), V.mH @ gV) + gL.unsqueeze(-1) * _eye(L.shape[-1], L)
    gA = V @ inner @ V.mH
    return (gA + gA.mH) * 0.5


def _eigh_jvp(t, result):
    L, V = result
    P = V.mH @ t @ V
    eye = _eye(L.shape[-1], L)
    return (P * eye).sum(-1), V @ _times_gap(_gap_inverse(L), P)


def _linalg_eigh_samples(make):
    return [
        S((_spd(make, (3, 3)),)),
        S((_spd(make, (2, 3, 3)),), {"UPLO": "U"}),
    ]


def _linalg_eigh_error_samples(make):
    return [
        *_sq_errors("linalg.eigh")(make),
        E(
            S((_spd(make, (3, 3)), "X")),
            RuntimeError,
            "Expected UPLO argument to be 'L' or 'U', but got X",
        ),
    ]


linalg_eigh_p = defop(
    "linalg_eigh",
    _eigh_kernel,
    nin=1,
    nout=2,
    out_names=("eigenvalues", "eigenvectors"),
    saved_outputs=(0, 1),
    ndiff=2,
    vjp=_eigh_vjp,
    jvp=_eigh_jvp,
    prepare=_float_only("linalg.eigh"),
    batch_rule=stacked("linalg.eigh"),
    api="linalg.eigh",
    no_kernel=_no_eigh_kernel("linalg.eigh"),
    # eigenvector signs; see tests/test_linalg_decomp.py
    test={**_CX, "no_oracle": True, "no_grad_test": True},
    samples=_linalg_eigh_samples,
    error_samples=_linalg_eigh_error_samples,
    complex32=unless_empty("linalg_eigh_cpu"),  # (PyTorch's kernel)
)
linalg_eigh = linalg_eigh_p.fn


def _eigvalsh_kernel(xp, A, UPLO="L"):
    return _eigh_kernel(xp, A, UPLO)[0]


def _eigvalsh_vjp(g, A, result, UPLO):
    # (``result``, the eigenvalues: saved and version-checked, as by PyTorch's node, eigh's)
    V = linalg_eigh(A, UPLO)[1]
    return (V * g.unsqueeze(-2)) @ V.mH


def _eigvalsh_jvp(t, A, UPLO):
    V = linalg_eigh(A, UPLO)[1]
    d = ((V.mH @ t) * V.mT).sum(-1)  # diag(V^H t V), real for a Hermitian t
    return d.real if d.is_complex() else d


def _linalg_eigvalsh_samples(make):
    return [
        S((_spd(make, (3, 3)),)),
        S((_spd(make, (2, 3, 3)),), {"UPLO": "U"}),
    ]


linalg_eigvalsh_p = defop(
    "linalg_eigvalsh",
    _eigvalsh_kernel,
    nin=1,
    vjp=_eigvalsh_vjp,
    jvp=_eigvalsh_jvp,
    prepare=_float_only("linalg.eigvalsh"),
    batch_rule=stacked("linalg.eigh"),
    no_kernel=_no_eigh_kernel("linalg.eigvalsh"),
    api="linalg.eigvalsh",
    node_name="LinalgEighBackward0",  # (PyTorch's eigvalsh is eigh's)
    out=True,
    test={**_CX, "no_grad_test": True},  # reads one triangle: see tests/test_linalg_decomp.py
    samples=_linalg_eigvalsh_samples,
    complex32=unless_empty("linalg_eigh_cpu"),  # (eigh's kernel)
    autocast="fp32",
    meta=by_kernel,
)


def _svd_kernel(xp, A, full_matrices=True, *, driver=None):
    if driver is not None:
        raise RuntimeError(
            "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend."
        )
    if A.ndim < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    U, s, Vh = _svd_call(xp, A, full_matrices=full_matrices)
    return U, s, Vh


def _svd_call(xp, A, **kw):
    """``xp.linalg.svd``; LAPACK's failure on a matrix with NaN or inf in PyTorch's words."""
    try:
        return xp.linalg.svd(A, **kw)
    except np.linalg.LinAlgError:
        with np.errstate(invalid="ignore"):
            bad = ~((A - A) == 0).all(axis=(-2, -1))
        if not bad.any():
            raise
        batch = A.shape[:-2]
        at = int(np.flatnonzero(np.asarray(bad.get() if hasattr(bad, "get") else bad))[0])
        where = f"(Batch element {at}): " if batch else ""
        raise LinAlgError(
            f"linalg.svd: {where}The algorithm failed to converge because the input matrix "
            "contained non-finite values."
        ) from None


def _svd_gap(s):
    """F_ij = 1 / (s_j^2 - s_i^2) off the diagonal, 0 on it."""
    return _gap_inverse(s * s)


def _svd_vjp(g, result):
    gU, gS, gVh = g
    U, s, Vh = result
    m, n, k = U.shape[-2], Vh.shape[-1], s.shape[-1]
    if U.shape[-1] != k:
        U, gU = U.narrow(-1, 0, k), gU.narrow(-1, 0, k)
    if Vh.shape[-2] != k:
        Vh, gVh = Vh.narrow(-2, 0, k), gVh.narrow(-2, 0, k)
    F = _svd_gap(s)
    UtgU = U.mH @ gU
    VtgV = Vh @ gVh.mH
    sr, sc = s.unsqueeze(-2), s.unsqueeze(-1)
    inner = (
        _times_gap(F, UtgU - UtgU.mH) * sr
        + gS.unsqueeze(-1) * _eye(k, s)
        + sc * _times_gap(F, VtgV - VtgV.mH)
    )
    if UtgU.is_complex():  # the phase of each singular pair: i Im(diag(U^H gU)) / s
        inner = inner + (UtgU.diagonal(0, -2, -1).imag / s * 1j).diag_embed()
    gA = U @ inner @ Vh
    if m > k:
        gA = gA + ((gU - U @ UtgU) / sr) @ Vh
    if n > k:
        gA = gA + (U / sr) @ (gVh - VtgV.mH @ Vh)
    return gA


def _svd_jvp(t, A, result, full_matrices):
    U, s, Vh = result
    m, n, k = U.shape[-2], Vh.shape[-1], s.shape[-1]
    if full_matrices and m != n:
        raise NotImplementedError(
            "numtorch: forward-mode linalg.svd needs full_matrices=False for non-square inputs"
        )
    V = Vh.mH
    dP = U.mH @ t @ V
    F = _svd_gap(s)
    sr, sc = s.unsqueeze(-2), s.unsqueeze(-1)
    dS = (dP * _eye(k, s)).sum(-1)
    inner_U = _times_gap(F, dP * sr + sc * dP.mH)
    inner_V = _times_gap(F, sc * dP + dP.mH * sr)
    if dP.is_complex():  # the phase of each singular pair, i Im(diag(dP)) / s, split as PyTorch's
        phase = (dP.diagonal(0, -2, -1).imag / (2 * s) * 1j).diag_embed()
        inner_U, inner_V = inner_U + phase, inner_V - phase
    dU = U @ inner_U
    dV = V @ inner_V
    if m > k:
        dU = dU + (t @ V - U @ dP) / sr
    if n > k:
        dV = dV + (t.mH @ U - V @ dP.mH) / sr
    return dU, dS, dV.mH


def _linalg_svd_samples(make):
    return [
        S((make((4, 3)),), {"full_matrices": False}),
        S((make((2, 4)),), {"full_matrices": False}),
        S((make((3, 3)),)),
        S((make((2, 3, 2)),), {"full_matrices": False}),
    ]


linalg_svd_p = defop(
    "linalg_svd",
    _svd_kernel,
    nin=1,
    nout=3,
    out_names=("U", "S", "Vh"),
    saved_outputs=(0, 1, 2),
    ndiff=3,
    vjp=_svd_vjp,
    jvp=_svd_jvp,
    prepare=_float_only("linalg.svd"),
    batch_rule=stacked("linalg.svd"),
    api="linalg.svd",
    # singular vector signs; complex singular vectors have a phase, so a random cotangent of
    # U or Vh is ill-defined (PyTorch raises on it): tests/test_linalg_decomp.py checks
    # complex inputs with phase-invariant losses and the jvp against PyTorch's
    test={"no_oracle": True},
    samples=_linalg_svd_samples,
    complex32=unless_empty("linalg_svd_cpu"),  # (PyTorch's kernel)
    meta=by_kernel,
)
linalg_svd = linalg_svd_p.fn


def _svdvals_kernel(xp, A, *, driver=None):
    if A.ndim < 2:
        raise RuntimeError("linalg.svdvals: The input tensor A must have at least 2 dimensions.")
    return _svd_call(xp, A, compute_uv=False)


def _svdvals_vjp(g, A):
    U, _, Vh = linalg_svd(A, False)
    return (U * g.unsqueeze(-2)) @ Vh


def _svdvals_jvp(t, A):
    U, _, Vh = linalg_svd(A, False)
    d = ((U.mH @ t) * Vh.conj()).sum(-1)  # Re diag(U^H t V)
    return d.real if d.is_complex() else d


linalg_svdvals_p = defop(
    "linalg_svdvals",
    _svdvals_kernel,
    vjp=_svdvals_vjp,
    jvp=_svdvals_jvp,
    prepare=_float_only("linalg.svd"),
    batch_rule=stacked("linalg.svdvals"),
    api="linalg.svdvals",
    out=True,
    node_name="LinalgSvdBackward0",
    samples=lambda make: [S((make((4, 3)),)), S((make((2, 4)),)), S((make((2, 3, 3)),))],
    test=_CX,
    complex32=unless_empty("linalg_svd_cpu"),  # (svd's kernel)
    autocast="fp32",
    meta=by_kernel,
)
linalg_svdvals = linalg_svdvals_p.fn
