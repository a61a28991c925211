"""Special functions: sinc, the gamma family (lgamma, digamma, polygamma, mvlgamma) and the
modified Bessel functions of orders 0 and 1 (i0, i0e, i1, i1e).

Kernels call scipy.special (cupyx.scipy.special on a GPU); derivatives are the family's own
functions (lgamma' = digamma, digamma' = polygamma(1), i0' = i1, ...), so every order is
differentiable again.
"""

from __future__ import annotations

import math

import numpy as np

from .._core.layout import contiguous
from .._core.no_kernel import NoKernel
from .._core.op import ELEMENTWISE, ErrorInput
from .._core.policy import InplacePolicy
from ..testing.samples import S
from ._families import FLOATS_INT, silent, unary, unary_samples
from .comparison import where
from .creation import arange
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
    return g * where(zero, input * (-_PI * _PI / 3), d)


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
]
