"""Elementwise ops: arithmetic and unary math, rounding, predicates.

Unary ops are built by ``unary`` (see ``_families``); ``floating`` ops compute
integer inputs in the default float dtype, the others keep the input dtype.
Vjp/jvp formulas use numtorch ops only, so they are differentiable again.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtype as dt
from .._core.op import ErrorInput, Op, defop, tensor_methods
from ..testing.samples import S
from ._batching import elementwise
from ._families import LINEAR, UNARY_SHAPES, binary, inplace, method, promote, unary
from .comparison import where
from .creation import zeros_like

# ------------------------------------------------------------------ helpers
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_2_SQRTPI = 2.0 / math.sqrt(math.pi)
_SQRTPI_2 = math.sqrt(math.pi) / 2.0
_DEG = math.pi / 180.0
_RAD = 180.0 / math.pi


def _not_implemented(kernel_name: str, a) -> None:
    raise RuntimeError(f"\"{kernel_name}\" not implemented for '{dt.of(a).scalar_name}'")


def _special(xp):
    """scipy.special for NumPy arrays, cupyx.scipy.special for CuPy arrays."""
    if xp is np:
        import scipy.special as sp
    else:
        import cupyx.scipy.special as sp
    return sp


def _ufunc(fname: str):
    """A kernel calling ``xp.<fname>`` (domain warnings are filtered package-wide)."""

    def kernel(xp, input):
        return getattr(xp, fname)(input)

    kernel.__name__ = fname
    return kernel


def _zeros(g):
    """The gradient of a piecewise-constant op."""
    return zeros_like(g)


def _where(cond, a, b):
    return where(cond, a, b)


def _u(name, kernel, vjp, jvp, *, low=-2.0, high=2.0, exclude_zero=False, **kw) -> Op:
    """``unary`` with this module's samples (0-d, empty and broadcast shapes in [low, high])."""
    kw.setdefault("samples", _samples(low, high, exclude_zero=exclude_zero))
    return unary(name, kernel, vjp, jvp, **kw)


# ------------------------------------------------------------------ samples
def _samples(low=-2.0, high=2.0, *, exclude_zero=False):
    def samples(make):
        for s in UNARY_SHAPES:
            yield S((np.asarray(make(s, low, high, exclude_zero=exclude_zero)),))

    return samples


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
        idx = make.rng.permutation(flat.size)[: len(vals)]
        flat[idx] = vals[: len(idx)]
    return a


def _predicate_samples(make):
    for s in ((), (6,), (2, 3), (0, 3), (2, 1, 4)):
        yield S((_with_specials(make, s),))


# ------------------------------------------------------------------ arithmetic
def _add(xp, a, b, *, alpha=1):
    return a + b if alpha == 1 else a + alpha * b


def _is_bool(a) -> bool:
    return isinstance(a, bool) or (hasattr(a, "dtype") and a.dtype.kind == "b")


def prep_sub(arrays, attrs=None):
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
    return a - b if alpha == 1 else a - alpha * b


add = binary(
    "add", _add, (lambda g: g, lambda g, alpha: g if alpha == 1 else g * alpha), LINEAR,
)  # fmt: skip


def sub_errors(make):
    """Bool operands (tensors or Python bools) are rejected."""
    b = make((3,), dtype=np.bool_)
    yield ErrorInput(S((b, np.array(b))), RuntimeError, "with two bool tensors is not supported")
    yield ErrorInput(S((make((3,)), True)), RuntimeError, "with a bool tensor is not supported")


sub = binary(
    "sub", _sub, (lambda g: g, lambda g, alpha: -g if alpha == 1 else g * -alpha), LINEAR,
    error_samples=sub_errors, prepare=prep_sub,
)  # fmt: skip


def _mul(xp, a, b):
    if type(a) is np.ndarray and type(b) is np.ndarray and a.ndim >= 3 and _outer_stack(a, b):
        # NumPy's matmul runs an inner dimension of 1 in a slow loop of its own; padded to 2
        # with zeros, the stack of outer products is one BLAS-backed matmul.
        a = np.concatenate([a, np.zeros_like(a)], -1)
        b = np.concatenate([b, np.zeros_like(b)], -2)
        return np.matmul(a, b)
    return a * b


