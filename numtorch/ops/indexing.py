"""Indexing: __getitem__/__setitem__, gather/scatter, index_*, masked ops, take, put, one_hot."""

from __future__ import annotations

import math
import re
from contextlib import contextmanager

import numpy as np

from .._core import dtype as dt
from .._core.dispatch import _VMAP_READ, broadcast_mismatch, dispatch, values_hidden
from .._core.inplace import check_inplace, check_operands, run_inplace
from .._core.layout import column_major, contiguous, preserve, relayout
from .._core.op import LINEAR, ErrorInput, defop, tensor_methods
from .._core.state import state
from .._core.tensor import Tensor, wrap_dim
from ..testing.samples import S
from ._batching import (
    front,
    is_vmapped,
    lrank,
    lshape,
    materialize,
    pad_to,
    pdim,
    rule_generator,
    vmap_sizes,
)
from ._families import FLOATS_INT_BOOL
from .comparison import where
from .creation import arange, tensor, zeros, zeros_like
from .views import _expand_size

_INT_KINDS = "iu"


def _tname(a) -> str:
    return dt.of(a).scalar_name


# ------------------------------------------------------------------ index checks
# PyTorch's check of an index's dtype, per op: (the integer kinds accepted, exception type,
# text; ``{}`` is the index's dtype). Most ops take int64 only.
_INDEX_DTYPES = {
    "index_add": ("i4", RuntimeError, "index_add_(): Expected dtype int32/int64 for index but got: {}"),
    "index_fill": ("i8", IndexError, "index_fill_(): Expected dtype int64 for index."),
    "index_copy": ("i8", RuntimeError, "index_copy_(): Expected a long tensor for index, but got {}"),
    "take": ("i8", RuntimeError, "take(): Expected a long tensor for index, but got {}"),
    "put": ("i8", RuntimeError, "put_(): Expected a long tensor for index, but got {}"),
    "gather": ("i4", RuntimeError, "gather(): Expected dtype int32/int64 for index"),
    "scatter": ("i4", RuntimeError, "scatter(): Expected dtype int32/int64 for index"),  # every scatter's
    "index_select": ("i4", RuntimeError, "index_select(): Expected dtype int32 or int64 for index"),
    "take_along_dim": (
        "i8", RuntimeError, "torch.take_along_dim(): dtype of indices should be Long but got {}"
    ),
}  # fmt: skip


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


def _bounds(
    index, size: int, dim: int, *, negative: bool = False, exc=RuntimeError, prefix=""
) -> None:
    """Raise PyTorch's out-of-bounds error for the first bad entry of ``index``."""
    if not index.size:
        return
    lo = -size if negative else 0
    bad = (index >= size) | (index < lo)
    if bad.any():
        v = int(index.reshape(-1)[bad.reshape(-1).argmax()])
        raise exc(f"{prefix}index {v} is out of bounds for dimension {dim} with size {size}")


def _scatter_key(xp, index, dim: int) -> tuple:
    """The full advanced index addressing ``out[..., index[i], ...]`` along ``dim``."""
    nd = index.ndim
    grids = [
        xp.arange(n).reshape((1,) * k + (n,) + (1,) * (nd - k - 1))
        for k, n in enumerate(index.shape)
    ]
    grids[dim] = index
    return tuple(grids)


# ------------------------------------------------------------------ accumulation
# ufunc.at is fast on one flat index into a 1-d array (NumPy's indexed loops) and slow on
# tuples of index arrays or on whole rows; these two reduce accumulations to fast cases.
def _flat_at(xp, ufunc: str, out, key: tuple, vals) -> None:
    """``ufunc.at(out, key, vals)`` in place: ``key`` holds one index array per dim of
    ``out`` (broadcasting together to ``vals``' shape); duplicates accumulate."""
    at = getattr(xp, ufunc).at
    if not out.flags.c_contiguous:
        if xp is not np:
            flat = xp.ascontiguousarray(out)
            _flat_at(xp, ufunc, flat, key, vals)
            out[...] = flat
            return
        at(out, key, vals)
        return
    lin = 0
    for k, stride in zip(key, out.strides):
        lin = lin + k.astype(xp.intp, copy=False) * (stride // out.itemsize)
    if hasattr(vals, "shape") and vals.ndim:
        lin = xp.broadcast_to(lin, vals.shape)
        vals = vals.reshape(-1)
    if xp is not np and ufunc != "add":
        _gpu_at(xp, ufunc, out.reshape(-1), lin.reshape(-1), vals)
        return
    at(out.reshape(-1), lin.reshape(-1), vals)


def _gpu_at(xp, ufunc: str, out, lin, vals) -> None:
    """``ufunc.at`` where CuPy has none (multiply) or a different one: the k-th occurrence
    of every index at once, for k up to the largest count of one index (no duplicates
    within a step, so a plain fancy-index update is exact)."""
    f = getattr(xp, ufunc)
    vals = xp.broadcast_to(xp.asarray(vals, out.dtype), lin.shape)
    order = xp.argsort(lin, kind="stable")
    s = lin[order]
    first = xp.searchsorted(s, s, side="left")
    rank = xp.arange(s.size) - first
    for k in range(int(rank.max()) + 1 if s.size else 0):
        pick = order[rank == k]
        idx = lin[pick]
        out[idx] = f(out[idx], vals[pick])


_SPARSE_DTYPES = frozenset(
    np.dtype(t) for t in ("int8", "uint8", "int16", "int32", "int64", "float32", "float64",
                          "complex64", "complex128")
)  # fmt: skip


def _add_rows(xp, out, index, src) -> None:
    """``out[index[k]] += src[k]`` along axis 0 in place; duplicate indices accumulate. On
    NumPy this is one sparse one-hot (rows x len(index)) product with ``src``."""
    k = index.shape[0]
    if k == 0 or out.size == 0:
        return
    if xp is not np or out.dtype not in _SPARSE_DTYPES:
        xp.add.at(out, index, src)
        return
    import scipy.sparse

    onehot = scipy.sparse.csc_matrix(
        (np.ones(k, out.dtype), index, np.arange(k + 1)), shape=(out.shape[0], k)
    )
    out += (onehot @ src.reshape(k, -1)).reshape(out.shape)


def _region(a, shape) -> object:
    """The leading ``shape`` block of ``a`` (a source larger than its index)."""
    if not hasattr(a, "shape") or tuple(a.shape) == tuple(shape):
        return a
    return a[tuple(slice(0, s) for s in shape)]


def _check_dims(name: str, input, index, src=None, dim=0) -> None:
    if index.ndim != max(input.ndim, 0) and not (index.ndim <= 1 and input.ndim <= 1):
        raise RuntimeError(
            "Index tensor must have the same number of dimensions as input tensor"
            if name == "gather" else
            "Index tensor must have the same number of dimensions as self tensor"
        )  # fmt: skip
    src_shape = src.shape if getattr(src, "ndim", 0) else None
    for d in range(index.ndim):
        big_self = d != dim and input.ndim and index.shape[d] > input.shape[d]
        if name == "gather":
            if big_self:
                raise RuntimeError(
                    f"Size does not match at dimension {d} expected index {list(index.shape)} "
                    f"to be no larger than self {list(input.shape)} apart from dimension {dim}"
                )
        elif big_self or (src_shape is not None and index.shape[d] > src_shape[d]):
            # PyTorch's scatter_shape_check: one text for either operand being too small
            msg = (
                f"Expected index {list(index.shape)} to be no larger than self "
                f"{list(input.shape)} apart from dimension {dim}"
            )
            if src_shape is not None:
                msg += f" and to be no larger size than src {list(src_shape)}"
            raise RuntimeError(msg)


def _as1d(fn):
    """Run a dim-kernel on 0-d operands as if they were 1-d of one element."""

    def kernel(xp, input, index, *rest, dim, **kw):
        if input.ndim == 0:
            wrap_dim(dim, 0)
            rest = tuple(r.reshape(-1) if getattr(r, "ndim", 1) == 0 else r for r in rest)
            out = fn(xp, input.reshape(1), index.reshape(-1), *rest, dim=0, **kw)
            return out.reshape(index.shape if fn.__name__ == "_gather" else ())
        return fn(xp, input, index, *rest, dim=wrap_dim(dim, input.ndim), **kw)

    return kernel


def _grad_region(gsub, shape):
    """Zero-pad a gradient for the leading block of a larger source back to ``shape``."""
    if tuple(gsub.shape) == tuple(shape):
        return gsub
    return getitem_backward.fn(gsub, tuple(shape), tuple(slice(0, s) for s in gsub.shape))


# ------------------------------------------------------------------ vmap helpers
_MASK_DYNAMIC = (
    "vmap: We do not support batching operators that can support dynamic shape. Attempting to "
    "batch over indexing with a boolean mask."
)
_OOB = re.compile(r"index (-?\d+) is out of bounds for dimension \d+ with size (\d+)")


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _batch_arange(vmap, rank: int, device) -> Tensor:
    """arange(B) shaped (B, 1, ..., 1): the batch as an extra advanced index."""
    return arange(vmap.size, device=device).reshape(vmap.size, *((1,) * rank))


@contextmanager
def _flat_oob(empty: str):
    """Report a flat-index bounds error (take/put) with PyTorch's text (``empty`` where
    the input has no elements)."""
    try:
        yield
    except IndexError as e:
        if str(e) == "index is out of bounds for dimension with size 0":
            raise IndexError(empty) from None
        m = _OOB.fullmatch(str(e))
        if m is None:
            raise
        raise IndexError(
            f"out of range: tried to access index {m[1]} on a tensor of {m[2]} elements."
        ) from None


def _check_index_dtype(index, msg: str) -> None:
    """Raise ``msg`` (with ``{}`` for the dtype's name) unless index has an integer dtype."""
    if isinstance(index, Tensor) and index.dtype.np.kind not in _INT_KINDS:
        raise RuntimeError(msg.format(index.dtype.scalar_name))


# ------------------------------------------------------------------ basic indexing (views)
def _getitem(xp, x, index, shape=()):
    if not any(i is Ellipsis for i in index):
        index = (*index, Ellipsis)  # keeps integer-only keys views (0-d arrays, not scalars)
    out = x[index]
    return _unsqueeze_strides(xp, x, index, out) if None in index else out


def _unsqueeze_strides(xp, x, index, out):
    """PyTorch indexes left to right, a None being unsqueeze: the new dim's stride is
    size * stride of the input dim after it (one element at the end), where NumPy's is 0.
    A size-1 dim's stride moves nothing, but PyTorch's layout rules read it."""
    strides = list(out.strides)
    ell = x.ndim - sum(1 for i in index if i is not None and i is not Ellipsis)
    src = pos = 0
    for i in index:
        if i is None:
            strides[pos] = x.shape[src] * x.strides[src] if src < x.ndim else x.itemsize
            pos += 1
        elif i is Ellipsis:
            src, pos = src + ell, pos + ell
        else:
            src, pos = src + 1, pos + (not isinstance(i, int))
    return xp.lib.stride_tricks.as_strided(out, out.shape, strides)


def _getitem_backward(xp, grad, shape, index):
    out = xp.zeros(shape, grad.dtype)
    out[index] = grad
    return out


def _batch_key(index) -> tuple:
    """A basic index for a batch-first value: a full slice for the batch dim first."""
    return (slice(None), *(index if isinstance(index, tuple) else (index,)))


def _getitem_rule(vmap, args, bdims, attrs):
    x = front(args[0], bdims[0])
    return getitem.fn(x, _batch_key(attrs["index"]), tuple(x.shape)), 0


def _getitem_backward_rule(vmap, args, bdims, attrs):
    g = front(args[0], bdims[0])
    return getitem_backward.fn(g, (vmap.size, *attrs["shape"]), _batch_key(attrs["index"])), 0


getitem_backward = defop(
    "getitem_backward", _getitem_backward, nin=1,
    vjp=lambda g, index, shape: getitem.fn(g, index, shape), jvp=LINEAR,
    api="ops.indexing.getitem_backward.fn", test={"no_oracle": True}, batch_rule=_getitem_backward_rule,
    samples=lambda make: [S((make((2,)), (3, 4), (slice(0, 2), 1))), S((make((3, 1, 2)), (3, 4), (slice(None), None, slice(1, 4, 2))))],
)  # fmt: skip


def _basic_samples(make):
    x = make((3, 4))
    yield S((x, 1))
    yield S((x, (slice(None), 2)))
    yield S((x, (slice(0, 3, 2), slice(1, None))))
    yield S((x, (None, Ellipsis, None)))
    yield S((x, (Ellipsis, 1)))
    yield S((x, (slice(1, 1),)))
    yield S((make((2, 3, 4)), (1, None, slice(None, None, 3), -1)))
    yield S((make(5), slice(-3, None)))


def _basic_errors(make):
    x = make((3, 4))
    yield ErrorInput(S((x, 5)), IndexError, "index 5 is out of bounds for dimension 0 with size 3")
    yield ErrorInput(S((x, slice(None, None, -1))), ValueError, "step must be greater than zero")
    yield ErrorInput(S((x, (0, 0, 0))), IndexError, "too many indices for tensor of dimension 2")


def _whole(s: slice, size: int) -> bool:
    """Whether a slice is one PyTorch's indexing skips: it starts at 0 (as given) and keeps
    the whole dim."""
    return s.start in (None, 0) and s.step in (None, 1) and (s.stop is None or s.stop >= size)


def _basic_node_name(index, shape) -> str:
    """PyTorch indexes one component at a time, skipping slices that keep a whole dim, so
    the node is that of the last component that does something: an int selects, None
    unsqueezes, a slice slices (a lone ``x[:]`` too); the empty index is an alias."""
    if not index:
        return "AliasBackward0"
    name, d = "SliceBackward0", 0
    for i in index if isinstance(index, tuple) else (index,):
        if i is None:
            name = "UnsqueezeBackward0"
            continue
        if isinstance(i, int):
            name = "SelectBackward0"
        elif not _whole(i, shape[d]):
            name = "SliceBackward0"
        d += 1
    return name


getitem = defop(
    "getitem", _getitem, nin=1,
    vjp=lambda g, index, shape: getitem_backward.fn(g, shape, index), jvp=LINEAR,
    view=True, api="Tensor.__getitem__", samples=_basic_samples, error_samples=_basic_errors,
    node_name=lambda index, shape: _basic_node_name(index, shape), batch_rule=_getitem_rule,
)  # fmt: skip


# ------------------------------------------------------------------ advanced indexing
def _adv_key(xp, input, indices, dims, values_shape=None) -> tuple:
    """The NumPy key for tensors ``indices`` placed at input dims ``dims``, checked as
    PyTorch's advanced indexing checks it (_check_adv_key)."""
    key: list = []
    for t, d in zip(indices, dims, strict=True):
        while len(key) < d:
            key.append(slice(None))
        if not hasattr(t, "dtype"):
            t = xp.asarray(t)
        if t.dtype.kind == "b":
            k = t.ndim
            _check_mask_shape(tuple(t.shape), tuple(input.shape), d)
            key.append(t)
            for _ in range(k - 1):
                key.append(_CONSUMED)
        elif t.dtype.kind in _INT_KINDS:
            if d >= input.ndim:
                raise IndexError(f"too many indices for tensor of dimension {input.ndim}")
            key.append(t)
        else:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    key = tuple(k for k in key if k is not _CONSUMED)
    return _check_adv_key(xp, input.shape, key, values_shape)


def _check_adv_key(xp, shape: tuple, key: tuple, values_shape=None) -> tuple:
    """PyTorch's checks of advanced indices, in its order: the index tensors (a k-dim mask
    counts as k of them) broadcast; no index addresses a size-0 dim; index_put's values
    fit the result; then, where the result has elements, the first bad entry (element by
    element over the broadcast shape, then index by index) names its position among the
    index tensors. Returns the key (bad entries zeroed where the result is empty)."""
    if values_shape is None:
        adv = [k for k in key if not isinstance(k, slice)]
        if len(adv) == 1 and adv[0].dtype.kind == "b":
            return key  # a lone mask always fits
    shapes, sizes, ints, free, where = [], [], [], [], []
    d = 0
    for j, k in enumerate(key):
        if isinstance(k, slice):
            free.append((len(shapes), shape[d]))
            d += 1
            continue
        where.append(j)
        if k.dtype.kind == "b":
            n = int(xp.count_nonzero(k))
            shapes.extend([(n,)] * max(k.ndim, 1))  # a 0-d mask adds a dim
            sizes.extend(shape[d : d + k.ndim])
            d += k.ndim
        else:
            ints.append((len(shapes), j, shape[d]))
            shapes.append(tuple(k.shape))
            sizes.append(shape[d])
            d += 1
    free.extend((len(shapes), s) for s in shape[d:])
    try:
        bshape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            + ", ".join(str(list(s)) for s in shapes)
        ) from None
    n = _numel(bshape)
    if n and 0 in sizes:
        raise IndexError("index is out of bounds for dimension with size 0")
    if values_shape is not None:
        # NumPy's layout: the broadcast dims where the first index is when they are adjacent
        at = len([p for p, _ in free if p == 0]) if where[-1] - where[0] == len(where) - 1 else 0
        fs = [s for _, s in free]
        rshape = (*fs[:at], *bshape, *fs[at:])
        if not _expandable(tuple(values_shape), rshape):
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {list(values_shape)} cannot be broadcast "
                f"to indexing result of shape {list(rshape)}"
            )
    bad = [(p, j, (key[j] >= size) | (key[j] < -size)) for p, j, size in ints]
    if not any(b.any() for _, _, b in bad):
        return key
    if not n or 0 in (s for _, s in free):  # the result is empty: PyTorch visits no entry
        key = list(key)
        for _, j, b in bad:
            key[j] = xp.where(b, 0, key[j])
        return tuple(key)
    first = None
    for p, j, b in bad:
        if b.any():
            at = int(xp.broadcast_to(b, bshape).reshape(-1).argmax())
            if first is None or at < first[0]:
                first = (at, p, int(xp.broadcast_to(key[j], bshape).reshape(-1)[at]))
    _, p, v = first
    raise IndexError(f"index {v} is out of bounds for dimension {p} with size {sizes[p]}")


