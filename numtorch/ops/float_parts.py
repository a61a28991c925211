"""Floating-point parts and steps: heaviside, nextafter, ldexp and frexp.

heaviside, nextafter and ldexp are ``binary`` ops of two tensors (PyTorch's signatures
take no Python number); frexp is one tensor in, (mantissa, exponent) out, as a
``torch.return_types.frexp``. As in PyTorch:

- heaviside wants its operands (and ``out``) of one dtype, not complex; it has no
  derivative (its node's backward raises, forward mode refuses it).
- nextafter computes in floating dtypes only; its gradient is the input's, and zero for
  ``other``.
- ldexp is ``input * 2**other`` in the operands' floating dtype (integers promote to the
  default float). An integer ``other`` scales exactly (no overflow of ``2**other`` on the
  way); a floating one is raised in its own dtype first.
- frexp's exponent is int32, its mantissa has the input's floating dtype; the gradient
  reaches the input through the mantissa, ``g / 2**exponent``.
"""

from __future__ import annotations

import math
import re

import numpy as np

from .._core import dtype as dt
from .._core.layout import follow_inputs
from .._core.meta import by_kernel
from .._core.methods import tensor_methods
from .._core.no_kernel import NoKernel
from .._core.op import ErrorInput, defop
from .._core.out import write_out
from .._core.policy import InplacePolicy
from .._core.tensor import Tensor
from .._opdb.samples import S
from ._batching import elementwise
from ._families import (
    BINARY_SHAPES,
    ELEMENTWISE,
    FLOATS,
    FLOATS_INT,
    FLOATS_INT_BOOL,
    UNARY_SHAPES,
    binary,
    broadcast_first,
    promote,
    promote_float,
    silent,
)
from ._no_derivative import NOT_IMPLEMENTED, no_derivative
from .comparison import where
from .creation import full_like, zeros_like
from .linalg._common import return_type

_LN2 = math.log(2.0)


# ------------------------------------------------------------------ heaviside
_HEAVISIDE_COMPLEX = "heaviside is not yet implemented for complex tensors."
_HEAVISIDE_DTYPES = "heaviside is not yet implemented for tensors with different dtypes."


def _prep_heaviside(arrays, attrs=None):
    """No complex operand, and both of one dtype (PyTorch checks these before the shapes)."""
    input, values = arrays
    if input.dtype.kind == "c" or values.dtype.kind == "c":
        raise RuntimeError(_HEAVISIDE_COMPLEX)
    if input.dtype != values.dtype:
        raise RuntimeError(_HEAVISIDE_DTYPES)
    return arrays, None


def _heaviside(xp, input, values):
    """0 below zero (and at NaN), ``values`` at zero, 1 above."""
    above = (input > 0).astype(input.dtype)
    return xp.where(input == 0, values, above)


_heaviside_vjp, _heaviside_jvp = no_derivative("heaviside")


def _heaviside_samples(make):
    for sa, sb in BINARY_SHAPES:
        a = make(sa, -2, 2)
        if make.is_float and a.size:
            a.reshape(-1)[::2] = 0  # where ``values`` shows
        yield S((a, make(sb, -2, 2)))
    if make.is_float:
        x = np.array([-1.0, -0.0, 0.0, 0.5, -0.0], dtype=make.dtype)
        yield S((x, make((5,), -2, 2)), name="signed zeros")


def _heaviside_errors(make):
    f = make((3,), dtype=np.float32)
    yield ErrorInput(S((f, make((3,), dtype=np.float64))), RuntimeError, _HEAVISIDE_DTYPES)
    yield ErrorInput(S((f, make((), dtype=np.float64))), RuntimeError, _HEAVISIDE_DTYPES)
    yield ErrorInput(S((make((3,), dtype=np.int64), f)), RuntimeError, _HEAVISIDE_DTYPES)
    c = make((3,), dtype=np.complex64)
    yield ErrorInput(S((c, np.array(c))), RuntimeError, _HEAVISIDE_COMPLEX)
    yield ErrorInput(S((f, make((2,), dtype=np.float32))), RuntimeError, "The size of tensor a")
    yield ErrorInput(
        S((f, 0.5)), TypeError, r"heaviside\(\): argument 'values' \(position 2\) must be Tensor"
    )


