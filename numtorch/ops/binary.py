"""Binary elementwise ops: arithmetic, division, powers, extrema, clamps, remainders,
floating-point binaries, bitwise; and the three-operand lerp, addcmul and addcdiv.

Each op is one call of ``binary`` (``elementwise_op`` for three operands), see
``_families``: operands broadcast and promote to a common dtype, Python numbers stay weak.
Vjp formulas use numtorch ops only, so they are differentiable again; ``ELEMENTWISE``
derives the jvp from them.
"""

from __future__ import annotations

import cmath
import math

import numpy as np

from .._core import dtype as dt
from .._core import parallel
from .._core.dispatch import kernel_call
from .._core.layout import number_first_contiguous
from .._core.messages import broadcast_mismatch
from .._core.methods import tensor_methods
from .._core.no_kernel import NoKernel
from .._core.op import ErrorInput, composite, on_arrays, zero_term
from .._core.policy import BatchedWrite, InplacePolicy
from .._core.tensor import Tensor
from .._opdb.samples import S
from ._families import (
    BINARY_SHAPES,
    COMPLEX_TOO,
    ELEMENTWISE,
    FLOATS_INT,
    LINEAR,
    Promotion,
    binary,
    binary_samples,
    broadcast_first,
    cj,
    elementwise_op,
    promote,
    promote_float,
)
from ._fma import fma
from ._no_derivative import NOT_IMPLEMENTED, no_derivative
from ._outer import product
from .comparison import where
from .creation import zeros_like

_LN2 = math.log(2.0)


def _is_int(a) -> bool:
    return hasattr(a, "dtype") and a.dtype.kind in "biu"


def _no_bool(kernel_name: str, a) -> None:
    """Integer-only division kernels have no bool version, as in PyTorch."""
    if a.dtype.kind == "b":
        raise dt.not_implemented(kernel_name, a)


def _check_int_zero(a, b) -> None:
    """Integer division by zero raises, as in PyTorch (after the shapes' check)."""
    if _is_int(a) and (not hasattr(b, "dtype") or b.dtype.kind in "biu") and a.size:
        if hasattr(b, "shape"):
            broadcast_first((a, b))
        if (b == 0).any() if hasattr(b, "any") else b == 0:
            raise RuntimeError("ZeroDivisionError")


# ------------------------------------------------------------------ add, sub, mul, rsub
def _add(xp, a, b, *, alpha=1):
    if alpha.__class__ is not int:
        _check_alpha(alpha, a)
    if a.dtype.kind == "b":  # PyTorch reads alpha as a bool for a bool result
        return xp.logical_or(a, xp.logical_and(b, bool(alpha)))
    out = a + b if alpha == 1 else a + alpha * b
    if out.dtype.kind == "c":
        # PyTorch's kernel computes a + alpha * b, a complex product even for alpha 1: an
        # infinite part of b gives a nan (inf * 0j)
        return a + complex(alpha) * b
    return out


def _is_bool(a) -> bool:
    return isinstance(a, bool) or (hasattr(a, "dtype") and a.dtype.kind == "b")


def _number(value) -> None:
    """A 0-d tensor given for a number: the dispatcher reads its value on a TypeError, as
    PyTorch's parser does (``.item()``: refused under vmap with vmap's text)."""
    if not isinstance(value, (int, float, complex, np.generic)):
        raise TypeError("a number is expected")


def _check_alpha(alpha, result) -> None:
    """PyTorch's checks of add's, sub's and rsub's alpha against the result's dtype (the
    kernel's operand, in that dtype): a bool alpha only for a bool result, no floating alpha
    for an integral one, no complex alpha for a real one."""
    _number(alpha)
    kind = result.dtype.kind
    if isinstance(alpha, (bool, np.bool_)) and kind != "b":
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if kind in "biu" and not isinstance(alpha, (int, np.integer, np.bool_)):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number."
        )
    if kind != "c" and isinstance(alpha, (complex, np.complexfloating)):
        raise RuntimeError(
            "For non-complex input tensors, argument alpha must not be a complex number."
        )


def _prep_sub(arrays, attrs=None):
    """Type promotion for sub and rsub, which reject bool operands as PyTorch does."""
    nbool = _is_bool(arrays[0]) + _is_bool(arrays[1])
    if nbool == 2:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
            "`logical_xor()` operator instead."
        )
    if nbool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return promote(arrays, attrs)


def _sub(xp, a, b, *, alpha=1):
    if alpha.__class__ is not int:
        _check_alpha(alpha, a)
    out = a - b if alpha == 1 else a - alpha * b
    if out.dtype.kind == "c":
        return a - complex(alpha) * b  # (as add's)
    return out


def _alpha_errors(make):
    """PyTorch's checks of alpha against the result's dtype."""
    x = make((3,))
    yield ErrorInput(S((x, x), {"alpha": True}), RuntimeError, "^Boolean alpha only supported")
    i = make((3,), -3, 3, dtype=np.int64)
    yield ErrorInput(
        S((i, 2), {"alpha": 0.5}), RuntimeError, "^For integral input tensors, argument alpha"
    )
    if make.dtype.kind == "f":
        yield ErrorInput(
            S((x, x), {"alpha": 1j}), RuntimeError, "^For non-complex input tensors, argument alpha"
        )


