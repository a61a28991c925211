"""Sample matrices for the op database: well-conditioned, symmetric positive-definite,
singular and not positive-definite batches, and the error sample of a non-square input."""

from __future__ import annotations

import numpy as np

from ..._opdb.samples import ErrorInput as E
from ..._opdb.samples import S


def _wc(make, shape, shift=None):
    """A well-conditioned (diagonally dominant) batch of square matrices."""
    n = shape[-1]
    a = make(shape, -1.0, 1.0)
    return (a + (n + 1.0 if shift is None else shift) * np.eye(n)).astype(make.dtype)


def _spd(make, shape):
    """A symmetric (Hermitian) positive-definite batch with well separated eigenvalues."""
    n = shape[-1]
    b = make(shape, -1.0, 1.0)
    spread = np.diag(np.arange(1.0, n + 1) * 2.0)
    return (b @ np.swapaxes(b, -1, -2).conj() * 0.3 + spread + np.eye(n)).astype(make.dtype)


def _sq_errors(name):
    return lambda make: [
        E(
            S((make((3, 2)),)),
            RuntimeError,
            f"{name}: A must be batches of square matrices, but they are 3 by 2 matrices",
        )
    ]


def _singular(make, shape):
    """Well-conditioned matrices, the last one singular (a zero column)."""
    a = _wc(make, shape)
    a[..., -1, :, 0] = 0
    return a


def _not_pd(make, shape):
    """SPD matrices, the last one with a negative second pivot."""
    a = _spd(make, shape)
    a[..., -1, 1, 1] = -1.0
    return a


def _well_conditioned(make, shape):
    """Square matrices (or a tall one) with a dominant diagonal: far from singular."""
    a = make(shape, -1, 1)
    n = min(shape[-2:])
    a[..., range(n), range(n)] += 3
    return a
