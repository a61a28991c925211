"""Special functions: sinc, the gamma family (lgamma, digamma, polygamma, mvlgamma), the
modified Bessel functions of orders 0 and 1 (i0, i0e, i1, i1e), and torch.special's erfcx,
log_ndtr, ndtri, entr, xlog1py and zeta (the Bessel family proper is in ``bessel.py``).

Kernels call scipy.special (cupyx.scipy.special on a GPU); derivatives are the family's own
functions (lgamma' = digamma, digamma' = polygamma(1), i0' = i1, ...), so every order is
differentiable again.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtype as dt
from .._core.layout import contiguous
from .._core.no_kernel import NoKernel
from .._core.op import ELEMENTWISE, ErrorInput
from .._core.policy import InplacePolicy
from .._opdb.samples import S
from ._families import (
    FLOATS_INT,
    Promotion,
    binary,
    binary_samples,
    promote_float,
    silent,
    unary,
    unary_samples,
)
from .bessel import float_errors, tensor_float
from .comparison import where
from .creation import arange
from .setops import _FORWARD_AD
from .unary import _special

_PI = math.pi


# ------------------------------------------------------------------ sinc
def _sinc_grad(g, input):
    """g * (cos(pi x) - sinc(x)) / x; at 0 the factor is -pi^2/3 * x, which is 0 there and
    has sinc's true second derivative (PyTorch's double backward is NaN at 0)."""
    zero = input == 0
    x = where(zero, 1.0, input)
    px = x * _PI
    d = ((px).cos() - px.sin() / px) / x
    return g * where(zero, input * (-_PI * _PI / 3), d).conj()


sinc_p = unary(
    "sinc",
    lambda xp, input: xp.sinc(input),
    _sinc_grad,
    ELEMENTWISE,
    dtypes=FLOATS_INT,
)


# ------------------------------------------------------------------ gamma family
def _sp(fname: str):
    """A kernel calling ``scipy.special.<fname>``, in the input's dtype."""

    @silent
    def kernel(xp, input):
        return getattr(_special(xp), fname)(input).astype(input.dtype, copy=False)

    kernel.__name__ = fname
    return kernel


@silent
def _lgamma(xp, input):
    r = _special(xp).gammaln(input).astype(input.dtype, copy=False)
    return xp.where(input == -xp.inf, xp.inf, r)  # Gamma(-inf) has no sign: PyTorch gives inf


def _check_n(n) -> None:
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")


@silent
def _polygamma(xp, input, n):
    _check_n(n)
    sp = _special(xp)
    if n == 0:
        r = sp.psi(input)
    else:  # CuPy's polygamma takes n as an array only
        r = sp.polygamma(n if xp is np else xp.full(input.shape, n, input.dtype), input)
    return r.astype(input.dtype, copy=False)


_GAMMA = {"dtypes": FLOATS_INT, "low": 0.3, "high": 3.0}
lgamma_p = unary(
    "lgamma",
    _lgamma,
    lambda g, input: g * digamma(input),
    ELEMENTWISE,
    **_GAMMA,
    no_kernel=NoKernel("c", "lgamma_vml_cpu"),
)
digamma_p = unary(
    "digamma",
    _sp("psi"),
    lambda g, input: g * _raw_polygamma(input, 1),
    ELEMENTWISE,
    **_GAMMA,
    no_kernel=NoKernel("c", "digamma"),
)
digamma = digamma_p.fn


def _polygamma_samples(make):
    for n in (0, 1, 2):
        yield S((n, make((2, 3), 0.3, 3.0)))
    yield S((1, make((), 0.3, 3.0)))
    yield S((3, make((0, 3), 0.3, 3.0)))


def _polygamma_errors(make):
    yield ErrorInput(
        S((-1, make((3,)))), RuntimeError, r"polygamma\(n, x\) does not support negative n"
    )


def _polygamma_kernel(arrays, attrs):
    return ("digamma", "trigamma", "polygamma")[min(attrs["n"], 2)]


