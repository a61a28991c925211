"""Rank and conditioning: linalg.matrix_rank and linalg.cond, and the deprecated
torch.nuclear_norm and torch.frobenius_norm, written with the SVD, the inverse and the
matrix and vector norms."""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..._core import dtype as dt
from ..._core.op import composite
from ..._core.tensor import Tensor
from ..._opdb.samples import ErrorInput as E
from ..._opdb.samples import S
from ..comparison import where
from ..creation import tensor, zeros
from ..reduction import vector_norm
from ..unary import nan_to_num_p
from ._common import _CX, _write
from ._samples import _spd, _wc, _well_conditioned
from .composites import matrix_norm
from .decompositions import linalg_eigvalsh_p, linalg_svdvals
from .least_squares import FLOAT_AND_DOUBLE
from .with_info import linalg_inv_ex


# ------------------------------------------------------------------ matrix_rank
def _real_eps(A) -> float:
    return float(np.finfo(A.dtype.np).eps)


def _as_tol(x, like):
    if x is None or isinstance(x, Tensor):
        return x
    return tensor(float(x), dtype=like.dtype, device=like.device)


def _matrix_rank_samples(make):
    a = make((4, 3), -1, 1)
    a[:, 2] = a[:, 0] + a[:, 1]  # rank 2
    yield S((a,))
    yield S((_well_conditioned(make, (2, 3, 3)),))
    yield S((a, 0.5))
    yield S((a,), {"atol": 0.5, "rtol": 0.1})
    yield S((_spd(make, (3, 3)),), {"hermitian": True})
    yield S((a,), {"rtol": 0.9})
    yield S((make((0, 3)),))


def _matrix_rank_errors(make):
    yield E(
        S((make((3,)),)),
        RuntimeError,
        "torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.",
    )
    yield E(
        S((np.eye(3, dtype=np.int64),)),
        RuntimeError,
        "This function doesn't handle types other than float and double",
    )


def _matrix_rank_complex32(inputs, args):
    """PyTorch's matrix_rank of complex32: its default tolerance (from the dtype's eps)
    refuses it, else the decomposition's kernel does."""
    if args["tol"] is None and args["atol"] is None and args["rtol"] is None:
        raise RuntimeError(FLOAT_AND_DOUBLE)
    return "linalg_eigh_cpu" if args["hermitian"] else "linalg_svd_cpu"


@composite(
    name="linalg_matrix_rank",
    api="linalg.matrix_rank",
    differentiable=False,
    samples=_matrix_rank_samples,
    error_samples=_matrix_rank_errors,
    test=_CX,
    complex32=_matrix_rank_complex32,
)
def matrix_rank(A, tol=None, hermitian: bool = False, *, atol=None, rtol=None, out=None):
    """The number of singular values (|eigenvalues| if ``hermitian``) above
    max(atol, rtol * largest); ``tol`` is the older spelling of ``atol`` with rtol 0."""
    if A.dim() < 2:
        raise RuntimeError(
            "torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions."
        )
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, 0.0
    S_ = linalg_eigvalsh_p.fn(A).abs() if hermitian else linalg_svdvals(A)
    S_ = S_.detach()
    real = S_.dtype
    atol, rtol = _as_tol(atol, S_), _as_tol(rtol, S_)
    # tolerances broadcast against the batch of matrices: a trailing dim for the values
    atol = None if atol is None else atol.to(real).unsqueeze(-1)
    rtol = None if rtol is None else rtol.to(real).unsqueeze(-1)
    default = _real_eps(S_) * max(A.shape[-2], A.shape[-1])
    if rtol is None:
        rtol = (
            tensor(default, dtype=real, device=A.device)
            if atol is None
            else where(atol > 0, 0.0, default).to(real)
        )
    if S_.shape[-1] == 0:
        res = zeros(A.shape[:-2], dtype=dt.int64, device=A.device)
    else:
        cut = rtol * S_.amax(-1, keepdim=True)
        if atol is not None:
            cut = where(cut > atol, cut, atol)
        res = (S_ > cut).sum(-1)
    return res if out is None else _write(out, res)


# ------------------------------------------------------------------ cond
_NORMS = ("fro", "nuc", math.inf, -math.inf, 1, -1)


def _cond_samples(make):
    A = _wc(make, (3, 3))
    yield S((A,))
    yield S((_wc(make, (2, 3, 3)), 2))
    yield S((A, -2))
    yield S((make((3, 4), -1, 1) + np.eye(3, 4, dtype=make.dtype) * 3,))
    yield S((A, "nuc"))  # the other orders' backward fails in PyTorch: tests/test_linalg.py
    yield S((_wc(make, (2, 2, 2)), "nuc"))


