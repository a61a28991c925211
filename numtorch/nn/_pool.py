"""Pooling over 1 to 3 spatial dims: max, average, adaptive max and average, power-average
pools, fractional max pools, and max unpooling.

Each kind is one N-d kernel over the last ``nd`` dims; every leading dim is a plane (batch,
channels, and a vmap batch folded in front), so the 1d/2d/3d functions are generated from
it and the batch rules only move the batch dim first. Max-pool indices are flat indices
into each input plane (int64), as in PyTorch; the backward of every max pool is one
scatter-add primitive (``max_pool_backward``), whose vjp is a gather (``max_pool_gather``),
and ``max_unpool`` is the same scatter with assignment.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .._core import dtype as dt
from .._core.dispatch import dispatch
from .._core.op import LINEAR, ErrorInput, Op, composite, defop
from .._core.tensor import Tensor, wrap_dim
from ..ops._batching import batch_first, front, rule_generator
from ..ops.comparison import where
from ..ops.creation import tensor as _tensor
from ..ops.random import rand
from ..ops.reduction import distinct
from ..testing.samples import S
from ._windows import sliding

_WORDS = {1: "one", 2: "two", 3: "three"}
_AXES = {1: "W", 2: "HW", 3: "THW"}  # PyTorch's names of the spatial dims in messages


# ------------------------------------------------------------------ arguments
def _tup(v, nd: int, fn: str, what: str, omit: bool = False) -> tuple[int, ...]:
    """An int or a sequence of 1 or ``nd`` ints as an ``nd``-tuple (PyTorch's _ntuple)."""
    if isinstance(v, (int, np.integer)):
        return (int(v),) * nd
    v = tuple(int(e) for e in v)
    if len(v) == 1:
        return v * nd
    if len(v) != nd:
        if nd == 1:
            raise RuntimeError(f"{fn}() argument '{what}' should contain one int (got {len(v)})")
        either = "either be omitted, a single int," if omit else "either be a single int,"
        raise RuntimeError(f"{fn}: {what} must {either} or a tuple of {_WORDS[nd]} ints")
    return v


_INTS = {"float": (), "int64": ("int64",), "int": ("int64", "int32", "int16", "int8", "uint8")}


def _check_dtype(x, name: str, allowed: str = "float") -> None:
    """PyTorch's error for a dtype its pool has no kernel for: floats and the integer types
    of ``allowed`` ("float", "int64" or "int") pass."""
    n = x.dtype.name
    if not (x.dtype.is_floating_point or n in _INTS[allowed]):
        raise dt.not_implemented(name, x)


def _shape(x) -> str:
    return "[" + ", ".join(str(s) for s in x.shape) + "]"


def _check_rank(x, nd: int, fn: str, style: str) -> None:
    """The input is (C, *spatial) or (N, C, *spatial); only N may be 0."""
    r = x.dim()
    ok = r in (nd + 1, nd + 2) and all(s > 0 for s in x.shape[r - nd - 1 :])
    if ok:
        return
    if style.endswith("1d") and r not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {r}-dimensional tensor for argument #1 "
            f"'self' (while checking arguments for {fn})"
        )
    lo, hi = max(nd, 2) + 1, max(nd, 2) + 2
    if r not in (nd + 1, nd + 2):
        raise RuntimeError(f"non-empty {lo}D or {hi}D (batch mode) tensor expected for input")
    raise RuntimeError(
        f"Expected {lo}D or {hi}D (batch mode) tensor with optional 0 dim batch size for "
        f"input, but got:{_shape(x)}"
    )


def _out_len(i: int, k: int, s: int, p: int, d: int, ceil: bool) -> int:
    """PyTorch's pooling_output_shape: a ceil-mode window must start inside the input or
    its left padding."""
    o = (i + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    if ceil and (o - 1) * s >= i + p:
        o -= 1
    return o


def _geometry(x, nd, fn, kernel_size, stride, padding, dilation, ceil_mode, style):
    """Checked (kernel, stride, padding, dilation) tuples for a windowed pool of x."""
    k = _tup(kernel_size, nd, fn, "kernel_size")
    omitted = stride is None or (not isinstance(stride, int) and len(stride) == 0)
    s = k if omitted else _tup(stride, nd, fn, "stride", omit=True)
    p = _tup(padding, nd, fn, "padding")
    d = _tup(dilation, nd, fn, "dilation")
    if any(v == 0 for v in s):
        raise RuntimeError("stride should not be zero")
    if any(v < 0 for v in p):
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(p)}")
    axes = _AXES[nd]
    if any(v <= 0 for v in k):
        got = " ".join(f"k{a}: {v}" for a, v in zip(axes, k))
        raise RuntimeError(f"kernel size should be greater than zero, but got {got}")
    if any(v <= 0 for v in s):
        got = " ".join(f"d{a}: {v}" for a, v in zip(axes, s))
        raise RuntimeError(f"stride should be greater than zero, but got {got}")
    if any(v <= 0 for v in d):
        got = " ".join(f"dilation{a}: {v}" for a, v in zip(axes, d))
        raise RuntimeError(f"dilation should be greater than zero, but got {got}")
    _check_rank(x, nd, fn, style)
    for kk, pp, dd in zip(k, p, d):
        if pp > (dd * (kk - 1) + 1) // 2:
            raise RuntimeError(
                "pad should be at most half of effective kernel size, but got "
                f"pad={pp}, kernel_size={kk} and dilation={dd}"
            )
    size = tuple(x.shape[-nd:])
    if style.startswith("max") and any(pp > kk // 2 for kk, pp in zip(k, p)):
        if nd == 3:
            got = f"kT: {k[0]} kW: {k[2]} kH: {k[1]} padT: {p[0]} padW: {p[2]} padH: {p[1]}"
        else:  # 1-d runs as 2-d with a size-1 H
            (kh, kw), (ph, pw) = ((1, *k), (0, *p)) if nd == 1 else (k, p)
            got = f"padW = {pw}, padH = {ph}, kW = {kw}, kH = {kh}"
        raise RuntimeError(
            f"pad should be smaller than or equal to half of kernel size, but got {got}"
        )
    if style == "avg" and nd == 3 and any(i < kk for i, kk in zip(size, k)):
        raise RuntimeError(
            f"input image (T: {size[0]} H: {size[1]} W: {size[2]}) smaller than kernel size "
            f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})"
        )
    out = tuple(_out_len(*a, ceil_mode) for a in zip(size, k, s, p, d))
    if any(o < 1 for o in out):
        c = (x.shape[-nd - 1],) + ((1,) if nd == 1 else ())  # 1-d runs as 2-d with H = 1
        raise RuntimeError(
            f"Given input size: ({'x'.join(map(str, (*c, *size)))}). Calculated output size: "
            f"({'x'.join(map(str, (*c, *out)))}). Output size is too small"
        )
    return k, s, p, d


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


