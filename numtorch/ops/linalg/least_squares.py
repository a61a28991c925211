"""Least squares: linalg.lstsq with LAPACK's drivers gels, gelsy (PyTorch's CPU default),
gelsd and gelss, and the fields PyTorch fills for each.

The solution is pinv(A) B, so its gradient is pinv's (for a constant rank): with
P = pinv(A), dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P. The squared
residuals r_j = |A x_j - b_j|^2 (where they are computed) have gA = 2 R diag(g) X^H and
gB = -2 R diag(g) with R = A X - B (the solution's own change drops out at the optimum).
"""

from __future__ import annotations

import numpy as np

from ..._core import dtype as dt
from ..._core.dispatch import dispatch
from ..._core.no_kernel import raises
from ..._core.op import defop
from ..._opdb.samples import ErrorInput as E
from ..._opdb.samples import S
from .._batching import front, lshape
from ._common import _CX, _align, _eye, _tuple_out, return_type
from ._samples import _well_conditioned
from .composites import pinv

linalg_lstsq_rt = return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _host(a):
    return np.asarray(a.get() if hasattr(a, "get") else a)


def _vector_b(A_ndim: int, B_ndim: int) -> bool:
    return B_ndim == A_ndim - 1


def _lstsq_checks(A, B, driver):
    if A.dtype != B.dtype:
        raise RuntimeError(
            "torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
            f"input's dtype {dt.of(A).scalar_name} and other's dtype {dt.of(B).scalar_name}"
        )
    if A.dtype.kind not in "fc":
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if not (A.ndim >= B.ndim and A.ndim - B.ndim <= 1) or B.ndim < 1:
        raise RuntimeError(
            "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
            "(input.dim() - other.dim()) <= 1"
        )
    rows = B.shape[-1] if _vector_b(A.ndim, B.ndim) else B.shape[-2]
    if A.shape[-2] != rows:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    if driver is not None and driver not in _DRIVERS:
        raise RuntimeError(
            "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
        )


def _lstsq_kernel(xp, A, B, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values), as PyTorch's CPU kernel fills them."""
    import scipy.linalg

    _lstsq_checks(A, B, driver)
    driver = driver or "gelsy"
    vec = _vector_b(A.ndim, B.ndim)
    Ah, Bh = _host(A), _host(B)
    if vec:
        Bh = Bh[..., None]
    m, n = Ah.shape[-2:]
    k = Bh.shape[-1]
    batch = np.broadcast_shapes(Ah.shape[:-2], Bh.shape[:-2])
    Ah = np.broadcast_to(Ah, batch + (m, n))
    Bh = np.broadcast_to(Bh, batch + (m, k))
    real = np.finfo(Ah.dtype).dtype
    if rcond is None:
        rcond = float(np.finfo(real).eps) * max(m, n)
    # the solution sits in the first n rows of a column-major max(m, n) x k buffer
    buf = np.zeros(batch + (k, max(m, n)), Ah.dtype)
    ranks = np.zeros(batch, np.int64)
    svals = np.zeros(batch + (min(m, n),), real)
    lapack = "gelsy" if driver == "gels" else driver
    if m and n and k:
        for idx in np.ndindex(batch):
            x, _, r, s = scipy.linalg.lstsq(
                Ah[idx], Bh[idx], cond=rcond, lapack_driver=lapack, check_finite=False
            )
            buf[idx][:, :n] = x.T
            ranks[idx] = r
            if s is not None:
                svals[idx] = s
    X = np.swapaxes(buf, -1, -2)[..., :n, :]
    full_rank = driver == "gels" or bool((ranks == n).all())
    if m > n and driver != "gelsy" and full_rank:
        R = Ah @ X - Bh
        res = (np.abs(R) ** 2).sum(-2).astype(real)
    else:
        res = np.empty((0,), real)
    rank = np.empty((0,), np.int64) if driver == "gels" else ranks
    sv = svals if driver in ("gelsd", "gelss") else np.empty((0,), real)
    if vec:
        X = X[..., 0]
    return tuple(xp.asarray(a) for a in (X, res, rank, sv))


def _has_residuals(result):
    return result[1].numel() > 0


def _lstsq_vjp_A(g, A, B, result):
    gX, gR = g
    X = result[0]
    vec = X.dim() == A.dim() - 1
    Bm, Xm, gXm = (B.unsqueeze(-1), X.unsqueeze(-1), gX.unsqueeze(-1)) if vec else (B, X, gX)
    P = pinv(A)
    G = gXm @ Bm.mH
    m, n = A.shape[-2], A.shape[-1]
    gA = (
        -(P.mH @ G @ P.mH)
        + (_eye(m, A) - A @ P) @ G.mH @ P @ P.mH
        + P.mH @ P @ G.mH @ (_eye(n, A) - P @ A)
    )
    if _has_residuals(result):
        gA = gA + 2 * ((A @ Xm - Bm) * gR.unsqueeze(-2)) @ Xm.mH
    return gA


