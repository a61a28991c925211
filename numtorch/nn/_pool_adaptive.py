"""Adaptive max and average pooling over 1 to 3 spatial dims: window ``c`` of ``o`` over
``i`` positions covers [floor(c*i/o), ceil((c+1)*i/o)). The max pools' indices and
gradients are the max pools' (``max_pool_backward``/``max_pool_gather``); the average pools
are composites, one pooled dim at a time.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .._core import dtype as dt
from .._core.meta import by_kernel
from .._core.op import ErrorInput, Op, composite, defop
from .._core.tensor import Tensor
from .._opdb.samples import S
from ..ops._batching import batch_first
from ..ops.comparison import where
from ..ops.creation import tensor as _tensor
from ..ops.reduction import distinct
from ._pool_geometry import _check_dtype, _shape
from ._pool_max import _first_max, _max_public, max_pool_backward, max_pool_gather


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


def _adaptive_max_vjp(g, input_shape, result, output_size):
    return max_pool_backward(g, result[1], tuple(input_shape[-len(output_size) :]))


def _adaptive_max_jvp(t, result, output_size):
    return max_pool_gather(t, result[1], len(output_size))


def _adaptive_max_op(nd: int) -> Op:
    return defop(
        f"adaptive_max_pool{nd}d",
        _adaptive_max,
        nin=1,
        nout=2,
        ndiff=1,
        node_name=f"AdaptiveMaxPool{nd}DBackward0",
        saved_outputs=(1,),  # (its node saves the indices)
        vjp=_adaptive_max_vjp,
        jvp=_adaptive_max_jvp,
        batch_rule=batch_first(),
        samples=_adaptive_max_samples(nd),
        error_samples=_adaptive_errors(nd, "max"),
        api=f"nn.functional.adaptive_max_pool{nd}d",
        autocast="fp32" if nd == 3 else None,  # (PyTorch casts the 3-d pools only)
        meta=by_kernel,
    )


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


def _refuse_complex32_avg(x, nd: int, out: tuple) -> None:
    """PyTorch's kernel that refuses a complex32 adaptive average pool: a pool to one element
    is a mean (``sum_cpu``; an empty one divides, ``div_cpu``); the 1-d and 2-d kernels
    run on an empty batch, the 3-d one refuses it."""
    if all(o == 1 for o in out):
        raise dt.not_implemented("div_cpu" if 0 in x.shape else "sum_cpu", x)
    if nd == 3:
        raise dt.not_implemented("adaptive_avg_pool3d_cpu", x)
    if 0 not in x.shape:
        raise dt.not_implemented("adaptive_avg_pool2d", x)


def _adaptive_avg_fn(nd: int) -> Callable:
    name = f"adaptive_avg_pool{nd}d"

    def fn(input: Tensor, output_size) -> Tensor:
        out = _adaptive_size(input, nd, output_size, name, "avg")
        if input.dtype is dt.complex32:
            _refuse_complex32_avg(input, nd, out)
            if 0 in input.shape:  # (runs on no element: no division by a count)
                return input.new_zeros((*input.shape[:-nd], *out))
        else:
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
        autocast="fp32" if nd == 3 else None,  # (PyTorch casts the 3-d pools only)
    )
    for nd in (1, 2, 3)
)