add_p = binary(
    "add",
    _add,
    (lambda g: g, lambda g, alpha: g if alpha == 1 else g * cj(alpha)),
    LINEAR,
    error_samples=_alpha_errors,
    number_edges=True,
    inplace_policy=InplacePolicy(batched=BatchedWrite.UNCHECKED),
    checked_scalars=("alpha",),
    float8="add_stub",  # (PyTorch's refusal of float8 names it)
    complex32=True,
)


def _sub_errors(make):
    """Bool operands (tensors or Python bools) are rejected."""
    b = make((3,), dtype=np.bool_)
    yield ErrorInput(S((b, np.array(b))), RuntimeError, "with two bool tensors is not supported")
    yield ErrorInput(S((make((3,)), True)), RuntimeError, "with a bool tensor is not supported")
    yield from _alpha_errors(make)


sub_p = binary(
    "sub",
    _sub,
    (lambda g: g, lambda g, alpha: -g if alpha == 1 else g * -cj(alpha)),
    LINEAR,
    error_samples=_sub_errors,
    prepare=_prep_sub,
    methods=("sub", "subtract"),
    number_edges=True,
    inplace_policy=InplacePolicy(checks_first=True, batched=BatchedWrite.ARITHMETIC),
    checked_scalars=("-alpha",),  # (PyTorch adds -alpha)
    float8="add_stub",  # (PyTorch's refusal of float8 names it)
    complex32=True,
)


def _term(tangent, term):
    """A jvp term; the zero of an operand without a tangent (see ``zero_term``)."""
    return zero_term(term) if tangent is None else term


def _times_real(g, x):
    """``g * cj(x)`` on arrays (mul's vjps' array form), for a real ``x``."""
    if type(x) is complex or type(x) is not np.ndarray and type(x) not in (int, float):
        return NotImplemented
    if (
        type(x) is np.ndarray
        and x.dtype is g.dtype
        and x.shape == g.shape
        and 0 < g.ndim <= 2  # (a 0-d product is a NumPy scalar: the kernel's path wraps it)
        and g.size < parallel.MIN_ELEMENTS
        and g.flags.c_contiguous
        and x.flags.c_contiguous
    ):  # (mul's kernel and layout for such operands: NumPy's product, laid out as it is)
        return g * x
    return kernel_call(mul_p, g, x)


# mul and div keep their jvp: as in PyTorch, the zero tangent of a Python number still
# multiplies a primal (``a * tb``), so the tangent stays on the primal's graph; that term is
# zero even where the primal is inf (``a * 0.5`` at a = -inf).
mul_p = binary(
    "mul",
    product,  # a * b; a stack of outer products through a BLAS matmul
    (
        on_arrays(lambda g, b: g * cj(b), lambda g, b: _times_real(g, b)),
        on_arrays(lambda g, a: g * cj(a), lambda g, a: _times_real(g, a)),
    ),
    lambda tangents, ta, tb, a, b: _term(tangents[0], ta * b) + _term(tangents[1], a * tb),
    methods=("mul", "multiply"),
    number_edges=True,
    inplace_policy=InplacePolicy(batched=BatchedWrite.ARITHMETIC),
    float8=True,  # (PyTorch multiplies float8 in float32)
    number_opmath=True,  # (PyTorch's reduced-float kernel takes a number unrounded)
    complex32=True,
)


def _rsub(xp, input, other, *, alpha=1):
    if alpha.__class__ is not int:
        _check_alpha(alpha, input)
    try:
        return other - input if alpha == 1 else other - alpha * input
    except ValueError:  # PyTorch's text names the operands of other - input
        msg = broadcast_mismatch([np.shape(other), np.shape(input)])
        if msg is None:
            raise
        raise RuntimeError(msg) from None


def _rsub_samples(make):
    yield from binary_samples(scalars=(2.5, 3))(make)
    yield S((make((2, 3)), make((3,))), {"alpha": 2})


rsub_p = binary(
    "rsub",
    _rsub,
    (lambda g, alpha: -g if alpha == 1 else g * -cj(alpha), lambda g: g),
    LINEAR,
    prepare=_prep_sub,
    error_samples=_sub_errors,
    out=False,
    methods=False,
    inplace=False,
    samples=_rsub_samples,
    dtypes=FLOATS_INT,
    node_name=lambda other: "RsubBackward1" if other is None else "RsubBackward0",
    inplace_policy=InplacePolicy(checks_first=True),
    complex32=True,
    checked_scalars=("-alpha",),  # (PyTorch adds -alpha)
)


# ------------------------------------------------------------------ division
_ROUNDING = (None, "trunc", "floor")


def _prep_div(arrays, attrs):
    if attrs.get("rounding_mode") is None:
        return promote_float(arrays, attrs)
    return promote(arrays, attrs)


def _div(xp, input, other, *, rounding_mode=None):
    if rounding_mode is None:
        return input / other
    if input.dtype.kind == "c" and rounding_mode in _ROUNDING:
        raise dt.not_implemented(f"div_{rounding_mode}_cpu", input)
    if rounding_mode == "trunc":
        _no_bool("div_trunc_cpu", input)
        if _is_int(input):
            _check_int_zero(input, other)
            q = input // other
            return q + ((q < 0) & (q * other != input))
        return xp.trunc(input / other)
    if rounding_mode == "floor":
        _no_bool("div_floor_cpu", input)
        _check_int_zero(input, other)
        return xp.floor_divide(input, other)
    raise RuntimeError(
        "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
        f"'{rounding_mode}'"
    )