def _expandable(got: tuple, want: tuple) -> bool:
    """Whether a shape broadcasts to ``want`` (leading size-1 dims may be dropped)."""
    if len(got) > len(want):
        if any(s != 1 for s in got[: len(got) - len(want)]):
            return False
        got = got[len(got) - len(want) :]
    return all(g in (1, w) for g, w in zip(got, want[len(want) - len(got) :]))


_CONSUMED = object()


def _check_mask_shape(got: tuple, shape: tuple, d: int) -> None:
    """A boolean mask at dim d must match the dims it covers."""
    want = shape[d : d + len(got)]
    if got != want:
        j = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), 0)
        raise IndexError(
            f"The shape of the mask {list(got)} at index {j} does not match the shape of "
            f"the indexed tensor {list(shape)} at index {d + j}"
        )


def _is_mask(t) -> bool:
    return t.dtype.name == "bool"


def _adv_layout(indices, bdims, dims) -> tuple[int, int, bool]:
    """(rank of the broadcast index shape, input dims consumed, whether the index tensors
    are adjacent) for logical index tensors; NumPy puts the broadcast dims where the
    first one is when they are adjacent, and first otherwise."""
    rank = consumed = 0
    adjacent, end = True, None
    for t, b, d in zip(indices, bdims, dims):
        k = lrank(t, b) if _is_mask(t) else 1
        rank = max(rank, 1 if _is_mask(t) else lrank(t, b))
        consumed += k
        if end is not None and d != end:
            adjacent = False
        end = d + k
    return rank, consumed, adjacent


def _as_index_tensors(indices) -> list:
    return [t if isinstance(t, Tensor) else tensor(t) for t in indices]


def _batched_mask_error(vmap, x, xb, idx, ibs, dims) -> Exception:
    """A batched boolean mask has a data-dependent result shape: vmap's error. PyTorch
    indexes an empty one as it lies (its batch dim where it is) into the input with the
    batch first: the checks of that fail first."""
    if not any(b is not None and _is_mask(t) and not t.numel() for t, b in zip(idx, ibs)):
        return RuntimeError(_MASK_DYNAMIC)
    lead = int(xb is not None)
    shape = tuple(lshape(x, xb))
    if lead:
        shape = (vmap.size, *shape)
    n = lead + sum(max(lrank(t, b), 1) if _is_mask(t) else 1 for t, b in zip(idx, ibs))
    if n > len(shape):
        return IndexError(f"too many indices for tensor of dimension {len(shape)} (got {n})")
    shift = lead
    for t, b, d in zip(idx, ibs, dims):
        if not _is_mask(t):
            continue
        mshape = tuple(t.shape)
        for j, g in enumerate(mshape):
            src = d + shift + j
            if src >= len(shape):
                return IndexError(
                    f"Dimension out of range (expected to be in range of [{-len(shape)}, "
                    f"{len(shape) - 1}], but got {src})"
                )
            if g != shape[src]:
                return IndexError(
                    f"The shape of the mask {list(mshape)} at index {j} does not match the "
                    f"shape of the indexed tensor {list(shape)} at index {src}"
                )
        shift += len(mshape) - lrank(t, b)
    return RuntimeError(_MASK_DYNAMIC)


def _index_rule(vmap, args, bdims, attrs):
    """Unbatched index tensors shift past the batch dim; batched ones broadcast with the
    batch as one more advanced index (arange(B) when the input is batched too)."""
    x, idx = args[0], _as_index_tensors(args[1])
    xb, ibs, dims = bdims[0], bdims[1], attrs["dims"]
    if any(b is not None and _is_mask(t) for t, b in zip(idx, ibs)):
        raise _batched_mask_error(vmap, x, xb, idx, ibs, dims)
    rank, _, adjacent = _adv_layout(idx, ibs, dims)
    if all(b is None for b in ibs):
        xf = front(x, xb)
        out = index_op.fn(xf, idx, tuple(d + 1 for d in dims), tuple(xf.shape))
        return out, 0 if adjacent else rank
    new = [t if b is None else pad_to(front(t, b), rank) for t, b in zip(idx, ibs)]
    if xb is None:
        return index_op.fn(x, new, dims, tuple(x.shape)), dims[0] if adjacent else 0
    xf = front(x, xb)
    ar = _batch_arange(vmap, rank, xf.device)
    out = index_op.fn(xf, [ar, *new], (0, *(d + 1 for d in dims)), tuple(xf.shape))
    if adjacent and dims[0]:  # NumPy put the broadcast dims first; move them back in place
        out = out.movedim(list(range(1, 1 + rank)), list(range(1 + dims[0], 1 + dims[0] + rank)))
    return out, 0


def _fit_rank(v, vb, rank: int):
    """Values (batch first when batched) with exactly ``rank`` logical dims: size-1 dims
    added in front, or leading size-1 dims dropped."""
    lead = vb is not None
    v = front(v, vb)
    shape = tuple(v.shape[lead:])
    if len(shape) < rank:
        shape = (1,) * (rank - len(shape)) + shape
    elif len(shape) > rank and all(s == 1 for s in shape[: len(shape) - rank]):
        shape = shape[len(shape) - rank :]
    else:
        return v
    return v.reshape(*v.shape[:lead], *shape)


def _index_put_rule(vmap, args, bdims, attrs):
    """Unbatched index tensors shift past the batch dim; batched ones broadcast with the
    batch as one more advanced index (arange(B)). A batched boolean mask is supported
    where the values do not depend on how many elements it selects."""
    x, idx, v = args[0], _as_index_tensors(args[1]), args[2]
    xb, ibs, vb = bdims
    dims, acc = attrs["dims"], attrs["accumulate"]
    if any(b is not None and _is_mask(t) for t, b in zip(idx, ibs)):
        if len(idx) != 1:
            raise RuntimeError(_MASK_DYNAMIC)
        return _index_put_mask(vmap, x, xb, idx[0], ibs[0], dims[0], v, vb, acc)
    rank, consumed, adjacent = _adv_layout(idx, ibs, dims)
    xf = materialize(vmap, x, xb)
    region = rank + lrank(x, xb) - consumed  # logical rank of x[indices]
    lead = vb is not None
    shifted = tuple(d + 1 for d in dims)
    if all(b is None for b in ibs):
        # the indexed region is (B, *region) when adjacent, else (*broadcast, B, *others)
        if isinstance(v, Tensor) and not adjacent:
            v = _fit_rank(v, vb, region)
            v = v.movedim(0, rank) if lead else v.unsqueeze(rank)
        elif lead:
            v = _fit_rank(v, vb, region)
        return index_put_op.fn(xf, idx, v, acc, dims=shifted), 0
    new = [t if b is None else pad_to(front(t, b), rank) for t, b in zip(idx, ibs)]
    ar = _batch_arange(vmap, rank, xf.device)
    if isinstance(v, Tensor):
        d0 = dims[0]
        if adjacent and d0:  # the indexed region is (B, *broadcast, *other dims)
            v = _fit_rank(v, vb, region)
            v = v.movedim(list(range(lead + d0, lead + d0 + rank)), list(range(lead, lead + rank)))
        elif lead:
            v = _fit_rank(v, vb, region)
    return index_put_op.fn(xf, [ar, *new], v, acc, dims=(0, *shifted)), 0


