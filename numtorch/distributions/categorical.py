"""torch.distributions.categorical: ``Categorical(probs=None, logits=None)`` over
``0 .. K-1``, with the categories along the last dim of the parameter."""

from __future__ import annotations

from . import constraints
from ._api import EMPTY, Size, arange, broadcast_tensors, finfo, full, int64, multinomial
from ._probs_logits import GivenParam, one_of
from .distribution import Distribution, _expand_params
from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(GivenParam, Distribution):
    """``probs`` are normalised along the last dim, ``logits`` shifted to log
    probabilities; the batch shape is the parameter's shape without its last dim."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        name, value = one_of(probs, logits)
        if value.dim() < 1:
            raise ValueError(f"`{name}` parameter must be at least one-dimensional.")
        if probs is not None:
            self.probs = self._param = probs / probs.sum(-1, keepdim=True)
        else:
            self.logits = self._param = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndimension() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        names = ("probs", "logits", "_param")
        return _expand_params(
            self, Categorical, batch_shape, _instance, *names, shared=("_num_events",)
        )

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    def _nan_of_batch_shape(self):
        return full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def mean(self):
        return self._nan_of_batch_shape()

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return self._nan_of_batch_shape()

    def sample(self, sample_shape=EMPTY):
        sample_shape = Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        draws = multinomial(probs_2d, sample_shape.numel(), True).T
        return draws.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = arange(self._num_events, dtype=int64, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


class _OverCategorical:
    """A distribution built on the Categorical ``_categorical`` of its ``probs`` or
    ``logits`` (OneHotCategorical, Multinomial, ExpRelaxedCategorical): the parameters,
    ``param_shape`` and ``_new`` are read off it."""

    def _store_categorical(self, probs, logits):
        """Build ``_categorical``; return its batch shape and the event shape (the number
        of categories)."""
        self._categorical = Categorical(probs, logits)
        return self._categorical.batch_shape, self._categorical.param_shape[-1:]

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs
