"""torch.distributions.fishersnedecor: ``FisherSnedecor(df1, df2)``, the F distribution.

Draws are ``X1 / X2`` for ``Xi ~ Gamma(dfi / 2, dfi)`` (each a chi-squared over its
degrees of freedom), so ``rsample`` differentiates through the Gamma draws.
"""

from __future__ import annotations

import math

from . import constraints
from ._api import EMPTY, finfo, log, log1p, where
from .distribution import Distribution, _expand_params
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """The Fisher-Snedecor (F) distribution with ``df1`` and ``df2`` degrees of freedom."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(self.df1.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(
            self, FisherSnedecor, batch_shape, _instance, "df1", "df2", "_gamma1", "_gamma2"
        )

    @property
    def mean(self):
        """df2 / (df2 - 2), undefined (NaN) for df2 <= 2."""
        df2 = where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        """(df1 - 2) / df1 * df2 / (df2 + 2), undefined (NaN) for df1 <= 2."""
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self):
        """Undefined (NaN) for df2 <= 4."""
        df1 = self.df1
        df2 = where(self.df2 <= 4, math.nan, self.df2)
        return 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=EMPTY):
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = finfo(x2.dtype).tiny
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        half1 = self.df1 * 0.5
        half2 = self.df2 * 0.5
        ratio = self.df1 / self.df2
        t1 = (half1 + half2).lgamma() - half1.lgamma() - half2.lgamma()
        t2 = half1 * ratio.log() + (half1 - 1) * log(value)
        t3 = (half1 + half2) * log1p(ratio * value)
        return t1 + t2 - t3
