"""Activation functions of torch.nn.functional: the elementwise ones, prelu, glu, softmin,
rrelu and gumbel_softmax, with the in-place forms PyTorch has.

Elementwise activations with a kernel of their own are ``unary`` ops (the elementwise
batch rule, the jvp derived from the vjp formula); their attributes (alpha, lambd, beta,
...) are kernel keywords. Those that are a few public ops are composites. The public
functions that take ``inplace=`` are thin wrappers over the op and its in-place write.
"""

from __future__ import annotations

import math
import numbers
import re
import warnings

import numpy as np

from .._core import dtype as dt
from .._core.inplace import run_inplace
from .._core.layout import contiguous
from .._core.no_kernel import CLAMP_COMPLEX, NoKernel
from .._core.op import ELEMENTWISE, ErrorInput, Op, composite
from .._core.tensor import Tensor, wrap_dim
from .._opdb.samples import S
from ..autograd.grad_mode import is_grad_enabled
from ..ops import unary as _unary
from ..ops._families import COMPLEX_TOO, FLOATS_INT, UNARY_SHAPES, unary
from ..ops.comparison import where
from ..ops.creation import zeros_like
from ..ops.random import rand_like
from ..ops.reduction import _softmax, softmax_dim
from ..ops.unary import _special

_SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_K = math.sqrt(2.0 / math.pi)
_TANH_C = 0.044715
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


# ------------------------------------------------------------------ helpers
def _floating(kernel_name: str, check=None):
    """Type checks of a float-only kernel: ``check(attrs, dtype)`` (argument checks PyTorch
    makes first), then integer and bool inputs are an error naming ``kernel_name``."""

    def prepare(arrays, attrs=None):
        a = arrays[0]
        if check is not None:
            check(attrs, a.dtype)
        if a.dtype.kind not in "fc":
            raise dt.not_implemented(kernel_name, a)
        return arrays, None

    return prepare


def _no_bool(kernel_name: str):
    """Bool inputs are an error naming ``kernel_name``; other dtypes compute in their own."""

    def prepare(arrays, attrs=None):
        if arrays[0].dtype.kind == "b":
            raise dt.not_implemented(kernel_name, arrays[0])
        return arrays, None

    return prepare


def _apply(op: Op, input: Tensor, inplace: bool, **attrs) -> Tensor:
    """op(input, **attrs), or its result written into input (PyTorch's ``op_``)."""
    if inplace:
        return run_inplace(op, input, (), attrs)
    return op.fn(input, **attrs)


def _num(x) -> str:
    """A number as PyTorch's C++ messages print it (``-1``, ``0.5``, ``3.40282e+38``)."""
    return f"{float(x):g}"


def _opmath(dtype) -> type:
    """The NumPy scalar type PyTorch's CPU kernels compute a dtype in: float for half and
    bfloat16, the dtype itself otherwise."""
    d = np.dtype(dtype)
    return d.type if d.itemsize >= 4 else np.float32


def _product(dtype, *factors: float) -> float:
    """The product of constants as PyTorch's kernels form it: each rounded to the compute
    type, multiplied there (``selu``'s alpha * scale, gelu's 3 * kappa)."""
    t = _opmath(dtype)
    out = t(1)
    for f in factors:
        out = out * t(f)
    return float(out)


# ------------------------------------------------------------------ samples
def _away(make, shape, kinks, low=-2.0, high=2.0, gap=0.05):
    """Values in [low, high], none within ``gap`` of a kink (where the derivative jumps)."""
    a = make(shape, low, high)
    if not make.is_float:
        return a
    for k in kinks:
        a = np.where(np.abs(a - k) < gap, a + 3 * gap, a).astype(make.dtype)
    return a