def _index_put_mask(vmap, x, xb, m, mb, d, v, vb, acc):
    """index_put with one batched boolean mask: a where() when the values broadcast over
    the selected elements (their count differs per batch element)."""
    shape, mshape = lshape(x, xb), lshape(m, mb)
    _check_mask_shape(mshape, shape, d)
    k = len(mshape)
    rest = len(shape) - d - k
    if not isinstance(v, Tensor):
        v = tensor(v, dtype=x.dtype, device=x.device)
    elif v.dtype != x.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{x.dtype.scalar_name} for the destination and {v.dtype.scalar_name} "
            "for the source."
        )
    v = _fit_rank(v, vb, d + 1 + rest)
    lead = vb is not None
    vs = tuple(v.shape[lead:])
    if len(vs) != d + 1 + rest or vs[d] != 1:
        raise RuntimeError(_MASK_DYNAMIC)
    v = v.reshape(*v.shape[:lead], *vs[:d], *((1,) * k), *vs[d + 1 :])
    mf = front(m, mb)
    mf = mf.reshape(vmap.size, *((1,) * d), *mshape, *((1,) * rest))
    xf = front(x, xb)
    return where(mf, xf + v if acc else v, xf), 0


def _index(xp, input, indices, dims, shape=()):
    return input[_adv_key(xp, input, indices, dims)]


def _index_put(xp, input, indices, values, accumulate=False, *, dims=None):
    if dims is None:
        dims = tuple(range(len(indices)))
    if hasattr(values, "dtype") and values.dtype != input.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_tname(input)} for the destination and {_tname(values)} for the source."
        )
    key = _adv_key(xp, input, indices, dims, getattr(values, "shape", ()))
    return _put_at(xp, input, key, values, accumulate)


def _mask0_view(xp, out, key) -> tuple:
    """(view, key) where each 0-d mask of ``key`` (a new dim of size one or zero) is a 1-d
    mask on a size-one dim of the view."""
    target, new, d = out, [], 0
    for k in key:
        if not isinstance(k, slice) and k.dtype.kind == "b" and k.ndim == 0:
            target = xp.expand_dims(target, d)
            k = k.reshape(1)
        new.append(k)
        d += 1 if isinstance(k, slice) or k.dtype.kind != "b" else k.ndim
    return target, tuple(new)


def _put_at(xp, input, key, values, accumulate):
    out = input.copy()
    if accumulate:
        view, key = _mask0_view(xp, out, key)
        _accumulate(xp, view, key, values)
    else:
        out[key] = values
    return out


def _accumulate(xp, out, key, values) -> None:
    """out[key] += values, repeated entries summed."""
    key = tuple(
        k for part in key
        for k in (xp.nonzero(part) if hasattr(part, "dtype") and part.dtype.kind == "b" else (part,))
    )  # fmt: skip
    if len(key) == 1 and hasattr(key[0], "dtype"):  # whole rows: x[idx] += values
        idx = key[0].reshape(-1)
        rows = xp.broadcast_to(values, (*key[0].shape, *out.shape[1:]))
        idx = xp.where(idx < 0, idx + out.shape[0], idx)
        _add_rows(xp, out, idx, rows.reshape(idx.size, *out.shape[1:]))
    else:
        xp.add.at(out, key, values)


def _index_put_vjp_input(g, indices, accumulate, dims):
    return g if accumulate else index_put_op.fn(g, indices, 0.0, False, dims=dims)


def _index_samples(make):
    x = make((3, 4))
    i = np.array([2, 0, 1, 1], dtype=np.int64)
    yield S((x, i))
    yield S((x, [0, 2]))
    yield S((x, (slice(None), np.array([[0, 3], [1, 1]]))))
    yield S((x, (i[:2], i[1:3])))
    # Masks as lists: a batched mask has a data-dependent result shape (an error under vmap,
    # tested in test_vmap_indexing.py with the 2-d mask case).
    yield S((x, [True, False, True]))
    yield S((x, (Ellipsis, [True, False, True, True])))
    yield S((make((2, 3, 4)), (0, slice(None), [1, 2])))
    yield S((make((2, 3, 4)), ([0, 1], slice(None), [1, 2])))
    yield S((make((2, 3, 4)), (slice(None), 1, [3, 2])))
    yield S((make((2, 3, 4)), (None, [1, 0], Ellipsis, 1)))
    yield S((x, []))  # a list: torch.func.vmap raises IndexError for an empty index at dim -1
    yield S((x, False))


def _index_errors(make):
    x = make((3, 4))
    yield ErrorInput(
        S((x, [0, 5])), IndexError, "index 5 is out of bounds for dimension 0 with size 3"
    )
    yield ErrorInput(
        S((x, np.array([0.0, 1.0]))), IndexError, "tensors used as indices must be long"
    )
    yield ErrorInput(
        S((x, np.array([True, False]))), IndexError,
        r"The shape of the mask \[2\] at index 0 does not match the shape of the indexed tensor",
    )  # fmt: skip


def _index_layout(out, inputs, attrs):
    """PyTorch's layout of an advanced-indexing result: a TensorIterator over the input
    restrided by the indices (their dims in the input's place, or in front when the
    indexed dims are apart) and the index tensors."""
    x, indices, dims = inputs[0], inputs[1], attrs["dims"]
    if x.flags.c_contiguous or type(out) is not np.ndarray or out.size <= 1:
        return contiguous(out)
    if any(not hasattr(t, "dtype") or t.dtype.kind == "b" for t in indices):
        return contiguous(out)  # masks: PyTorch indexes with their nonzero positions
    bshape = np.broadcast_shapes(*(t.shape for t in indices))
    if list(dims) == list(range(dims[0], dims[0] + len(dims))):
        before = list(range(dims[0]))
    else:
        before = []  # the indexed dims go in front
    after = [d for d in range(x.ndim) if d not in dims and d not in before]
    n = len(bshape)
    src = (
        tuple(x.shape[d] for d in before) + bshape + tuple(x.shape[d] for d in after),
        tuple(x.strides[d] for d in before) + (0,) * n + tuple(x.strides[d] for d in after),
    )
    if src[0] != out.shape:
        return contiguous(out)
    ops = [src]
    for t in indices:
        # expanded to the indices' shape, then viewed with size-1 dims around it: a view
        # gives those the strides of the chunk they sit at (not 0), which the order reads
        st = (0,) * (n - t.ndim) + tuple(
            0 if m == 1 and b != 1 else s
            for m, s, b in zip(t.shape, t.strides, bshape[n - t.ndim :])
        )
        lead = bshape[0] * st[0] if n else t.itemsize
        trail = st[-1] if n else t.itemsize
        ops.append(
            (
                (1,) * len(before) + bshape + (1,) * len(after),
                (lead,) * len(before) + st + (trail,) * len(after),
            )
        )
    return relayout(out, ops)


index_op = defop(
    "index", _index, nin=2, list_inputs=(1,),
    vjp=(lambda g, indices, dims, shape: index_put_op.fn(zeros(shape, dtype=g.dtype, device=g.device), indices, g, True, dims=dims), None),
    jvp=LINEAR, api="Tensor.__getitem__", samples=_index_samples, error_samples=_index_errors,
    batch_rule=_index_rule, layout=_index_layout,
)  # fmt: skip


def _index_put_samples(make):
    x = make((3, 4))
    yield S((x, (np.array([2, 0]),), make((2, 4))))
    yield S((x, (np.array([2, 0]), np.array([1, 3])), make(())))
    yield S((x, (np.array([[2], [0]]), np.array([1, 3])), make((2,)), True))
    yield S((x, (np.array([1, 1, 0]),), make((3, 4))), {"accumulate": True})
    yield S((x, (np.array([True, False, True]),), make((4,))))
    yield S((x, (x > 0,), make(())), {"accumulate": True})


def _index_put_errors(make):
    x = make((3, 4))
    yield ErrorInput(
        S((x, (np.array([5]),), make(()))), IndexError,
        "index 5 is out of bounds for dimension 0 with size 3",
    )  # fmt: skip
    yield ErrorInput(S((x, (np.array([1.0]),), make(()))), IndexError, "tensors used as indices")
    yield ErrorInput(
        S((x, (np.array([1]),), make((), dtype=np.float64))), RuntimeError,
        "Index put requires the source and destination dtypes match, got Float for the "
        "destination and Double for the source.",
    )  # fmt: skip


index_put_op = defop(
    "index_put", _index_put, nin=3, list_inputs=(1,),
    vjp=(_index_put_vjp_input, None, lambda g, indices, dims: index_op.fn(g, indices, dims, tuple(g.shape))),
    jvp=LINEAR, samples=_index_put_samples, error_samples=_index_put_errors,
    batch_rule=_index_put_rule, layout=preserve,
)  # fmt: skip


def _split_indices(indices) -> tuple[list, tuple]:
    """Public ``indices`` (a sequence of tensors or None) as (tensors, their dims)."""
    ts, dims, d = [], [], 0
    for t in indices:
        if t is None:
            d += 1
            continue
        if not isinstance(t, Tensor):
            t = tensor(t)
        ts.append(t)
        dims.append(d)
        d += t.dim() if t.dtype.name == "bool" else 1
    return ts, tuple(dims)


