"""Linear-algebra functions written with other ops: matrix_power, the matrix and vector
norms, pinv, cholesky_solve and cholesky_inverse, dist, and the torch.* and tuple-returning
spellings of the linalg ops (qr, eigh, svd, slogdet, det, inverse, ...)."""

from __future__ import annotations

import math

import numpy as np

from ..._core import autocast_state
from ..._core import dtype as dt
from ..._core.dispatch import dispatch
from ..._core.meta import by_kernel
from ..._core.methods import tensor_methods
from ..._core.no_kernel import low_precision
from ..._core.op import composite, defop
from ..._core.tensor import Tensor, wrap_dims
from ..._opdb.samples import ErrorInput as E
from ..._opdb.samples import S
from ..clamp import clamp
from ..comparison import where
from ..creation import zeros_like
from ..reduction import vector_norm
from ._common import (
    _CX,
    _eye,
    _tuple_out,
    _write,
    linalg_cholesky_ex_rt,
    linalg_eigh_rt,
    linalg_inv_ex_rt,
    linalg_qr_rt,
    linalg_slogdet_rt,
    linalg_svd_rt,
    qr_rt,
    slogdet_rt,
    stacked,
    svd_rt,
)
from ._samples import _well_conditioned
from .contractions import inner, kron
from .cross_trace import cross
from .decompositions import (
    _eigh_kernel,
    _svd_call,
    linalg_eigh,
    linalg_qr,
    linalg_svd,
    linalg_svdvals,
)
from .solvers import _linalg_slogdet, linalg_det, linalg_inv
from .solvers import logdet as _logdet
from .triangular import linalg_cholesky, linalg_solve_triangular
from .with_info import linalg_cholesky_ex, linalg_inv_ex


def matrix_power(A, n: int, *, out=None):
    """A to the integer power n (negative n inverts first), by repeated squaring."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(
            f"linalg_matrix_power(): argument 'n' (position 2) must be int, not {type(n).__name__}"
        )
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"linalg.matrix_power: A must be batches of square matrices, but they are "
            f"{A.shape[-2] if A.dim() > 1 else 1} by {A.shape[-1] if A.dim() else 1} matrices"
        )
    if n == 0:
        res = _eye(A.shape[-1], A) + A * 0  # the identity, connected to A with a zero gradient
    else:
        base = linalg_inv(A) if n < 0 else A
        n = abs(n)
        res = None
        while n:
            if n & 1:
                res = base if res is None else res @ base
            n >>= 1
            if n:
                base = base @ base
        if res is A:  # n == 1: a copy, as in PyTorch, never an alias
            res = A.clone()
    return res if out is None else _write(out, res)


def _matrix_norm_impl(A, ord, dims, keepdim):
    d0, d1 = dims
    if ord == "fro":
        sq = A.abs().square() if A.dtype.is_complex else A * A
        return sq.sum((d0, d1), keepdim=keepdim).sqrt()
    if ord in ("nuc", 2, -2):
        X = A.movedim((d0, d1), (-2, -1))
        s = linalg_svdvals(X)
        r = s.sum(-1) if ord == "nuc" else (s.amax(-1) if ord == 2 else s.amin(-1))
        if keepdim:
            for d in sorted(x % A.dim() for x in dims):
                r = r.unsqueeze(d)
        return r
    inf = float("inf")
    if ord in (1, -1, inf, -inf):
        sum_dim, red_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        col = A.abs().sum(sum_dim, keepdim=True)
        r = col.amax(red_dim, keepdim=True) if ord > 0 else col.amin(red_dim, keepdim=True)
        if not keepdim:
            r = r.squeeze((d0, d1))
        return r
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def _matrix_norm_samples(make):
    return [
        S((make((3, 4)),)),
        S((make((2, 3, 3)),), {"ord": 1}),
        S((make((3, 3)), float("inf"))),
        S((make((3, 4)), "nuc")),
        S((make((2, 3, 4)), "fro", (0, 2), True)),
    ]


def _matrix_norm_complex32(inputs, args):
    """PyTorch's matrix_norm refuses complex32 for the norms of singular values."""
    if args["ord"] in (2, -2, "nuc"):
        low_precision("linalg.matrix_norm")(inputs, args)
    return True


