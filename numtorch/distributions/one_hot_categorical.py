"""torch.distributions.one_hot_categorical: ``OneHotCategorical(probs=None, logits=None)``,
a Categorical whose draws are one-hot vectors, and
``OneHotCategoricalStraightThrough``, its straight-through reparameterization."""

from __future__ import annotations

from ..nn import functional as F
from . import constraints
from ._api import EMPTY, Size, eye
from .categorical import _OverCategorical
from .distribution import Distribution, _expand_params

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(_OverCategorical, Distribution):
    """A ``Categorical`` (kept as ``_categorical``) whose event is the one-hot vector of
    its category: the event shape is the number of categories."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        batch_shape, event_shape = self._store_categorical(probs, logits)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, OneHotCategorical, batch_shape, _instance, "_categorical")

    @property
    def _param(self):
        return self._categorical._param

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return F.one_hot(probs.argmax(dim=-1), num_classes=probs.shape[-1]).to(probs)

    @property
    def variance(self):
        probs = self._categorical.probs
        return probs * (1 - probs)

    def sample(self, sample_shape=EMPTY):
        indices = self._categorical.sample(Size(sample_shape))
        return F.one_hot(indices, self._categorical._num_events).to(self._categorical.probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """``rsample`` is the one-hot draw in the forward pass, with the gradient of
    ``probs`` in the backward pass (the straight-through estimator)."""

    has_rsample = True

    def rsample(self, sample_shape=EMPTY):
        draws = self.sample(sample_shape)
        probs = self._categorical.probs
        return draws + (probs - probs.detach())
