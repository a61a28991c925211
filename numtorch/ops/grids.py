"""Grids and index arithmetic: ``meshgrid``, ``tril_indices``/``triu_indices``
and ``unravel_index``.

``meshgrid`` and ``unravel_index`` are composites of views and elementwise ops,
so they differentiate and batch through those; the index factories make integer tensors.
"""

from __future__ import annotations

import itertools
import numbers
import operator
import warnings

import numpy as np

from .._core import dtype as dt
from .._core.interpreter import factory
from .._core.op import VARIADIC, ErrorInput, composite
from .._core.tensor import Tensor
from .._opdb.samples import S
from ._families import COMPLEX_TOO
from .creation import _finish, tensor
from .shape import _check_tensor_list

# ------------------------------------------------------------------ meshgrid
_MESHGRID_INDEXING = (
    "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument."
)


def _meshgrid_samples(make):
    yield S((make((2,)), make((3,))), {"indexing": "ij"})
    yield S((make((2,)), make((3,)), make((4,))), {"indexing": "xy"})
    yield S((make(()), make((3,))), {"indexing": "xy"})
    yield S(([make((2,)), make((0,))],), {"indexing": "ij"})
    yield S((make((3,)),), {"indexing": "xy"})


def _meshgrid_errors(make):
    a = make((2,))
    yield ErrorInput(S((), {"indexing": "ij"}), RuntimeError, "meshgrid expects a non-empty")
    yield ErrorInput(
        S((a, a.astype(np.float16)), {"indexing": "ij"}),
        RuntimeError,
        "meshgrid expects all tensors to have the same dtype",
    )
    yield ErrorInput(
        S((a, a), {"indexing": "yx"}),
        RuntimeError,
        'torch.meshgrid: indexing must be one of "xy" or "ij", but received: yx',
    )
    yield ErrorInput(
        S((make((2, 2)), a), {"indexing": "ij"}),
        RuntimeError,
        "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: ",
    )


@composite(
    samples=_meshgrid_samples,
    error_samples=_meshgrid_errors,
    nout=VARIADIC,
    test=COMPLEX_TOO,
)
def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 0-d or 1-d tensors: each expanded along the others' dims
    ("ij"), or ("xy") the grid of the first two swapped, its first two results swapped back."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    _check_tensor_list(list(tensors), "meshgrid")
    if indexing is None:
        warnings.warn(_MESHGRID_INDEXING, UserWarning, stacklevel=2)
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors[1:]:
        if t.dtype != tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != tensors[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    if indexing not in ("xy", "ij"):
        raise RuntimeError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(
                f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}"
            )
    swap = indexing == "xy" and len(tensors) >= 2
    grid = list(tensors)
    if swap:
        grid[0], grid[1] = grid[1], grid[0]
    shape = [t.numel() for t in grid]
    out = []
    for i, t in enumerate(grid):
        view = [1] * len(grid)
        view[i] = -1
        out.append(t.reshape(view).expand(shape))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


# ------------------------------------------------------------------ tril_indices, triu_indices
def _index_factory(name: str, lower: bool):
    def fn(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
        for arg, v in (("row", row), ("col", col), ("offset", offset)):
            if not isinstance(v, numbers.Integral):
                pos = ("row", "col", "offset").index(arg) + 1
                raise TypeError(
                    f"{name}(): argument '{arg}' (position {pos}) must be int, not "
                    f"{type(v).__name__}"
                )
        d = dt.int64 if dtype is None else dt.to_dtype(dtype)
        if d not in (dt.int32, dt.int64):
            raise dt.not_implemented(name, d)
        if row < 0:
            raise RuntimeError(f"row must be non-negative, got{row}")
        if col < 0:
            raise RuntimeError(f"col must be non-negative, got{col}")
        r, c = np.indices((int(row), int(col))).reshape(2, -1)
        keep = (c - r <= offset) if lower else (c - r >= offset)
        return _finish(np.stack([r[keep], c[keep]]).astype(d.np), False, device)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"The indices (2 x N) of the {'lower' if lower else 'upper'} triangle of a row x col "
        "matrix, on and beyond diagonal ``offset``, in row-major order."
    )
    return factory(fn)


tril_indices = _index_factory("tril_indices", True)
triu_indices = _index_factory("triu_indices", False)


# ------------------------------------------------------------------ unravel_index
def _unravel_samples(make):
    yield S((make.index((5,), 24), (2, 3, 4)))
    yield S((make.index((2, 3), 40), (2, 3, 4)), name="wraps")
    yield S((make.index((), 6), 6))
    yield S((make.index((3,), 6), (6,)))


def _unravel_errors(make):
    yield ErrorInput(S((make((2,)), (2, 3))), TypeError, "expected 'indices' to be integer dtype")
    yield ErrorInput(
        S((make.index((2,), 6), (2, -3))), ValueError, "'shape' cannot have negative values"
    )


def _check_shape(shape) -> tuple:
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (shape,)
    if isinstance(shape, Tensor) or not isinstance(shape, (list, tuple)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    for s in shape:
        if not isinstance(s, numbers.Integral) or isinstance(s, bool):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(s)}")
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    return tuple(int(s) for s in shape)


@composite(
    samples=_unravel_samples,
    error_samples=_unravel_errors,
    differentiable=False,
    nout=VARIADIC,
)
def unravel_index(indices, shape):
    """The coordinates in ``shape`` of flat (row-major) indices, wrapped modulo the
    sizes as PyTorch's are: a tuple of int64 tensors shaped like ``indices``."""
    if not isinstance(indices, Tensor):
        raise AttributeError(f"'{type(indices).__name__}' object has no attribute 'is_complex'")
    if indices.is_complex() or indices.is_floating_point() or indices.dtype == dt.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = _check_shape(shape)
    if not shape:
        return ()
    coefs = list(reversed(list(itertools.accumulate(reversed(shape[1:] + (1,)), operator.mul))))
    c = tensor(coefs, dtype=dt.int64, device=indices.device)
    s = tensor(shape, dtype=dt.int64, device=indices.device)
    flat = indices.unsqueeze(-1).floor_divide(c) % s
    return tuple(flat.unbind(-1))


__all__ = ["meshgrid", "tril_indices", "triu_indices", "unravel_index"]