def _div_samples(make):
    yield from binary_samples(scalars=(2.5, -3), rscalars=(1.5,), nonzero_b=True)(make)
    for mode in ("trunc", "floor") if make.dtype.kind != "c" else ():
        yield S(
            (make((2, 3), -5, 5), make((2, 3), -3, 3, exclude_zero=True)), {"rounding_mode": mode}
        )
        yield S((make((3,), -5, 5), 2), {"rounding_mode": mode})


def _div_errors(make):
    yield ErrorInput(
        S((make((3,)), make((3,))), {"rounding_mode": "bad"}),
        RuntimeError,
        "div expected rounding_mode",
    )
    b = make((3,), dtype=np.bool_)
    for mode in ("trunc", "floor"):
        yield ErrorInput(
            S((b, True), {"rounding_mode": mode}), NotImplementedError, f'"div_{mode}_cpu" not'
        )


def _bool_errors(kernel_name: str):
    """Integer division kernels reject bool operands."""
    return lambda make: [
        ErrorInput(
            S((make((3,), dtype=np.bool_), True)), NotImplementedError, f'"{kernel_name}" not'
        )
    ]


# A rounded quotient is piecewise constant: its derivatives are zeros, as PyTorch's (not
# 0 * g, NaN for an infinite g or result).
def _div_dinput(g, other, rounding_mode):
    return g / cj(other) if rounding_mode is None else zeros_like(g)


# the inputs, not the result (PyTorch's DivBackward0 saves self and other)
def _div_dother(g, input, other, rounding_mode):
    return -g * cj(input / other / other) if rounding_mode is None else zeros_like(g)


# not ELEMENTWISE: see mul. PyTorch's formula, (t_input - t_other * result) / other, where
# an operand without a tangent drops out (its zero tensor takes part in no arithmetic)
def _div_jvp(tangents, tinput, tother, other, result, rounding_mode):
    if rounding_mode is not None:
        return zeros_like(result)
    if tangents[1] is None:
        return tinput / other
    if tangents[0] is None:
        return -(tother * result) / other
    return (tinput - tother * result) / other


div_p = binary(
    "div",
    _div,
    (_div_dinput, _div_dother),
    _div_jvp,
    prepare=_prep_div,
    samples=_div_samples,
    error_samples=_div_errors,
    number_edges=True,
    node_name=lambda rounding_mode: "DivBackward0" if rounding_mode is None else "DivBackward2",
    dtypes=FLOATS_INT,
    methods=("div", "divide", "true_divide"),
    ieee=True,
    inplace_policy=InplacePolicy(batched=BatchedWrite.ARITHMETIC),
    number_opmath=True,  # (PyTorch's reduced-float kernel takes a number unrounded)
)
div = div_p.fn


@composite(
    samples=lambda make: [
        S((make((2, 3)), make((3,), 0.5, 2))),
        S((make((2, 3)), 2.5)),
        S((make(()), make((2, 3), 0.5, 2))),
    ],
    test=COMPLEX_TOO,
)
def true_divide(dividend, divisor, *, out: Tensor | None = None) -> Tensor:
    """Alias for ``div`` with ``rounding_mode=None``."""
    return div(dividend, divisor, out=out)


def _floor_divide(xp, input, other):
    _check_int_zero(input, other)
    return xp.floor_divide(input, other)


_NO_FLOOR_DIVIDE_VJP, _NO_FLOOR_DIVIDE_JVP = no_derivative("floor_divide")


floor_divide_p = binary(
    "floor_divide",
    _floor_divide,
    (_NO_FLOOR_DIVIDE_VJP, _NO_FLOOR_DIVIDE_VJP),
    _NO_FLOOR_DIVIDE_JVP,
    node_name=NOT_IMPLEMENTED,
    # the backward raises (PyTorch has no derivative): tests/test_elementwise.py checks it
    test={"no_grad_test": True},
    dtypes=FLOATS_INT,
    samples=binary_samples(-5, 5, scalars=(2.5, 3), rscalars=(7,), nonzero_b=True),
    error_samples=_bool_errors("div_floor_cpu"),
    ieee=True,
    no_kernel=(
        NoKernel("b", "div_floor_cpu", first=broadcast_first),
        NoKernel("c", "div_floor_cpu"),
    ),
    number_opmath=True,  # (PyTorch's reduced-float kernel takes a number unrounded)
)


# ------------------------------------------------------------------ powers
def _pow(xp, input, exponent):
    if _is_int(input) and isinstance(exponent, int) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if _is_int(input) and _is_int(exponent) and (exponent < 0).any():
        # Integer powers with negative exponents: 1, -1 stay units, everything else is 0.
        neg = exponent < 0
        pos = xp.power(input, xp.where(neg, 0, exponent))
        odd = xp.where(exponent % 2 == 0, 1, -1)
        unit = xp.where(input == 1, 1, xp.where(input == -1, odd, 0)).astype(pos.dtype)
        return xp.where(neg, unit, pos)
    if type(exponent) in (int, float) and getattr(input, "dtype", None) in _POW_FAST_DTYPES:
        fast = _POW_FAST.get(exponent)
        if fast is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                return fast(xp, input)
    return xp.power(input, exponent)