@composite(
    name="linalg_matrix_norm",
    api="linalg.matrix_norm",
    samples=_matrix_norm_samples,
    test=_CX,
    complex32=_matrix_norm_complex32,
)
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None, out=None):
    """Frobenius, nuclear, spectral (2, -2) and induced 1 / inf norms of matrices."""
    if A.dim() < 2:
        raise RuntimeError(
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
        )
    if ord not in ("fro", "nuc", 2, -2, 1, -1, float("inf"), float("-inf")):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if dtype is not None:
        A = A.to(dtype)
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(
            f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got {A.dtype.scalar_name}"
        )
    dim = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dim) != 2:
        got = " ".join(str(int(d)) for d in dim)
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {got}")
    dims = wrap_dims(dim, A.dim())
    if dims[0] == dims[1]:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got {dims}")
    res = _matrix_norm_impl(A, ord, dims, keepdim)
    return res if out is None else _write(out, res)


def _norm_samples(make):
    return [
        S((make((3, 4)),)),
        S((make((5,)), 3)),
        S((make((3, 4)), "fro")),
        S((make((2, 3, 4)),), {"dim": (1, 2)}),
        S((make((2, 3)), 1, 1, True)),
    ]


@composite(
    name="linalg_norm",
    api="linalg.norm",
    samples=_norm_samples,
    test=_CX,
)
def norm(input, ord=None, dim=None, keepdim: bool = False, *, out=None, dtype=None):
    A = input
    """torch.linalg.norm: a vector norm or a matrix norm, chosen by ord and dim."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError(
            f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}"
        )
    if dim is None and ord is not None and A.dim() not in (1, 2):
        raise RuntimeError(
            f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.dim()}D."
        )
    # A string order is always a matrix norm; a number is one over two dims; no order is
    # the 2-norm of the elements (a vector norm).
    if isinstance(ord, str) or (
        ord is not None and (len(dim) == 2 if dim is not None else A.dim() == 2)
    ):
        res = matrix_norm(
            A,
            "fro" if ord is None else ord,
            dim if dim is not None else (-2, -1),
            keepdim,
            dtype=dtype,
        )
    else:
        res = vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    return res if out is None else _write(out, res)


def qr(A, mode: str = "reduced", *, out=None):
    """QR decomposition: (Q, R) with mode 'reduced', 'complete' or 'r' (empty Q)."""
    return _tuple_out(linalg_qr_rt(linalg_qr(A, mode)), out)


def eigh(A, UPLO: str = "L", *, out=None):
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices."""
    return _tuple_out(linalg_eigh_rt(linalg_eigh(A, UPLO)), out)


def svd(A, full_matrices: bool = True, *, driver=None, out=None):
    """Singular value decomposition (U, S, Vh)."""
    return _tuple_out(linalg_svd_rt(linalg_svd(A, full_matrices, driver=driver)), out)


def linalg_slogdet(A, *, out=None):
    """Sign and log of the absolute value of the determinant."""
    return _tuple_out(linalg_slogdet_rt(_linalg_slogdet(A)), out)


def inv_ex(A, *, check_errors: bool = False, out=None):
    """(inverse, info): info > 0 marks a singular matrix (its inverse is NaN) instead of an
    error, unless ``check_errors``."""
    return _tuple_out(linalg_inv_ex_rt(linalg_inv_ex(A, check_errors=check_errors)), out)


def cholesky_ex(A, *, upper: bool = False, check_errors: bool = False, out=None):
    """(L, info): info > 0 is the order of the first leading minor that is not
    positive-definite (that matrix's L is NaN) instead of an error, unless ``check_errors``."""
    res = linalg_cholesky_ex(A, upper=upper, check_errors=check_errors)
    return _tuple_out(linalg_cholesky_ex_rt(res), out)