def _outer_stack(a, b) -> bool:
    """Whether a * b is a stack of large outer products, (..., m, 1) * (..., 1, n), as in
    per-sample weight gradients: NumPy's broadcast loop over the size-1 axes runs them
    about 3x slower than a matmul does."""
    return (
        a.ndim == b.ndim
        and a.shape[-1] == 1 == b.shape[-2]
        and a.shape[:-2] == b.shape[:-2]
        and a.dtype == b.dtype
        and a.dtype.char in "fd"
        and a.shape[-2] * b.shape[-1] >= 4096
    )


mul = binary(
    "mul", _mul,
    (lambda g, b: g * b, lambda g, a: g * a),
    lambda ta, tb, a, b: ta * b + a * tb,
)  # fmt: skip


def _neg(xp, input):
    if input.dtype.kind == "b":
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return -input


neg = _u(
    "neg", _neg, lambda g: -g, LINEAR, floating=False, dtypes=("float32", "float64", "int64"),
    error_samples=lambda make: [
        ErrorInput(S((make((3,), dtype=np.bool_),)), RuntimeError, "on a bool tensor is not supported")
    ],
)  # fmt: skip
method(neg, "negative")
inplace(neg, "negative_")

# ------------------------------------------------------------------ signs and magnitudes
_INT = ("float32", "float64", "int64")
_INT_BOOL = ("float32", "float64", "int64", "bool")


def _abs(xp, input):
    if input.dtype.kind == "b":
        _not_implemented("abs_cpu", input)
    return xp.abs(input)


def _sign(xp, input):
    if input.dtype.kind == "b":
        return input.copy()
    r = xp.sign(input)
    return xp.nan_to_num(r, nan=0.0) if r.dtype.kind == "f" else r


def _relu(xp, input):
    if input.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    return xp.maximum(input, 0)


def _square(xp, input):
    if input.dtype.kind == "b":
        input = input.astype(xp.int64)
    return input * input


abs = _u(
    "abs", _abs, lambda g, input: g * input.sign(), lambda t, input: t * input.sign(), floating=False,
    dtypes=_INT, exclude_zero=True, error_samples=lambda make: [_err(make, "abs_cpu")],
    test={"no_gradgrad": True},  # torch's second derivative is a ZeroTensor the harness can't read
)  # fmt: skip
method(abs, "absolute")
inplace(abs, "absolute_")
sign = _u(
    "sign", _sign, _zeros, lambda t: _zeros(t), floating=False, dtypes=_INT_BOOL,
    exclude_zero=True,
)  # fmt: skip
sgn = _u(
    "sgn", _sign, _zeros, lambda t: _zeros(t), floating=False, dtypes=_INT_BOOL,
    exclude_zero=True, oracle="sign",  # torch's sgn backward is a ZeroTensor the harness can't read
)  # fmt: skip
relu = _u(
    "relu", _relu, lambda g, result: g * (result > 0), lambda t, result: t * (result > 0),
    floating=False, dtypes=_INT, exclude_zero=True, out=False,
    error_samples=lambda make: [
        ErrorInput(S((make((3,), dtype=np.bool_),)), RuntimeError, "Boolean inputs not supported for relu")
    ],
)  # fmt: skip
square = _u(
    "square", _square, lambda g, input: g * 2 * input, lambda t, input: t * 2 * input,
    floating=False, dtypes=_INT_BOOL,
)  # fmt: skip


def _err(make, kernel_name, dtype=np.bool_, **kwargs):
    return ErrorInput(
        S((make((3,), dtype=dtype),), kwargs), RuntimeError, f'"{kernel_name}" not implemented'
    )


# ------------------------------------------------------------------ exponentials and logarithms
exp = _u(
    "exp", _ufunc("exp"), lambda g, result: g * result, lambda t, result: t * result,
    dtypes=_INT_BOOL,
)  # fmt: skip
exp2 = _u(
    "exp2", _ufunc("exp2"), lambda g, result: g * result * _LN2,
    lambda t, result: t * result * _LN2, dtypes=_INT_BOOL,
)  # fmt: skip
expm1 = _u(
    "expm1", _ufunc("expm1"), lambda g, result: g * (result + 1),
    lambda t, result: t * (result + 1), dtypes=_INT,
)  # fmt: skip
_LOG = {"dtypes": _INT, "low": 0.1, "high": 3.0}
log = _u(
    "log", _ufunc("log"), lambda g, input: g / input,
    lambda t, input: t / input, **_LOG,
)  # fmt: skip
log2 = _u(
    "log2", _ufunc("log2"), lambda g, input: g / (input * _LN2),
    lambda t, input: t / (input * _LN2), **_LOG,
)  # fmt: skip
log10 = _u(
    "log10", _ufunc("log10"), lambda g, input: g / (input * _LN10),
    lambda t, input: t / (input * _LN10), **_LOG,
)  # fmt: skip
log1p = _u(
    "log1p", _ufunc("log1p"), lambda g, input: g / (input + 1),
    lambda t, input: t / (input + 1), dtypes=_INT, low=-0.9, high=3.0,
)  # fmt: skip
sqrt = _u(
    "sqrt", _ufunc("sqrt"), lambda g, result: g / (result * 2),
    lambda t, result: t / (result * 2), **_LOG,
)  # fmt: skip


