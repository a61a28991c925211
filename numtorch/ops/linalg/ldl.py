"""LDL^T (LDL^H) factorization of symmetric (Hermitian) matrices: linalg.ldl_factor,
linalg.ldl_factor_ex (LAPACK's sytrf / hetrf, Bunch-Kaufman pivoting, the lower triangle)
and linalg.ldl_solve (sytrs / hetrs). PyTorch defines no derivative for either: their
backward raises, as here."""

from __future__ import annotations

import numpy as np

from ..._core import dtype as dt
from ..._core import meta_rules
from ..._core.dispatch import dispatch
from ..._core.layout import column_major, contiguous
from ..._core.no_kernel import unless_empty
from ..._core.op import defop
from ..._opdb.samples import ErrorInput as E
from ..._opdb.samples import S
from .._batching import front, lshape
from .._no_derivative import NOT_IMPLEMENTED
from ._common import _CX, _align, _min_rank, _tuple_out, return_type, stacked

linalg_ldl_factor_rt = return_type("linalg_ldl_factor", ("LD", "pivots"))
linalg_ldl_factor_ex_rt = return_type("linalg_ldl_factor_ex", ("LD", "pivots", "info"))


def _host(a):
    return np.asarray(a.get() if hasattr(a, "get") else a)


def _lapack(name, a):
    import scipy.linalg

    return scipy.linalg.get_lapack_funcs(name, (a,))


def _no_derivative(name):
    def formula(g):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    return formula


def _no_forward(name):
    def formula(t):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    return formula


# ------------------------------------------------------------------ factor
def _ldl_checks(A):
    name = "torch.linalg.ldl_factor_ex"
    if A.dtype.kind not in "fc":
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got {dt.of(A).scalar_name}"
        )
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by "
            f"{A.shape[-1]} matrices"
        )


def _sytrf(A, hermitian):
    """(LD, pivots, info) matrix by matrix, from the lower triangle."""
    n = A.shape[-1]
    batch = A.shape[:-2]
    LD = np.zeros(A.shape, A.dtype)
    piv = np.zeros(batch + (n,), np.int32)
    info = np.zeros(batch, np.int32)
    if n:
        trf = _lapack("hetrf" if hermitian and A.dtype.kind == "c" else "sytrf", A)
        for idx in np.ndindex(batch):
            ldu, ipiv, inf = trf(np.asfortranarray(A[idx]), lower=1)
            LD[idx], piv[idx], info[idx] = np.tril(ldu), ipiv, inf
    return LD, piv, info


def _ldl_error(name, info):
    flat = info.reshape(-1)
    bad = np.flatnonzero(flat > 0)
    if bad.size:
        raise RuntimeError(
            'false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/'
            'BatchLinearAlgebra.cpp":1642, please report a bug to PyTorch. '
            f"{name}: Unknown error code: {int(flat[bad[0]])}."
        )


def _ldl_factor_ex_kernel(xp, A, *, hermitian=False, check_errors=False):
    _ldl_checks(A)
    LD, piv, info = _sytrf(_host(A), hermitian)
    if check_errors:
        _ldl_error("torch.linalg.ldl_factor_ex", info)
    return xp.asarray(LD), xp.asarray(piv), xp.asarray(info)


def _ldl_factor_kernel(xp, A, *, hermitian=False):
    _ldl_checks(A)
    LD, piv, info = _sytrf(_host(A), hermitian)
    _ldl_error("torch.linalg.ldl_factor", info)
    return xp.asarray(LD), xp.asarray(piv)


def _factor_layout(out, inputs=None, attrs=None):
    """LD column by column, as LAPACK leaves it; pivots and info contiguous."""
    return column_major(out) if out.dtype.kind in "fc" else contiguous(out)


def _sym(make, shape, hermitian=False):
    """Symmetric matrices (Hermitian ones with ``hermitian``: complex symmetric ones are
    what sytrf factors)."""
    a = make(shape, -1, 1)
    at = np.swapaxes(a, -1, -2)
    return (a + (at.conj() if hermitian else at)).astype(make.dtype)


def _ldl_samples(make):
    yield S((_sym(make, (4, 4)),))
    yield S((_sym(make, (2, 3, 3), True),), {"hermitian": True})
    yield S((np.array([[0.0, 1.0], [1.0, 0.0]], make.dtype),))  # a 2 x 2 pivot block
    yield S((make((0, 0)),))