# PyTorch's float kernels for these number exponents: sqrt, rsqrt (1 / sqrt), products
# (rsqrt(-0.) is -inf, rsqrt(-inf) NaN, where a power gives inf and 0)
_POW_FAST = {
    0.5: lambda xp, x: xp.sqrt(x),
    -0.5: lambda xp, x: 1 / xp.sqrt(x),
    -1: lambda xp, x: 1 / x,
    2: lambda xp, x: x * x,
    3: lambda xp, x: x * x * x,
    -2: lambda xp, x: 1 / (x * x),
}
_POW_FAST_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _log(x):
    """log of a tensor or a Python number (for a scalar base)."""
    if isinstance(x, Tensor):
        return x.log()
    if isinstance(x, complex):
        return cmath.log(x) if x else complex(-math.inf, 0)
    return math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)


# (a zero exponent's gradient is 0 whatever the incoming one, a NaN included: PyTorch's)
def _pow_dbase(g, input, exponent):
    if not isinstance(exponent, Tensor):
        return g.new_zeros(g.shape) if exponent == 0 else g * cj(exponent * input ** (exponent - 1))
    return where(exponent == 0, 0, g * (exponent * input ** (exponent - 1)).conj())


def _nonnegative(exponent):
    """exponent >= 0; a complex exponent: real and >= 0."""
    if isinstance(exponent, Tensor) and exponent.is_complex():
        return (exponent.imag == 0) & (exponent.real >= 0)
    return exponent >= 0


def _pow_dexp(g, input, exponent, result):
    if isinstance(input, Tensor):
        return g * where((input == 0) & _nonnegative(exponent), 0, result * input.log()).conj()
    if input == 0:
        return g * where(_nonnegative(exponent), 0, result * -math.inf)
    return g * (result * _log(input)).conj()


def _pow_samples(make):
    if not make.is_float:
        for sa, sb in BINARY_SHAPES:
            yield S((make(sa, -3, 3), make(sb, -2, 3)))
        yield S((make((2, 3), -3, 3), 2))
        yield S((2, make((2, 3), 0, 4)))
        return
    for sa, sb in BINARY_SHAPES:
        yield S((make(sa, 0.5, 2), make(sb, -2, 2)))
    yield S((make((2, 3), -2, 2), 2), name="square")
    yield S((make((2, 3), -2, 2), 3), name="cube")
    yield S((make((2, 3), 0.5, 2), -0.5), name="rsqrt")
    yield S((make((2, 3), -2, 2), 0), name="zero exponent")
    yield S((2.0, make((2, 3), -2, 2)), name="scalar base")
    yield S((1.5, make((2, 3), -2, 2)), name="float scalar base")


def _pow_errors(make):
    yield ErrorInput(
        S((make((3,), dtype=np.int64), -1)), RuntimeError, "Integers to negative integer powers"
    )


# pow.Scalar, pow.Tensor_Scalar, pow.Tensor_Tensor
def _pow_node_name(input, exponent):
    return (
        "PowBackward2" if input is None else "PowBackward0" if exponent is None else "PowBackward1"
    )


_POW_KERNELS = {0.5: "sqrt_vml_cpu", -0.5: "rsqrt_cpu", -1: "reciprocal_cpu"}


def _pow_complex32(arrays, attrs):
    """PyTorch's pow of complex32 by a number: 0 and 1 run (ones, a copy), 0.5, -0.5 and -1
    go to the sqrt, rsqrt and reciprocal kernels, which refuse it; any other to pow's."""
    e = arrays[1]
    if type(e) in (int, float) and hasattr(arrays[0], "dtype"):
        return e in (0, 1) or _POW_KERNELS.get(e, "pow")
    return "pow"


pow_p = binary(
    "pow",
    _pow,
    (_pow_dbase, _pow_dexp),
    ELEMENTWISE,
    samples=_pow_samples,
    error_samples=_pow_errors,
    dtypes=FLOATS_INT,
    ieee=True,
    layout=number_first_contiguous,
    # a bool exponent given as a Python bool is no computation (x ** True is x)
    no_kernel=NoKernel(
        "b",
        "pow",
        when=lambda arrays, attrs: not isinstance(arrays[1], bool),
        first=broadcast_first,
    ),
    node_name=_pow_node_name,
    number_opmath=True,  # (PyTorch's reduced-float kernel takes a number unrounded)
    complex32=_pow_complex32,
)


def _prep_float_power(arrays, attrs):
    cplx = any(
        getattr(a, "dtype", np.dtype(np.float64)).kind == "c" or isinstance(a, complex)
        for a in arrays
    )
    d = np.dtype(np.complex128 if cplx else np.float64)
    return [a.astype(d) if hasattr(a, "astype") else np.asarray(a, dtype=d) for a in arrays], d


def _float_power_inplace(self: Tensor, exponent) -> Tensor:
    from .._core.inplace import run_inplace

    if self.dtype is not dt.float64 and self.dtype is not dt.complex128:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {self.dtype.scalar_name} "
            "but the operation's result requires dtype Double"
        )
    return run_inplace(float_power_p, self, (exponent,), {})


float_power_p = binary(
    "float_power",
    lambda xp, input, exponent: xp.power(input, exponent),
    (_pow_dbase, _pow_dexp),
    ELEMENTWISE,
    prepare=_prep_float_power,
    inplace=False,
    samples=_pow_samples,
    dtypes=FLOATS_INT,
    node_name="PowBackward1",
    ieee=True,
    layout=number_first_contiguous,
    complex32=True,
)


