"""torch.distributions.relaxed_bernoulli: ``LogitRelaxedBernoulli(temperature, probs=None,
logits=None)``, the logit of a binary Concrete variable, and ``RelaxedBernoulli``, the
variable itself on (0, 1) (the sigmoid of the former)."""

from __future__ import annotations

from . import constraints
from ._api import EMPTY, log1p, rand
from ._probs_logits import BinaryProbsLogits, GivenParam, store_probs_or_logits
from .distribution import Distribution, _expand_params, _family_of
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import (
    broadcast_all,
    clamp_probs,
)

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


def _logit(p):
    return p.log() - log1p(-p)


class LogitRelaxedBernoulli(GivenParam, BinaryProbsLogits, Distribution):
    """Draws ``(logit(u) + logit(p)) / temperature`` for ``u`` uniform: the logistic
    noise relaxation of a Bernoulli. ``temperature`` is kept as given (not broadcast,
    not validated)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        store_probs_or_logits(self, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        names = ("probs", "logits", "_param")
        return _expand_params(
            self, LogitRelaxedBernoulli, batch_shape, _instance, *names, shared=("temperature",)
        )

    def rsample(self, sample_shape=EMPTY):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(rand(shape, dtype=probs.dtype, device=probs.device))
        return (_logit(u) + _logit(probs)) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * log1p(diff.exp())


class _Relaxed(TransformedDistribution):
    """A relaxed (Concrete) distribution as PyTorch builds it: a transform of the base
    draw on the logit or log scale, whose ``temperature``, ``logits`` and ``probs`` are
    read through from that base."""

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(_family_of(self, _Relaxed), _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class RelaxedBernoulli(_Relaxed):
    """``sigmoid`` of a ``LogitRelaxedBernoulli``: reparameterized draws on (0, 1)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)