def svd_legacy(input, some: bool = True, compute_uv: bool = True, *, out=None):
    """torch.svd: (U, S, V) with V (not Vh); zero-filled U and V when compute_uv=False."""
    U, S_, Vh = linalg_svd(input, not some)
    if not compute_uv:
        return svd_rt((zeros_like(U), S_, zeros_like(Vh).mH))
    return _tuple_out(svd_rt((U, S_, Vh.mH)), out)


def qr_legacy(input, some: bool = True, *, out=None):
    """torch.qr (deprecated spelling of linalg.qr)."""
    return _tuple_out(qr_rt(linalg_qr(input, "reduced" if some else "complete")), out)


def slogdet(input):
    """torch.slogdet: (sign, logabsdet)."""
    return slogdet_rt(_linalg_slogdet(input))


def cholesky(input, upper: bool = False, *, out=None):
    """torch.cholesky (deprecated spelling of linalg.cholesky)."""
    return linalg_cholesky(input, upper=upper, out=out)


def det(input):
    """torch.det: the determinant."""
    return linalg_det(input)


def logdet(input):
    """torch.logdet: log of the determinant (nan when it is negative)."""
    return _logdet(input)


@composite(
    samples=lambda make: [
        S((_well_conditioned(make, (3, 3)),)),
        S((_well_conditioned(make, (2, 2, 2)),)),
    ],
    test=_CX,
    complex32=low_precision("linalg.inv"),
)
def inverse(input, *, out=None):
    """torch.inverse: the matrix inverse."""
    return linalg_inv(input, out=out)


def matrix_power_legacy(input, n: int, *, out=None):
    """torch.matrix_power."""
    return matrix_power(input, n, out=out)


def _pinv_samples(make):
    return [
        S((_well_conditioned(make, (4, 3)),)),
        S((_well_conditioned(make, (2, 3, 3)),)),
        S((_well_conditioned(make, (3, 3)),), {"rtol": 1e-10}),
    ]


def _pinv_kernel(xp, A, *, atol=None, rtol=None, hermitian=False):
    """The pseudo-inverse from the SVD (the eigendecomposition where ``hermitian``): the
    reciprocals of the singular values above max(atol, rtol * largest), zero for the rest."""
    m, n = A.shape[-2:]
    if A.size == 0:
        return xp.zeros((*A.shape[:-2], n, m), A.dtype)
    if hermitian:
        w, V = _eigh_kernel(xp, A)
        s = xp.abs(w)
    else:
        U, s, Vh = _svd_call(xp, A, full_matrices=False)
    if rtol is None:
        rtol = 0.0 if (atol is not None and atol > 0) else np.finfo(s.dtype).eps * max(m, n)
    cutoff = s.max(-1, keepdims=True) * rtol
    if atol is not None:
        cutoff = xp.maximum(cutoff, atol)
    keep = s > cutoff
    if hermitian:
        inv = xp.where(keep, 1 / xp.where(keep, w, 1), 0).astype(A.dtype)
        return (V * inv[..., None, :]) @ xp.conj(xp.swapaxes(V, -1, -2))
    inv = xp.where(keep, 1 / xp.where(keep, s, 1), 0).astype(A.dtype)
    return (xp.conj(xp.swapaxes(Vh, -1, -2)) * inv[..., None, :]) @ xp.conj(xp.swapaxes(U, -1, -2))


def _pinv_vjp(g, A, result):
    """d(X) = -X dA X + X X^H dA^H (I - A X) + (I - X A) dA^H X^H X, X = pinv(A)."""
    X, Xh, gh = result, result.mH, g.mH
    XXh, XhX = X @ Xh, Xh @ X
    left = gh @ XXh  # (I - A X) g^H X X^H
    right = XhX @ gh  # X^H X g^H (I - X A)
    return -(Xh @ g @ Xh) + left - A @ (X @ left) + right - (right @ X) @ A