def _cond_errors(make):
    yield E(
        S((make((3, 4)), "fro")),
        RuntimeError,
        r"linalg.cond\(ord=fro\): A must be batches of square matrices, but they are 3 by 4 matrices",
    )
    yield E(S((make((3, 3)), "foo")), RuntimeError, "linalg.cond got an invalid norm type: foo")
    yield E(S((make((3, 3)), 3)), RuntimeError, "linalg.cond got an invalid norm type: 3")
    yield E(
        S((make((3,)),)),
        RuntimeError,
        "linalg.cond: The input tensor must have at least 2 dimensions.",
    )


@composite(
    name="linalg_cond",
    api="linalg.cond",
    test=_CX,
    samples=_cond_samples,
    error_samples=_cond_errors,
    complex32="linalg_svd_cpu",  # (PyTorch's kernel)
)
def cond(A, p=None, *, out=None):
    """The condition number of A in norm p: s_max / s_min for p None or 2 (-2: inverted),
    else |A|_p |A^{-1}|_p, infinite for a singular A."""
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p not in (None, 2, -2) and p not in _NORMS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if p in (None, 2, -2):
        s = linalg_svdvals(A)
        if s.shape[-1] == 0:
            res = zeros(A.shape[:-2], dtype=s.dtype, device=A.device)
        else:
            hi, lo = s.narrow(-1, 0, 1), s.narrow(-1, s.shape[-1] - 1, 1)
            res = (lo / hi if p == -2 else hi / lo).squeeze(-1)
        return res if out is None else _write(out, res)
    m, n = A.shape[-2], A.shape[-1]
    if m != n:
        raise RuntimeError(
            f"linalg.cond(ord={p}): A must be batches of square matrices, but they are {m} by {n} matrices"
        )
    if n == 0:
        real = dt.float32 if A.dtype in (dt.float32, dt.complex64) else dt.float64
        res = zeros(A.shape[:-2], dtype=real, device=A.device)
        return res if out is None else _write(out, res)
    inv, info = linalg_inv_ex(A)
    if p == "nuc":
        bad = (info > 0).unsqueeze(-1).unsqueeze(-1)
        res = where(info > 0, math.inf, matrix_norm(A, p) * matrix_norm(where(bad, 0.0, inv), p))
    else:
        # as PyTorch's kernel: the inverse of a singular matrix filled with inf in place,
        # which (inv_ex having saved it) makes these orders' backward fail as PyTorch's does
        inv.masked_fill_((info > 0).unsqueeze(-1).unsqueeze(-1), math.inf)
        res = matrix_norm(A, p) * matrix_norm(inv, p)
    res = nan_to_num_p.fn(res, nan=math.inf, posinf=math.inf, neginf=-math.inf)
    return res if out is None else _write(out, res)


# ------------------------------------------------------------------ deprecated norms
_WARNED = set()


def _warn_once(key, text):
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(text, UserWarning, stacklevel=3)


def _nuclear_samples(make):
    yield S((make((3, 4)),))
    yield S((make((3, 3)),), {"keepdim": True})
    yield S((make((2, 3, 4)), (0, 2)))
    yield S((make((2, 3, 4)), (2, 1), True))


@composite(
    samples=_nuclear_samples,
    test=_CX,
)
def nuclear_norm(input, dim=None, keepdim: bool = False, *, out=None):
    """torch.nuclear_norm: linalg.matrix_norm(input, 'nuc', dim, keepdim)."""
    _warn_once(
        "nuclear_norm",
        "at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be "
        "removed in a future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, "
        "keepdim)` instead",
    )
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim, out=out)


def _frobenius_samples(make):
    yield S((make((3, 4)), (0, 1)))
    yield S((make((2, 3, 4)), (0, 2), True))
    yield S((make((2, 3, 4)), (1,)))


def _frobenius_errors(make):
    yield E(
        S((make((2, 3, 4)), (0, 1, 2))),
        RuntimeError,
        "Expected at most 2 dimensions, but got 3 dimensions instead.",
    )


@composite(
    samples=_frobenius_samples,
    error_samples=_frobenius_errors,
    test=_CX,
)
def frobenius_norm(input, dim, keepdim: bool = False, *, out=None):
    """torch.frobenius_norm: linalg.vector_norm(input, 2, dim, keepdim)."""
    _warn_once(
        "frobenius_norm",
        "at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will "
        "be removed in a future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, "
        "keepdim)` instead",
    )
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. Got "
            f"{input.dtype.scalar_name} instead."
        )
    if len(dims) > 2:
        raise RuntimeError(
            f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead."
        )
    return vector_norm(input, 2, dims, keepdim, out=out)
