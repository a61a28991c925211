"""torch.special's Bessel family and Airy function: bessel_j0/j1, bessel_y0/y1,
modified_bessel_i0/i1/k0/k1, scaled_modified_bessel_k0/k1, spherical_bessel_j0, airy_ai.

Kernels call scipy.special (cupyx.scipy.special on a GPU), in the input's dtype; integer and
bool inputs compute in the default float dtype. As in PyTorch, none of them has a derivative:
the result never requires grad (``backward()`` through it raises PyTorch's "does not require
grad" error, ``func.grad`` gives zeros), and float16 and complex inputs are refused with the
error naming PyTorch's CPU kernel (``"bessel_j0_cpu" not implemented for 'Half'``).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable

import numpy as np

from .._core import dtype as dt
from .._core.no_kernel import NoKernel
from .._core.op import ErrorInput, Op
from .._opdb.samples import S
from ._airy import airy_ai
from ._families import FLOATS_INT, silent, to_float, unary, unary_samples
from .unary import _special


def tensor_float(kernel: str | None) -> Callable:
    """``prepare`` of a unary op of torch.special: float16 is PyTorch's NotImplementedError
    for ``kernel`` (None: PyTorch has a Half kernel), integer and bool inputs compute in the
    default float dtype. (A Python number is refused before, as for every one-operand op.)"""

    def prepare(arrays, attrs=None):
        a = arrays[0]
        if kernel is not None and a.dtype == np.float16:
            raise dt.not_implemented(kernel, a)
        return to_float(arrays, attrs)

    return prepare


def float_errors(kernel: str) -> Callable:
    """Error samples: float16, bfloat16 and complex inputs, refused with ``kernel`` named."""

    def errors(make):
        for d, name in (
            (np.float16, "Half"),
            (dt.bfloat16.np, "BFloat16"),
            (np.complex128, "ComplexDouble"),
        ):
            yield ErrorInput(
                S((make((3,), dtype=d),)),
                NotImplementedError,
                f"\"{kernel}\" not implemented for '{name}'",
            )

    return errors


def _sp(fname: str, arg: str = "input") -> Callable:
    """A kernel calling ``scipy.special.<fname>``, in the input's dtype; its input parameter
    is named ``arg``, PyTorch's name."""

    @silent
    def kernel(xp, input):
        return getattr(_special(xp), fname)(input).astype(input.dtype, copy=False)

    kernel.__name__ = fname
    kernel.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in ("xp", arg)]
    )
    return kernel


# PyTorch names the input of spherical_bessel_j0, airy_ai and the scaled K ``x``.
@silent
def _spherical_j0(xp, x):
    """sin(x) / x: 1 at 0, and 0 at +-inf (sin's bound over an infinite x)."""
    zero = x == 0
    r = xp.sin(x) / xp.where(zero, 1, x)
    r = xp.where(zero, 1, r)
    return xp.where(xp.isinf(x), 0, r).astype(x.dtype, copy=False)


_SQRT_PI = math.sqrt(math.pi)


@silent
def _airy_ai(xp, x):
    """Ai(x). Where scipy gives up (NaN) at a finite argument: 0 for a large positive x (Ai
    underflows there); for a large negative x, the oscillating asymptotic form
    Ai(-z) ~ (sin(w + pi/4) - cos(w + pi/4) * 5 / (72 w)) / (sqrt(pi) z^(1/4)),
    w = 2/3 z^(3/2), whose further terms are below double precision for such z. On a GPU:
    ``_airy.airy_ai``."""
    dtype = x.dtype
    x = x.astype(np.float64, copy=False)
    special = _special(xp)
    if not hasattr(special, "airy"):  # (cupyx.scipy.special has none)
        return airy_ai(xp, x).astype(dtype, copy=False)
    r = special.airy(x)[0]
    lost = xp.isnan(r) & xp.isfinite(x)
    if lost.any():
        z = xp.where(lost & (x < 0), -x, 1.0)
        s = xp.sqrt(z)
        w = 2.0 * z * s / 3.0
        theta = w + math.pi / 4
        asym = (xp.sin(theta) - xp.cos(theta) * (5.0 / 72.0) / w) / (_SQRT_PI * xp.sqrt(s))
        r = xp.where(lost, xp.where(x > 0, 0.0, asym), r)
    return r.astype(dtype, copy=False)


def _bessel(name: str, kernel: Callable, low: float, high: float) -> Op:
    """``torch.special.<name>``: op ``special_<name>``, no derivative, no Tensor method."""
    op_name = f"special_{name}"
    cpu = f"{name}_cpu"
    return unary(
        op_name,
        kernel,
        api=f"special.{name}",
        methods=False,
        dtypes=FLOATS_INT,
        samples=unary_samples(low, high),
        prepare=tensor_float(cpu),
        error_samples=float_errors(cpu),
        no_kernel=NoKernel("c", cpu),
        no_bfloat16=cpu,
    )


# J and I are defined on the whole line, Y and K on x > 0 (NaN below, -inf/inf at 0). The
# samples stay where PyTorch's float64 approximations are good to 1e-9: its J0, J1, Y0, Y1
# for 5 < |x| < 10 and its Ai for -5 < x < -2.09 are off by up to 1e-6 (scipy's agree with
# the true values there; tests/test_special.py checks ours against reference values).
special_bessel_j0_p = _bessel(
    "bessel_j0",
    _sp("j0"),
    -5.0,
    5.0,
)
special_bessel_j1_p = _bessel(
    "bessel_j1",
    _sp("j1"),
    -5.0,
    5.0,
)
special_bessel_y0_p = _bessel(
    "bessel_y0",
    _sp("y0"),
    0.1,
    5.0,
)
special_bessel_y1_p = _bessel(
    "bessel_y1",
    _sp("y1"),
    0.1,
    5.0,
)
special_modified_bessel_i0_p = _bessel(
    "modified_bessel_i0",
    _sp("i0"),
    -4.0,
    4.0,
)
special_modified_bessel_i1_p = _bessel(
    "modified_bessel_i1",
    _sp("i1"),
    -4.0,
    4.0,
)
special_modified_bessel_k0_p = _bessel(
    "modified_bessel_k0",
    _sp("k0"),
    0.1,
    4.0,
)
special_modified_bessel_k1_p = _bessel(
    "modified_bessel_k1",
    _sp("k1"),
    0.1,
    4.0,
)
special_scaled_modified_bessel_k0_p = _bessel(
    "scaled_modified_bessel_k0",
    _sp("k0e", "x"),
    0.1,
    4.0,
)
special_scaled_modified_bessel_k1_p = _bessel(
    "scaled_modified_bessel_k1",
    _sp("k1e", "x"),
    0.1,
    4.0,
)
special_spherical_bessel_j0_p = _bessel(
    "spherical_bessel_j0",
    _spherical_j0,
    -5.0,
    5.0,
)
special_airy_ai_p = _bessel(
    "airy_ai",
    _airy_ai,
    -2.0,
    3.0,
)

__all__ = [
    "float_errors",
    "special_airy_ai_p",
    "special_bessel_j0_p",
    "special_bessel_j1_p",
    "special_bessel_y0_p",
    "special_bessel_y1_p",
    "special_modified_bessel_i0_p",
    "special_modified_bessel_i1_p",
    "special_modified_bessel_k0_p",
    "special_modified_bessel_k1_p",
    "special_scaled_modified_bessel_k0_p",
    "special_scaled_modified_bessel_k1_p",
    "special_spherical_bessel_j0_p",
    "tensor_float",
]
