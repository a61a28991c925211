"""torch.distributions.transformed_distribution: a base distribution pushed through a
list of transforms. ``log_prob`` inverts the transforms and subtracts their log
Jacobians; ``cdf``/``icdf`` go through monotone transforms (``sign``)."""

from __future__ import annotations

from . import constraints
from ._api import EMPTY, Size, no_grad
from .distribution import Distribution
from .independent import Independent
from .transforms import ComposeTransform, Transform
from .utils import _sum_rightmost

__all__ = ["TransformedDistribution"]


def _transform_list(transforms):
    if isinstance(transforms, Transform):
        return [transforms]
    if isinstance(transforms, list):
        if not all(isinstance(t, Transform) for t in transforms):
            raise ValueError("transforms must be a Transform or a list of Transforms")
        return transforms
    raise ValueError(f"transforms must be a Transform or list, but was {transforms}")


class TransformedDistribution(Distribution):
    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        self.transforms = _transform_list(transforms)
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        base_event_dim = len(base_distribution.event_shape)
        chain = ComposeTransform(self.transforms)
        if len(base_shape) < chain.domain.event_dim:
            raise ValueError(
                "base_distribution needs to have shape with size at least "
                f"{chain.domain.event_dim}, but got {Size(base_shape)}."
            )
        forward_shape = chain.forward_shape(base_shape)
        expanded_base_shape = chain.inverse_shape(forward_shape)
        if base_shape != expanded_base_shape:
            cut = len(expanded_base_shape) - base_event_dim
            base_distribution = base_distribution.expand(expanded_base_shape[:cut])
        reinterpreted = chain.domain.event_dim - base_event_dim
        if reinterpreted > 0:
            base_distribution = Independent(base_distribution, reinterpreted)
        self.base_dist = base_distribution
        change = chain.codomain.event_dim - chain.domain.event_dim
        event_dim = max(chain.codomain.event_dim, base_event_dim + change)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = Size(batch_shape)
        shape = batch_shape + self.event_shape
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        base_batch_shape = shape[: len(shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch_shape)
        new.transforms = self.transforms
        super(TransformedDistribution, new).__init__(
            batch_shape, self.event_shape, validate_args=False
        )
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def sample(self, sample_shape=EMPTY):
        with no_grad():
            x = self.base_dist.sample(sample_shape)
            for transform in self.transforms:
                x = transform(x)
            return x

    def rsample(self, sample_shape=EMPTY):
        x = self.base_dist.rsample(sample_shape)
        for transform in self.transforms:
            x = transform(x)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            ladj = transform.log_abs_det_jacobian(x, y)
            log_prob = log_prob - _sum_rightmost(ladj, event_dim - transform.domain.event_dim)
            y = x
        base = self.base_dist.log_prob(y)
        return log_prob + _sum_rightmost(base, event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        """The cdf of a decreasing chain of transforms is one minus the base cdf."""
        sign = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for transform in self.transforms[::-1]:
            value = transform.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for transform in self.transforms:
            value = transform(value)
        return value
