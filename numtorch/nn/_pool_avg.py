"""Average pooling over 1 to 3 spatial dims, and power-average (lp) pooling built on it.

The window sum is separable: one pass per kernel offset along one dim at a time; the
backward (``avg_pool_backward``, a primitive whose vjp is the pool again) is its transpose.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .._core.meta import by_kernel
from .._core.op import LINEAR, ErrorInput, Op, composite, defop
from .._core.tensor import Tensor, wrap_dim
from .._opdb.samples import S
from ..ops._batching import batch_first
from ..ops.comparison import where
from ..ops.reduction import distinct
from ._pool_geometry import (
    _along,
    _check_dtype,
    _extent,
    _geometry,
    _out_sizes,
    _padded,
    _pool_errors,
    _tup,
)
from ._pool_max import max_pool1d, max_pool2d, max_pool3d


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


avg_pool_backward_p = defop(
    "avg_pool_backward",
    _avg_pool_backward,
    nin=1,
    vjp=_avg_pool_backward_vjp,
    jvp=LINEAR,
    batch_rule=batch_first(),
    samples=_avg_backward_samples,
    api="nn._pool_avg.avg_pool_backward",
    test={"no_oracle": True},
)
avg_pool_backward = avg_pool_backward_p.fn


def _avg_pool_vjp(
    g, input_shape, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
):
    size = tuple(input_shape[-len(kernel_size) :])
    return avg_pool_backward(
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
        f"avg_pool{nd}d",
        _avg_pool,
        nin=1,
        vjp=_avg_pool_vjp,
        jvp=LINEAR,
        node_name=f"AvgPool{nd}DBackward0",
        batch_rule=batch_first(),
        samples=_avg_pool_samples(nd),
        error_samples=_avg_errors(nd),
        api=f"nn.functional.avg_pool{nd}d",
        autocast="fp32" if nd == 3 else None,  # (PyTorch casts the 3-d pools only)
        meta=by_kernel,
    )


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
