"""Helpers the indexing ops share: PyTorch's checks of an index's dtype and bounds and of
a source's dtype, row accumulation, batch helpers, and the makers of PyTorch's
``(input, dim, index, ...)`` functions and Tensor methods."""

from __future__ import annotations

import re
from functools import partial

import numpy as np

from ..._core import dtype as dt
from ..._core.device import checked_index, raise_first, xp_of
from ..._core.inplace import run_inplace
from ..._core.meta_array import has_values
from ..._core.tensor import Tensor
from .._add_at import add_at
from ..creation import arange

_INT_KINDS = "iu"


def _tname(a) -> str:
    return dt.of(a).scalar_name


# PyTorch's check of an index's dtype, per op: (the integer kinds accepted, exception type,
# text; ``{}`` is the index's dtype). Most ops take int64 only.
_INDEX_DTYPES = {
    "index_add": (
        "i4",
        RuntimeError,
        "index_add_(): Expected dtype int32/int64 for index but got: {}",
    ),
    "index_fill": ("i8", IndexError, "index_fill_(): Expected dtype int64 for index."),
    "index_copy": (
        "i8",
        RuntimeError,
        "index_copy_(): Expected a long tensor for index, but got {}",
    ),
    "take": ("i8", RuntimeError, "take(): Expected a long tensor for index, but got {}"),
    "put": ("i8", RuntimeError, "put_(): Expected a long tensor for index, but got {}"),
    "gather": ("i4", RuntimeError, "gather(): Expected dtype int32/int64 for index"),
    # every scatter's
    "scatter": ("i4", RuntimeError, "scatter(): Expected dtype int32/int64 for index"),
    "index_select": ("i4", RuntimeError, "index_select(): Expected dtype int32 or int64 for index"),
    "take_along_dim": (
        "i8",
        RuntimeError,
        "torch.take_along_dim(): dtype of indices should be Long but got {}",
    ),
}


def check_index_dtype(index, name: str) -> None:
    """Raise PyTorch's error of op ``name`` unless ``index`` (an array or a tensor) has a
    dtype it takes: int64, or for "i4" ops int32 too (any integer dtype when batched)."""
    d = getattr(index, "dtype", None)
    kinds, exc, msg = _INDEX_DTYPES[name]
    if d is not None and not isinstance(d, np.dtype):
        d = d.np
    if d is None or d.kind not in _INT_KINDS or (kinds == "i8" and d.itemsize < 8):
        raise exc(msg.format(_tname(index) if d is not None else type(index).__name__))


# PyTorch's texts where an op writing a tensor ``source`` into ``self`` needs one dtype.
_SAME_DTYPE = {
    "scatter": "scatter(): Expected self.dtype to be equal to src.dtype",
    "index_add": "index_add_(): self ({self}) and source ({source}) must have the same scalar type",
    "index_copy": "index_copy_(): self and source expected to have the same dtype, but got "
    "(self) {self} and (source) {source}",
    "masked_scatter": "masked_scatter: expected self and source to have same dtypes but got"
    "{self} and {source}",
    "put": "put_(): self and source expected to have the same dtype, but got self.dtype = "
    "{self} and source.dtype = {source}",
}


def _same_dtype(name: str, input, source) -> None:
    """PyTorch's error for a tensor ``source`` of another dtype than ``input``."""
    if hasattr(source, "dtype") and source.dtype != input.dtype:
        raise RuntimeError(
            _SAME_DTYPE[name].format(
                self=dt.of(input).scalar_name, source=dt.of(source).scalar_name
            )
        )


def _bounds(index, size: int, dim: int, *, negative: bool = False, exc=RuntimeError, prefix=""):
    """``index`` with PyTorch's out-of-bounds error for its first bad entry: raised now on the
    CPU, at the next synchronization on a GPU (``checked_index``: the index returned is then
    safe to read with)."""
    if not index.size or not has_values(index):
        return index
    lo = -size if negative else 0
    bad = (index >= size) | (index < lo)
    error = partial(_out_of_bounds, exc, prefix, dim, size)
    if type(index) is np.ndarray or not size:  # (a size-0 dim has no safe entry: read now)
        raise_first(index, bad, error)
        return index
    return checked_index(xp_of(index), index, bad, error)


def _out_of_bounds(exc, prefix: str, dim: int, size: int, v: int) -> Exception:
    return exc(f"{prefix}index {v} is out of bounds for dimension {dim} with size {size}")


def in_range(xp, index, size: int):
    """``index`` with PyTorch's "index out of range in self" check of entries outside
    [0, size): raised now on the CPU, at the next synchronization on a GPU (the index
    returned is then safe to read with)."""
    if not size:  # every entry is out of range: no need to read one
        raise _out_of_range()
    return checked_index(xp, index, (index < 0) | (index >= size), _out_of_range)


def _out_of_range(v: int = 0) -> IndexError:
    return IndexError("index out of range in self")


_SPARSE_DTYPES = frozenset(
    np.dtype(t)
    for t in (
        "int8",
        "uint8",
        "int16",
        "int32",
        "int64",
        "float32",
        "float64",
        "complex64",
        "complex128",
    )
)


def _add_rows(xp, out, index, src) -> None:
    """``out[index[k]] += src[k]`` along axis 0 in place; duplicate indices accumulate. On
    NumPy this is one sparse one-hot (rows x len(index)) product with ``src``."""
    k = index.shape[0]
    if k == 0 or out.size == 0:
        return
    if xp is not np or out.dtype not in _SPARSE_DTYPES:
        add_at(xp, out, index, src)
        return
    import scipy.sparse

    onehot = scipy.sparse.csc_matrix(
        (np.ones(k, out.dtype), index, np.arange(k + 1)), shape=(out.shape[0], k)
    )
    out += (onehot @ src.reshape(k, -1)).reshape(out.shape)


_OOB = re.compile(r"index (-?\d+) is out of bounds for dimension \d+ with size (\d+)")


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _batch_arange(vmap, rank: int, device) -> Tensor:
    """arange(B) shaped (B, 1, ..., 1): the batch as an extra advanced index."""
    return arange(vmap.size, device=device).reshape(vmap.size, *((1,) * rank))


def _full_attrs(op, kw: dict) -> dict:
    """Attributes with the kernel's defaults filled in (formulas read them by name)."""
    return {n: kw.get(n, d) for n, d, _ in op.attrs}


def _dim_api(op):
    """PyTorch's ``(input, dim, index, ...)`` function and in-place method for a dim op."""

    def fn(input: Tensor, dim: int, index: Tensor, *rest, **kw) -> Tensor:
        return op.fn(input, index, *rest, dim=dim, **kw)

    def method_(self: Tensor, dim: int, index: Tensor, *rest, **kw) -> Tensor:
        return run_inplace(op, self, (index, *rest), _full_attrs(op, {"dim": dim, **kw}))

    fn.__name__ = op.name
    fn.__doc__ = f"PyTorch's ``{op.name}(input, dim, index, ...)``."
    method_.__name__ = op.name + "_"
    return fn, method_


def _method(fn):
    """``fn`` as a Tensor method (self its first argument)."""

    def m(self, *args, **kw):
        return fn(self, *args, **kw)

    m.__name__ = fn.__name__
    return m
