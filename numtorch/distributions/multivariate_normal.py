"""torch.distributions.multivariate_normal: ``MultivariateNormal(loc, covariance_matrix=None,
precision_matrix=None, scale_tril=None)``.

Everything is computed from the lower Cholesky factor of the covariance, kept at the
parameter's own (unbroadcast) batch shape: a covariance is factored directly, a precision
matrix through the Cholesky factor of its reversal (``_precision_to_scale_tril``). The
Mahalanobis distance solves one triangular system per factor, with the value's extra
leading dims gathered into the right-hand side's columns (``_batch_mahalanobis``).
"""

from __future__ import annotations

import math

from .. import linalg
from . import constraints
from ._api import EMPTY, Size, broadcast_shapes, eye
from .distribution import Distribution, _CenteredAtLoc, _expand_params
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]

_ONE_OF = "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."


def _batch_mv(bmat, bvec):
    """Matrix times vector over broadcast batch dims: ``(..., n, m) @ (..., m) -> (..., n)``."""
    return bmat.matmul(bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """``x^T (L L^T)^{-1} x`` for factors ``bL`` (batch ``B``, broadcastable to the right
    end of ``bx``'s batch) and vectors ``bx`` (batch ``S + B``): the dims of ``S`` become
    columns of one right-hand side per factor, so each factor is solved against once."""
    factor_dims = bL.dim() - 2
    outer = bx.dim() - 1 - factor_dims
    outer_shape = tuple(bx.shape[:outer])
    if outer_shape:
        # (S, B, n) -> (B, n, S) -> (B, n, prod S)
        order = list(range(outer, bx.dim())) + list(range(outer))
        cols = bx.permute(order).reshape(tuple(bx.shape[outer:]) + (-1,))
    else:
        cols = bx.unsqueeze(-1)
    z = linalg.solve_triangular(bL, cols, upper=False)
    m = z.pow(2).sum(-2)  # (B, prod S)
    if not outer_shape:
        return m.squeeze(-1)
    inner = tuple(m.shape[:-1])
    m = m.reshape(inner + outer_shape)
    back = list(range(len(inner), len(inner) + outer)) + list(range(len(inner)))
    return m.permute(back)


def _precision_to_scale_tril(P):
    """The lower factor of ``P^{-1}`` without inverting ``P``: with ``J`` the reversal
    permutation, ``J P J = R R^T`` gives ``P = U U^T`` for the upper ``U = J R J``, so
    ``P^{-1} = (U^{-T}) (U^{-T})^T`` and ``U^{-T}`` is lower triangular."""
    R = linalg.cholesky(P.flip((-2, -1)))
    U_t = R.flip((-2, -1)).mT  # lower
    identity = eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return linalg.solve_triangular(U_t, identity, upper=False)


def _half_log_det(scale_tril):
    return scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def _matrix_param(name, value, loc):
    if value.dim() < 2:
        text = "scale_tril matrix" if name == "scale_tril" else name
        raise ValueError(
            f"{text} must be at least two-dimensional, with optional leading batch dimensions"
        )
    return Size(broadcast_shapes(value.shape[:-2], loc.shape[:-1]))


class MultivariateNormal(_CenteredAtLoc, Distribution):
    """The multivariate normal with mean ``loc`` and one of a covariance matrix, a
    precision matrix or the lower Cholesky factor of the covariance."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc,
        covariance_matrix=None,
        precision_matrix=None,
        scale_tril=None,
        validate_args=None,
    ):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = {
            "scale_tril": scale_tril,
            "covariance_matrix": covariance_matrix,
            "precision_matrix": precision_matrix,
        }
        given = {k: v for k, v in given.items() if v is not None}
        if len(given) != 1:
            raise ValueError(_ONE_OF)
        ((name, matrix),) = given.items()
        batch_shape = _matrix_param(name, matrix, loc)
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(
            self,
            MultivariateNormal,
            batch_shape,
            _instance,
            "loc",
            "covariance_matrix",
            "scale_tril",
            "precision_matrix",
            shared=("_unbroadcasted_scale_tril",),
        )

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return L.matmul(L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return self._unbroadcasted_scale_tril.cholesky_inverse().expand(self._matrix_shape())

    @property
    def variance(self):
        row_norms = self._unbroadcasted_scale_tril.pow(2).sum(-1)
        return row_norms.expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=EMPTY):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        n = self._event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + M) - _half_log_det(
            self._unbroadcasted_scale_tril
        )

    def entropy(self):
        n = self._event_shape[0]
        H = 0.5 * n * (1.0 + math.log(2 * math.pi)) + _half_log_det(self._unbroadcasted_scale_tril)
        if len(self._batch_shape) == 0:
            return H
        return H.expand(self._batch_shape)