def index_put(input: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """Out-of-place ``input[indices] = values`` (``+=`` when ``accumulate``)."""
    ts, dims = _split_indices(indices)
    return dispatch(index_put_op, (input, ts, values), {"accumulate": accumulate, "dims": dims})


def index_put_(self: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """In-place ``self[indices] = values`` (``+=`` when ``accumulate``)."""
    ts, dims = _split_indices(indices)
    return run_inplace(index_put_op, self, (ts, values), {"accumulate": accumulate, "dims": dims})


# ------------------------------------------------------------------ __getitem__ / __setitem__
def _as_tuple(idx) -> tuple:
    if isinstance(idx, tuple):
        return idx
    if isinstance(idx, list) and len(idx) < 32:
        for v in idx:
            if v is None or v is Ellipsis or isinstance(v, (slice, Tensor, list, tuple)):
                return tuple(idx)
    return (idx,)


def _to_index_tensor(v) -> Tensor:
    """A sequence used as an index: bool and uint8 data stay masks, anything else is long
    (PyTorch converts ``[1.7]`` and ``[[]]`` to long as well)."""
    t = tensor(v) if not isinstance(v, Tensor) else v
    if t.dtype.name not in ("bool", "uint8", "int64"):
        t = t.to(dt.int64)
    return t


def _int(v) -> int:
    return v if isinstance(v, int) else int(v.__index__())


def _parse(x: Tensor, idx):
    """Split an index into a basic NumPy key (a view) and advanced tensors placed after it."""
    items = []
    for v in _as_tuple(idx):
        if isinstance(v, Tensor) and v.dim() == 0 and v._level == 0:
            if v.dtype.name == "bool":
                v = bool(v.item())
            elif not (v.dtype.is_floating_point or v.dtype.is_complex):
                v = int(v.item())
        elif isinstance(v, Tensor) and v._level and v.dtype.name == "bool" and not v.dim():
            # PyTorch reads a 0-d mask (vmap's error if batched) unless vmap is the
            # innermost transform (then vmap's own error for a mask)
            if not v._interp.is_vmap:
                v = bool(v)
            elif not state.stack[-1].is_vmap:
                raise RuntimeError(_VMAP_READ)
        elif isinstance(v, (list, np.ndarray)) and not isinstance(v, bool):
            v = _to_index_tensor(v.tolist() if isinstance(v, np.ndarray) else v)
        items.append(v)
    consumed = 0
    for v in items:
        if isinstance(v, Tensor):
            consumed += v.dim() if v.dtype.name == "bool" else 1
        elif v is None or v is Ellipsis or isinstance(v, bool):
            continue
        else:
            consumed += 1
    ndim = x.dim()
    if consumed > ndim:
        if ndim == 0 and not isinstance(idx, (tuple, list)):
            _zero_dim_index(x, idx)
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    shape = x.shape
    basic, adv, dims = [], [], []
    src = 0  # input dim
    out = 0  # dim of the basic view
    for v in items:
        if v is Ellipsis:
            n = ndim - consumed
            basic.extend([slice(None)] * n)
            src += n
            out += n
            consumed = ndim  # a second Ellipsis expands to nothing
        elif v is None:
            basic.append(None)
            out += 1
        elif isinstance(v, bool):
            # a new dim of size one indexed by [0] (True) or [] (False): a copy, as in PyTorch
            basic.append(None)
            adv.append(tensor([0] if v else [], dtype=dt.int64))
            dims.append(out)
            out += 1
        elif isinstance(v, slice):
            start, stop, step = (None if s is None else _int(s) for s in (v.start, v.stop, v.step))
            if step is not None and step <= 0:
                raise ValueError("step must be greater than zero")
            basic.append(slice(start, stop, step))
            src += 1
            out += 1
        elif isinstance(v, Tensor):
            if v.dtype.is_floating_point or v.dtype.is_complex:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            k = v.dim() if v.dtype.name == "bool" else 1
            basic.extend([slice(None)] * k)
            adv.append(v)
            dims.append(out)
            src += k
            out += k
        else:
            try:
                i = _int(v)
            except (TypeError, AttributeError):
                raise IndexError(
                    "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                    "Variables are valid indices (got " + type(v).__name__ + ")"
                ) from None
            size = shape[src]
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {src} with size {size}")
            basic.append(i)
            src += 1
    return tuple(basic), adv, tuple(dims)


def _zero_dim_index(x: Tensor, idx) -> None:
    """PyTorch's errors for a lone int or slice on a 0-d tensor (``x[0]``, ``x[:]``); under
    vmap the slice's batch rule reports the dim it shifted past the batch."""
    if isinstance(idx, int) and not isinstance(idx, bool):
        raise IndexError(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
            "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
        )
    if isinstance(idx, slice):
        if is_vmapped(x):
            raise IndexError(
                "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
            )
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")


def _trivial(basic: tuple, ndim: int) -> bool:
    """Whether the basic part selects everything (missing trailing dims are full slices)."""
    return len(basic) <= ndim and all(isinstance(b, slice) and b == slice(None) for b in basic)


def _skipped(basic: tuple, shape) -> bool:
    """Whether every component of a basic index is a slice PyTorch skips."""
    return len(basic) <= len(shape) and all(
        isinstance(b, slice) and _whole(b, n) for b, n in zip(basic, shape)
    )


def tensor_getitem(self: Tensor, idx) -> Tensor:
    """``self[idx]``: basic indexing gives a view; tensors and masks give a copy."""
    basic, adv, dims = _parse(self, idx)
    if not adv and type(idx) is not slice and _skipped(basic, self.shape):
        basic = ()  # PyTorch skips each slice that keeps its dim: x[...], x[:, :] are aliases
    v = self
    if not (adv and _trivial(basic, self.dim())):
        v = dispatch(getitem, (self,), {"index": basic, "shape": tuple(self.shape)})
    if adv:
        v = dispatch(index_op, (v, adv), {"dims": dims, "shape": tuple(v.shape)})
    return v


def _strip_leading_ones(value, ndim: int):
    if isinstance(value, Tensor):
        while value.dim() > ndim and value.shape[0] == 1:
            value = value.reshape(tuple(value.shape[1:]))
    return value


def _mask_fill(adv: list, value: Tensor) -> bool:
    """Whether ``self[mask] = value`` is a masked fill in PyTorch (a 0-d value)."""
    return len(adv) == 1 and adv[0].dtype.name == "bool" and value.dim() == 0


def tensor_setitem(self: Tensor, idx, value) -> None:
    """``self[idx] = value``: an in-place copy into the view, or index_put_ for tensor indices."""
    basic, adv, dims = _parse(self, idx)
    v = self
    if not _trivial(basic, self.dim()):
        v = dispatch(getitem, (self,), {"index": basic, "shape": tuple(self.shape)})
    if not isinstance(value, Tensor):
        value = tensor(value, dtype=self.dtype)
    given = value.dtype  # PyTorch expands the value before it casts it
    if given != self.dtype and (not adv or _mask_fill(adv, value)):
        # the view's refusals see the value before the cast drops its history; PyTorch
        # fills with a 0-d value (its checks) and copies anything else (copy_ into an
        # integer tensor checks nothing)
        fills = not value.dim() and v.dim()
        if value._rg and (fills or v.dtype._kind >= 2):
            check_inplace(v, (value,))
        value = value.to(self.dtype)  # (index_put_ refuses a tensor of another dtype)
    if not adv:
        # PyTorch views the value without its leading ones and expands it to the target (a
        # batched value with its batch dims, under the batch rule's text)
        sizes = vmap_sizes(value) if state.stack else ()
        value = _strip_leading_ones(value, v.dim() if sizes else 0)
        shape, target = tuple(value.shape), tuple(v.shape)
        if sizes and len(shape) <= len(target):
            pad = (1,) * (len(target) - len(shape))
            shape, target = (*sizes, *pad, *shape), (*sizes, *target)
        _expand_size(shape, target, given.np, bool(sizes))
        if state.stack and not value.dim() and v.dim():
            if value._level <= v._level:  # a grad level above the vmap: its leaf check first
                check_inplace(v, (value,))
            check_operands(v, (value,), fill)  # PyTorch fills with a 0-d value
        run_inplace(copy, v, (value,), {})
        return
    run_inplace(
        index_put_op, v, (adv, _strip_leading_ones(value, 64)), {"accumulate": False, "dims": dims}
    )


# ------------------------------------------------------------------ copy / fill / zero
def _copy(xp, self, src, non_blocking=False):
    shape = getattr(src, "shape", ())
    if shape != self.shape:
        msg = broadcast_mismatch((self.shape, shape))
        if msg is None:
            full = xp.broadcast_shapes(self.shape, shape)
            if full != self.shape:
                msg = (
                    f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                    f"{list(full)}"
                )
        if msg is not None:
            raise RuntimeError(msg)
    return xp.array(xp.broadcast_to(xp.asarray(src), self.shape), dtype=self.dtype)


def _copy_rule(vmap, args, bdims, attrs):
    (self, src), (sb, rb) = args, bdims
    out = materialize(vmap, self, sb)
    if not isinstance(src, Tensor):
        return dispatch(copy, (out, src), attrs), 0
    rank = max(out.dim() - 1, lrank(src, rb))
    if rb is not None:
        src = pad_to(front(src, rb), rank)
    if rank == out.dim() - 1:
        return dispatch(copy, (out, src), attrs), 0
    # a src of more dims: PyTorch pads self to its rank (its error shows the padded shape)
    padded = out.reshape(vmap.size, *((1,) * (rank - out.dim() + 1)), *out.shape[1:])
    return dispatch(copy, (padded, src), attrs).reshape(out.shape), 0


# The sweep tests the functional op: under vmap, copy_ of batched values into an unbatched
# tensor is an error (tested in test_vmap_indexing.py).
copy = defop(
    "copy", _copy, nin=2, vjp=(lambda g: zeros_like(g), lambda g: g), jvp=LINEAR,
    api="ops.indexing.copy.fn", oracle="Tensor.copy_", node_name="torch::autograd::CopyBackwards", grad_args=(1,),
    test={"no_grad_test": True}, batch_rule=_copy_rule,
    samples=lambda make: [S((make((2, 3)), make((3,)))), S((make(()), make(())))],
    inplace=True, layout=preserve,
)  # fmt: skip


def _fill(xp, input, value):
    if hasattr(value, "ndim") and value.ndim:
        raise RuntimeError(
            f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions."
        )
    return xp.full(input.shape, value, dtype=input.dtype)


def _fill_rule(vmap, args, bdims, attrs):
    """A batched value fills each batch element with its own value (a broadcast copy)."""
    (x, value), (xb, vb) = args, bdims
    if vb is None:
        return fill.fn(front(x, xb), value), 0
    n = lrank(value, vb)
    if n:
        raise RuntimeError(
            f"fill_ only supports 0-dimension value tensor but got tensor with {n} dimensions."
        )
    out = materialize(vmap, x, xb)
    return copy.fn(out, front(value, vb).reshape(vmap.size, *((1,) * (out.dim() - 1)))), 0


fill = defop(
    "fill", _fill, nin=2, vjp=(lambda g: zeros_like(g), lambda g: g.sum()), jvp=LINEAR,
    batch_rule=_fill_rule,
    samples=lambda make: [S((make((2, 3)), 1.5)), S((make((2, 3)), make(()))), S((make(()), 2))],
    error_samples=lambda make: [ErrorInput(S((make(3), make(1))), RuntimeError, "fill_ only supports 0-dimension value")],
    inplace=True, layout=preserve,
)  # fmt: skip


def zero_(self: Tensor) -> Tensor:
    """Fill with zeros in place."""
    return run_inplace(fill, self, (0,), {})


def fill_(self: Tensor, value) -> Tensor:
    """Fill with ``value`` in place."""
    return run_inplace(fill, self, (value,), {})


# ------------------------------------------------------------------ gather / scatter
def _dim_family(op, like=(0,)):
    """gather/scatter-like ops: every tensor batch-first (the unbatched ones expanded: the
    kernel needs equal sizes), ``dim`` shifted past the batch. Operands of at most one
    logical dim, one of them 0-d, run as (B, n) and are reshaped back; ``like`` names the
    input whose logical shape each output takes then."""

    def rule(vmap, args, bdims, attrs):
        ranks = [lrank(a, b) for a, b in zip(args, bdims) if isinstance(a, Tensor)]
        vals = [
            materialize(vmap, a, b) if isinstance(a, Tensor) else a for a, b in zip(args, bdims)
        ]
        new = dict(attrs)
        small = max(ranks[:2]) <= 1 and min(ranks[:2]) == 0
        if small:
            wrap_dim(attrs["dim"], 1)
            vals = [v.reshape(vmap.size, -1) if isinstance(v, Tensor) else v for v in vals]
            new["dim"] = 1
        else:
            new["dim"] = pdim(attrs["dim"], ranks[0])
        out = dispatch(op, tuple(vals), new)
        if not small:
            return out, 0
        shapes = [(vmap.size, *lshape(args[i], bdims[i])) for i in like]
        if op.nout == 1:
            return out.reshape(shapes[0]), 0
        return tuple(o.reshape(s) for o, s in zip(out, shapes)), 0

    return rule


dim_family = rule_generator(_dim_family)


def _gather(xp, input, index, *, dim):
    check_index_dtype(index, "gather")
    _check_dims("gather", input, index, dim=dim)
    _bounds(index, input.shape[dim], dim)
    return input[_scatter_key(xp, index, dim)]


def _gather_k(xp, input, index, dim, *, sparse_grad=False):
    return _as1d(_gather)(xp, input, index, dim=dim)


def _gather_samples(make):
    yield S((make((3, 4)), 0, make.index((2, 4), 3)))
    yield S((make((3, 4)), 1, make.index((3, 6), 4)))
    yield S((make((3, 4)), -1, make.index((2, 2), 4)))
    yield S((make((2, 3, 4)), 1, make.index((2, 2, 4), 3)))
    yield S((make(()), 0, np.array(0)))
    yield S((make((3, 4)), 0, make.index((0, 4), 3)))


def _gather_errors(make):
    x = make((3, 4))
    yield ErrorInput(
        S((x, 0, np.array([[5]]))),
        RuntimeError,
        "index 5 is out of bounds for dimension 0 with size 3",
    )
    yield ErrorInput(
        S((x, 0, np.array([[1.0]]))),
        RuntimeError,
        r"gather\(\): Expected dtype int32/int64 for index",
    )


gather_op = defop(
    "gather",
    _gather_k,
    nin=2,
    out=True,
    vjp=(
        lambda g, input, index, dim: scatter_add.fn(zeros_like(input), index, g, dim=dim),
        None,
    ),
    jvp=LINEAR,
    samples=_gather_samples,
    error_samples=_gather_errors,
    batch_rule=dim_family(like=(1,)),
)


def _scatter_core(xp, input, index, src, *, dim, reduce=None, name="scatter"):
    check_index_dtype(index, "scatter")
    _same_dtype("scatter", input, src)
    _check_dims(name, input, index, src, dim)
    _bounds(index, input.shape[dim], dim)
    out = input.copy()
    key = _scatter_key(xp, index, dim)
    vals = _region(src, index.shape) if hasattr(src, "shape") else src
    if reduce is None:
        out[key] = vals
    elif reduce in ("add", "sum"):
        _flat_at(xp, "add", out, key, xp.broadcast_to(xp.asarray(vals, out.dtype), index.shape))
    elif reduce in ("multiply", "prod"):
        vals = xp.broadcast_to(xp.asarray(vals, out.dtype), index.shape)
        _flat_at(xp, "multiply", out, key, vals)
    else:
        raise RuntimeError("reduce argument must be either add or multiply.")
    return out


def _scatter_k(xp, input, index, src, dim, reduce=None):
    return _as1d(_scatter_core)(xp, input, index, src, dim=dim, reduce=reduce)


def _scatter_vjp_input(g, index, dim, reduce):
    if reduce is not None:
        raise RuntimeError("derivative for aten::scatter is not implemented")
    return scatter_op.fn(g, index, 0.0, dim=dim)


def _scatter_vjp_src(g, index, src, dim, reduce):
    if reduce is not None:
        raise RuntimeError("derivative for aten::scatter is not implemented")
    return _grad_region(g.gather(dim, index), src.shape)


def _unique_index(make, shape, dim, size):
    """Index values that are distinct along ``dim`` (a permutation per line)."""
    out = np.zeros(shape, dtype=np.int64)
    moved = np.moveaxis(out, dim, -1)
    for pos in np.ndindex(moved.shape[:-1]):
        moved[pos] = make.perm(size)[: shape[dim]]
    return out


def _scatter_samples(make):
    yield S((make((3, 4)), 0, _unique_index(make, (2, 4), 0, 3), make((2, 4))))
    yield S((make((3, 4)), 1, _unique_index(make, (3, 2), 1, 4), make((3, 2))))
    yield S((make((2, 3, 4)), -1, _unique_index(make, (2, 2, 3), 2, 4), make((2, 2, 3))))
    yield S((make((3, 4)), 0, _unique_index(make, (2, 4), 0, 3), 1.5))
    yield S((make((3, 4)), 0, _unique_index(make, (2, 3), 0, 3)), {"value": 2.0})
    yield S((make(()), 0, np.array(0), make(())))


def _scatter_errors(make):
    x = make((3, 4))
    yield ErrorInput(
        S((x, 0, np.array([[5]]), 1.0)),
        RuntimeError,
        "index 5 is out of bounds for dimension 0 with size 3",
    )
    yield ErrorInput(
        S((x, 0, np.array([[1.0]]), 1.0)),
        RuntimeError,
        r"scatter\(\): Expected dtype int32/int64 for index",
    )
    yield ErrorInput(
        S((x, 0, np.array([[0]]), x), {"reduce": "foo"}),
        RuntimeError,
        "reduce argument must be either add or multiply",
    )


scatter_op = defop(
    "scatter", _scatter_k, nin=3,
    vjp=(_scatter_vjp_input, None, _scatter_vjp_src),
    jvp=LINEAR, samples=_scatter_samples, error_samples=_scatter_errors, batch_rule=dim_family(),
)  # fmt: skip


def _scatter_args(src, value, reduce):
    if src is None and value is None:
        raise TypeError("scatter() missing 1 required positional argument: 'src' or 'value'")
    return src if src is not None else value


def scatter(
    input: Tensor,
    dim: int,
    index: Tensor,
    src=None,
    *,
    value=None,
    reduce: str | None = None,
    out=None,
) -> Tensor:
    """Write ``src`` (a tensor or a scalar ``value``) into ``input`` at ``index`` along ``dim``."""
    r = dispatch(
        scatter_op,
        (input, index, _scatter_args(src, value, reduce)),
        {"dim": dim, "reduce": reduce},
    )
    if out is not None:
        from .._core.dispatch import write_out

        return write_out(out, r)
    return r


def scatter_(
    self: Tensor, dim: int, index: Tensor, src=None, *, value=None, reduce: str | None = None
) -> Tensor:
    """In-place :func:`scatter`."""
    return run_inplace(
        scatter_op, self, (index, _scatter_args(src, value, reduce)), {"dim": dim, "reduce": reduce}
    )


def _scatter_add_k(xp, input, index, src, dim):
    return _as1d(_scatter_core)(xp, input, index, src, dim=dim, reduce="add", name="scatter_add")


def _scatter_add_samples(make):
    yield S((make((3, 4)), 0, make.index((4, 4), 3), make((4, 4))))
    yield S((make((3, 4)), 1, make.index((3, 5), 4), make((3, 5))))
    yield S((make((2, 3, 4)), -2, make.index((2, 5, 4), 3), make((2, 5, 4))))
    yield S((make(()), 0, np.array(0), make(())))


scatter_add = defop(
    "scatter_add", lambda xp, input, index, src, dim: _scatter_add_k(xp, input, index, src, dim), nin=3,
    vjp=(lambda g: g, None, lambda g, index, src, dim: _grad_region(g.gather(dim, index), src.shape)),
    jvp=LINEAR, samples=_scatter_add_samples, out=True, batch_rule=dim_family(),
    error_samples=lambda make: [ErrorInput(S((make((3, 4)), 0, np.array([[5]]), make((1, 1)))), RuntimeError, "index 5 is out of bounds")],
)  # fmt: skip


_REDUCE_AT = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum"}


def _reduce_identity(reduce: str, dtype):
    """The value that leaves a reduction unchanged (the lowest value of the dtype for amax)."""
    if reduce in ("sum", "mean", "prod"):
        return int(reduce == "prod")
    lo = reduce == "amax"
    if dtype.kind == "b":
        return not lo
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if lo else info.max
    return -math.inf if lo else math.inf


def _scatter_reduce(xp, input, index, src, dim, reduce, *, include_self=True):
    if reduce not in _REDUCE_AT:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    if input.ndim == 0:
        wrap_dim(dim, 0)
        input, index, src, dim = input.reshape(1), index.reshape(-1), src.reshape(-1), 0
        shape0 = ()
    else:
        dim, shape0 = wrap_dim(dim, input.ndim), input.shape
    check_index_dtype(index, "scatter")
    _same_dtype("scatter", input, src)
    _check_dims("scatter_reduce", input, index, src, dim)
    _bounds(index, input.shape[dim], dim)
    key = _scatter_key(xp, index, dim)
    vals = _region(src, index.shape)
    out = input.copy()
    if not include_self:
        out[key] = _reduce_identity(reduce, out.dtype)
    _flat_at(xp, _REDUCE_AT[reduce], out, key, vals)
    if reduce == "mean":
        cnt = xp.zeros(input.shape, dtype=xp.int64) + int(include_self)
        _flat_at(xp, "add", cnt, key, 1)
        cnt = xp.maximum(cnt, 1)
        out = out // cnt if out.dtype.kind in "iu" else out / cnt
    return out.reshape(shape0).astype(input.dtype)


def _sr_stats(xp, input, index, src, result, dim, reduce, include_self):
    """Non-differentiable weights for scatter_reduce's vjp: (input weight, src weight)."""
    if input.ndim == 0:
        input, index, src, result = (a.reshape(-1) for a in (input, index, src, result))
        dim = 0
    dim = wrap_dim(dim, input.ndim)
    key = _scatter_key(xp, index, dim)
    vals = _region(src, index.shape)
    hit = xp.zeros(input.shape, dtype=bool)
    hit[key] = True
    keep = xp.ones(input.shape) if include_self else (~hit).astype(input.dtype)
    if reduce in ("sum", "prod"):
        return keep, xp.ones(index.shape)
    if reduce == "mean":
        cnt = xp.zeros(input.shape) + int(include_self)
        _flat_at(xp, "add", cnt, key, 1)
        inv = 1 / xp.maximum(cnt, 1)
        w = keep * inv if include_self else keep
        return w, inv[key]
    # amax / amin: the gradient is shared evenly among the elements equal to the result
    tie_in = (input == result) * keep
    tie_src = (vals == result[key]).astype(input.dtype)
    n = tie_in.copy()
    _flat_at(xp, "add", n, key, tie_src)
    n = xp.maximum(n, 1)
    return tie_in / n, tie_src / n[key]


sr_stats = defop(
    "scatter_reduce_weights", lambda xp, input, index, src, result, dim, reduce, include_self: tuple(
        w.astype(input.dtype).reshape(s) for w, s in zip(
            _sr_stats(xp, input, index, src, result, dim, reduce, include_self), (input.shape, index.shape))
    ), nin=4, nout=2, batch_rule=dim_family(like=(0, 1)),
)  # fmt: skip


def _sr_vjp_input(g, input, index, src, result, dim, reduce, include_self):
    w, _ = sr_stats.fn(
        input.detach(), index, src.detach(), result.detach(), dim, reduce, include_self
    )
    if reduce == "prod" and include_self:
        return g * _prod_of_others(input, index, src, dim)
    return g * w


def _prod_of_others(input, index, src, dim):
    """result / input of scatter_reduce's prod without dividing by a zero of input."""
    masked = input.masked_fill(input == 0, 1)
    return scatter_reduce_op.fn(masked, index, src, dim, "prod", include_self=True) / masked


def _sr_vjp_src(g, input, index, src, result, dim, reduce, include_self):
    _, w = sr_stats.fn(
        input.detach(), index, src.detach(), result.detach(), dim, reduce, include_self
    )
    if reduce == "prod":
        return _grad_region(
            g.gather(dim, index)
            * _src_prod_of_others(input, index, src, result, dim, include_self),
            src.shape,
        )
    return _grad_region(g.gather(dim, index) * w, src.shape)


def _src_prod_of_others(input, index, src, result, dim, include_self):
    """For each scattered src element, the product of the others in its group: result / src
    where src is not 0, the group's product with it taken as 1 where it is the group's only 0
    (two zeros make it 0)."""
    s = _region_t(src, index.shape)
    zero = s == 0
    count = scatter_add.fn(zeros_like(input), index, zero.to(input.dtype), dim=dim)
    single = zero & (count.gather(dim, index) == 1)
    without = scatter_reduce_op.fn(
        input, index, s.masked_fill(single, 1), dim, "prod", include_self=include_self
    )
    return where(
        single, without.gather(dim, index), result.gather(dim, index) / s.masked_fill(zero, 1)
    )


def _sr_jvp(tinput, tsrc, input, index, src, result, dim, reduce, include_self):
    w_in, w_src = sr_stats.fn(
        input.detach(), index, src.detach(), result.detach(), dim, reduce, include_self
    )
    ts = _region_t(tsrc, index.shape)
    base = zeros_like(result)
    if reduce == "prod":
        others = _src_prod_of_others(input, index, src, result, dim, include_self)
        return tinput * w_in * _prod_of_others(input, index, src, dim) + scatter_add.fn(
            base, index, ts * others, dim=dim
        )
    return tinput * w_in + scatter_add.fn(base, index, ts * w_src, dim=dim)


def _region_t(src, shape):
    if tuple(src.shape) == tuple(shape):
        return src
    return getitem.fn(src, tuple(slice(0, n) for n in shape), tuple(src.shape))


def _scatter_reduce_samples(make):
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        lo = 0.5 if reduce == "prod" else -2
        for inc in (True, False):
            yield S(
                (
                    make((3, 4), lo, 2),
                    0,
                    np.array([[0, 1, 2, 0], [0, 0, 2, 2]]),
                    make((2, 4), lo, 2),
                    reduce,
                ),
                {"include_self": inc},
            )
        yield S((make((2, 3), lo, 2), 1, np.array([[2, 2], [0, 1]]), make((2, 2), lo, 2), reduce))


scatter_reduce_op = defop(
    "scatter_reduce", _scatter_reduce, nin=3,
    vjp=(_sr_vjp_input, None, _sr_vjp_src), jvp=_sr_jvp, samples=_scatter_reduce_samples,
    batch_rule=dim_family(),
    error_samples=lambda make: [
        ErrorInput(S((make((3, 4)), 0, np.array([[0]]), make((1, 1)), "foo")), RuntimeError, "reduce argument must be either sum, prod, mean, amax or amin, got foo"),
        ErrorInput(S((make((3, 4)), 0, np.array([[5]]), make((1, 1)), "sum")), RuntimeError, "index 5 is out of bounds for dimension 0 with size 3"),
    ],
)  # fmt: skip


def scatter_reduce(
    input: Tensor,
    dim: int,
    index: Tensor,
    src: Tensor,
    reduce: str,
    *,
    include_self: bool = True,
    out=None,
) -> Tensor:
    """Reduce ``src`` into ``input`` at ``index`` along ``dim`` ('sum', 'prod', 'mean', 'amax', 'amin')."""
    r = scatter_reduce_op.fn(input, index, src, dim, reduce, include_self=include_self)
    if out is not None:
        from .._core.dispatch import write_out

        return write_out(out, r)
    return r


def scatter_reduce_(
    self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True
) -> Tensor:
    """In-place :func:`scatter_reduce`."""
    attrs = {"dim": dim, "reduce": reduce, "include_self": include_self}
    return run_inplace(scatter_reduce_op, self, (index, src), attrs)


# ------------------------------------------------------------------ index_select / index_*
def _moved(a, dim):
    return a if a.ndim == 0 else a.swapaxes(0, dim)


def _index_select(xp, input, index, dim):
    check_index_dtype(index, "index_select")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if input.ndim == 0:
        wrap_dim(dim, 0)
        if index.size != 1:
            raise RuntimeError(
                f"index_select(): Index to scalar can have only 1 value, got {index.size} value(s)"
            )
        if (index != 0).any():
            raise IndexError("index out of range in self")
        return input.copy()
    dim = wrap_dim(dim, input.ndim)
    if index.size and not input.shape[dim] and input.ndim > 1:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if index.size and ((index < 0).any() or (index >= input.shape[dim]).any()):
        raise IndexError("index out of range in self")
    return xp.take(input, index.reshape(-1), axis=dim)


def _vector_index(index, ib, name: str, dtype_msg: str) -> None:
    """index_select/index_*: PyTorch's checks of the index's dtype and logical rank."""
    if name in _INDEX_DTYPES:
        check_index_dtype(index, name)
    else:
        _check_index_dtype(index, dtype_msg)
    if lrank(index, ib) > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")


def _spread(vmap, index, ib, shape: tuple, p: int):
    """A vector index (batched: one per batch element) as a full gather/scatter index of
    the batch-first ``shape`` with its length at dim ``p``."""
    i = front(index, ib).reshape(vmap.size, -1) if ib is not None else index.reshape(1, -1)
    k = i.shape[1]
    i = i.reshape(i.shape[0], *((1,) * (p - 1)), k, *((1,) * (len(shape) - p - 1)))
    return i.expand(*shape[:p], k, *shape[p + 1 :])


def _index_select_rule(vmap, args, bdims, attrs):
    (x, index), (xb, ib) = args, bdims
    _vector_index(
        index, ib, "index_select", "index_select(): Expected dtype int32 or int64 for index"
    )
    n, dim, k = lrank(x, xb), attrs["dim"], _numel(lshape(index, ib))
    if n == 0:  # one value per batch element: a gather of (B, 1)
        wrap_dim(dim, 0)
        if k != 1:
            raise RuntimeError(
                f"index_select(): Index to scalar can have only 1 value, got {k} value(s)"
            )
        xf = materialize(vmap, x, xb).unsqueeze(1)
        i = materialize(vmap, index, ib).reshape(vmap.size, 1)
        return xf.gather(1, i).reshape(vmap.size), 0
    if ib is None:
        xf, p = front(x, xb), pdim(dim, n)
        if not values_hidden(index):  # PyTorch's batch rule gathers: a gather's bounds error
            _bounds(index._data, xf.shape[p], p)
        return index_select_op.fn(xf, index, p), 0
    if xb is None:  # one selection of B * k entries, split back
        d = wrap_dim(dim, n)
        out = index_select_op.fn(x, front(index, ib).reshape(-1), d)
        return out.reshape(*x.shape[:d], vmap.size, k, *x.shape[d + 1 :]), d
    xf = front(x, xb)
    p = pdim(dim, n)
    return xf.gather(p, _spread(vmap, index, ib, tuple(xf.shape), p)), 0


def _index_select_samples(make):
    yield S((make((3, 4)), 0, np.array([2, 0, 2], dtype=np.int64)))
    yield S((make((3, 4)), -1, np.array([3, 1], dtype=np.int64)))
    yield S((make((2, 3, 4)), 1, np.array([1], dtype=np.int64)))
    yield S((make((3, 4)), 1, np.array(2, dtype=np.int64)))
    yield S((make((3, 4)), 0, np.zeros(0, dtype=np.int64)))
    yield S((make(()), 0, np.array([0], dtype=np.int64)))


index_select_op = defop(
    "index_select",
    _index_select,
    nin=2,
    out=True,
    vjp=(
        lambda g, input, index, dim: index_add_op.fn(zeros_like(input), index, g, dim=dim),
        None,
    ),
    jvp=LINEAR,
    samples=_index_select_samples,
    batch_rule=_index_select_rule,
    error_samples=lambda make: [
        ErrorInput(S((make((3, 4)), 0, np.array([5]))), IndexError, "index out of range in self"),
        ErrorInput(
            S((make((3, 4)), 0, np.array([1.0]))),
            RuntimeError,
            r"index_select\(\): Expected dtype int32 or int64 for index",
        ),
    ],
)


def _dim_index(xp, input, dim, index, name, exc=IndexError, prefix="", source=None):
    """Checks shared by index_add/index_fill/index_copy, in PyTorch's order (the index's
    dtype and rank, the dim, the source's dtype and shape, then the bounds); returns the
    wrapped dim."""
    check_index_dtype(index, name)
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    dim = wrap_dim(dim, input.ndim)
    if source is not None:
        _same_dtype(name, input, source)
        _check_index_source(name, input.shape, index.size, getattr(source, "shape", ()), dim)
    _bounds(
        index,
        input.shape[dim] if input.ndim else 1,
        dim,
        negative=name == "index_fill",
        exc=exc,
        prefix=prefix,
    )
    return dim


def _check_index_source(name: str, shape, n_index: int, source_shape, dim) -> None:
    """PyTorch's checks of index_add_/index_copy_'s source against self and the index (on
    logical shapes, so the batch rule makes them too)."""
    shape, source_shape = tuple(shape), tuple(source_shape)
    if not shape or not source_shape:
        return
    d = wrap_dim(dim, len(shape))
    rest, src_rest = shape[:d] + shape[d + 1 :], source_shape[:d] + source_shape[d + 1 :]
    if name == "index_copy":
        if len(source_shape) != len(shape):
            raise IndexError(
                "index_copy_(): When source and destination are not scalars, their "
                f"dimensionality must match. Source dimensionality ({len(source_shape)}), "
                f"destination dimensionality ({len(shape)})"
            )
        if rest != src_rest:
            raise RuntimeError(
                "index_copy_(): Source/destination tensor must have same slice shapes. "
                f"Destination slice shape: {' '.join(map(str, rest))} at dimension {d} and "
                f"source slice shape: {' '.join(map(str, src_rest))} at dimension 0."
            )
        if n_index != source_shape[d]:
            raise IndexError(
                f"index_copy_(): Number of indices ({n_index}) should be equal to "
                f"source.size(dim) ({source_shape[d]})"
            )
        return
    if len(source_shape) > d and n_index != source_shape[d]:
        raise RuntimeError(
            f"index_add_(): Number of indices ({n_index}) should be equal to source.size(dim): "
            f"({source_shape[d]}), for dim: {d}"
        )
    if len(source_shape) != len(shape) or rest != src_rest:
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(shape)} source.shape = {list(source_shape)}"
        )