def _pinv_jvp(t, A, result):
    X, th = result, t.mH
    left = X @ (X.mH @ th)  # X X^H t^H (I - A X)
    right = th @ (X.mH @ X)  # (I - X A) t^H X^H X
    return -(X @ t @ X) + left - (left @ A) @ X + right - X @ (A @ right)


def _pinv_prepare(arrays, attrs=None):
    A = arrays[0]
    if A.ndim < 2 or A.dtype.name not in ("float32", "float64", "complex64", "complex128"):
        name = dt.from_np(A.dtype).scalar_name
        raise RuntimeError(
            f"linalg.pinv({name}{{{list(A.shape)}}}): expected a tensor with 2 or more "
            "dimensions of float, double, cfloat or cdouble types"
        )
    return arrays, None


# PyTorch's pinv has a node of its own, which keeps its result (an in-place write into the
# result fails its backward)
linalg_pinv_p = defop(
    "linalg_pinv",
    _pinv_kernel,
    vjp=_pinv_vjp,
    jvp=_pinv_jvp,
    prepare=_pinv_prepare,
    batch_rule=stacked("linalg.pinv"),
    api="linalg.pinv",
    samples=_pinv_samples,
    test=_CX,
    meta=by_kernel,
)


def _autocast_dtype(A):
    """The lower dtype of an autocast region on A's device, where A is float32."""
    if not autocast_state.ACTIVE[0] or not isinstance(A, Tensor) or A.dtype is not dt.float32:
        return None
    device = A.device.type
    return autocast_state.get_dtype(device) if autocast_state.is_enabled(device) else None


def pinv(A, *, atol=None, rtol=None, hermitian: bool = False, out=None):
    """Moore-Penrose pseudo-inverse from the SVD; singular values at or below
    max(atol, rtol * largest) are treated as zero."""
    low = _autocast_dtype(A)
    if low is not None and out is None:
        # PyTorch's pinv is a composite: its SVD runs in float32, its last matmul in the
        # region's dtype (autocast's lists)
        was = autocast_state.pause()
        try:
            res = pinv(A, atol=atol, rtol=rtol, hermitian=hermitian)
        finally:
            autocast_state.resume(was)
        return res.to(low)
    if A.dim() < 2 or A.dtype.name not in ("float32", "float64", "complex64", "complex128"):
        raise RuntimeError(
            f"linalg.pinv({A.dtype.scalar_name}{{{list(A.shape)}}}): expected a tensor with 2 or "
            "more dimensions of float, double, cfloat or cdouble types"
        )
    if not isinstance(atol, Tensor) and not isinstance(rtol, Tensor):
        attrs = {"atol": atol, "rtol": rtol, "hermitian": bool(hermitian)}
        res = dispatch(linalg_pinv_p, (A,), attrs)
        return res if out is None else _write(out, res)
    # tensor tolerances (one per matrix): the composite from the SVD
    U, S_, Vh = linalg_svd(A, False)
    if rtol is None:
        eps = float(np.finfo(A.dtype.np).eps)
        rtol = 0.0 if (atol is not None and atol > 0) else eps * max(A.shape[-2], A.shape[-1])
    smax = S_.amax(-1, keepdim=True) if S_.shape[-1] else S_
    cutoff = smax * rtol
    if atol is not None:
        cutoff = clamp(cutoff, min=atol)
    keep = S_ > cutoff
    sinv = where(keep, S_.reciprocal(), zeros_like(S_)) if S_.numel() else S_
    res = (Vh.mH * sinv.unsqueeze(-2).to(Vh.dtype)) @ U.mH
    return res if out is None else _write(out, res)


def cholesky_solve(B, L, upper: bool = False, *, out=None):
    """Solve A X = B given the Cholesky factor of A (lower, or upper with ``upper``).

    As PyTorch's, the derivative in the factor is that of ``(L L^H)^{-1} B`` for the whole
    matrix ``L`` (so its other triangle gets one too): the solves run on the detached
    factor, and a term of value zero, ``-(L L^H - L' L'^H) X`` solved again (``L'`` the
    detached factor), carries the factor's derivative."""
    Lo = L.mH if upper else L
    fixed = Lo.detach()
    res = _triangular_pair_solve(fixed, B)
    shift = Lo @ Lo.mH - fixed @ fixed.mH  # zero, with the derivative of L L^H
    res = res - _triangular_pair_solve(fixed, shift @ res.detach())
    return res if out is None else _write(out, res)


