"""torch.distributions.bernoulli: ``Bernoulli(probs=None, logits=None)``.

The reference for a distribution with two parametrisations: exactly one is given and
stored; the other is a ``lazy_property`` derived on first use (and skipped by argument
validation when it was not given).
"""

from __future__ import annotations

from ..nn import functional as F
from . import constraints
from ._api import EMPTY, Size, arange, bernoulli, log1p, no_grad
from .exp_family import ExponentialFamily
from .utils import _is_number, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli"]

_ONE_OF = "Either `probs` or `logits` must be specified, but not both."


class Bernoulli(ExponentialFamily):
    """A 0/1 variable that is 1 with probability ``probs`` (or ``sigmoid(logits)``)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
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
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = Size(batch_shape)
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(batch_shape))
                new._param = getattr(new, name)
        super(Bernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs)
        mode[self.probs == 0.5] = float("nan")
        return mode

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=EMPTY):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self):
        return (self.probs.logit(),)

    def _log_normalizer(self, x):
        return log1p(x.exp())