# ------------------------------------------------------------------ windows
def _out_sizes(size, k, s, p, d, ceil_mode) -> tuple[int, ...]:
    return tuple(_out_len(*a, ceil_mode) for a in zip(size, k, s, p, d))


def _padded(xp, x, p, need, fill):
    """x with ``p`` fill values before each spatial dim and as many after as the last
    window needs (``need``: the extent the windows cover); x itself when none are."""
    nd = len(p)
    size = x.shape[-nd:]
    full = tuple(max(n, pp + i) for n, pp, i in zip(need, p, size))
    if full == size:
        return x
    buf = xp.full(x.shape[:-nd] + full, fill, x.dtype)
    buf[(Ellipsis, *(slice(pp, pp + i) for pp, i in zip(p, size)))] = x
    return buf


def _extent(out, k, s, d):
    return tuple((o - 1) * ss + dd * (kk - 1) + 1 for o, kk, ss, dd in zip(out, k, s, d))


def _windows(xp, x, k, s, p, d, out, fill):
    """The pooling windows of x as a view of shape (..., *out, *k)."""
    return sliding(xp, _padded(xp, x, p, _extent(out, k, s, d), fill), k, s, d, out)


def _along(v, d: int, nd: int):
    """A 1-d array along spatial dim d of an nd-dim spatial block."""
    return v.reshape((-1,) + (1,) * (nd - 1 - d))


def _lowest(xp, dtype):
    return -math.inf if dtype.kind == "f" else xp.iinfo(dtype).min


# ------------------------------------------------------------------ max pool
def _first_max(xp, views):
    """The elementwise maximum of same-shaped arrays, and which one first attains it (the
    last NaN where it is NaN, as PyTorch's scan takes every NaN it meets)."""
    values = views[0].copy()
    for v in views[1:]:
        xp.maximum(values, v, out=values)
    # arg = miss_0 * (1 + miss_1 * (1 + ...)): a pass per array, no masked copies.
    kind = xp.uint8 if len(views) <= 256 else xp.int64
    arg = xp.zeros(values.shape, kind)
    for v in reversed(views[:-1]):
        arg = (v != values) * (arg + kind(1))
    if values.dtype.kind == "f" and bool(xp.isnan(values).any()):
        for j, v in enumerate(views):
            xp.copyto(arg, kind(j), where=xp.isnan(v))
    return values, arg


