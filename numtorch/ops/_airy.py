"""Ai(x) computed with array operations alone, for a GPU (cupyx.scipy.special has no
``airy``): the Taylor series about the nearest node of a table of Ai and Ai' on [-8, 8],
and beyond it the asymptotic series."""

from __future__ import annotations

import functools
import math

import numpy as np
import scipy.special

_STEP = 0.25  # the table's spacing: |x - node| <= 1/8
_EDGE = 8.0  # the table covers [-_EDGE, _EDGE]; past it the asymptotic series is exact to
# double precision (its terms fall below 1e-16 of the first before they grow again)
_TAYLOR_TERMS = 24
_ASYMPTOTIC_TERMS = 16


@functools.cache
def _table() -> tuple[np.ndarray, np.ndarray]:
    """Ai and Ai' at the nodes -_EDGE + k * _STEP (constants, computed once on the host)."""
    nodes = -_EDGE + _STEP * np.arange(int(2 * _EDGE / _STEP) + 1)
    ai, aip, _, _ = scipy.special.airy(nodes)
    return ai, aip


_on_device: dict = {}  # (array module, GPU index) -> the table there


def _device_table(xp, like) -> tuple:
    """``_table()`` on the GPU of the array ``like``, copied there once."""
    key = (xp, like.device.id)
    table = _on_device.get(key)
    if table is None:
        with like.device:
            table = _on_device[key] = tuple(xp.asarray(a) for a in _table())
    return table


@functools.cache
def _asymptotic_coefficients() -> tuple[float, ...]:
    """u_k of Ai's asymptotic series: u_0 = 1, u_k = u_{k-1} (6k-5)(6k-3)(6k-1) / (216 k (2k-1))."""
    u = [1.0]
    for k in range(1, _ASYMPTOTIC_TERMS):
        u.append(u[-1] * (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / (216 * k * (2 * k - 1)))
    return tuple(u)


def airy_ai(xp, x):
    """Ai(x) of a float64 array: NaN where x is not finite, as PyTorch's."""
    inner = xp.abs(x) <= _EDGE
    near = _taylor(xp, xp.where(inner, x, 0.0))
    far = _asymptotic(xp, xp.where(inner | ~xp.isfinite(x), 2 * _EDGE, x))
    r = xp.where(inner, near, far)
    return xp.where(xp.isfinite(x), r, math.nan)


def _taylor(xp, x):
    """Ai(x) for |x| <= _EDGE: y'' = x y expanded about the nearest node x0, whose Taylor
    coefficients follow a_{k+2} = (x0 a_k + a_{k-1}) / ((k+2)(k+1))."""
    ai, aip = _device_table(xp, x)
    k = xp.rint((x + _EDGE) / _STEP).astype(np.int64)
    x0 = k * _STEP - _EDGE
    h = x - x0
    prev, a0, a1 = xp.zeros_like(x), ai[k], aip[k]
    total, power = a0 + a1 * h, h
    for j in range(_TAYLOR_TERMS):
        a2 = (x0 * a0 + prev) / ((j + 2) * (j + 1))
        power = power * h
        total = total + a2 * power
        prev, a0, a1 = a0, a1, a2
    return total


def _asymptotic(xp, x):
    """Ai(x) for |x| > _EDGE: e^-z / (2 sqrt(pi) x^(1/4)) sum_k (-1)^k u_k / z^k for x > 0,
    z = 2/3 x^(3/2); for x = -s < 0 the oscillating form
    (sin(z + pi/4) P - cos(z + pi/4) Q) / (sqrt(pi) s^(1/4)), P and Q the series' even and
    odd terms with alternating signs."""
    s = xp.abs(x)
    z = 2.0 * s * xp.sqrt(s) / 3.0
    terms = [u / z**k for k, u in enumerate(_asymptotic_coefficients())]
    quarter = xp.sqrt(xp.sqrt(s))
    alternating = sum(terms[0::2]) - sum(terms[1::2])  # sum (-1)^k u_k / z^k
    positive = xp.exp(-z) * alternating / (2.0 * math.sqrt(math.pi) * quarter)
    signed = [t if k % 4 < 2 else -t for k, t in enumerate(terms)]  # (-1)^(k//2)
    even, odd = sum(signed[0::2]), sum(signed[1::2])
    theta = z + math.pi / 4
    negative = (xp.sin(theta) * even - xp.cos(theta) * odd) / (math.sqrt(math.pi) * quarter)
    return xp.where(x > 0, positive, negative)