def _ldl_errors(make):
    yield E(
        S((make((3, 2)),)),
        RuntimeError,
        "torch.linalg.ldl_factor_ex: A must be batches of square matrices, but they are 3 by 2 matrices",
    )
    yield E(
        S((np.eye(3, dtype=np.int64),)),
        RuntimeError,
        "torch.linalg.ldl_factor_ex: Expected a floating point or complex tensor as input. Got Long",
    )


def _ldl_ex_errors(make):
    yield from _ldl_errors(make)
    yield E(
        S((np.zeros((2, 3, 3), make.dtype),), {"check_errors": True}),
        RuntimeError,
        "torch.linalg.ldl_factor_ex: Unknown error code: 1.",
    )


def _ldl_factor_op(name: str, kernel, nout: int, error_samples):
    """linalg.ldl_factor or linalg.ldl_factor_ex (which adds the info output): no
    derivative, as in PyTorch."""
    return defop(
        f"linalg_{name}",
        kernel,
        nout=nout,
        ndiff=1,
        vjp=_no_derivative("linalg_ldl_factor_ex"),
        jvp=_no_forward("linalg_ldl_factor_ex"),
        layout=_factor_layout,
        batch_rule=stacked(f"torch.linalg.{name}"),
        api=f"linalg.{name}",
        node_name=NOT_IMPLEMENTED,
        test={**_CX, "no_grad_test": True},  # no derivative: tests/test_linalg_decomp.py
        samples=_ldl_samples,
        error_samples=error_samples,
        complex32=unless_empty("ldl_factor_kernel_cpu"),  # (PyTorch's kernel)
        meta=meta_rules.factor,
    )


linalg_ldl_factor_ex_p = _ldl_factor_op("ldl_factor_ex", _ldl_factor_ex_kernel, 3, _ldl_ex_errors)
linalg_ldl_factor_p = _ldl_factor_op("ldl_factor", _ldl_factor_kernel, 2, _ldl_errors)


def ldl_factor(A, *, hermitian: bool = False, out=None):
    """(LD, pivots): L (unit lower, below the diagonal) and the blocks of D, with LAPACK's
    pivots (negative for a 2 x 2 block)."""
    return _tuple_out(linalg_ldl_factor_rt(linalg_ldl_factor_p.fn(A, hermitian=hermitian)), out)


def ldl_factor_ex(A, *, hermitian: bool = False, check_errors: bool = False, out=None):
    """(LD, pivots, info): info > 0 marks an exactly zero block of D instead of an error."""
    res = linalg_ldl_factor_ex_p.fn(A, hermitian=hermitian, check_errors=check_errors)
    return _tuple_out(linalg_ldl_factor_ex_rt(res), out)


# ------------------------------------------------------------------ solve
def _ldl_solve_checks(LD, pivots, B):
    name = "torch.linalg.ldl_solve"
    if LD.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor LD must have at least 2 dimensions.")
    if LD.shape[-1] != LD.shape[-2]:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are {LD.shape[-2]} by "
            f"{LD.shape[-1]} matrices"
        )
    if B.ndim < 2:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-max(B.ndim, 1)}, "
            f"{max(B.ndim, 1) - 1}], but got -2)"
        )
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(
            f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots "
            f"with shape {list(pivots.shape)} instead"
        )
    if pivots.dtype.kind not in "iu":
        raise RuntimeError(
            f"{name}: Expected pivots to be integers. Got {dt.of(pivots).scalar_name}"
        )
    if LD.dtype.kind not in "fc":
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got {dt.of(LD).scalar_name}"
        )
    if B.dtype != LD.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type {dt.of(B).scalar_name} "
            f"and A of type {dt.of(LD).scalar_name} instead."
        )
    p = np.abs(_host(pivots).astype(np.int64))
    if p.size and p.max() > LD.shape[-2]:
        raise RuntimeError(
            "Pivots given to ldl_solve must all satisfy |pivot| <= LD.size(-2). Did you "
            "properly pass the result of ldl_factor?"
        )
    if p.size and p.min() < 1:
        raise RuntimeError(
            "Pivots given to ldl_solve must all satisfy |pivot| >= 1. Did you properly pass "
            "the result of ldl_factor?"
        )
    if B.shape[-2] != LD.shape[-1]:
        n = LD.shape[-1]
        raise RuntimeError(
            f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} but each b "
            f"matrix is {B.shape[-2]} by {B.shape[-1]}"
        )


