"""The ``(loc, scale)`` constructor that Normal, Laplace and Cauchy share, as PyTorch
writes each: a real ``loc`` and a positive ``scale`` broadcast together by
``broadcast_all``, their shape the batch shape, real support, reparameterized draws, and
``expand`` by expanding both."""

from __future__ import annotations

from . import constraints
from .distribution import Distribution, _CenteredAtLoc, _expand_params, _family_of
from .utils import broadcast_all


class _LocationScale(_CenteredAtLoc, Distribution):
    """A family centred at ``loc`` (its median and mode; its mean unless it overrides
    ``mean``), spread by ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        family = _family_of(self, _LocationScale)
        return _expand_params(self, family, batch_shape, _instance, "loc", "scale")