# ------------------------------------------------------------------ extrema
def _extremum(name: str, sign: int):
    """maximum (sign 1) / minimum (sign -1): a tie splits the gradient; where an operand is
    NaN, both get it, as in PyTorch (each is zeroed only where the other operand wins), and
    the tangent is the other's plus a masked difference (a NaN tangent shows through, as in
    PyTorch)."""

    def loses(a, b):
        return a < b if sign > 0 else a > b

    def dinput(g, input, other):
        return where(input == other, g / 2, where(loses(input, other), 0, g))

    def dother(g, input, other):
        return where(input == other, g / 2, where(loses(other, input), 0, g))

    def jvp(tinput, tother, input, other):
        return where(
            input == other, (tinput + tother) / 2, tother + loses(other, input) * (tinput - tother)
        )

    return binary(
        name,
        # (NumPy's maximum/minimum return their second operand on a tie, PyTorch its first:
        # maximum(-0.0, 0.0) is -0.0)
        lambda xp, input, other: getattr(xp, name)(other, input),
        (dinput, dother),
        jvp,
        scalars=(),
        inplace=False,
        dtypes=FLOATS_INT,
        numbers="none",
        no_kernel=NoKernel(
            "c", error=(RuntimeError, f"{name} not implemented for complex tensors.")
        ),
    )


maximum_p, minimum_p = _extremum("maximum", 1), _extremum("minimum", -1)


def _fpick(a, b, sign):
    """Where fmax (sign 1) / fmin (sign -1) takes its first operand."""
    return ((a >= b) if sign > 0 else (a <= b)) | (b != b)


def _fextremum_jvp(sign):
    """PyTorch's: other's tangent plus, where input is taken, the difference. fmax takes
    input's only where input > other (its vjp: >=), so a tie takes other's tangent."""

    def jvp(tinput, tother, input, other):
        pick = ((input > other) if sign > 0 else (input <= other)) | (other != other)
        return tother + pick * (tinput - tother)

    return jvp


fmax_p = binary(
    "fmax",
    lambda xp, input, other: xp.fmax(input, other),
    (
        lambda g, input, other: where(_fpick(input, other, 1), g, 0),
        lambda g, input, other: where(_fpick(input, other, 1), 0, g),
    ),
    _fextremum_jvp(1),
    scalars=(),
    inplace=False,
    dtypes=FLOATS_INT,
    numbers="none",
    no_kernel=NoKernel("c", error=(RuntimeError, "fmax not implemented for complex tensors.")),
)
fmin_p = binary(
    "fmin",
    lambda xp, input, other: xp.fmin(input, other),
    (
        lambda g, input, other: where(_fpick(input, other, -1), g, 0),
        lambda g, input, other: where(_fpick(input, other, -1), 0, g),
    ),
    _fextremum_jvp(-1),
    scalars=(),
    inplace=False,
    dtypes=FLOATS_INT,
    numbers="none",
    no_kernel=NoKernel("c", error=(RuntimeError, "fmin not implemented for complex tensors.")),
)


# ------------------------------------------------------------------ remainders
def _remainder(xp, input, other):
    _check_int_zero(input, other)
    r = xp.remainder(input, other)
    if r.dtype.kind == "f":  # a zero takes the dividend's sign (PyTorch's), not the divisor's
        zero = r == 0
        if zero.any():
            r = xp.where(zero, xp.copysign(r, input), r)
    return r


def _fmod(xp, input, other):
    _check_int_zero(input, other)
    return xp.fmod(input, other)


remainder_p = binary(
    "remainder",
    _remainder,
    (lambda g: g, lambda g, input, other: -g * div(input, other, rounding_mode="floor")),
    ELEMENTWISE,
    samples=binary_samples(-5, 5, scalars=(2.5, 3), nonzero_b=True, low_b=0.5, high_b=3),
    dtypes=FLOATS_INT,
    error_samples=_bool_errors("remainder_cpu"),
    ieee=True,
    no_kernel=(
        NoKernel("b", "remainder_cpu", first=broadcast_first),
        NoKernel("c", "remainder_cpu"),
    ),
    node_name=lambda other: "RemainderBackward0" if other is None else "RemainderBackward1",
)
fmod_p = binary(
    "fmod",
    _fmod,
    (lambda g: g, lambda g, input, other: -g * div(input, other, rounding_mode="trunc")),
    ELEMENTWISE,
    samples=binary_samples(-5, 5, scalars=(2.5, -3), nonzero_b=True, low_b=-3, high_b=3),
    dtypes=FLOATS_INT,
    error_samples=_bool_errors("fmod_cpu"),
    ieee=True,
    no_kernel=(NoKernel("b", "fmod_cpu", first=broadcast_first), NoKernel("c", "fmod_cpu")),
    node_name=lambda other: "FmodBackward0" if other is None else "FmodBackward1",
    numbers="other",
)


# ------------------------------------------------------------------ floating binaries
_sq = lambda a, b: a * a + b * b  # noqa: E731


def _atan2_partial(g, num, input, other):
    """g * num / (input^2 + other^2), 0 at the origin (PyTorch's choice there)."""
    d = _sq(input, other)
    return where(d == 0, 0.0, g * num / d)


