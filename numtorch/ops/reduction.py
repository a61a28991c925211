"""Reductions: sums, means, extrema, norms, scans, sorting."""

from __future__ import annotations

from ._families import LINEAR, method
from .._core.op import defop
from ..testing.samples import S


def dims_of(dim, ndim: int) -> tuple:
    """Normalize a dim argument (None, int, or sequence) to a sorted tuple of axes."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    n = max(ndim, 1)
    out = []
    for d in dim:
        if not -n <= d < n:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})"
            )
        out.append(d % n)
    return tuple(sorted(set(out))) if ndim else ()


def unreduce(g, shape, dim, keepdim: bool):
    """Broadcast a reduced gradient back to `shape` (re-inserting reduced dims)."""
    if not keepdim:
        axes = dims_of(dim, len(shape))
        kept = list(g.shape)
        for ax in axes:
            kept.insert(ax, 1)
        g = g.reshape(kept)
    return g.expand(shape)


def _sum(xp, x, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        x = x.astype(dtype.np)
    elif x.dtype.kind in "biu":
        x = x.astype(xp.int64)
    return x.sum(axis=dims_of(dim, x.ndim), keepdims=keepdim)


def _sum_samples(make):
    yield S((make((2, 3)),))
    yield S((make(()),))
    yield S((make((2, 3, 4)), 1))
    yield S((make((2, 3, 4)), (0, 2)), {"keepdim": True})
    yield S((make((2, 3)), -1))
    yield S((make((0, 3)), 0))


sum = method(
    defop(
        "sum", _sum, nin=1, vjp=lambda g, x, dim, keepdim: unreduce(g, x.shape, dim, keepdim),
        jvp=LINEAR, samples=_sum_samples, test={"dtypes": ("float32", "float64", "int64")},
    )  # fmt: skip
)


def _sum_to_size(xp, x, size):
    size = tuple(size)
    lead = x.ndim - len(size)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(size) if s == 1 and x.shape[i + lead] != 1
    )
    out = x.sum(axis=axes, keepdims=True) if axes else x
    return out.reshape(size) if lead else out


sum_to_size = defop(
    "sum_to_size", _sum_to_size, nin=1, vjp=lambda g, x: g.expand(x.shape), jvp=LINEAR,
    samples=lambda make: [S((make((2, 3, 4)), (3, 1))), S((make((2, 3)), (2, 3)))],
    api="Tensor.sum_to_size",
)  # fmt: skip
method(sum_to_size)
