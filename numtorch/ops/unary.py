"""Unary elementwise ops: signs, exponentials and logarithms, trigonometry, rounding,
predicates, bitwise_not.

Each op is one call of ``unary`` (see ``_families``): by default (``Promotion.FLOAT``) an
op computes integer inputs in the default float dtype; ``Promotion.OWN`` keeps the input
dtype. Vjp formulas use
numtorch ops only, so they are differentiable again; ``ELEMENTWISE`` derives the jvp
from them.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtype as dt
from .._core import parallel
from .._core.dispatch import kernel_call
from .._core.meta_array import META_XP
from .._core.methods import tensor_methods
from .._core.no_kernel import CLAMP_COMPLEX, NoKernel
from .._core.op import ErrorInput, composite, on_arrays, zero_term
from .._core.policy import InplacePolicy
from .._opdb.samples import S
from ._families import (
    COMPLEX_TOO,
    ELEMENTWISE,
    FLOATS_INT,
    FLOATS_INT_BOOL,
    LINEAR,
    UNARY_SHAPES,
    Promotion,
    binary,
    cj,
    unary,
    unary_samples,
)
from .comparison import _where as where_kernel
from .comparison import le_p, where, where_p
from .creation import zeros_like

# ------------------------------------------------------------------ helpers
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_2_SQRTPI = 2.0 / math.sqrt(math.pi)
_SQRTPI_2 = math.sqrt(math.pi) / 2.0
_DEG = math.pi / 180.0
_RAD = 180.0 / math.pi


def _special(xp):
    """scipy.special for NumPy arrays, cupyx.scipy.special for CuPy arrays."""
    if xp is np or xp is META_XP:  # (scipy's ufuncs take meta arrays)
        import scipy.special as sp

        return sp
    from .._core.device import cupyx

    return cupyx().scipy.special


def _ufunc(fname: str):
    """A kernel calling ``xp.<fname>`` (domain warnings are filtered package-wide)."""

    f = getattr(np, fname)
    cut = isinstance(f, np.ufunc)  # (a large NumPy array in slabs, on every intra-op thread)

    def kernel(xp, input):
        if cut and xp is np and input.size >= parallel.MIN_ELEMENTS:
            return parallel.ufunc(f, input, passes=2)
        return getattr(xp, fname)(input)

    kernel.__name__ = fname
    return kernel


def _zeros(g):
    """The gradient of a piecewise-constant op."""
    return zeros_like(g)


def _err(make, kernel_name, dtype=np.bool_, **kwargs):
    """The error of a kernel that has no version for ``dtype``."""
    return ErrorInput(
        S((make((3,), dtype=dtype),), kwargs),
        NotImplementedError,
        f'"{kernel_name}" not implemented',
    )


# ------------------------------------------------------------------ samples
def _off_grid(make, shape, scale=1.0):
    """Values k + u (k integer, u in (0.1, 0.4)) times scale: away from integers and halves."""
    if not make.is_float:
        return make(shape, -3, 3)
    k = np.floor(make(shape, -3, 3, dtype=np.float64))
    return np.asarray((k + make(shape, 0.1, 0.4, dtype=np.float64)) * scale, dtype=make.dtype)


def _rounding_samples(make):
    for s in UNARY_SHAPES:
        yield S((_off_grid(make, s),))


def _round_samples(make):
    yield from _rounding_samples(make)
    if make.is_float:
        yield S((_off_grid(make, (2, 3), 0.1),), {"decimals": 1})
        yield S((_off_grid(make, (4,), 10.0),), {"decimals": -1})
        yield S((_off_grid(make, (4,)),), {"decimals": 0})


def _with_specials(make, shape):
    """An array holding nan, inf, -inf and -0.0 (float dtypes) among ordinary values."""
    a = np.asarray(make(shape))
    if make.is_float and a.size:
        flat = a.reshape(-1)
        vals = [np.nan, np.inf, -np.inf, -0.0]
        if make.dtype.kind == "c":  # special in both parts
            vals = [complex(v, v) for v in vals]
        idx = make.rng.permutation(flat.size)[: len(vals)]
        flat[idx] = vals[: len(idx)]
    return a


def _predicate_samples(make):
    for s in ((), (6,), (2, 3), (0, 3), (2, 1, 4)):
        yield S((_with_specials(make, s),))


# ------------------------------------------------------------------ signs and magnitudes
def _neg(xp, input):
    if input.dtype.kind == "b":
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return -input


def _abs(xp, input):
    if input.dtype.kind == "b":
        raise dt.not_implemented("abs_cpu", input)
    return xp.abs(input)


def _sign(xp, input):
    if input.dtype.kind == "b":
        return input.copy()
    r = xp.sign(input)
    return xp.nan_to_num(r, nan=0.0) if r.dtype.kind == "f" else r


def _relu(xp, input):
    if input.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    return xp.maximum(0, input)  # (NumPy then keeps -0.0, as PyTorch does)


def _square(xp, input):
    if input.dtype.kind == "b":
        input = input.astype(xp.int64)
    return input * input


def _neg_errors(make):
    yield ErrorInput(
        S((make((3,), dtype=np.bool_),)), RuntimeError, "on a bool tensor is not supported"
    )


neg_p = unary(
    "neg",
    _neg,
    lambda g: -g,
    LINEAR,
    promotion=Promotion.OWN,
    dtypes=FLOATS_INT,
    methods=("neg", "negative"),
    error_samples=_neg_errors,
    inplace_policy=InplacePolicy(checks_first=True),
    complex32=True,
)
abs_p = unary(
    "abs",
    _abs,
    lambda g, input: g * input.sgn(),
    ELEMENTWISE,
    promotion=Promotion.OWN,
    dtypes=FLOATS_INT,
    exclude_zero=True,
    methods=("abs", "absolute"),
    error_samples=lambda make: [_err(make, "abs_cpu")],
    test={"no_gradgrad": True},  # torch's second derivative is a ZeroTensor the harness can't read
    complex32=True,
)
_SIGN = {"promotion": Promotion.OWN, "dtypes": FLOATS_INT_BOOL, "exclude_zero": True}
sign_p = unary(
    "sign",
    _sign,
    _zeros,
    ELEMENTWISE,
    **_SIGN,
    no_kernel=NoKernel(
        "c",
        error=(
            NotImplementedError,
            "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead.",
        ),
    ),
)


def _sgn_vjp(g, input, result):
    """0 for real input; for complex z, (g - s Re(conj(g) s)) / |z| with s = z / |z|
    (0 at z = 0)."""
    if not input.is_complex():
        return zeros_like(g)
    r = input.abs()
    return where(r == 0, 0, (g - result * (g.conj() * result).real) / where(r == 0, 1, r))


def _sgn_jvp(t, input, result):
    """0 for real input; for complex z, (t - s Re(conj(s) t)) / |z| (0 at z = 0)."""
    if not input.is_complex():
        return zeros_like(t)
    r = input.abs()
    return where(r == 0, 0, (t - result * (result.conj() * t).real) / where(r == 0, 1, r))


sgn_p = unary(
    "sgn",
    _sign,
    _sgn_vjp,
    _sgn_jvp,
    **_SIGN,
    complex=False,  # (the oracle, sign, refuses complex: see tests/test_complex_autograd.py)
    oracle="sign",  # torch's sgn backward is a ZeroTensor the harness can't read
    complex32=True,
)


def _relu_errors(make):
    yield ErrorInput(
        S((make((3,), dtype=np.bool_),)), RuntimeError, "Boolean inputs not supported for relu"
    )


def _relu_vjp_arrays(g, result):
    """relu's vjp on arrays: ``where(result <= 0, 0, g)``, where's kernel taking the place
    of the ops' for C-ordered operands of one dtype (the same bits and layout)."""
    if g.dtype == result.dtype and g.flags.c_contiguous and result.flags.c_contiguous:
        if g.shape == result.shape:
            return where_kernel(np, result <= 0, 0, g)
    return kernel_call(where_p, kernel_call(le_p, result, 0), 0, g)


