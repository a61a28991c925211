"""LU factorization with partial pivoting: linalg.lu_factor and lu_factor_ex (LAPACK's
getrf), linalg.lu, lu_unpack and linalg.lu_solve (getrs), and the torch.lu / torch.lu_solve
spellings.

A = P L U with L unit lower triangular (m x k), U upper triangular (k x n), k = min(m, n).
The gradients follow from dA = P (dL U + L dU): for a square A, with
X = L^{-1} P^T dA U^{-1}, dL = L tril(X, -1) and dU = triu(X) U; a wide A (m < n) adds
U2 = L^{-1} P^T A2 for its last n - m columns, a tall A (m > n) L2 = (P^T A)_2 U^{-1}.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..._core import meta_rules
from ..._core.dispatch import dispatch
from ..._core.layout import column_major, contiguous
from ..._core.methods import tensor_methods
from ..._core.no_kernel import unless_empty
from ..._core.op import NoKernel, composite, defop
from ..._opdb.samples import ErrorInput as E
from ..._opdb.samples import S
from .._batching import front, lshape, rule_generator
from ..creation import tensor, zeros
from ..shape import cat
from ._common import _CX, _align, _min_rank, _tuple_out, return_type
from ._samples import _singular, _wc
from .triangular import linalg_solve_triangular

linalg_lu_factor_rt = return_type("linalg_lu_factor", ("LU", "pivots"))
linalg_lu_factor_ex_rt = return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
linalg_lu_rt = return_type("linalg_lu", ("P", "L", "U"))
lu_unpack_rt = return_type("lu_unpack", ("P", "L", "U"))
lu_with_info_rt = return_type("_lu_with_info", ("LU", "pivots", "info"))


def _host(a):
    return np.asarray(a.get() if hasattr(a, "get") else a)


def _lapack(name, a):
    import scipy.linalg

    return scipy.linalg.get_lapack_funcs(name, (a,))


# ------------------------------------------------------------------ kernels
def _lu_rank_check(A):
    if A.ndim < 2:
        raise RuntimeError(
            f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} instead"
        )


def _getrf(xp, A):
    """LU (column-major), 1-based int32 pivots and info, matrix by matrix."""
    host = _host(A)
    m, n = host.shape[-2:]
    k = min(m, n)
    batch = host.shape[:-2]
    LU = np.array(host, order="C", copy=True)
    piv = np.zeros(batch + (k,), np.int32)
    info = np.zeros(batch, np.int32)
    if k:
        getrf = _lapack("getrf", host)
        for idx in np.ndindex(batch):
            if np.isfinite(host[idx]).all():
                lu, p, inf = getrf(np.asfortranarray(host[idx]))
            else:
                lu, p, inf = _getrf_nonfinite(host[idx])
            LU[idx], piv[idx], info[idx] = lu, p + 1, max(inf, 0)
    return xp.asarray(LU), xp.asarray(piv), xp.asarray(info)


def _getrf_nonfinite(a):
    """Unblocked getrf for a matrix with NaN or inf, with reference BLAS's pivot choice (a
    NaN wins only where it comes first, as in the LAPACK PyTorch calls; OpenBLAS's idamax
    passes over it): the NaN then spreads as it does in PyTorch's factor."""
    a = a.copy()
    m, n = a.shape
    k = min(m, n)
    piv = np.zeros(k, np.int64)
    info = 0
    with np.errstate(all="ignore"):
        for j in range(k):
            col = np.abs(a[j:, j])
            p = 0 if np.isnan(col[0]) else int(np.argmax(np.where(np.isnan(col), -1.0, col)))
            p += j
            piv[j] = p
            if p != j:
                a[[j, p]] = a[[p, j]]
            if a[j, j] != 0:
                a[j + 1 :, j] /= a[j, j]
            elif info == 0:
                info = j + 1
            a[j + 1 :, j + 1 :] -= np.multiply.outer(a[j + 1 :, j], a[j, j + 1 :])
    return a, piv, info


