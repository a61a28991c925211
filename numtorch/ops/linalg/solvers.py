"""Linear solves and determinants: linalg.solve, linalg.inv, linalg.det, linalg.slogdet and
logdet."""

from __future__ import annotations

import numpy as np

from ..._core.dispatch import dispatch
from ..._core.layout import column_major, contiguous
from ..._core.meta import by_kernel
from ..._core.no_kernel import low_precision, unless_empty
from ..._core.op import defop
from ..._opdb.samples import ErrorInput as E
from ..._opdb.samples import S
from .._batching import front, lshape
from ..creation import ones_like, zeros_like
from ..shape import cat
from ._common import _CX, LinAlgError, _align, _float_only, _min_rank, _mv, _square, stacked
from ._lapack import _np_linalg
from ._samples import _sq_errors, _wc


def _vector_rhs(sA: tuple, sB: tuple) -> bool:
    """Whether B (shape sB) is a (batch of) vector(s) for A (shape sA) in linalg.solve."""
    return len(sB) == 1 or (len(sB) == len(sA) - 1 and tuple(sB) == tuple(sA[:-1]))


def _is_vector_rhs(A, B) -> bool:
    return _vector_rhs(tuple(A.shape), tuple(B.shape))


def _solve_vec_check(sA: tuple, sB: tuple, vec: bool, left: bool) -> None:
    if vec and not left:
        n = sA[-1]
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation XA = B ({n}x{n} and {sB[-1]}x1)"
        )


def _solve(xp, A, B, *, left=True):
    _square("linalg.solve", A)
    vec = _is_vector_rhs(A, B)
    _solve_vec_check(A.shape, B.shape, vec, left)
    Bm = B[..., None] if vec else B
    if not left:
        A, Bm = xp.swapaxes(A, -1, -2), xp.swapaxes(Bm, -1, -2)
    if Bm.shape[-2] != A.shape[-1]:
        r, c = Bm.shape[-2:] if left else Bm.shape[:-3:-1]  # B as given: transposed back
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{A.shape[-1]} and {r}x{c})"
        )
    if xp is not np:  # CuPy's solve does not broadcast the batch dims
        batch = np.broadcast_shapes(A.shape[:-2], Bm.shape[:-2])
        A = xp.broadcast_to(A, batch + A.shape[-2:])
        Bm = xp.broadcast_to(Bm, batch + Bm.shape[-2:])
    X = _np_linalg("linalg.solve", lambda A: xp.linalg.solve(A, Bm), A, "solve")
    if not left:
        X = xp.swapaxes(X, -1, -2)
    return X[..., 0] if vec else X


def _solve_vjp_B(g, A, left):
    return linalg_solve(A.mH, g, left=left)


def _solve_vjp_A(g, A, B, result, left):
    gB = linalg_solve(A.mH, g, left=left)
    if _is_vector_rhs(A, B):
        return -gB.unsqueeze(-1) * result.conj().unsqueeze(-2)
    return -(gB @ result.mH) if left else -(result.mH @ gB)


def _solve_jvp(tA, tB, A, B, result, left):
    if _is_vector_rhs(A, B):
        return linalg_solve(A, tB - _mv(tA, result))
    if left:
        return linalg_solve(A, tB - tA @ result)
    return linalg_solve(A, tB - result @ tA, left=False)


def _solve_rule(vmap, args, bdims, attrs):
    """Vector right-hand sides (decided on logical shapes) become one-column matrices;
    then both operands get the same number of dims, so the kernel reads B as matrices."""
    (A, B), (bA, bB) = args, bdims
    sA, sB = lshape(A, bA), lshape(B, bB)
    _min_rank("linalg.solve", sA)
    vec = _vector_rhs(sA, sB)
    _solve_vec_check(sA, sB, vec, attrs["left"])
    B = front(B, bB)
    if vec:
        B = B.unsqueeze(-1)
    r = max(len(sA), len(sB) + vec)
    bB = None if bB is None else 0
    X = dispatch(linalg_solve_p, (_align(A, bA, r), _align(B, bB, r)), attrs)
    return (X.squeeze(-1) if vec else X), 0


def _solve_layout(out, inputs, attrs):
    """X column by column, as LAPACK leaves it; for XA = B, the transpose of such an X."""
    return column_major(out) if attrs.get("left", True) else contiguous(out)


