"""torch.distributions.half_cauchy: ``HalfCauchy(scale)``, ``|X|`` for ``X ~ Cauchy(0,
scale)``, built as PyTorch builds it: a TransformedDistribution of a Cauchy through an
AbsTransform (the shared part in ``_folded.py``)."""

from __future__ import annotations

import math

from ._api import as_tensor, full
from ._folded import _Folded
from .cauchy import Cauchy

__all__ = ["HalfCauchy"]


class HalfCauchy(_Folded):
    _base = Cauchy

    @property
    def mean(self):
        shape = self._extended_shape()
        return full(shape, math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance

    def _folded_value(self, value):
        # PyTorch's HalfCauchy (unlike HalfNormal) takes a number too
        return as_tensor(value, dtype=self.scale.dtype, device=self.scale.device)