def _lu_errors(name, info):
    bad = np.flatnonzero(_host(info).reshape(-1) > 0)
    if bad.size:
        at = int(bad[0])
        i = int(_host(info).reshape(-1)[at]) - 1
        where = f"(Batch element {at}): " if info.ndim else ""
        raise RuntimeError(
            f"{name}: {where}U[{i + 1},{i + 1}] is zero and using it on lu_solve would result in a "
            "division by zero. If you still want to perform the factorization, consider calling "
            "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"
        )


def _no_pivoting(pivot):
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def _lu_factor_ex_kernel(xp, A, *, pivot=True, check_errors=False):
    _lu_rank_check(A)
    _no_pivoting(pivot)
    LU, piv, info = _getrf(xp, A)
    if check_errors:
        _lu_errors("torch.linalg.lu_factor_ex", info)
    return LU, piv, info


def _lu_factor_kernel(xp, A, *, pivot=True):
    _lu_rank_check(A)
    _no_pivoting(pivot)
    LU, piv, info = _getrf(xp, A)
    _lu_errors("torch.linalg.lu_factor", info)
    return LU, piv


def _perm_matrix(xp, piv, m, dtype):
    """P (m x m) with A = P L U, from LAPACK's 1-based row interchanges."""
    piv = _host(piv)
    batch = piv.shape[:-1]
    perm = np.broadcast_to(np.arange(m), batch + (m,)).copy()
    count = int(np.prod(batch))
    flat = perm.reshape(count, m)
    p = piv.reshape(count, piv.shape[-1]).astype(np.int64) - 1
    r = np.arange(flat.shape[0])
    for i in range(p.shape[-1]):
        j = p[:, i]
        a, b = flat[r, i].copy(), flat[r, j].copy()
        flat[r, i], flat[r, j] = b, a
    P = np.zeros(batch + (m, m), dtype)
    np.put_along_axis(P, flat.reshape(batch + (1, m)), 1, axis=-2)
    return xp.asarray(P)


def _check_unpack_pivots(LU, piv):
    if piv.dtype != np.int32:
        raise RuntimeError(
            "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
            "Note: this function is intended to be used with the output produced by torch.linalg.lu_factor"
        )
    p = _host(piv)
    if p.size and (p.min() < 1 or p.max() > LU.shape[-2]):
        raise RuntimeError(
            "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive."
            "Did you properly pass the result of lu_factor?"
        )


def _unpack_data(xp, LU):
    m, n = LU.shape[-2:]
    k = min(m, n)
    L = xp.tril(LU, -1)[..., :, :k].copy()
    L[..., range(k), range(k)] = 1
    U = xp.triu(LU)[..., :k, :].copy()
    return L, U


