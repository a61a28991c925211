"""Householder reflectors: torch.geqrf (LAPACK's geqrf), linalg.householder_product (=
torch.orgqr) and torch.ormqr.

geqrf leaves R on and above the diagonal of ``a`` and the reflectors' vectors below it,
v_i = (0, ..., 0, 1, a[i+1:, i]), with H_i = I - tau_i v_i v_i^H and Q = H_0 H_1 ... H_{k-1}.
householder_product and ormqr apply the reflectors one by one with numtorch ops, so their
gradients (PyTorch's LinalgHouseholderProductBackward0 and OrmqrBackward0) are those of the
products, for real and complex inputs. PyTorch has no derivative for geqrf: its backward
raises.
"""

from __future__ import annotations

import numpy as np

from ..._core.methods import tensor_methods
from ..._core.op import NoKernel, composite, defop
from ..._opdb.samples import ErrorInput as E
from ..._opdb.samples import S
from ..comparison import where
from ..creation import eye, tensor
from ..shape import cat
from ._common import _CX, _tuple_out, return_type, stacked

geqrf_rt = return_type("geqrf", ("a", "tau"))


def _host(a):
    return np.asarray(a.get() if hasattr(a, "get") else a)


# ------------------------------------------------------------------ geqrf
def _geqrf_kernel(xp, input):
    import scipy.linalg

    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    A = _host(input)
    m, n = A.shape[-2:]
    k = min(m, n)
    a = np.array(A, copy=True)
    tau = np.zeros(A.shape[:-2] + (k,), A.dtype)
    if k:
        geqrf = scipy.linalg.get_lapack_funcs("geqrf", (A,))
        for idx in np.ndindex(A.shape[:-2]):
            qr, t, _, _ = geqrf(np.asfortranarray(A[idx]))
            a[idx], tau[idx] = qr, t[:k]
    # a column by column, as LAPACK leaves it
    a = np.swapaxes(np.swapaxes(a, -1, -2).copy(), -1, -2)
    return xp.asarray(a), xp.asarray(tau)


def _geqrf_vjp(g):
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


def _geqrf_samples(make):
    yield S((make((5, 3)),))
    yield S((make((2, 3, 5)),))
    yield S((make((3, 3)),))
    yield S((make((0, 3)),))


def _geqrf_errors(make):
    yield E(S((make((3,)),)), RuntimeError, "torch.geqrf: input must have at least 2 dimensions.")


def _geqrf_layout(out, inputs=None, attrs=None):
    return out


geqrf_p = defop(
    "geqrf",
    _geqrf_kernel,
    nout=2,
    ndiff=2,
    vjp=_geqrf_vjp,
    layout=_geqrf_layout,
    no_kernel=NoKernel("bi", "geqrf_cpu"),
    batch_rule=stacked("torch.geqrf"),
    node_name="GeqrfBackward0",
    complex_grad=False,
    test={**_CX, "no_grad_test": True},  # no derivative: tests/test_linalg_decomp.py
    samples=_geqrf_samples,
    error_samples=_geqrf_errors,
    autocast="fp32",
)


def geqrf(input, *, out=None):
    """(a, tau): R and the Householder reflectors of the QR decomposition, as LAPACK's geqrf."""
    return _tuple_out(geqrf_rt(geqrf_p.fn(input)), out)


# ------------------------------------------------------------------ the reflectors
def _reflectors(input, k):
    """V (m x k): column i is v_i = (0, ..., 0, 1, input[i+1:, i])."""
    m = input.shape[-2]
    # where, not a product with a 0/1 mask: a NaN above the diagonal is never read
    low = _const(np.tri(m, k, -1).astype(bool), input)
    return where(low, input.narrow(-1, 0, k), _const(np.eye(m, k), input))


def _const(a, like):
    dtype = None if a.dtype == bool else like.dtype
    return tensor(a, dtype=dtype, device=like.device)


def _column(V, i):
    return V.narrow(-1, i, 1)


def _tau(tau, i):
    return tau.narrow(-1, i, 1).unsqueeze(-1)