def _rsqrt(xp, input):
    return xp.reciprocal(xp.sqrt(input))


def _reciprocal(xp, input):
    return xp.reciprocal(input)


rsqrt = _u(
    "rsqrt", _rsqrt, lambda g, result: g * result * result * result * -0.5,
    lambda t, result: t * result * result * result * -0.5, **_LOG,
)  # fmt: skip
reciprocal = _u(
    "reciprocal", _reciprocal, lambda g, result: -g * result * result,
    lambda t, result: -t * result * result, dtypes=_INT, exclude_zero=True,
)  # fmt: skip

# ------------------------------------------------------------------ trigonometric and hyperbolic
sin = _u(
    "sin",
    _ufunc("sin"),
    lambda g, input: g * input.cos(),
    lambda t, input: t * input.cos(),
    dtypes=_INT,
)
cos = _u(
    "cos",
    _ufunc("cos"),
    lambda g, input: -g * input.sin(),
    lambda t, input: -t * input.sin(),
    dtypes=_INT,
)
tan = _u(
    "tan", _ufunc("tan"), lambda g, result: g * (result * result + 1),
    lambda t, result: t * (result * result + 1), dtypes=_INT, low=-1.2, high=1.2,
)  # fmt: skip
_UNIT = {"dtypes": _INT, "low": -0.9, "high": 0.9}
asin = _u(
    "asin", _ufunc("arcsin"), lambda g, input: g * (1 - input * input).rsqrt(),
    lambda t, input: t * (1 - input * input).rsqrt(), **_UNIT,
)  # fmt: skip
acos = _u(
    "acos", _ufunc("arccos"), lambda g, input: -g * (1 - input * input).rsqrt(),
    lambda t, input: -t * (1 - input * input).rsqrt(), **_UNIT,
)  # fmt: skip
atan = _u(
    "atan", _ufunc("arctan"), lambda g, input: g / (input * input + 1),
    lambda t, input: t / (input * input + 1), dtypes=_INT,
)  # fmt: skip
sinh = _u(
    "sinh",
    _ufunc("sinh"),
    lambda g, input: g * input.cosh(),
    lambda t, input: t * input.cosh(),
    dtypes=_INT,
)
cosh = _u(
    "cosh",
    _ufunc("cosh"),
    lambda g, input: g * input.sinh(),
    lambda t, input: t * input.sinh(),
    dtypes=_INT,
)
tanh = _u(
    "tanh", _ufunc("tanh"), lambda g, result: g * (1 - result * result),
    lambda t, result: t * (1 - result * result), dtypes=_INT,
)  # fmt: skip
asinh = _u(
    "asinh", _ufunc("arcsinh"), lambda g, input: g * (input * input + 1).rsqrt(),
    lambda t, input: t * (input * input + 1).rsqrt(), dtypes=_INT,
)  # fmt: skip
acosh = _u(
    "acosh", _ufunc("arccosh"), lambda g, input: g * (input * input - 1).rsqrt(),
    lambda t, input: t * (input * input - 1).rsqrt(), dtypes=_INT, low=1.1, high=3.0,
)  # fmt: skip
atanh = _u(
    "atanh", _ufunc("arctanh"), lambda g, input: g / (1 - input * input),
    lambda t, input: t / (1 - input * input), **_UNIT,
)  # fmt: skip
for _op, _alias in (
    (asin, "arcsin"),
    (acos, "arccos"),
    (atan, "arctan"),
    (asinh, "arcsinh"),
    (acosh, "arccosh"),
    (atanh, "arctanh"),
):
    method(_op, _alias)
    inplace(_op, _alias + "_")
deg2rad = _u(
    "deg2rad", lambda xp, input: input * _DEG, lambda g: g * _DEG, LINEAR, dtypes=_INT_BOOL
)
rad2deg = _u(
    "rad2deg", lambda xp, input: input * _RAD, lambda g: g * _RAD, LINEAR, dtypes=_INT_BOOL
)


