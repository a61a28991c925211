"""Fused multiply-add, ``x * y + z`` rounded once, as the FMA instruction that PyTorch's
compiled CPU kernels contract ``a + b * c`` into (addcmul's ``self + value * t1 * t2``).

NumPy has no FMA. A float32 product is exact in float64, so float32 (and the reduced
floats, which PyTorch computes in float32) adds in float64 rounded to odd, then rounds to
float32: one correct rounding. float64 follows Boldo and Melquiond's emulation (an exact
product by Veltkamp splitting, an exact sum, the low parts added rounded to odd), where its
steps cannot overflow or underflow, and in exact rationals at the rare finite operands
where they could. Complex and integer dtypes multiply and add apart.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

_SPLIT = 134217729.0  # 2**27 + 1: Veltkamp's constant for float64
_BIG = 2.0**995  # beyond this a split or a sum may overflow
_TINY = 2.0**-960  # below this a split or a product's error may not be exact


def _two_sum(xp, a, b):
    """(s, e): s = a + b rounded, e its exact error."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _to_odd(xp, s, e):
    """s, rounded to nearest with exact error e, rounded to odd instead: an inexact s whose
    last bit is even moves one step toward the exact sum."""
    even = (s.view(xp.uint64) & 1) == 0
    step = (e != 0) & even & xp.isfinite(e)
    if not step.any():
        return s
    return xp.where(step, xp.nextafter(s, xp.where(e > 0, xp.inf, -xp.inf)), s)


def _split(x):
    c = _SPLIT * x
    hi = c - (c - x)
    return hi, x - hi


def _fma64(xp, x, y, z):
    p = x * y
    xh, xl = _split(x)
    yh, yl = _split(y)
    pe = ((xh * yh - p) + xh * yl + xl * yh) + xl * yl
    th, tl = _two_sum(xp, z, p)
    fused = th + _to_odd(xp, *_two_sum(xp, tl, pe))
    ax, ay, ap = xp.abs(x), xp.abs(y), xp.abs(p)
    safe = (
        (ax > _TINY)
        & (ax < _BIG)
        & (ay > _TINY)
        & (ay < _BIG)
        & (ap > _TINY)
        & (ap < _BIG)
        & (xp.abs(z) < _BIG)
    )  # (False at inf and nan)
    out = xp.where(safe, fused, p + z)  # (exact where x or y is 0)
    finite = xp.isfinite(x) & xp.isfinite(y)
    out = xp.where(finite & ~xp.isfinite(z), z, out)  # (x * y is finite, if p is not)
    rare = finite & xp.isfinite(z) & ~safe & (x != 0) & (y != 0)
    if rare.any():
        exact = [_exact(*v) for v in zip(x[rare].tolist(), y[rare].tolist(), z[rare].tolist())]
        out[rare] = xp.asarray(exact, dtype=out.dtype)
    return out


def _exact(x: float, y: float, z: float) -> float:
    """x * y + z rounded once, for x and y nonzero (exact rationals: a step of the
    emulation would overflow or underflow)."""
    s = Fraction(x) * Fraction(y) + Fraction(z)
    if s == 0:
        return 0.0  # (an exact sum of a nonzero product rounds to +0)
    try:
        return float(s)  # (correctly rounded, to a signed zero too)
    except OverflowError:
        return math.inf if s > 0 else -math.inf


def fma(xp, x, y, z):
    """``x * y + z`` with one rounding, in the three operands' result dtype; float16 and
    bfloat16 as float32, rounded back."""
    x, y, z = xp.asarray(x), xp.asarray(y), xp.asarray(z)
    dtype = xp.result_type(x, y, z)
    if dtype.kind != "f":
        return x * y + z
    if dtype == np.float64:
        x, y, z = xp.broadcast_arrays(x, y, z)
        with np.errstate(all="ignore"):
            return _fma64(xp, x, y, z)
    wide = [a.astype(np.float64) for a in (x, y, z)]
    with np.errstate(all="ignore"):
        s, e = _two_sum(xp, wide[0] * wide[1], wide[2])
        return _to_odd(xp, s, e).astype(np.float32).astype(dtype)