def _apply_left(V, tau, C, adjoint):
    """H_i C for each reflector: Q C (applied last to first), or Q^H C (first to last)."""
    k = tau.shape[-1]
    order = range(k) if adjoint else range(k - 1, -1, -1)
    for i in order:
        v, t = _column(V, i), _tau(tau, i)
        t = t.conj() if adjoint else t
        C = C - (t * v) @ (v.mH @ C)
    return C


def _apply_right(V, tau, C, adjoint):
    """C H_i for each reflector: C Q (first to last), or C Q^H (last to first)."""
    k = tau.shape[-1]
    order = range(k - 1, -1, -1) if adjoint else range(k)
    for i in order:
        v, t = _column(V, i), _tau(tau, i)
        t = t.conj() if adjoint else t
        C = C - ((C @ v) * t) @ v.mH
    return C


def _column_major(x):
    return x.mT.contiguous().mT


# ------------------------------------------------------------------ householder_product
def _hp_checks(input, tau):
    name = "torch.linalg.householder_product"
    if input.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if tau.dim() != input.dim() - 1:
        raise RuntimeError(
            f"{name}: Expected tau to have one dimension less than input, but got tau.ndim "
            f"equal to {tau.dim()} and input.ndim is equal to {input.dim()}"
        )
    if input.shape[-2] < input.shape[-1]:
        raise RuntimeError(
            f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]"
        )
    if input.shape[-1] < tau.shape[-1]:
        raise RuntimeError(
            f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]"
        )
    if tuple(tau.shape[:-1]) != tuple(input.shape[:-2]):
        raise RuntimeError(
            f"{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], but "
            f"got {list(tau.shape[:-1])}"
        )
    if tau.dtype != input.dtype:
        raise RuntimeError(
            f"{name}: tau dtype {tau.dtype.scalar_name} does not match input dtype "
            f"{input.dtype.scalar_name}"
        )


def _geqrf_of(make, shape):
    A = make(shape)
    a, tau = _geqrf_kernel(np, A)
    return a, tau


def _hp_samples(make):
    yield S(_geqrf_of(make, (5, 3)))
    yield S(_geqrf_of(make, (2, 4, 4)))
    a, tau = _geqrf_of(make, (4, 3))
    yield S((a, tau[:2].copy()))
    yield S((make((3, 2)), make((2,))))


def _hp_errors(make):
    a, tau = _geqrf_of(make, (5, 3))
    yield E(
        S((a[:2].copy(), tau)),
        RuntimeError,
        r"torch.linalg.householder_product: input.shape\[-2\] must be greater than or equal to "
        r"input.shape\[-1\]",
    )
    yield E(
        S((a, make((4,)))),
        RuntimeError,
        r"torch.linalg.householder_product: input.shape\[-1\] must be greater than or equal to "
        r"tau.shape\[-1\]",
    )
    yield E(
        S((a, tau.reshape(1, 3))),
        RuntimeError,
        "torch.linalg.householder_product: Expected tau to have one dimension less than input",
    )


@composite(
    name="linalg_householder_product",
    api="linalg.householder_product",
    no_kernel=NoKernel("bi", "orgqr_cpu"),
    test=_CX,
    samples=_hp_samples,
    error_samples=_hp_errors,
    complex32="orgqr_cpu",  # (PyTorch's kernel),
    autocast="fp32",
)
def householder_product(A, tau, *, out=None):
    """The first n columns of H_0 H_1 ... H_{k-1} (LAPACK's orgqr / ungqr)."""
    _hp_checks(A, tau)
    m, n = A.shape[-2], A.shape[-1]
    V = _reflectors(A, tau.shape[-1])
    Q = eye(m, n, dtype=A.dtype, device=A.device).expand(tuple(A.shape))
    for i in range(tau.shape[-1] - 1, -1, -1):
        # H_i leaves the columns before i (still e_j) as they are, as LAPACK's org2r does
        v, t, rest = _column(V, i), _tau(tau, i), Q.narrow(-1, i, n - i)
        rest = rest - (t * v) @ (v.mH @ rest)
        Q = cat([Q.narrow(-1, 0, i), rest], -1) if i else rest
    res = _column_major(Q)
    return res if out is None else _tuple_out((res,), (out,))[0]


