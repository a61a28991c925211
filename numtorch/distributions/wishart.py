"""torch.distributions.wishart: ``Wishart(df, covariance_matrix=None, precision_matrix=None,
scale_tril=None)`` over positive definite matrices.

Draws follow the Bartlett decomposition: ``L A A^T L^T`` with ``A`` lower triangular, its
diagonal the square roots of chi-square draws of ``df - i`` degrees of freedom (Gamma
draws, so the implicit reparameterization gradient flows to ``df``) and standard normals
below it. As PyTorch does, ``rsample`` flags the draws that pass the positive definite
check, warns "Singular sample detected." when any is flagged, and redraws the flagged
ones up to ``max_try_correction`` times, stopping once the redraws fail the check.
"""

from __future__ import annotations

import math
import numbers
import warnings

from .. import linalg
from . import constraints
from ._api import (
    EMPTY,
    Size,
    Tensor,
    _standard_gamma,
    arange,
    broadcast_shapes,
    eye,
    finfo,
    tensor,
    where,
)
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import _standard_normal, lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)
_ONE_OF = "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."


def _mvdigamma(x, p):
    """The multivariate digamma: ``sum_i digamma(x - i / 2)`` for ``i < p``."""
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    halves = arange(p, dtype=x.dtype, device=x.device) / 2
    return (x.unsqueeze(-1) - halves).digamma().sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=finfo(x.dtype).eps)


def _chi2_rsample(df, shape):
    """Chi-square draws (``2 * Gamma(df / 2)``), differentiable in ``df``; a draw that
    underflows to zero reads as the dtype's smallest normal number."""
    value = 2 * _standard_gamma((df / 2).expand(shape))
    floor = value.detach().clamp(min=finfo(value.dtype).tiny) - value.detach()
    return value + floor


def _trace_of_solve(value, scale_tril):
    """``trace((L L^T)^{-1} value)``."""
    return value.cholesky_solve(scale_tril).diagonal(dim1=-2, dim2=-1).sum(-1)


class Wishart(ExponentialFamily):
    """The Wishart distribution with ``df`` degrees of freedom and one of a covariance
    matrix, a precision matrix or the covariance's lower Cholesky factor."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def __init__(
        self,
        df,
        covariance_matrix=None,
        precision_matrix=None,
        scale_tril=None,
        validate_args=None,
    ):
        given = {
            "covariance_matrix": covariance_matrix,
            "precision_matrix": precision_matrix,
            "scale_tril": scale_tril,
        }
        given = {k: v for k, v in given.items() if v is not None}
        if len(given) != 1:
            raise AssertionError(_ONE_OF)
        ((name, param),) = given.items()
        if param.dim() < 2:
            raise ValueError(
                "scale_tril must be at least two-dimensional, "
                "with optional leading batch dimensions"
            )
        if isinstance(df, numbers.Number) and not isinstance(df, Tensor):
            batch_shape = Size(param.shape[:-2])
            self.df = tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = Size(broadcast_shapes(param.shape[:-2], df.shape))
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        setattr(self, name, param.expand(batch_shape + (-1, -1)))
        if bool(self.df.lt(p).any()):
            warnings.warn(
                "Low df values detected. Singular samples are highly likely to occur for "
                "ndim - 1 < df < ndim.",
                stacklevel=2,
            )
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = param
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg.cholesky(param)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(param)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        matrix_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(matrix_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(matrix_shape))
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _dim(self):
        return self._event_shape[-1]

    def _chi2_df(self):
        """The degrees of freedom of the Bartlett diagonal: ``df - i`` for row ``i``."""
        rows = arange(self._dim(), dtype=self._unbroadcasted_scale_tril.dtype)
        return self.df.unsqueeze(-1) - rows.expand(self._batch_shape + (-1,))

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return L.matmul(L.mT).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        identity = eye(self._dim(), dtype=L.dtype, device=L.device)
        return identity.cholesky_solve(L).expand(self._batch_shape + self._event_shape)

    def _df_as_matrix(self, df):
        return df.view(self._batch_shape + (1, 1))

    @property
    def mean(self):
        return self._df_as_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self._dim() - 1
        factor = where(factor <= 0, math.nan, factor)
        return self._df_as_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag = V.diagonal(dim1=-2, dim2=-1)
        return self._df_as_matrix(self.df) * (V.pow(2) + diag.unsqueeze(-1) * diag.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=EMPTY):
        shape = Size(sample_shape) + self._batch_shape
        p = self._dim()
        diag = _clamp_above_eps(_chi2_rsample(self._chi2_df(), shape + (p,)).sqrt())
        dtype = self._unbroadcasted_scale_tril.dtype
        below = _standard_normal(shape + (p, p), dtype=dtype, device=diag.device).tril(-1)
        chol = self._unbroadcasted_scale_tril.matmul(below + diag.diag_embed())
        return chol.matmul(chol.mT)

    def _flags(self, sample):
        flags = self.support.check(sample)
        return flags.amax(self._batch_dims) if self._batch_shape else flags

    def rsample(self, sample_shape=EMPTY, max_try_correction=None):
        """A Bartlett draw, with PyTorch's correction pass (see the module's docstring).

        .. warning:: a draw may be singular, and then has ``-inf`` log-density."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        flagged = self._flags(sample)
        if not bool(flagged.any()):
            return sample
        warnings.warn("Singular sample detected.", stacklevel=2)
        pad = (1,) * (len(self._batch_shape) + 2)
        for _ in range(max_try_correction):
            redraw = self._bartlett_sampling(sample_shape)
            sample = where(flagged.reshape(flagged.shape + pad), redraw, sample)
            flagged = flagged & ~self._flags(redraw)
            if not bool(flagged.any()):
                break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._dim()
        L = self._unbroadcasted_scale_tril
        half_log_det = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return (
            -nu * (p * _LOG_2 / 2 + half_log_det)
            - (nu / 2).mvlgamma(p=p)
            + (nu - p - 1) / 2 * linalg.slogdet(value).logabsdet
            - _trace_of_solve(value, L) / 2
        )

    def entropy(self):
        nu, p = self.df, self._dim()
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return (
            (p + 1) * (p * _LOG_2 / 2 + half_log_det)
            + (nu / 2).mvlgamma(p=p)
            - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p)
            + nu * p / 2
        )

    @property
    def _natural_params(self):
        nu, p = self.df, self._dim()
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._dim()
        shifted = y + (p + 1) / 2
        return shifted * (-linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p) + shifted.mvlgamma(p=p)
