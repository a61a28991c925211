"""torch.distributions.exp_family: ``ExponentialFamily``, distributions of the form
``p(x; theta) = exp(<t(x), theta> - F(theta) + k(x))``."""

from __future__ import annotations

from ._api import grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A subclass gives ``_natural_params`` (theta), ``_log_normalizer(*theta)`` (F) and
    ``_mean_carrier_measure`` (E[k(x)]). Entropy (and KL between two members of the
    same family, in ``kl.py``) then follow from the Bregman divergence of F, whose
    gradient is taken with ``numtorch.autograd.grad``."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        # H = F(theta) - <theta, grad F(theta)> - E[k(x)]
        thetas = [p.detach().requires_grad_() for p in self._natural_params]
        log_norm = self._log_normalizer(*thetas)
        slopes = grad(log_norm.sum(), thetas, create_graph=True)
        result = log_norm - self._mean_carrier_measure
        for theta, slope in zip(thetas, slopes):
            result = result - (theta * slope).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