def _heaviside_complex32(arrays, attrs):
    raise RuntimeError(_HEAVISIDE_COMPLEX)


heaviside_p = binary(
    "heaviside",
    _heaviside,
    (_heaviside_vjp, _heaviside_vjp),
    _heaviside_jvp,
    prepare=_prep_heaviside,
    samples=_heaviside_samples,
    error_samples=_heaviside_errors,
    dtypes=FLOATS_INT_BOOL,
    complex=False,
    numbers="none",
    node_name=NOT_IMPLEMENTED,
    complex32=_heaviside_complex32,
    # the backward raises (PyTorch has no derivative): tests/test_elementwise.py checks it
    test={"no_grad_test": True},
)
_heaviside = heaviside_p.fn  # (the public heaviside checks out= first)


def heaviside(input, values, *, out: Tensor | None = None) -> Tensor:
    """0 where ``input`` < 0 (or NaN), ``values`` where it is 0, 1 where > 0. As in PyTorch,
    ``out`` must have the operands' dtype."""
    if (
        out is not None
        and isinstance(input, Tensor)
        and isinstance(values, Tensor)
        and not input.is_complex()
        and input.dtype == values.dtype
        and out.dtype != input.dtype
    ):
        raise RuntimeError(_HEAVISIDE_DTYPES)
    return _heaviside(input, values, out=out)


# ------------------------------------------------------------------ nextafter
def _floats_only(kernel_name: str):
    """Promotion to the operands' common dtype, which must be a floating one."""

    def prepare(arrays, attrs=None):
        arrays, odt = promote(arrays, attrs)
        d = np.dtype(odt if odt is not None else arrays[0].dtype)
        if d.kind != "f":
            broadcast_first(arrays)  # (PyTorch checks the shapes before the kernel's dtype)
            raise dt.not_implemented(kernel_name, dt.from_np(d))
        return arrays, odt

    return prepare


def _nextafter_samples(make):
    for sa, sb in BINARY_SHAPES:
        yield S((make(sa), make(sb)))
    # (no ties: PyTorch's input gradient is 0 there, which finite differences do not see;
    # tests/test_elementwise.py compares them with PyTorch)


def _nextafter_errors(make):
    text = "\"nextafter_cpu\" not implemented for '{}'"
    i = make((3,), -5, 5, dtype=np.int64)
    yield ErrorInput(S((i, np.array(i))), NotImplementedError, text.format("Long"))
    b = make((3,), dtype=np.bool_)
    yield ErrorInput(S((b, np.array(b))), NotImplementedError, text.format("Bool"))
    c = make((3,), dtype=np.complex64)
    yield ErrorInput(S((c, np.array(c))), NotImplementedError, text.format("ComplexFloat"))
    yield ErrorInput(S((i, make((2,), dtype=np.int64))), RuntimeError, "The size of tensor a")
    yield ErrorInput(
        S((make((3,)), 1.0)),
        TypeError,
        r"nextafter\(\): argument 'other' \(position 2\) must be Tensor",
    )


# PyTorch's formulas: the input's gradient is zero where the operands tie (the result is
# ``other`` there), ``other`` has a zero gradient whatever g is
def _nextafter_dinput(g, input, other):
    return where(input == other, 0, g)


def _nextafter_dother(g):
    return zeros_like(g)


nextafter_p = binary(
    "nextafter",
    lambda xp, input, other: xp.nextafter(input, other),
    (_nextafter_dinput, _nextafter_dother),
    ELEMENTWISE,
    prepare=_floats_only("nextafter_cpu"),
    complex=False,
    samples=_nextafter_samples,
    error_samples=_nextafter_errors,
    numbers="none",
)
nextafter = nextafter_p.fn


