"""Sliding windows as strided views: the gather that convolutions and pools share."""

from __future__ import annotations

import numpy as np

from .._core import dtype as dt


def sliding(xp, x, kernel, stride, dilation, out, *, kernel_first: bool = False):
    """A read-only view of the windows over x's trailing ``len(kernel)`` dims, of shape
    (..., *out, *kernel) or, ``kernel_first``, (..., *kernel, *out); the element at window
    position o, kernel offset k is x[..., o * stride + k * dilation]."""
    nd = len(kernel)
    st = x.strides[-nd:]
    at = (tuple(out), tuple(a * b for a, b in zip(st, stride)))
    by = (tuple(kernel), tuple(a * b for a, b in zip(st, dilation)))
    first, second = (by, at) if kernel_first else (at, by)
    shape = x.shape[:-nd] + first[0] + second[0]
    strides = x.strides[:-nd] + first[1] + second[1]
    if xp is not np:  # CuPy's as_strided has no writeable flag
        return dt.as_strided(xp, x, shape, strides)
    return dt.as_strided(xp, x, shape, strides, writeable=False)