def _lu_unpack_kernel(xp, LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    if LU_data.ndim < 2:
        raise RuntimeError(
            f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: {list(LU_data.shape)} instead"
        )
    empty = xp.empty((0,), LU_data.dtype)
    if unpack_pivots:
        _check_unpack_pivots(LU_data, LU_pivots)
        P = _perm_matrix(xp, LU_pivots, LU_data.shape[-2], LU_data.dtype)
        P = xp.broadcast_to(P, LU_data.shape[:-2] + P.shape[-2:]).copy()
    else:
        P = empty
    L, U = _unpack_data(xp, LU_data) if unpack_data else (empty, empty.copy())
    return L, U, P


def _lu_kernel(xp, A, *, pivot=True):
    _lu_rank_check(A)
    _no_pivoting(pivot)
    LU, piv, _ = _getrf(xp, A)
    L, U = _unpack_data(xp, LU)
    return L, U, _perm_matrix(xp, piv, A.shape[-2], A.dtype)


def _factor_layout(out, inputs=None, attrs=None):
    """The factor column by column, as LAPACK leaves it; pivots and info contiguous."""
    return column_major(out) if out.dtype.kind in "fc" else contiguous(out)


def _solve_layout(out, inputs, attrs):
    return column_major(out) if attrs.get("left", True) else contiguous(out)


# ------------------------------------------------------------------ formulas
def _mask(m, n, like, k=0, upper=False):
    """A constant m x n 0/1 mask of the lower (upper) triangle from diagonal k."""
    t = 1.0 - np.tri(m, n, k - 1) if upper else np.tri(m, n, k)
    return tensor(t, dtype=like.dtype, device=like.device)


def _tril(x, k=0):
    return x * _mask(x.shape[-2], x.shape[-1], x, k)


def _triu(x, k=0):
    return x * _mask(x.shape[-2], x.shape[-1], x, k, upper=True)


def _pad(x, m, n):
    """x padded with zeros at the bottom and right to m x n."""
    r, c = x.shape[-2:]
    if c < n:
        x = cat([x, zeros(x.shape[:-1] + (n - c,), dtype=x.dtype, device=x.device)], -1)
    if r < m:
        x = cat([x, zeros(x.shape[:-2] + (m - r, n), dtype=x.dtype, device=x.device)], -2)
    return x


def _lower_solve(L, B, left=True):
    """L^{-1} B (B L^{-1} when not ``left``), L unit lower triangular."""
    return linalg_solve_triangular(L, B, upper=False, left=left, unitriangular=True)


def _lower_h_solve(L, B, left=True):
    """L^{-H} B (B L^{-H} when not ``left``)."""
    return linalg_solve_triangular(L.mH, B, upper=True, left=left, unitriangular=True)


def _upper_solve(U, B, left=True):
    return linalg_solve_triangular(U, B, upper=True, left=left)


def _upper_h_solve(U, B, left=True):
    return linalg_solve_triangular(U.mH, B, upper=False, left=left)


def _lu_vjp(gL, gU, L, U, P):
    """The gradient of A = P L U from those of L and U."""
    m, n = L.shape[-2], U.shape[-1]
    if m == n:
        M = _tril(L.mH @ gL, -1) + _triu(gU @ U.mH)
        return P @ _upper_h_solve(U, _lower_h_solve(L, M), left=False)
    if m < n:
        U1, U2 = U.narrow(-1, 0, m), U.narrow(-1, m, n - m)
        gU1, gU2 = gU.narrow(-1, 0, m), gU.narrow(-1, m, n - m)
        M = _tril(L.mH @ gL - gU2 @ U2.mH, -1) + _triu(gU1 @ U1.mH)
        gA1 = _upper_h_solve(U1, _lower_h_solve(L, M), left=False)
        return P @ cat([gA1, _lower_h_solve(L, gU2)], -1)
    L1, L2 = L.narrow(-2, 0, n), L.narrow(-2, n, m - n)
    gL1, gL2 = gL.narrow(-2, 0, n), gL.narrow(-2, n, m - n)
    M = _tril(L1.mH @ gL1, -1) + _triu(gU @ U.mH - L2.mH @ gL2)
    top = _lower_h_solve(L1, M)
    return P @ _upper_h_solve(U, cat([top, gL2], -2), left=False)


def _lu_jvp(tA, L, U, P):
    """(dL, dU) of A = P L U along tA."""
    m, n = L.shape[-2], U.shape[-1]
    PtA = P.mT @ tA
    if m == n:
        X = _upper_solve(U, _lower_solve(L, PtA), left=False)
        return L @ _tril(X, -1), _triu(X) @ U
    if m < n:
        U1, U2 = U.narrow(-1, 0, m), U.narrow(-1, m, n - m)
        X = _upper_solve(U1, _lower_solve(L, PtA.narrow(-1, 0, m)), left=False)
        dL = L @ _tril(X, -1)
        dU2 = _lower_solve(L, PtA.narrow(-1, m, n - m) - dL @ U2)
        return dL, cat([_triu(X) @ U1, dU2], -1)
    L1, L2 = L.narrow(-2, 0, n), L.narrow(-2, n, m - n)
    X = _upper_solve(U, _lower_solve(L1, PtA.narrow(-2, 0, n)), left=False)
    dL1, dU = L1 @ _tril(X, -1), _triu(X) @ U
    dL2 = _upper_solve(U, PtA.narrow(-2, n, m - n) - L2 @ dU, left=False)
    return cat([dL1, dL2], -2), dU


def _from_lu(LU, pivots):
    L, U, P = _lu_unpack(LU, pivots)
    return L, U, P


def _lu_factor_vjp(g, result):
    gLU = g[0] if isinstance(g, tuple) else g
    LU, pivots = result[0], result[1]
    L, U, P = _from_lu(LU, pivots)
    k = min(LU.shape[-2:])
    gL = _tril(gLU, -1).narrow(-1, 0, k)
    gU = _triu(gLU).narrow(-2, 0, k)
    return _lu_vjp(gL, gU, L, U, P)


def _lu_factor_jvp(t, result):
    LU, pivots = result[0], result[1]
    L, U, P = _from_lu(LU, pivots)
    m, n = LU.shape[-2:]
    dL, dU = _lu_jvp(t, L, U, P)
    return _pad(dL, m, n) + _pad(dU, m, n)


def _lu_unpack_vjp(g, LU_data_shape, unpack_data):
    gL, gU = g
    m, n = LU_data_shape[-2:]
    if not unpack_data:  # PyTorch's LuUnpackBackward0 takes tril of the empty L
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return _pad(_tril(gL, -1), m, n) + _pad(_triu(gU), m, n)


def _lu_unpack_jvp(tLU_data, LU_data, unpack_data):
    t = tLU_data
    if not unpack_data:
        e = t.new_zeros((0,))
        return e, e
    k = min(LU_data.shape[-2:])
    return _tril(t, -1).narrow(-1, 0, k), _triu(t).narrow(-2, 0, k)


# ------------------------------------------------------------------ batch rules
def _batch_size(args, bdims):
    return next(a.shape[b] for a, b in zip(args, bdims, strict=False) if b is not None)


def _expand_front(x, bd, size):
    if bd is None:
        return x.unsqueeze(0).expand((size, *x.shape))
    return front(x, bd)


def _lu_unpack_rule(vmap, args, bdims, attrs):
    (LU, piv), (bL, bp) = args, bdims
    _min_rank("lu_unpack", lshape(LU, bL))
    size = _batch_size(args, bdims)
    LU, piv = _expand_front(LU, bL, size), _expand_front(piv, bp, size)
    if bp is not None and piv.dim() < LU.dim() - 1:
        piv = piv.reshape((size,) + (1,) * (LU.dim() - 1 - piv.dim()) + tuple(piv.shape[1:]))
        piv = piv.expand(tuple(LU.shape[:-2]) + (piv.shape[-1],))
    out = dispatch(lu_unpack_p, (LU, piv), attrs)
    data = 0 if attrs["unpack_data"] else None
    return out, (data, data, 0 if attrs["unpack_pivots"] else None)


def _lu_solve_rule(vmap, args, bdims, attrs):
    """LU and pivots batch-first with the same batch; B aligned to LU's rank."""
    (LU, piv, B), (bL, bp, bB) = args, bdims
    sL, sB = lshape(LU, bL), lshape(B, bB)
    _min_rank("linalg.lu_solve", sL, "LU")
    _min_rank("linalg.lu_solve", sB, "B")
    r = max(len(sL), len(sB))
    if bL is None and bp is None:
        LU, piv = (
            _align(LU, None, r),
            piv.reshape((1,) * (r + 1 - 1 - piv.dim()) + tuple(piv.shape)),
        )
    else:
        size = _batch_size((LU, piv), (bL, bp))
        LU, piv = _expand_front(LU, bL, size), _expand_front(piv, bp, size)
        LU = _align(LU, 0, r)
        piv = piv.reshape(tuple(LU.shape[:-1]))
    return dispatch(linalg_lu_solve_p, (LU, piv, _align(B, bB, r)), attrs), 0


def _stack_rule(op):
    """One matrix input: the batch dim goes first (the kernels loop over leading dims)."""

    def rule(vmap, args, bdims, attrs):
        x, bd = args[0], bdims[0]
        s = lshape(x, bd)
        if len(s) < 2:
            raise RuntimeError(
                f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: {list(s)} instead"
            )
        return dispatch(op, (front(x, bd),), attrs), 0

    return rule


_stacked = rule_generator(_stack_rule)


# ------------------------------------------------------------------ samples
def _lu_samples(make):
    yield S((_wc(make, (3, 3)),))
    yield S((_wc(make, (2, 3, 3)),))
    yield S((make((4, 3), -1, 1) + np.eye(4, 3, dtype=make.dtype) * 3,))
    yield S((make((3, 5), -1, 1) + np.eye(3, 5, dtype=make.dtype) * 3,))
    yield S((make((2, 0, 0)),))


def _lu_factor_errors(name):
    def errors(make):
        yield E(
            S((make((3,)),)),
            RuntimeError,
            r"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: \[3\] instead",
        )
        yield E(
            S((_wc(make, (3, 3)),), {"pivot": False}),
            RuntimeError,
            "linalg.lu_factor: LU without pivoting is not implemented on the CPU",
        )
        if name:
            yield E(
                S((_singular(make, (2, 3, 3)),), {"check_errors": True} if "_ex" in name else {}),
                RuntimeError,
                rf"{name}: \(Batch element 1\): U\[1,1\] is zero",
            )

    return errors


def _first_rank(arrays, attrs):
    _lu_rank_check(arrays[0])


_LU_NO_KERNEL = NoKernel("bi", "lu_cpu", first=_first_rank)


def _lu_factor_op(name: str, kernel, nout: int):
    """linalg.lu_factor or linalg.lu_factor_ex (which adds the info output): one node."""
    return defop(
        f"linalg_{name}",
        kernel,
        nout=nout,
        out_names=("LU", "pivots", "info")[:nout],
        saved_outputs=(0, 1),
        ndiff=1,
        vjp=_lu_factor_vjp,
        jvp=_lu_factor_jvp,
        layout=_factor_layout,
        no_kernel=_LU_NO_KERNEL,
        batch_rule=_stacked(),
        api=f"linalg.{name}",
        node_name="LinalgLuFactorExBackward0",
        test=_CX,
        samples=_lu_samples,
        error_samples=_lu_factor_errors(f"torch.linalg.{name}"),
        complex32=unless_empty("lu_cpu"),  # (PyTorch's kernel that refuses ComplexHalf)
        meta=meta_rules.factor,
    )


linalg_lu_factor_ex_p = _lu_factor_op("lu_factor_ex", _lu_factor_ex_kernel, 3)
linalg_lu_factor_ex = linalg_lu_factor_ex_p.fn
linalg_lu_factor_p = _lu_factor_op("lu_factor", _lu_factor_kernel, 2)
linalg_lu_factor = linalg_lu_factor_p.fn


def _lu_unpack_p_vjp(g, LU_data_shape, unpack_data):
    return _lu_unpack_vjp(g, LU_data_shape, unpack_data)


def _lu_unpack_complex32(arrays, attrs):
    """PyTorch unpacks complex32 pivots with a scatter that refuses it; the rest runs."""
    unpacks = arrays[0].size and attrs.get("unpack_pivots", True)
    return not unpacks or "scatter_gather_scalar_cpu"


lu_unpack_p = defop(
    "_lu_unpack",
    _lu_unpack_kernel,
    nin=2,
    nout=3,
    ndiff=2,
    vjp=(_lu_unpack_p_vjp, None),
    jvp=_lu_unpack_jvp,
    batch_rule=_lu_unpack_rule,
    node_name="LuUnpackBackward0",
    complex32=_lu_unpack_complex32,
    meta=meta_rules.lu_unpack,
)
_lu_unpack = lu_unpack_p.fn


def _linalg_lu_vjp(g, result):
    # P is no differentiable output: detached, so that no gradient flows back into it
    return _lu_vjp(g[0], g[1], result[0], result[1], result[2].detach())


def _linalg_lu_jvp(t, result):
    return _lu_jvp(t, result[0], result[1], result[2].detach())


linalg_lu_p = defop(
    "_linalg_lu",
    _lu_kernel,
    nout=3,
    out_names=("L", "U", "P"),  # (the kernel's order; PyTorch's linalg.lu returns P, L, U)
    saved_outputs=(0, 1, 2),
    ndiff=2,
    vjp=_linalg_lu_vjp,
    jvp=_linalg_lu_jvp,
    no_kernel=_LU_NO_KERNEL,
    batch_rule=_stacked(),
    node_name="LinalgLuBackward0",
    complex32=unless_empty("lu_cpu"),  # (PyTorch's kernel that refuses ComplexHalf)
    meta=meta_rules.lu,
)


# ------------------------------------------------------------------ lu_solve
def _check_lu_solve(LU, pivots, B, left, adjoint):
    if LU.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor LU must have at least 2 dimensions.")
    if B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    if LU.shape[-1] != LU.shape[-2]:
        raise RuntimeError(
            f"torch.linalg.lu_solve: A must be batches of square matrices, but they are "
            f"{LU.shape[-2]} by {LU.shape[-1]} matrices"
        )
    n = LU.shape[-1]
    rows = B.shape[-2] if left else B.shape[-1]
    if rows != n:
        r, c = B.shape[-2:]
        raise RuntimeError(
            f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {r}x{c})"
        )
    if pivots.dtype != np.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    if pivots.shape[-1] != n:
        raise RuntimeError(
            "linalg.lu_solve: Number of pivots per batch should be same as the dimension of the matrix"
        )
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(
            "linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got "
            f"pivots with shape {list(pivots.shape)} instead"
        )
    p = _host(pivots)
    if p.size and p.max() > n:
        raise RuntimeError(
            "Pivots given to lu_solve must all be smaller or equal to LU.size(-2). "
            "Did you properly pass the result of lu_factor?"
        )
    if p.size and p.min() < 1:
        raise RuntimeError(
            "Pivots given to lu_solve must all be greater or equal to 1. "
            "Did you properly pass the result of lu_factor?"
        )