def _linalg_solve_samples(make):
    return [
        S((_wc(make, (3, 3)), make((3, 2)))),
        S((_wc(make, (3, 3)), make((3,)))),
        S((_wc(make, (2, 3, 3)), make((2, 3)))),
        S((_wc(make, (2, 3, 3)), make((3, 1)))),
        S((_wc(make, (3, 3)), make((2, 3))), {"left": False}),
        S((_wc(make, (2, 1, 2, 2)), make((3, 2, 1)))),
    ]


def _linalg_solve_error_samples(make):
    return [
        E(
            S((_wc(make, (3, 3)), make((4,)))),
            RuntimeError,
            r"linalg.solve: Incompatible shapes of A and B for the equation AX = B \(3x3 and 4x1\)",
        ),
        E(S((make((3, 2)), make((3,)))), RuntimeError, "must be batches of square matrices"),
    ]


linalg_solve_p = defop(
    "linalg_solve",
    _solve,
    vjp=(_solve_vjp_A, _solve_vjp_B),
    jvp=_solve_jvp,
    layout=_solve_layout,
    prepare=_float_only("linalg.solve"),
    batch_rule=_solve_rule,
    api="linalg.solve",
    out=True,
    samples=_linalg_solve_samples,
    error_samples=_linalg_solve_error_samples,
    test=_CX,
    complex32=unless_empty("lu_cpu"),  # (PyTorch's LU refuses ComplexHalf)
    autocast="fp32",
    meta=by_kernel,
)
linalg_solve = linalg_solve_p.fn


def _inv(xp, A):
    _square("linalg.inv", A)
    return _np_linalg("linalg.inv", lambda A: xp.linalg.inv(A), A, "inv")


def _linalg_inv_samples(make):
    return [
        S((_wc(make, (3, 3)),)),
        S((_wc(make, (2, 2, 2)),)),
        S((_wc(make, (1, 1)),)),
        S((_wc(make, (0, 2, 2)),)),
    ]


def _linalg_inv_error_samples(make):
    return [
        *_sq_errors("linalg.inv")(make),
        E(S((np.zeros((3, 3), np.float32),)), LinAlgError, "singular"),
        E(
            S((np.eye(3, dtype=np.int64),)),
            RuntimeError,
            "Expected a floating point or complex tensor as input. Got Long",
        ),
    ]


linalg_inv_p = defop(
    "linalg_inv",
    _inv,
    vjp=lambda g, result: -(result.mH @ g @ result.mH),
    layout=column_major,
    jvp=lambda t, result: -(result @ t @ result),
    prepare=_float_only("linalg.inv"),
    batch_rule=stacked("linalg.inv"),
    api="linalg.inv",
    out=True,
    node_name="LinalgInvExBackward0",  # PyTorch's inv runs inv_ex
    samples=_linalg_inv_samples,
    error_samples=_linalg_inv_error_samples,
    test=_CX,
    complex32=low_precision("linalg.inv"),
    autocast="fp32",
    meta=by_kernel,
)
linalg_inv = linalg_inv_p.fn


def _det(xp, A):
    _square("linalg.det", A)
    with np.errstate(invalid="ignore"):
        d = xp.linalg.det(A)
    # NumPy's LU may stop at a NaN pivot and call the matrix singular (0); LAPACK's goes on
    return xp.where(xp.isnan(A).any(axis=(-2, -1)), xp.asarray(xp.nan, d.dtype), d)


def _unsq2(x):
    return x.unsqueeze(-1).unsqueeze(-1)


def _trace_of_solve(A, t):
    """trace(A^{-1} t), batched."""
    return (linalg_inv(A).mT * t).sum((-2, -1))


def _prod_of_others(s):
    """For each i, the product of s[..., j] over j != i (no division: zeros are fine)."""
    one = ones_like(s[..., :1])
    left = cat([one, s[..., :-1]], -1).cumprod(-1)
    right = cat([s[..., 1:], one], -1).flip(-1).cumprod(-1).flip(-1)
    return left * right


