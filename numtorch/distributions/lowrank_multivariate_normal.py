"""torch.distributions.lowrank_multivariate_normal: ``LowRankMultivariateNormal(loc,
cov_factor, cov_diag)``, the normal whose covariance is ``W W^T + diag(D)``.

Nothing of size ``n x n`` is factored: with the capacitance ``C = I + W^T D^{-1} W``
(``m x m``, ``m`` the rank), the determinant lemma gives ``log|W W^T + D| = log|C| +
log|D|`` and the Woodbury identity gives ``(W W^T + D)^{-1} = D^{-1} - D^{-1} W C^{-1} W^T
D^{-1}``.
"""

from __future__ import annotations

import math

from .. import linalg
from . import constraints
from ._api import EMPTY, broadcast_tensors, eye
from .distribution import Distribution, _CenteredAtLoc, _expand_params
from .multivariate_normal import _batch_mahalanobis, _batch_mv
from .utils import _standard_normal, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _plus_identity(K):
    return K + eye(K.shape[-1], dtype=K.dtype, device=K.device)


def _batch_capacitance_tril(W, D):
    """The lower Cholesky factor of ``I + W^T D^{-1} W``."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    return linalg.cholesky(_plus_identity(Wt_Dinv.matmul(W)))


def _batch_lowrank_logdet(W, D, capacitance_tril):
    """``log|W W^T + D|`` by the matrix determinant lemma."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    """``x^T (W W^T + D)^{-1} x`` by the Woodbury identity."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    through_capacitance = _batch_mahalanobis(capacitance_tril, _batch_mv(Wt_Dinv, x))
    return (x.pow(2) / D).sum(-1) - through_capacitance


class LowRankMultivariateNormal(_CenteredAtLoc, Distribution):
    """The multivariate normal with covariance ``cov_factor @ cov_factor.T +
    diag(cov_diag)``."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError(
                "cov_factor must be at least two-dimensional, "
                "with optional leading batch dimensions"
            )
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(
                f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m"
            )
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1)
            )
        except RuntimeError as e:
            raise ValueError(
                f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                f"cov_diag {cov_diag.shape}"
            ) from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(
            self,
            LowRankMultivariateNormal,
            batch_shape,
            _instance,
            "loc",
            "cov_diag",
            "cov_factor",
            shared=("_unbroadcasted_cov_factor", "_unbroadcasted_cov_diag", "_capacitance_tril"),
        )

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def variance(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        """``D^{1/2} chol(I + D^{-1/2} W W^T D^{-1/2})``: the inner matrix has eigenvalues
        of at least one, so its factorisation is well conditioned."""
        sqrt_D = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled_W = self._unbroadcasted_cov_factor / sqrt_D
        inner = _plus_identity(scaled_W.matmul(scaled_W.mT))
        return (sqrt_D * linalg.cholesky(inner)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.matmul(W.mT) + D.diag_embed()).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        A = linalg.solve_triangular(self._capacitance_tril, W.mT / D.unsqueeze(-2), upper=False)
        return (D.reciprocal().diag_embed() - A.mT.matmul(A)).expand(self._matrix_shape())

    def rsample(self, sample_shape=EMPTY):
        shape = self._extended_shape(sample_shape)
        w_shape = shape[:-1] + self.cov_factor.shape[-1:]
        eps_W = _standard_normal(w_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_D = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (
            self.loc
            + _batch_mv(self._unbroadcasted_cov_factor, eps_W)
            + self._unbroadcasted_cov_diag.sqrt() * eps_D
        )

    def _log_det(self):
        return _batch_lowrank_logdet(
            self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril
        )

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        M = _batch_lowrank_mahalanobis(
            self._unbroadcasted_cov_factor,
            self._unbroadcasted_cov_diag,
            value - self.loc,
            self._capacitance_tril,
        )
        n = self._event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + self._log_det() + M)

    def entropy(self):
        n = self._event_shape[0]
        H = 0.5 * (n * (1.0 + math.log(2 * math.pi)) + self._log_det())
        if len(self._batch_shape) == 0:
            return H
        return H.expand(self._batch_shape)