def _index_update_rule(op, mode):
    """index_add/index_fill/index_copy: the batch first and ``dim`` shifted; with a batched
    index (or index_fill's batched value) the op runs as scatter_add/scatter on the index
    spread over the other dims. A logical 0-d input runs as (B, 1)."""
    name = op.name

    def rule(vmap, args, bdims, attrs):
        (x, index, src), (xb, ib, sb) = args, bdims
        _vector_index(index, ib, name, f"{name}(): Expected dtype int64 for index")
        n, dim = lrank(x, xb), attrs["dim"]
        xf = materialize(vmap, x, xb)
        if mode == "fill":
            if isinstance(src, Tensor) and lrank(src, sb):
                raise RuntimeError(
                    "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                    f"{lrank(src, sb)} dimension(s)."
                )
            val = src if sb is None else front(src, sb)
        else:
            # PyTorch's index_add_ batch rule checks the values with the batch first and dim
            # shifted (index_copy_'s checks each sample)
            shape, sshape = lshape(x, xb), lshape(src, sb)
            if mode == "add":  # (the dtypes first, as the kernel checks them)
                _same_dtype(name, x, src)
            if n and mode == "add":
                shape, sshape, d = (vmap.size, *shape), (vmap.size, *sshape), pdim(dim, n)
            else:
                d = dim
            _check_index_source(name, shape, _numel(lshape(index, ib)), sshape, d)
            if mode == "add" and ib is None and not values_hidden(index) and n:
                size = shape[d]
                if index.numel() and bool(((index < 0) | (index >= size)).any()):
                    raise IndexError("index out of range in self")
            val = materialize(vmap, src, sb)
        if n == 0:
            wrap_dim(dim, 0)
            xf = xf.reshape(vmap.size, 1)
            if mode != "fill":
                val = val.reshape(vmap.size, -1)
            p = 1
        else:
            p = pdim(dim, n)
        new = {**attrs, "dim": p}
        if ib is None and (mode != "fill" or sb is None):
            out = dispatch(op, (xf, index, val), new)
        else:
            size = xf.shape[p]
            if mode == "fill":  # negative positions are valid here, not in scatter
                index = index + (index < 0) * size
            ie = _spread(vmap, index, ib, tuple(xf.shape), p)
            if mode == "fill":
                if isinstance(val, Tensor):
                    val = val.reshape(*val.shape[: sb is not None], *((1,) * (xf.dim() - 1)))
                    val = val.expand(ie.shape)
                out = scatter_op.fn(xf, ie, val, dim=p)
            else:
                if val.dim() < xf.dim():
                    val = pad_to(val, xf.dim() - 1)
                val = val.expand(ie.shape)
                if mode == "add":
                    alpha = attrs["alpha"]
                    out = scatter_add.fn(xf, ie, val if alpha == 1 else val * alpha, dim=p)
                else:
                    out = scatter_op.fn(xf, ie, val, dim=p)
        return (out.reshape(vmap.size) if n == 0 else out), 0

    return rule


