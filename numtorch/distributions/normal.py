"""torch.distributions.normal: ``Normal(loc, scale)``.

The reference for a location-scale family (the constructor and ``expand`` in
``_location_scale.py``): ``rsample`` as ``loc + eps * scale`` with
``eps`` from numtorch's generator, and the natural parameters for ``ExponentialFamily``.
"""

from __future__ import annotations

import math

from ._api import EMPTY, erf, erfinv, log, no_grad, normal
from ._location_scale import _LocationScale
from .exp_family import ExponentialFamily
from .utils import _standard_normal

__all__ = ["Normal"]


class Normal(_LocationScale, ExponentialFamily):
    """The normal distribution with mean ``loc`` and standard deviation ``scale``."""

    _mean_carrier_measure = 0

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=EMPTY):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=EMPTY):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        return (
            -((value - self.loc) ** 2) / (2 * var)
            - self.scale.log()
            - math.log(math.sqrt(2 * math.pi))
        )

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + log(self.scale)

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * log(-math.pi / y)
