"""torch.distributions.relaxed_bernoulli: ``LogitRelaxedBernoulli(temperature, probs=None,
logits=None)``, the logit of a binary Concrete variable, and ``RelaxedBernoulli``, the
variable itself on (0, 1) (the sigmoid of the former)."""

from __future__ import annotations

from . import constraints
from ._api import EMPTY, Size, log1p, rand
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import (
    _is_number,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]

_ONE_OF = "Either `probs` or `logits` must be specified, but not both."


def _logit(p):
    return p.log() - log1p(-p)


class LogitRelaxedBernoulli(Distribution):
    """Draws ``(logit(u) + logit(p)) / temperature`` for ``u`` uniform: the logistic
    noise relaxation of a Bernoulli. ``temperature`` is kept as given (not broadcast,
    not validated)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        if (probs is None) == (logits is None):
            raise ValueError(_ONE_OF)
        if probs is not None:
            scalar = _is_number(probs)
            (self.probs,) = broadcast_all(probs)
            self._param = self.probs
        else:
            scalar = _is_number(logits)
            (self.logits,) = broadcast_all(logits)
            self._param = self.logits
        batch_shape = Size() if scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        batch_shape = Size(batch_shape)
        new.temperature = self.temperature
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(batch_shape))
                new._param = getattr(new, name)
        super(LogitRelaxedBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

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


class RelaxedBernoulli(TransformedDistribution):
    """``sigmoid`` of a ``LogitRelaxedBernoulli``: reparameterized draws on (0, 1)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
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