def orgqr(input, tau):
    """torch.orgqr: linalg.householder_product."""
    return householder_product(input, tau)


# ------------------------------------------------------------------ ormqr
def _ormqr_checks(input, tau, other, left):
    name = "torch.ormqr"
    if input.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if other.dim() < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    if tau.dim() != input.dim() - 1:
        raise RuntimeError(
            f"{name}: Expected tau to have one dimension less than input, but got tau.ndim "
            f"equal to {tau.dim()} and input.ndim is equal to {input.dim()}"
        )
    if other.dim() != input.dim():
        raise RuntimeError(
            f"{name}: Expected other to have the same number of dimensions as input, but got "
            f"other.ndim equal to {other.dim()} and input.ndim is equal to {input.dim()}"
        )
    m = input.shape[-2]
    if left and other.shape[-2] != m:
        raise RuntimeError(f"{name}: other.shape[-2] must be equal to input.shape[-2]")
    if not left and other.shape[-1] != m:
        raise RuntimeError(f"{name}: other.shape[-1] must be equal to input.shape[-2]")
    if tau.shape[-1] > min(other.shape[-2] if left else other.shape[-1], input.shape[-1]):
        raise RuntimeError(
            f"{name}: tau.shape[-1] must be equal to min(other.shape[-2], input.shape[-1])"
        )
    if tau.dtype != input.dtype:
        raise RuntimeError(
            f"{name}: Expected input and tau to have the same dtype, but input has dtype"
            f"{input.dtype.scalar_name} and tau has dtype {tau.dtype.scalar_name}"
        )
    if other.dtype != input.dtype:
        raise RuntimeError(
            f"{name}: Expected input and other to have the same dtype, but input has dtype"
            f"{input.dtype.scalar_name} and other has dtype {other.dtype.scalar_name}"
        )


def _ormqr_samples(make):
    a, tau = _geqrf_of(make, (5, 3))
    yield S((a, tau, make((5, 2))))
    yield S((a, tau, make((2, 5))), {"left": False})
    yield S((a, tau, make((5, 2))), {"transpose": True})
    yield S((a, tau, make((2, 5))), {"left": False, "transpose": True})
    a, tau = _geqrf_of(make, (2, 3, 3))
    yield S((a, tau, make((2, 3, 4))))


def _ormqr_errors(make):
    a, tau = _geqrf_of(make, (5, 3))
    yield E(
        S((a, tau, make((4, 2)))),
        RuntimeError,
        r"torch.ormqr: other.shape\[-2\] must be equal to input.shape\[-2\]",
    )
    yield E(
        S((a, tau, make((2, 3))), {"left": False}),
        RuntimeError,
        r"torch.ormqr: other.shape\[-1\] must be equal to input.shape\[-2\]",
    )
    yield E(
        S((a, tau, make((5,)))),
        RuntimeError,
        "torch.ormqr: other must have at least 2 dimensions.",
    )


@composite(
    no_kernel=NoKernel("bi", "ormqr_cpu"),
    test=_CX,
    samples=_ormqr_samples,
    error_samples=_ormqr_errors,
    methods=True,
    complex32="ormqr_cpu",  # (PyTorch's kernel),
    autocast="fp32",
)
def ormqr(input, tau, other, left: bool = True, transpose: bool = False, *, out=None):
    """Q other, other Q, or with Q^H (``transpose``), Q given by geqrf's reflectors."""
    _ormqr_checks(input, tau, other, left)
    V = _reflectors(input, tau.shape[-1])
    apply = _apply_left if left else _apply_right
    res = _column_major(apply(V, tau, other, adjoint=transpose))
    return res if out is None else _tuple_out((res,), (out,))[0]


def _geqrf_method(self):
    return geqrf(self)


def _orgqr_method(self, input2):
    return householder_product(self, input2)


tensor_methods({"geqrf": _geqrf_method, "orgqr": _orgqr_method})
