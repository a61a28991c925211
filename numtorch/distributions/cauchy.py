"""torch.distributions.cauchy: ``Cauchy(loc, scale)``, a location-scale family without
moments (its mean is nan and its variance inf everywhere)."""

from __future__ import annotations

import math

from ._api import EMPTY, empty, full
from ._location_scale import _LocationScale

__all__ = ["Cauchy"]


class Cauchy(_LocationScale):
    """The Cauchy (Lorentz) distribution with median ``loc`` and half width ``scale``."""

    def _filled(self, value):
        return full(self._extended_shape(), value, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def mean(self):
        return self._filled(math.nan)

    @property
    def variance(self):
        return self._filled(math.inf)

    def rsample(self, sample_shape=EMPTY):
        shape = self._extended_shape(sample_shape)
        eps = empty(shape, dtype=self.loc.dtype, device=self.loc.device).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - (z**2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