polygamma_p = unary(
    "polygamma",
    _polygamma,
    lambda g, input, n: g * _raw_polygamma(input, n + 1),
    ELEMENTWISE,
    nin=1,
    dtypes=FLOATS_INT,
    samples=_polygamma_samples,
    error_samples=_polygamma_errors,
    # PyTorch names digamma's and trigamma's kernels for n = 0, 1
    no_kernel=NoKernel("c", _polygamma_kernel),
)
_raw_polygamma = polygamma_p.fn
polygamma_p.api = "polygamma"  # the public function takes (n, input): ``polygamma`` below


def polygamma(n: int, input, *, out=None):
    """The n-th derivative of the digamma function."""
    return _raw_polygamma(input, n, out=out)


def _mvlgamma(xp, input, p):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    half = xp.arange(p, dtype=input.dtype) * 0.5
    terms = _special(xp).gammaln(input[..., None] - half).astype(input.dtype, copy=False)
    return terms.sum(-1) + input.dtype.type(p * (p - 1) / 4 * math.log(math.pi))


def _mvlgamma_grad(g, input, p):
    half = arange(p, dtype=input.dtype, device=input.device) * 0.5
    return g * digamma(input.unsqueeze(-1) - half).sum(-1)


def _mvlgamma_samples(make):
    yield S((make((2, 3), 1.2, 3.0), 1))
    yield S((make((4,), 1.6, 3.0), 3))
    yield S((make((), 1.2, 3.0),), {"p": 2})
    yield S((make((0, 2), 1.2, 3.0), 2))


def _mvlgamma_errors(make):
    yield ErrorInput(
        S((make((3,), 1.0, 2.0), 0)), RuntimeError, "p has to be greater than or equal to 1"
    )


mvlgamma_p = unary(
    "mvlgamma",
    silent(_mvlgamma),
    _mvlgamma_grad,
    ELEMENTWISE,
    nin=1,
    dtypes=FLOATS_INT,
    layout=contiguous,  # not a TensorIterator kernel in PyTorch
    samples=_mvlgamma_samples,
    error_samples=_mvlgamma_errors,
    inplace_policy=InplacePolicy(
        cast_text="mvlgamma: result type {} can't be cast to the desired output type {}"
    ),
    no_kernel=(
        NoKernel("c", "arange_cpu"),
        NoKernel("b", error=(RuntimeError, "The input tensor may not be a boolean tensor.")),
    ),
)


# ------------------------------------------------------------------ modified Bessel functions
def _tiny(x):
    """x where |x| exceeds its dtype's eps, else eps (keeps 1/x finite), and the mask."""
    eps = float(np.finfo(x.dtype.np).eps)
    big = x.abs() > eps
    return where(big, x, eps), big


def _i1_grad(g, input, result):
    """I1' = I0 - I1/x; 0.5 at (near) 0, where the quotient is 0/0."""
    x, big = _tiny(input)
    return g * where(big, i0(x) - result / x, 0.5)


def _i1e_grad(g, input, result):
    """I1e' = I0e - I1e (sgn(x) + 1/x); 0.5 at (near) 0."""
    x, big = _tiny(input)
    return g * where(big, special_i0e(x) - result * (x.sgn() + x.reciprocal()), 0.5)