index_update_rule = rule_generator(_index_update_rule)


def _index_add(xp, input, index, source, dim, *, alpha=1):
    dim = _dim_index(xp, input, dim, index, "index_add", RuntimeError, source=source)
    out = xp.array(input)
    if out.ndim == 0:
        out[...] += (source.sum() if hasattr(source, "sum") else source) * alpha
        return out
    src = source if alpha == 1 else source * alpha
    _add_rows(xp, _moved(out, dim), index.reshape(-1), _moved(xp.asarray(src, out.dtype), dim))
    return out


index_add_op = defop(
    "index_add", _index_add, nin=3, batch_rule=index_update_rule("add"),
    vjp=(lambda g: g, None, lambda g, index, dim, alpha: g.index_select(dim, index) * alpha if alpha != 1 else g.index_select(dim, index)),
    jvp=LINEAR, out=True,
    samples=lambda make: [
        S((make((3, 4)), 0, np.array([2, 0, 2]), make((3, 4)))),
        S((make((3, 4)), 1, np.array([1, 1]), make((3, 2))), {"alpha": 2.0}),
        S((make((2, 3, 4)), -2, np.array([0]), make((2, 1, 4)))),
        S((make((3, 4)), 0, np.zeros(0, dtype=np.int64), make((0, 4)))),
    ],
    error_samples=lambda make: [ErrorInput(S((make((3, 4)), 0, np.array([5]), make((1, 4)))), RuntimeError, "index 5 is out of bounds for dimension 0 with size 3")],
)  # fmt: skip


def _index_fill(xp, input, index, value, dim):
    dim = _dim_index(xp, input, dim, index, "index_fill")
    if hasattr(value, "ndim") and value.ndim:
        raise RuntimeError(
            f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.ndim} dimension(s)."
        )
    out = xp.array(input)
    if out.ndim == 0:
        if index.size:
            out[...] = value
        return out
    _moved(out, dim)[index.reshape(-1)] = value
    return out


