"""Convolution: conv1d/2d/3d, conv_transpose1d/2d/3d, unfold and fold.

Convolution is bilinear in (input, weight), and its two gradients are bilinear too, so
three primitives close the family under differentiation:

    convolution(input, weight)                   -> output        (N, O, *L)
    convolution_input_grad(grad_output, weight)  -> grad_input    (N, C, *S)  (conv_transpose)
    convolution_weight_grad(input, grad_output)  -> grad_weight   (O, C/G, *K)

The vjp formulas of each are the other two, and the jvp of each is the op applied to
one tangent at a time, so double backward, forward-over-reverse and vmap of the backward
pass run on the same three kernels. ``convolution_bias`` is the convolution with a bias
added in its kernel (a layer's forward in one op and one node, as PyTorch's). ``im2col``
(unfold) and ``col2im`` (fold) are a linear pair, each the other's vjp. Padding is a
tuple of (before, after) pairs, one per spatial dim ('same' pads an even kernel more at
the end, as PyTorch does).

Kernels gather every window of the zero-padded input with one strided view and one copy
(im2col), then run one batched GEMM over the groups; col2im adds one strided slice per
kernel offset (at stride 1 the input gradient adds one contiguous run per offset
instead). Small NumPy operands take ``_conv_gather``'s kernels instead (one indexed
gather, no col2im). Under vmap the batch folds into N, into the channels, or into the
groups (both operands batched), as functorch does, without an expanded copy.
"""

from __future__ import annotations

import itertools
import math
import threading
import warnings

import numpy as np

from .._core.meta import by_kernel
from .._core.meta_array import has_values
from .._core.op import LINEAR, ErrorInput, NoKernel, composite, defop, named
from .._core.tensor import Tensor
from .._opdb.samples import S
from ..ops._families import COMPLEX_TOO
from . import _conv_gather as gather
from ._conv_args import (
    _check_dtypes,
    _check_params,
    _check_rank,
    _check_shapes,
    _checked_params,
    _ints,
    _shown,
)
from ._conv_batch import (
    _COLUMN_AXES,
    _CONV_AXES,
    _INPUT_GRAD_AXES,
    _WEIGHT_GRAD_AXES,
    bias_rule,
    fold_batch,
)
from ._windows import sliding


# ------------------------------------------------------------------ array kernels
def _blocks(size, kernel, stride, padding, dilation) -> tuple[int, ...]:
    """How many windows fit along each spatial dim of a padded input."""
    return tuple(
        (s + lo + hi - dl * (k - 1) - 1) // st + 1
        for s, k, st, (lo, hi), dl in zip(size, kernel, stride, padding, dilation)
    )


def _pad(xp, x, padding):
    """x zero-padded on its trailing spatial dims (x itself when nothing is padded), a
    temporary in scratch slot 1."""
    if not any(lo or hi for lo, hi in padding):
        return x
    d = len(padding)
    sp = x.shape[-d:]
    out = _zeros(
        xp, x.shape[:-d] + tuple(s + lo + hi for s, (lo, hi) in zip(sp, padding)), x.dtype, 1
    )
    out[(..., *(slice(lo, lo + s) for s, (lo, _) in zip(sp, padding)))] = x
    return out


_scratch_buffers = threading.local()
_CHUNK_BYTES = 4 << 20  # the columns of this many bytes are computed and consumed at once
_SCRATCH_MAX = 64 << 20  # a larger temporary is allocated, and freed, as usual


def _scratch(xp, shape: tuple, dtype, slot: int = 0):
    """An uninitialized array for a temporary that never leaves its kernel (an im2col
    matrix, a padded copy): on the CPU each thread reuses one buffer per ``slot`` from
    call to call, so that a large temporary does not fault in fresh zeroed pages at every
    step (~4 ms per 42 MB here). Two temporaries alive at once take different slots."""
    nbytes = math.prod(shape) * dtype.itemsize
    if xp.__name__ != "numpy" or nbytes > _SCRATCH_MAX:
        return xp.empty(shape, dtype)
    bufs = getattr(_scratch_buffers, "bufs", None)
    if bufs is None:
        bufs = _scratch_buffers.bufs = [None, None, None]
    if bufs[slot] is None or bufs[slot].nbytes < nbytes:
        bufs[slot] = xp.empty(nbytes, xp.uint8)
    return bufs[slot][:nbytes].view(dtype).reshape(shape)


def _zeros(xp, shape: tuple, dtype, slot: int):
    out = _scratch(xp, shape, dtype, slot)
    out.fill(0)
    return out


def _copy(xp, v, slot: int):
    """A C-contiguous copy of the view v, in scratch ``slot``."""
    out = _scratch(xp, v.shape, v.dtype, slot)
    out[...] = v
    return out


def _cols(xp, x, kernel, stride, padding, dilation, blocks):
    """im2col as a (C * K, N * L) matrix: one copy of the windows. Its row stride is never
    a multiple of 4 KiB (N * L a power of two is common): OpenBLAS's GEMMs that read it
    transposed run ~2x slower on such a leading dimension."""
    v = sliding(xp, _pad(xp, x, padding), kernel, stride, dilation, blocks, kernel_first=True)
    d = len(kernel)
    v = v.transpose((1, *range(2, 2 + d), 0, *range(2 + d, 2 + 2 * d)))  # (C, *K, N, *L)
    rows, cols = math.prod(v.shape[: 1 + d]), math.prod(v.shape[1 + d :])
    pad = 16 if (cols * x.dtype.itemsize) % 4096 == 0 else 0
    out = _scratch(xp, (rows, cols + pad), x.dtype)[:, :cols]
    out.reshape(v.shape)[...] = v  # splits the axes: a view of out
    return out