_BESSEL = {"dtypes": FLOATS_INT, "samples": unary_samples(-3.0, 3.0)}
i0_p = unary(
    "i0",
    _sp("i0"),
    lambda g, input: g * special_i1(input),
    ELEMENTWISE,
    **_BESSEL,
    no_kernel=NoKernel("c", "i0_vml_cpu"),
)
i0 = i0_p.fn
special_i0e_p = unary(
    "special_i0e",
    _sp("i0e"),
    lambda g, input, result: g * (special_i1e(input) - input.sgn() * result),
    ELEMENTWISE,
    api="special.i0e",
    methods=False,
    **_BESSEL,
    no_kernel=NoKernel("c", "i0e_cpu"),
)
special_i0e = special_i0e_p.fn
special_i1_p = unary(
    "special_i1",
    _sp("i1"),
    _i1_grad,
    ELEMENTWISE,
    api="special.i1",
    methods=False,
    **_BESSEL,
    no_kernel=NoKernel("c", "i1_cpu"),
)
special_i1 = special_i1_p.fn
special_i1e_p = unary(
    "special_i1e",
    _sp("i1e"),
    _i1e_grad,
    ELEMENTWISE,
    api="special.i1e",
    methods=False,
    **_BESSEL,
    no_kernel=NoKernel("c", "i1e_cpu"),
)
special_i1e = special_i1e_p.fn


# ------------------------------------------------------------------ erfcx, normal distribution
_SQRT_2PI = math.sqrt(2 * math.pi)


def _special_unary(name: str, kernel, vjp, *, half: bool = False, **kw):
    """``torch.special.<name>``: op ``special_<name>``, no Tensor method, complex refused
    (float16 too unless ``half``: PyTorch has a Half kernel)."""
    op_name = f"special_{name}"
    cpu = f"{name}_cpu"
    return unary(
        op_name,
        kernel,
        vjp,
        ELEMENTWISE,
        api=f"special.{name}",
        methods=False,
        dtypes=FLOATS_INT,
        prepare=tensor_float(None if half else cpu),
        error_samples=None if half else float_errors(cpu),
        no_bfloat16="" if half else cpu,
        no_kernel=NoKernel("c", cpu),
        **kw,
    )


def _erfcx_grad(g, input, result):
    """erfcx' = 2 x erfcx(x) - 2 / sqrt(pi)."""
    return g * (2 * input * result - 2 / math.sqrt(_PI))


def _log_ndtr_grad(g, input, result):
    """The normal density over its cdf, exp(-x^2/2 - log_ndtr(x)) / sqrt(2 pi)."""
    return g * (-(input * input * 0.5 + result)).exp() / _SQRT_2PI


def _ndtri_grad(g, result):
    """1 / density at the quantile: sqrt(2 pi) exp(q^2 / 2)."""
    return g * (result * result * 0.5).exp() * _SQRT_2PI


def _entr_grad(g, input):
    """-(1 + log x): inf at 0 and NaN below, as in PyTorch."""
    return g * -(1 + input.log())


special_erfcx_p = _special_unary(
    "erfcx",
    _sp("erfcx"),
    _erfcx_grad,
    low=-3.0,
    high=3.0,
)
special_log_ndtr_p = _special_unary(
    "log_ndtr",
    _sp("log_ndtr"),
    _log_ndtr_grad,
    low=-5.0,
    high=3.0,
)
special_ndtri_p = _special_unary(
    "ndtri",
    _sp("ndtri"),
    _ndtri_grad,
    low=0.02,
    high=0.98,
)
special_entr_p = _special_unary(
    "entr",
    _sp("entr"),
    _entr_grad,
    half=True,
    low=0.1,
    high=3.0,
)


# ------------------------------------------------------------------ xlog1py, zeta
def _xlog1py(xp, input, other):
    """x log1p(y); 0 where x is 0 and y is not NaN."""
    if not hasattr(other, "dtype"):
        other = xp.asarray(other, dtype=input.dtype)
    out = input * xp.log1p(other)
    return xp.where((input == 0) & ~xp.isnan(other), 0, out)


def _xlog1py_dinput(g, input, other):
    return where((input == 0) & (other <= -1), 0, special_xlog1py(g, other))


def _xlog1py_dother(g, input, other):
    return g * input / (other + 1)


# special_xlog1py (and special_zeta): .Tensor, .self_scalar, .other_scalar
def _scalar_node_name(base: str):
    def node_name(input, other):
        n = 1 if input is None else 2 if other is None else 0
        return f"{base}Backward{n}"

    return node_name


