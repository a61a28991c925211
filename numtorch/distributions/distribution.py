"""torch.distributions.distribution: the ``Distribution`` base class."""

from __future__ import annotations

import warnings

from .._core.interpreter import WrapperTensor
from . import constraints
from ._api import EMPTY, Size, Tensor, exp, no_grad
from .utils import lazy_property

__all__ = ["Distribution"]


def _all_true(valid):
    """Whether every value is valid, as ``torch._is_all_true``: under vmap over the whole
    batch (a check is not data-dependent control flow), so the value is read through the
    transforms' wrappers."""
    while isinstance(valid, WrapperTensor):
        valid = valid._inner
    return bool(valid.all())


def _text(value):
    """``f"{value}"`` as PyTorch formats it: a 0-dim tensor as its number."""
    if isinstance(value, Tensor) and value.dim() == 0:
        return format(value.item())
    return str(value)


def _kind(value):
    """The type name PyTorch prints: numtorch's view tensors are Tensors too."""
    return "Tensor" if isinstance(value, Tensor) else type(value).__name__


class Distribution:
    """The base of every distribution.

    A subclass sets ``arg_constraints`` (parameter name -> constraint) and ``support``,
    calls ``super().__init__(batch_shape, event_shape, validate_args)`` after it stored
    its parameters, and implements what it can of ``rsample``/``sample``, ``log_prob``,
    ``cdf``, ``icdf``, ``entropy``, ``mean``, ``mode``, ``variance`` and ``expand``.
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turn argument validation on or off for distributions made from now on."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=EMPTY, event_shape=EMPTY, validate_args=None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()
        super().__init__()

    def _check_parameters(self):
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(
                f"{self.__class__} does not define `arg_constraints`. "
                "Please set `arg_constraints = {}` or initialize the distribution "
                "with `validate_args=False` to turn off validation.",
                stacklevel=3,
            )
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue  # a constraint on other values cannot be checked
            if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                continue  # the other parametrisation: derived lazily, never given
            value = getattr(self, param)
            if not _all_true(constraint.check(value)):
                raise ValueError(
                    f"Expected parameter {param} "
                    f"({_kind(value)} of shape {tuple(value.shape)}) "
                    f"of distribution {self!r} "
                    f"to satisfy the constraint {constraint!r}, "
                    f"but found invalid values:\n{_text(value)}"
                )

    def expand(self, batch_shape, _instance=None):
        """A new distribution whose parameters are expanded (not copied) to
        ``batch_shape``. Arguments are not validated again."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=EMPTY):
        """A draw of shape ``sample_shape + batch_shape + event_shape``, without history."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=EMPTY):
        """A reparameterized draw: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn(
            "`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
            FutureWarning,
            stacklevel=2,
        )
        return self.sample(Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        """Every value of a discrete distribution along dim 0, ``(cardinality,) +
        batch_shape + event_shape`` (batch dims of size 1 when ``expand=False``)."""
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return exp(self.entropy())

    def _extended_shape(self, sample_shape=EMPTY):
        """``sample_shape + batch_shape + event_shape``."""
        return Size(Size(sample_shape) + self._batch_shape + self._event_shape)

    def _validate_sample(self, value):
        """Refuse a value whose shape does not broadcast with the distribution's, or that
        lies outside the support, with PyTorch's errors."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        start = len(value.size()) - len(self._event_shape)
        if value.size()[start:] != self._event_shape:
            raise ValueError(
                "The right-most size of value must match event_shape: "
                f"{value.size()} vs {self._event_shape}."
            )
        actual = value.size()
        expected = Size(self._batch_shape + self._event_shape)
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    "Value is not broadcastable with batch_shape+event_shape: "
                    f"{actual} vs {expected}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable "
                "sample validation. Please initialize the distribution with "
                "`validate_args=False` to turn off validation.",
                stacklevel=2,
            )
            return
        if support is None:
            raise AssertionError("support is unexpectedly None")
        if not _all_true(support.check(value)):
            raise ValueError(
                "Expected value argument "
                f"({_kind(value)} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) "
                f"of the distribution {self!r}, "
                f"but found invalid values:\n{_text(value)}"
            )

    def _get_checked_instance(self, cls, _instance=None):
        """The instance ``expand`` fills: ``_instance``, or a bare one of this type. A
        subclass with its own ``__init__`` must write its own ``expand``."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a "
                "custom __init__ method must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        shown = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{p}: {_short(self.__dict__[p])}" for p in shown)
        return f"{type(self).__name__}({args})"


def _expand_params(dist, cls, batch_shape, _instance, *names, shared=()):
    """PyTorch's ``expand`` of a ``cls`` whose constructor only stores parameters: a bare
    instance (``_get_checked_instance``) holding each named attribute ``dist`` has,
    expanded to ``batch_shape`` followed by its own non-batch dims (a distribution
    attribute by its own ``expand``), the ``shared`` attributes as they are, and
    ``dist``'s validation setting. Attributes that are one tensor stay one tensor."""
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = Size(batch_shape)
    batch_dims = len(dist._batch_shape)
    expanded = {}
    for name in names:
        if name not in dist.__dict__:
            continue  # the other parametrisation, derived lazily
        value = dist.__dict__[name]
        if id(value) not in expanded:
            if isinstance(value, Distribution):
                expanded[id(value)] = value.expand(batch_shape)
            else:
                expanded[id(value)] = value.expand(batch_shape + value.shape[batch_dims:])
        setattr(new, name, expanded[id(value)])
    for name in shared:
        setattr(new, name, getattr(dist, name))
    Distribution.__init__(new, batch_shape, dist._event_shape, validate_args=False)
    new._validate_args = dist._validate_args
    return new


class _CenteredAtLoc:
    """``mean`` and ``mode`` both ``loc``: a distribution symmetric and unimodal about it."""

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc


def _family_of(dist, base):
    """The class directly below the private ``base`` in ``dist``'s type: the public family
    (``Normal``, ``HalfNormal``) that a shared ``expand`` checks ``dist`` against, so that
    PyTorch's "Subclass X of Family" error names the family."""
    return next(cls for cls in type(dist).__mro__ if base in cls.__bases__)


def _short(value):
    return _text(value) if value.numel() == 1 else value.size()