def _max_pool(xp, input, kernel_size, stride, padding, dilation, ceil_mode):
    k, s, p, d = kernel_size, stride, padding, dilation
    nd = len(k)
    size = input.shape[-nd:]
    out = _out_sizes(size, k, s, p, d, ceil_mode)
    low = _lowest(xp, input.dtype)
    win = _windows(xp, input, k, s, p, d, out, low)
    offsets = list(np.ndindex(*k))
    views = [win[(Ellipsis, *o)] for o in offsets]
    values, arg = _first_max(xp, views)
    # The flat input index: the window's start plus the offset's step within the plane.
    planes = [math.prod(size[j + 1 :]) for j in range(nd)]
    delta = xp.asarray([sum(o[j] * d[j] * planes[j] for j in range(nd)) for o in offsets])
    starts = [xp.arange(out[j], dtype=xp.int64) * s[j] - p[j] for j in range(nd)]
    index = xp.take(delta, arg) + sum(_along(st * planes[j], j, nd) for j, st in enumerate(starts))
    if any(p):  # a window of lowest values only picks its first position inside the input
        first = [st + (-(st // d[j])).clip(0) * d[j] for j, st in enumerate(starts)]
        first = sum(_along(f * planes[j], j, nd) for j, f in enumerate(first))
        index = xp.where(values == low, first, index)
    return values, index


def _scatter(xp, grad, indices, size, accumulate: bool, check: bool = False):
    """Per plane: zeros of spatial ``size`` with grad added (or written) at the flat
    ``indices``; leading dims of grad and indices broadcast. ``check``: indices in range."""
    nd = len(size)
    lead = np.broadcast_shapes(grad.shape[:-nd], indices.shape[:-nd])
    osp = indices.shape[-nd:]
    planes, n, m = math.prod(lead), math.prod(size), math.prod(osp)
    g = xp.broadcast_to(grad, lead + osp).reshape(planes, m)
    i = xp.broadcast_to(indices, lead + osp).reshape(planes, m)
    if check and i.size:
        bad = (i < 0) | (i >= n)
        if bad.any():
            raise RuntimeError(
                f"Found an invalid max index: {int(i[bad][-1])} (output volumes are of size "
                f"{'x'.join(map(str, size if nd > 1 else (*size, 1)))})"  # 1-d runs as 2-d
            )
    if not check and i.size and int(i.max()) >= n:
        g, i = xp.where(i < n, g, 0), xp.minimum(i, n - 1)  # see _past_the_plane
    flat = (i + xp.arange(0, planes * n, n, dtype=xp.int64)[:, None]).reshape(-1)
    out = xp.zeros(planes * n, grad.dtype)
    if accumulate:
        xp.add.at(out, flat, g.reshape(-1))
    else:
        xp.put(out, flat, g.reshape(-1))
    return out.reshape(lead + tuple(size))


def _max_pool_backward(xp, grad, indices, size):
    return _scatter(xp, grad, indices, tuple(size), True)


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


def _gather_samples(make):
    _, idx = _pool_indices(make, (2, 2, 4, 5), 2)
    yield S((make((2, 2, 4, 5)), idx, 2))
    _, idx = _pool_indices(make, (3, 6), 1, k=3, s=2)
    yield S((make((3, 6)), idx, 1))


max_pool_backward = defop(
    "max_pool_backward", _max_pool_backward, nin=2, jvp=LINEAR,
    vjp=(lambda g, indices, size: max_pool_gather.fn(g, indices, len(size)), None),
    batch_rule=planes(), samples=_backward_samples,
    api="nn._pool.max_pool_backward.fn", test={"no_oracle": True},
)  # fmt: skip
max_pool_gather = defop(
    "max_pool_gather", _max_pool_gather, nin=2, jvp=LINEAR,
    vjp=(lambda g, input_shape, indices, nd: max_pool_backward.fn(g, indices, tuple(input_shape[-nd:])), None),
    batch_rule=planes(), samples=_gather_samples,
    api="nn._pool.max_pool_gather.fn", test={"no_oracle": True},
)  # fmt: skip


def _max_pool_samples(nd: int):
    sp = (5, 4, 3)[:nd] if nd < 3 else (3, 4, 3)

    def samples(make):
        yield S((distinct(make, (2, 2, *sp)), 2))
        yield S((distinct(make, (2, 3, *sp)), 3, 2, 1), {"ceil_mode": True, "return_indices": True})
        yield S((distinct(make, (1, 2, *sp)), 2), {"dilation": 2, "padding": 1, "stride": 1})
        yield S((distinct(make, (2, *sp)), 2, 1), {"return_indices": True})  # unbatched
        yield S((distinct(make, (0, 2, *sp)), 2))
        yield S(
            (distinct(make, (2, 2, *sp[::-1])).swapaxes(-1, -nd), (2, 3, 1)[:nd], (1, 2, 2)[:nd])
        )

    return samples


def _pool_errors(nd: int, max_pool: bool):
    """Argument errors shared by the max and average pools (PyTorch's texts)."""
    sp = (5, 5, 5)[:nd]

    def errors(make):
        x = make((1, 2, *sp))
        yield ErrorInput(
            S((x, 2), {"padding": 2}),
            RuntimeError,
            r"pad(ding)? should be at most half of (effective )?kernel size",
        )
        yield ErrorInput(
            S((x, 6)),
            RuntimeError,
            r"Output size is too small|Invalid computed output size|smaller than kernel size",
        )
        yield ErrorInput(
            S((x, 2), {"stride": 0}), RuntimeError, "stride (should not be zero|must be greater)"
        )
        yield ErrorInput(
            S((x, 2), {"padding": -1}), RuntimeError, "pad(ding)? must be non-negative"
        )
        yield ErrorInput(S((x, (2,) * (nd + 1))), RuntimeError, "kernel_size")
        if nd == 2 and not max_pool:
            rank_error = (IndexError, "Dimension out of range")
        else:
            rank_error = (RuntimeError, r"\dD|dimensions")
        yield ErrorInput(S((make(sp),), {"kernel_size": 2}), *rank_error)
        yield ErrorInput(S((make((2, 0, *sp)), 2)), RuntimeError, "tensor")
        if max_pool:
            yield ErrorInput(
                S((x, 2), {"dilation": 0}),
                RuntimeError,
                "dilation (should|must) be greater than zero",
            )

    return errors


def _max_pool_vjp(g, input_shape, result, kernel_size):
    return max_pool_backward.fn(g, result[1], tuple(input_shape[-len(kernel_size) :]))


def _max_pool_op(nd: int) -> Op:
    return defop(
        f"max_pool{nd}d", _max_pool, nin=1, nout=2, ndiff=1,
        node_name=f"MaxPool{nd}DWithIndicesBackward0",
        vjp=_max_pool_vjp,
        jvp=lambda t, result, kernel_size: max_pool_gather.fn(t, result[1], len(kernel_size)),
        batch_rule=batch_first(), samples=_max_pool_samples(nd),
        error_samples=_pool_errors(nd, True), api=f"nn.functional.max_pool{nd}d",
    )  # fmt: skip


def _max_public(fn: Callable, name: str, always_indices: bool, what: str) -> Callable:
    """A max pool's public function: ``name`` (``name_with_indices`` when it always returns
    the indices), documented as ``what`` and its indices."""
    fn.__name__ = fn.__qualname__ = name + ("_with_indices" if always_indices else "")
    fn.__doc__ = (
        f"{what}; with ``return_indices`` also the flat index of each maximum within its input "
        "plane."
    )
    return fn


def _max_pool_fn(op: Op, nd: int, always_indices: bool) -> Callable:
    name = f"max_pool{nd}d"

    def fn(
        input: Tensor,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        ceil_mode: bool = False,
        return_indices: bool = False,
    ):
        if nd == 1 and not (return_indices or always_indices):  # PyTorch's own 1-d path
            k, s, p, d = _max1d_geometry(input, kernel_size, stride, padding, dilation, ceil_mode)
            _check_dtype(input, "max_pool1d_impl")
        else:
            style = "max1d" if nd == 1 else "max"
            k, s, p, d = _geometry(
                input, nd, name, kernel_size, stride, padding, dilation, ceil_mode, style
            )
            _check_dtype(input, f"max_pool{max(nd, 2)}d", "int")
        values, indices = op.fn(input, k, s, p, d, bool(ceil_mode))
        return (values, indices) if return_indices or always_indices else values

    return _max_public(
        fn,
        name,
        always_indices,
        f"{nd}-d max pooling over the last {nd} dims of (N, C, ...) or (C, ...) input",
    )


_MAX = {nd: _max_pool_op(nd) for nd in (1, 2, 3)}
max_pool1d, max_pool2d, max_pool3d = (_max_pool_fn(_MAX[nd], nd, False) for nd in (1, 2, 3))
max_pool1d_with_indices, max_pool2d_with_indices, max_pool3d_with_indices = (
    _max_pool_fn(_MAX[nd], nd, True) for nd in (1, 2, 3)
)


# ------------------------------------------------------------------ average pool
def _avg_divisor(xp, size, k, s, p, out, count_include_pad, divisor_override, dtype):
    """The divisor of each output window: a number, or a product of per-dim counts."""
    nd = len(k)
    if divisor_override:
        return dtype.type(divisor_override)
    div = 1
    for j in range(nd):
        st = xp.arange(out[j], dtype=xp.int64) * s[j] - p[j]
        en = xp.minimum(st + k[j], size[j] + p[j])  # a ceil-mode window ends at the padding
        n = en - st if count_include_pad else xp.minimum(en, size[j]) - xp.maximum(st, 0)
        div = div * _along(n, j, nd)
    return div.astype(dtype)


def _step(axis: int, start: int, out: int, stride: int) -> tuple:
    """The index of the ``out`` positions start, start + stride, ... along ``axis``."""
    return (slice(None),) * axis + (slice(start, start + stride * (out - 1) + 1, stride),)


def _avg_pool(
    xp, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
):
    k, s, p = kernel_size, stride, padding
    nd = len(k)
    size = input.shape[-nd:]
    out = _out_sizes(size, k, s, p, (1,) * nd, ceil_mode)
    x = _padded(xp, input, p, _extent(out, k, s, (1,) * nd), 0)
    for j in range(nd):  # the window sum is separable: one dim at a time, a pass per offset
        axis = x.ndim - nd + j
        acc = x[_step(axis, 0, out[j], s[j])].copy()
        for o in range(1, k[j]):
            acc += x[_step(axis, o, out[j], s[j])]
        x = acc
    div = _avg_divisor(xp, size, k, s, p, out, count_include_pad, divisor_override, x.dtype)
    if x.dtype.kind not in "iu":
        return x / div
    q = x // div  # integers: PyTorch's C division, which truncates toward zero
    return q + ((q * div != x) & (q < 0))


def _avg_pool_backward(
    xp, grad, size, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
):
    k, s, p = kernel_size, stride, padding
    nd = len(k)
    out = grad.shape[-nd:]
    y = grad / _avg_divisor(xp, size, k, s, p, out, count_include_pad, divisor_override, grad.dtype)
    ext = _extent(out, k, s, (1,) * nd)
    for j in reversed(range(nd)):  # the transpose of the forward's sums, dim by dim
        axis = y.ndim - nd + j
        shape = list(y.shape)
        shape[axis] = max(ext[j], p[j] + size[j])
        acc = xp.zeros(shape, y.dtype)
        for o in range(k[j]):
            acc[_step(axis, o, out[j], s[j])] += y
        y = acc[(slice(None),) * axis + (slice(p[j], p[j] + size[j]),)]
    return xp.ascontiguousarray(y)


def _avg_backward_samples(make):
    yield S((make((2, 2, 2, 2)), (4, 5), (2, 2), (2, 2), (0, 0), False, True, None))
    yield S((make((2, 3)), (5,), (3,), (2,), (1,), True, False, None))
    yield S((make((1, 2, 4, 2, 3)), (3, 3, 4), (2, 2, 2), (1, 2, 1), (1, 1, 0), False, True, 3))


def _avg_pool_backward_vjp(
    g, size, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
):
    return _AVG[len(size)].fn(
        g, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )


avg_pool_backward = defop(
    "avg_pool_backward", _avg_pool_backward, nin=1, vjp=_avg_pool_backward_vjp, jvp=LINEAR,
    batch_rule=batch_first(), samples=_avg_backward_samples,
    api="nn._pool.avg_pool_backward.fn", test={"no_oracle": True},
)  # fmt: skip


def _avg_pool_vjp(
    g, input_shape, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
):
    size = tuple(input_shape[-len(kernel_size) :])
    return avg_pool_backward.fn(
        g, size, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )


def _avg_pool_samples(nd: int):
    sp = (5, 4, 3)[:nd] if nd < 3 else (3, 4, 3)

    def samples(make):
        yield S((make((2, 2, *sp)), 2))
        yield S((make((2, 3, *sp)), 3, 2, 1), {"ceil_mode": True})
        yield S((make((2, 3, *sp)), 3, 2, 1), {"ceil_mode": True, "count_include_pad": False})
        if nd > 1:
            yield S((make((1, 2, *sp)), 2, 1, 1), {"divisor_override": 3})
        yield S((make((2, *sp)), 2, 1))  # unbatched
        yield S((make((0, 2, *sp)), 2))
        yield S((make((2, 2, *sp[::-1])).swapaxes(-1, -nd), (2, 3, 1)[:nd], (1, 2, 2)[:nd]))

    return samples


def _avg_errors(nd: int):
    errors = _pool_errors(nd, False)
    if nd == 1:
        return errors

    def more(make):
        yield from errors(make)
        x = make((1, 2, *(5,) * nd))
        yield ErrorInput(
            S((x, 2), {"divisor_override": 0}), RuntimeError, "divisor must be not zero"
        )

    return more


def _avg_pool_op(nd: int) -> Op:
    return defop(
        f"avg_pool{nd}d", _avg_pool, nin=1, vjp=_avg_pool_vjp, jvp=LINEAR,
        node_name=f"AvgPool{nd}DBackward0",
        batch_rule=batch_first(), samples=_avg_pool_samples(nd), error_samples=_avg_errors(nd),
        api=f"nn.functional.avg_pool{nd}d",
    )  # fmt: skip


_AVG = {nd: _avg_pool_op(nd) for nd in (1, 2, 3)}


def _avg_pool_fn(nd: int) -> Callable:
    op, name = _AVG[nd], f"avg_pool{nd}d"

    def check(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
        style = "avg1d" if nd == 1 else "avg"
        if nd == 2:
            wrap_dim(-3, input.dim())  # PyTorch reads the channel dim first: an IndexError
        k, s, p, _ = _geometry(input, nd, name, kernel_size, stride, padding, 1, ceil_mode, style)
        if divisor_override is not None and divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        _check_dtype(input, "avg_pool3d_out_frame" if nd == 3 else "avg_pool2d", "int64")
        return op.fn(input, k, s, p, bool(ceil_mode), bool(count_include_pad), divisor_override)

    if nd == 1:

        def fn(
            input: Tensor,
            kernel_size,
            stride=None,
            padding=0,
            ceil_mode: bool = False,
            count_include_pad: bool = True,
        ) -> Tensor:
            return check(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)

    else:

        def fn(
            input: Tensor,
            kernel_size,
            stride=None,
            padding=0,
            ceil_mode: bool = False,
            count_include_pad: bool = True,
            divisor_override=None,
        ) -> Tensor:
            return check(
                input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
            )

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{nd}-d average pooling over the last {nd} dims of (N, C, ...) or (C, ...) input."
    return fn


avg_pool1d, avg_pool2d, avg_pool3d = (_avg_pool_fn(nd) for nd in (1, 2, 3))


# ------------------------------------------------------------------ adaptive pools
def _adaptive_bounds(i: int, o: int) -> tuple[np.ndarray, np.ndarray]:
    """Window c of an adaptive pool covers [floor(c*i/o), ceil((c+1)*i/o))."""
    c = np.arange(o, dtype=np.int64)
    return (c * i) // o, ((c + 1) * i + o - 1) // o


def _adaptive_size(x, nd: int, output_size, fn: str, kind: str) -> tuple[int, ...]:
    """output_size as an nd-tuple (None: the input's size), after PyTorch's checks."""
    r = x.dim()
    # The 1-d functions take ints only.
    if output_size is None and nd == 1:
        raise TypeError(
            f"{fn}(): argument 'output_size' (position 2) must be tuple of ints, not NoneType"
        )
    if isinstance(output_size, (int, np.integer)) or output_size is None:
        output_size = (output_size,) * nd
    output_size = tuple(output_size)
    if nd == 1 and None in output_size:
        raise TypeError(
            f"{fn}(): argument 'output_size' (position 2) must be tuple of ints, but found "
            f"element of type NoneType at pos {output_size.index(None)}"
        )
    if len(output_size) != nd:
        if nd == 1:
            raise RuntimeError(
                f"{fn}() argument 'output_size' should contain one int (got {len(output_size)})"
            )
        if kind == "max":
            raise RuntimeError(f"{fn}(): internal error: output_size.size() must be {nd}")
        raise RuntimeError(f"{fn}: output_size must be {nd}")
    if r not in (nd + 1, nd + 2):
        if nd == 1:
            raise RuntimeError(
                f"Expected 2 to 3 dimensions, but got {r}-dimensional tensor for argument #1 "
                f"'self' (while checking arguments for {fn})"
            )
        colon = ":" if kind == "max" else ""
        raise RuntimeError(
            f"{fn}(): Expected {nd + 1}D or {nd + 2}D tensor, but got{colon} {_shape(x)}"
        )
    first = r - nd - (1 if kind == "max" else 0)
    for i in range(first, r):
        if x.shape[i] == 0:
            raise RuntimeError(
                f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {_shape(x)} with dimension {i} being empty"
            )
    size = tuple(x.shape[-nd:])
    out = tuple(s if o is None else int(o) for o, s in zip(output_size, size))
    if any(o < 0 for o in out):
        if kind == "max":
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {min(out)}: "
                f"{list(x.shape[:-nd]) + list(out)}"
            )
        got = ", ".join(map(str, out))
        raise RuntimeError(
            f"{fn}: elements of output_size must be greater than or equal to 0 but received {{{got}}}"
        )
    return out


def _adaptive_max(xp, input, output_size):
    nd = len(output_size)
    size, lead = input.shape[-nd:], input.shape[:-nd]
    if 0 in output_size:
        return xp.zeros(lead + output_size, input.dtype), xp.zeros(lead + output_size, xp.int64)
    # The flat input index of every window offset at every output position, (*widths, *out);
    # a window shorter than the widest repeats its last element, which changes neither its
    # maximum nor the first position attaining it.
    table = 0
    for j, (i, o) in enumerate(zip(size, output_size)):
        st, en = _adaptive_bounds(i, o)
        pos = np.minimum(st[:, None] + np.arange(int((en - st).max())), en[:, None] - 1)
        shape = [1] * (2 * nd)
        shape[j], shape[nd + j] = pos.shape[1], o
        table = table + pos.T.reshape(shape) * math.prod(size[j + 1 :])
    table = xp.asarray(table.reshape((-1,) + output_size))
    # Planes last, so that each window offset is one contiguous (*out, planes) block.
    planes = math.prod(lead)
    win = xp.ascontiguousarray(input.reshape(planes, math.prod(size)).T)[table]
    values, arg = _first_max(xp, list(win))
    m = math.prod(output_size)
    at = arg.astype(xp.int64) * m + xp.arange(m).reshape(output_size + (1,))  # arg is uint8
    index = xp.take(table.reshape(-1), at)
    return tuple(xp.moveaxis(a, -1, 0).reshape(lead + output_size) for a in (values, index))


def _adaptive_max_samples(nd: int):
    sp = (7, 5, 4)[:nd] if nd < 3 else (4, 3, 5)

    def samples(make):
        yield S((distinct(make, (2, 2, *sp)), (3, 2, 2)[:nd]))  # windows of unequal widths
        yield S((distinct(make, (2, 3, *sp)), 1), {"return_indices": True})
        yield S((distinct(make, (1, 2, *sp)), (None, 4, 2)[:nd] if nd > 1 else (3,)))
        yield S((distinct(make, (2, *sp)), (5, 3, 3)[:nd]), {"return_indices": True})  # unbatched
        yield S((distinct(make, (0, 2, *sp)), 2))
        yield S((distinct(make, (1, 2, *sp)), sp))  # the identity

    return samples


def _adaptive_errors(nd: int, kind: str):
    def errors(make):
        x = make((1, 2, *(5,) * nd))
        yield ErrorInput(S((x, (2,) * (nd + 1))), RuntimeError, "output_size")
        yield ErrorInput(S((make((5,) * nd), 2)), RuntimeError, r"\dD|dimensions")
        yield ErrorInput(S((make((1, 2, *(0,) * nd)), 2)), RuntimeError, "non-zero size")
        yield ErrorInput(S((x, -1)), RuntimeError, "negative|greater than or equal to 0")

    return errors


def _adaptive_max_op(nd: int) -> Op:
    return defop(
        f"adaptive_max_pool{nd}d", _adaptive_max, nin=1, nout=2, ndiff=1,
        node_name=f"AdaptiveMaxPool{nd}DBackward0",
        vjp=lambda g, input_shape, result, output_size: max_pool_backward.fn(
            g, result[1], tuple(input_shape[-len(output_size) :])
        ),
        jvp=lambda t, result, output_size: max_pool_gather.fn(t, result[1], len(output_size)),
        batch_rule=batch_first(), samples=_adaptive_max_samples(nd),
        error_samples=_adaptive_errors(nd, "max"), api=f"nn.functional.adaptive_max_pool{nd}d",
    )  # fmt: skip


def _adaptive_max_fn(op: Op, nd: int, always_indices: bool) -> Callable:
    name = f"adaptive_max_pool{nd}d"

    def fn(input: Tensor, output_size, return_indices: bool = False):
        out = _adaptive_size(input, nd, output_size, name, "max")
        _check_dtype(input, "adaptive_max_pool3d_cpu" if nd == 3 else "adaptive_max_pool2d")
        values, indices = op.fn(input, out)
        return (values, indices) if return_indices or always_indices else values

    return _max_public(
        fn,
        name,
        always_indices,
        f"{nd}-d adaptive max pooling to ``output_size`` (None keeps a dim's size)",
    )


_AMAX = {nd: _adaptive_max_op(nd) for nd in (1, 2, 3)}
adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d = (
    _adaptive_max_fn(_AMAX[nd], nd, False) for nd in (1, 2, 3)
)
(
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d_with_indices,
) = (_adaptive_max_fn(_AMAX[nd], nd, True) for nd in (1, 2, 3))


def _window_mean(x: Tensor, axis: int, i: int, o: int) -> Tensor:
    """The mean of each adaptive window of dim ``axis`` (negative) of x: the windows'
    elements gathered (o, widest) and summed where they belong to the window, so that a NaN
    or inf stays in its own windows, as in PyTorch's kernel (a product with a matrix of
    weights would spread it through the zeros)."""
    st, en = _adaptive_bounds(i, o)
    w = int((en - st).max()) if o else 0
    idx = st[:, None] + np.arange(w)
    inside = idx < en[:, None]
    idx = np.where(inside, idx, st[:, None])  # any in-range index; masked out below
    g = x.index_select(axis, _tensor(idx.reshape(-1), device=x.device)).unflatten(axis, (o, w))
    trail = (1,) * (-axis - 1)
    mask = _tensor(inside.reshape(o, w, *trail), device=x.device)
    count = _tensor((en - st).reshape(o, *trail), dtype=x.dtype, device=x.device)
    return where(mask, g, 0.0).sum(axis) / count


def _adaptive_avg_fn(nd: int) -> Callable:
    name = f"adaptive_avg_pool{nd}d"

    def fn(input: Tensor, output_size) -> Tensor:
        out = _adaptive_size(input, nd, output_size, name, "avg")
        _check_dtype(input, "adaptive_avg_pool3d_cpu" if nd == 3 else "adaptive_avg_pool2d")
        size = tuple(input.shape[-nd:])
        x = input
        # Averaging is separable: the windows of one pooled dim at a time.
        for j in reversed(range(nd)):
            if out[j] != size[j]:
                x = _window_mean(x, j - nd, size[j], out[j])
        return x if x is not input else input.clone()

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{nd}-d adaptive average pooling to ``output_size`` (None keeps a dim's size)."
    return fn


def _adaptive_avg_samples(nd: int):
    sp = (7, 5, 4)[:nd] if nd < 3 else (4, 3, 5)

    def samples(make):
        yield S((make((2, 2, *sp)), (3, 2, 2)[:nd]))  # windows of unequal widths
        yield S((make((2, 3, *sp)), 1))
        yield S((make((1, 2, *sp)), (None, 4, 2)[:nd] if nd > 1 else (3,)))
        yield S((make((2, *sp)), (5, 3, 3)[:nd]))  # unbatched
        yield S((make((0, 2, *sp)), 2))
        yield S((make((1, 2, *sp)), (9, 7, 6)[:nd]))  # larger than the input

    return samples


adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d = (
    composite(
        _adaptive_avg_fn(nd),
        samples=_adaptive_avg_samples(nd),
        error_samples=_adaptive_errors(nd, "avg"),
        api=f"nn.functional.adaptive_avg_pool{nd}d",
    )  # fmt: skip
    for nd in (1, 2, 3)
)


# ------------------------------------------------------------------ power-average pool
def _lp_pool_fn(nd: int) -> Callable:
    name = f"lp_pool{nd}d"
    maxp, avgp = (
        (max_pool1d, max_pool2d, max_pool3d)[nd - 1],
        (avg_pool1d, avg_pool2d, avg_pool3d)[nd - 1],
    )

    def fn(input: Tensor, norm_type, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
        if norm_type == math.inf:
            return maxp(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -math.inf:
            return -maxp(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        n = math.prod(_tup(kernel_size, nd, name, "kernel_size"))
        out = avgp(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
        # PyTorch's sign(out) * relu(abs(out)) is out with a zero gradient where a window's
        # sum is 0 (its relu masks the root's infinite slope there): a where says just that.
        return where(out == 0, 0.0, out).mul(n).pow(1.0 / norm_type)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"{nd}-d power-average pooling: (sum of x**norm_type over each window)**(1/norm_type)."
    )
    return fn


def _lp_samples(nd: int):
    sp = (5, 4, 3)[:nd] if nd < 3 else (3, 4, 3)

    def samples(make):
        yield S((make((2, 2, *sp), 0.5, 2.0), 2, 2))
        yield S((make((2, 2, *sp), 0.5, 2.0), 1.5, 3, 2), {"ceil_mode": True})
        yield S((make((2, *sp), 0.5, 2.0), 3, 2, 1))  # unbatched
        yield S((distinct(make, (1, 2, *sp)), math.inf, 2))
        yield S((distinct(make, (1, 2, *sp)), -math.inf, 2))
        yield S((make((0, 2, *sp), 0.5, 2.0), 2, 2))

    return samples


def _lp_errors(nd: int):
    def errors(make):
        yield ErrorInput(
            S((make((1, 2, *(5,) * nd)), 2, 6)),
            RuntimeError,
            "Output size is too small|smaller than kernel size",
        )

    return errors


lp_pool1d, lp_pool2d, lp_pool3d = (
    composite(
        _lp_pool_fn(nd),
        samples=_lp_samples(nd),
        error_samples=_lp_errors(nd),
        api=f"nn.functional.lp_pool{nd}d",
    )
    for nd in (1, 2, 3)
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
        _check_dtype(input, f"max_unpool{max(nd, 2)}d")
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


def _max_unpool_op(nd: int) -> Op:
    return defop(
        f"max_unpool{nd}d", _max_unpool, nin=2, jvp=LINEAR,
        node_name=f"MaxUnpool{nd}DBackward0",
        vjp=(lambda g, indices, output_size: max_pool_gather.fn(g, indices, len(output_size)), None),
        batch_rule=planes(), samples=_unpool_samples(nd), error_samples=_unpool_errors(nd),
        api=f"nn.functional.max_unpool{nd}d",
    )  # fmt: skip


max_unpool1d, max_unpool2d, max_unpool3d = (
    _max_unpool_fn(_max_unpool_op(nd), nd) for nd in (1, 2, 3)
)


# ------------------------------------------------------------------ fractional max pool
_FRAC_DIMS = {2: ("height", "width"), 3: ("time", "height", "width")}
_FRAC_SAMPLE = {2: (1, 0), 3: (0, 1, 2)}  # the sample that places each spatial dim's windows


def _frac_starts(xp, u, i: int, o: int, k: int):
    """Where each of ``o`` windows of width ``k`` over ``i`` positions starts, for samples
    ``u`` (any shape) in [0, 1): (*u.shape, o). Computed in u's dtype, as PyTorch does."""
    last = xp.full(u.shape + (min(o, 1),), i - k, xp.int64)
    if o <= 1:
        return last
    alpha = u.dtype.type(i - k) / u.dtype.type(o - 1)
    steps = xp.arange(o - 1).astype(u.dtype)
    st = ((steps + u[..., None]) * alpha).astype(xp.int64)
    st -= (u * alpha).astype(xp.int64)[..., None]
    return xp.concatenate([st, last], axis=-1)


def _fractional_max_pool(xp, input, samples, kernel_size, output_size):
    k, out = kernel_size, output_size
    nd = len(k)
    size = input.shape[-nd:]
    lead = np.broadcast_shapes(input.shape[:-nd], samples.shape[:-1])
    kk = tuple(max(v, 1) for v in k)  # an empty window is read as its first position
    # The flat input index of every window position, (*lead, *out, *kk); the clip keeps
    # samples outside [0, 1) (PyTorch reads past the plane then) inside the plane.
    table = 0
    for j in range(nd):
        st = _frac_starts(xp, samples[..., _FRAC_SAMPLE[nd][j]], size[j], out[j], k[j])
        pos = xp.clip(st[..., None] + xp.arange(kk[j]), 0, size[j] - 1)
        shape = [1] * (2 * nd)
        shape[j], shape[nd + j] = out[j], kk[j]
        table = table + pos.reshape(st.shape[:-1] + tuple(shape)) * math.prod(size[j + 1 :])
    m, w = math.prod(out), math.prod(kk)
    table = xp.broadcast_to(table, lead + tuple(out) + kk)
    table = table.reshape(lead + (m, w))
    x = input.reshape(input.shape[:-nd] + (math.prod(size),))
    x = xp.broadcast_to(x, lead + x.shape[-1:])
    win = xp.take_along_axis(x, table.reshape(lead + (m * w,)), axis=-1).reshape(lead + (m, w))
    values, arg = _first_max(xp, [win[..., c] for c in range(w)])
    index = xp.take_along_axis(table, arg[..., None].astype(xp.int64), axis=-1)[..., 0]
    if min(k) <= 0:  # an empty window: PyTorch's -inf at the window's start
        values = xp.full(values.shape, -math.inf, values.dtype)
    return values.reshape(lead + tuple(out)), index.reshape(lead + tuple(out))


def _frac_size(v, nd: int, fn: str, what: str, pos: int) -> tuple[int, ...]:
    """An int or an ``nd``-sequence of ints (PyTorch's IntArrayRef[nd] argument)."""
    if isinstance(v, (int, np.integer)):
        return (int(v),) * nd
    if not isinstance(v, (tuple, list)):
        raise TypeError(
            f"{fn}(): argument '{what}' (position {pos}) must be tuple of ints, not "
            f"{type(v).__name__}"
        )
    bad = next((i for i, e in enumerate(v) if not isinstance(e, (int, np.integer))), None)
    if bad == 0:
        raise TypeError(
            f"{fn}(): argument '{what}' (position {pos}) must be tuple of ints, but found "
            f"element of type {type(v[0]).__name__} at pos 0"
        )
    if bad is not None:
        raise TypeError(
            f"{fn}(): argument '{what}' failed to unpack the object at pos {bad + 1} with error "
            f'"type must be tuple of ints,but got {type(v[bad]).__name__}"'
        )
    if len(v) != nd:
        of = "Ints" if nd == 2 else "three Ints"
        raise RuntimeError(f"{fn}: {what} must either be a single Int or tuple of {of}")
    return tuple(int(e) for e in v)


def _check_fractional(x, u, nd: int, k, out) -> None:
    """PyTorch's checks of the input, the sizes and the random samples, in its order."""
    fn = "fractional_max_pool2d" if nd == 2 else "fractional_max_pool3d_out"
    r, batched = x.dim(), x.dim() == nd + 2
    if r not in (nd + 1, nd + 2):
        raise RuntimeError(f"{fn}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {_shape(x)}")
    for i in range(int(batched), r):
        if x.shape[i] == 0:
            raise RuntimeError(
                f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"got{_shape(x)} with dimension {i} being empty."
            )
    size = tuple(x.shape[-nd:])
    room = (
        0 if nd == 2 else 1
    )  # PyTorch's 3-d check is strict: its last window never ends the input
    for name, i, kk, o in zip(_FRAC_DIMS[nd], size, k, out):
        if o + kk - 1 + room > i:
            raise RuntimeError(f"{fn}(): pool {name} {kk} too large relative to input {name} {i}")
    if any(o < 0 for o in out):
        shape = list(x.shape[:-nd]) + list(out)
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {next(o for o in out if o < 0)}: "
            f"{shape}"
        )
    if u.dtype != x.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if u.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {u.dim()}")
    if u.shape[0] < (x.shape[0] if batched else 1):
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if u.shape[1] != x.shape[-nd - 1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if u.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got {u.shape[2]}.")


def _fractional_fn(op: Op, nd: int, always_indices: bool) -> Callable:
    name = f"fractional_max_pool{nd}d"

    def fn(
        input: Tensor,
        kernel_size,
        output_size=None,
        output_ratio=None,
        return_indices: bool = False,
        _random_samples: Tensor | None = None,
    ):
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
        if output_size is None:
            if nd == 2 and len(output_ratio) > 2:
                raise ValueError(
                    f"{name} requires output_ratio to either be a single Int or tuple of Ints."
                )
            ratio = (
                tuple(output_ratio) if hasattr(output_ratio, "__len__") else (output_ratio,) * nd
            )
            output_size = [int(input.size(j - nd) * ratio[j]) for j in range(nd)]
        u = _random_samples
        if u is None:
            n = 1 if input.dim() == nd + 1 else input.size(0)
            u = rand(n, input.size(-nd - 1), nd, dtype=input.dtype, device=input.device)
        k = _frac_size(kernel_size, nd, name, "kernel_size", 2)
        out = _frac_size(output_size, nd, name, "output_size", 3)
        if u.requires_grad:
            raise RuntimeError(
                f"The function '{name}' is not differentiable with respect to argument "
                "'random_samples'. This input cannot have requires_grad True."
            )
        _check_fractional(input, u, nd, k, out)
        _check_dtype(input, f"{name}_out_frame")
        if input.dim() == nd + 1:
            u = u[0]
        elif u.shape[0] != input.shape[0]:
            u = u[: input.shape[0]]
        values, indices = op.fn(input, u, k, out)
        return (values, indices) if return_indices or always_indices else values

    return _max_public(
        fn,
        name,
        always_indices,
        f"{nd}-d fractional max pooling: windows of ``kernel_size`` at pseudo-random steps that reach ``output_size`` (or ``output_ratio`` of the input's size)",
    )


def _fractional_samples(nd: int):
    # PyTorch's 3-d pool leaves at least one position after its last window.
    sp, c, o, k2, o2, last = (
        ((7, 6), (2, 3), 3, (3, 2), (2, 4), (1, 5))
        if nd == 2
        else ((4, 5, 4), (2, 2), 2, (1, 2, 2), (2, 3, 2), (1, 3, 2))
    )

    def u(make, n, ch):
        return make((n, ch, nd), 0.0, 1.0)

    def samples(make):
        yield S((distinct(make, (2, c[0], *sp)), 2, o, None, False, u(make, 2, c[0])))
        yield S(
            (distinct(make, (2, c[1], *sp)), k2),
            {"output_size": o2, "return_indices": True, "_random_samples": u(make, 2, c[1])},
        )
        yield S(
            (distinct(make, (1, 2, *sp)), 2),
            {"output_ratio": (0.5, 0.7, 0.6)[:nd], "_random_samples": u(make, 1, 2)},
        )
        yield S(
            (distinct(make, (2, *sp)), 2, last),
            {"_random_samples": u(make, 1, 2), "return_indices": True},
        )  # unbatched; an output of 1 and one that takes every position
        yield S((distinct(make, (0, 2, *sp)), 2, 2), {"_random_samples": u(make, 0, 2)})
        yield S((distinct(make, (1, 2, *sp)), 2, 2), {"_random_samples": u(make, 2, 2)})  # more
        yield S(
            (distinct(make, (2, 2, *sp[::-1])).swapaxes(-1, -nd), 2, 2, None, True, u(make, 2, 2))
        )

    return samples


def _fractional_errors(nd: int):
    name = f"fractional_max_pool{nd}d"

    def errors(make):
        x = make((2, 2, *(5,) * nd))
        u = make((2, 2, nd), 0.0, 1.0)
        other = u.astype(np.float64 if u.dtype == np.float32 else np.float32)
        yield ErrorInput(S((x, 2)), ValueError, "requires specifying either an output_size")
        yield ErrorInput(
            S((x, (2,) * (nd + 1), 2, None, False, u)), RuntimeError, "kernel_size must"
        )
        yield ErrorInput(S((x, 2, 5, None, False, u)), RuntimeError, "too large relative to input")
        yield ErrorInput(S((x, 2, -1, None, False, u)), RuntimeError, "negative dimension -1")
        yield ErrorInput(
            S((x[None], 2, 2, None, False, u)), RuntimeError, rf"{nd + 1}D or {nd + 2}D"
        )
        yield ErrorInput(S((x, 2, 2, None, False, other)), RuntimeError, "same dtype as input")
        yield ErrorInput(S((x, 2, 2, None, False, u[:1])), RuntimeError, r"size\(0\) no less")
        yield ErrorInput(S((x, 2, 2, None, False, u[:, :1])), RuntimeError, r"size\(1\) equals")
        yield ErrorInput(S((x, 2, 2, None, False, u[..., :1])), RuntimeError, r"size\(2\) equals")
        yield ErrorInput(S((x, 2, 2, None, False, u[None])), RuntimeError, "3 dimensions, got 4")
        if nd == 2:
            yield ErrorInput(
                S((x, 2), {"output_ratio": (0.5,) * 3}), ValueError, f"{name} requires output_ratio"
            )

    return errors


def _fractional_op(nd: int) -> Op:
    return defop(
        f"fractional_max_pool{nd}d", _fractional_max_pool, nin=2, nout=2, ndiff=1,
        vjp=(_max_pool_vjp, None),
        jvp=lambda tinput, result, kernel_size: max_pool_gather.fn(tinput, result[1], len(kernel_size)),
        batch_rule=planes(), samples=_fractional_samples(nd), error_samples=_fractional_errors(nd),
        api=f"nn.functional.fractional_max_pool{nd}d", grad_args=(0,),
    )  # fmt: skip


_FRAC = {nd: _fractional_op(nd) for nd in (2, 3)}
fractional_max_pool2d, fractional_max_pool3d = (
    _fractional_fn(_FRAC[nd], nd, False) for nd in (2, 3)
)
fractional_max_pool2d_with_indices, fractional_max_pool3d_with_indices = (
    _fractional_fn(_FRAC[nd], nd, True) for nd in (2, 3)
)
