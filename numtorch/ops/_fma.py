"""Fused multiply-add, ``x * y + z`` rounded once, as the FMA instruction that PyTorch's
compiled CPU kernels contract ``a + b * c`` into (addcmul's ``self + value * t1 * t2``).

NumPy has no FMA. A float32 product is exact in float64, so float32 (and the reduced
floats, which PyTorch computes in float32) adds in float64 and rounds to float32; that
double rounding differs from one rounding only where the float64 sum lies exactly halfway
between two float32 numbers, and there (found by its bits, rarely) the sum's exact error
decides. float64 multiplies and adds apart: an exact emulation costs some twenty array
passes, so a float64 result may differ from PyTorch's by the rounding of the product
(and is infinite where x * y overflows and x * y + z does not). Complex and integer
dtypes multiply and add apart.
"""

from __future__ import annotations

import numpy as np

_LOW = (1 << 29) - 1  # the float64 mantissa bits below float32's
_HALF = 1 << 28  # ... that put a float64 exactly halfway between two float32 numbers


def _round_to_float32(xp, p, w):
    """p + w (float64, p an exact product) rounded once to float32."""
    s = xp.asarray(p + w)
    tie = (s.view(xp.uint64) & _LOW) == _HALF
    if xp is not np:  # (on a device, no branch on the data: no synchronization)
        return _nudged(xp, s, p, w, tie).astype(np.float32)
    if tie.any():
        at = tie  # (a mask: a 0-d sum has no nonzero)
        s = s.copy()
        s[at] = _nudged(xp, s[at], xp.broadcast_to(p, s.shape)[at], xp.broadcast_to(w, s.shape)[at])
    return s.astype(np.float32)


def _nudged(xp, s, p, w, where=True):
    """s = p + w rounded, moved one step toward the exact sum where it was inexact (and
    ``where``): the exact error of the float64 sum decides a halfway s."""
    bb = s - p
    e = (p - (s - bb)) + (w - bb)
    return xp.where(where & (e != 0), xp.nextafter(s, xp.where(e > 0, xp.inf, -xp.inf)), s)


def fma(xp, x, y, z):
    """``x * y + z`` with one rounding (float64: two), in the three operands' result dtype;
    float16 and bfloat16 as float32, rounded back."""
    x, y, z = xp.asarray(x), xp.asarray(y), xp.asarray(z)
    dtype = xp.result_type(x, y, z)
    if dtype.kind != "f":
        return x * y + z
    if dtype == np.float64:
        with np.errstate(all="ignore"):
            out = x * y + z
            odd = ~xp.isfinite(out)
            if xp is not np or odd.any():  # (no branch on a device's data)
                # an infinite z stays where the finite x * y only overflowed
                keep = odd & xp.isinf(z) & xp.isfinite(x) & xp.isfinite(y)
                out = xp.where(keep, z, out)
        return out
    with np.errstate(all="ignore"):
        p = x.astype(np.float64) * y.astype(np.float64)
        return _round_to_float32(xp, p, z.astype(np.float64)).astype(dtype)