# ------------------------------------------------------------------ ldexp
_LDEXP_CAST = "ldexp can't be cast to the desired output type {}"
_EXPONENT_BOUND = 1 << 20  # past any float's exponent range: the result is 0 or inf anyway


def _integral(a) -> bool:
    return a.dtype.kind in "biu"


def _prep_ldexp(arrays, attrs=None):
    """The result's dtype is the operands' common one, integers promoted to the default
    float. ``input`` computes in it; ``other`` keeps its dtype (an integer one scales a
    floating input exactly, a floating one raises 2 in its own dtype, as PyTorch's
    pow(2, other)); with an integral input both take the result's dtype."""
    cast, odt = promote_float(arrays, attrs)
    input, other = arrays
    d = cast[0].dtype
    if input.dtype.kind in "biu":  # both promote: 2**other is raised in the result's dtype
        return [cast[0], other.astype(d)], d
    if input.dtype != d:
        input = input.astype(d)
    return [input, other], d


@silent
def _ldexp(xp, input, other):
    if _integral(other) and input.dtype.kind == "f":
        k = xp.clip(other, -_EXPONENT_BOUND, _EXPONENT_BOUND).astype(xp.int64, copy=False)
        return xp.ldexp(input, k)
    if _integral(other):  # a complex input: times 2**other in double, as PyTorch's
        two = xp.ldexp(1.0, xp.clip(other, -2000, 2000).astype(xp.int64, copy=False))
        return (input * two).astype(input.dtype, copy=False)
    return input * xp.power(other.dtype.type(2), other)


def _pow2(other):
    """2**other in other's dtype: for an integer exponent an integer power, as PyTorch's
    formula has it (0 for a negative exponent, wrapping past 62)."""
    return full_like(other, 2).pow(other)


def _ldexp_dinput(g, other):
    return g * _pow2(other).conj()


def _ldexp_dother(g, input, other):
    return g * (input * _pow2(other) * _LN2).conj()


def _ldexp_samples(make):
    # non-negative integer exponents: PyTorch's input gradient for a negative one is an
    # integer power of 2, 0 (tests/test_elementwise.py checks that against PyTorch)
    ints = {"dtype": np.int64}
    for sa, sb in BINARY_SHAPES:
        yield S((make(sa), make(sb, 0, 5, **ints)))
    for sa, sb in BINARY_SHAPES[:4] if make.dtype.kind != "c" else ():
        yield S((make(sa), make(sb, -3, 3)), name="own dtype exponent")
    if make.dtype.kind == "f":  # (torch's backward of a complex input asserts on these)
        yield S((make((2, 3)), make((2, 3), -3, 3, dtype=np.float64)), name="double exponent")
        yield S((make((2, 3)), make((2, 3), 0, 3, dtype=np.int32)), name="int32 exponent")


def _ldexp_errors(make):
    yield ErrorInput(
        S((make((3,)), make((2,), dtype=np.int64))), RuntimeError, "The size of tensor a"
    )
    yield ErrorInput(
        S((make((3,)), 2)), TypeError, r"ldexp\(\): argument 'other' \(position 2\) must be Tensor"
    )


ldexp_p = binary(
    "ldexp",
    _ldexp,
    (_ldexp_dinput, _ldexp_dother),
    ELEMENTWISE,
    prepare=_prep_ldexp,
    samples=_ldexp_samples,
    error_samples=_ldexp_errors,
    dtypes=FLOATS_INT,
    numbers="none",
    inplace_policy=InplacePolicy(cast_text=_LDEXP_CAST),
    complex32="pow",  # (PyTorch's kernel that refuses ComplexHalf: ldexp's 2**other)
)
_ldexp = ldexp_p.fn  # (the public ldexp checks out= first)


