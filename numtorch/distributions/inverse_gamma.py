"""torch.distributions.inverse_gamma: ``InverseGamma(concentration, rate)``, the law of
``1 / X`` for ``X ~ Gamma(concentration, rate)`` (a TransformedDistribution through
``PowerTransform(-1)``)."""

from __future__ import annotations

import math

from . import constraints
from ._api import where
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """The inverse gamma distribution with shape ``concentration`` and scale ``rate``."""

    arg_constraints = {
        "concentration": constraints.positive,
        "rate": constraints.positive,
    }
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base_dist.rate.new_ones(())
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        """rate / (concentration - 1), infinite for concentration <= 1."""
        result = self.rate / (self.concentration - 1)
        return where(self.concentration > 1, result, math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        """rate^2 / ((concentration - 1)^2 (concentration - 2)), infinite for
        concentration <= 2."""
        alpha = self.concentration
        result = self.rate.square() / ((alpha - 1).square() * (alpha - 2))
        return where(alpha > 2, result, math.inf)

    def entropy(self):
        alpha = self.concentration
        return alpha + self.rate.log() + alpha.lgamma() - (1 + alpha) * alpha.digamma()