# ------------------------------------------------------------------ sigmoid, logit, error function
def _logit(xp, input, eps=None):
    if eps is not None:
        input = xp.clip(input, eps, 1.0 - eps)
    return xp.log(input / (1 - input))


def _logit_grad(g, input, eps):
    """g / (x (1 - x)), zero where eps clamps the input."""
    grad = g / (input * (1 - input))
    return grad if eps is None else _where((input < eps) | (input > 1 - eps), 0.0, grad)


def _logit_samples(make):
    yield from _samples(0.1, 0.9)(make)
    yield S((make((2, 3), 0.1, 0.9),), {"eps": 1e-6})
    if make.is_float:
        # eps clamps some entries: zero gradient there (kept away from the clamp points).
        yield S((np.array([0.05, 0.15, 0.3, 0.6, 0.85, 0.95], dtype=make.dtype), 0.1))


sigmoid = _u(
    "sigmoid", lambda xp, input: _special(xp).expit(input), lambda g, result: g * result * (1 - result),
    lambda t, result: t * result * (1 - result), dtypes=_INT_BOOL,
)  # fmt: skip
logit = _u(
    "logit", _logit, _logit_grad, lambda t, input, eps: _logit_grad(t, input, eps), dtypes=_INT,
    samples=_logit_samples,
)  # fmt: skip
erf = _u(
    "erf", lambda xp, input: _special(xp).erf(input), lambda g, input: g * (-input * input).exp() * _2_SQRTPI,
    lambda t, input: t * (-input * input).exp() * _2_SQRTPI, dtypes=_INT_BOOL,
)  # fmt: skip
erfc = _u(
    "erfc", lambda xp, input: _special(xp).erfc(input), lambda g, input: g * (-input * input).exp() * -_2_SQRTPI,
    lambda t, input: t * (-input * input).exp() * -_2_SQRTPI, dtypes=_INT_BOOL,
)  # fmt: skip
erfinv = _u(
    "erfinv", lambda xp, input: _special(xp).erfinv(input), lambda g, result: g * (result * result).exp() * _SQRTPI_2,
    lambda t, result: t * (result * result).exp() * _SQRTPI_2, dtypes=_INT, low=-0.9, high=0.9,
)  # fmt: skip


# ------------------------------------------------------------------ rounding
def _rounding(kernel_name: str, fn: str):
    def kernel(xp, input):
        if input.dtype.kind == "b":
            _not_implemented(kernel_name, input)
        return input.copy() if input.dtype.kind in "iu" else getattr(xp, fn)(input)

    kernel.__name__ = fn
    return kernel


def _round(xp, input, *, decimals=0):
    if input.dtype.kind == "b":
        _not_implemented("round_vml_cpu" if decimals == 0 else "round_cpu", input)
    if input.dtype.kind in "iu":
        if decimals != 0:
            _not_implemented("round_cpu", input)
        return input.copy()
    return xp.round(input, decimals)


def _frac(xp, input):
    if input.dtype.kind in "biu":
        _not_implemented("frac_cpu", input)
    return input - xp.trunc(input)


_ROUNDING = {"floating": False, "dtypes": _INT, "samples": _rounding_samples}
floor = _u("floor", _rounding("floor_vml_cpu", "floor"), _zeros, lambda t: _zeros(t), **_ROUNDING)
ceil = _u("ceil", _rounding("ceil_vml_cpu", "ceil"), _zeros, lambda t: _zeros(t), **_ROUNDING)
trunc = _u(
    "trunc", _rounding("trunc_vml_cpu", "trunc"), _zeros, lambda t: _zeros(t), **_ROUNDING,
    error_samples=lambda make: [_err(make, "trunc_vml_cpu")],
)  # fmt: skip
method(trunc, "fix")
inplace(trunc, "fix_")
round = _u(
    "round", _round, _zeros, lambda t: _zeros(t), floating=False, dtypes=_INT, samples=_round_samples,
    error_samples=lambda make: [_err(make, "round_cpu", np.int64, decimals=1), _err(make, "round_vml_cpu")],
)  # fmt: skip
frac = _u(
    "frac", _frac, lambda g: g, lambda t: t, floating=False, samples=_rounding_samples,
    error_samples=lambda make: [_err(make, "frac_cpu", np.int64)],
)  # fmt: skip


# ------------------------------------------------------------------ nan_to_num, angle, conj
def _nan_to_num(xp, input, nan=0.0, posinf=None, neginf=None):
    if input.dtype.kind not in "fc":
        return input.copy()
    return xp.nan_to_num(input, nan=nan, posinf=posinf, neginf=neginf)


