"""Basic indexing: ``getitem`` (a key of ints, slices, None and Ellipsis; a view) and its
backward ``getitem_backward``."""

from __future__ import annotations

from ..._core import dtype as dt
from ..._core.meta import by_kernel
from ..._core.op import LINEAR, ErrorInput, defop
from ..._opdb.samples import S
from .._batching import front
from .._families import COMPLEX_TOO


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
    return dt.as_strided(xp, out, out.shape, strides)


def _getitem_backward(xp, grad, shape, index):
    out = xp.zeros(shape, grad.dtype)
    out[index] = grad
    return out


def _batch_key(index) -> tuple:
    """A basic index for a batch-first value: a full slice for the batch dim first."""
    return (slice(None), *(index if isinstance(index, tuple) else (index,)))


def _getitem_rule(vmap, args, bdims, attrs):
    x = front(args[0], bdims[0])
    return getitem(x, _batch_key(attrs["index"]), tuple(x.shape)), 0


def _getitem_backward_rule(vmap, args, bdims, attrs):
    g = front(args[0], bdims[0])
    return getitem_backward(g, (vmap.size, *attrs["shape"]), _batch_key(attrs["index"])), 0


def _getitem_backward_samples(make):
    yield S((make((2,)), (3, 4), (slice(0, 2), 1)))
    yield S((make((3, 1, 2)), (3, 4), (slice(None), None, slice(1, 4, 2))))


getitem_backward_p = defop(
    "getitem_backward",
    _getitem_backward,
    nin=1,
    vjp=lambda g, index, shape: getitem(g, index, shape),
    jvp=LINEAR,
    api="ops.indexing.getitem_backward",
    test={"no_oracle": True},
    batch_rule=_getitem_backward_rule,
    samples=_getitem_backward_samples,
    complex32=True,
)
getitem_backward = getitem_backward_p.fn


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


getitem_p = defop(
    "getitem",
    _getitem,
    nin=1,
    vjp=lambda g, index, shape: getitem_backward(g, shape, index),
    jvp=LINEAR,
    view=True,
    api="Tensor.__getitem__",
    samples=_basic_samples,
    error_samples=_basic_errors,
    node_name=lambda index, shape: _basic_node_name(index, shape),
    batch_rule=_getitem_rule,
    float8=True,  # (PyTorch copies float8)
    test=COMPLEX_TOO,
    meta=by_kernel,
)
getitem = getitem_p.fn
