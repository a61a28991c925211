"""torch.distributions.continuous_bernoulli: ``ContinuousBernoulli(probs=None,
logits=None, lims=(0.499, 0.501))``, the density ``C(p) p**x (1-p)**(1-x)`` on [0, 1].

The closed forms of the normalizer and the moments lose precision where ``probs`` is near
one half; inside ``lims`` they are replaced by their Taylor expansions around 0.5, and the
closed form is evaluated at ``lims[0]`` instead (so that its gradient stays finite).
"""

from __future__ import annotations

import math

from ..nn import functional as F
from . import constraints
from ._api import EMPTY, full_like, no_grad, rand, where
from ._probs_logits import BinaryProbsLogits, GivenParam, store_probs_or_logits
from .distribution import _expand_params
from .exp_family import ExponentialFamily
from .utils import (
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
)

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(GivenParam, BinaryProbsLogits, ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        store_probs_or_logits(self, probs, logits)
        if probs is not None:
            # PyTorch checks probs whenever validate_args is given, True or False
            if (
                validate_args is not None
                and not self.arg_constraints["probs"].check(self.probs).all()
            ):
                raise ValueError("The parameter probs has invalid values")
            self.probs = self._param = clamp_probs(self.probs)
        self._lims = lims
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        names = ("probs", "logits", "_param")
        return _expand_params(
            self, ContinuousBernoulli, batch_shape, _instance, *names, shared=("_lims",)
        )

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """probs, with ``lims[0]`` inside the unstable region."""
        return where(
            self._outside_unstable_region(), self.probs, full_like(self.probs, self._lims[0])
        )

    def _cont_bern_log_norm(self):
        """The log normalizing constant as a function of probs."""
        cut = self._cut_probs()
        below = where(cut <= 0.5, cut, full_like(cut, 0))
        above = where(cut >= 0.5, cut, full_like(cut, 1))
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - where(
            cut <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log()
        )
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        closed = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return where(self._outside_unstable_region(), closed, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        cut = self._cut_probs()
        closed = cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2) + 1.0 / (
            (-cut).log1p() - cut.log()
        ).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._outside_unstable_region(), closed, taylor)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def sample(self, sample_shape=EMPTY):
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=EMPTY):
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        bce = F.binary_cross_entropy_with_logits(logits, value, reduction="none")
        return -bce + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        closed = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        inside = where(self._outside_unstable_region(), closed, value)
        clipped = where(value >= 1.0, full_like(value, 1), inside)
        return where(value <= 0.0, full_like(value, 0), clipped)

    def icdf(self, value):
        cut = self._cut_probs()
        closed = ((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p()) / (
            cut.log() - (-cut).log1p()
        )
        return where(self._outside_unstable_region(), closed, value)

    def entropy(self):
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """The log normalizing constant as a function of the natural parameter."""
        low, high = self._lims[0] - 0.5, self._lims[1] - 0.5
        outside = (x <= low) | (x > high)
        cut = where(outside, x, full_like(x, low))
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return where(outside, log_norm, taylor)
