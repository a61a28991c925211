"""Symbolic sizes (PyTorch's SymInt): the sizes a trace of a dynamic graph reads, as
expressions over the program's arrays, so that one program serves every size.

A ``SymInt`` is an int (code above the tracer uses it as its value) that also carries the
Python expression computing it from the program's values (``s3.shape[0] * 2``). Sizes it
reaches as attributes, scalars or factory arguments are written into the generated code as
their expressions. Where a decision is taken on one (a comparison, ``bool``, ``int()``,
``str()``), the outcome becomes a guard of the program: a check, at that point of the
program, that fails over to a trace at the new sizes. Sizes 0 and 1 are specialized (as
PyTorch does): they are plain ints, guarded to stay what they are.

What an int subclass cannot see (a C function taking its value: ``range(n)``, a slice, a
NumPy shape) is found by comparing the programs of two traces at different sizes, which
numtorch.compile and compiled autograd require to be identical (code and constants)
before they use one for other sizes. A ``SymFloat`` is the same for a float (a mean's
``1 / n``).
"""

from __future__ import annotations

import operator

# The trace whose guards decisions on symbolic sizes become (None: no trace is listening)
_GUARDS: list = [None]


class Recheck(Exception):
    """A program's guard failed: its sizes need a trace of their own."""


def _expr(v) -> str:
    return v.expr if type(v) is SymInt else repr(int(v))


def _slots(v) -> frozenset:
    return v.slots if type(v) is SymInt else frozenset()


class _Sym:
    """What a symbolic number shares: its value as its base type's, taken as a constant
    (guarded) wherever it is printed, formatted or pickled."""

    _base: type

    def __new__(cls, value, expr: str, slots: frozenset):
        s = cls._base.__new__(cls, value)
        s.expr = expr
        s.slots = slots
        return s

    def _guard(self, expr: str, slots: frozenset) -> None:
        out = _GUARDS[0]
        if out is not None:
            out.guard(expr, slots)

    def _pin(self):
        """Its value, taken as a constant: guarded to stay what it is."""
        v = self._raw()
        self._guard(f"{self.expr} == {v!r}", self.slots)
        return v

    def __str__(self) -> str:
        return str(self._pin())

    __repr__ = __str__

    def __format__(self, spec: str) -> str:
        return format(self._pin(), spec)

    def __hash__(self) -> int:
        return self._base.__hash__(self)

    def __reduce__(self):
        return self._base, (self._pin(),)


class SymInt(_Sym, int):
    """An int that is also an expression over the program's values."""

    _base = int
    _raw = int.__int__

    def __int__(self) -> int:
        return self._pin()

    __index__ = __int__

    def __bool__(self) -> bool:
        return self._compare(0, operator.ne, "!=")

    def _compare(self, other, fn, sym: str) -> bool:
        if not isinstance(other, int) or isinstance(other, bool):
            return NotImplemented
        out = fn(int.__int__(self), int(other) if type(other) is not SymInt else int.__int__(other))
        text = f"({self.expr}) {sym} ({_expr(other)})"
        self._guard(text if out else f"not ({text})", self.slots | _slots(other))
        return out


class SymFloat(_Sym, float):
    """A float that is also an expression over the program's values (a reciprocal of a
    size: a mean's scale). Anything but multiplying a tensor by it takes its value."""

    _base = float
    _raw = float.__float__

    def __float__(self) -> float:
        return self._pin()

    def __bool__(self) -> bool:
        return bool(self._pin())


def reciprocal(n):
    """1.0 / n: for a symbolic size, symbolic too."""
    if type(n) is SymInt:
        return SymFloat(1.0 / int.__int__(n), f"(1.0 / {n.expr})", n.slots)
    return 1.0 / n


def _binary(fn, sym: str, reflected: bool = False):
    def method(self, other):
        if not isinstance(other, int) or isinstance(other, bool):
            return NotImplemented
        a, b = (other, self) if reflected else (self, other)
        value = fn(
            int.__int__(a) if type(a) is SymInt else a, int.__int__(b) if type(b) is SymInt else b
        )
        return SymInt(value, f"({_expr(a)} {sym} {_expr(b)})", _slots(a) | _slots(b))

    return method


for _name, _fn, _sym in (
    ("add", operator.add, "+"),
    ("sub", operator.sub, "-"),
    ("mul", operator.mul, "*"),
    ("floordiv", operator.floordiv, "//"),
    ("mod", operator.mod, "%"),
):
    setattr(SymInt, f"__{_name}__", _binary(_fn, _sym))
    setattr(SymInt, f"__r{_name}__", _binary(_fn, _sym, reflected=True))

for _name, _fn, _sym in (
    ("eq", operator.eq, "=="),
    ("ne", operator.ne, "!="),
    ("lt", operator.lt, "<"),
    ("le", operator.le, "<="),
    ("gt", operator.gt, ">"),
    ("ge", operator.ge, ">="),
):
    setattr(SymInt, f"__{_name}__", lambda self, o, _f=_fn, _s=_sym: self._compare(o, _f, _s))