relu_p = unary(
    "relu",
    _relu,
    on_arrays(
        lambda g, result: where(result <= 0, 0, g),
        _relu_vjp_arrays,
    ),
    ELEMENTWISE,
    promotion=Promotion.OWN,
    dtypes=FLOATS_INT,
    exclude_zero=True,
    out=False,
    error_samples=_relu_errors,
    inplace_policy=InplacePolicy(checks_first=True),
    no_kernel=NoKernel("c", error=CLAMP_COMPLEX),
)
relu = relu_p.fn
square_p = unary(
    "square",
    _square,
    lambda g, input: g * 2 * input.conj(),
    ELEMENTWISE,
    promotion=Promotion.OWN,
    dtypes=FLOATS_INT_BOOL,
    node_name="PowBackward0",  # PyTorch's square is pow(input, 2)
    complex32="pow",  # (PyTorch's kernel that refuses ComplexHalf)
)

# ------------------------------------------------------------------ exponentials and logarithms
_LOG = {"dtypes": FLOATS_INT, "low": 0.1, "high": 3.0, "ieee": True}
exp_p = unary(
    "exp",
    _ufunc("exp"),
    lambda g, result: g * result.conj(),
    ELEMENTWISE,
    dtypes=FLOATS_INT_BOOL,
    ieee=True,
    vml=True,
)
exp2_p = unary(
    "exp2",
    _ufunc("exp2"),
    lambda g, result: g * result.conj() * _LN2,
    ELEMENTWISE,
    dtypes=FLOATS_INT_BOOL,
    ieee=True,
    complex32="exp2",  # (PyTorch's kernel that refuses ComplexHalf)
)
expm1_p = unary(
    "expm1",
    _ufunc("expm1"),
    lambda g, result: g * (result.conj() + 1),
    ELEMENTWISE,
    dtypes=FLOATS_INT,
    ieee=True,
    vml=True,
)
log_p = unary(
    "log",
    _ufunc("log"),
    lambda g, input: g / input.conj(),
    ELEMENTWISE,
    vml=True,
    **_LOG,
)
log2_p = unary(
    "log2",
    _ufunc("log2"),
    lambda g, input: g / (input.conj() * _LN2),
    ELEMENTWISE,
    vml=True,
    **_LOG,
)
log10_p = unary(
    "log10",
    _ufunc("log10"),
    lambda g, input: g / (input.conj() * _LN10),
    ELEMENTWISE,
    vml=True,
    **_LOG,
)
log1p_p = unary(
    "log1p",
    _ufunc("log1p"),
    lambda g, input: g / (input.conj() + 1),
    ELEMENTWISE,
    dtypes=FLOATS_INT,
    low=-0.9,
    high=3.0,
    ieee=True,
    vml=True,
)
sqrt_p = unary(
    "sqrt",
    _ufunc("sqrt"),
    lambda g, result: g / (result.conj() * 2),
    ELEMENTWISE,
    vml=True,
    **_LOG,
)
rsqrt_p = unary(
    "rsqrt",
    lambda xp, input: xp.reciprocal(xp.sqrt(input)),
    lambda g, result: g * (result * result * result).conj() * -0.5,
    ELEMENTWISE,
    **_LOG,
)
reciprocal_p = unary(
    "reciprocal",
    _ufunc("reciprocal"),
    lambda g, result: -g * (result * result).conj(),
    ELEMENTWISE,
    dtypes=FLOATS_INT,
    exclude_zero=True,
    ieee=True,
)
reciprocal = reciprocal_p.fn

