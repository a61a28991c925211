"""torch.distributions.studentT: ``StudentT(df, loc=0., scale=1.)``.

Draws are ``loc + scale * X / sqrt(Z / df)`` for ``X`` standard normal and ``Z ~ Chi2(df)``,
so ``rsample`` differentiates in ``df`` through the Gamma draw's implicit gradient.
"""

from __future__ import annotations

import math

from . import constraints
from ._api import EMPTY, digamma, lgamma, log1p, rsqrt, where
from .chi2 import Chi2
from .distribution import Distribution, _expand_params
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t distribution with ``df`` degrees of freedom, location ``loc`` and
    scale ``scale``."""

    arg_constraints = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, StudentT, batch_shape, _instance, "df", "loc", "scale", "_chi2")

    @property
    def mean(self):
        """``loc``, undefined (NaN) for df <= 1."""
        return where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        """scale^2 df / (df - 2) for df > 2, infinite for 1 < df <= 2, NaN below."""
        df = self.df
        finite = df > 2
        safe_df = where(finite, df, 3.0)  # no inf (nor NaN gradient) in the unused branch
        value = self.scale.pow(2) * safe_df / (safe_df - 2)
        return where(finite, value, where(df > 1, math.inf, math.nan))

    def rsample(self, sample_shape=EMPTY):
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * rsqrt(z / self.df))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        log_norm = (
            self.scale.log()
            + 0.5 * self.df.log()
            + 0.5 * math.log(math.pi)
            + lgamma(0.5 * self.df)
            - lgamma(0.5 * (self.df + 1.0))
        )
        return -0.5 * (self.df + 1.0) * log1p(y**2.0 / self.df) - log_norm

    def entropy(self):
        half_df = 0.5 * self.df
        half_df1 = 0.5 * (self.df + 1)
        log_beta = lgamma(half_df) + math.lgamma(0.5) - lgamma(half_df1)
        return (
            self.scale.log()
            + half_df1 * (digamma(half_df1) - digamma(half_df))
            + 0.5 * self.df.log()
            + log_beta
        )