def _cofactors(A, result):
    """The matrix of cofactors of A, det(A) A^{-T}: the derivative of det. A singular A (no
    inverse) takes it from the SVD A = U S Vh: det(U) det(Vh) U diag(prod_{j!=i} s_j) Vh."""
    try:
        return _unsq2(result) * linalg_inv(A).mT
    except LinAlgError:
        from .decompositions import linalg_svd  # registers its ops after this module

        U, S, Vh = linalg_svd(A, False)
        sign = _unsq2(linalg_det(U) * linalg_det(Vh))
        return sign * (U * _prod_of_others(S).unsqueeze(-2)) @ Vh


def _linalg_det_samples(make):
    return [
        S((_wc(make, (3, 3)),)),
        S((_wc(make, (2, 2, 2)),)),
        S((make((1, 1), 0.5, 1.5),)),
        S((_wc(make, (0, 2, 2)),)),
    ]


linalg_det_p = defop(
    "linalg_det",
    _det,
    vjp=lambda g, A, result: _unsq2(g) * _cofactors(A, result).conj(),
    jvp=lambda t, A, result: (_cofactors(A, result) * t).sum((-2, -1)),
    prepare=_float_only("linalg.det"),
    batch_rule=stacked("linalg.det"),
    api="linalg.det",
    out=True,
    samples=_linalg_det_samples,
    error_samples=_sq_errors("linalg.det"),
    methods=("det",),
    test=_CX,
    complex32=unless_empty("lu_cpu"),  # (PyTorch's LU refuses ComplexHalf)
    meta=by_kernel,
)
linalg_det = linalg_det_p.fn


def _slogdet(xp, A):
    _square("linalg.slogdet", A)
    return xp.linalg.slogdet(A)


def _slogdet_jvp(t, A, result):
    tau = _trace_of_solve(A, t)
    if not A.is_complex():
        return (zeros_like(result[0]), tau)
    return (result[0] * tau.imag * 1j, tau.real)


def _slogdet_vjp(g, A, result):
    """(sign, logabsdet) = (e^{i arg}, Re log det): the cotangent of log det is
    g_logabsdet + i Im(conj(sign) g_sign) (real A: g_logabsdet)."""
    sign = result[0]  # (read, and so version-checked, for real A too: PyTorch's node reads it)
    w = g[1]
    if A.is_complex():
        w = w + (sign.conj() * g[0]).imag * 1j
    return _unsq2(w) * linalg_inv(A).mH


def _linalg_slogdet_samples(make):
    return [
        S((_wc(make, (3, 3)),)),
        S((_wc(make, (2, 2, 2), -3.0),)),
        S((_wc(make, (0, 2, 2)),)),
    ]


linalg_slogdet_p = defop(
    "linalg_slogdet",
    _slogdet,
    nout=2,
    out_names=("sign", "logabsdet"),
    saved_outputs=(0,),  # (its node saves the sign, and the LU factors PyTorch keeps inside)
    ndiff=2,
    vjp=_slogdet_vjp,
    jvp=_slogdet_jvp,
    prepare=_float_only("linalg.slogdet"),
    batch_rule=stacked("linalg.slogdet"),
    api="linalg.slogdet",
    samples=_linalg_slogdet_samples,
    error_samples=_sq_errors("linalg.slogdet"),
    test=_CX,
    complex32=low_precision("linalg.slogdet"),
    meta=by_kernel,
)
_linalg_slogdet = linalg_slogdet_p.fn


def _logdet(xp, A):
    _square("logdet", A)
    sign, logabs = xp.linalg.slogdet(A)
    if A.dtype.kind == "c":  # the log of the complex determinant: the sign's phase added
        with np.errstate(divide="ignore", invalid="ignore"):
            out = logabs + xp.log(xp.where(sign == 0, 1, sign))
        return xp.where(sign == 0, complex(-np.inf, np.nan), out).astype(A.dtype)
    return xp.where(sign < 0, xp.nan, logabs).astype(A.dtype)


logdet_p = defop(
    "logdet",
    _logdet,
    vjp=lambda g, A: _unsq2(g) * linalg_inv(A).mH,
    jvp=lambda t, A: _trace_of_solve(A, t),
    prepare=_float_only("logdet"),
    batch_rule=stacked("logdet"),
    samples=lambda make: [S((_wc(make, (3, 3)),)), S((_wc(make, (2, 2, 2)),))],
    methods=True,
    test=_CX,
    complex32=low_precision("logdet"),
    meta=by_kernel,
)
logdet = logdet_p.fn
