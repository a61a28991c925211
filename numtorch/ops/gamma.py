"""The regularized incomplete gamma functions (``igamma``, ``igammac`` and torch.special's
``gammainc``, ``gammaincc``) and the normal distribution's cdf ``special.ndtr``.

Kernels call scipy.special (cupyx.scipy.special on a GPU) and then give PyTorch's values
where its kernel takes a special path before the series (NaN against 0 or inf). PyTorch
differentiates igamma and igammac in ``other`` only: backward in ``input`` and forward mode
raise its errors.
"""

from __future__ import annotations

import math

import numpy as np

from .._core.no_kernel import NoKernel
from .._core.op import ErrorInput, composite
from .._core.out import write_out
from .._core.tensor import Tensor
from .._opdb.samples import S
from ._families import FLOATS, binary, binary_samples, silent
from .setops import _FORWARD_AD
from .unary import _special, erf_p

# ------------------------------------------------------------------ igamma, igammac


def _incomplete_gamma(upper: bool):
    """P(a, x) (Q(a, x) if ``upper``), with PyTorch's values where its kernel returns before
    the series: x = 0 gives P = 0, x = inf gives P = 1, a = inf with a NaN x gives P = 0,
    whatever NaN the other operand is."""

    @silent
    def kernel(xp, input, other):
        sp = _special(xp)
        r = (sp.gammaincc if upper else sp.gammainc)(input, other).astype(input.dtype, copy=False)
        nan_a = xp.isnan(input)
        zero = (nan_a & (other == 0)) | ((input == xp.inf) & xp.isnan(other))
        one = nan_a & (other == xp.inf)
        low, high = (1, 0) if upper else (0, 1)
        return xp.where(zero, low, xp.where(one, high, r)).astype(input.dtype, copy=False)

    kernel.__name__ = "igammac" if upper else "igamma"
    return kernel


def _igamma_dinput(g):
    raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")


def _igammac_dinput(g):
    raise NotImplementedError("the derivative for 'igammac: input' is not implemented.")


def _density(g, input, other):
    """g times the gamma density x^(a-1) e^(-x) / Gamma(a), PyTorch's
    exp((a - 1) log x - x - lgamma(a))."""
    return g * ((input - 1) * other.log() - other - input.lgamma()).exp()


def _igammac_dother(g, input, other):
    return -_density(g, input, other)


def _no_forward(aten: str):
    def jvp(tinput, tother):
        raise NotImplementedError(_FORWARD_AD.format(aten))

    jvp.__name__ = f"_{aten}_jvp"
    return jvp


def _igamma_samples(make):
    yield from binary_samples(0.3, 4.0, scalars=(), low_b=0.1, high_b=5.0)(make)
    yield S((make((2, 3), 0.3, 4.0), make((1, 3), 0.0, 0.0)), name="x = 0")


def _igamma_errors(name: str, aten: str):
    def errors(make):
        ints = make((3,), 1, 4, dtype=np.int64)
        yield ErrorInput(S((ints, ints)), NotImplementedError, f'"{aten}_cpu" not implemented')
        yield ErrorInput(
            S((make((3,), 1.0, 2.0), 2.0)),
            TypeError,
            rf"{name}\(\): argument 'other' \(position 2\) must be Tensor, not float",
        )

    return errors


def _igamma_op(name: str, upper: bool, *, special: bool):
    """``igamma``/``igammac`` (a Tensor method and its in-place form), or torch.special's
    ``gammainc``/``gammaincc`` (``special``), which record PyTorch's Igamma(c) node."""
    aten = "igammac" if upper else "igamma"
    return binary(
        name,
        _incomplete_gamma(upper),
        (_igammac_dinput if upper else _igamma_dinput, _igammac_dother if upper else _density),
        _no_forward(aten),
        api=f"special.{name[8:]}" if special else name,
        methods=not special,
        numbers="none",
        dtypes=FLOATS,
        samples=_igamma_samples,
        error_samples=_igamma_errors(name, aten),
        grad_args=(1,),  # PyTorch has no derivative in input: backward raises
        # and forward mode raises for both inputs, which the generic jvp checks cannot take:
        # tests/test_special.py compares the gradient in other and the errors with PyTorch
        test={"no_grad_test": True},
        node_name=f"{aten.capitalize()}Backward0",
        no_kernel=NoKernel("bic", f"{aten}_cpu"),
    )


igamma_p = _igamma_op("igamma", False, special=False)
igammac_p = _igamma_op("igammac", True, special=False)
special_gammainc_p = _igamma_op("special_gammainc", False, special=True)
special_gammaincc_p = _igamma_op("special_gammaincc", True, special=True)
igamma = igamma_p.fn
igammac = igammac_p.fn


# ------------------------------------------------------------------ ndtr
def _ndtr_samples(make):
    for s in ((), (5,), (2, 3), (0, 3)):
        yield S((make(s, -4.0, 4.0),))


def _ndtr_errors(make):
    yield ErrorInput(
        S((2.0,)), TypeError, r"special_ndtr\(\): argument 'input' \(position 1\) must be Tensor"
    )


@composite(
    name="special_ndtr",
    api="special.ndtr",
    samples=_ndtr_samples,
    error_samples=_ndtr_errors,
    test={"dtypes": (*FLOATS, "int64")},
    no_kernel=NoKernel("c", "erf_vml_cpu"),
)
def ndtr(input, *, out=None):
    """The standard normal cdf, PyTorch's (1 + erf(x / sqrt 2)) / 2."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"special_ndtr(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
    res = (1 + erf_p.fn(input * math.sqrt(0.5))) * 0.5
    return res if out is None else write_out(out, res)


__all__ = [
    "igamma",
    "igamma_p",
    "igammac",
    "igammac_p",
    "ndtr",
    "special_gammainc_p",
    "special_gammaincc_p",
]
