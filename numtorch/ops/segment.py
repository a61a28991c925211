"""``torch.segment_reduce``: a reduction (sum, mean, max, min, prod) over consecutive
segments of one axis, the segments given by their lengths or their offsets.

A composite: each segment is a slice reduced by the ordinary reductions (so gradients,
forward mode and vmap over ``data`` come from theirs), an empty segment takes the
reduction's identity or ``initial``. As PyTorch's, ``initial`` joins every segment's
reduction, yet a tie between it and an element sends the gradient to the element."""

from __future__ import annotations

import numpy as np

from .._core import dtype as dt
from .._core.op import ErrorInput, composite
from .._core.tensor import Tensor, wrap_dim
from .._opdb.samples import S
from .comparison import where
from .creation import full
from .shape import stack

_REDUCES = {
    "sum": "sum",
    "mean": "mean",
    "max": "max",
    "amax": "max",
    "min": "min",
    "amin": "min",
    "prod": "prod",
}
_EMPTY = {"sum": 0.0, "mean": float("nan"), "max": float("-inf"), "min": float("inf"), "prod": 1.0}


def _segment(seg: Tensor, kind: str, axis: int, initial) -> Tensor:
    """One non-empty segment reduced over ``axis``, with ``initial`` joined in."""
    if kind == "sum":
        out = seg.sum(axis)
        return out if initial is None else out + initial
    if kind == "mean":
        if initial is None:
            return seg.mean(axis)
        return (seg.sum(axis) + initial) / seg.shape[axis]
    if kind == "prod":
        out = seg.prod(axis)
        return out if initial is None else out * initial
    if kind == "max":
        out = seg.amax(axis)
        return out if initial is None else where(out >= initial, out, initial)
    out = seg.amin(axis)
    return out if initial is None else where(out <= initial, out, initial)


def _ints(values) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def _check(data, lengths, offsets, axis) -> Tensor:
    """PyTorch's checks of the segments and dtypes; returns lengths or offsets."""
    bounds = lengths if lengths is not None else offsets
    if bounds is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if axis != bounds.dim() - 1:
        raise RuntimeError(
            f"segment_reduce(): Expected axis to be the last dimension of lengths but got {axis}."
        )
    if not (data.dtype.is_floating_point):
        raise dt.not_implemented("_segment_reduce_cpu", data.dtype)
    if bounds.dtype.is_floating_point or bounds.dtype.is_complex:
        which = "lengths" if lengths is not None else "offsets"
        raise dt.not_implemented(f"_segment_reduce_{which}_cpu_kernel1", bounds.dtype)
    return bounds


def _rows(data, kind, starts, ends, axis, initial) -> Tensor:
    parts = []
    shape = list(data.shape)
    del shape[axis]
    for s, e in zip(starts, ends):
        if e > s:
            parts.append(_segment(data.narrow(axis, s, e - s), kind, axis, initial))
        else:
            fill = _EMPTY[kind] if initial is None else initial
            parts.append(full(shape, fill, dtype=data.dtype, device=data.device))
    return stack(parts, axis)


def _reduce(data, kind, bounds, from_lengths, axis, initial, unsafe) -> Tensor:
    if bounds.dim() > 1:  # one row of segments per leading index
        return stack(
            [
                _reduce(data[i], kind, bounds[i], from_lengths, axis - 1, initial, unsafe)
                for i in range(bounds.shape[0])
            ]
        )
    values = [int(v) for v in bounds.tolist()]
    if from_lengths:
        if any(v < 0 for v in values):
            raise RuntimeError("lengths contains negative value!")
        if not unsafe and sum(values) != data.shape[axis]:
            raise RuntimeError(
                "segment_reduce(): Expected all rows of lengths along axis to sum to "
                "data.size(lengths.dim()-1) when !unsafe."
            )
        ends = [sum(values[: i + 1]) for i in range(len(values))]
        starts = [e - v for e, v in zip(ends, values)]
    else:
        starts, ends = values[:-1], values[1:]
    return _rows(data, kind, starts, ends, axis, initial)


def _segment_samples(make):
    lengths = _ints([2, 0, 4])
    yield S((make((6, 2)), "sum"), {"lengths": lengths})
    yield S((make((6, 2)), "mean"), {"lengths": lengths, "initial": 1.0})
    yield S((make((6, 3)), "max"), {"lengths": _ints([3, 3])})
    yield S((make((6,)), "min"), {"lengths": _ints([1, 5]), "initial": 0.5})
    yield S((make((5, 2)), "prod"), {"offsets": _ints([0, 2, 2, 5])})
    yield S((make((2, 4, 2)), "sum"), {"lengths": _ints([[1, 3], [4, 0]]), "axis": 1})


def _segment_errors(make):
    x = make((6, 2))
    lengths = _ints([2, 0, 4])
    yield ErrorInput(S((x, "sum")), RuntimeError, "Either lengths or offsets must be defined")
    yield ErrorInput(
        S((x, "avg"), {"lengths": lengths}),
        RuntimeError,
        "reduce argument must be either sum, prod, mean, amax or amin, got avg",
    )
    yield ErrorInput(
        S((x, "sum"), {"lengths": _ints([2, 3])}),
        RuntimeError,
        "Expected all rows of lengths along axis to sum",
    )
    yield ErrorInput(
        S((x, "sum"), {"lengths": _ints([-1, 7])}),
        RuntimeError,
        "lengths contains negative value!",
    )
    yield ErrorInput(
        S((x, "sum"), {"lengths": lengths, "axis": 1}),
        RuntimeError,
        "Expected axis to be the last dimension of lengths but got 1",
    )


@composite(samples=_segment_samples, error_samples=_segment_errors, autocast="keep")
def segment_reduce(
    data: Tensor,
    reduce: str,
    *,
    lengths: Tensor | None = None,
    indices: Tensor | None = None,
    offsets: Tensor | None = None,
    axis: int = 0,
    unsafe: bool = False,
    initial=None,
) -> Tensor:
    """Reduce (``"sum"``, ``"mean"``, ``"max"``/``"amax"``, ``"min"``/``"amin"``,
    ``"prod"``) each segment of ``data`` along ``axis``: segments of the given ``lengths``,
    or between consecutive ``offsets``; ``initial`` joins every reduction and fills the
    empty segments (else the reduction's identity, nan for a mean)."""
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    kind = _REDUCES.get(reduce)
    if kind is None:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    axis = wrap_dim(axis, data.dim())
    bounds = _check(data, lengths, offsets, axis)
    return _reduce(data, kind, bounds, lengths is not None, axis, initial, unsafe)
