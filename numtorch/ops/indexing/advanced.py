"""Advanced indexing: ``index`` (tensor and mask indices; a copy) and ``index_put`` /
``index_put_``, with PyTorch's checks of the indices and their batch rules."""

from __future__ import annotations

from functools import partial

import numpy as np

from ..._core import dtype as dt
from ..._core.device import defer_check
from ..._core.dispatch import dispatch
from ..._core.inplace import run_inplace
from ..._core.layout import contiguous, preserve, relayout
from ..._core.meta import by_kernel, by_kernel_or_input_shaped, mixed_devices
from ..._core.meta_array import has_values
from ..._core.methods import tensor_methods
from ..._core.op import LINEAR, ErrorInput, defop
from ..._core.policy import BatchedWrite, InplacePolicy, Overlap
from ..._core.tensor import Tensor
from ..._opdb.samples import S
from .._add_at import add_at
from .._batching import front, lrank, lshape, materialize, pad_to
from .._families import COMPLEX_TOO
from ..comparison import where
from ..creation import tensor, zeros
from ._common import _INT_KINDS, _add_rows, _batch_arange, _method, _numel, _tname

_MASK_DYNAMIC = (
    "vmap: We do not support batching operators that can support dynamic shape. Attempting to "
    "batch over indexing with a boolean mask."
)


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
    if not all(has_values(key[j]) for _, j, _ in ints):
        return key
    bad = [(p, j, (key[j] >= size) | (key[j] < -size)) for p, j, size in ints]
    visited = n and 0 not in (s for _, s in free)
    if xp is not np:
        return _deferred_bounds(xp, key, bad, bshape, sizes, visited)
    if not any(b.any() for _, _, b in bad):
        return key
    if not visited:  # the result is empty: PyTorch visits no entry
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


def _deferred_bounds(xp, key: tuple, bad: list, bshape: tuple, sizes: list, visited) -> tuple:
    """``_check_adv_key``'s bounds check on a GPU: kept on the device until the next
    synchronization (PyTorch's device-side assert) where the result has elements; the key
    comes back with its bad entries zeroed."""
    if not bad:
        return key
    key = list(key)
    if visited:
        found, where = [], []
        for p, j, b in bad:
            flat = b.reshape(-1)
            at = flat.argmax()  # (its first bad entry comes first in the broadcast order too)
            found.extend((flat.any(), at, key[j].reshape(-1)[at]))
            where.append((p, tuple(b.shape)))
        verdict = found[0] if len(bad) == 1 else xp.stack(found[::3]).any()
        defer_check(verdict, partial(_first_out_of_bounds, where, bshape, sizes), *found)
    for _, j, b in bad:
        key[j] = xp.where(b, 0, key[j])
    return tuple(key)


def _first_out_of_bounds(where: list, bshape: tuple, sizes: list, *found) -> IndexError:
    """The error for the first bad entry over the broadcast shape, then index by index, from
    each index tensor's (any bad, its first bad entry, that entry's value)."""
    first = None
    for k, (p, shape) in enumerate(where):
        any_bad, at, v = found[3 * k : 3 * k + 3]
        if any_bad:
            coords = (0,) * (len(bshape) - len(shape)) + np.unravel_index(at, shape)
            pos = int(np.ravel_multi_index(coords, bshape)) if bshape else 0
            if first is None or pos < first[0]:
                first = (pos, p, v)
    _, p, v = first
    return IndexError(f"index {v} is out of bounds for dimension {p} with size {sizes[p]}")


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
        out = index(xf, idx, tuple(d + 1 for d in dims), tuple(xf.shape))
        return out, 0 if adjacent else rank
    new = [t if b is None else pad_to(front(t, b), rank) for t, b in zip(idx, ibs)]
    if xb is None:
        return index(x, new, dims, tuple(x.shape)), dims[0] if adjacent else 0
    xf = front(x, xb)
    ar = _batch_arange(vmap, rank, xf.device)
    out = index(xf, [ar, *new], (0, *(d + 1 for d in dims)), tuple(xf.shape))
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
        return _raw_index_put(xf, idx, v, acc, dims=shifted), 0
    new = [t if b is None else pad_to(front(t, b), rank) for t, b in zip(idx, ibs)]
    ar = _batch_arange(vmap, rank, xf.device)
    if isinstance(v, Tensor):
        d0 = dims[0]
        if adjacent and d0:  # the indexed region is (B, *broadcast, *other dims)
            v = _fit_rank(v, vb, region)
            v = v.movedim(list(range(lead + d0, lead + d0 + rank)), list(range(lead, lead + rank)))
        elif lead:
            v = _fit_rank(v, vb, region)
    return _raw_index_put(xf, [ar, *new], v, acc, dims=(0, *shifted)), 0


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
    _check_values_dtype(input, values)
    key = _adv_key(xp, input, indices, dims, getattr(values, "shape", ()))
    return _put_at(xp, input, key, values, accumulate)


