"""The folded distributions ``|X|`` for ``X`` centred at 0 with a ``scale``
(HalfNormal, HalfCauchy), built as PyTorch builds them: a TransformedDistribution of the
base through an AbsTransform. The density, cdf, icdf and entropy follow from the base's
symmetry about 0; each family gives its own ``mean`` and ``variance``."""

from __future__ import annotations

import math

from . import constraints
from ._api import where, zeros_like
from .distribution import _family_of
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform


class _Folded(TransformedDistribution):
    """A subclass sets ``_base``, the symmetric ``(loc, scale)`` family it folds."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        base_dist = self._base(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(_family_of(self, _Folded), _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return zeros_like(self.scale)

    def _folded_value(self, value):
        """The value ``log_prob`` reads: as given, unless the family converts it."""
        return value

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = self._folded_value(value)
        folded = self.base_dist.log_prob(value) + math.log(2)
        return where(value >= 0, folded, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
