"""torch.distributions.generalized_pareto: ``GeneralizedPareto(loc, scale,
concentration)``.

A concentration within ``isclose`` of zero is the exponential limit; it is detected, as
PyTorch does, against a 0-dim zero of the default dtype (so that ``log_prob`` and ``cdf``
raise PyTorch's dtype error on parameters of another dtype). ``rsample`` is the inverse
CDF of a uniform draw.
"""

from __future__ import annotations

import math

from . import constraints
from ._api import EMPTY, full_like, rand, tensor, where, zeros_like
from .distribution import Distribution, _expand_params
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


def _safe_concentration(concentration, near_zero):
    """The concentration, with ones where it is (close to) zero: the branch computed there
    is discarded, but must stay finite for the gradients."""
    return where(near_zero, full_like(concentration, 1), concentration)


class GeneralizedPareto(Distribution):
    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(
            self, GeneralizedPareto, batch_shape, _instance, "loc", "scale", "concentration"
        )

    def rsample(self, sample_shape=EMPTY):
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def _z(self, x):
        return (x - self.loc) / self.scale

    def _near_zero(self):
        return self.concentration.isclose(tensor(0.0))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        near_zero = self._near_zero()
        conc = _safe_concentration(self.concentration, near_zero)
        y = 1 / conc + full_like(z, 1)
        nonzero = where(y == 0, y, y * (conc * z).log1p())
        return -self.scale.log() - where(near_zero, z, nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        near_zero = self._near_zero()
        conc = _safe_concentration(self.concentration, near_zero)
        return where(near_zero, -z, -(conc * z).log1p() / conc)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        near_zero = self.concentration.isclose(zeros_like(self.concentration))
        conc = _safe_concentration(self.concentration, near_zero)
        log_u = (-value).log1p()
        nonzero = self.loc + self.scale / conc * (-conc * log_u).expm1()
        return where(near_zero, self.loc - self.scale * log_u, nonzero)

    @property
    def mean(self):
        valid = self.concentration < 1
        conc = where(valid, self.concentration, 0.5)
        return where(valid, self.loc + self.scale / (1 - conc), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        conc = where(valid, self.concentration, 0.25)
        result = self.scale**2 / ((1 - conc) ** 2 * (1 - 2 * conc))
        return where(valid, result, math.nan)

    def entropy(self):
        return (self.scale.log() + self.concentration + 1).expand(self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)