def _triangular_pair_solve(Lo, B):
    Y = linalg_solve_triangular(Lo, B, upper=False)
    return linalg_solve_triangular(Lo.mH, Y, upper=True)


def cholesky_inverse(L, upper: bool = False, *, out=None):
    """The inverse of A from its Cholesky factor."""
    res = cholesky_solve(_eye(L.shape[-1], L).expand(L.shape), L, upper)
    return res if out is None else _write(out, res)


def _torch_norm_samples(make):
    return [
        S((make((3, 4)),)),
        S((make((3, 4)), 1, 1)),
        S((make((3, 4)), "nuc")),
        S((make((2, 3)), 3, (0, 1), True)),
    ]


@composite(
    name="norm",
    samples=_torch_norm_samples,
    test=_CX,
)
def torch_norm(input, p="fro", dim=None, keepdim: bool = False, out=None, dtype=None):
    """torch.norm: 'fro' and numbers are vector norms over ``dim``; 'nuc' is a matrix norm."""
    if isinstance(dim, int):
        dim = (dim,)
    if p == "nuc" or (p == "fro" and dim is not None and len(dim) > 2):  # (the latter refused)
        return matrix_norm(
            input,
            p,
            dim=(-2, -1) if dim is None else dim,
            keepdim=keepdim,
            dtype=dtype,
            out=out,
        )
    ord = 2 if p in ("fro", None) else p
    return vector_norm(input, ord, dim, keepdim, dtype=dtype, out=out)


def _dist_errors(make):
    yield E(S((make((2, 3)), make((4,)))), RuntimeError, "must match the size of tensor b")
    yield E(
        S((make((3,), dtype=np.int64), make((3,), dtype=np.int64))),
        RuntimeError,
        r"norm\(\): input dtype should be either floating point or complex. Got Long",
    )


def _dist_samples(make):
    return [
        S((make((2, 3)), make((3,)))),
        S((make((2, 3)), make((2, 3)), 3)),
        S((make((4,)), make(()), 1)),
        S((make((2, 3)), make((1, 3)), math.inf)),
        S((make(()), make(()))),  # p=0 is left out: PyTorch's DistBackward0 fails on it
    ]


@composite(
    samples=_dist_samples,
    error_samples=_dist_errors,
    methods=True,
    test=_CX,
)
def dist(input, other, p=2):
    """The p-norm of ``input - other``."""
    if not isinstance(other, Tensor):
        raise TypeError(
            f"dist(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}"
        )
    d = input - other
    if not (d.dtype.is_floating_point or d.dtype.is_complex):
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. Got "
            f"{d.dtype.scalar_name} instead."
        )
    return vector_norm(d, p)


def _tensor_norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    return torch_norm(self, p, dim, keepdim, dtype=dtype)


@composite(
    samples=lambda make: [
        S((_well_conditioned(make, (4, 3)),)),
        S((_well_conditioned(make, (2, 3)),), {"rcond": 1e-10}),
    ],
    test=_CX,
    autocast="fp32",
)
def pinverse(input, rcond: float = 1e-15):
    """torch.pinverse: ``linalg.pinv`` with a relative cutoff."""
    return pinv(input, rtol=rcond)


tensor_methods(
    {
        "norm": _tensor_norm,
        "inner": inner,
        "kron": kron,
        "cross": cross,
        "slogdet": slogdet,
        "inverse": inverse,
        "matrix_power": matrix_power_legacy,
        "cholesky": cholesky,
        "cholesky_solve": cholesky_solve,
        "cholesky_inverse": cholesky_inverse,
        "svd": svd_legacy,
        "qr": qr_legacy,
        "pinverse": pinverse,
    }
)
