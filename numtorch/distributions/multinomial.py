"""torch.distributions.multinomial: ``Multinomial(total_count=1, probs=None,
logits=None)``, counts of ``total_count`` categorical draws along the last dim."""

from __future__ import annotations

import math

from . import constraints
from ._api import EMPTY, Size, tensor, where
from .binomial import Binomial
from .categorical import _OverCategorical
from .distribution import Distribution, _expand_params
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(_OverCategorical, Distribution):
    """``total_count`` is one int shared by the whole batch (``sample`` needs it;
    ``log_prob`` reads the count off each value). ``probs`` and ``logits`` are
    normalised along the last dim, as ``Categorical``'s."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        batch_shape, event_shape = self._store_categorical(probs, logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(
            self, Multinomial, batch_shape, _instance, "_categorical", shared=("total_count",)
        )

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=EMPTY):
        """``total_count`` category draws per event, counted by a scatter-add of ones."""
        sample_shape = Size(sample_shape)
        draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)
        draws = draws.permute(*range(1, draws.dim()), 0)
        # (Tensor.new, as PyTorch's: unbatched under vmap, so vmap refuses the batched write)
        counts = draws.new(self._extended_shape(sample_shape)).zero_()
        counts.scatter_add_(-1, draws, draws.new_ones(draws.shape))
        return counts.type_as(self.probs)

    def entropy(self):
        """``n H(categorical) - log n! + sum_i E[log x_i!]``, each count ``x_i`` being
        Binomial(n, p_i): the expectation is a sum over ``1 .. n``."""
        n = tensor(self.total_count)
        term1 = n * self._categorical.entropy() - (n + 1).lgamma()
        counts = self._binomial.enumerate_support(expand=False)[1:]
        weights = self._binomial.log_prob(counts).exp() * (counts + 1).lgamma()
        return term1 + weights.sum([0, -1])

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # a category of probability 0 drawn 0 times contributes 0, not 0 * -inf
        logits = where((value == 0) & (logits == -math.inf), 0.0, logits)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
