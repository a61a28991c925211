"""torch.linalg: the public functions of this namespace, listed here."""

# ruff: noqa: F401
from ._core.signature import numpy_keywords_in as _numpy_keywords_in
from .ops import linalg as _linalg
from .ops import reduction as _reduction
from .ops.linalg import (
    LinAlgError,
    cholesky_ex,
    cond,
    diagonal,
    eig,
    eigh,
    householder_product,
    inv_ex,
    ldl_factor,
    ldl_factor_ex,
    lstsq,
    lu,
    lu_factor,
    lu_factor_ex,
    matrix_norm,
    matrix_power,
    matrix_rank,
    multi_dot,
    norm,
    pinv,
    qr,
    solve_ex,
    svd,
    tensorinv,
    tensorsolve,
    vecdot,
)

# reduction
vector_norm = _reduction.vector_norm_p.fn

# linalg
cholesky = _linalg.linalg_cholesky_p.fn
cross = _linalg.linalg_cross_p.fn
det = _linalg.linalg_det_p.fn
eigvals = _linalg.linalg_eigvals_p.fn
eigvalsh = _linalg.linalg_eigvalsh_p.fn
inv = _linalg.linalg_inv_p.fn
ldl_solve = _linalg.linalg_ldl_solve_p.fn
matmul = _linalg.matmul_p.fn
vander = _linalg.linalg_vander
lu_solve = _linalg.linalg_lu_solve_p.fn
matrix_exp = _linalg.linalg_matrix_exp_p.fn
slogdet = _linalg.linalg_slogdet
solve = _linalg.linalg_solve_p.fn
solve_triangular = _linalg.linalg_solve_triangular_p.fn
svdvals = _linalg.linalg_svdvals_p.fn

# NumPy's axis=/keepdims= for dim=/keepdim=, as PyTorch's argument parser takes them
_numpy_keywords_in(globals(), "linalg")
