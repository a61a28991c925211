"""Integer arithmetic: the greatest common divisor and least common multiple, elementwise.

Both are ``binary`` ops on integer tensors only (no Python number operands, as in
PyTorch's signatures); the operands promote together, and a promoted dtype that is not an
integer one (bool, floating, complex) is refused with PyTorch's text naming its CPU kernel
(``"gcd_cpu" not implemented for 'Float'``), after the shapes' check. Integers have no
gradient, so neither op has a derivative.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._core import dtype as dt
from .._core.op import ErrorInput
from .._opdb.samples import S
from ._families import BINARY_SHAPES, binary, broadcast_first, promote


def _integers_only(name: str) -> Callable:
    """Promotion for gcd and lcm: the operands' common dtype must be an integer one."""

    def prepare(arrays, attrs=None):
        arrays, odt = promote(arrays, attrs)
        d = odt if odt is not None else arrays[0].dtype
        if np.dtype(d).kind not in "iu":
            broadcast_first(arrays)  # (PyTorch checks the shapes before the kernel's dtype)
            raise dt.not_implemented(f"{name}_cpu", dt.from_np(np.dtype(d)))
        return arrays, odt

    return prepare


def _gcd(xp, input, other):
    """gcd(|a|, |b|); gcd(0, 0) is 0 (the C++ kernel's Euclid, integer wrap-around kept)."""
    return xp.gcd(input, other)


def _lcm(xp, input, other):
    """|a / gcd(a, b) * b|, 0 where gcd is 0 (integer wrap-around kept, as in PyTorch)."""
    g = xp.gcd(input, other)
    zero = g == 0
    with np.errstate(over="ignore"):
        q = input // xp.where(zero, 1, g)
        return xp.where(zero, 0, xp.abs(q * other)).astype(g.dtype, copy=False)


def _samples(make):
    for sa, sb in BINARY_SHAPES:
        yield S((make(sa, -30, 30), make(sb, -30, 30)))
    zeros = np.array([0, 0, 6, -4, 0], dtype=make.dtype)
    yield S((zeros, np.array([0, 9, 0, 0, -7], dtype=make.dtype)), name="zeros")
    yield S((make((2, 3), -30, 30), make((2, 3), 1, 30, dtype=np.int32)), name="mixed ints")


def _errors(name: str) -> Callable:
    text = f"\"{name}_cpu\" not implemented for '{{}}'"

    def errors(make):
        i = make((3,), -5, 5, dtype=np.int64)
        f = make((3,), dtype=np.float32)
        yield ErrorInput(S((f, np.array(f))), NotImplementedError, text.format("Float"))
        yield ErrorInput(S((i, f)), NotImplementedError, text.format("Float"))
        b = make((3,), dtype=np.bool_)
        yield ErrorInput(S((b, np.array(b))), NotImplementedError, text.format("Bool"))
        yield ErrorInput(S((i, make((2,), dtype=np.float32))), RuntimeError, "The size of tensor a")
        yield ErrorInput(
            S((i, 3)), TypeError, rf"{name}\(\): argument 'other' \(position 2\) must be Tensor"
        )

    return errors


def _integer_op(name: str, kernel: Callable):
    return binary(
        name,
        kernel,
        prepare=_integers_only(name),
        samples=_samples,
        error_samples=_errors(name),
        dtypes=("int64",),
        numbers="none",
    )


gcd_p = _integer_op("gcd", _gcd)
lcm_p = _integer_op("lcm", _lcm)
gcd = gcd_p.fn
lcm = lcm_p.fn

__all__ = ["gcd", "gcd_p", "lcm", "lcm_p"]
