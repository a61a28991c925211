"""torch.distributions.constraints: the regions a parameter or a sample must lie in.

A constraint object answers ``check(value)`` with a boolean tensor over the batch: one
entry per event, where ``event_dim`` is how many rightmost dimensions form one event.
Public singletons (``real``, ``positive``, ...) are instances; parametrised constraints
(``interval``, ``greater_than``, ...) are the classes themselves, as in PyTorch, so that
``constraint_registry`` can key its factories on the class.
"""

from __future__ import annotations

from .. import linalg
from ._api import bool_, finfo, full
from ._api import cat as _cat
from ._api import stack as _stack

__all__ = [
    "Constraint",
    "boolean",
    "cat",
    "corr_cholesky",
    "dependent",
    "dependent_property",
    "greater_than",
    "greater_than_eq",
    "independent",
    "integer_interval",
    "interval",
    "half_open_interval",
    "is_dependent",
    "less_than",
    "lower_cholesky",
    "lower_triangular",
    "MixtureSameFamilyConstraint",
    "multinomial",
    "nonnegative",
    "nonnegative_integer",
    "one_hot",
    "positive",
    "positive_semidefinite",
    "positive_definite",
    "positive_integer",
    "real",
    "real_vector",
    "simplex",
    "square",
    "stack",
    "symmetric",
    "unit_interval",
]


class Constraint:
    """A region of valid values. ``is_discrete`` and ``event_dim`` describe it."""

    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__[1:] + "()"


def _static(value, what):
    if value is NotImplemented:
        raise NotImplementedError(f".{what} cannot be determined statically")
    return value


class _Dependent(Constraint):
    """A placeholder for a constraint that depends on other values (never checked)."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim
        super().__init__()

    @property
    def is_discrete(self):
        return _static(self._is_discrete, "is_discrete")

    @property
    def event_dim(self):
        return _static(self._event_dim, "event_dim")

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        return _Dependent(
            is_discrete=self._is_discrete if is_discrete is NotImplemented else is_discrete,
            event_dim=self._event_dim if event_dim is NotImplemented else event_dim,
        )

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    """Whether ``constraint`` is a dependent placeholder (``dependent`` or a
    ``dependent_property``)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property that is also a dependent constraint: on the class it reads as the
    placeholder, on an instance it computes the actual constraint."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


def _require_constraint(value, what="base_constraint"):
    if not isinstance(value, Constraint):
        raise AssertionError(f"{what} must be a Constraint, got {type(value).__name__}")


def _all_rightmost(result, keep):
    """Reduce ``result`` with ``all`` over every dimension after the first ``keep``."""
    return result.reshape(tuple(result.shape[:keep]) + (-1,)).all(-1)


class _OnBase(Constraint):
    """A constraint made from ``base_constraint``: discrete when it is."""

    def __init__(self, base_constraint):
        _require_constraint(base_constraint)
        self.base_constraint = base_constraint
        super().__init__()

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete


