"""torch.distributions.half_cauchy: ``HalfCauchy(scale)``, ``|X|`` for ``X ~ Cauchy(0,
scale)``, built as PyTorch builds it: a TransformedDistribution of a Cauchy through an
AbsTransform."""

from __future__ import annotations

import math

from . import constraints
from ._api import as_tensor, full, where, zeros_like
from .cauchy import Cauchy
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(TransformedDistribution):
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        shape = self._extended_shape()
        return full(shape, math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def mode(self):
        return zeros_like(self.scale)

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        scale = self.base_dist.scale
        value = as_tensor(value, dtype=scale.dtype, device=scale.device)
        folded = self.base_dist.log_prob(value) + math.log(2)
        return where(value >= 0, folded, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
