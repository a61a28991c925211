"""torch.distributions.negative_binomial: ``NegativeBinomial(total_count, probs=None,
logits=None)``, the number of successes before ``total_count`` failures."""

from __future__ import annotations

from ..nn import functional as F
from . import constraints
from ._api import EMPTY, _standard_gamma, finfo, no_grad, poisson, sigmoid, where
from ._probs_logits import BinaryProbsLogits, GivenParam, store_probs_or_logits
from .distribution import Distribution, _expand_params

__all__ = ["NegativeBinomial"]


class NegativeBinomial(GivenParam, BinaryProbsLogits, Distribution):
    """``total_count`` may be any nonnegative real. Draws are a Gamma-Poisson mixture:
    a Poisson whose rate is Gamma(total_count, rate=exp(-logits))."""

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        (total_count,) = store_probs_or_logits(self, probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        names = ("total_count", "probs", "logits", "_param")
        return _expand_params(self, NegativeBinomial, batch_shape, _instance, *names)

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / sigmoid(-self.logits)

    def _gamma_rates(self, sample_shape):
        """Gamma(total_count, rate=exp(-logits)) draws: standard gammas times
        exp(logits), kept at least the dtype's tiny."""
        shape = self._extended_shape(sample_shape)
        draws = _standard_gamma(self.total_count.expand(shape)) * self.logits.exp().expand(shape)
        return draws.clamp(min=finfo(draws.dtype).tiny)

    def sample(self, sample_shape=EMPTY):
        with no_grad():
            return poisson(self._gamma_rates(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_unnormalized = n * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        # log of 1 / C(n + k - 1, k) as gammas; 0 where n + k is 0 (the certain k = 0)
        log_normalization = -(n + value).lgamma() + (1.0 + value).lgamma() + n.lgamma()
        log_normalization = where(n + value == 0.0, 0.0, log_normalization)
        return log_unnormalized - log_normalization