atan2_p = binary(
    "atan2",
    lambda xp, input, other: xp.arctan2(input, other),
    (
        lambda g, input, other: _atan2_partial(g, other, input, other),
        lambda g, input, other: _atan2_partial(-g, input, input, other),
    ),
    ELEMENTWISE,
    promotion=Promotion.FLOAT,
    scalars=(),
    dtypes=FLOATS_INT,
    methods=("atan2", "arctan2"),
    numbers="none",
    inplace_policy=InplacePolicy(batched=BatchedWrite.UNCHECKED),
    no_kernel=NoKernel("c", "atan2_cpu"),
)

hypot_p = binary(
    "hypot",
    lambda xp, input, other: xp.hypot(input, other),
    (lambda g, input, result: g * input / result, lambda g, other, result: g * other / result),
    ELEMENTWISE,
    scalars=(),
    ieee=True,
    no_kernel=(NoKernel("bi", "hypot_cpu", first=broadcast_first), NoKernel("c", "hypot_cpu")),
    numbers="none",
)


def _copysign_ratio(input, result):
    return where(input == 0, 0, result / input)


copysign_p = binary(
    "copysign",
    lambda xp, input, other: xp.copysign(input, other),
    (lambda g, input, result: g * _copysign_ratio(input, result), lambda g: g * 0),
    ELEMENTWISE,
    promotion=Promotion.FLOAT,
    dtypes=FLOATS_INT,
    samples=binary_samples(0.2, 2, scalars=(-1.5, 2), low_b=-2, high_b=2),
    numbers="other",
    node_name=lambda other: "CopysignBackward1" if other is None else "CopysignBackward0",
    no_kernel=NoKernel("c", "copysign_cpu"),
)


def _xlogy(xp, input, other):
    if not hasattr(other, "dtype"):
        other = xp.asarray(other, dtype=input.dtype)
    out = input * xp.log(other)
    return xp.where((input == 0) & ~xp.isnan(other), 0, out)


def _xlogy_dinput(g, input, other):
    return where((input == 0) & (other <= 0), 0, xlogy(g, other))


# xlogy.Tensor, xlogy.Scalar_Self, xlogy.Scalar_Other
def _xlogy_node_name(input, other):
    return (
        "XlogyBackward1"
        if input is None
        else "XlogyBackward2"
        if other is None
        else "XlogyBackward0"
    )


xlogy_p = binary(
    "xlogy",
    _xlogy,
    (_xlogy_dinput, lambda g, input, other: g * input / other),
    ELEMENTWISE,
    promotion=Promotion.FLOAT,
    dtypes=FLOATS_INT,
    samples=binary_samples(-2, 2, scalars=(2.5,), rscalars=(3.0,), low_b=0.1, high_b=3),
    ieee=True,
    node_name=_xlogy_node_name,
    no_kernel=NoKernel("c", "xlogy_cpu"),
)
xlogy = xlogy_p.fn


def _diff(a, b, g):
    """a - b in the gradient's dtype (a bool operand subtracts as a number there)."""
    return a.to(g.dtype) - b.to(g.dtype)


# PyTorch's formulas, which read the inputs (saved) and not the result; a bool operand is
# cast first (PyTorch's backward raises its bool Subtraction error there)
def _logaddexp(xp, input, other):
    """log(exp(x) + exp(y)); complex: PyTorch's max + log1p(exp(min - max)), the operands
    ordered by real part (NaN where the smaller has a NaN part; the smaller where both real
    parts are -inf)."""
    if input.dtype.kind != "c" and getattr(other, "dtype", input.dtype).kind != "c":
        return xp.logaddexp(input, other)
    x, y = xp.broadcast_arrays(input, other)
    first = y.real <= x.real  # ties: the first operand is the larger
    lo, hi = xp.where(first, y, x), xp.where(first, x, y)
    with np.errstate(all="ignore"):
        out = hi + xp.log1p(xp.exp(lo - hi))
    out = xp.where(xp.isneginf(lo.real) & (lo.real == hi.real), lo, out)
    return xp.where(xp.isnan(lo.real) | xp.isnan(lo.imag), complex(np.nan, np.nan), out)


logaddexp_p = binary(
    "logaddexp",
    _logaddexp,
    (
        lambda g, input, other: g / (1 + _diff(other, input, g).exp()).conj(),
        lambda g, input, other: g / (1 + _diff(input, other, g).exp()).conj(),
    ),
    ELEMENTWISE,
    scalars=(),
    inplace=False,
    ieee=True,
    numbers="none",
    no_kernel=NoKernel("bi", "logaddexp_cpu", first=broadcast_first),
)
logaddexp2_p = binary(
    "logaddexp2",
    lambda xp, input, other: xp.logaddexp2(input, other),
    (
        lambda g, input, other: g / (1 + _diff(other, input, g).exp2()),
        lambda g, input, other: g / (1 + _diff(input, other, g).exp2()),
    ),
    ELEMENTWISE,
    scalars=(),
    inplace=False,
    ieee=True,
    numbers="none",
    no_kernel=(
        NoKernel("bi", "logaddexp2_cpu", first=broadcast_first),
        NoKernel("c", "logaddexp2_cpu"),
    ),
)