def _col2im(xp, cols, size, kernel, stride, padding, dilation):
    """The adjoint of the window gather: cols (N, C, *K, *L) summed into (N, C, *size).

    One strided add per kernel offset; the windows of one offset never overlap."""
    d = len(kernel)
    n, c = cols.shape[:2]
    blocks = cols.shape[2 + d :]
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(size, padding))
    if any(lo or hi for lo, hi in padding):  # a temporary: the result is its inner part
        out = _zeros(xp, (n, c, *padded), cols.dtype, 1)
    else:
        out = xp.zeros((n, c, *padded), cols.dtype)
    full = (slice(None), slice(None))
    for k in itertools.product(*(range(kk) for kk in kernel)):
        where = tuple(
            slice(ki * dl, ki * dl + (b - 1) * st + 1, st)
            for ki, dl, b, st in zip(k, dilation, blocks, stride)
        )
        out[full + where] += cols[full + k]
    if not any(lo or hi for lo, hi in padding):
        return out
    # a copy even where the inner part is contiguous: out is a scratch buffer
    return out[full + tuple(slice(lo, lo + s) for s, (lo, _) in zip(size, padding))].copy()


def _group_rows(xp, y, groups):
    """(N, G*M, *L) as (G, M, N*L): per group, the channel rows over all positions (a
    temporary in scratch slot 1 where it takes a copy)."""
    n, ch = y.shape[:2]
    v = y.reshape(n, groups, ch // groups, math.prod(y.shape[2:])).transpose(1, 2, 0, 3)
    if not v.flags.c_contiguous:
        v = _copy(xp, v, 1)
    return v.reshape(groups, ch // groups, n * math.prod(y.shape[2:]))


def _convolution(xp, input, weight, stride=(1,), padding=((0, 0),), dilation=(1,), groups=1):
    out = gather.convolution(xp, input, weight, stride, padding, dilation, groups)
    if out is not None:
        return out
    n, o, kernel = input.shape[0], weight.shape[0], weight.shape[2:]
    blocks = _blocks(input.shape[2:], kernel, stride, padding, dilation)
    ck, length = math.prod(weight.shape[1:]), math.prod(blocks)
    w = weight.reshape(groups, o // groups, ck)
    # One GEMM per sample and group, straight into the (N, O, L) layout of the result. (A
    # GEMM per group in the tall orientation (N*L, C*K) @ (C*K, O/G) and a transposing copy
    # is ~15% less CPU time at one BLAS thread on the CNN's second layer, but ~10% slower in
    # wall time at the default two threads: the copy is single-threaded.)
    v = sliding(xp, _pad(xp, input, padding), kernel, stride, dilation, blocks, kernel_first=True)
    # The windows of a few samples at a time, multiplied while they are in cache (the
    # tutorial CNN's second layer: 42 MB of windows in all).
    chunk = max(1, _CHUNK_BYTES // (groups * ck * length * input.dtype.itemsize))
    if chunk >= n:
        return xp.matmul(w, _copy(xp, v, 0).reshape(n, groups, ck, length)).reshape(n, o, *blocks)
    out = xp.empty((n, groups, o // groups, length), xp.result_type(input, weight))
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        cols = _copy(xp, v[lo:hi], 0).reshape(hi - lo, groups, ck, length)
        xp.matmul(w, cols, out=out[lo:hi])
    return out.reshape(n, o, *blocks)


def _convolution_input_grad(
    xp, grad_output, weight, size=(1,), stride=(1,), padding=((0, 0),), dilation=(1,), groups=1
):
    out = gather.input_grad(xp, grad_output, weight, size, stride, padding, dilation, groups)
    if out is not None:
        return out
    n, kernel, blocks = grad_output.shape[0], weight.shape[2:], grad_output.shape[2:]
    c = weight.shape[1] * groups
    w = weight.reshape(groups, weight.shape[0] // groups, math.prod(weight.shape[1:]))
    # W^T contiguous (it is small): OpenBLAS runs the GEMM ~10% faster than on the view
    wt = xp.ascontiguousarray(w.transpose(0, 2, 1))
    d = len(kernel)
    on_grid = d > 1 and all(st == 1 for st in stride) and has_values(wt)
    if on_grid and xp.isfinite(wt).all():
        return _input_grad_on_grid(xp, grad_output, wt, c, size, kernel, padding, dilation)
    rows = _group_rows(xp, grad_output, groups)
    cols = xp.matmul(wt, rows, out=_scratch(xp, (groups, w.shape[2], rows.shape[2]), rows.dtype))
    cols = cols.reshape(c, *kernel, n, *blocks)
    cols = cols.transpose((1 + d, 0, *range(1, 1 + d), *range(2 + d, 2 + 2 * d)))
    return _col2im(xp, cols, size, kernel, stride, padding, dilation)


def _input_grad_on_grid(xp, grad_output, wt, c, size, kernel, padding, dilation):
    """The stride-1 input gradient with the GEMM's columns on the padded input's grid
    (grad_output zero-padded to its rows' length), so that each kernel offset adds one
    contiguous run per (sample, channel) instead of one short run per row (the tutorial
    CNN's second layer: 42 -> 29 ms). The padding columns' products are exact zeros (a
    finite weight, checked by the caller), so what they add where a run wraps changes
    nothing."""
    n, o, *blocks = grad_output.shape
    groups = wt.shape[0]
    d = len(kernel)
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(size, padding))
    grid = (blocks[0], *padded[1:])
    rows = _zeros(xp, (groups, o // groups, n, *grid), grad_output.dtype, 1)
    g = grad_output.reshape(n, groups, o // groups, *blocks)
    rows[(..., *(slice(0, b) for b in blocks[1:]))] = g.transpose(1, 2, 0, *range(3, 3 + d))
    span = math.prod(grid)
    rows = rows.reshape(groups, o // groups, n, span)
    steps = [math.prod(padded[i + 1 :]) for i in range(d)]
    reach = sum(dl * (k - 1) * st for k, dl, st in zip(kernel[1:], dilation[1:], steps[1:]))
    out = _zeros(xp, (n, c, math.prod(padded) + reach), rows.dtype, 2)
    offsets = [
        sum(ki * dl * st for ki, dl, st in zip(k, dilation, steps))
        for k in itertools.product(*(range(kk) for kk in kernel))
    ]
    # The GEMM's columns for a few samples at a time, added into the result while they are
    # in cache: the whole columns matrix is K times the result (the tutorial CNN's second
    # layer: 46 MB, 27 -> 15 ms). Each element is the same dot product either way.
    per_sample = wt.shape[1] * groups * span * rows.dtype.itemsize
    chunk = max(1, _CHUNK_BYTES // per_sample)
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        part = rows[:, :, lo:hi].reshape(groups, o // groups, (hi - lo) * span)
        cols = _scratch(xp, (groups, wt.shape[1], part.shape[2]), rows.dtype)
        cols = xp.matmul(wt, part, out=cols).reshape(c, len(offsets), hi - lo, span)
        dst = out[lo:hi]
        for j, at in enumerate(offsets):
            dst[:, :, at : at + span] += cols[:, j].transpose(1, 0, 2)
    out = out[:, :, : math.prod(padded)].reshape(n, c, *padded)
    return out[(..., *(slice(lo, lo + s) for s, (lo, _) in zip(size, padding)))].copy()


def _convolution_weight_grad(
    xp, input, grad_output, size=(1,), stride=(1,), padding=((0, 0),), dilation=(1,), groups=1
):
    out = gather.weight_grad(xp, input, grad_output, size, stride, padding, dilation, groups)
    if out is not None:
        return out
    o, blocks = grad_output.shape[1], grad_output.shape[2:]
    cols = _cols(xp, input, size, stride, padding, dilation, blocks)
    g = _group_rows(xp, grad_output, groups)  # (G, O/G, N*L)
    cols = cols.reshape(groups, cols.shape[0] // groups, g.shape[2])
    if g.shape[2] >= 4096:  # a long contraction: OpenBLAS runs cols @ g^T ~2x faster
        dw = xp.ascontiguousarray(xp.matmul(cols, g.transpose(0, 2, 1)).transpose(0, 2, 1))
    else:
        dw = xp.matmul(g, cols.transpose(0, 2, 1))
    return dw.reshape(o, input.shape[1] // groups, *size)


def _im2col(xp, input, kernel_size=(1,), dilation=(1,), padding=(0,), stride=(1,)):
    pads = tuple((p, p) for p in padding)
    blocks = _blocks(input.shape[2:], kernel_size, stride, pads, dilation)
    v = sliding(xp, _pad(xp, input, pads), kernel_size, stride, dilation, blocks, kernel_first=True)
    n, c = input.shape[:2]
    # a copy even where the windows are the (padded) input itself (a 1x1 kernel)
    return v.copy().reshape(n, c * math.prod(kernel_size), math.prod(blocks))


def _col2im_kernel(
    xp, input, output_size=(1,), kernel_size=(1,), dilation=(1,), padding=(0,), stride=(1,)
):
    pads = tuple((p, p) for p in padding)
    blocks = _blocks(output_size, kernel_size, stride, pads, dilation)
    n = input.shape[0]
    cols = input.reshape(n, input.shape[1] // math.prod(kernel_size), *kernel_size, *blocks)
    return _col2im(xp, cols, output_size, kernel_size, stride, pads, dilation)


# ------------------------------------------------------------------ primitives
def _fit(y, blocks):
    """y cut to ``blocks`` windows (a transposed convolution with output_padding >= stride
    has an input that a convolution maps to more windows than its gradient has)."""
    blocks = tuple(blocks)
    if tuple(y.shape[2:]) == blocks:
        return y
    return y[(slice(None), slice(None), *(slice(0, b) for b in blocks))]


_GEO = ("stride", "padding", "dilation", "groups")


def _formula(fn, *names):
    """A vjp/jvp formula ``fn(*values, geo)`` reading ``names`` and the geometry attributes."""
    return named(
        lambda **env: fn(*(env[n] for n in names), {k: env[k] for k in _GEO}),
        (*names, *_GEO),
    )


def _conv(x, w, geo):
    return convolution(x, w, **geo)


def _conv_in(g, w, size, geo):
    return convolution_input_grad(g, w, tuple(size), **geo)


def _conv_w(x, g, size, geo):
    return convolution_weight_grad(x, g, tuple(size), **geo)


def _prim_samples(kind):
    def samples(make):
        geo = [
            ((2, 2, 5, 5), (3, 2, 3, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), 1),
            ((1, 4, 6, 5), (4, 2, 2, 2), (2, 1), ((1, 0), (0, 1)), (1, 2), 2),
        ]
        for xs, ws, st, pad, dl, g in geo:
            blocks = _blocks(xs[2:], ws[2:], st, pad, dl)
            gs = (xs[0], ws[0], *blocks)
            attrs = {"stride": st, "padding": pad, "dilation": dl, "groups": g}
            if kind == "conv":
                yield S((make(xs), make(ws)), attrs)
            elif kind == "input":
                yield S((make(gs), make(ws)), {"size": xs[2:], **attrs})
            else:
                yield S((make(xs), make(gs)), {"size": ws[2:], **attrs})

    return samples


# internal ops; vmap folds a batch into their groups, a size for compiled autograd
_PRIM = dict(nin=2, test={"no_oracle": True}, size_attrs=("groups",), complex32=True)


def _no_bool_conv(transposed: bool) -> NoKernel:
    """PyTorch's CPU convolutions have no bool kernel; which one it names depends on the
    dimension and the dilation (an empty batch runs none). Checked in the primitive, after
    the public functions' shape checks, as PyTorch checks the shapes first."""

    def kernel(arrays, attrs) -> str:
        d = arrays[0].ndim - 2
        if transposed:
            return f"slow_conv_transpose{max(d, 2)}d_out_cpu"
        if any(v != 1 for v in attrs["dilation"]):
            return "slow_conv_dilated<>"
        return "compute_columns3d" if d == 3 else "slow_conv2d_cpu"

    return NoKernel("b", kernel, when=lambda arrays, attrs: arrays[0].size)


def _conv_vjp_input(g, w, shape, geo):
    return _conv_in(g, w.conj(), shape[2:], geo)


def _conv_vjp_weight(g, x, shape, geo):
    return _conv_w(x.conj(), g, shape[2:], geo)


def _conv_jvp(tx, tw, x, w, geo):
    return _conv(tx, w, geo) + _conv(x, tw, geo)


convolution_p = defop(
    "convolution",
    _convolution,
    **_PRIM,
    batch_rule=fold_batch(_CONV_AXES),
    node_name="ConvolutionBackward0",
    api="nn._conv.convolution",
    samples=_prim_samples("conv"),
    no_kernel=_no_bool_conv(False),
    vjp=(
        _formula(_conv_vjp_input, "g", "weight", "input_shape"),
        _formula(_conv_vjp_weight, "g", "input", "weight_shape"),
    ),
    jvp=_formula(_conv_jvp, "tinput", "tweight", "input", "weight"),
    autocast="lower",
    meta=by_kernel,
)
convolution = convolution_p.fn


# The convolutions with a bias added in their kernel: one call where the convolution and an
# add would be two (conv2d's commonest form), and PyTorch's node, whose edges include the
# bias's. Their batch rule is themselves where the batch folds into N alone, else the
# unbiased primitive's, then the bias added where the result's batch and channels are.
def _add_bias(xp, out, bias):
    """``out`` plus ``bias`` along its channels (axis 1), in out's dtype."""
    b = bias.reshape(-1, *(1,) * (out.ndim - 2))
    if b.dtype != out.dtype:  # (the transposed form adds a bias of any dtype)
        b = b.astype(out.dtype)
    if type(out) is np.ndarray:  # (a fresh array: add in place)
        return xp.add(out, b, out=out)
    return out + b


def _convolution_bias(
    xp, input, weight, bias, stride=(1,), padding=((0, 0),), dilation=(1,), groups=1
):
    out = _convolution(xp, input, weight, stride, padding, dilation, groups)
    return _add_bias(xp, out, bias)


def _convolution_input_grad_bias(
    xp,
    grad_output,
    weight,
    bias,
    size=(1,),
    stride=(1,),
    padding=((0, 0),),
    dilation=(1,),
    groups=1,
):
    out = _convolution_input_grad(xp, grad_output, weight, size, stride, padding, dilation, groups)
    return _add_bias(xp, out, bias)


def _bias_vjp(g):
    return g.sum((0, *range(2, g.dim())))


def _conv_bias_jvp(tx, tw, tb, x, w, geo):
    return _conv_jvp(tx, tw, x, w, geo) + tb.reshape(-1, *(1,) * (x.dim() - 2))


_BIAS_GEOMETRIES = (  # (input, weight, stride, padding, dilation, groups)
    ((2, 2, 5, 5), (3, 2, 3, 2), (1, 1), ((1, 1), (0, 0)), (1, 1), 1),
    ((1, 4, 6, 5), (4, 2, 2, 2), (2, 1), ((1, 0), (0, 1)), (1, 2), 2),
    ((2, 3, 5), (4, 3, 2), (1,), ((1, 1),), (2,), 1),
)


def _bias_samples(transposed: bool):
    """Samples of a biased primitive: the convolution's operands, or (transposed) those of
    its input gradient, whose result has the input's channels."""

    def samples(make):
        for xs, ws, st, pad, dl, g in _BIAS_GEOMETRIES:
            attrs = {"stride": st, "padding": pad, "dilation": dl, "groups": g}
            if transposed:
                gs = (xs[0], ws[0], *_blocks(xs[2:], ws[2:], st, pad, dl))
                yield S((make(gs), make(ws), make((xs[1],))), {"size": xs[2:], **attrs})
            else:
                yield S((make(xs), make(ws), make((ws[0],))), attrs)

    return samples


convolution_bias_p = defop(
    "convolution_bias",
    _convolution_bias,
    **{**_PRIM, "nin": 3},
    batch_rule=bias_rule(convolution_p, _CONV_AXES),
    node_name="ConvolutionBackward0",
    api="nn._conv.convolution_bias",
    samples=_bias_samples(False),
    no_kernel=_no_bool_conv(False),
    vjp=(
        _formula(_conv_vjp_input, "g", "weight", "input_shape"),
        _formula(_conv_vjp_weight, "g", "input", "weight_shape"),
        _bias_vjp,
    ),
    jvp=_formula(_conv_bias_jvp, "tinput", "tweight", "tbias", "input", "weight"),
    autocast="lower",
    meta=by_kernel,
)
convolution_bias = convolution_bias_p.fn


def _input_grad_vjp_grad_output(g, w, shape, geo):
    return _fit(_conv(g, w.conj(), geo), shape[2:])


def _input_grad_vjp_weight(g, go, shape, geo):
    return _conv_w(g, go.conj(), shape[2:], geo)


def _input_grad_jvp(tgo, tw, go, w, size, geo):
    return _conv_in(tgo, w, size, geo) + _conv_in(go, tw, size, geo)


convolution_input_grad_p = defop(
    "convolution_input_grad",
    _convolution_input_grad,
    **_PRIM,
    batch_rule=fold_batch(_INPUT_GRAD_AXES),
    node_name="ConvolutionBackward0",
    api="nn._conv.convolution_input_grad",
    no_kernel=_no_bool_conv(True),
    samples=_prim_samples("input"),
    vjp=(
        _formula(_input_grad_vjp_grad_output, "g", "weight", "grad_output_shape"),
        _formula(_input_grad_vjp_weight, "g", "grad_output", "weight_shape"),
    ),
    jvp=_formula(_input_grad_jvp, "tgrad_output", "tweight", "grad_output", "weight", "size"),
    meta=by_kernel,
)
convolution_input_grad = convolution_input_grad_p.fn


def _input_grad_bias_jvp(tgo, tw, tb, go, w, size, geo):
    return _input_grad_jvp(tgo, tw, go, w, size, geo) + tb.reshape(-1, *(1,) * len(size))


# conv_transpose with a bias: PyTorch's one ConvolutionBackward0 node
convolution_input_grad_bias_p = defop(
    "convolution_input_grad_bias",
    _convolution_input_grad_bias,
    **{**_PRIM, "nin": 3},
    batch_rule=bias_rule(convolution_input_grad_p, _INPUT_GRAD_AXES),
    node_name="ConvolutionBackward0",
    api="nn._conv.convolution_input_grad_bias",
    no_kernel=_no_bool_conv(True),
    samples=_bias_samples(True),
    vjp=(
        _formula(_input_grad_vjp_grad_output, "g", "weight", "grad_output_shape"),
        _formula(_input_grad_vjp_weight, "g", "grad_output", "weight_shape"),
        _bias_vjp,
    ),
    jvp=_formula(
        _input_grad_bias_jvp, "tgrad_output", "tweight", "tbias", "grad_output", "weight", "size"
    ),
    meta=by_kernel,
)
convolution_input_grad_bias = convolution_input_grad_bias_p.fn


def _weight_grad_vjp_grad_output(g, go, shape, geo):
    return _conv_in(go.conj(), g, shape[2:], geo)


def _weight_grad_vjp_input(g, x, shape, geo):
    return _fit(_conv(x.conj(), g, geo), shape[2:])


def _weight_grad_jvp(tx, tgo, x, go, size, geo):
    return _conv_w(tx, go, size, geo) + _conv_w(x, tgo, size, geo)


convolution_weight_grad_p = defop(
    "convolution_weight_grad",
    _convolution_weight_grad,
    **_PRIM,
    batch_rule=fold_batch(_WEIGHT_GRAD_AXES),
    node_name="ConvolutionBackwardBackward0",
    api="nn._conv.convolution_weight_grad",
    samples=_prim_samples("weight"),
    vjp=(
        _formula(_weight_grad_vjp_grad_output, "g", "grad_output", "input_shape"),
        _formula(_weight_grad_vjp_input, "g", "input", "grad_output_shape"),
    ),
    jvp=_formula(_weight_grad_jvp, "tinput", "tgrad_output", "input", "grad_output", "size"),
    meta=by_kernel,
)
convolution_weight_grad = convolution_weight_grad_p.fn


def _fold_prim_samples(kind):
    def samples(make):
        for xs, k, dl, pad, st in (
            ((2, 2, 5, 4), (2, 3), (1, 1), (0, 1), (1, 2)),
            ((1, 3, 6, 6), (2, 2), (2, 1), (1, 0), (2, 2)),
        ):
            attrs = {"kernel_size": k, "dilation": dl, "padding": pad, "stride": st}
            if kind == "im2col":
                yield S((make(xs),), attrs)
            else:
                blocks = _blocks(xs[2:], k, st, tuple((p, p) for p in pad), dl)
                cs = (xs[0], xs[1] * math.prod(k), math.prod(blocks))
                yield S((make(cs),), {"output_size": xs[2:], **attrs})

    return samples


def _im2col_vjp(g, input_shape, kernel_size, dilation, padding, stride):
    return col2im(g, tuple(input_shape[2:]), kernel_size, dilation, padding, stride)


im2col_p = defop(
    "im2col",
    _im2col,
    nin=1,
    batch_rule=fold_batch(_COLUMN_AXES),
    test={"no_oracle": True},
    api="nn._conv.im2col",
    samples=_fold_prim_samples("im2col"),
    node_name="Im2ColBackward0",
    vjp=_im2col_vjp,
    jvp=LINEAR,
    meta=by_kernel,
)
im2col = im2col_p.fn


def _col2im_vjp(g, kernel_size, dilation, padding, stride):
    return im2col(g, kernel_size, dilation, padding, stride)


col2im_p = defop(
    "col2im",
    _col2im_kernel,
    nin=1,
    batch_rule=fold_batch(_COLUMN_AXES),
    test={"no_oracle": True},
    api="nn._conv.col2im",
    samples=_fold_prim_samples("col2im"),
    node_name="Col2ImBackward0",
    vjp=_col2im_vjp,
    jvp=LINEAR,
    meta=by_kernel,
)
col2im = col2im_p.fn


# ------------------------------------------------------------------ public functions
def _conv_nd(fname, d, input, weight, bias, stride, padding, dilation, groups) -> Tensor:
    batched = _check_rank(fname, input, weight, d)
    mode = None
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        mode, padding = padding, 0
        if mode == "same" and any(s != 1 for s in _ints(stride, d)):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
    _check_dtypes(input, weight, bias, d, False)
    k = weight.dim() - 2
    stride, pads, dilation = _checked_params(d, k, stride, padding, dilation, groups)
    x = input if batched else input.unsqueeze(0)
    _check_shapes(x, weight, bias, groups, False)
    kernel = weight.shape[2:]
    if mode == "same":
        total = [dl * (kk - 1) for dl, kk in zip(dilation, kernel)]
        pads = tuple((t // 2, t - t // 2) for t in total)
        if any(t % 2 for t in total):
            warnings.warn(_SAME_WARNING, UserWarning, stacklevel=3)
    for s, (lo, hi), dl, kk in zip(x.shape[2:], pads, dilation, kernel):
        if s + lo + hi < dl * (kk - 1) + 1:
            padded = [s + lo + hi for s, (lo, hi) in zip(x.shape[2:], pads)]
            extent = [dl * (kk - 1) + 1 for dl, kk in zip(dilation, kernel)]
            raise RuntimeError(
                f"Calculated padded input size per channel: ({_shown(padded)}). Kernel size: "
                f"({_shown(extent)}). Kernel size can't be greater than actual input size"
            )
    if bias is None:
        out = convolution(x, weight, stride, pads, dilation, groups)
    else:
        out = convolution_bias(x, weight, bias, stride, pads, dilation, groups)
    return out if batched else out.squeeze(0)


_SAME_WARNING = (
    "Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
    "copy of the input be created"
)
_DIM_NAMES = {1: ("width",), 2: ("height", "width"), 3: ("depth", "height", "width")}


def _conv_transpose_nd(
    fname, d, input, weight, bias, stride, padding, output_padding, groups, dilation
) -> Tensor:
    batched = _check_rank(fname, input, weight, d)
    if isinstance(padding, str):
        raise TypeError(f"{fname}(): argument 'padding' must be tuple of ints, not str")
    _check_dtypes(input, weight, bias, d, True)
    k = weight.dim() - 2
    stride, padding, dilation, output_padding = _check_params(
        d, k, stride, padding, dilation, groups, output_padding
    )
    x = input if batched else input.unsqueeze(0)
    _check_shapes(x, weight, bias, groups, True)
    if any(op >= s and op >= dl for op, s, dl in zip(output_padding, stride, dilation)):
        shown = [("output_padding", output_padding), ("stride", stride), ("dilation", dilation)]
        if k == 1:  # PyTorch runs a 1-d convolution as a 2-d one and reports it so
            shown = [(w, (int(w != "output_padding"), *v)) for w, v in shown]
        names = _DIM_NAMES[max(k, 2)]
        parts = [f"{w}_{n}: {v}" for w, vals in shown for n, v in zip(names, vals)]
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            + " ".join(parts)
        )
    kernel = tuple(weight.shape[2:])
    size = tuple(
        (n - 1) * s - 2 * p + dl * (kk - 1) + op + 1
        for n, s, p, dl, kk, op in zip(
            x.shape[2:], stride, padding, dilation, kernel, output_padding
        )
    )
    if any(s < 1 for s in size):
        raise RuntimeError(
            f"Given input size per channel: ({_shown(x.shape[2:])}). Calculated output size per "
            f"channel: ({_shown(size)}). Output size is too small"
        )
    pads = tuple((p, p) for p in padding)
    if bias is None:
        out = convolution_input_grad(x, weight, size, stride, pads, dilation, groups)
    else:
        out = convolution_input_grad_bias(x, weight, bias, size, stride, pads, dilation, groups)
    return out if batched else out.squeeze(0)


# ------------------------------------------------------------------ samples
def _conv_samples(d: int):
    def samples(make):
        sp = (5, 4, 3)[d - 1]  # spatial size: small, smaller in more dims
        s = (sp,) * d
        yield S((make((2, 3, *s)), make((4, 3, *(3,) * d)), make((4,))))
        yield S(
            (make((2, 2, *s)), make((3, 2, *(2,) * d))),
            {"stride": 2, "padding": 1, "dilation": (1,) * (d - 1) + (2,)},
        )
        yield S(
            (make((1, 4, *s)), make((4, 2, *(2,) * d)), make((4,))),
            {"groups": 2, "padding": (1,) + (0,) * (d - 1)},
        )
        yield S(
            (make((1, 2, *s)), make((3, 2, *(2,) * d))),
            {"padding": "same", "dilation": (2,) + (1,) * (d - 1)},
        )
        yield S((make((2, *s)), make((2, 2, *(3,) * d)), make((2,))), {"padding": "valid"})
        yield S((make((0, 2, *s)), make((3, 2, *(2,) * d))))
        if d == 2:  # non-contiguous input and weight
            yield S(
                (
                    make((2, 5, 5, 3)).transpose(0, 3, 1, 2),
                    make((3, 3, 2, 2)).transpose(1, 0, 2, 3),
                )
            )

    return samples


def _conv_errors(fname: str, d: int, transposed: bool):
    def errors(make):
        s = (5,) * d
        w = (2, 4, *(3,) * d) if transposed else (4, 2, *(3,) * d)
        yield ErrorInput(
            S((make((5,) * d), make(w))),
            RuntimeError,
            f"D \\(batched\\) input to {fname}, but got input of size",
        )
        yield ErrorInput(
            S((make((1, 2, *s)), make((4, 2)))),
            RuntimeError,
            "weight should have at least three dimensions",
        )
        yield ErrorInput(
            S((make((1, 2, *s)), make(w)), {"groups": 3}),
            RuntimeError,
            "Given groups=3, expected weight to be (divisible by|at least) 3 at dimension 0",
        )
        yield ErrorInput(
            S((make((1, 3, *s)), make(w))),
            RuntimeError,
            "to have 2 channels, but got 3 channels instead",
        )
        yield ErrorInput(
            S((make((1, 2, *s)), make(w)), {"stride": (1,) * (d + 1)}),
            RuntimeError,
            f"expected stride to be a single integer value or a list of {d} values",
        )
        yield ErrorInput(
            S((make((1, 2, *s)), make(w)), {"padding": -1}),
            RuntimeError,
            "negative padding is not supported",
        )
        yield ErrorInput(
            S((make((1, 2, *s)), make(w)), {"groups": 0}),
            RuntimeError,
            "non-positive groups is not supported",
        )
        yield ErrorInput(
            S((make((1, 2, *s)), make(w), make((3,)))),
            RuntimeError,
            "expected bias to be 1-dimensional with 4 elements",
        )
        if transposed:
            yield ErrorInput(
                S((make((1, 2, *s)), make(w)), {"output_padding": 1}),
                RuntimeError,
                "output padding must be smaller than either stride or dilation",
            )
            yield ErrorInput(
                S((make((1, 2, *(2,) * d)), make(w)), {"padding": 3}),
                RuntimeError,
                "Output size is too small",
            )
        else:
            yield ErrorInput(
                S((make((1, 2, *s)), make(w)), {"stride": 2, "padding": "same"}),
                RuntimeError,
                "padding='same' is not supported for strided convolutions",
            )
            yield ErrorInput(
                S((make((1, 2, *s)), make(w)), {"padding": "full"}),
                RuntimeError,
                "Invalid padding string: 'full'",
            )
            yield ErrorInput(
                S((make((1, 2, *(2,) * d)), make(w))),
                RuntimeError,
                "Kernel size can't be greater than actual input size",
            )
            yield ErrorInput(
                S((make((1, 2, *s)), make(w, dtype="float64"))),
                RuntimeError,
                "expected scalar type Float but found Double",
            )

    return errors


def _conv_transpose_samples(d: int):
    def samples(make):
        s = ((5,), (4, 4), (3, 3, 3))[d - 1]
        yield S((make((2, 3, *s)), make((3, 2, *(3,) * d)), make((2,))))
        yield S(
            (make((1, 2, *s)), make((2, 3, *(2,) * d))),
            {"stride": 2, "padding": 1, "output_padding": 1},
        )
        # output_padding >= stride (allowed below the dilation): the adjoint of a cut convolution
        yield S(
            (make((1, 4, *s)), make((4, 2, *(2,) * d)), make((4,))),
            {"groups": 2, "dilation": 2, "output_padding": 1},
        )
        yield S(
            (make((2, *s)), make((2, 2, *(2,) * d))),
            {"stride": (2,) + (1,) * (d - 1), "padding": (0,) * (d - 1) + (1,)},
        )
        yield S((make((0, 2, *s)), make((2, 3, *(2,) * d))))

    return samples


# ------------------------------------------------------------------ the public family
def _make_conv(d: int):
    fname = f"conv{d}d"

    def conv(
        input: Tensor,
        weight: Tensor,
        bias: Tensor | None = None,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
    ) -> Tensor:
        return _conv_nd(fname, d, input, weight, bias, stride, padding, dilation, groups)

    conv.__name__ = conv.__qualname__ = fname
    conv.__doc__ = (
        f"A {d}-D convolution (cross-correlation) of ``input`` (N, C, ...) or (C, ...) with "
        "``weight`` (O, C/groups, ...), plus ``bias``; padding may be 'same' or 'valid'."
    )
    return composite(
        conv,
        samples=_conv_samples(d),
        error_samples=_conv_errors(fname, d, False),
        api=f"nn.functional.{fname}",
        # (PyTorch's convolutions take complex tensors; on complex32 its values differ from
        # one rounding of the complex64 result by up to ~1e-2: its accumulation order and
        # intermediate ComplexHalf roundings are not mirrored)
        test={**COMPLEX_TOO, "complex32_tol": 2e-2},
    )


def _make_conv_transpose(d: int):
    fname = f"conv_transpose{d}d"

    def conv_transpose(
        input: Tensor,
        weight: Tensor,
        bias: Tensor | None = None,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        dilation=1,
    ) -> Tensor:
        return _conv_transpose_nd(
            fname, d, input, weight, bias, stride, padding, output_padding, groups, dilation
        )

    conv_transpose.__name__ = conv_transpose.__qualname__ = fname
    conv_transpose.__doc__ = (
        f"A {d}-D transposed convolution (the gradient of conv{d}d with respect to its input) "
        "of ``input`` (N, C, ...) or (C, ...) with ``weight`` (C, O/groups, ...), plus ``bias``."
    )
    return composite(
        conv_transpose,
        samples=_conv_transpose_samples(d),
        error_samples=_conv_errors(fname, d, True),
        api=f"nn.functional.{fname}",
        # (PyTorch's convolutions take complex tensors; on complex32 its values differ from
        # one rounding of the complex64 result by up to ~1e-2: its accumulation order and
        # intermediate ComplexHalf roundings are not mirrored)
        test={**COMPLEX_TOO, "complex32_tol": 2e-2},
        autocast="lower",
    )


conv1d, conv2d, conv3d = (_make_conv(d) for d in (1, 2, 3))
conv_transpose1d, conv_transpose2d, conv_transpose3d = (_make_conv_transpose(d) for d in (1, 2, 3))


# ------------------------------------------------------------------ unfold and fold
def _pair(name: str, v) -> tuple[int, ...]:
    v = _ints(v, 2)
    if len(v) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(v)}")
    return v


def _check_blocks_args(kernel, dilation, padding, stride) -> None:
    checks = (
        (kernel, lambda v: v > 0, "kernel size should be greater than zero", "kernel"),
        (stride, lambda v: v > 0, "stride should be greater than zero", "stride"),
        (dilation, lambda v: v > 0, "dilation should be greater than zero", "dilation"),
        (padding, lambda v: v >= 0, "padding should be non-negative", "pad"),
    )
    for vals, ok, text, label in checks:
        if not all(ok(v) for v in vals):
            raise RuntimeError(
                f"{text}, but got {label}_height: {vals[0]} {label}_width: {vals[1]}"
            )


def _tup(v) -> str:
    return "(" + ", ".join(str(x) for x in v) + ")"


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sliding local blocks of a (N, C, H, W) or (C, H, W) input as columns
    (N, C * prod(kernel_size), L) (im2col)."""
    kernel, dilation = _pair("kernel_size", kernel_size), _pair("dilation", dilation)
    padding, stride = _pair("padding", padding), _pair("stride", stride)
    _check_blocks_args(kernel, dilation, padding, stride)
    n = input.dim()
    if n < 3:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got 2)"
        )
    if n > 4 or 0 in input.shape[n - 3 :]:
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
            f"dimensions for input, but got: {list(input.shape)}"
        )
    pads = tuple((p, p) for p in padding)
    blocks = _blocks(input.shape[-2:], kernel, stride, pads, dilation)
    if any(b < 1 for b in blocks):
        raise RuntimeError(
            f"Given input with spatial size {_tup(input.shape[-2:])}, kernel_size={_tup(kernel)}, "
            f"dilation={_tup(dilation)}, padding={_tup(padding)}, calculated shape of the array "
            f"of sliding blocks as {_tup(blocks)}, but its components must be at least one."
        )
    x = input if n == 4 else input.unsqueeze(0)
    out = im2col(x, kernel, dilation, padding, stride)
    return out if n == 4 else out.squeeze(0)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sum columns (N, C * prod(kernel_size), L) or (C * prod(kernel_size), L) back into an
    image of ``output_size`` (col2im; the adjoint of unfold)."""
    size, kernel = _pair("output_size", output_size), _pair("kernel_size", kernel_size)
    dilation, padding, stride = (
        _pair("dilation", dilation),
        _pair("padding", padding),
        _pair("stride", stride),
    )
    _check_blocks_args(kernel, dilation, padding, stride)
    n = input.dim()
    if n not in (2, 3) or 0 in input.shape[n - 2 :]:
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
            f"non-zero dimensions for input, but got: {list(input.shape)}"
        )
    kp = kernel[0] * kernel[1]
    if input.shape[-2] % kp:
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
            f"but got input.size(1)={input.shape[-2]} and kernel_size={_tup(kernel)}."
        )
    pads = tuple((p, p) for p in padding)
    blocks = _blocks(size, kernel, stride, pads, dilation)
    given = (
        f"Given output_size={_tup(size)}, kernel_size={_tup(kernel)}, dilation={_tup(dilation)}, "
        f"padding={_tup(padding)}, stride={_tup(stride)}, "
    )
    if any(b < 0 for b in blocks):
        raise RuntimeError(
            f"{given}calculated shape of the array of sliding blocks as {_tup(blocks)}, which is "
            "too small (non-positive)"
        )
    if input.shape[-1] != blocks[0] * blocks[1]:
        raise RuntimeError(
            f"{given}expected size of input's dimension 2 to match the calculated number of "
            f"sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
            f"input.size(2)={input.shape[-1]}."
        )
    x = input if n == 3 else input.unsqueeze(0)
    out = col2im(x, size, kernel, dilation, padding, stride)
    return out if n == 3 else out.squeeze(0)


def _unfold_samples(make):
    yield S((make((2, 3, 5, 5)), 2))
    yield S((make((1, 2, 6, 5)), (2, 3)), {"dilation": (2, 1), "padding": 1, "stride": (2, 1)})
    yield S((make((2, 4, 4)), 3), {"padding": (0, 1)})
    yield S((make((0, 2, 4, 4)), 2))


def _unfold_errors(make):
    yield ErrorInput(
        S((make((1, 2, 2, 5, 5)), 2)),
        RuntimeError,
        "Expected 3D or 4D \\(batch mode\\) tensor",
    )
    yield ErrorInput(
        S((make((1, 2, 5, 5)), 7)),
        RuntimeError,
        "calculated shape of the array of sliding blocks as \\(-1, -1\\)",
    )
    yield ErrorInput(
        S((make((1, 2, 5, 5)), 2), {"stride": 0}),
        RuntimeError,
        "stride should be greater than zero, but got stride_height: 0 stride_width: 0",
    )
    yield ErrorInput(
        S((make((1, 2, 5, 5)), (2, 2, 2))),
        RuntimeError,
        "It is expected kernel_size equals to 2, but got size 3",
    )


def _fold_samples(make):
    yield S((make((2, 12, 16)), (5, 5), 2))
    yield S(
        (make((1, 12, 15)), (6, 5), (2, 3)),
        {"dilation": (2, 1), "padding": 1, "stride": (2, 1)},
    )
    yield S((make((18, 8)), 4, 3), {"padding": (0, 1)})
    yield S((make((0, 8, 9)), 4, 2))


def _fold_errors(make):
    yield ErrorInput(
        S((make((1, 7, 9)), (4, 4), 2)),
        RuntimeError,
        "to be divisible by the product of kernel_size, but got input.size\\(1\\)=7",
    )
    yield ErrorInput(
        S((make((1, 8, 10)), (4, 4), 2)),
        RuntimeError,
        "sliding blocks 3 \\* 3 = 9, but got input.size\\(2\\)=10.",
    )
    yield ErrorInput(
        S((make((8,)), (4, 4), 2)),
        RuntimeError,
        "Expected 2D or 3D \\(batch mode\\) tensor",
    )
    yield ErrorInput(
        S((make((1, 8, 9)), 4, 0)),
        RuntimeError,
        "kernel size should be greater than zero",
    )


unfold = composite(
    unfold,
    samples=_unfold_samples,
    error_samples=_unfold_errors,
    api="nn.functional.unfold",
    no_kernel=NoKernel("i", "im2col_out_cpu", inputs=(0,)),  # bool has a kernel, integers not
    complex32="im2col_out_cpu",  # (PyTorch's kernel that refuses ComplexHalf)
    test=COMPLEX_TOO,
)
fold = composite(
    fold,
    samples=_fold_samples,
    error_samples=_fold_errors,
    api="nn.functional.fold",
    no_kernel=NoKernel("i", "col2im_out_cpu", inputs=(0,)),
    complex32="col2im_out_cpu",  # (PyTorch's kernel that refuses ComplexHalf)
    test=COMPLEX_TOO,
)

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "fold",
    "unfold",
]