def ldexp(input, other, *, out: Tensor | None = None) -> Tensor:
    """``input * 2**other``. As in PyTorch, an ``out`` of a lower kind than the result's
    floating (or complex) dtype is refused with ldexp's own text."""
    if out is not None and isinstance(input, Tensor) and isinstance(other, Tensor):
        kind = 3 if input.is_complex() or other.is_complex() else 2
        if out.dtype._kind < kind:
            raise RuntimeError(_LDEXP_CAST.format(out.dtype.scalar_name))
    return _ldexp(input, other, out=out)


# ------------------------------------------------------------------ frexp
_FREXP_FLOATS = "torch.frexp() only supports floating-point dtypes"

frexp_rt = return_type("frexp", ("mantissa", "exponent"))
frexp_out_rt = return_type("frexp_out", ("mantissa", "exponent"))


def _frexp(xp, input):
    mantissa, exponent = xp.frexp(input)
    return mantissa, exponent.astype(xp.int32, copy=False)


# PyTorch's formula: exp2 of the int32 exponent is in the default float dtype
def _frexp_vjp(g, result):
    return g / result[1].exp2()


def _frexp_jvp(t, result):
    return t / result[1].exp2()


def _frexp_samples(make):
    for s in UNARY_SHAPES:
        yield S((make(s, -100, 100),))
    yield S((make((2, 3), -1e-3, 1e-3),), name="small")


def _frexp_errors(make):
    for d in (np.int64, np.bool_, np.complex64):
        yield ErrorInput(S((make((3,), dtype=d),)), RuntimeError, re.escape(_FREXP_FLOATS))


frexp_p = defop(
    "frexp",
    _frexp,
    vjp=_frexp_vjp,
    jvp=_frexp_jvp,
    nin=1,
    nout=2,
    out_names=("mantissa", "exponent"),
    saved_outputs=(1,),  # (its node saves the exponent)
    ndiff=1,
    batch_rule=elementwise(),
    layout=follow_inputs,
    no_kernel=NoKernel("bic", error=(RuntimeError, _FREXP_FLOATS)),
    samples=_frexp_samples,
    error_samples=_frexp_errors,
    test={"dtypes": FLOATS},
    meta=by_kernel,
)
_frexp = frexp_p.fn


def frexp(input, *, out=None):
    """(mantissa, exponent) with ``input = mantissa * 2**exponent``, |mantissa| in [0.5, 1)
    (0, inf and NaN are their own mantissa, with exponent 0); the exponent is int32."""
    if out is None:
        return frexp_rt(_frexp(input))
    if not isinstance(out, (tuple, list)):
        raise TypeError(
            f"frexp(): argument 'out' must be tuple of Tensors, not {type(out).__name__}"
        )
    if len(out) != 2:
        raise TypeError(f"expected tuple of 2 elements but got {len(out)}")
    if isinstance(input, Tensor):
        if not input.is_floating_point():
            raise RuntimeError(_FREXP_FLOATS)
        mantissa, exponent = out
        if mantissa.dtype != input.dtype:
            raise RuntimeError(
                f"torch.frexp() expects mantissa to have dtype {input.dtype.cpp_name} but got "
                f"{mantissa.dtype.cpp_name}"
            )
        if exponent.dtype != dt.int32:
            raise RuntimeError(
                "torch.frexp() expects exponent to have int dtype but got "
                f"{exponent.dtype.cpp_name}"
            )
    write_out(tuple(out), tuple(_frexp(input)))
    return frexp_out_rt(out)


def _frexp_method(self: Tensor):
    return frexp(self)


tensor_methods({"frexp": _frexp_method})

__all__ = [
    "frexp",
    "frexp_p",
    "frexp_rt",
    "heaviside",
    "heaviside_p",
    "ldexp",
    "ldexp_p",
    "nextafter",
    "nextafter_p",
]
