"""Eigendecomposition of general square matrices: linalg.eig and linalg.eigvals (LAPACK's
geev). The results are complex for real inputs too; each eigenvector has norm 1 (and its
largest component real, as geev leaves it).

The gradients are PyTorch's: with A = V diag(L) V^{-1} and E_ij = conj(L_j - L_i),
gA = V^{-H} (diag(gL) + (V^H gV - V^H V diag(Re(V^H gV))) / E) V^H off the diagonal.
"""

from __future__ import annotations

import numpy as np

from ..._core import dtype as dt
from ..._core.layout import column_major, contiguous
from ..._core.meta import by_kernel
from ..._core.meta_array import has_values
from ..._core.op import defop
from ..._opdb.samples import ErrorInput as E
from ..._opdb.samples import S
from ._common import _CX, _eye, _square, _tuple_out, return_type, stacked
from ._samples import _wc
from .solvers import linalg_solve

linalg_eig_rt = return_type("linalg_eig", ("eigenvalues", "eigenvectors"))

_COMPLEX = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}


def _eig_prepare(name):
    def prepare(arrays, attrs=None):
        a = arrays[0]
        if a.dtype.kind not in "fc":
            raise RuntimeError(f"Unknown Complex ScalarType for {dt.of(a).scalar_name}")
        return arrays, None

    return prepare


def _eig_call(xp, A, name, vectors=True):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    _square(name, A)
    finite = xp.isfinite(A).all(axis=(-2, -1))
    if (
        not vectors and has_values(finite) and not finite.all()
    ):  # geev's result is unspecified there: NaN
        cdtype = _COMPLEX.get(A.dtype, A.dtype)
        w = _eig_call(xp, xp.where(finite[..., None, None], A, 0), name, vectors)[0]
        return xp.where(finite[..., None], w, xp.asarray(complex(np.nan, np.nan), cdtype)), None
    if has_values(finite) and not finite.all():
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    cdtype = _COMPLEX.get(A.dtype, A.dtype)
    if A.size == 0:
        return xp.zeros(A.shape[:-1], cdtype), xp.zeros(A.shape, cdtype)
    if xp is np or not has_values(A):
        w, v = xp.linalg.eig(A)
        return w.astype(cdtype), v.astype(cdtype)
    # CuPy has no geev: as PyTorch's CUDA build does, compute on the host and copy back
    w, v = np.linalg.eig(A.get())
    return xp.asarray(w.astype(cdtype)), xp.asarray(v.astype(cdtype))


def _eig_kernel(xp, A):
    return _eig_call(xp, A, "linalg.eig")


def _eigvals_kernel(xp, A):
    return _eig_call(xp, A, "linalg.eigvals", vectors=False)[0]


def _eig_layout(out, inputs=None, attrs=None):
    return column_major(out) if out.ndim >= 2 else contiguous(out)


def _diag(x):
    """The diagonal matrices of a batch of vectors."""
    return x.unsqueeze(-1) * _eye(x.shape[-1], x)


def _offdiag_gap(L):
    """E_ij = L_j - L_i off the diagonal, 1 on it."""
    eye = _eye(L.shape[-1], L)
    return L.unsqueeze(-2) - L.unsqueeze(-1) + eye


def _eig_vjp_from(gL, gV, L, V):
    n = L.shape[-1]
    eye = _eye(n, L)
    inner = 0
    if gV is not None:
        VhgV = V.mH @ gV
        re = (VhgV * eye).sum(-1).real
        VhgV = VhgV - V.mH @ (V * re.unsqueeze(-2).to(V.dtype))
        inner = VhgV * (1 - eye) / _offdiag_gap(L).conj()
    if gL is not None:
        inner = inner + _diag(gL)
    return linalg_solve(V.mH, inner @ V.mH)


def _eig_vjp(g, result):
    gL, gV = g
    L, V = result
    return _eig_vjp_from(gL, gV, L, V)


