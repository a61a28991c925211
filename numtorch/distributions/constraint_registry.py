"""torch.distributions.constraint_registry: from a constraint to a transform onto it.

``biject_to(c)`` gives a bijection from unconstrained space onto ``c`` (for HMC-like
samplers, where the Jacobian must be exact); ``transform_to(c)`` gives any transform onto
``c`` (for optimisation). Factories are keyed on the constraint's class, so a parametrised
constraint (``interval(0, 2)``) reaches its class's factory with its bounds.
"""

from __future__ import annotations

import numbers

from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """A registry of ``constraint class -> factory(constraint) -> Transform``."""

    def __init__(self):
        self._registry = {}
        super().__init__()

    def register(self, constraint, factory=None):
        """Register ``factory`` for ``constraint`` (a Constraint subclass or an instance
        of one). Without ``factory``, a decorator."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(
                "Expected constraint to be either a Constraint subclass or instance, "
                f"but got {constraint}"
            )
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints"
            ) from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _register_both(*keys):
    """Register one factory in both registries for each of ``keys``."""

    def decorate(factory):
        for key in keys:
            biject_to.register(key, factory)
            transform_to.register(key, factory)
        return factory

    return decorate


@_register_both(constraints.real)
def _transform_to_real(constraint):
    return transforms.identity_transform


@biject_to.register(constraints.independent)
def _biject_to_independent(constraint):
    base = biject_to(constraint.base_constraint)
    return transforms.IndependentTransform(base, constraint.reinterpreted_batch_ndims)


@transform_to.register(constraints.independent)
def _transform_to_independent(constraint):
    base = transform_to(constraint.base_constraint)
    return transforms.IndependentTransform(base, constraint.reinterpreted_batch_ndims)


@_register_both(constraints.positive, constraints.nonnegative)
def _transform_to_positive(constraint):
    return transforms.ExpTransform()


@_register_both(constraints.greater_than, constraints.greater_than_eq)
def _transform_to_greater_than(constraint):
    shift = transforms.AffineTransform(constraint.lower_bound, 1)
    return transforms.ComposeTransform([transforms.ExpTransform(), shift])


@_register_both(constraints.less_than)
def _transform_to_less_than(constraint):
    flip = transforms.AffineTransform(constraint.upper_bound, -1)
    return transforms.ComposeTransform([transforms.ExpTransform(), flip])


def _is_number_equal(value, target):
    return isinstance(value, numbers.Number) and value == target


@_register_both(constraints.interval, constraints.half_open_interval)
def _transform_to_interval(constraint):
    lower, upper = constraint.lower_bound, constraint.upper_bound
    if _is_number_equal(lower, 0) and _is_number_equal(upper, 1):
        return transforms.SigmoidTransform()
    stretch = transforms.AffineTransform(lower, upper - lower)
    return transforms.ComposeTransform([transforms.SigmoidTransform(), stretch])


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint):
    return transforms.StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint):
    return transforms.SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint):
    return transforms.LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _transform_to_positive_definite(constraint):
    return transforms.PositiveDefiniteTransform()


@_register_both(constraints.corr_cholesky)
def _transform_to_corr_cholesky(constraint):
    return transforms.CorrCholeskyTransform()


@biject_to.register(constraints.cat)
def _biject_to_cat(constraint):
    parts = [biject_to(c) for c in constraint.cseq]
    return transforms.CatTransform(parts, constraint.dim, constraint.lengths)


@transform_to.register(constraints.cat)
def _transform_to_cat(constraint):
    parts = [transform_to(c) for c in constraint.cseq]
    return transforms.CatTransform(parts, constraint.dim, constraint.lengths)


@biject_to.register(constraints.stack)
def _biject_to_stack(constraint):
    return transforms.StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)


@transform_to.register(constraints.stack)
def _transform_to_stack(constraint):
    return transforms.StackTransform([transform_to(c) for c in constraint.cseq], constraint.dim)
