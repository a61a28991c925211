"""Linear algebra: products, contractions, decompositions, solves and matrix functions.

Kernels call ``xp.linalg`` (scipy.linalg only for triangular solves and expm); every
vjp/jvp is written with numtorch ops, so it is differentiable again. One module per
family, imported here in the order their ops register; this package lists the names the
rest of numtorch imports.
"""

# ruff: noqa: F401

# The modules in the order their ops register (the op database's order); reduction's
# and shape's ops register before them.
# isort: off
from .. import reduction, shape
from ._common import (
    LinAlgError,
    linalg_cholesky_ex_rt,
    linalg_eigh_rt,
    linalg_inv_ex_rt,
    linalg_qr_rt,
    linalg_slogdet_rt,
    linalg_solve_ex_rt,
    linalg_svd_rt,
    qr_rt,
    return_type,
    slogdet_rt,
    stacked,
    svd_rt,
)
from .products import bmm_p, dot_p, matmul_p, matmul, mm_p, mm, mv_p, outer_p, product, vdot_p
from .contractions import einsum, einsum_p, inner, kron, multi_dot, tensordot, vecdot
from .add_products import addbmm_p, addmm_p, addmm, addmv_p, addr_p, baddbmm_p
from .cross_trace import cross, linalg_cross_p, trace_p
from .solvers import linalg_det_p, linalg_inv_p, linalg_slogdet_p, linalg_solve_p, logdet_p
from .triangular import linalg_cholesky_p, linalg_solve_triangular_p
from .with_info import linalg_cholesky_ex_p, linalg_inv_ex_p, solve_ex
from .decompositions import (
    linalg_eigh_p,
    linalg_eigvalsh_p,
    linalg_qr_p,
    linalg_svd_p,
    linalg_svdvals_p,
)
from .matrix_functions import linalg_matrix_exp_p
from .lu import (
    linalg_lu_factor_ex_p,
    linalg_lu_factor_p,
    linalg_lu_solve_p,
    lu,
    lu_factor,
    lu_factor_ex,
    lu_unpack,
    lu_unpack_p,
    torch_lu,
    torch_lu_solve,
)
from .composites import (
    cholesky,
    cholesky_ex,
    cholesky_inverse,
    cholesky_solve,
    det,
    dist,
    eigh,
    inv_ex,
    inverse,
    linalg_slogdet,
    logdet,
    matrix_norm,
    matrix_power,
    matrix_power_legacy,
    norm,
    pinv,
    pinverse,
    qr,
    qr_legacy,
    slogdet,
    svd,
    svd_legacy,
    torch_norm,
)
from .eig import eig, linalg_eig_p, linalg_eigvals_p
from .least_squares import linalg_lstsq_p, lstsq
from .conditioning import cond, frobenius_norm, matrix_rank, nuclear_norm
from .tensor_solve import diagonal, linalg_vander, tensorinv, tensorsolve, vander
from .householder import geqrf, geqrf_p, householder_product, orgqr, ormqr
from .ldl import ldl_factor, ldl_factor_ex, linalg_ldl_solve_p
from .legacy import triangular_solve
from .lowrank import lobpcg, pca_lowrank, svd_lowrank
from . import removed
# isort: on