def _lu_solve_kernel(xp, LU, pivots, B, *, left=True, adjoint=False):
    _check_lu_solve(LU, pivots, B, left, adjoint)
    LUh, ph, Bh = _host(LU), _host(pivots), _host(B)
    batch = np.broadcast_shapes(LUh.shape[:-2], Bh.shape[:-2])
    LUh = np.broadcast_to(LUh, batch + LUh.shape[-2:])
    ph = np.broadcast_to(ph, batch + ph.shape[-1:])
    if not left:  # X A = B: A^T X^T = B^T (or A X^H = B^H for the adjoint)
        Bh = np.swapaxes(Bh.conj() if adjoint else Bh, -1, -2)
        trans = 0 if adjoint else 1
    else:
        trans = 2 if adjoint else 0
    Bh = np.broadcast_to(Bh, batch + Bh.shape[-2:])
    X = np.empty(Bh.shape, np.result_type(LUh, Bh))
    if X.size:
        getrs = _lapack("getrs", LUh)
        for idx in np.ndindex(batch):
            X[idx] = getrs(
                np.asfortranarray(LUh[idx]), ph[idx] - 1, np.asfortranarray(Bh[idx]), trans=trans
            )[0]
    if not left:
        X = np.swapaxes(X.conj() if adjoint else X, -1, -2)
    return xp.asarray(X)