# ------------------------------------------------------------------ lerp, addcmul, addcdiv
def _prep_lerp(arrays, attrs):
    """end must match input; a dimensioned weight too, a 0-d weight promotes with them."""
    input, end, weight = arrays
    tensor_weight = hasattr(weight, "dtype")
    for name, a in (("end", end), ("weight", weight)):
        if hasattr(a, "dtype") and a.dtype != input.dtype and (name == "end" or a.ndim):
            raise RuntimeError(
                f"expected dtype {dt.of(input).cpp_name} for `{name}` but got "
                f"dtype {dt.of(a).cpp_name}"
            )
    arrays, odt = promote(arrays, attrs) if tensor_weight else (arrays, None)
    if arrays[0].dtype.kind in "biu":
        broadcast_first(arrays)  # (PyTorch's shapes come before its kernel's dtypes)
        kernel = "lerp_kernel_tensor" if tensor_weight else "lerp_kernel_scalar"
        raise dt.not_implemented(kernel, arrays[0])
    return arrays, odt


def _lerp(xp, input, end, weight):
    diff = end - input
    return xp.where(xp.abs(weight) < 0.5, input + weight * diff, end - diff * (1 - weight))


def _lerp_samples(make):
    yield S((make((2, 3)), make((2, 3)), 0.3))
    yield S((make((2, 3)), make((3,)), 0.7))
    yield S((make(()), make((2, 3)), make((2, 3), 0, 1)))
    yield S((make((2, 1)), make((1, 3)), make((3,), 0, 1)))
    yield S((make((2, 3)), make((2, 3)), make((), 0, 1)))
    yield S((make((0, 3)), make((3,)), 0.5))


def _lerp_errors(make):
    yield ErrorInput(
        S((make((3,)), make((3,), dtype=np.float64), 0.5)),
        RuntimeError,
        "expected dtype float for `end`",
    )
    yield ErrorInput(
        S((make((3,)), make((3,)), make((3,), dtype=np.float64))),
        RuntimeError,
        "expected dtype float for `weight` but got dtype double",
    )
    i = make((3,), -3, 3, dtype=np.int64)
    yield ErrorInput(S((i, np.array(i), 0.5)), NotImplementedError, '"lerp_kernel_scalar" not')
    yield ErrorInput(
        S((i, np.array(i), np.array(2, dtype=np.int64))),
        NotImplementedError,
        "\"lerp_kernel_tensor\" not implemented for 'Long'",
    )


def _lerp_complex32(arrays, attrs):
    """PyTorch's lerp kernel refusing complex32: the one for a number weight or a tensor's."""
    return "lerp_kernel_tensor" if hasattr(arrays[2], "dtype") else "lerp_kernel_scalar"


lerp_p = elementwise_op(
    "lerp",
    _lerp,
    (
        lambda g, weight: g * cj(1 - weight),
        lambda g, weight: g * cj(weight),
        lambda g, input, end: g * (end - input).conj(),
    ),
    ELEMENTWISE,
    prepare=_prep_lerp,
    samples=_lerp_samples,
    error_samples=_lerp_errors,
    node_name=lambda weight: "LerpBackward0" if weight is None else "LerpBackward1",
    inplace_policy=InplacePolicy(checks_first=True),
    complex32=_lerp_complex32,
)


_ADDCDIV_INT = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior "
    "can be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) "
    "for integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The "
    "future addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
    "tensor2), for all dtypes."
)


def _opmath(xp, arrays):
    """float16 operands as float32, which PyTorch's kernels compute them in (bfloat16 comes
    widened), and the dtype to round the result back to (None: the result's own)."""
    if xp.result_type(*arrays) != np.float16:
        return arrays, None
    return [xp.asarray(a, dtype=np.float32) for a in arrays], np.float16


def _rounded_back(out, back):
    """A float32 result in float16 (``back``), beyond its range inf, silently."""
    if back is None:
        return out
    with np.errstate(over="ignore"):
        return out.astype(back)


def _addcdiv(xp, input, tensor1, tensor2, *, value=1):
    _number(value)
    (input, tensor1, tensor2), back = _opmath(xp, (input, tensor1, tensor2))
    out = input + (value * tensor1) / tensor2  # (PyTorch's order)
    return _rounded_back(out, back)


def _addc_samples(nonzero):
    def samples(make):
        for sa, s1, s2 in [
            ((2, 3), (2, 3), (2, 3)),
            ((3,), (2, 1), (1, 3)),
            ((), (2, 3), ()),
            ((2, 3), (3,), (2, 1)),
            ((0, 3), (3,), (0, 3)),
        ]:
            yield S((make(sa), make(s1), make(s2, 0.5, 2) if nonzero else make(s2)))
        yield S(
            (make((2, 3)), make((2, 3)), make((2, 3), 0.5, 2) if nonzero else make((2, 3))),
            {"value": 2},
        )
        if make.is_float:
            yield S((make((2, 3)), make((3,)), make((2, 3), 0.5, 2)), {"value": -0.5})

    return samples


def _addcmul(xp, input, tensor1, tensor2, *, value=1):
    _number(value)
    if xp.result_type(input, tensor1, tensor2).kind in "iu" and not isinstance(value, int):
        value = int(value)  # PyTorch casts value to an integral result's type
    (input, tensor1, tensor2), back = _opmath(xp, (input, tensor1, tensor2))
    # PyTorch's kernel computes self + (value * tensor1) * tensor2, the last two steps fused
    out = fma(xp, value * tensor1, tensor2, input)
    return _rounded_back(out, back)