def _ldl_solve_kernel(xp, LD, pivots, B, *, hermitian=False):
    _ldl_solve_checks(LD, pivots, B)
    LDh, ph, Bh = _host(LD), _host(pivots).astype(np.int32), _host(B)
    batch = np.broadcast_shapes(LDh.shape[:-2], Bh.shape[:-2])
    LDh = np.broadcast_to(LDh, batch + LDh.shape[-2:])
    ph = np.broadcast_to(ph, batch + ph.shape[-1:])
    Bh = np.broadcast_to(Bh, batch + Bh.shape[-2:])
    X = np.empty(Bh.shape, Bh.dtype)
    if X.size:
        trs = _lapack("hetrs" if hermitian and LDh.dtype.kind == "c" else "sytrs", LDh)
        for idx in np.ndindex(batch):
            X[idx] = trs(
                np.asfortranarray(LDh[idx]),
                np.ascontiguousarray(ph[idx]),
                np.asfortranarray(Bh[idx]),
                lower=1,
            )[0]
    return xp.asarray(X)


def _ldl_solve_rule(vmap, args, bdims, attrs):
    """LD and pivots batch-first with one batch; B aligned to LD's rank."""
    (LD, piv, B), (bL, bp, bB) = args, bdims
    sL, sB = lshape(LD, bL), lshape(B, bB)
    _min_rank("torch.linalg.ldl_solve", sL, "LD")
    r = max(len(sL), len(sB))
    if bL is None and bp is None:
        LD = _align(LD, None, r)
        piv = piv.reshape(tuple(LD.shape[:-1]))
    else:
        size = next(a.shape[b] for a, b in ((LD, bL), (piv, bp)) if b is not None)
        LD = front(LD, bL) if bL is not None else LD.unsqueeze(0).expand((size, *LD.shape))
        piv = front(piv, bp) if bp is not None else piv.unsqueeze(0).expand((size, *piv.shape))
        LD = _align(LD, 0, r)
        piv = piv.reshape(tuple(LD.shape[:-1]))
    return dispatch(linalg_ldl_solve_p, (LD, piv, _align(B, bB, r)), attrs), 0


def _ldl_solve_samples(make):
    for s in _ldl_samples(make):
        A = s.args[0]
        if A.shape[-1] == 0:
            continue
        herm = s.kwargs.get("hermitian", False)
        LD, piv, _ = _sytrf(A, herm)
        yield S((LD, piv, make(A.shape[:-1] + (2,))), dict(s.kwargs))
    LD, piv, _ = _sytrf(_sym(make, (3, 3)), False)
    yield S((LD, piv, make((2, 3, 1))))


def _ldl_solve_errors(make):
    LD, piv, _ = _sytrf(_sym(make, (4, 4)), False)
    yield E(
        S((LD, piv, make((3, 2)))),
        RuntimeError,
        "Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is 4 by 4 but each "
        "b matrix is 3 by 2",
    )
    yield E(
        S((LD, piv.astype(np.float32), make((4, 2)))),
        RuntimeError,
        "torch.linalg.ldl_solve: Expected pivots to be integers. Got Float",
    )
    yield E(
        S((LD, piv[:3].copy(), make((4, 2)))),
        RuntimeError,
        r"torch.linalg.ldl_solve: Expected LD.shape\[:-1\] and pivots.shape to be the same",
    )


def _ldl_solve_jvp(tLD, tB):
    raise RuntimeError("derivative for aten::linalg_ldl_solve is not implemented")


linalg_ldl_solve_p = defop(
    "linalg_ldl_solve",
    _ldl_solve_kernel,
    nin=3,
    vjp=(
        _no_derivative("linalg_ldl_solve"),
        None,
        _no_derivative("linalg_ldl_solve"),
    ),
    jvp=_ldl_solve_jvp,
    layout=column_major,
    batch_rule=_ldl_solve_rule,
    api="linalg.ldl_solve",
    out=True,
    node_name=NOT_IMPLEMENTED,
    test={**_CX, "no_grad_test": True},  # no derivative: tests/test_linalg_decomp.py
    samples=_ldl_solve_samples,
    error_samples=_ldl_solve_errors,
    complex32="ldl_solve_kernel_cpu",  # (PyTorch's kernel)
    meta=meta_rules.factor_solve,
)
