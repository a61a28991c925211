"""torch.distributions.binomial: ``Binomial(total_count=1, probs=None, logits=None)``,
the number of successes in ``total_count`` Bernoulli trials."""

from __future__ import annotations

from . import constraints
from ._api import EMPTY, arange, binomial, log1p, no_grad
from ._probs_logits import BinaryProbsLogits, GivenParam, store_probs_or_logits
from .distribution import Distribution, _expand_params

__all__ = ["Binomial"]


def _softplus(x):
    """``log(1 + exp(x))`` written as ``max(x, 0) + log1p(exp(-|x|))``, with the maximum
    as ``(x + |x|) / 2`` so that its derivative at 0 is one half, as softplus's is."""
    return (x + x.abs()) / 2 + log1p((-x.abs()).exp())


def _homogeneous_count(d, method):
    """The one ``total_count`` of every batch member, or PyTorch's NotImplementedError."""
    count = int(d.total_count.max())
    if not d.total_count.min() == count:
        raise NotImplementedError(f"Inhomogeneous total count not supported by `{method}`.")
    return count


class Binomial(GivenParam, BinaryProbsLogits, Distribution):
    """``total_count`` broadcasts with ``probs``/``logits`` and takes their dtype; the
    support ``0 .. total_count`` depends on it."""

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        (total_count,) = store_probs_or_logits(self, probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        names = ("total_count", "probs", "logits", "_param")
        return _expand_params(self, Binomial, batch_shape, _instance, *names)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=EMPTY):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        # log C(n, k) + k * logits - n * log(1 + exp(logits))
        log_choose = (n + 1).lgamma() - (value + 1).lgamma() - (n - value + 1).lgamma()
        return log_choose + value * self.logits - n * _softplus(self.logits)

    def entropy(self):
        _homogeneous_count(self, "entropy")
        log_pmf = self.log_prob(self.enumerate_support(False))
        return -(log_pmf.exp() * log_pmf).sum(0)

    def enumerate_support(self, expand=True):
        count = _homogeneous_count(self, "enumerate_support")
        values = arange(1 + count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