def _pinned(name: str, kind: type = int):
    base = getattr(kind, name)
    return lambda self, *args: base(self._pin(), *(_pin(a) for a in args))


def _pin(v):
    return v._pin() if type(v) is SymInt or type(v) is SymFloat else v


# Everything else an int does takes the value as a constant
for _name in (
    "__truediv__",
    "__rtruediv__",
    "__pow__",
    "__rpow__",
    "__lshift__",
    "__rlshift__",
    "__rshift__",
    "__rrshift__",
    "__and__",
    "__rand__",
    "__or__",
    "__ror__",
    "__xor__",
    "__rxor__",
    "__divmod__",
    "__rdivmod__",
    "__float__",
    "__round__",
    "__trunc__",
    "__floor__",
    "__ceil__",
    "bit_length",
    "to_bytes",
    "as_integer_ratio",
):
    setattr(SymInt, _name, _pinned(_name))

for _name in (
    "__add__",
    "__radd__",
    "__sub__",
    "__rsub__",
    "__mul__",
    "__rmul__",
    "__truediv__",
    "__rtruediv__",
    "__floordiv__",
    "__rfloordiv__",
    "__mod__",
    "__rmod__",
    "__pow__",
    "__rpow__",
    "__neg__",
    "__abs__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__int__",
    "__round__",
    "__trunc__",
    "__floor__",
    "__ceil__",
    "__divmod__",
    "__rdivmod__",
    "is_integer",
    "as_integer_ratio",
    "hex",
):
    setattr(SymFloat, _name, _pinned(_name, float))

SymInt.__neg__ = lambda self: SymInt(-int.__int__(self), f"(-{self.expr})", self.slots)
SymInt.__pos__ = lambda self: self
SymInt.__abs__ = lambda self: self if self >= 0 else -self


class unguarded:  # noqa: N801 - a cheap context manager
    """Decisions taken inside are not the program's (a kernel, a factory or a hook that
    decides again when the program runs, or that runs outside it)."""

    __slots__ = ("sink",)

    def __enter__(self) -> None:
        self.sink = _GUARDS[0]
        _GUARDS[0] = None

    def __exit__(self, *exc) -> None:
        _GUARDS[0] = self.sink


def size(value: int, slot: int, dim: int):
    """The size ``dim`` of the program's value in ``slot`` (0 and 1 specialized)."""
    return _sym(value, f"s{slot}.shape[{dim}]", frozenset((slot,)))


def _sym(value: int, expr: str, slots: frozenset):
    if value < 2:
        g = _GUARDS[0]
        if g is not None:
            g.guard(f"{expr} == {value}", slots)
        return value
    return SymInt(value, expr, slots)


_NONE: frozenset = frozenset()


def symbolize(v, expr: str):
    """v (a size, or sizes nested in tuples and lists) with its ints as the expression
    ``expr`` indexed down to them: ``m[3][1]``, a value the program is given."""
    if type(v) is int:
        return _sym(v, expr, _NONE)
    if isinstance(v, (list, tuple)):
        return rebuild(v, [symbolize(x, f"{expr}[{i}]") for i, x in enumerate(v)])
    return v


def rebuild(v: list | tuple, items: list):
    """A list or tuple (or tuple subclass: a Size) like v, of ``items``."""
    return items if type(v) is list else tuple(items) if type(v) is tuple else type(v)(items)


def any_in(v, leaf) -> bool:
    """Whether ``leaf`` holds for v or a value nested in its lists, tuples and dicts."""
    if leaf(v):
        return True
    if isinstance(v, (list, tuple)):
        return any(any_in(x, leaf) for x in v)
    if isinstance(v, dict):
        return any(any_in(x, leaf) for x in v.values())
    return False


def _is_sym(v) -> bool:
    return type(v) is SymInt or type(v) is SymFloat


def has_sym(v) -> bool:
    return any_in(v, _is_sym)


def map_syms(v, fn):
    """v with ``fn`` applied to each symbolic number in it (nested in lists, tuples and
    dicts); v itself where it holds none."""
    if type(v) is SymInt or type(v) is SymFloat:
        return fn(v)
    if isinstance(v, (list, tuple)) and has_sym(v):
        return rebuild(v, [map_syms(x, fn) for x in v])
    if isinstance(v, dict) and has_sym(v):
        return {k: map_syms(x, fn) for k, x in v.items()}
    return v


def _value(v):
    return v._raw()


def concrete(v):
    """v with its symbolic numbers as plain ones (unguarded: for a kernel the program calls
    with the expressions' values)."""
    return map_syms(v, _value)


def slots_of(v) -> frozenset:
    """The program's values the expressions in v read."""
    if type(v) is SymInt or type(v) is SymFloat:
        return v.slots
    if isinstance(v, (list, tuple)):
        return frozenset().union(*(slots_of(x) for x in v)) if v else frozenset()
    if isinstance(v, dict):
        return frozenset().union(*(slots_of(x) for x in v.values())) if v else frozenset()
    return frozenset()