def _solve_with(LU, pivots, B, left, adjoint):
    return linalg_lu_solve(LU, pivots, B, left=left, adjoint=adjoint)


def _lu_solve_vjp_B(g, LU, pivots, left, adjoint):
    return _solve_with(LU, pivots, g, left, not adjoint)


def _lu_solve_gA(g, LU, pivots, result, left, adjoint):
    """The gradient of A (= P L U) for X = op(A)^{-1} B or B op(A)^{-1}."""
    gB = _solve_with(LU, pivots, g, left, not adjoint)
    X = result
    if left:
        return -(X @ gB.mH) if adjoint else -(gB @ X.mH)
    return -(gB.mH @ X) if adjoint else -(X.mH @ gB)


def _lu_solve_vjp_LU(g, LU, pivots, result, left, adjoint):
    gA = _lu_solve_gA(g, LU, pivots, result, left, adjoint)
    L, U, P = _from_lu(LU, pivots)
    PtgA = P.mT @ gA
    return _tril(PtgA @ U.mH, -1) + _triu(L.mH @ PtgA)


def _lu_solve_jvp(tLU, tpivots, tB, LU, pivots, B, result, left, adjoint):
    L, U, P = _from_lu(LU, pivots)
    dA = P @ (_tril(tLU, -1) @ U + L @ _triu(tLU))
    if adjoint:
        dA = dA.mH
    rhs = tB - (dA @ result if left else result @ dA)
    return _solve_with(LU, pivots, rhs, left, adjoint)