def _lstsq_vjp_B(g, A, B, result):
    gX, gR = g
    X = result[0]
    vec = X.dim() == A.dim() - 1
    P = pinv(A)
    if vec:
        gB = (P.mH @ gX.unsqueeze(-1)).squeeze(-1)
    else:
        gB = P.mH @ gX
    if _has_residuals(result):
        Xm, Bm = (X.unsqueeze(-1), B.unsqueeze(-1)) if vec else (X, B)
        gRB = -2 * (A @ Xm - Bm) * gR.unsqueeze(-2)
        gB = gB + (gRB.squeeze(-1) if vec else gRB)
    return gB


def _lstsq_jvp(tA, tB, A, B, result):
    X = result[0]
    vec = X.dim() == A.dim() - 1
    Bm, Xm, tBm = (B.unsqueeze(-1), X.unsqueeze(-1), tB.unsqueeze(-1)) if vec else (B, X, tB)
    P = pinv(A)
    m, n = A.shape[-2], A.shape[-1]
    dP = (
        -(P @ tA @ P)
        + P @ P.mH @ tA.mH @ (_eye(m, A) - A @ P)
        + (_eye(n, A) - P @ A) @ tA.mH @ P.mH @ P
    )
    dX = dP @ Bm + P @ tBm
    if _has_residuals(result):
        R = A @ Xm - Bm
        dR = 2 * (R.conj() * (tA @ Xm - tBm)).real.sum(-2)
    else:
        dR = result[1] * 0
    return (dX.squeeze(-1) if vec else dX), dR


def _lstsq_rule(vmap, args, bdims, attrs):
    """A vector B (decided on logical ranks) becomes a column; both operands batch-first
    with the same number of dims (the kernel broadcasts the batch)."""
    (A, B), (bA, bB) = args, bdims
    sA, sB = lshape(A, bA), lshape(B, bB)
    vec = len(sA) >= 2 and _vector_b(len(sA), len(sB))
    B = front(B, bB)
    if vec:
        B = B.unsqueeze(-1)
    r = max(len(sA), len(sB) + vec)
    X, res, rank, sv = dispatch(
        linalg_lstsq_p, (_align(A, bA, r), _align(B, None if bB is None else 0, r)), attrs
    )
    if vec:
        X = X.squeeze(-1)
    driver = attrs.get("driver") or "gelsy"
    m, n = sA[-2], sA[-1]
    res_bd = 0 if res.dim() > 1 or (res.numel() and m > n) else None
    return (X, res, rank, sv), (
        0,
        res_bd if res.numel() else None,
        None if driver == "gels" else 0,
        0 if driver in ("gelsd", "gelss") else None,
    )


def _lstsq_samples(make):
    A = _well_conditioned(make, (5, 3))
    yield S((A, make((5, 2))))
    for driver in _DRIVERS:
        yield S((A, make((5, 2))), {"driver": driver})
    yield S((_well_conditioned(make, (3, 5)), make((3, 2))), {"driver": "gelsd"})
    yield S((_well_conditioned(make, (2, 4, 3)), make((2, 4, 1))), {"driver": "gelss"})
    yield S((A, make((5,))), {"driver": "gels"})
    yield S((_well_conditioned(make, (3, 3)), make((3, 2))))


def _lstsq_errors(make):
    A = _well_conditioned(make, (5, 3))
    yield E(
        S((A, make((5, 2))), {"driver": "foo"}),
        RuntimeError,
        r"torch.linalg.lstsq: parameter `driver` should be one of \(gels, gelsy, gelsd, gelss\)",
    )
    yield E(
        S((A, make((4, 2)))),
        RuntimeError,
        r"torch.linalg.lstsq: input.size\(-2\) should match other.size\(-2\)",
    )
    yield E(
        S((A[0], make((5, 2)))),
        RuntimeError,
        "torch.linalg.lstsq: input must have at least 2 dimensions.",
    )
    yield E(
        S((A.astype(np.int64), A.astype(np.int64))),
        RuntimeError,
        "This function doesn't handle types other than float and double",
    )


FLOAT_AND_DOUBLE = "This function doesn't handle types other than float and double"


linalg_lstsq_p = defop(
    "linalg_lstsq",
    _lstsq_kernel,
    nin=2,
    nout=4,
    out_names=("solution", "residuals", "rank", "singular_values"),
    saved_outputs=(0,),
    ndiff=2,
    vjp=(_lstsq_vjp_A, _lstsq_vjp_B),
    jvp=_lstsq_jvp,
    layout=None,
    batch_rule=_lstsq_rule,
    api="linalg.lstsq",
    test=_CX,
    samples=_lstsq_samples,
    error_samples=_lstsq_errors,
    complex32=raises(RuntimeError, FLOAT_AND_DOUBLE),
    autocast="fp32",
)
linalg_lstsq = linalg_lstsq_p.fn


def lstsq(A, B, rcond=None, *, driver=None, out=None):
    """(solution, residuals, rank, singular_values) of min |A X - B|; which fields are
    filled depends on the driver (see linalg_lstsq_p)."""
    return _tuple_out(linalg_lstsq_rt(linalg_lstsq(A, B, rcond, driver=driver)), out)