def _eig_jvp_from(t, L, V):
    X = linalg_solve(V, t.to(V.dtype) @ V)
    eye = _eye(L.shape[-1], L)
    dL = (X * eye).sum(-1)
    dX = V @ (X * (1 - eye) / _offdiag_gap(L))
    re = (V.mH @ dX * eye).sum(-1).real
    return dL, dX - V * re.unsqueeze(-2).to(V.dtype)


def _eig_jvp(t, result):
    return _eig_jvp_from(t, result[0], result[1])


def _eig_samples(make):
    yield S((_wc(make, (3, 3)),))
    yield S((_wc(make, (2, 3, 3)),))
    if make.dtype.kind == "f":  # a conjugate pair (as complex input, its order is not smooth)
        yield S((np.array([[1.0, 2.0], [-3.0, 1.0]], make.dtype),))
    yield S((make((0, 2, 2)),))


def _eig_errors(name):
    def errors(make):
        yield from _shape_errors(name, make)
        yield E(
            S((np.array([[1.0, np.nan], [0.0, 1.0]], make.dtype),)),
            RuntimeError,
            "torch.linalg.eig: input tensor should not contain infs or NaNs.",
        )

    return errors


def _shape_errors(name, make):
    yield E(
        S((make((3, 2)),)),
        RuntimeError,
        f"{name}: A must be batches of square matrices, but they are 3 by 2 matrices",
    )
    yield E(
        S((make((3,)),)),
        RuntimeError,
        f"{name}: The input tensor A must have at least 2 dimensions.",
    )
    yield E(
        S((np.eye(2, dtype=np.int64),)),
        RuntimeError,
        "Unknown Complex ScalarType for Long",
    )


linalg_eig_p = defop(
    "linalg_eig",
    _eig_kernel,
    nout=2,
    out_names=("eigenvalues", "eigenvectors"),
    saved_outputs=(0, 1),
    ndiff=2,
    vjp=_eig_vjp,
    jvp=_eig_jvp,
    layout=_eig_layout,
    prepare=_eig_prepare("linalg.eig"),
    batch_rule=stacked("linalg.eig"),
    api="linalg.eig",
    node_name="LinalgEigBackward0",
    # eigenvector phases (LAPACK builds differ in sign) make V and a random cotangent of V
    # ill-defined (PyTorch raises on it): tests/test_linalg_decomp.py compares V up to
    # phase and the gradients with phase-invariant losses
    test={**_CX, "no_oracle": True, "no_grad_test": True},
    samples=_eig_samples,
    error_samples=_eig_errors("linalg.eig"),
    complex32="linalg_eig_out_cpu",  # (PyTorch's kernel, even for an empty batch)
)
linalg_eig = linalg_eig_p.fn


def _eigvals_vjp(g, A):
    L, V = linalg_eig(A)
    return _eig_vjp_from(g, None, L, V)


def _eigvals_jvp(t, A):
    L, V = linalg_eig(A)
    return _eig_jvp_from(t, L, V)[0]


linalg_eigvals_p = defop(
    "linalg_eigvals",
    _eigvals_kernel,
    vjp=_eigvals_vjp,
    jvp=_eigvals_jvp,
    prepare=_eig_prepare("linalg.eigvals"),
    batch_rule=stacked("linalg.eigvals"),
    api="linalg.eigvals",
    out=True,
    node_name="LinalgEigBackward0",
    test=_CX,
    samples=_eig_samples,
    error_samples=lambda make: _shape_errors("linalg.eigvals", make),
    complex32="linalg_eig_out_cpu",  # (eig's kernel, even for an empty batch)
    meta=by_kernel,
)
linalg_eigvals = linalg_eigvals_p.fn


def eig(A, *, out=None):
    """(eigenvalues, eigenvectors) of square matrices, both complex."""
    return _tuple_out(linalg_eig_rt(linalg_eig(A)), out)