def _nan_to_num_samples(make):
    yield S((_with_specials(make, (2, 3)),), {"posinf": 2.0, "neginf": -3.0})
    a = make((2, 3))
    if make.is_float:
        a[0, 1] = a[1, 2] = np.nan
    yield S((a,))
    yield S((_with_specials(make, (6,)), 1.5, 4.0, -4.0))
    yield S((np.asarray(make(())),))
    yield S((make((0, 3)),))


nan_to_num = _u(
    "nan_to_num", _nan_to_num, lambda g, input: g * input.isfinite(), lambda t, input: t * input.isfinite(),
    floating=False, dtypes=_INT_BOOL, samples=_nan_to_num_samples,
)  # fmt: skip


def _angle(xp, input):
    r = xp.where(input < 0, xp.pi, xp.where(input != input, input, 0))
    return r.astype(input.dtype, copy=False)


angle = _u(
    "angle", _angle, _zeros, lambda t: _zeros(t), dtypes=_INT_BOOL, exclude_zero=True,
    has_inplace=False,
)  # fmt: skip
conj_physical = _u(
    "conj_physical",
    lambda xp, input: xp.conj(input) if input.dtype.kind == "c" else input.copy(),
    lambda g: g.conj(),
    LINEAR,
    floating=False,
    dtypes=_INT_BOOL,
)


def conj(input):
    """The complex conjugate: the input itself for real tensors."""
    return conj_physical.fn(input) if input.is_complex() else input


def positive(input):
    """The input itself (``+input``); an error for bool tensors."""
    if input.dtype.name == "bool":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def _identity(self):
    return self


def _false(self) -> bool:
    return False


# ------------------------------------------------------------------ predicates (bool outputs, no gradient)
def _predicate(name: str, kernel, out: bool):
    op = defop(
        name, kernel, prepare=None, samples=_predicate_samples, out=out, test={"dtypes": _INT_BOOL},
        batch_rule=elementwise(),
    )  # fmt: skip
    method(op)
    return op


def _isreal(xp, input):
    return input.imag == 0 if input.dtype.kind == "c" else xp.ones(input.shape, dtype=bool)


signbit = _predicate("signbit", _ufunc("signbit"), True)
isnan = _predicate("isnan", _ufunc("isnan"), False)
isinf = _predicate("isinf", _ufunc("isinf"), False)
isfinite = _predicate("isfinite", _ufunc("isfinite"), False)
isposinf = _predicate("isposinf", _ufunc("isposinf"), True)
isneginf = _predicate("isneginf", _ufunc("isneginf"), True)
isreal = _predicate("isreal", _isreal, False)

# ------------------------------------------------------------------ public aliases
_INPLACE_FUNCTIONS = (
    "abs exp exp2 expm1 log log2 log10 log1p sqrt rsqrt square sin cos tan asin acos atan sinh cosh "
    "tanh asinh acosh atanh arcsin arccos arctan arcsinh arccosh arctanh sigmoid logit relu erf erfc "
    "reciprocal floor ceil round trunc fix frac nan_to_num deg2rad rad2deg neg negative"
).split()


def inplace_functions(names: str) -> tuple:
    """``torch.<name>_(input)`` for each name: the in-place method as a function."""
    return tuple(_inplace_function(n) for n in names.split())


def _inplace_function(name: str):
    def fn(input, *args, **kwargs):
        return getattr(input, name + "_")(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name + "_"
    fn.__doc__ = f"In-place ``{name}``: ``input.{name}_()``."
    return fn


tensor_methods({
    "conj": conj, "positive": positive, "resolve_conj": _identity, "resolve_neg": _identity,
    "is_conj": _false, "is_neg": _false,
})  # fmt: skip

__all__ = [
    "abs", "acos", "acosh", "add", "angle", "asin", "asinh", "atan", "atanh", "ceil", "conj",
    "conj_physical", "cos", "cosh", "deg2rad", "erf", "erfc", "erfinv", "exp", "exp2", "expm1",
    "floor", "frac", "isfinite", "isinf", "isnan", "isneginf", "isposinf", "isreal", "log", "log10",
    "log1p", "log2", "logit", "mul", "nan_to_num", "neg", "positive", "rad2deg", "reciprocal", "relu",
    "round", "rsqrt", "sgn", "sigmoid", "sign", "signbit", "sin", "sinh", "sqrt", "square", "sub",
    "tan", "tanh", "trunc",
]  # fmt: skip