class _IndependentConstraint(_OnBase):
    """``base_constraint`` with ``reinterpreted_batch_ndims`` batch dims made event dims."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        _require_constraint(base_constraint)  # refused before the ndims, as PyTorch does
        if not isinstance(reinterpreted_batch_ndims, int):
            raise AssertionError(
                "reinterpreted_batch_ndims must be an int, got "
                f"{type(reinterpreted_batch_ndims).__name__}"
            )
        if reinterpreted_batch_ndims < 0:
            raise AssertionError(
                f"reinterpreted_batch_ndims must be >= 0, got {reinterpreted_batch_ndims}"
            )
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(base_constraint)

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.dim() < n:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        return _all_rightmost(result, result.dim() - n)

    def __repr__(self):
        return (
            f"{type(self).__name__[1:]}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"
        )


class MixtureSameFamilyConstraint(_OnBase):
    """The support of a MixtureSameFamily: ``base_constraint`` checked on each component."""

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    def check(self, value):
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        return _all_rightmost(result, value.dim() - self.event_dim)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_constraint!r})"


def _is_integer(value):
    return value % 1 == 0


class _Bounded(Constraint):
    """A constraint with bounds, shown as PyTorch shows them: ``Name(lower_bound=...)``."""

    _bounds: tuple = ()

    def __repr__(self):
        args = ", ".join(f"{b}={getattr(self, b)}" for b in self._bounds)
        return f"{type(self).__name__[1:]}({args})"


class _LowerBounded(_Bounded):
    _bounds = ("lower_bound",)

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()


class _UpperBounded(_Bounded):
    _bounds = ("upper_bound",)

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound
        super().__init__()


class _TwoBounds(_Bounded):
    _bounds = ("lower_bound", "upper_bound")

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        binary = ((value == 0) | (value == 1)).all(-1)
        return binary & value.sum(-1).eq(1)


class _IntegerInterval(_TwoBounds):
    is_discrete = True

    def check(self, value):
        return _is_integer(value) & (self.lower_bound <= value) & (value <= self.upper_bound)


class _IntegerLessThan(_UpperBounded):
    is_discrete = True

    def check(self, value):
        return _is_integer(value) & (value <= self.upper_bound)


class _IntegerGreaterThan(_LowerBounded):
    is_discrete = True

    def check(self, value):
        return _is_integer(value) & (value >= self.lower_bound)


class _Real(Constraint):
    def check(self, value):
        return value == value  # False only at NaN


class _GreaterThan(_LowerBounded):
    def check(self, value):
        return self.lower_bound < value


class _GreaterThanEq(_LowerBounded):
    def check(self, value):
        return self.lower_bound <= value


class _LessThan(_UpperBounded):
    def check(self, value):
        return value < self.upper_bound


class _Interval(_TwoBounds):
    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)


class _HalfOpenInterval(_TwoBounds):
    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Nonnegative counts along the last dim summing to at most ``upper_bound``."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


def _is_lower_triangular(value):
    return _all_rightmost(value.tril() == value, value.dim() - 2)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        return _is_lower_triangular(value)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)
        return _is_lower_triangular(value) & positive_diagonal


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: rows of unit norm."""

    event_dim = 2

    def check(self, value):
        tol = finfo(value.dtype).eps * value.size(-1) * 10
        row_norm = linalg.norm(value.detach(), dim=-1)
        unit_rows = (row_norm - 1.0).abs().le(tol).all(-1)
        return lower_cholesky.check(value) & unit_rows


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        is_square = value.shape[-2] == value.shape[-1]
        return full(tuple(value.shape[:-2]), is_square, dtype=bool_, device=value.device)


class _Symmetric(_Square):
    def check(self, value):
        square_ok = super().check(value)
        if not square_ok.all():
            return square_ok
        return value.isclose(value.mT, atol=1e-6).all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        symmetric_ok = super().check(value)
        if not symmetric_ok.all():
            return symmetric_ok
        return linalg.eigvalsh(value).ge(0).all(-1)


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        symmetric_ok = super().check(value)
        if not symmetric_ok.all():
            return symmetric_ok
        return linalg.cholesky_ex(value).info.eq(0)


def _check_dim(dim, value):
    if not -value.dim() <= dim < value.dim():
        raise AssertionError(f"dim {dim} out of range for value with {value.dim()} dimensions")


class _OnSeq(Constraint):
    """Constraints ``cseq`` applied to pieces along ``dim``: discrete when any is."""

    def __init__(self, cseq, dim=0):
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)


class _Cat(_OnSeq):
    """Constraints ``cseq`` applied to consecutive pieces (``lengths``) along ``dim``."""

    def __init__(self, cseq, dim=0, lengths=None):
        super().__init__(cseq, dim)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(
                f"lengths ({len(self.lengths)}) must match cseq ({len(self.cseq)})"
            )

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        _check_dim(self.dim, value)
        checks, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return _cat(checks, self.dim)


class _Stack(_OnSeq):
    """Constraint ``cseq[i]`` applied to slice ``i`` along ``dim``."""

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        _check_dim(self.dim, value)
        pieces = [value.select(self.dim, i) for i in range(value.size(self.dim))]
        return _stack([c.check(v) for v, c in zip(pieces, self.cseq)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
