"""Functions of a matrix: linalg.matrix_exp (scipy's expm, or a batched Pade approximant
on CuPy)."""

from __future__ import annotations

import numpy as np

from ..._core import meta_rules
from ..._core.op import defop
from ..._opdb.samples import S
from ..creation import zeros_like
from ..shape import cat
from ._common import _CX, _float_only, _square, stacked
from ._lapack import _scipy_linalg
from ._samples import _sq_errors


def _expm(xp, A):
    _square("linalg.matrix_exp", A)
    if A.size == 0:
        return A.copy()
    if xp is not np:
        return _pade_expm(xp, A)
    return xp.asarray(_scipy_linalg(xp).expm(A)).astype(A.dtype)


# Higham's degree-13 Pade approximant of exp and the 1-norm bound it is accurate within
_PADE13 = (
    64764752532480000.0,
    32382376266240000.0,
    7771770303897600.0,
    1187353796428800.0,
    129060195264000.0,
    10559470521600.0,
    670442572800.0,
    33522128640.0,
    1323241920.0,
    40840800.0,
    960960.0,
    16380.0,
    182.0,
    1.0,
)
_THETA13 = 5.371920351148152


def _pade_expm(xp, A):
    """exp of a stack of matrices by scaling, the degree-13 Pade approximant and squaring,
    all matrices at once (cupyx's expm takes one matrix)."""
    b = _PADE13
    norm = xp.abs(A).sum(-2).max(-1)
    s = xp.maximum(xp.ceil(xp.log2(xp.maximum(norm, 1e-300) / _THETA13)), 0)
    s = xp.where(xp.isfinite(s), s, 0)  # NaN or inf entries give NaN, unscaled
    A = A / (2.0**s)[..., None, None]
    eye = xp.broadcast_to(xp.eye(A.shape[-1], dtype=A.dtype), A.shape)
    A2 = A @ A
    A4 = A2 @ A2
    A6 = A4 @ A2
    U = A @ (
        A6 @ (b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * eye
    )
    V = A6 @ (b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * eye
    X = xp.linalg.solve(V - U, V + U)
    for i in range(int(s.max()) if s.size else 0):  # square each matrix s times
        X = xp.where((s > i)[..., None, None], X @ X, X)
    return X.astype(A.dtype)


def _block_exp(A, X):
    """The top-right block of exp([[A, X], [0, A]]): the derivative of exp at A along X."""
    n = A.shape[-1]
    top = cat([A, X], -1)
    bottom = cat([zeros_like(A), A], -1)
    return linalg_matrix_exp(cat([top, bottom], -2)).narrow(-2, 0, n).narrow(-1, n, n)


def _linalg_matrix_exp_samples(make):
    return [
        S((make((3, 3), -1, 1),)),
        S((make((2, 2, 2), -1, 1),)),
        S((make((1, 1)),)),
    ]


def _matrix_exp_complex32(arrays, attrs):
    """PyTorch's kernel refusing complex32: exp's for 1x1 matrices, else the products'."""
    n = arrays[0].shape[-1]
    return arrays[0].size == 0 or ("exp_vml_cpu" if n == 1 else "bmm")


linalg_matrix_exp_p = defop(
    "linalg_matrix_exp",
    _expm,
    vjp=lambda g, A: _block_exp(A.mH, g),
    jvp=lambda t, A: _block_exp(A, t),
    prepare=_float_only("linalg.matrix_exp"),
    batch_rule=stacked("linalg.matrix_exp"),
    api="linalg.matrix_exp",
    samples=_linalg_matrix_exp_samples,
    error_samples=_sq_errors("linalg.matrix_exp"),
    methods=("matrix_exp",),
    test=_CX,
    complex32=_matrix_exp_complex32,
    meta=meta_rules.square_like,
)
linalg_matrix_exp = linalg_matrix_exp_p.fn