def _lu_of(make, shape):
    import scipy.linalg

    a = _wc(make, shape)
    LU = np.empty_like(a)
    piv = np.empty(shape[:-1], np.int32)
    for idx in np.ndindex(shape[:-2]):
        lu, p = scipy.linalg.lu_factor(a[idx])
        LU[idx], piv[idx] = lu, p + 1
    return LU, piv


def _lu_solve_samples(make):
    LU, piv = _lu_of(make, (3, 3))
    yield S((LU, piv, make((3, 2))))
    yield S((LU, piv, make((2, 3))), {"left": False})
    yield S((LU, piv, make((3, 2))), {"adjoint": True})
    yield S((LU, piv, make((2, 3))), {"left": False, "adjoint": True})
    LU, piv = _lu_of(make, (2, 3, 3))
    yield S((LU, piv, make((2, 3, 1))))
    yield S((LU, piv, make((4, 1, 3, 2))), {"adjoint": True})


def _lu_solve_errors(make):
    LU, piv = _lu_of(make, (3, 3))
    yield E(
        S((LU, piv, make((3,)))),
        RuntimeError,
        "linalg.lu_solve: The input tensor B must have at least 2 dimensions.",
    )
    yield E(
        S((LU, piv.astype(np.int64), make((3, 2)))),
        RuntimeError,
        "linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32",
    )
    yield E(
        S((LU, piv + 5, make((3, 2)))),
        RuntimeError,
        "Pivots given to lu_solve must all be smaller or equal to LU.size",
    )
    yield E(
        S((LU, piv - 5, make((3, 2)))),
        RuntimeError,
        "Pivots given to lu_solve must all be greater or equal to 1",
    )
    yield E(
        S((LU, piv, make((4, 2)))),
        RuntimeError,
        r"linalg.lu_solve: Incompatible shapes of A and B for the equation AX = B \(3x3 and 4x2\)",
    )
    yield E(
        S((LU[:, :2].copy(), piv, make((3, 2)))),
        RuntimeError,
        "torch.linalg.lu_solve: A must be batches of square matrices, but they are 3 by 2 matrices",
    )