index_fill_op = defop(
    "index_fill", _index_fill, nin=3, batch_rule=index_update_rule("fill"), layout=preserve,
    node_name=lambda value: "IndexFillBackward0" if value is None else "IndexFillBackward1",
    vjp=(lambda g, index, dim: index_fill_op.fn(g, index, 0.0, dim=dim), None, lambda g, index, dim: (g - index_fill_op.fn(g, index, 0.0, dim=dim)).sum()),
    jvp=LINEAR,
    samples=lambda make: [
        S((make((3, 4)), 0, np.array([2, 0]), 1.5)),
        S((make((3, 4)), 1, np.array([3, 1]), make(()))),
        S((make((2, 3, 4)), -1, np.array([0, 3]), -2.0)),
        S((make(()), 0, np.array([0]), make(()))),
    ],
    error_samples=lambda make: [ErrorInput(S((make((3, 4)), 0, np.array([5]), 1.0)), IndexError, "index 5 is out of bounds for dimension 0 with size 3")],
)  # fmt: skip


def _index_copy(xp, input, index, source, dim):
    dim = _dim_index(
        xp, input, dim, index, "index_copy", IndexError, "index_copy_(): ", source=source
    )
    out = xp.array(input)
    if out.ndim == 0:
        out[...] = source
        return out
    _moved(out, dim)[index.reshape(-1)] = _moved(xp.asarray(source), dim)
    return out


index_copy_op = defop(
    "index_copy", _index_copy, nin=3, batch_rule=index_update_rule("copy"),
    vjp=(lambda g, index, dim: index_fill_op.fn(g, index, 0.0, dim=dim), None, lambda g, index, dim: g.index_select(dim, index)),
    jvp=LINEAR,
    samples=lambda make: [
        S((make((3, 4)), 0, np.array([2, 0]), make((2, 4)))),
        S((make((3, 4)), 1, np.array([3, 0, 1]), make((3, 3)))),
        S((make((2, 3, 4)), -2, np.array([1]), make((2, 1, 4)))),
    ],
    error_samples=lambda make: [ErrorInput(S((make((3, 4)), 0, np.array([5]), make((1, 4)))), IndexError, "index 5 is out of bounds for dimension 0 with size 3")],
)  # fmt: skip


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


gather, _ = _dim_api(gather_op)
index_select, _ = _dim_api(index_select_op)
scatter_add_fn, scatter_add_ = _dim_api(scatter_add)
index_add, index_add_ = _dim_api(index_add_op)
index_fill, index_fill_ = _dim_api(index_fill_op)
index_copy, index_copy_ = _dim_api(index_copy_op)


# ------------------------------------------------------------------ take / take_along_dim / put
_TAKE_EMPTY = "take(): tried to take from an empty tensor"
_PUT_EMPTY = "put_(): Tried to put elements into an empty tensor"


def _check_flat_index(index, n: int, empty: str) -> None:
    """take/put: every index must address one of the n elements."""
    if index.size:
        if not n:
            raise IndexError(empty)
        bad = (index >= n) | (index < -n)
        if bad.any():
            v = int(index.reshape(-1)[bad.reshape(-1).argmax()])
            raise IndexError(
                f"out of range: tried to access index {v} on a tensor of {n} elements."
            )


def _take_rule(vmap, args, bdims, attrs):
    """take on each batch element's flattened input: an index of (B, numel)."""
    (x, index), (xb, ib) = args, bdims
    check_index_dtype(index, "take")
    if xb is None:
        return take.fn(x, front(index, ib)), 0
    xf = front(x, xb).reshape(vmap.size, -1)
    with _flat_oob(_TAKE_EMPTY):
        if ib is None:
            return index_op.fn(xf, [index], (1,), tuple(xf.shape)), 0
        i = front(index, ib)
        ar = _batch_arange(vmap, i.dim() - 1, xf.device)
        return index_op.fn(xf, [ar, i], (0, 1), tuple(xf.shape)), 0


def _take(xp, input, index):
    check_index_dtype(index, "take")
    _check_flat_index(index, input.size, _TAKE_EMPTY)
    return input.reshape(-1)[index]


take = defop(
    "take",
    _take,
    out=True,
    vjp=(lambda g, input, index: put_op.fn(zeros_like(input), index, g, True), None),
    jvp=LINEAR,
    batch_rule=_take_rule,
    samples=lambda make: [
        S((make((3, 4)), np.array([[0, 11], [5, 5]]))),
        S((make((2, 3)), np.array([-1, 2, 0]))),
        S((make(()), np.array(0))),
        S((make((3,)), np.zeros(0, dtype=np.int64))),
    ],
    error_samples=lambda make: [
        ErrorInput(
            S((make((3, 4)), np.array([15]))),
            IndexError,
            "out of range: tried to access index 15 on a tensor of 12 elements.",
        ),
        ErrorInput(
            S((make((3, 4)), np.array([1.0], dtype=np.float32))),
            RuntimeError,
            r"take\(\): Expected a long tensor for index, but got Float",
        ),
    ],
    methods=True,
)


def _put_rule(vmap, args, bdims, attrs):
    """put into each batch element's flattened input: index_put on (B, numel)."""
    (x, index, src), (xb, ib, sb) = args, bdims
    check_index_dtype(index, "put")
    ni = _numel(lshape(index, ib))
    ns = _numel(lshape(src, sb)) if isinstance(src, Tensor) else 1
    if ni != ns:
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {ns}, index.numel() = {ni}"
        )
    xf = materialize(vmap, x, xb).reshape(vmap.size, -1)
    if isinstance(src, Tensor):
        if src.dtype != x.dtype:
            src = src.to(x.dtype)
        src = src.reshape(-1) if sb is None else front(src, sb).reshape(vmap.size, -1)
    if ib is None:
        indices, dims = [index.reshape(-1)], (1,)
    else:
        rows = _batch_arange(vmap, 1, xf.device)
        indices, dims = [rows, front(index, ib).reshape(vmap.size, -1)], (0, 1)
    with _flat_oob(_PUT_EMPTY):
        out = index_put_op.fn(xf, indices, src, attrs["accumulate"], dims=dims)
    return out.reshape(vmap.size, *lshape(x, xb)), 0


def _put(xp, input, index, source, accumulate=False):
    check_index_dtype(index, "put")
    _same_dtype("put", input, source)
    n = input.size
    if index.size != (source.size if hasattr(source, "size") else 1):
        raise IndexError(
            f"put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.size}, index.numel() = {index.size}"
        )
    _check_flat_index(index, n, _PUT_EMPTY)
    out = input.copy()
    flat = out.reshape(-1)
    src = xp.asarray(source, dtype=out.dtype).reshape(-1)
    if accumulate:
        xp.add.at(flat, index.reshape(-1), src)
    else:
        flat[index.reshape(-1)] = src
    return flat.reshape(input.shape)


put_op = defop(
    "put", _put, nin=3, batch_rule=_put_rule, layout=preserve,
    vjp=(
        lambda g, index, accumulate: g if accumulate else put_op.fn(g, index, zeros(index.shape, dtype=g.dtype, device=g.device), False),
        None, lambda g, index, source: g.take(index).reshape(source.shape),
    ),
    jvp=LINEAR,
    samples=lambda make: [
        S((make((3, 4)), np.array([[0, 11], [5, 4]]), make((2, 2)))),
        S((make((2, 3)), np.array([-1, 2, 0]), make((3,)))),
        S((make((2, 3)), np.array([1, 2, 1]), make((3,))), {"accumulate": True}),
        S((make(()), np.array(0), make(()))),
    ],
    error_samples=lambda make: [ErrorInput(S((make((3, 4)), np.array([15]), make((1,)))), IndexError, "out of range: tried to access index 15 on a tensor of 12 elements.")],
    methods=True, inplace=True,
)  # fmt: skip


def _take_along_dim_rule(vmap, args, bdims, attrs):
    """The batch first (an unbatched operand gets a size-1 batch dim: the kernel
    broadcasts), ``dim`` shifted; dim=None is take on the flattened indices."""
    (x, index), (xb, ib) = args, bdims
    check_index_dtype(index, "take_along_dim")
    dim = attrs["dim"]
    if dim is None:
        return vmap.call(lambda a, i: take.fn(a, i.reshape(-1)), args, bdims)
    n, ni = lrank(x, xb), lrank(index, ib)
    if n != ni:
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of dimensions, "
            f"but got {n} dimensions for input, and {ni} dimensions for indices"
        )
    xf = front(x, xb) if xb is not None else x.unsqueeze(0)
    i = front(index, ib) if ib is not None else index.unsqueeze(0)
    if n == 0:
        wrap_dim(dim, 0)
        out = take_along_dim.fn(xf.unsqueeze(1), i.unsqueeze(1), 1)
        return out.reshape(out.shape[0]), 0
    return take_along_dim.fn(xf, i, pdim(dim, n)), 0


def _take_along_dim(xp, input, indices, dim=None):
    check_index_dtype(indices, "take_along_dim")
    if dim is None:
        return _take(xp, input, indices.reshape(-1))
    if input.ndim != indices.ndim:
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of dimensions, "
            f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices"
        )
    if input.ndim == 0:
        return _as1d(_gather)(xp, input, indices, dim=dim)
    dim = wrap_dim(dim, input.ndim)
    bshape = np.broadcast_shapes(
        tuple(1 if d == dim else s for d, s in enumerate(input.shape)),
        tuple(1 if d == dim else s for d, s in enumerate(indices.shape)),
    )
    x = xp.broadcast_to(
        input, tuple(input.shape[d] if d == dim else s for d, s in enumerate(bshape))
    )
    i = xp.broadcast_to(
        indices, tuple(indices.shape[d] if d == dim else s for d, s in enumerate(bshape))
    )
    return _gather(xp, x, i, dim=dim)


def _take_along_dim_vjp(g, input, indices, dim):
    if dim is None:
        return put_op.fn(zeros_like(input), indices.reshape(-1), g, True)
    if input.dim() == 0:
        return g.sum()
    d = dim % input.dim()
    bshape = np.broadcast_shapes(
        tuple(1 if k == d else s for k, s in enumerate(input.shape)),
        tuple(1 if k == d else s for k, s in enumerate(indices.shape)),
    )
    base = zeros(
        tuple(input.shape[k] if k == d else s for k, s in enumerate(bshape)),
        dtype=g.dtype,
        device=g.device,
    )
    idx = indices.expand(tuple(indices.shape[k] if k == d else s for k, s in enumerate(bshape)))
    return scatter_add.fn(base, idx, g, dim=d)


take_along_dim = defop(
    "take_along_dim",
    _take_along_dim,
    nin=2,
    out=True,
    vjp=(_take_along_dim_vjp, None),
    jvp=LINEAR,
    batch_rule=_take_along_dim_rule,
    samples=lambda make: [
        S((make((3, 4)), make.index((2, 4), 3), 0)),
        S((make((3, 4)), make.index((3, 1), 4), 1)),
        S((make((3, 1)), make.index((1, 5), 3), 0)),
        S((make((2, 3)), make.index((4,), 6))),
        S((make((3, 4)), make.index((2, 4), 3)), {"dim": -2}),
    ],
    error_samples=lambda make: [
        ErrorInput(
            S((make((3, 4)), np.array([[1.0]], dtype=np.float32), 0)),
            RuntimeError,
            "dtype of indices should be Long but got Float",
        )
    ],
    methods=True,
)


# ------------------------------------------------------------------ masked ops
def _check_mask(mask, name: str, np_style: bool = False):
    if not hasattr(mask, "dtype") or mask.dtype.kind != "b":
        d = _tname(mask).lower() if not np_style else _tname(mask)
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype {d}")


def _mask_broadcast(mask, input) -> tuple:
    """The shape mask and input broadcast to (PyTorch expands the mask first)."""
    msg = broadcast_mismatch((mask.shape, input.shape))
    if msg is not None:
        raise RuntimeError(msg)
    return np.broadcast_shapes(input.shape, mask.shape)


def _masked_fill(xp, input, mask, value):
    _check_mask(mask, "masked_fill_")
    if hasattr(value, "ndim") and value.ndim:
        raise RuntimeError(
            f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.ndim} dimension(s)."
        )
    try:
        return xp.where(mask, xp.asarray(value, dtype=input.dtype), input).astype(input.dtype)
    except ValueError:
        _mask_broadcast(mask, input)  # PyTorch's text: the mask's shape first
        raise


def _masked_samples(make, with_value):
    def mask(shape):
        return make.rng.random(shape) < 0.5

    v = (lambda: make(())) if with_value else None
    yield S((make((3, 4)), mask((3, 4)), v() if v else make((12,))))
    yield S((make((3, 4)), mask((4,)), v() if v else make((13,))))
    yield S((make((4,)), mask((3, 4)), v() if v else make((3, 4))))
    yield S((make(()), np.array(True), v() if v else make((2,))))
    yield S((make((0, 3)), mask((0, 3)), v() if v else make((1,))))