def _act_samples(kinks=(0.0,), low=-2.0, high=2.0, options=()):
    """UNARY_SHAPES and a transposed (non-contiguous) input with the defaults, then one
    (2, 3) input per ``options`` entry: (args after input, kwargs, that option's kinks)."""

    def samples(make):
        for s in UNARY_SHAPES:
            yield S((_away(make, s, kinks, low, high),))
        yield S((_away(make, (4, 3), kinks, low, high).T,), name="transposed")
        for args, kwargs, ks in options:
            yield S((_away(make, (2, 3), ks, low, high), *args), kwargs)

    return samples


def _dtype_error(kernel_name: str, dtype=np.int64, *args, shape=(3,), **kwargs):
    def errors(make):
        yield ErrorInput(
            S((make(shape, dtype=dtype), *args), kwargs),
            NotImplementedError,
            re.escape(f'"{kernel_name}" not implemented for'),
        )

    return errors


def _act(name: str, kernel, vjp, *, kernel_name: str, check=None, **kw) -> Op:
    """A float-only elementwise activation at ``nn.functional.<api>`` (default: name)."""
    kw.setdefault("error_samples", _dtype_error(kernel_name))
    kw.setdefault("methods", False)
    return unary(
        name,
        kernel,
        vjp,
        ELEMENTWISE,
        prepare=_floating(kernel_name, check),
        inplace=False,
        out=False,
        api="nn.functional." + kw.pop("api", name),
        **kw,
    )


# ------------------------------------------------------------------ elu, selu, celu
def _elu(xp, input, alpha=1.0, scale=1, input_scale=1):  # (aten's Scalar defaults)
    neg = xp.expm1(xp.minimum(input, 0) * input_scale) * _product(input.dtype, alpha, scale)
    return xp.where(input > 0, input * scale, neg)


def _elu_grad(g, input, alpha, scale, input_scale):
    # PyTorch's order: g * input_scale * (alpha * scale) * exp(x * input_scale)
    coef = _product(input.dtype.np, alpha, scale)
    neg = g * input_scale * coef * (input.clamp(max=0) * input_scale).exp()
    return where(input <= 0, neg, g * scale)


_elu_p = _act(
    "elu",
    _elu,
    _elu_grad,
    kernel_name="elu_cpu",
    samples=_act_samples(options=[((), {"alpha": 0.5}, (0.0,)), ((2.0,), {}, (0.0,))]),
    no_kernel=NoKernel("c", "elu_cpu"),
)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """ELU: x for x > 0, alpha * (exp(x) - 1) otherwise."""
    return _apply(_elu_p, input, inplace, alpha=alpha)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``elu``."""
    return elu(input, alpha, True)


@composite(samples=_act_samples(), error_samples=_dtype_error("elu_cpu"), api="nn.functional.selu")
def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """SELU: scale * elu(x, alpha) with PyTorch's fixed alpha and scale."""
    return _apply(_elu_p, input, inplace, alpha=_SELU_ALPHA, scale=_SELU_SCALE)


def selu_(input: Tensor) -> Tensor:
    """In-place ``selu``."""
    return selu(input, True)


def _celu_errors(make):
    yield from _dtype_error("elu_cpu")(make)
    yield ErrorInput(
        S((make((3,)), 0.0)), RuntimeError, "ZeroDivisionError: alpha cannot be 0 for CELU"
    )


@composite(
    samples=_act_samples(options=[((), {"alpha": 0.5}, (0.0,)), ((2.0,), {}, (0.0,))]),
    error_samples=_celu_errors,
    api="nn.functional.celu",
)
def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """CELU: x for x > 0, alpha * (exp(x / alpha) - 1) otherwise."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _apply(_elu_p, input, inplace, alpha=alpha, input_scale=1.0 / alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``celu``."""
    return celu(input, alpha, True)


# ------------------------------------------------------------------ gelu, silu, mish
def _check_approximate(attrs, dtype):
    if attrs.get("approximate", "none") not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")


def _gelu(xp, input, *, approximate="none"):
    if approximate == "tanh":
        return input * 0.5 * (1 + xp.tanh((input + input * input * input * _TANH_C) * _TANH_K))
    return input * 0.5 * (1 + _special(xp).erf(input * _SQRT1_2))


