"""torch.distributions.laplace: ``Laplace(loc, scale)``."""

from __future__ import annotations

from ._api import EMPTY, empty, finfo, log
from ._location_scale import _LocationScale

__all__ = ["Laplace"]


class Laplace(_LocationScale):
    """The Laplace (double exponential) distribution around ``loc`` with ``scale``."""

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return 2**0.5 * self.scale

    def rsample(self, sample_shape=EMPTY):
        shape = self._extended_shape(sample_shape)
        eps = finfo(self.loc.dtype).eps
        # u uniform on (-1, 1), never -1, so the log stays finite
        u = empty(shape, dtype=self.loc.dtype, device=self.loc.device).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -log(2 * self.scale) - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * (-z.abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + log(2 * self.scale)