# ------------------------------------------------------------------ trigonometric and hyperbolic
_UNIT = {"dtypes": FLOATS_INT, "low": -0.9, "high": 0.9, "ieee": True}
sin_p = unary(
    "sin",
    _ufunc("sin"),
    lambda g, input: g * input.cos().conj(),
    ELEMENTWISE,
    dtypes=FLOATS_INT,
    vml=True,
)
cos_p = unary(
    "cos",
    _ufunc("cos"),
    lambda g, input: -g * input.sin().conj(),
    ELEMENTWISE,
    dtypes=FLOATS_INT,
    vml=True,
)
tan_p = unary(
    "tan",
    _ufunc("tan"),
    lambda g, result: g * (result * result + 1).conj(),
    ELEMENTWISE,
    dtypes=FLOATS_INT,
    low=-1.2,
    high=1.2,
    vml=True,
)
asin_p = unary(
    "asin",
    _ufunc("arcsin"),
    lambda g, input: g * (1 - input * input).rsqrt().conj(),
    ELEMENTWISE,
    methods=("asin", "arcsin"),
    **_UNIT,
    vml=True,
)
acos_p = unary(
    "acos",
    _ufunc("arccos"),
    lambda g, input: -g * (1 - input * input).rsqrt().conj(),
    ELEMENTWISE,
    methods=("acos", "arccos"),
    **_UNIT,
    vml=True,
)
atan_p = unary(
    "atan",
    _ufunc("arctan"),
    lambda g, input: g / (input * input + 1).conj(),
    ELEMENTWISE,
    dtypes=FLOATS_INT,
    methods=("atan", "arctan"),
    vml=True,
)
sinh_p = unary(
    "sinh",
    _ufunc("sinh"),
    lambda g, input: g * input.cosh().conj(),
    ELEMENTWISE,
    dtypes=FLOATS_INT,
    ieee=True,
)
cosh_p = unary(
    "cosh",
    _ufunc("cosh"),
    lambda g, input: g * input.sinh().conj(),
    ELEMENTWISE,
    dtypes=FLOATS_INT,
    ieee=True,
)


