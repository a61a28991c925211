"""Tensor methods: the one way a method is made public (``tensor_method``), and the
methods an op declaration asks for (its function, a ``*size`` form, the in-place form)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

from .inplace import run_inplace
from .pyargs import checked_sizes, has, judge, with_parser
from .signature import input_aliases, numpy_keywords
from .tensor import Tensor

_DECLARED: set[str] = set()


def tensor_method(fn: Callable, *names: str) -> Callable:
    """Declare ``fn`` as Tensor methods ``names`` (default: its own name); the one way a
    Tensor method is made public. A name declared twice is an error."""
    for name in names or (fn.__name__,):
        if name in _DECLARED:
            raise ValueError(f"Tensor.{name} declared twice")
        _DECLARED.add(name)
        if inspect.isfunction(fn):
            # (a function checked as PyTorch's function is checked as its method instead)
            inner = fn.__wrapped__ if getattr(fn, "_parsed_method", None) is False else fn
            if name.startswith("__"):  # (Python calls operators' dunders positionally)
                method = inner
            else:
                method = with_parser(
                    numpy_keywords(inner, name, "Tensor"), f"Tensor.{name}", method=True
                )
        else:
            method = fn
        setattr(Tensor, name, method)
    return fn


def inplace_method(op) -> Callable:
    by_keyword = _inputs_by_keyword(op)
    key = f"Tensor.{op.name}_"
    judged = has(key)

    def method(self, *args, **kwargs):
        a, kw = args, kwargs
        try:
            if kwargs and len(args) < op.nin - 1:
                kw = dict(kwargs)
                a = by_keyword(args, kw)
            return run_inplace(op, self, a, kw)
        except Exception:  # (the parser's TypeError, where it refuses the call, first)
            if judged:
                judge(key, args, kwargs)
            raise

    if any(a[0] == "dtype" for a in op.attrs):  # cumsum_: the kernel runs in self's dtype

        def method(self, *args, **kwargs):
            a, kw = args, dict(kwargs)
            try:
                if kwargs and len(args) < op.nin - 1:
                    a = by_keyword(args, kw)
                d = kw.get("dtype")
                if d is None:
                    kw["dtype"] = self.dtype
                elif d != self.dtype:
                    raise RuntimeError(
                        f"Bad in-place call: input tensor dtype {self.dtype.cpp_name} and "
                        f"output tensor dtype {d.cpp_name} should match"
                    )
                return run_inplace(op, self, a, kw)
            except Exception:  # (the parser's TypeError, where it refuses the call, first)
                if judged:
                    judge(key, args, kwargs)
                raise

    method.__name__ = op.name + "_"
    method.inplace_of = op
    return method


def _inputs_by_keyword(op) -> Callable:
    """A function putting the inputs after self that an in-place call gives by keyword
    (by its public or NumPy name, popped from its keywords) after its positional ones."""
    names = input_aliases(op)

    def by_keyword(args: tuple, kwargs: dict) -> tuple:
        args = list(args)
        for want in op.inputs[len(args) + 1 :]:
            key = next((k for k in kwargs if names.get(k) == want), None)
            if key is None:
                break
            args.append(kwargs.pop(key))
        return tuple(args)

    return by_keyword


def sizes_method(op) -> Callable:
    fn = op.fn
    key = f"Tensor.{op.name}"

    def method(self, *args):
        size = args[0] if len(args) == 1 and type(args[0]) is not int else args
        if isinstance(size, (tuple, list)):
            for s in size:
                if type(s) is not int:
                    size = checked_sizes(key, args)
                    break
        else:
            size = checked_sizes(key, args)
        return fn(self, tuple(size))

    method._parsed = True

    method.__name__ = op.name
    return method


def tensor_methods(table: dict[str, Callable]) -> None:
    """Declare several Tensor methods at once: {name: function or property}."""
    for name, fn in table.items():
        tensor_method(fn, name)


def method_names(names: Sequence[str] | bool, default: str) -> tuple[str, ...]:
    return (default,) if names is True else tuple(names)
