"""Max pooling over 1 to 3 spatial dims, its indices, and max unpooling.

One N-d kernel over the last ``nd`` dims; every leading dim is a plane (batch, channels,
and a vmap batch folded in front), so the 1d/2d/3d functions are generated from it and the
batch rule only moves the batch dim first. The indices are flat indices into each input
plane (int64), as in PyTorch; the backward of every max pool (adaptive and fractional
included) is one scatter-add primitive (``max_pool_backward``), whose vjp is a gather
(``max_pool_gather``), and ``max_unpool`` is the same scatter with assignment.

Where nothing can see the indices (no gradient recorded, no transform but vmap), the public
functions run ``max_pool{nd}d_values``, a values-only primitive, as PyTorch's CPU max_pool2d
runs its kernel without indices. Windows that tile the input (stride = kernel, no padding,
no dilation) are strided slices of it, reduced one dim at a time; their backward writes
each gradient once (no accumulation: each input position is in one window at most).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from .._core.autocast_state import uncast
from .._core.dispatch import dispatch
from .._core.interpreter import Kind, WrapperTensor
from .._core.meta import by_kernel
from .._core.meta_array import has_values
from .._core.no_kernel import unless_empty
from .._core.op import LINEAR, ErrorInput, Op, defop
from .._core.state import state
from .._core.tensor import Tensor
from .._opdb.samples import S
from ..ops._batching import batch_first, front, rule_generator
from ..ops.reduction import distinct
from ._pool_geometry import (
    _along,
    _check_dtype,
    _extent,
    _geometry,
    _lowest,
    _out_len,
    _out_sizes,
    _padded,
    _pool_errors,
    _shape,
    _tup,
    _windows,
)


# ------------------------------------------------------------------ max pool
def _max1d_geometry(x, kernel_size, stride, padding, dilation, ceil_mode):
    """The checks of PyTorch's max_pool1d without indices, in its own words."""

    def one(v, what: str, kinds: str = "an int, list of ints or tuple of ints") -> int:
        if isinstance(v, (int, np.integer)):
            return int(v)
        if len(v) != 1:
            raise RuntimeError(
                f"max_pool1d() {what} must be {kinds} of size 1 but got size {len(v)}"
            )
        return int(v[0])

    k = one(kernel_size, "kernel_size")
    omitted = stride is None or (not isinstance(stride, int) and len(stride) == 0)
    s = k if omitted else one(stride, "stride", "None, an int, list of ints, or tuple of ints")
    p, d = one(padding, "padding"), one(dilation, "dilation")
    r = x.dim()
    if r not in (2, 3) or x.shape[-1] == 0 or x.shape[-2] == 0:
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{_shape(x)}"
        )
    for what, v in (("kernel_size", k), ("stride", s)):
        if v <= 0:
            raise RuntimeError(f"max_pool1d() {what} must be greater than zero, but got {v}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    if p > k // 2:
        raise RuntimeError(
            "max_pool1d() padding should be at most half of kernel size, but got "
            f"padding={p} and kernel_size={k}"
        )
    o = _out_len(x.shape[-1], k, s, p, d, ceil_mode)
    if o < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {o}")
    return (k,), (s,), (p,), (d,)


def _first_max(xp, views):
    """The elementwise maximum of same-shaped arrays, and which one first attains it (the
    last NaN where it is NaN, as PyTorch's scan takes every NaN it meets)."""
    values = _fold_max(xp, views)
    # arg = miss_0 * (1 + miss_1 * (1 + ...)): a pass per array, no masked copies.
    kind = xp.uint8 if len(views) <= 256 else xp.int64
    arg = xp.zeros(values.shape, kind)
    for v in reversed(views[:-1]):
        arg = (v != values) * (arg + kind(1))
    # (on a GPU the NaN pass always runs: asking whether it is needed would synchronize)
    if values.dtype.kind == "f" and has_values(values) and (xp is not np or xp.isnan(values).any()):
        for j, v in enumerate(views):
            xp.copyto(arg, kind(j), where=xp.isnan(v))
    return values, arg


def _fold_max(xp, views):
    """The elementwise maximum of same-shaped arrays, a fresh array; of equal values (0.0
    and -0.0) the first, as PyTorch's scan keeps the first (NumPy's maximum gives its second
    operand on a tie)."""
    values = views[0].copy() if len(views) < 2 else xp.maximum(views[1], views[0])
    for v in views[2:]:
        xp.maximum(v, values, out=values)
    return values


def _tiles(k, s, p, d) -> bool:
    """Whether the windows tile the input: side by side (stride = kernel), no padding, no
    dilation, so each input position is in one window at most."""
    return k == s and p.count(0) == len(p) and d.count(1) == len(d)


def _tiled_max(xp, x, k, out):
    """Max pooling of tiling windows, values only: a maximum of strided slices one dim at a
    time, the last first (so that of equal values the first in row-major order is kept, as
    by PyTorch)."""
    nd = len(k)
    for j in range(nd - 1, -1, -1):
        kj, oj = k[j], out[j]
        if kj == 1:
            continue
        lead = (slice(None),) * (x.ndim - nd + j)
        stop = oj * kj
        whole = x.shape[len(lead)] - (oj - 1) * kj  # (ceil mode: the last window is short)
        first, m = x[(*lead, slice(0, stop, kj))], None
        for i in range(1, kj):
            v = x[(*lead, slice(i, stop, kj))]
            if i >= whole:  # (a view one window shorter)
                m = first.copy() if m is None else m
                cut = (*lead, slice(0, oj - 1))
                xp.maximum(v, m[cut], out=m[cut])
            elif m is None:
                m = xp.maximum(v, first)
            else:
                xp.maximum(v, m, out=m)
        x = m
    return x.copy() if k.count(1) == nd else x


_cached_sizes = functools.lru_cache(maxsize=256)(_out_sizes)


def _counts(size, k, s, p, d, ceil_mode) -> tuple[int, ...]:
    """The windows along each dim (``_out_sizes``, kept per geometry: a call per pool)."""
    try:
        return _cached_sizes(size, k, s, p, d, ceil_mode)
    except TypeError:  # (lists given: unhashable)
        return _out_sizes(size, k, s, p, d, ceil_mode)


def _max_pool_values(xp, input, kernel_size, stride, padding, dilation, ceil_mode):
    k, s, p, d = kernel_size, stride, padding, dilation
    nd = len(k)
    out = _counts(input.shape[-nd:], k, s, p, d, ceil_mode)
    if _tiles(k, s, p, d):
        return _tiled_max(xp, input, k, out)
    win = _windows(xp, input, k, s, p, d, out, _lowest(xp, input.dtype))
    return _fold_max(xp, [win[(Ellipsis, *o)] for o in np.ndindex(*k)])


def _deltas(xp, k, d, planes):
    """Each window offset's step within the plane, in ``np.ndindex(*k)``'s order, computed
    where the input is (a table built on the host would be a copy per call)."""
    pos = xp.arange(math.prod(k), dtype=xp.int64)
    delta = xp.zeros(pos.shape, xp.int64)
    for j in range(len(k)):
        delta += (pos // math.prod(k[j + 1 :]) % k[j]) * (d[j] * planes[j])
    return delta


_FEW = 1 << 14  # input elements up to which ``_tiled_argmax`` is the faster scan


def _tiled_argmax(xp, x, k, out):
    """Values of tiling windows over x (padded to whole windows) and each one's offset in
    its window (row-major, as ``np.ndindex(*k)``), reduced one dim at a time, the last
    first: a later element replaces the kept one only where greater, so of equal values the
    first in row-major order stays (PyTorch's scan). None where a window holds NaN (its
    index is PyTorch's last NaN's: the general scan finds it)."""
    nd = len(k)
    kind = xp.uint8 if math.prod(k) <= 256 else xp.int64
    m, code, inner = x, None, 1  # inner: the window size of the dims reduced so far
    for j in reversed(range(nd)):
        if k[j] == 1:
            continue
        lead = (slice(None),) * (m.ndim - nd + j)
        cut = [(*lead, slice(i, out[j] * k[j], k[j])) for i in range(k[j])]
        kept = m[cut[0]]
        new = None if code is None else code[cut[0]]
        for i in range(1, k[j]):
            v = m[cut[i]]
            more = v > kept
            kept = xp.maximum(v, kept)  # (the kept one on a tie; NaN spreads, caught below)
            if new is None:  # (the first dim's second offset)
                new = more.astype(kind)
            else:  # (a blend: NumPy's masked copy is many times slower; uint8 wraps back)
                step = kind(i * inner)
                new = new - more * (new - (step if code is None else code[cut[i]] + step))
        m, code, inner = kept, new, inner * k[j]
    if code is None:
        return None
    if m.dtype.kind == "f" and has_values(m):
        # (a NaN sum: a NaN, or inf and -inf; both are rare, and the general scan is exact)
        total = m.sum() if xp is np else None
        if total is None or total != total:
            return None
    return m, code


def _max_pool(xp, input, kernel_size, stride, padding, dilation, ceil_mode):
    k, s, p, d = kernel_size, stride, padding, dilation
    nd = len(k)
    size = input.shape[-nd:]
    out = _counts(size, k, s, p, d, ceil_mode)
    low = _lowest(xp, input.dtype)
    if _tiles(k, s, p, d):  # strided slices (padded only in ceil mode), no window view
        x = _padded(xp, input, p, _extent(out, k, s, d), low)
        # (the dim-by-dim scan makes fewer NumPy calls, the one below fewer passes of memory)
        found = _tiled_argmax(xp, x, k, out) if x.size <= _FEW else None
        if found is not None:
            values, arg = found
            return values, _flat_index(xp, arg, size, k, s, p, d, out)
        cuts = [[slice(i, o * kk, kk) for i in range(kk)] for o, kk in zip(out, k)]
        views = [x[(Ellipsis, *(c[i] for c, i in zip(cuts, o)))] for o in np.ndindex(*k)]
    else:
        win = _windows(xp, input, k, s, p, d, out, low)
        views = [win[(Ellipsis, *o)] for o in np.ndindex(*k)]
    values, arg = _first_max(xp, views)
    index = _flat_index(xp, arg, size, k, s, p, d, out)
    if any(p):  # a window of lowest values only picks its first position inside the input
        planes = [math.prod(size[j + 1 :]) for j in range(nd)]
        starts = [xp.arange(out[j], dtype=xp.int64) * s[j] - p[j] for j in range(nd)]
        first = [st + (-(st // d[j])).clip(0) * d[j] for j, st in enumerate(starts)]
        first = sum(_along(f * planes[j], j, nd) for j, f in enumerate(first))
        index = xp.where(values == low, first, index)
    return values, index


def _flat_index(xp, arg, size, k, s, p, d, out):
    """The flat in-plane input index of each window's element ``arg`` (its offset in the
    window, in ``np.ndindex(*k)``'s order): the window's start plus the offset's step."""
    if xp is np:
        try:
            delta, start = _index_tables(tuple(size), k, s, p, d, tuple(out))
        except TypeError:  # (lists given: unhashable)
            delta, start = _index_arrays(xp, size, k, s, p, d, out)
    else:
        delta, start = _index_arrays(xp, size, k, s, p, d, out)
    return delta.take(arg) + start


def _index_arrays(xp, size, k, s, p, d, out):
    nd = len(k)
    planes = [math.prod(size[j + 1 :]) for j in range(nd)]
    starts = [xp.arange(out[j], dtype=xp.int64) * s[j] - p[j] for j in range(nd)]
    return _deltas(xp, k, d, planes), sum(
        _along(st * planes[j], j, nd) for j, st in enumerate(starts)
    )


@functools.lru_cache(maxsize=64)
def _index_tables(size, k, s, p, d, out):
    """``_index_arrays`` on the host, kept per geometry (read-only: results are new)."""
    delta, start = _index_arrays(np, size, k, s, p, d, out)
    delta.flags.writeable = start.flags.writeable = False
    return delta, start


def _scatter(xp, grad, indices, size, accumulate: bool, check: bool = False, unique=False):
    """Per plane: zeros of spatial ``size`` with grad added (or written) at the flat
    ``indices``; leading dims of grad and indices broadcast. ``check``: indices in range
    (else dropped); ``unique``: distinct and in range (a plain assignment writes them)."""
    nd = len(size)
    lead = grad.shape[:-nd]
    if indices.shape[:-nd] != lead:
        lead = np.broadcast_shapes(lead, indices.shape[:-nd])
    osp = indices.shape[-nd:]
    planes, n, m = math.prod(lead), math.prod(size), math.prod(osp)
    g, i = grad, indices
    if g.shape[:-nd] != lead:
        g = xp.broadcast_to(g, lead + osp)
    if i.shape[:-nd] != lead:
        i = xp.broadcast_to(i, lead + osp)
    g, i = g.reshape(planes, m), i.reshape(planes, m)
    if check and i.size and has_values(i):
        bad = (i < 0) | (i >= n)
        if bad.any():
            raise RuntimeError(
                f"Found an invalid max index: {int(i[bad][-1])} (output volumes are of size "
                f"{'x'.join(map(str, size if nd > 1 else (*size, 1)))})"  # 1-d runs as 2-d
            )
    if not (check or unique) and i.size and has_values(i) and (xp is not np or i.max() >= n):
        g, i = xp.where(i < n, g, 0), xp.minimum(i, n - 1)  # see _past_the_plane
    flat = (i + xp.arange(0, planes * n, n, dtype=xp.int64)[:, None]).reshape(-1)
    out = xp.zeros(planes * n, grad.dtype)
    if accumulate:
        xp.add.at(out, flat, g.reshape(-1))
    elif unique:
        out[flat] = g.reshape(-1)
    else:  # (of repeated indices the last value, as PyTorch's unpool writes them)
        xp.put(out, flat, g.reshape(-1))
    return out.reshape(lead + tuple(size))


def _max_pool_backward(xp, grad, indices, size, tiles: bool = False):
    # Tiling windows (``tiles``) feed each input position once at most: a write, no add.at.
    return _scatter(xp, grad, indices, tuple(size), not tiles, unique=tiles)


def _max_pool_gather(xp, input, indices, nd):
    n, m = math.prod(input.shape[-nd:]), math.prod(indices.shape[-nd:])
    x = input.reshape(input.shape[:-nd] + (n,))
    i = indices.reshape(indices.shape[:-nd] + (m,))
    past = i.size and int(i.max()) >= n  # see _past_the_plane
    out = xp.take_along_axis(x, xp.minimum(i, n - 1) if past else i, axis=-1)
    if past:
        out = xp.where(i < n, out, 0)
    return out.reshape(out.shape[:-1] + indices.shape[-nd:])


# _past_the_plane: with dilation, a window can hold padding only (its positions step over
# the input); PyTorch's index for it points past the plane. No input feeds such an output,
# so the scatter drops its gradient and the gather gives it a zero tangent.


def _planes(op: Op) -> Callable:
    """Ops of tensors with the same logical rank whose leading dims broadcast in the
    kernel: the batch dim goes first, an unbatched operand gets a size-1 dim."""

    def rule(vmap, args, bdims, attrs):
        new = tuple(
            (front(a, b) if b is not None else a.unsqueeze(0)) if isinstance(a, Tensor) else a
            for a, b in zip(args, bdims)
        )
        return dispatch(op, new, attrs), 0

    return rule


planes = rule_generator(_planes)


def _pool_indices(make, shape, nd, k=2, s=1, p=0):
    """Valid max-pool indices (from a real pool of distinct values) and their output."""
    k, s, p = (k,) * nd, (s,) * nd, (p,) * nd
    return _max_pool(np, distinct(make, shape), k, s, p, (1,) * nd, False)


def _backward_samples(make):
    _, idx = _pool_indices(make, (2, 2, 4, 5), 2)  # overlapping windows: repeated indices
    yield S((make(idx.shape), idx, (4, 5)))
    _, idx = _pool_indices(make, (2, 6), 1, k=2, s=2)
    yield S((make(idx.shape), idx, (6,)))
    _, idx = _pool_indices(make, (1, 2, 3, 3, 4), 3)
    yield S((make(idx.shape), idx, (3, 3, 4)))
    _, idx = _pool_indices(make, (2, 2, 4, 6), 2, k=2, s=2)  # tiling windows: a write
    yield S((make(idx.shape), idx, (4, 6), True))
    _, idx = _pool_indices(make, (3, 7), 1, k=3, s=3)
    yield S((make(idx.shape), idx, (7,)), {"tiles": True})


def _gather_samples(make):
    _, idx = _pool_indices(make, (2, 2, 4, 5), 2)
    yield S((make((2, 2, 4, 5)), idx, 2))
    _, idx = _pool_indices(make, (3, 6), 1, k=3, s=2)
    yield S((make((3, 6)), idx, 1))


max_pool_backward_p = defop(
    "max_pool_backward",
    _max_pool_backward,
    nin=2,
    jvp=LINEAR,
    vjp=(lambda g, indices, size: max_pool_gather(g, indices, len(size)), None),
    batch_rule=planes(),
    samples=_backward_samples,
    api="nn._pool_max.max_pool_backward",
    test={"no_oracle": True},
)
max_pool_backward = max_pool_backward_p.fn


def _max_pool_gather_vjp(g, input_shape, indices, nd):
    return max_pool_backward(g, indices, tuple(input_shape[-nd:]))


max_pool_gather_p = defop(
    "max_pool_gather",
    _max_pool_gather,
    nin=2,
    jvp=LINEAR,
    vjp=(_max_pool_gather_vjp, None),
    batch_rule=planes(),
    samples=_gather_samples,
    api="nn._pool_max.max_pool_gather",
    test={"no_oracle": True},
)
max_pool_gather = max_pool_gather_p.fn


def _max_pool_samples(nd: int):
    sp = (5, 4, 3)[:nd] if nd < 3 else (3, 4, 3)

    def samples(make):
        # (the first returns the indices: without, an unobserved call runs max_pool_values)
        yield S((distinct(make, (2, 2, *sp)), 2), {"return_indices": True})
        yield S((distinct(make, (2, 2, *sp)), 2))
        yield S((distinct(make, (1, 3, *sp)), 2), {"ceil_mode": True, "return_indices": True})
        yield S((distinct(make, (2, 3, *sp)), 3, 2, 1), {"ceil_mode": True, "return_indices": True})
        yield S((distinct(make, (1, 2, *sp)), 2), {"dilation": 2, "padding": 1, "stride": 1})
        yield S((distinct(make, (2, *sp)), 2, 1), {"return_indices": True})  # unbatched
        yield S((distinct(make, (0, 2, *sp)), 2))
        yield S(
            (distinct(make, (2, 2, *sp[::-1])).swapaxes(-1, -nd), (2, 3, 1)[:nd], (1, 2, 2)[:nd])
        )

    return samples


def _max_pool_vjp(g, input_shape, result, kernel_size):
    return max_pool_backward(g, result[1], tuple(input_shape[-len(kernel_size) :]))


def _windows_vjp(g, input_shape, result, kernel_size, stride, padding, dilation):
    size = tuple(input_shape[-len(kernel_size) :])
    return max_pool_backward(g, result[1], size, _tiles(kernel_size, stride, padding, dilation))


def _max_pool_jvp(t, result, kernel_size):
    return max_pool_gather(t, result[1], len(kernel_size))


def _indices_of(input, kernel_size, stride, padding, dilation, ceil_mode):
    """The indices the values-only pool left out (for its own derivatives)."""
    return _MAX[len(kernel_size)].fn(input, kernel_size, stride, padding, dilation, ceil_mode)[1]


def _values_vjp(g, input, kernel_size, stride, padding, dilation, ceil_mode):
    indices = _indices_of(input, kernel_size, stride, padding, dilation, ceil_mode)
    tiles = _tiles(kernel_size, stride, padding, dilation)
    return max_pool_backward(g, indices, tuple(input.shape[-len(kernel_size) :]), tiles)


def _values_jvp(t, input, kernel_size, stride, padding, dilation, ceil_mode):
    indices = _indices_of(input, kernel_size, stride, padding, dilation, ceil_mode)
    return max_pool_gather(t, indices, len(kernel_size))


def _values_samples(nd: int):
    """The values-only kernel's own calls: checked tuples, as the public function gives."""
    sp = (5, 4, 3)[:nd] if nd < 3 else (3, 4, 3)

    def samples(make):
        one, two = (1,) * nd, (2,) * nd
        yield S((distinct(make, (2, 2, *sp)), two, two, (0,) * nd, one, False))  # tiles
        yield S((distinct(make, (2, 3, *sp)), two, two, (0,) * nd, one, True))  # partial
        yield S((distinct(make, (2, 3, *sp)), (3,) * nd, two, one, one, True))
        yield S((distinct(make, (1, 2, *sp)), two, one, one, two, False))
        yield S((distinct(make, (2, *sp)), two, one, (0,) * nd, one, False))  # unbatched
        yield S((distinct(make, (0, 2, *sp)), two, two, (0,) * nd, one, False))
        k = (2, 3, 1)[:nd]
        yield S((distinct(make, (2, 2, *sp[::-1])).swapaxes(-1, -nd), k, k, (0,) * nd, one, True))

    return samples


def _max_pool_values_op(nd: int) -> Op:
    """PyTorch's max_pool without indices (its CPU kernel when no gradient is recorded):
    the public function calls it where nothing can observe the indices."""
    return defop(
        f"max_pool{nd}d_values",
        _max_pool_values,
        nin=1,
        vjp=_values_vjp,
        jvp=_values_jvp,
        batch_rule=batch_first(),
        samples=_values_samples(nd),
        api=f"nn._pool_max.max_pool{nd}d_values",
        # (unchecked arguments: torch's max_pool{nd}d is compared through the public function,
        # whose unobserved calls run this op; finite differences check its formulas)
        test={"no_oracle": True},
        autocast="fp32" if nd == 3 else None,
        meta=by_kernel,
    )


def _max_pool_op(nd: int) -> Op:
    return defop(
        f"max_pool{nd}d",
        _max_pool,
        nin=1,
        nout=2,
        ndiff=1,
        node_name=f"MaxPool{nd}DWithIndicesBackward0",
        saved_outputs=(1,),  # (its node saves the indices)
        vjp=_windows_vjp,
        jvp=_max_pool_jvp,
        batch_rule=batch_first(),
        samples=_max_pool_samples(nd),
        error_samples=_pool_errors(nd, True),
        api=f"nn.functional.max_pool{nd}d",
        autocast="fp32" if nd == 3 else None,  # (PyTorch casts the 3-d pools only)
        meta=by_kernel,
    )


def _max_public(fn: Callable, name: str, always_indices: bool, what: str) -> Callable:
    """A max pool's public function: ``name`` (``name_with_indices`` when it always returns
    the indices), documented as ``what`` and its indices."""
    fn.__name__ = fn.__qualname__ = name + ("_with_indices" if always_indices else "")
    fn.__doc__ = (
        f"{what}; with ``return_indices`` also the flat index of each maximum within its input "
        "plane."
    )
    return fn


def _unobserved(input: Tensor) -> bool:
    """Whether nothing can see a max pool's indices: no gradient recorded (on the eager tape
    under vmap too), no transform but vmap, no dispatch mode (which sees the op that runs)."""
    if state.modes:
        return False
    if state.stack:
        if not all(i.kind is Kind.VMAP for i in state.stack):
            return False
        while isinstance(input, WrapperTensor):
            input = input._inner
    return not (input.requires_grad and state.grad_enabled)


def _plain(v) -> bool:
    """Whether an argument is an int or a tuple of ints (hashable, and read as itself)."""
    t = type(v)
    return t is int or t is tuple and all(type(e) is int for e in v)


def _max_pool_fn(op: Op, nd: int, always_indices: bool) -> Callable:
    name = f"max_pool{nd}d"
    values_op = _VALUES[nd]
    # The checked (kernel, stride, padding, dilation) of calls that passed the checks, by
    # their plain arguments and the input's shape and dtype (all the checks read).
    passed: dict = {}

    def checked(input, kernel_size, stride, padding, dilation, ceil_mode, indices: bool):
        if nd == 1 and not indices:  # PyTorch's own 1-d path
            geometry = _max1d_geometry(input, kernel_size, stride, padding, dilation, ceil_mode)
            _check_dtype(input, "max_pool1d_impl")
            return geometry
        style = "max1d" if nd == 1 else "max"
        geometry = _geometry(
            input, nd, name, kernel_size, stride, padding, dilation, ceil_mode, style
        )
        _check_dtype(input, f"max_pool{max(nd, 2)}d", "int")
        return geometry

    def fn(
        input: Tensor,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        ceil_mode: bool = False,
        return_indices: bool = False,
    ):
        indices = return_indices or always_indices
        key = geometry = None
        if (
            _plain(kernel_size)
            and (stride is None or _plain(stride))
            and _plain(padding)
            and _plain(dilation)
            and type(ceil_mode) is bool
        ):
            key = (indices, kernel_size, stride, padding, dilation, ceil_mode)
            key += (input.shape, input.dtype)
            geometry = passed.get(key)
        if geometry is None:
            geometry = checked(input, kernel_size, stride, padding, dilation, ceil_mode, indices)
            if key is not None:
                if len(passed) > 64:
                    passed.clear()
                passed[key] = geometry
        k, s, p, d = geometry
        if not indices and _unobserved(input):
            return values_op.fn(input, k, s, p, d, bool(ceil_mode))
        if (return_indices or always_indices) and op.autocast:  # (..._with_indices: no list)
            values, indices = uncast(op.fn, input, k, s, p, d, bool(ceil_mode))
        else:
            values, indices = op.fn(input, k, s, p, d, bool(ceil_mode))
        return (values, indices) if return_indices or always_indices else values

    return _max_public(
        fn,
        name,
        always_indices,
        f"{nd}-d max pooling over the last {nd} dims of (N, C, ...) or (C, ...) input",
    )


_MAX = {nd: _max_pool_op(nd) for nd in (1, 2, 3)}
_VALUES = {nd: _max_pool_values_op(nd) for nd in (1, 2, 3)}
max_pool1d_values, max_pool2d_values, max_pool3d_values = (_VALUES[nd].fn for nd in (1, 2, 3))
max_pool1d, max_pool2d, max_pool3d = (_max_pool_fn(_MAX[nd], nd, False) for nd in (1, 2, 3))
max_pool1d_with_indices, max_pool2d_with_indices, max_pool3d_with_indices = (
    _max_pool_fn(_MAX[nd], nd, True) for nd in (1, 2, 3)
)


# ------------------------------------------------------------------ max unpool
def _max_unpool(xp, input, indices, output_size):
    return _scatter(xp, input, indices, tuple(output_size), False, check=True)


def _unpool_size(x, nd, k, s, p, output_size) -> tuple[int, ...]:
    """PyTorch's _unpool_output_size."""
    default = [(x.shape[-nd + j] - 1) * s[j] + k[j] - 2 * p[j] for j in range(nd)]
    if output_size is None:
        out = default
    else:
        if len(output_size) == nd + 2:
            output_size = output_size[2:]
        if len(output_size) != nd:
            raise ValueError(
                f"output_size should be a sequence containing {nd} or {nd + 2} elements, but "
                f"it has a length of '{len(output_size)}'"
            )
        for j in range(nd):
            lo, hi = default[j] - s[j], default[j] + s[j]
            if not lo < output_size[j] < hi:
                raise ValueError(
                    f'invalid output_size "{output_size}" (dim {j} must be between {lo} and {hi})'
                )
        out = list(output_size)
    for j in range(nd):
        if out[j] < 0:
            raise ValueError(
                "max_unpooling: output_size must contain non-negative spatial dimensions, but "
                f"got output_size[{j}]={out[j]}"
            )
    return tuple(int(v) for v in out)


def _max_unpool_fn(op: Op, nd: int) -> Callable:
    name = f"max_unpool{nd}d"

    def fn(
        input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None
    ) -> Tensor:
        k = _tup(kernel_size, nd, name, "kernel_size")
        s = k if stride is None else _tup(stride, nd, name, "stride")
        p = _tup(padding, nd, name, "padding")
        out = _unpool_size(input, nd, k, s, p, output_size)
        # PyTorch runs the 1-d form as 2-d with a trailing size-1 dim; its messages say so.
        extra, inner = ([1], 2) if nd == 1 else ([], nd)
        if indices.dtype.name != "int64":
            got = f" but got: {indices.dtype.scalar_name}" if nd < 3 else ""  # 3-d: no dtype
            raise RuntimeError(f"elements in indices should be type int64{got}")
        if tuple(input.shape) != tuple(indices.shape):
            raise RuntimeError(
                "Expected shape of indices to be same as that of the input tensor "
                f"({list(input.shape) + extra}) but got indices tensor with shape: "
                f"{list(indices.shape) + extra}"
            )
        r = input.dim() + len(extra)
        if r not in (inner + 1, inner + 2):
            raise RuntimeError(
                f"Input to max_unpooling{inner}d should be a {inner + 1}d or {inner + 2}d Tensor, "
                f"but got a tensor with {r} dimensions."
            )
        _check_dtype(input, f"max_unpool{max(nd, 2)}d", empty_runs=True)
        return op.fn(input, indices, out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"The partial inverse of max_pool{nd}d: each value written at its index in a "
        "zero output plane."
    )
    return fn


def _unpool_samples(nd: int):
    sp = (6, 4, 4)[:nd] if nd < 3 else (4, 2, 4)

    def pooled(make, shape, k=2, s=2, p=0):
        _, idx = _pool_indices(make, shape, nd, k, s, p)
        return make(idx.shape), idx

    def samples(make):
        yield S((*pooled(make, (2, 2, *sp)), 2))
        yield S(
            (*pooled(make, (2, 2, *(v + 1 for v in sp))), 2),
            {"output_size": tuple(v + 1 for v in sp)},
        )
        yield S((*pooled(make, (1, 2, *sp), 3, 3, 1), 3, 3, 1), {"output_size": sp})  # padding
        yield S((*pooled(make, (2, *sp)), 2, 2))  # unbatched
        yield S((*pooled(make, (0, 2, *sp)), 2))
        yield S((*pooled(make, (1, 2, *sp)), 2), {"output_size": (1, 2, *sp)})

    return samples


def _unpool_errors(nd: int):
    def errors(make):
        v, i = _pool_indices(make, (1, 2, *(4,) * nd), nd, 2, 2)
        yield ErrorInput(S((v, i + 100, 2)), RuntimeError, "Found an invalid max index")
        yield ErrorInput(
            S((v, i, 2), {"output_size": (9,) * nd}), ValueError, "invalid output_size"
        )
        yield ErrorInput(
            S((v, i, 2), {"output_size": (9,) * (nd + 1)}),
            ValueError,
            "output_size should be a sequence",
        )
        yield ErrorInput(
            S((v, i.astype(np.float32), 2)),
            RuntimeError,
            "should be type int64 but got: Float" if nd < 3 else "should be type int64",
        )
        yield ErrorInput(
            S((v, i[..., :1], 2)), RuntimeError, "Expected shape of indices to be same"
        )
        yield ErrorInput(S((v[0, 0], i[0, 0], 2)), RuntimeError, "Input to max_unpooling")

    return errors


def _max_unpool_vjp(g, indices, output_size):
    return max_pool_gather(g, indices, len(output_size))


def _max_unpool_op(nd: int) -> Op:
    return defop(
        f"max_unpool{nd}d",
        _max_unpool,
        nin=2,
        jvp=LINEAR,
        node_name=f"MaxUnpool{nd}DBackward0",
        vjp=(_max_unpool_vjp, None),
        batch_rule=planes(),
        samples=_unpool_samples(nd),
        error_samples=_unpool_errors(nd),
        api=f"nn.functional.max_unpool{nd}d",
        complex32=unless_empty(f"max_unpool{max(nd, 2)}d"),  # (PyTorch's refusing kernel)
        autocast="fp32",  # (the 1-d one is PyTorch's 2-d one)
        meta=by_kernel,
    )


max_unpool1d, max_unpool2d, max_unpool3d = (
    _max_unpool_fn(_max_unpool_op(nd), nd) for nd in (1, 2, 3)
)