def _tanh_backward(xp, grad_output, output):
    if output.dtype.kind == "c":
        return grad_output * xp.conj(1 - output * output)
    if output.dtype.itemsize < 8:  # PyTorch's fused multiply-add rounds 1 - y * y once
        return grad_output * (1 - output.astype(xp.float64) ** 2).astype(output.dtype)
    return grad_output * (1 - output * output)


# grad_output * conj(1 - output ** 2) is anti-holomorphic in output: its derivative is
# -2 grad_output conj(output) along conj(output).
def _tanh_backward_output_vjp(g, grad_output, output):
    if output.is_complex():
        return g.conj() * (-2 * output.conj() * grad_output)
    return g * (-2 * output * grad_output)


def _tanh_backward_output_jvp(t, grad_output, output):
    if output.is_complex():
        return (-2 * output * grad_output.conj() * t).conj()
    return t * (-2 * output * grad_output)


def _tanh_backward_jvp(tangents, tgrad_output, toutput, grad_output, output):
    of_grad = _term(tangents[0], tanh_backward(tgrad_output, output))
    return of_grad + _term(tangents[1], _tanh_backward_output_jvp(toutput, grad_output, output))


def _term(tangent, term):
    """A jvp term; the zero of an operand without a tangent (see ``zero_term``)."""
    return zero_term(term) if tangent is None else term


def _tanh_backward_samples(make):
    for sa, sb in (((2, 3), (2, 3)), ((5,), (5,)), ((), ()), ((2, 3), (3,)), ((0, 3), (0, 3))):
        yield S((make(sa), make(sb, -0.99, 0.99)))