special_xlog1py_p = binary(
    "special_xlog1py",
    _xlog1py,
    (_xlog1py_dinput, _xlog1py_dother),
    ELEMENTWISE,
    api="special.xlog1py",
    methods=False,
    promotion=Promotion.FLOAT,
    dtypes=FLOATS_INT,
    samples=binary_samples(-2, 2, scalars=(2.5,), rscalars=(3.0,), low_b=-0.9, high_b=3),
    ieee=True,
    node_name=_scalar_node_name("SpecialXlog1Py"),
    no_kernel=NoKernel("c", "xlog1py_cpu"),
)
special_xlog1py = special_xlog1py_p.fn


@silent
def _zeta(xp, input, other):
    """Hurwitz zeta(x, q); at q = inf NaN, inf for x = 1, as in PyTorch (scipy gives 0)."""
    if not hasattr(other, "dtype"):
        other = xp.asarray(other, dtype=input.dtype)
    if not hasattr(input, "dtype"):
        input = xp.asarray(input, dtype=other.dtype)
    r = _special(xp).zeta(input, other)
    r = xp.where(other == xp.inf, xp.where(input == 1, xp.inf, xp.nan), r)
    return r.astype(input.dtype, copy=False)


def _zeta_dinput(g):
    raise NotImplementedError("the derivative for 'zeta' is not implemented.")


def _zeta_dother(g, input, other):
    """d/dq zeta(x, q) = -x zeta(x + 1, q)."""
    return g * -input * special_zeta(input + 1, other)


def _zeta_jvp(tinput, tother):
    raise NotImplementedError(_FORWARD_AD.format("special_zeta"))


def _zeta_prepare(arrays, attrs=None):
    """promote_float, then PyTorch's refusal of a float16 result dtype."""
    arrays, odt = promote_float(arrays, attrs)
    d = arrays[0].dtype if odt is None else odt
    if d == np.float16:
        raise dt.not_implemented("zeta_cpu", d)
    return arrays, odt


def _zeta_errors(make):
    yield ErrorInput(
        S((make((3,), dtype=np.float16), make((3,), dtype=np.float16))),
        NotImplementedError,
        "\"zeta_cpu\" not implemented for 'Half'",
    )
    yield ErrorInput(
        S((make((3,), dtype=dt.bfloat16.np), make((3,), dtype=dt.bfloat16.np))),
        NotImplementedError,
        "\"zeta_cpu\" not implemented for 'BFloat16'",
    )


special_zeta_p = binary(
    "special_zeta",
    _zeta,
    (_zeta_dinput, _zeta_dother),
    _zeta_jvp,
    api="special.zeta",
    methods=False,
    promotion=Promotion.FLOAT,
    dtypes=FLOATS_INT,
    samples=binary_samples(1.2, 4, scalars=(2.5,), rscalars=(3.0,), low_b=0.2, high_b=3),
    error_samples=_zeta_errors,
    grad_args=(1,),  # PyTorch has no derivative in input: backward raises
    # and forward mode raises for both inputs, which the generic jvp checks cannot take:
    # tests/test_special.py compares the gradient in other and the errors with PyTorch
    test={"no_grad_test": True},
    node_name=_scalar_node_name("SpecialZeta"),
    prepare=_zeta_prepare,
    no_kernel=NoKernel("c", "zeta_cpu"),
    no_bfloat16="zeta_cpu",
)
special_zeta = special_zeta_p.fn

__all__ = [
    "digamma",
    "digamma_p",
    "i0",
    "i0_p",
    "lgamma_p",
    "mvlgamma_p",
    "polygamma",
    "polygamma_p",
    "sinc_p",
    "special_i0e",
    "special_i0e_p",
    "special_i1",
    "special_i1_p",
    "special_i1e",
    "special_i1e_p",
    "special_entr_p",
    "special_erfcx_p",
    "special_log_ndtr_p",
    "special_ndtri_p",
    "special_xlog1py",
    "special_xlog1py_p",
    "special_zeta",
    "special_zeta_p",
]