def _gelu_grad(g, input, approximate):
    """PyTorch's order of operations (and its constants' rounding), so that float32
    gradients agree to the rounding of tanh, erf and exp."""
    if approximate == "tanh":
        square = input * input
        t = ((input + square * input * _TANH_C) * _TANH_K).tanh()
        inner = (square * _product(input.dtype.np, 3, _TANH_C) + 1) * _TANH_K
        return g * ((t + 1) * 0.5 + input * 0.5 * (1 - t * t) * inner)
    cdf = ((input * _SQRT1_2).erf() + 1) * 0.5
    return g * (cdf + input * ((input * input * -0.5).exp() * _INV_SQRT_2PI))


def _gelu_errors(make):
    return [
        *_dtype_error("GeluKernelImpl")(make),
        ErrorInput(
            S((make((3,)),), {"approximate": "erf"}),
            RuntimeError,
            "approximate argument must be either none or tanh.",
        ),
    ]


gelu = _act(
    "gelu",
    _gelu,
    _gelu_grad,
    kernel_name="GeluKernelImpl",
    no_kernel=NoKernel("c", "GeluKernelImpl"),
    check=_check_approximate,
    samples=_act_samples(
        low=-3.0,
        high=3.0,
        options=[
            ((), {"approximate": "tanh"}, ()),
            ((), {"approximate": "none"}, ()),
        ],
    ),
    error_samples=_gelu_errors,
).fn


# silu and mish as PyTorch computes them. Its kernels (forward, and backward with grad mode
# off) take sigmoid as 1 / (1 + exp(-x)) and softplus as log1p(exp(x)); with grad mode on
# (func transforms, create_graph) its backward is written with the sigmoid and softplus ops.
def _silu(xp, input):
    with np.errstate(over="ignore"):
        return input / (1 + xp.exp(-input))


def _logistic(input: Tensor) -> Tensor:
    return 1 / ((-input).exp() + 1)


def _silu_grad(g, input):
    s = input.sigmoid() if is_grad_enabled() else _logistic(input)
    return g * s * (1 + input * (1 - s))


def _mish(xp, input):
    with np.errstate(over="ignore"):
        return input * xp.tanh(xp.log1p(xp.exp(input)))


def _mish_grad(g, input):
    if is_grad_enabled():
        t, s = softplus(input).tanh(), input.sigmoid()
    else:
        t, s = input.exp().log1p().tanh(), _logistic(input)
    return g * (t + input * s * (1 - t * t))