# tanh's gradient is an op of its own, as PyTorch's: one node where a double backward
# differentiates it (TanhBackwardBackward0), not the five of the formula's arithmetic.
tanh_backward_p = binary(
    "tanh_backward",
    _tanh_backward,
    (
        lambda g, output: tanh_backward(g, cj(output)),
        lambda g, grad_output, output: _tanh_backward_output_vjp(g, grad_output, output),
    ),
    _tanh_backward_jvp,
    samples=_tanh_backward_samples,
    methods=False,
    out=False,
    numbers="none",
    api="ops.unary.tanh_backward",
    oracle="ops.aten.tanh_backward",
    test={
        "torch_complex_vjp_wrong": "torch's formula for output conjugates the whole product "
        "(grad.conj() * (-2 * output.conj() * grad_output).conj()): not the finite differences"
    },
)
tanh_backward = tanh_backward_p.fn

tanh_p = unary(
    "tanh",
    _ufunc("tanh"),
    lambda g, result: tanh_backward(g, result),
    ELEMENTWISE,
    dtypes=FLOATS_INT,
    vml=True,
)
tanh = tanh_p.fn
asinh_p = unary(
    "asinh",
    _ufunc("arcsinh"),
    lambda g, input: g * (input * input + 1).rsqrt().conj(),
    ELEMENTWISE,
    dtypes=FLOATS_INT,
    methods=("asinh", "arcsinh"),
)
acosh_p = unary(
    "acosh",
    _ufunc("arccosh"),
    lambda g, input: g * (input * input - 1).rsqrt().conj(),
    ELEMENTWISE,
    dtypes=FLOATS_INT,
    low=1.1,
    high=3.0,
    methods=("acosh", "arccosh"),
    ieee=True,
)
atanh_p = unary(
    "atanh",
    _ufunc("arctanh"),
    lambda g, input: g / (1 - input * input).conj(),
    ELEMENTWISE,
    methods=("atanh", "arctanh"),
    **_UNIT,
)
deg2rad_p = unary(
    "deg2rad",
    lambda xp, input: input * _DEG,
    lambda g: g * _DEG,
    LINEAR,
    dtypes=FLOATS_INT_BOOL,
    no_kernel=NoKernel("c", error=(RuntimeError, "deg2rad is not supported for complex tensors.")),
)
rad2deg_p = unary(
    "rad2deg",
    lambda xp, input: input * _RAD,
    lambda g: g * _RAD,
    LINEAR,
    dtypes=FLOATS_INT_BOOL,
    no_kernel=NoKernel("c", error=(RuntimeError, "rad2deg is not supported for complex tensors.")),
)


# ------------------------------------------------------------------ sigmoid, logit, error function
def _logit(xp, input, eps=None):
    if eps is not None:
        input = xp.clip(input, eps, 1.0 - eps)
    return xp.log(input / (1 - input))


def _logit_grad(g, input, eps):
    """g / (x (1 - x)); zero where eps clamps the input, NaN outside [0, 1] without eps
    (where logit itself is NaN). At 0 and 1 it is g * inf, -0.0 included (the one-sided
    derivative, as PyTorch's kernel): the denominator's sign is taken as +."""
    grad = g / (input * (1 - input)).abs()
    if eps is None:
        return where((input < 0) | (input > 1), math.nan, grad)
    return where((input < eps) | (input > 1 - eps), 0.0, grad)


def _logit_samples(make):
    yield from unary_samples(0.1, 0.9)(make)
    yield S((make((2, 3), 0.1, 0.9),), {"eps": 1e-6})
    if make.is_float:
        # eps clamps some entries: zero gradient there (kept away from the clamp points).
        yield S((np.array([0.05, 0.15, 0.3, 0.6, 0.85, 0.95], dtype=make.dtype), 0.1))


def _sigmoid(xp, input):
    """1 / (1 + exp(-x)); SciPy's expit has no complex version."""
    if input.dtype.kind == "c":
        with np.errstate(all="ignore"):
            return 1 / (1 + xp.exp(-input))
    return _special(xp).expit(input)


