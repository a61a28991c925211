"""torch.distributions.geometric: ``Geometric(probs=None, logits=None)``, the number of
failures before the first success, over ``0, 1, 2, ...``."""

from __future__ import annotations

from ..nn import functional as F
from . import constraints
from ._api import EMPTY, empty, finfo, no_grad, where, zeros_like
from ._probs_logits import BinaryProbsLogits, one_of
from .distribution import Distribution, _expand_params, _kind
from .utils import broadcast_all

__all__ = ["Geometric"]


class Geometric(BinaryProbsLogits, Distribution):
    """``P(k) = (1 - p)**k p``. ``probs`` must lie in (0, 1]: validation refuses 0 with
    its own message after the generic constraint check."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        name, value = one_of(probs, logits)
        (value,) = broadcast_all(value)
        setattr(self, name, value)
        super().__init__(value.size(), validate_args=validate_args)
        if self._validate_args and probs is not None:
            self._check_positive_probs()

    def _check_positive_probs(self):
        value = self.probs
        valid = value > 0
        if not valid.all():
            raise ValueError(
                "Expected parameter probs "
                f"({_kind(value)} of shape {tuple(value.shape)}) "
                f"of distribution {self!r} "
                f"to be positive but found invalid values:\n{value.detach()[~valid]}"
            )

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Geometric, batch_shape, _instance, "probs", "logits")

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=EMPTY):
        """By inversion: ``floor(log u / log(1 - p))`` for ``u`` uniform on (tiny, 1)."""
        shape = self._extended_shape(sample_shape)
        tiny = finfo(self.probs.dtype).tiny
        with no_grad():
            u = empty(shape, dtype=self.probs.dtype, device=self.probs.device).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # 0 * log(1 - 1) is 0 here: no failure before a certain success
        probs = where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        bce = F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
        return bce / self.probs
