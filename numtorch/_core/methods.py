"""Tensor methods: the one way a method is made public (``tensor_method``), and the
methods an op declaration asks for (its function, a ``*size`` form, the in-place form)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

from .inplace import run_inplace
from .signature import numpy_keywords
from .tensor import Tensor

_DECLARED: set[str] = set()


def tensor_method(fn: Callable, *names: str) -> Callable:
    """Declare ``fn`` as Tensor methods ``names`` (default: its own name); the one way a
    Tensor method is made public. A name declared twice is an error."""
    for name in names or (fn.__name__,):
        if name in _DECLARED:
            raise ValueError(f"Tensor.{name} declared twice")
        _DECLARED.add(name)
        setattr(Tensor, name, numpy_keywords(fn, name, "Tensor") if inspect.isfunction(fn) else fn)
    return fn


def inplace_method(op) -> Callable:
    def method(self, *args, **kwargs):
        return run_inplace(op, self, args, kwargs)

    if any(a[0] == "dtype" for a in op.attrs):  # cumsum_: the kernel runs in self's dtype

        def method(self, *args, **kwargs):
            d = kwargs.get("dtype")
            if d is None:
                kwargs["dtype"] = self.dtype
            elif d != self.dtype:
                raise RuntimeError(
                    f"Bad in-place call: input tensor dtype {self.dtype.cpp_name} and output "
                    f"tensor dtype {d.cpp_name} should match"
                )
            return run_inplace(op, self, args, kwargs)

    method.__name__ = op.name + "_"
    method.inplace_of = op
    return method


def sizes_method(op) -> Callable:
    fn = op.fn

    def method(self, *size):
        if len(size) == 1 and not isinstance(size[0], int):
            size = size[0]
        return fn(self, tuple(size))

    method.__name__ = op.name
    return method


def tensor_methods(table: dict[str, Callable]) -> None:
    """Declare several Tensor methods at once: {name: function or property}."""
    for name, fn in table.items():
        tensor_method(fn, name)


def method_names(names: Sequence[str] | bool, default: str) -> tuple[str, ...]:
    return (default,) if names is True else tuple(names)