def _sigmoid_grad(g, result):
    # PyTorch's order, g * (1 - y) * y (a real product rounds differently grouped)
    if result.is_complex():
        return g * ((1 - result) * result).conj()
    return g * (1 - result) * result


sigmoid_p = unary(
    "sigmoid",
    _sigmoid,
    _sigmoid_grad,
    ELEMENTWISE,
    dtypes=FLOATS_INT_BOOL,
)
sigmoid = sigmoid_p.fn
logit_p = unary(
    "logit",
    _logit,
    _logit_grad,
    ELEMENTWISE,
    dtypes=FLOATS_INT,
    samples=_logit_samples,
    ieee=True,
    no_kernel=NoKernel("c", "logit_cpu"),
)
erf_p = unary(
    "erf",
    lambda xp, input: _special(xp).erf(input).astype(input.dtype, copy=False),
    lambda g, input: g * (-input * input).exp() * _2_SQRTPI,
    ELEMENTWISE,
    dtypes=FLOATS_INT_BOOL,
    no_kernel=NoKernel("c", "erf_vml_cpu"),
)
erfc_p = unary(
    "erfc",
    lambda xp, input: _special(xp).erfc(input).astype(input.dtype, copy=False),
    lambda g, input: g * (-input * input).exp() * -_2_SQRTPI,
    ELEMENTWISE,
    dtypes=FLOATS_INT_BOOL,
    no_kernel=NoKernel("c", "erfc_vml_cpu"),
)
erfinv_p = unary(
    "erfinv",
    lambda xp, input: _special(xp).erfinv(input).astype(input.dtype, copy=False),
    # PyTorch's formula reads (saves) the input, not the result
    lambda g, input: g * input.erfinv().square().exp() * _SQRTPI_2,
    ELEMENTWISE,
    dtypes=FLOATS_INT,
    low=-0.9,
    high=0.9,
    no_kernel=NoKernel("c", "erfinv_vml_cpu"),
)


# ------------------------------------------------------------------ rounding
def _rounding(fn: str):
    def kernel(xp, input):
        return input.copy() if input.dtype.kind in "iu" else getattr(xp, fn)(input)

    kernel.__name__ = fn
    return kernel


def _round(xp, input, *, decimals=0):
    if input.dtype.kind in "iu":
        return input.copy()
    return xp.round(input, decimals)


_ROUND_NO_KERNEL = (
    NoKernel("b", lambda arrays, attrs: "round_vml_cpu" if attrs["decimals"] == 0 else "round_cpu"),
    NoKernel("i", "round_cpu", when=lambda arrays, attrs: attrs["decimals"] != 0),
)


def _frac(xp, input):
    return input - xp.trunc(input)


def _rounding_refusals(name: str) -> tuple[NoKernel, ...]:
    """PyTorch has no bool kernel of floor/ceil/trunc and refuses complex inputs."""
    return (
        NoKernel("b", f"{name}_vml_cpu"),
        NoKernel("c", error=(NotImplementedError, f"{name} is not supported for complex inputs")),
    )


_ROUNDING = {"promotion": Promotion.OWN, "dtypes": FLOATS_INT, "samples": _rounding_samples}
floor_p = unary(
    "floor",
    _rounding("floor"),
    _zeros,
    ELEMENTWISE,
    no_kernel=_rounding_refusals("floor"),
    **_ROUNDING,
)
ceil_p = unary(
    "ceil",
    _rounding("ceil"),
    _zeros,
    ELEMENTWISE,
    no_kernel=_rounding_refusals("ceil"),
    **_ROUNDING,
)
trunc_p = unary(
    "trunc",
    _rounding("trunc"),
    _zeros,
    ELEMENTWISE,
    **_ROUNDING,
    methods=("trunc", "fix"),
    error_samples=lambda make: [_err(make, "trunc_vml_cpu")],
    no_kernel=_rounding_refusals("trunc"),
)