def _masked_fill_rule(vmap, args, bdims, attrs):
    """Elementwise over input and mask; a batched value goes through where()."""
    (x, mask, value), (xb, mb, vb) = args, bdims
    rank = max(lrank(x, xb), lrank(mask, mb))
    xf = x if xb is None else pad_to(front(x, xb), rank)
    mf = mask if mb is None else pad_to(front(mask, mb), rank)
    if vb is None:
        return masked_fill_op.fn(xf, mf, value), 0
    if lrank(value, vb):
        raise RuntimeError(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{lrank(value, vb)} dimension(s)."
        )
    if mask.dtype.name != "bool":
        raise RuntimeError(
            "masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{mask.dtype.scalar_name.lower()}"
        )
    v = front(value, vb).to(x.dtype).reshape(vmap.size, *((1,) * rank))
    return where(mf, v, xf), 0


masked_fill_op = defop(
    "masked_fill", _masked_fill, nin=3,
    vjp=(lambda g, mask: g.masked_fill(mask, 0.0), None, lambda g, mask: where(mask, g, 0.0).sum()),
    jvp=LINEAR, batch_rule=_masked_fill_rule,
    node_name=lambda value: "MaskedFillBackward0" if value is None else "MaskedFillBackward1",
    samples=lambda make: [*_masked_samples(make, True), S((make((2, 3)), make.rng.random((2, 3)) < 0.5, -1.5))],
    error_samples=lambda make: [
        ErrorInput(S((make((3, 4)), np.ones(4, dtype=np.float32), 1.0)), RuntimeError, "masked_fill_ only supports boolean masks, but got mask with dtype float"),
        ErrorInput(S((make((3, 4)), np.ones(4, dtype=bool), make((1,)))), RuntimeError, "masked_fill_ only supports a 0-dimensional value tensor"),
    ],
    methods=True, inplace=True,
)  # fmt: skip


def _masked_scatter(xp, input, mask, source):
    _same_dtype("masked_scatter", input, source)
    _check_mask(mask, "masked_scatter_", np_style=True)
    shape = _mask_broadcast(mask, input)
    out = xp.array(xp.broadcast_to(input, shape))
    m = xp.broadcast_to(mask, shape)
    n = int(m.sum())
    if n > source.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out[m] = source.reshape(-1)[:n]
    return out


def _masked_scatter_rule(vmap, args, bdims, attrs):
    """Each batch element takes its own source from the start. An unbatched mask runs the
    kernel once with the batch dim last (the source as (numel, B)); a batched mask picks
    source elements by a running count of the mask."""
    (x, mask, src), (xb, mb, sb) = args, bdims
    rank = max(lrank(x, xb), lrank(mask, mb))
    b = vmap.size
    xf = pad_to(materialize(vmap, x, xb), rank)
    s = materialize(vmap, src, sb).reshape(b, -1)
    if mb is None:
        out = masked_scatter_op.fn(xf.movedim(0, -1), mask.unsqueeze(-1), s.movedim(0, 1))
        return out, rank
    if mask.dtype.name != "bool":
        _check_mask(np.empty(0, mask.dtype.np), "masked_scatter_", np_style=True)
    shape = np.broadcast_shapes(lshape(x, xb), lshape(mask, mb))
    mf = pad_to(front(mask, mb), rank).expand(b, *shape)
    xf = xf.expand(b, *shape)
    if s.shape[1] == 0:  # nothing to take: the kernel checks that nothing is selected
        return masked_scatter_op.fn(xf, mf, s), 0
    flat = mf.reshape(b, -1)
    pos = (flat.cumsum(1) - 1).clamp(min=0)
    try:
        vals = s.gather(1, pos)
    except RuntimeError as e:
        if _OOB.fullmatch(str(e)) is None:
            raise
        raise RuntimeError("Number of elements of source < number of ones in mask") from None
    out = where(flat, vals.to(x.dtype), xf.reshape(b, -1))
    return out.reshape(b, *shape), 0


def _masked_scatter_vjp_src(g, mask, source):
    # The k-th selected element of g goes to source element k: a running count of the mask
    # places them (no masked_select, whose length would differ across a batched mask).
    n = source.numel()
    if n == 0:
        return zeros(source.shape, dtype=g.dtype, device=g.device)
    m = mask.expand(g.shape).reshape(-1)
    pos = (m.cumsum(0) - 1).clamp(min=0)
    vals = where(m, g.reshape(-1), 0.0)
    return scatter_add.fn(zeros(n, dtype=g.dtype, device=g.device), pos, vals, dim=0).reshape(
        source.shape
    )


masked_scatter_op = defop(
    "masked_scatter", _masked_scatter, nin=3,
    vjp=(lambda g, mask: g.masked_fill(mask, 0.0), None, _masked_scatter_vjp_src), jvp=LINEAR, batch_rule=_masked_scatter_rule,
    samples=lambda make: list(_masked_samples(make, False)),
    error_samples=lambda make: [
        ErrorInput(S((make((3, 4)), np.ones(4, dtype=np.float32), make((12,)))), RuntimeError, "masked_scatter_ only supports boolean masks, but got mask with dtype Float"),
        ErrorInput(S((make((3, 4)), np.ones(4, dtype=bool), make((2,)))), RuntimeError, "Number of elements of source < number of ones in mask"),
    ],
    methods=True, inplace=True,
)  # fmt: skip


def _masked_select(xp, input, mask):
    if not hasattr(mask, "dtype") or mask.dtype.kind != "b":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = _mask_broadcast(mask, input)
    return xp.broadcast_to(input, shape)[xp.broadcast_to(mask, shape)]


_MASKED_SELECT = (
    "vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot support "
    "this because for each batch this would return a differently shaped Tensor. Please file an "
    "issue at https://github.com/pytorch/pytorch/issues if you need this feature."
)


def _masked_select_rule(vmap, args, bdims, attrs):
    (x, mask), (xb, mb) = args, bdims
    if mb is not None:
        raise RuntimeError(_MASKED_SELECT)
    xf = pad_to(front(x, xb), max(lrank(x, xb), mask.dim()))
    return masked_select.fn(xf, mask).reshape(vmap.size, -1), 0


def _masked_select_vjp(g, input, mask):
    shape = np.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    return masked_scatter_op.fn(zeros(shape, dtype=g.dtype, device=g.device), mask, g)


masked_select = defop(
    "masked_select",
    _masked_select,
    out=True,
    vjp=(_masked_select_vjp, None),
    jvp=LINEAR,
    batch_rule=_masked_select_rule,
    test={"vmap_unbatched": (1,)},
    samples=lambda make: [
        S((make((3, 4)), make.rng.random((3, 4)) < 0.5)),
        S((make((3, 4)), make.rng.random((4,)) < 0.5)),
        S((make((4,)), make.rng.random((2, 4)) < 0.5)),
        S((make(()), np.array(True))),
    ],
    error_samples=lambda make: [
        ErrorInput(
            S((make((3, 4)), np.ones(4, dtype=np.float32))),
            RuntimeError,
            "masked_select: expected BoolTensor for mask",
        )
    ],
    methods=True,
)


masked_select.fn.__doc__ = """The elements of ``input`` where ``mask`` holds, as a 1-d tensor.

Under vmap, as in PyTorch, a batched ``mask`` is an error (each batch element could select
a different count); a batched ``input`` with an unbatched mask selects the same count from
every element and gives a (B, count) result.
"""


# ------------------------------------------------------------------ nonzero / argwhere / one_hot
def _dynamic_shape(op):
    """Ops whose output shape depends on the data: an error under vmap, as in PyTorch."""

    def rule(vmap, args, bdims, attrs):
        raise RuntimeError(
            "vmap: We do not support batching operators that can output dynamic shape. "
            f"Attempted to vmap over aten::{op.name}. Please file an issue at "
            "https://github.com/pytorch/pytorch/issues if you need this feature."
        )

    return rule


dynamic_shape = rule_generator(_dynamic_shape)


def _argwhere(xp, input):
    return xp.argwhere(input).astype(xp.int64)


def _nonzero_samples(make):
    for shape in ((5,), (3, 4), (), (0, 3), (2, 3, 2)):
        x = np.asarray(make(shape))
        if x.ndim:
            x.reshape(-1)[::2] = 0
        yield S((x,))
    yield S((make((3, 4)),), {"as_tuple": True})
    yield S((np.asarray(make(())),), {"as_tuple": True})
    yield S((np.zeros((), dtype=make.dtype),), {"as_tuple": True})


nonzero_op = defop(
    "nonzero", _argwhere, samples=_nonzero_samples, batch_rule=dynamic_shape(),
    test={"dtypes": FLOATS_INT_BOOL, "vmap": "dynamic"}, layout=column_major,
)  # fmt: skip


def nonzero(input: Tensor, *, out=None, as_tuple: bool = False):
    """Indices of the nonzero elements: an (n, ndim) tensor, or one tensor per dim."""
    r = dispatch(nonzero_op, (input,), {})
    if as_tuple:
        if input.dim() == 0:
            return (zeros(r.shape[0], dtype=dt.int64, device=r.device),)
        return tuple(r[:, i] for i in range(input.dim()))
    if out is not None:
        from .._core.dispatch import write_out

        return write_out(out, r)
    return r


argwhere = defop(
    "argwhere",
    _argwhere,
    samples=lambda make: [s for s in _nonzero_samples(make) if not s.kwargs],
    batch_rule=dynamic_shape(),
    test={"dtypes": FLOATS_INT_BOOL, "vmap": "dynamic"},
    methods=True,
    layout=column_major,
)


def _one_hot(xp, tensor, num_classes=-1):
    if tensor.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if tensor.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max()) + 1
    if tensor.size:
        if int(tensor.min()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(tensor.max()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return (tensor[..., None] == xp.arange(num_classes)).astype(xp.int64)


def _one_hot_rule(vmap, args, bdims, attrs):
    """Elementwise on the index; the class count must be given (as in PyTorch: inferring it
    would need the maximum over the batch)."""
    n = attrs["num_classes"]
    if n is None or n < 1:
        raise RuntimeError(
            "When vmap-ing torch.nn.functional.one_hot, please provide an explicit positive "
            "num_classes argument."
        )
    return one_hot.fn(front(args[0], bdims[0]), n), 0


# Inferred class counts (an error under vmap) are tested in test_vmap_indexing.py.
one_hot = defop(
    "one_hot", _one_hot, nin=1, api="nn.functional.one_hot", oracle="nn.functional.one_hot",
    batch_rule=_one_hot_rule,
    samples=lambda make: [
        S((make.index((5,), 4), 4)), S((make.index((2, 3), 3), 5)), S((np.array(2), 3)),
        S((np.zeros(0, dtype=np.int64), 3)),
    ],
    error_samples=lambda make: [
        ErrorInput(S((np.array([-1]),)), RuntimeError, "Class values must be non-negative."),
        ErrorInput(S((np.array([3]), 2)), RuntimeError, "Class values must be smaller than num_classes."),
        ErrorInput(S((np.zeros(0, dtype=np.int64),)), RuntimeError, "Can not infer total number of classes from empty tensor."),
        ErrorInput(S((np.array([1.0]),)), RuntimeError, "one_hot is only applicable to index tensor of type LongTensor."),
    ],
    test={"dtypes": ("int64",)},
)  # fmt: skip


def _method(fn):
    def m(self, *args, **kw):
        return fn(self, *args, **kw)

    m.__name__ = fn.__name__
    return m


tensor_methods(
    {
        "__getitem__": tensor_getitem,
        "__setitem__": tensor_setitem,
        "gather": _method(gather),
        "index_select": _method(index_select),
        "index_put": _method(index_put),
        "index_put_": index_put_,
        "scatter": _method(scatter),
        "scatter_": scatter_,
        "scatter_add": _method(scatter_add_fn),
        "scatter_add_": scatter_add_,
        "scatter_reduce": _method(scatter_reduce),
        "scatter_reduce_": scatter_reduce_,
        "index_add": _method(index_add),
        "index_add_": index_add_,
        "index_fill": _method(index_fill),
        "index_fill_": index_fill_,
        "index_copy": _method(index_copy),
        "index_copy_": index_copy_,
        "nonzero": _method(nonzero),
        "zero_": zero_,
    }
)