_SMOOTH = _act_samples(kinks=(), low=-4.0, high=4.0)
_silu_p = _act(
    "silu",
    _silu,
    _silu_grad,
    kernel_name="silu_cpu",
    samples=_SMOOTH,
    complex_grad=False,
)
_mish_p = _act(
    "mish",
    _mish,
    _mish_grad,
    kernel_name="mish_cpu",
    samples=_SMOOTH,
    no_kernel=NoKernel("c", "mish_cpu"),
)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """SiLU (swish): x * sigmoid(x)."""
    return _apply(_silu_p, input, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """Mish: x * tanh(softplus(x))."""
    return _apply(_mish_p, input, inplace)


# ------------------------------------------------------------------ hardtanh, relu6, hard*
def _hardtanh(xp, input, min_val=-1.0, max_val=1.0):
    if input.dtype.kind == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if input.dtype.kind in "iu":
        # Integer inputs clamp at the bounds converted to the input's type, as in PyTorch.
        min_val, max_val = int(min_val), int(max_val)
        if input.dtype.kind == "u" and (min_val < 0 or max_val < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    return xp.clip(input, min_val, max_val)


def _hardtanh_errors(make):
    yield ErrorInput(
        S((make((3,), dtype=np.bool_),)), RuntimeError, "Bool inputs not supported for hardtanh"
    )
    yield ErrorInput(
        S((make((3,)), 1.0, -1.0)), ValueError, "min_val cannot be greater than max_val"
    )


_hardtanh_p = unary(
    "hardtanh",
    _hardtanh,
    lambda g, input, min_val, max_val: where((input <= min_val) | (input >= max_val), 0, g),
    ELEMENTWISE,
    prepare=None,
    methods=False,
    inplace=False,
    out=False,
    api="nn.functional.hardtanh",
    dtypes=FLOATS_INT,
    error_samples=_hardtanh_errors,
    samples=_act_samples(
        kinks=(-1.0, 1.0),
        options=[
            ((-0.5, 1.5), {}, (-0.5, 1.5)),
            ((), {"min_val": -1.5, "max_val": 0.5}, (-1.5, 0.5)),
        ],
    ),
    no_kernel=NoKernel("c", error=CLAMP_COMPLEX),
)


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """HardTanh: x clamped to [min_val, max_val]."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _apply(_hardtanh_p, input, inplace, min_val=min_val, max_val=max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place ``hardtanh`` (without the bounds check, as in PyTorch)."""
    return _apply(_hardtanh_p, input, True, min_val=min_val, max_val=max_val)


def _relu6_errors(make):
    return [ErrorInput(S((make((3,), dtype=np.bool_),)), RuntimeError, "Bool inputs not supported")]


@composite(
    samples=_act_samples(kinks=(0.0, 6.0), low=-3.0, high=8.0),
    error_samples=_relu6_errors,
    api="nn.functional.relu6",
    test={"dtypes": FLOATS_INT},
)
def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """ReLU6: x clamped to [0, 6]."""
    return _apply(_hardtanh_p, input, inplace, min_val=0, max_val=6)  # (aten's relu6)


def _hardswish_grad(g, input):
    # PyTorch's ends: 0 from -3 down, g from 3 up
    return where(input <= -3, 0, where(input < 3, g * (input / 3 + 0.5), g))


_HARD = _act_samples(kinks=(-3.0, 3.0), low=-4.0, high=4.0)
_hardsigmoid_p = _act(
    "hardsigmoid",
    lambda xp, input: xp.clip(input + 3, 0, 6) / 6,
    # g times 1/6 rounded to the input's dtype, PyTorch's order: g / 6 rounds differently
    lambda g, input: where((input > -3) & (input < 3), g * (1.0 / 6), 0),
    kernel_name="hardsigmoid_cpu",
    samples=_HARD,
    no_kernel=NoKernel("c", "hardsigmoid_cpu"),
    # torch's float64 backward multiplies by 1/6 rounded to float32 (a 3e-8 relative error):
    # finite differences decide; tests/test_nn_activation.py compares the forward, and the
    # float32 gradient bit for bit, with torch.
    test={"no_oracle": True},
)
_hardswish_p = _act(
    "hardswish",
    lambda xp, input: input * xp.clip(input + 3, 0, 6) / 6,
    _hardswish_grad,
    kernel_name="hardswish_cpu",
    samples=_HARD,
    no_kernel=NoKernel("c", "hardswish_cpu"),
)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """Hardsigmoid: clamp(x / 6 + 1 / 2, 0, 1)."""
    return _apply(_hardsigmoid_p, input, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """Hardswish: x * hardsigmoid(x)."""
    return _apply(_hardswish_p, input, inplace)


# ------------------------------------------------------------------ shrinkage
def _hardshrink(xp, input, lambd=0.5):
    return xp.where((input >= -lambd) & (input <= lambd), 0, input)


def _softshrink(xp, input, lambd=0.5):
    # NaN fails both tests, so it propagates (input + lambd) as in PyTorch
    inside = (input >= -lambd) & (input <= lambd)
    return xp.where(inside, 0, xp.where(input > lambd, input - lambd, input + lambd))


def _shrink_grad(g, input, lambd):
    return where((input >= -lambd) & (input <= lambd), 0, g)


def _check_lambd(attrs, dtype):
    lambd = attrs.get("lambd", 0.5)
    if dtype.kind in "fc" and lambd < 0:
        top = np.finfo(dtype).max
        raise RuntimeError(
            f"lambda must be in range [0, {_num(top)}] for input dtype "
            f"{dt.of(dtype).scalar_name}, but found {_num(lambd)}"
        )


def _shrink_samples(make):
    yield from _act_samples(kinks=(-0.5, 0.5))(make)
    yield S((_away(make, (2, 3), (-1.2, 1.2)), 1.2))
    yield S((_away(make, (2, 3), (0.0,)),), {"lambd": 0.0})


hardshrink = _act(
    "hardshrink",
    _hardshrink,
    _shrink_grad,
    kernel_name="hardshrink_cpu",
    no_kernel=NoKernel("c", "hardshrink_cpu"),
    samples=_shrink_samples,
    methods=("hardshrink",),
).fn


def _softshrink_errors(make):
    return [
        *_dtype_error("softshrink_check")(make),
        ErrorInput(
            S((make((3,)), -0.5)),
            RuntimeError,
            re.escape(
                "lambda must be in range [0, 3.40282e+38] for input dtype Float, but found -0.5"
            ),
        ),
    ]


softshrink = _act(
    "softshrink",
    _softshrink,
    _shrink_grad,
    kernel_name="softshrink_check",
    no_kernel=NoKernel("c", "softshrink_check"),
    check=_check_lambd,
    samples=_shrink_samples,
    error_samples=_softshrink_errors,
).fn


@composite(samples=_act_samples(kinks=()), api="nn.functional.tanhshrink", test=COMPLEX_TOO)
def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    return input - input.tanh()


@composite(samples=_act_samples(), api="nn.functional.softsign", test=COMPLEX_TOO)
def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    return input / (input.abs() + 1)


# ------------------------------------------------------------------ softplus, logsigmoid
# PyTorch's kernels: log1p(exp(beta x)) / beta, and g * z / (z + 1) for z = exp(beta x)
def _softplus(xp, input, beta=1, threshold=20):  # (aten's Scalar defaults)
    z = input * beta
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        soft = xp.log1p(xp.exp(z)) / beta
    return xp.where(z > threshold, input, soft)


def _softplus_grad(g, input, beta, threshold):
    z = (input * beta).exp()
    return where(input * beta > threshold, g, g * z / (z + 1))


softplus = _act(
    "softplus",
    _softplus,
    _softplus_grad,
    kernel_name="softplus_cpu",
    no_kernel=NoKernel("c", "softplus_cpu"),
    samples=_act_samples(
        kinks=(),
        options=[
            ((), {"beta": 2.0, "threshold": 1.0}, (0.5,)),
            ((0.5, 0.5), {}, (1.0,)),
            ((), {"beta": -1.0}, ()),
        ],
    ),
).fn


def _log_sigmoid(xp, input):
    return xp.minimum(input, 0) - xp.log1p(xp.exp(-xp.abs(input)))


def _log_sigmoid_grad(g, input):
    """PyTorch's: with b = exp(-|x|), (1 - b / (1 + b)) g below 0, (b / (1 + b)) g above."""
    b = (-input.abs()).exp()
    q = b / (b + 1)
    return where(input < 0, (1 - q) * g, q * g)


def _logsigmoid_samples(make):
    yield from _act_samples(kinks=())(make)
    yield S((make((6,), -30.0, 30.0),), name="large |x|")


logsigmoid = _act(
    "log_sigmoid",
    _log_sigmoid,
    _log_sigmoid_grad,
    kernel_name="log_sigmoid_cpu",
    no_kernel=NoKernel("c", "log_sigmoid_cpu"),
    api="logsigmoid",
    samples=_logsigmoid_samples,
    layout=contiguous,  # PyTorch's log_sigmoid_forward allocates its result (and buffer)
).fn


# ------------------------------------------------------------------ leaky_relu, threshold
def _leaky_relu(xp, input, negative_slope=0.01):
    return xp.where(input > 0, input, input * negative_slope)


_leaky_relu_p = _act(
    "leaky_relu",
    _leaky_relu,
    lambda g, input, negative_slope: where(input > 0, g, g * negative_slope),
    kernel_name="leaky_relu_cpu",
    samples=_act_samples(options=[((0.2,), {}, (0.0,)), ((), {"negative_slope": -0.5}, (0.0,))]),
    no_kernel=NoKernel("c", "leaky_relu_cpu"),
)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x for x > 0, negative_slope * x otherwise."""
    return _apply(_leaky_relu_p, input, inplace, negative_slope=negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place ``leaky_relu``."""
    return leaky_relu(input, negative_slope, True)


def _threshold_kernel(xp, input, threshold, value):
    if input.dtype.kind in "iu":  # the numbers convert to the input's type, as in PyTorch
        threshold, value = int(threshold), int(value)
    # NaN is not <= threshold: it stays NaN, as in PyTorch
    return xp.where(input <= threshold, xp.asarray(value, dtype=input.dtype), input)


def _threshold_samples(make):
    for s in UNARY_SHAPES:
        yield S((_away(make, s, (0.3,)), 0.3, -1.5))
    yield S((_away(make, (4, 3), (-1.0,)).T, -1.0, 0.0), name="transposed")
    yield S((_away(make, (2, 3), (0.5,)),), {"threshold": 0.5, "value": 2.0})
    yield S(
        (_away(make, (2, 3), (-0.5,)), -0.5, 7.9), name="numbers that truncate for integer inputs"
    )


def _threshold_errors(make):
    yield from _dtype_error("threshold_cpu", np.bool_, 0.5, 1.0)(make)
    for bad in ("a", None):
        kind = type(bad).__name__
        message = f"threshold(): argument 'threshold' (position 2) must be Number, not {kind}"
        yield ErrorInput(S((make((3,)), bad, 1.0)), TypeError, re.escape(message))
    yield ErrorInput(S((make((3,)), 1.0, "b")), TypeError, "argument 'value' \\(position 3\\)")


_threshold_p = unary(
    "threshold",
    _threshold_kernel,
    lambda g, input, threshold: where(input <= threshold, 0, g),
    ELEMENTWISE,
    nin=1,
    prepare=_no_bool("threshold_cpu"),
    methods=False,
    inplace=False,
    out=False,
    api="nn.functional.threshold",
    dtypes=FLOATS_INT,
    samples=_threshold_samples,
    error_samples=_threshold_errors,
    no_kernel=NoKernel("c", "threshold_cpu"),
)


def _number(name: str, arg: str, pos: int, v):
    """A Scalar argument: a Python number, or a 0-d tensor's value."""
    if isinstance(v, Tensor) and v.dim() == 0:
        return v.item()
    if not isinstance(v, numbers.Number):
        kind = "Tensor" if isinstance(v, Tensor) else type(v).__name__
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Number, not {kind}")
    return v


def _threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else value."""
    threshold = _number("threshold", "threshold", 2, threshold)
    value = _number("threshold", "value", 3, value)
    return _apply(_threshold_p, input, inplace, threshold=threshold, value=value)


# Named _threshold as in PyTorch (its argument ``threshold`` shadows the function's name),
# so a missing argument's TypeError names it alike.
threshold = _threshold


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place ``threshold``."""
    threshold = _number("threshold_", "threshold", 2, threshold)
    value = _number("threshold_", "value", 3, value)
    return _apply(_threshold_p, input, True, threshold=threshold, value=value)


# ------------------------------------------------------------------ relu, sigmoid, tanh
_relu = _unary.relu_p.fn


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-x)) (``nn.functional``'s form: no ``out=``)."""
    return _unary.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent (``nn.functional``'s form: no ``out=``)."""
    return _unary.tanh(input)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0)."""
    return input.relu_() if inplace else _relu(input)


def relu_(input: Tensor) -> Tensor:
    """In-place ``relu``."""
    return input.relu_()


# ------------------------------------------------------------------ rrelu
def _check_bounds(lower: float, upper: float) -> None:
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


def _rrelu_errors(make):
    yield ErrorInput(
        S((make((3,)), 0.5, 0.1)),
        RuntimeError,
        "Lower bound should be less than or equal to the upper bound",
    )
    yield from _dtype_error("leaky_relu_cpu")(make)


@composite(
    samples=_act_samples(options=[((0.1, 0.5), {}, (0.0,)), ((), {"training": False}, (0.0,))]),
    error_samples=_rrelu_errors,
    api="nn.functional.rrelu",
    layout=contiguous,
)
def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Randomized leaky ReLU: in training, x < 0 is scaled by a slope drawn uniformly from
    [lower, upper) per element; in evaluation by the mean slope (lower + upper) / 2."""
    _check_bounds(lower, upper)
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    if not input.dtype.is_floating_point:
        raise dt.not_implemented("rrelu_with_noise_out_cpu", input.dtype)
    noise = where(input > 0, 1.0, rand_like(input) * (upper - lower) + lower)
    return input.mul_(noise) if inplace else input * noise


def rrelu_(
    input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False
) -> Tensor:
    """In-place ``rrelu``."""
    return rrelu(input, lower, upper, training, True)


# ------------------------------------------------------------------ prelu
def _prelu_samples(make):
    yield S((_away(make, (2, 3, 4), (0.0,)), make((3,), 0.1, 0.5)))
    yield S((_away(make, (2, 3), (0.0,)), make((1,), 0.1, 0.5)))
    yield S((_away(make, (2, 3), (0.0,)), make((3,), -0.5, 0.5)))
    yield S((_away(make, (4,), (0.0,)), make((1,), 0.1, 0.5)))
    yield S((_away(make, (), (0.0,)), make((1,), 0.1, 0.5)))
    yield S((_away(make, (2, 3, 2, 2), (0.0,)), make((), 0.1, 0.5)), name="0-d weight")
    yield S((make((0, 3, 2)), make((3,))))
    yield S((_away(make, (4, 3), (0.0,)).T, make((4,))), name="transposed")


def _prelu_errors(make):
    x = make((2, 3, 4))
    yield ErrorInput(
        S((x, make((3,), dtype=np.float64))),
        RuntimeError,
        "prelu: Type promoting not supported. Got Float and Double",
    )
    yield ErrorInput(S((make(()), make((2,)))), RuntimeError, "Not allow zero-dim input tensor.")
    yield ErrorInput(
        S((x, make((4,)))),
        RuntimeError,
        "Mismatch of parameter numbers and input channel size. Found parameter numbers = 4 and "
        "channel size = 3.",
    )
    yield ErrorInput(
        S((x, make((3, 1)))),
        RuntimeError,
        re.escape("prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2"),
    )
    i64 = np.int64
    yield ErrorInput(
        S((make((3,), dtype=i64), make((1,), dtype=i64))),
        NotImplementedError,
        "\"prelu_cpu\" not implemented for 'Long'",
    )


@composite(
    samples=_prelu_samples,
    error_samples=_prelu_errors,
    api="nn.functional.prelu",
    methods=True,
    autocast="lower",
)
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """max(0, x) + weight * min(0, x): one weight, or one per channel (dim 1)."""
    if input.dtype != weight.dtype:
        raise RuntimeError(
            "prelu: Type promoting not supported. Got "
            f"{input.dtype.scalar_name} and {weight.dtype.scalar_name}"
        )
    n = weight.numel()
    if n != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() > 1 else 1
        if n != channels:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers "
                f"= {n} and channel size = {channels}."
            )
    if weight.dim() > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}"
        )
    if not input.dtype.is_floating_point:
        raise dt.not_implemented("prelu_cpu", input.dtype)
    w = weight.reshape(()) if n == 1 else weight.reshape(n, *(1,) * (input.dim() - 2))
    return where(input > 0, input, input * w)


