"""torch.distributions.cauchy: ``Cauchy(loc, scale)``, a location-scale family without
moments (its mean is nan and its variance inf everywhere)."""

from __future__ import annotations

import math

from . import constraints
from ._api import EMPTY, Size, empty, full
from .distribution import Distribution
from .utils import _is_number, broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """The Cauchy (Lorentz) distribution with median ``loc`` and half width ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = _is_number(loc) and _is_number(scale)
        batch_shape = Size() if scalar else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Cauchy, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(Cauchy, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _filled(self, value):
        return full(self._extended_shape(), value, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def mean(self):
        return self._filled(math.nan)

    @property
    def mode(self):
        return self.loc

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