def _round_errors(make):
    yield _err(make, "round_cpu", np.int64, decimals=1)
    yield _err(make, "round_vml_cpu")


def _round_kernel(arrays, attrs):
    """PyTorch's round kernel: the VML one, or with decimals its own."""
    return "round_cpu" if attrs.get("decimals") else "round_vml_cpu"


round_p = unary(
    "round",
    _round,
    _zeros,
    ELEMENTWISE,
    promotion=Promotion.OWN,
    dtypes=FLOATS_INT,
    samples=_round_samples,
    error_samples=_round_errors,
    no_kernel=(*_ROUND_NO_KERNEL, NoKernel("c", _round_kernel)),
    node_name=lambda decimals: f"RoundBackward{int(bool(decimals))}",
)
frac_p = unary(
    "frac",
    _frac,
    lambda g: g,
    ELEMENTWISE,
    promotion=Promotion.OWN,
    samples=_rounding_samples,
    error_samples=lambda make: [_err(make, "frac_cpu", np.int64)],
    no_kernel=(NoKernel("bi", "frac_cpu"), NoKernel("c", "frac_cpu")),
)


# ------------------------------------------------------------------ nan_to_num, angle, conj
def _nan_to_num(xp, input, nan=0.0, posinf=None, neginf=None):
    if input.dtype.kind not in "fc":
        return input.copy()
    return xp.nan_to_num(input, nan=nan, posinf=posinf, neginf=neginf)


def _nan_to_num_samples(make):
    yield S((_with_specials(make, (2, 3)),), {"posinf": 2.0, "neginf": -3.0})
    a = make((2, 3))
    if make.is_float:
        a[0, 1] = a[1, 2] = complex(np.nan, np.nan) if make.dtype.kind == "c" else np.nan
    yield S((a,))
    yield S((_with_specials(make, (6,)), 1.5, 4.0, -4.0))
    yield S((np.asarray(make(())),))
    yield S((make((0, 3)),))


def _angle(xp, input):
    if input.dtype.kind == "c":
        return xp.angle(input)
    r = xp.where(input < 0, xp.pi, xp.where(input != input, input, 0))
    return r.astype(input.dtype, copy=False)


nan_to_num_p = unary(
    "nan_to_num",
    _nan_to_num,
    lambda g, input: g * input.isfinite(),
    ELEMENTWISE,
    promotion=Promotion.OWN,
    dtypes=FLOATS_INT_BOOL,
    samples=_nan_to_num_samples,
    complex_grad=False,
    complex32="nan_to_num",  # (PyTorch's kernel that refuses ComplexHalf)
)


def _angle_vjp(g, input):
    """0 for real input; PyTorch's i z / |z|^2 (0 at z = 0) for complex."""
    if not input.is_complex():
        return zeros_like(g)
    return where(input == 0, 0, g * input / input.abs().square() * 1j)


def _angle_jvp(t, input):
    """Im(t / z) for complex input (0 at z = 0), else 0."""
    if not input.is_complex():
        return zeros_like(t)
    return where(input == 0, 0, (t / where(input == 0, 1, input)).imag)


angle_p = unary(
    "angle",
    _angle,
    _angle_vjp,
    _angle_jvp,
    dtypes=FLOATS_INT_BOOL,
    exclude_zero=True,
    inplace=False,
)
conj_physical_p = unary(
    "conj_physical",
    lambda xp, input: xp.conj(input) if input.dtype.kind == "c" else input.copy(),
    lambda g: g.conj(),
    LINEAR,
    promotion=Promotion.OWN,
    dtypes=FLOATS_INT_BOOL,
    inplace_policy=InplacePolicy(shared_ok=True),
    complex32=True,
)
conj_physical = conj_physical_p.fn


