"""torch.distributions.lkj_cholesky: ``LKJCholesky(dim, concentration=1.0)``, the LKJ
distribution over lower Cholesky factors of correlation matrices: the density of the
correlation matrix ``M = L L^T`` is proportional to ``det(M)^(concentration - 1)``.

Draws follow the onion method (Lewandowski, Kurowicka and Joe, 2009, section 3), written
for the Cholesky factor: row ``i`` is ``sqrt(y_i) u_i`` off the diagonal, ``u_i`` uniform
on the unit sphere of the first ``i`` coordinates and ``y_i ~ Beta(i / 2, concentration +
(dim - 2 - i) / 2)``, and ``sqrt(1 - y_i)`` on the diagonal, so each row has unit norm.
"""

from __future__ import annotations

import math

from . import constraints
from ._api import (
    EMPTY,
    Size,
    arange,
    cat,
    finfo,
    no_grad,
    stack,
    where,
)
from .dirichlet import _Dirichlet
from .distribution import Distribution, _expand_params
from .utils import _standard_normal, broadcast_all

__all__ = ["LKJCholesky"]


def _known_true(flag):
    """``bool(flag)``, or True where vmap batches it (PyTorch's check passes there)."""
    try:
        return bool(flag)
    except RuntimeError:
        return True


def _check_dirichlet_concentration(alpha):
    """PyTorch's LKJ builds a Beta, hence a Dirichlet, validated by the global default:
    its error comes first."""
    if Distribution._validate_args and not _known_true((alpha > 0).all()):
        constraint = constraints.independent(constraints.positive, 1)
        raise ValueError(
            f"Expected parameter concentration (Tensor of shape {tuple(alpha.shape)}) "
            f"of distribution Dirichlet(concentration: {alpha.size()}) "
            f"to satisfy the constraint {constraint!r}, but found invalid values:\n{alpha}"
        )


def _beta_sample(conc1, conc0, shape):
    """Beta(conc1, conc0) draws: the first coordinate of a Dirichlet draw."""
    alpha = stack([conc1.expand(shape), conc0.expand(shape)], -1)
    return _Dirichlet.apply(alpha)[..., 0]


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        self._set_beta()
        super().__init__(self.concentration.size(), Size((dim, dim)), validate_args)

    def _set_beta(self):
        """The onion's Beta parameters per row: ``(i / 2, eta + (dim - 2 - i) / 2)`` for
        rows ``i >= 1``; row 0 (which has no off-diagonal entries) takes ``(1/2, eta +
        (dim - 2) / 2)``, whose draw is unused."""
        c = self.concentration
        offset = arange(self.dim - 1, dtype=c.dtype, device=c.device)
        offset = cat([offset.new_zeros((1,)), offset])
        self._beta_conc1 = offset + 0.5
        marginal = c + 0.5 * (self.dim - 2)
        self._beta_conc0 = marginal.unsqueeze(-1) - 0.5 * offset
        conc1, conc0 = broadcast_all(self._beta_conc1, self._beta_conc0)
        _check_dirichlet_concentration(stack([conc1, conc0], -1))

    def expand(self, batch_shape, _instance=None):
        return _expand_params(
            self,
            LKJCholesky,
            batch_shape,
            _instance,
            "concentration",
            "_beta_conc0",
            shared=("dim", "_beta_conc1"),
        )

    def sample(self, sample_shape=EMPTY):
        with no_grad():
            shape = self._extended_shape(sample_shape)
            y = _beta_sample(self._beta_conc1, self._beta_conc0, shape[:-1]).unsqueeze(-1)
            u = _standard_normal(shape, dtype=y.dtype, device=y.device).tril(-1)
            first_row = arange(self.dim, device=y.device).unsqueeze(-1) == 0
            norms = where(first_row, 1.0, u.norm(dim=-1, keepdim=True))
            w = y.sqrt() * (u / norms)
            diag = (1 - w.pow(2).sum(-1)).clamp(min=finfo(w.dtype).tiny).sqrt()
            return w + diag.diag_embed()

    def log_prob(self, value):
        """``sum_i (2 (eta - 1) + dim - i) log L_ii`` over rows ``i = 2 .. dim``, less the
        log of the normaliser."""
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalizer = 0.5 * dm1 * math.log(math.pi) + (alpha - 0.5).mvlgamma(dm1)
        return unnormalized - (normalizer - alpha.lgamma() * dm1)
