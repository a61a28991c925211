"""Fractional max pooling over 2 or 3 spatial dims: windows of ``kernel_size`` at
pseudo-random steps (PyTorch's ``_random_samples``) that reach ``output_size``. Indices and
gradients are the max pools'.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .._core.meta import by_kernel
from .._core.no_kernel import unless_empty
from .._core.op import ErrorInput, Op, defop
from .._core.tensor import Tensor
from .._opdb.samples import S
from ..ops.random import rand
from ..ops.reduction import distinct
from ._pool_geometry import _check_dtype, _shape
from ._pool_max import _first_max, _max_pool_vjp, _max_public, max_pool_gather, planes

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
        _check_dtype(input, f"{name}_out_frame", empty_runs=True)
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


def _fractional_jvp(tinput, result, kernel_size):
    return max_pool_gather(tinput, result[1], len(kernel_size))


def _fractional_op(nd: int) -> Op:
    return defop(
        f"fractional_max_pool{nd}d",
        _fractional_max_pool,
        nin=2,
        nout=2,
        ndiff=1,
        vjp=(_max_pool_vjp, None),
        jvp=_fractional_jvp,
        saved_outputs=(1,),  # (its node saves the indices)
        batch_rule=planes(),
        samples=_fractional_samples(nd),
        error_samples=_fractional_errors(nd),
        api=f"nn.functional.fractional_max_pool{nd}d",
        grad_args=(0,),
        complex32=unless_empty(f"fractional_max_pool{nd}d_out_frame"),  # (its refusing kernel)
        autocast="fp32",
        meta=by_kernel,
    )


_FRAC = {nd: _fractional_op(nd) for nd in (2, 3)}
fractional_max_pool2d, fractional_max_pool3d = (
    _fractional_fn(_FRAC[nd], nd, False) for nd in (2, 3)
)
fractional_max_pool2d_with_indices, fractional_max_pool3d_with_indices = (
    _fractional_fn(_FRAC[nd], nd, True) for nd in (2, 3)
)