def _check_values_dtype(input, values) -> None:
    if hasattr(values, "dtype") and values.dtype != input.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_tname(input)} for the destination and {_tname(values)} for the source."
        )


def _index_put_first(op, arrays, attrs):
    """index_put_'s check that PyTorch makes before its overlap check; False where it fills
    through a lone mask with one value instead (masked_fill_, which checks no overlap)."""
    input, indices, values = arrays
    _check_values_dtype(input, values)
    one = getattr(values, "size", 1) == 1
    if not attrs["accumulate"] and one and len(indices) == 1 and indices[0].dtype.kind == "b":
        return False
    return None


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
        k
        for part in key
        for k in (
            xp.nonzero(part) if hasattr(part, "dtype") and part.dtype.kind == "b" else (part,)
        )
    )
    if len(key) == 1 and hasattr(key[0], "dtype"):  # whole rows: x[idx] += values
        idx = key[0].reshape(-1)
        rows = xp.broadcast_to(values, (*key[0].shape, *out.shape[1:]))
        idx = xp.where(idx < 0, idx + out.shape[0], idx)
        _add_rows(xp, out, idx, rows.reshape(idx.size, *out.shape[1:]))
    else:
        add_at(xp, out, key, values)


def _index_put_vjp_input(g, indices, accumulate, dims):
    return g if accumulate else _raw_index_put(g, indices, 0.0, False, dims=dims)


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
        S((x, np.array([True, False]))),
        IndexError,
        r"The shape of the mask \[2\] at index 0 does not match the shape of the indexed tensor",
    )


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


def _selects_by_mask(args, attrs) -> bool:
    """A boolean index (uint8: PyTorch's deprecated masks) selects a value-dependent count."""
    return any(isinstance(i, Tensor) and i.dtype in (dt.bool_, dt.uint8) for i in args[1])


def _index_vjp_input(g, indices, dims, shape):
    zero = zeros(shape, dtype=g.dtype, device=g.device)
    return _raw_index_put(zero, indices, g, True, dims=dims)


index_p = defop(
    "index",
    _index,
    nin=2,
    list_inputs=(1,),
    vjp=(_index_vjp_input, None),
    jvp=LINEAR,
    api="Tensor.__getitem__",
    samples=_index_samples,
    error_samples=_index_errors,
    batch_rule=_index_rule,
    layout=_index_layout,
    value_shaped=_selects_by_mask,
    test=COMPLEX_TOO,
    complex32=True,
    meta=mixed_devices(by_kernel),
)
index = index_p.fn


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
        S((x, (np.array([5]),), make(()))),
        IndexError,
        "index 5 is out of bounds for dimension 0 with size 3",
    )
    yield ErrorInput(S((x, (np.array([1.0]),), make(()))), IndexError, "tensors used as indices")
    yield ErrorInput(
        S((x, (np.array([1]),), make((), dtype=np.float64))),
        RuntimeError,
        "Index put requires the source and destination dtypes match, got Float for the "
        "destination and Double for the source.",
    )


index_put_p = defop(
    "index_put",
    _index_put,
    nin=3,
    list_inputs=(1,),
    vjp=(
        _index_put_vjp_input,
        None,
        lambda g, indices, dims: index(g, indices, dims, tuple(g.shape)),
    ),
    jvp=LINEAR,
    samples=_index_put_samples,
    error_samples=_index_put_errors,
    batch_rule=_index_put_rule,
    layout=preserve,
    inplace_policy=InplacePolicy(shared_ok=True, batched=BatchedWrite.PLAIN),
    overlap=Overlap(full=(1, 2), first=_index_put_first),
    test=COMPLEX_TOO,
    complex32=True,
    meta=by_kernel_or_input_shaped,
)
_raw_index_put = index_put_p.fn


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


def _check_count(input: Tensor, indices) -> None:
    if len(indices) > input.dim():
        raise IndexError(
            f"too many indices for tensor of dimension {input.dim()} (got {len(indices)})"
        )


def index_put(input: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """Out-of-place ``input[indices] = values`` (``+=`` when ``accumulate``)."""
    _check_count(input, indices)
    ts, dims = _split_indices(indices)
    return dispatch(index_put_p, (input, ts, values), {"accumulate": accumulate, "dims": dims})


def index_put_(self: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """In-place ``self[indices] = values`` (``+=`` when ``accumulate``)."""
    _check_count(self, indices)
    ts, dims = _split_indices(indices)
    return run_inplace(index_put_p, self, (ts, values), {"accumulate": accumulate, "dims": dims})


tensor_methods(
    {
        "index_put": _method(index_put),
        "index_put_": index_put_,
    }
)
