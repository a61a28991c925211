"""torch.distributions.half_normal: ``HalfNormal(scale)``, ``|X|`` for ``X ~ Normal(0,
scale)``, built as PyTorch builds it: a TransformedDistribution of a Normal through an
AbsTransform (the shared part in ``_folded.py``)."""

from __future__ import annotations

import math

from ._folded import _Folded
from .normal import Normal

__all__ = ["HalfNormal"]


class HalfNormal(_Folded):
    _base = Normal

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)