def _lu_solve_prepare(arrays, attrs=None):
    LU, B = arrays[0], arrays[2]
    for a in (LU,):
        if a.dtype.kind not in "fc":
            raise RuntimeError(
                "torch.linalg.lu_solve: Expected a floating point or complex tensor as input. "
                f"Got {_tname(a)}"
            )
    if LU.dtype != B.dtype:
        raise RuntimeError(
            "linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
            f"{_tname(LU)} and B of type {_tname(B)} instead"
        )
    return arrays, None


def _tname(a):
    from ..._core import dtype as dt

    return dt.of(a).scalar_name


linalg_lu_solve_p = defop(
    "linalg_lu_solve",
    _lu_solve_kernel,
    nin=3,
    vjp=(_lu_solve_vjp_LU, None, _lu_solve_vjp_B),
    jvp=_lu_solve_jvp,
    layout=_solve_layout,
    prepare=_lu_solve_prepare,
    batch_rule=_lu_solve_rule,
    api="linalg.lu_solve",
    out=True,
    test=_CX,
    samples=_lu_solve_samples,
    error_samples=_lu_solve_errors,
    complex32="linalg.lu_solve_cpu",  # (PyTorch's kernel, so named)
    meta=meta_rules.factor_solve,
)
linalg_lu_solve = linalg_lu_solve_p.fn


