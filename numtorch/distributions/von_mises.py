"""torch.distributions.von_mises: ``VonMises(loc, concentration)``, the circular normal.

Values and ``loc`` are angles (any real, read modulo 2 pi). The normalizer is the modified
Bessel function I0, taken as ``log(i0e(k)) + k`` so that it neither overflows nor loses
digits for a large concentration; the circular variance is ``1 - I1(k) / I0(k)``, the ratio
of the scaled ``i1e / i0e``. ``sample`` is Best and Fisher's (1979) rejection sampler,
run in float64 (no ``rsample``).
"""

from __future__ import annotations

import math

from . import constraints
from ._api import EMPTY, cos, empty, float64, i0e, i1e, log, no_grad, rand, where, zeros
from ._api import bool_ as _bool
from .distribution import Distribution, _CenteredAtLoc
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

_SMALL_KAPPA = 1e-5  # below it, the proposal's r by its Taylor expansion 1/k + k


def _log_i0(kappa):
    """log I0(kappa) for kappa > 0."""
    return log(i0e(kappa)) + kappa


def _wrap(angle):
    """The angle in [-pi, pi)."""
    return (angle + math.pi) % (2 * math.pi) - math.pi


def _rejection_sample(loc, concentration, proposal_r, x):
    """Best and Fisher's sampler: a wrapped Cauchy proposal ``f = cos(angle)`` accepted
    by their two tests, until every element has a draw."""
    done = zeros(x.shape, dtype=_bool, device=loc.device)
    while not done.all():
        u1, u2, u3 = rand((3, *x.shape), dtype=loc.dtype, device=loc.device).unbind()
        z = cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if accept.any():
            x = where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return _wrap(x + loc)


class VonMises(_CenteredAtLoc, Distribution):
    """The von Mises distribution on the circle with mean angle ``loc`` (its circular
    mean and its mode) and ``concentration``."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, EMPTY, validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        density = self.concentration * cos(value - self.loc)
        return density - math.log(2 * math.pi) - _log_i0(self.concentration)

    @lazy_property
    def _loc(self):
        return self.loc.to(float64)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(float64)

    @lazy_property
    def _proposal_r(self):
        """The wrapped Cauchy proposal's r = (1 + rho^2) / (2 rho)."""
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        return where(kappa < _SMALL_KAPPA, 1 / kappa + kappa, (1 + rho**2) / (2 * rho))

    def sample(self, sample_shape=EMPTY):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            x = empty(shape, dtype=self._loc.dtype, device=self.loc.device)
            drawn = _rejection_sample(self._loc, self._concentration, self._proposal_r, x)
            return drawn.to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        try:
            return super().expand(batch_shape)
        except NotImplementedError:
            validate_args = self.__dict__.get("_validate_args")
            loc = self.loc.expand(batch_shape)
            concentration = self.concentration.expand(batch_shape)
            return type(self)(loc, concentration, validate_args=validate_args)

    @lazy_property
    def variance(self):
        """The circular variance, 1 - I1(k) / I0(k)."""
        return 1 - i1e(self.concentration) / i0e(self.concentration)
