"""torch.distributions.gamma: ``Gamma(concentration, rate)``.

Draws are ``_standard_gamma(concentration) / rate``: ``_standard_gamma`` carries the
implicit reparameterization gradient (d draw / d concentration at the drawn value, holding
its uniform fixed), so ``rsample`` differentiates in both parameters.
"""

from __future__ import annotations

from . import constraints
from ._api import (
    EMPTY,
    _standard_gamma,
    as_tensor,
    digamma,
    finfo,
    gammainc,
    lgamma,
    log,
    xlogy,
)
from .distribution import _expand_params
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma"]


def _clamp_tiny_in_place(value):
    """Raise draws below the dtype's smallest normal number to it, outside autograd's view
    (the gradient stays the one of the unclamped draw)."""
    value.detach().clamp_(min=finfo(value.dtype).tiny)
    return value


class Gamma(ExponentialFamily):
    """The gamma distribution with shape ``concentration`` and ``rate`` (1 / scale)."""

    arg_constraints = {
        "concentration": constraints.positive,
        "rate": constraints.positive,
    }
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Gamma, batch_shape, _instance, "concentration", "rate")

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=EMPTY):
        shape = self._extended_shape(sample_shape)
        draws = _standard_gamma(self.concentration.expand(shape))
        return _clamp_tiny_in_place(draws / self.rate.expand(shape))

    def log_prob(self, value):
        value = as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (
            xlogy(self.concentration, self.rate)
            + xlogy(self.concentration - 1, value)
            - self.rate * value
            - lgamma(self.concentration)
        )

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return gammainc(self.concentration, self.rate * value)

    def entropy(self):
        alpha = self.concentration
        return alpha - log(self.rate) + lgamma(alpha) + (1.0 - alpha) * digamma(alpha)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return lgamma(x + 1) + (x + 1) * log(-y.reciprocal())