# ------------------------------------------------------------------ public composites
def lu_factor(A, *, pivot: bool = True, out=None):
    """(LU, pivots) of A = P L U, LU packing L (below the diagonal) and U."""
    return _tuple_out(linalg_lu_factor_rt(linalg_lu_factor(A, pivot=pivot)), out)


def lu_factor_ex(A, *, pivot: bool = True, check_errors: bool = False, out=None):
    """(LU, pivots, info): info > 0 marks a zero pivot U[info-1, info-1] instead of an error."""
    res = linalg_lu_factor_ex(A, pivot=pivot, check_errors=check_errors)
    return _tuple_out(linalg_lu_factor_ex_rt(res), out)


def _linalg_lu_samples(make):
    return _lu_samples(make)


@composite(
    name="linalg_lu",
    api="linalg.lu",
    nout=3,
    samples=_linalg_lu_samples,
    error_samples=_lu_factor_errors(""),
    test=_CX,
)
def lu(A, *, pivot: bool = True, out=None):
    """(P, L, U) with A = P L U."""
    L, U, P = linalg_lu_p.fn(A, pivot=pivot)
    return _tuple_out(linalg_lu_rt((P, L, U)), out)


def _lu_unpack_samples(make):
    for s in _lu_samples(make):
        A = s.args[0]
        LU, piv, _ = _getrf(np, A)
        yield S((LU, piv))
        yield S((LU, piv), {"unpack_pivots": False})


def _lu_unpack_errors(make):
    LU, piv = _lu_of(make, (3, 3))
    yield E(
        S((LU, piv.astype(np.int64))),
        RuntimeError,
        "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype",
    )
    yield E(
        S((LU, piv + 5)),
        RuntimeError,
        "pivots passed to lu_unpack must be between 1 and LU.size",
    )


@composite(
    name="lu_unpack",
    nout=3,
    samples=_lu_unpack_samples,
    error_samples=_lu_unpack_errors,
    test=_CX,
)
def lu_unpack(
    LU_data, LU_pivots, unpack_data: bool = True, unpack_pivots: bool = True, *, out=None
):
    """(P, L, U) from lu_factor's packed LU and pivots; the parts not asked for are empty."""
    L, U, P = _lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)
    return _tuple_out(lu_unpack_rt((P, L, U)), out)


_LU_WARNING = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
    "will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\n"
    "should be replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
    "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
    "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)"
)


_WARNED = set()


def _warn_once(key, text):
    """A deprecation warning given once per process (PyTorch's TORCH_WARN_ONCE)."""
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(text, UserWarning, stacklevel=3)


def torch_lu(A, pivot: bool = True, get_infos: bool = False, out=None):
    """torch.lu: (LU, pivots), or (LU, pivots, infos) with ``get_infos``."""
    _warn_once("lu", _LU_WARNING)
    LU, piv, info = linalg_lu_factor_ex(A, pivot=pivot, check_errors=not get_infos)
    res = lu_with_info_rt((LU, piv, info)) if get_infos else (LU, piv)
    if out is not None:
        return _tuple_out(type(res)(res) if get_infos else res, out)
    return res


def torch_lu_solve(b, LU_data, LU_pivots, *, out=None):
    """torch.lu_solve(b, LU, pivots): linalg.lu_solve with its arguments reversed."""
    _warn_once(
        "lu_solve",
        "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
        "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
        "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\n"
        "X = torch.linalg.lu_solve(LU, pivots, B)",
    )
    return linalg_lu_solve(LU_data, LU_pivots, b, out=out)


def _lu_method(self, pivot=True, get_infos=False):
    return torch_lu(self, pivot, get_infos)


def _lu_solve_method(self, LU_data, LU_pivots):
    return torch_lu_solve(self, LU_data, LU_pivots)


tensor_methods({"lu": _lu_method, "lu_solve": _lu_solve_method})