# ------------------------------------------------------------------ glu, softmin
def _glu_samples(make):
    yield S((make((2, 4)),))
    yield S((make((2, 4, 3)), 1))
    yield S((make((6,)), 0))
    yield S((make((0, 4)), -1))
    yield S((make((4, 3)).T, 1), name="transposed")
    yield S((make((2, 2)),), {"dim": -2})


def _glu_errors(make):
    yield ErrorInput(
        S((make(()),)),
        RuntimeError,
        "glu does not support scalars because halving size must be even",
    )
    yield ErrorInput(
        S((make((2, 3)), 1)),
        RuntimeError,
        "Halving dimension must be even, but dimension 1 is size 3",
    )
    yield ErrorInput(
        S((make((2, 4)), 2)),
        IndexError,
        re.escape("Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    )
    yield from _dtype_error("glu_cpu", shape=(4,))(make)


@composite(samples=_glu_samples, error_samples=_glu_errors, api="nn.functional.glu")
def glu(input: Tensor, dim: int = -1) -> Tensor:
    """The gated linear unit: a * sigmoid(b), a and b the halves of input along dim."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, input.dim())
    n = input.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    if not input.dtype.is_floating_point:
        raise dt.not_implemented("glu_cpu", input.dtype)
    h = n // 2
    return input.narrow(d, 0, h) * input.narrow(d, h, h).sigmoid()


def _softmin_samples(make):
    yield S((make((2, 3)), 1))
    yield S((make((2, 3, 4)), -1))
    yield S((make((2, 3, 4)),), {"dim": 0})
    yield S((make(()), 0))
    yield S((make((0, 3)), 1))
    yield S((make((3, 4)), 1), {"dtype": dt.float64})


def _softmin_errors(make):
    return [ErrorInput(S((make((2, 3)), 2)), IndexError, "Dimension out of range")]


@composite(
    samples=_softmin_samples,
    api="nn.functional.softmin",
    error_samples=_softmin_errors,
)
def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """softmax(-input) along dim."""
    if dim is None:
        dim = softmax_dim(input.dim(), "softmin", _stacklevel)
    return _softmax(-input, dim, dtype=dtype)


# ------------------------------------------------------------------ gumbel_softmax
def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """A sample of the Gumbel-softmax distribution: softmax((logits + g) / tau) with g
    standard Gumbel noise; ``hard``: the one-hot of its argmax, with the soft sample's
    gradient (straight-through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    if not logits.dtype.is_floating_point:
        raise RuntimeError(
            "Exponential distribution is a continuous probability distribution. dtype must be "
            f"a floating point but you specified {logits.dtype.scalar_name}"
        )
    # Exp(1) from U[0, 1), kept off 0 (a draw of u = 0 would make the sample NaN).
    tiny = float(np.finfo(logits.dtype.np).tiny)
    exponential = (-rand_like(logits)).log1p().neg().clamp(min=tiny)
    y = _softmax((logits - exponential.log()) / tau, dim)
    if not hard:
        return y
    one_hot = zeros_like(logits).scatter(dim, y.argmax(dim, keepdim=True), 1.0)
    return one_hot - y.detach() + y


__all__ = [
    "celu",
    "celu_",
    "elu",
    "elu_",
    "gelu",
    "glu",
    "gumbel_softmax",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hardtanh_",
    "leaky_relu",
    "leaky_relu_",
    "logsigmoid",
    "mish",
    "prelu",
    "relu",
    "relu6",
    "relu_",
    "rrelu",
    "rrelu_",
    "selu",
    "selu_",
    "sigmoid",
    "silu",
    "softmin",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
    "threshold_",
]
