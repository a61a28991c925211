"""torch.distributions.gumbel: ``Gumbel(loc, scale)``, built as PyTorch builds it: a
Uniform on ``[tiny, 1 - eps)`` pushed through ``-log``, negation, ``-log`` again and
``loc - scale * x``, so that ``rsample`` is ``loc - scale * log(-log(u))``. ``log_prob``
is written directly, which is more accurate than inverting the chain."""

from __future__ import annotations

import math

from . import constraints
from ._api import finfo, full_like
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import _is_number, broadcast_all, euler_constant

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        info = finfo(self.loc.dtype)
        low, high = info.tiny, 1 - info.eps
        if not (_is_number(loc) and _is_number(scale)):
            low, high = full_like(self.loc, low), full_like(self.loc, high)
        base_dist = Uniform(low, high, validate_args=validate_args)
        transforms = [
            ExpTransform().inv,
            AffineTransform(loc=0, scale=-full_like(self.scale, 1)),
            ExpTransform().inv,
            AffineTransform(loc=loc, scale=-self.scale),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)