@composite(
    samples=lambda make: [S((make((2, 3)),)), S((make(()),))],
    error_samples=lambda make: [
        ErrorInput(
            S((make((3,), dtype=np.bool_),)), RuntimeError, "on a bool tensor is not supported"
        )
    ],
    test=COMPLEX_TOO,
)
def positive(input):
    """The input itself (``+input``); an error for bool tensors."""
    if input.dtype.name == "bool":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# ------------------------------------------------------------------ predicates (bool outputs, no gradient)
def _isreal(xp, input):
    return input.imag == 0 if input.dtype.kind == "c" else xp.ones(input.shape, dtype=bool)


_PREDICATE = {
    "promotion": Promotion.OWN,
    "inplace": False,
    "dtypes": FLOATS_INT_BOOL,
    "samples": _predicate_samples,
}
signbit_p = unary(
    "signbit",
    _ufunc("signbit"),
    **_PREDICATE,
    no_kernel=NoKernel(
        "c", error=(NotImplementedError, "signbit is not implemented for complex tensors.")
    ),
)
isnan_p = unary("isnan", _ufunc("isnan"), out=False, float8=True, complex32=True, **_PREDICATE)
isinf_p = unary("isinf", _ufunc("isinf"), out=False, complex32=True, **_PREDICATE)
isfinite_p = unary("isfinite", _ufunc("isfinite"), out=False, complex32=True, **_PREDICATE)
isposinf_p = unary(
    "isposinf",
    _ufunc("isposinf"),
    **_PREDICATE,
    no_kernel=NoKernel("c", error=(RuntimeError, "isposinf does not support complex inputs.")),
)
isneginf_p = unary(
    "isneginf",
    _ufunc("isneginf"),
    **_PREDICATE,
    no_kernel=NoKernel("c", error=(RuntimeError, "isneginf does not support complex inputs.")),
)
isreal_p = unary("isreal", _isreal, out=False, complex32=True, **_PREDICATE)

# ------------------------------------------------------------------ bitwise
bitwise_not_p = unary(
    "bitwise_not",
    lambda xp, input: xp.invert(input),
    promotion=Promotion.INTEGRAL,
    dtypes=("int64", "bool"),
    samples=unary_samples(-8, 8, shapes=UNARY_SHAPES[:4]),
)


# ------------------------------------------------------------------ public aliases
def inplace_functions(names: str) -> tuple:
    """``torch.<name>_(input)`` for each name: the in-place method as a function."""
    return tuple(_inplace_function(n) for n in names.split())


def _inplace_function(name: str):
    def fn(input, *args, **kwargs):
        return getattr(input, name + "_")(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name + "_"
    fn.__doc__ = f"In-place ``{name}``: ``input.{name}_()``."
    return fn


tensor_methods({"positive": positive})

__all__ = [
    "abs_p",
    "acos_p",
    "acosh_p",
    "angle_p",
    "asin_p",
    "asinh_p",
    "atan_p",
    "atanh_p",
    "bitwise_not_p",
    "ceil_p",
    "conj_physical",
    "conj_physical_p",
    "cos_p",
    "cosh_p",
    "deg2rad_p",
    "erf_p",
    "erfc_p",
    "erfinv_p",
    "exp_p",
    "exp2_p",
    "expm1_p",
    "floor_p",
    "frac_p",
    "isfinite_p",
    "isinf_p",
    "isnan_p",
    "isneginf_p",
    "isposinf_p",
    "isreal_p",
    "log_p",
    "log10_p",
    "log1p_p",
    "log2_p",
    "logit_p",
    "nan_to_num_p",
    "neg_p",
    "positive",
    "rad2deg_p",
    "reciprocal",
    "reciprocal_p",
    "relu",
    "relu_p",
    "round_p",
    "rsqrt_p",
    "sgn_p",
    "sigmoid",
    "sigmoid_p",
    "sign_p",
    "signbit_p",
    "sin_p",
    "sinh_p",
    "sqrt_p",
    "square_p",
    "tan_p",
    "tanh",
    "tanh_p",
    "trunc_p",
]
