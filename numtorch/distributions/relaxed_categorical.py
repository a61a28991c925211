"""torch.distributions.relaxed_categorical: ``ExpRelaxedCategorical(temperature,
probs=None, logits=None)``, the log of a Concrete (Gumbel-softmax) point of the simplex,
and ``RelaxedOneHotCategorical``, the point itself (the exp of the former)."""

from __future__ import annotations

from . import constraints
from ._api import EMPTY, full_like, rand
from .categorical import _OverCategorical
from .distribution import Distribution, _expand_params
from .relaxed_bernoulli import _Relaxed
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


def _log_softmax(scores):
    return scores - scores.logsumexp(dim=-1, keepdim=True)


class ExpRelaxedCategorical(_OverCategorical, Distribution):
    """Draws ``log_softmax((logits + g) / temperature)`` with ``g`` standard Gumbel noise.
    The support is written as all real vectors (the draws lie on a submanifold)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        batch_shape, event_shape = self._store_categorical(probs, logits)
        self.temperature = temperature
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(
            self,
            ExpRelaxedCategorical,
            batch_shape,
            _instance,
            "_categorical",
            shared=("temperature",),
        )

    def rsample(self, sample_shape=EMPTY):
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(rand(shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -(-u.log()).log()
        return _log_softmax((self.logits + gumbels) / self.temperature)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # log (K-1)! + (K-1) log temperature, the density's constant
        log_scale = full_like(self.temperature, float(k)).lgamma() + (k - 1) * (
            self.temperature.log()
        )
        score = _log_softmax(logits - value.mul(self.temperature)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(_Relaxed):
    """``exp`` of an ``ExpRelaxedCategorical``: reparameterized draws on the simplex."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)