def _scaled(t, value):
    """t * value, or t where value is 1 (PyTorch's maybe_multiply in its formulas)."""
    return t if value == 1 and not isinstance(value, complex) else t * value


def _jvp_sum(result, tangents, *terms):
    """The terms (functions giving them) of the operands that have a tangent, added in
    order, as PyTorch's formula adds its zero tensors: nothing but their broadcast shape;
    none: the first's zero."""
    out = None
    for t, term in zip(tangents, terms):
        if t is not None:
            out = term() if out is None else out + term()
    out = zero_term(terms[0]()) if out is None else out
    if tuple(out.shape) != tuple(result.shape):
        out = out.expand(result.shape).clone()
    return out


def _addcmul_jvp(tangents, tinput, ttensor1, ttensor2, tensor1, tensor2, value, result):
    return _jvp_sum(
        result,
        tangents,
        lambda: tinput,
        lambda: _scaled(ttensor1 * tensor2, value),
        lambda: _scaled(ttensor2 * tensor1, value),
    )


def _addcdiv_jvp(tangents, tinput, ttensor1, ttensor2, tensor1, tensor2, value, result):
    return _jvp_sum(
        result,
        tangents,
        lambda: tinput,
        lambda: _scaled(ttensor1 / tensor2, value),
        lambda: -_scaled(ttensor2 * (tensor1 / tensor2) / tensor2, value),
    )


addcmul_p = elementwise_op(
    "addcmul",
    _addcmul,
    (
        lambda g: g,
        lambda g, tensor2, value: g * cj(tensor2 * value),
        lambda g, tensor1, value: g * cj(tensor1 * value),
    ),
    _addcmul_jvp,
    samples=_addc_samples(False),
    dtypes=FLOATS_INT,
    no_kernel=NoKernel("b", "addcmul_cpu_out", first=broadcast_first),
    complex32=True,
    checked_scalars=("value",),
)


def _addcdiv_errors(make):
    yield ErrorInput(
        S(tuple(make((3,), 1, 3, dtype=np.int64) for _ in range(3))),
        RuntimeError,
        "Integer division",
    )


addcdiv_p = elementwise_op(
    "addcdiv",
    _addcdiv,
    (
        lambda g: g,
        # (PyTorch's C++ value / tensor2 divides; Python's reflected / is a reciprocal's
        # product)
        lambda g, tensor2, value: g * cj(div(value, tensor2)),
        lambda g, tensor1, tensor2, value: -g * cj(value * tensor1 / (tensor2 * tensor2)),
    ),
    _addcdiv_jvp,
    samples=_addc_samples(True),
    ieee=True,
    # tensor1 and tensor2 both integral (bool included), whatever input is
    no_kernel=NoKernel("bi", error=(RuntimeError, _ADDCDIV_INT), inputs=(1, 2)),
    error_samples=_addcdiv_errors,
    inplace_policy=InplacePolicy(checks_first=True),
    complex32="addcdiv_cpu_out",  # (PyTorch's kernel that refuses ComplexHalf)
)


# ------------------------------------------------------------------ bitwise
def _bitwise_samples(make):
    yield from binary_samples(-8, 8, scalars=(3,))(make)
    yield S((make((2, 3), dtype=np.bool_), make((2, 3), -8, 8, dtype=np.int64)), name="bool, int")


def _shift(left: bool):
    def kernel(xp, input, other):
        bits = input.dtype.itemsize * 8
        o = xp.asarray(other, dtype=input.dtype)
        big = (o >= bits) | (o < 0)
        safe = xp.where(big, 0, o)
        if left:
            return xp.where(big, 0, xp.left_shift(input, safe))
        shifted = xp.right_shift(input, safe)
        return xp.where(big, xp.where(input < 0, -1, 0).astype(input.dtype), shifted)

    return kernel


_BITWISE = {
    "promotion": Promotion.INTEGRAL,
    "dtypes": ("int64", "bool"),
    "samples": _bitwise_samples,
}
bitwise_and_p = binary(
    "bitwise_and", lambda xp, input, other: xp.bitwise_and(input, other), **_BITWISE
)
bitwise_or_p = binary(
    "bitwise_or", lambda xp, input, other: xp.bitwise_or(input, other), **_BITWISE
)
bitwise_xor_p = binary(
    "bitwise_xor", lambda xp, input, other: xp.bitwise_xor(input, other), **_BITWISE
)
_SHIFT = {
    "promotion": Promotion.INTEGRAL,
    "dtypes": ("int64",),  # shifts of bools are not defined
    "samples": binary_samples(-8, 8, low_b=0, high_b=5, scalars=(2, 70)),
}
bitwise_left_shift_p = binary(
    "bitwise_left_shift",
    _shift(True),
    kernel_name="lshift",
    no_kernel=NoKernel("b", "lshift_cpu", first=broadcast_first),
    **_SHIFT,
)
bitwise_right_shift_p = binary(
    "bitwise_right_shift",
    _shift(False),
    kernel_name="rshift",
    no_kernel=NoKernel("b", "rshift_cpu", first=broadcast_first),
    **_SHIFT,
)

tensor_methods({"float_power_": _float_power_inplace})
