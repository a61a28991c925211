"""torch.distributions.weibull: ``Weibull(scale, concentration)``, built as PyTorch builds
it: a unit Exponential raised to ``1 / concentration`` and multiplied by ``scale``."""

from __future__ import annotations

from . import constraints
from ._api import full_like
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all, euler_constant

__all__ = ["Weibull"]


def _chain(scale, concentration_reciprocal):
    return [
        PowerTransform(exponent=concentration_reciprocal),
        AffineTransform(loc=0, scale=scale),
    ]


class Weibull(TransformedDistribution):
    arg_constraints = {
        "scale": constraints.positive,
        "concentration": constraints.positive,
    }
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(full_like(self.scale, 1), validate_args=validate_args)
        transforms = _chain(self.scale, self.concentration_reciprocal)
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = _chain(new.scale, new.concentration_reciprocal)
        super(Weibull, new).__init__(base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * (1 + self.concentration_reciprocal).lgamma().exp()

    @property
    def mode(self):
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self):
        r = self.concentration_reciprocal
        second = (1 + 2 * r).lgamma().exp()
        first_squared = (2 * (1 + r).lgamma()).exp()
        return self.scale.pow(2) * (second - first_squared)

    def entropy(self):
        r = self.concentration_reciprocal
        return euler_constant * (1 - r) + (self.scale * r).log() + 1
