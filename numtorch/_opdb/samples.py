"""Sample-input makers for op definitions: seeded NumPy arrays, no torch."""

from __future__ import annotations

import numpy as np

from .._core import dtype as dt
from .._core.op import ErrorInput, SampleInput

__all__ = ["ErrorInput", "Maker", "SampleInput", "S"]

S = SampleInput


class Maker:
    """Makes arrays of one dtype from a seeded generator: ``make(shape, low, high)``."""

    def __init__(self, dtype, seed: int = 0):
        self.dtype = np.dtype(dtype)
        self.rng = np.random.default_rng(seed)

    @property
    def is_float(self) -> bool:
        return self.dtype.kind in "fc" or self.dtype in dt.REDUCED_NP

    def __call__(
        self, shape=(), low: float = -2.0, high: float = 2.0, *, dtype=None, exclude_zero=False
    ):
        d = np.dtype(dtype) if dtype is not None else self.dtype
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if d.kind == "b":
            return np.asarray(self.rng.random(shape) < 0.5)
        if d.kind in "iu":
            lo, hi = int(np.floor(low)), int(np.ceil(high))
            if d.kind == "u":
                lo = max(lo, 0)
            a = self.rng.integers(lo, max(hi, lo + 1), size=shape, endpoint=True)
            if exclude_zero:
                a[a == 0] = 1
            return a.astype(d)
        a = self.rng.uniform(low, high, size=shape)
        if d.kind == "c":
            a = np.asarray(a + 1j * self.rng.uniform(low, high, size=shape))
        if exclude_zero:
            a[np.abs(a) < 0.1] = 0.5
        return a.astype(d)

    def index(self, shape, high: int):
        """An int64 index array with values in [0, high)."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        return self.rng.integers(0, max(high, 1), size=shape).astype(np.int64)

    def perm(self, n: int):
        return self.rng.permutation(n).astype(np.int64)
