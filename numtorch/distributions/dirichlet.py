"""torch.distributions.dirichlet: ``Dirichlet(concentration)`` on the simplex.

``rsample`` draws with ``_sample_dirichlet`` inside an autograd ``Function`` whose backward
is the implicit reparameterization gradient: ``_dirichlet_grad`` gives d x_i / d alpha_i
for the Beta(alpha_i, total - alpha_i) marginal at a fixed total, and the other
coordinates move so that the draw stays on the simplex.
"""

from __future__ import annotations

from ..nn import functional as F
from . import constraints
from ._api import (
    EMPTY,
    Function,
    _dirichlet_grad,
    _sample_dirichlet,
    digamma,
    lgamma,
    once_differentiable,
    where,
    xlogy,
)
from .distribution import _expand_params
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


def _Dirichlet_backward(x, concentration, grad_output):
    """The vector-Jacobian product of a Dirichlet draw ``x`` with respect to its
    concentration: the marginal derivative, corrected by the simplex constraint."""
    total = concentration.sum(-1, True).expand_as(concentration)
    marginal = _dirichlet_grad(x, concentration, total)
    return marginal * (grad_output - (x * grad_output).sum(-1, True))


class _Dirichlet(Function):
    @staticmethod
    def forward(ctx, concentration):
        x = _sample_dirichlet(concentration)
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, concentration = ctx.saved_tensors
        return _Dirichlet_backward(x, concentration, grad_output)


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution with ``concentration`` (its last dim is the event)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Dirichlet, batch_shape, _instance, "concentration")

    def rsample(self, sample_shape=EMPTY):
        shape = self._extended_shape(sample_shape)
        return _Dirichlet.apply(self.concentration.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        alpha = self.concentration
        return xlogy(alpha - 1.0, value).sum(-1) + lgamma(alpha.sum(-1)) - lgamma(alpha).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        """(alpha - 1)+ normalised; where every alpha < 1, the one-hot vertex of the
        largest entry of that (NaN) ratio, as PyTorch picks it."""
        excess = (self.concentration - 1).clamp(min=0.0)
        mode = excess / excess.sum(-1, True)
        corner = F.one_hot(mode.argmax(dim=-1), excess.shape[-1]).to(mode)
        all_below_one = (self.concentration < 1).all(dim=-1, keepdim=True)
        return where(all_below_one, corner, mode)

    @property
    def variance(self):
        total = self.concentration.sum(-1, True)
        alpha = self.concentration
        return alpha * (total - alpha) / (total.pow(2) * (total + 1))

    def entropy(self):
        alpha = self.concentration
        k = alpha.size(-1)
        total = alpha.sum(-1)
        return (
            lgamma(alpha).sum(-1)
            - lgamma(total)
            - (k - total) * digamma(total)
            - ((alpha - 1.0) * digamma(alpha)).sum(-1)
        )

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - lgamma(x.sum(-1))
