"""Convolution kernels for small NumPy operands: one gather through a cached index, one GEMM.

At the sizes of a small CNN (an 8x8 image, a few channels) a strided window view, its
copy and the per-offset adds of col2im cost more in NumPy's call overhead than in work.
Here each primitive gathers its columns with one ``take`` through an index array cached
per geometry, where index ``S`` (one past the operand's last position) reads an appended
zero: the zero padding, and for the input gradient the positions between strided
windows. The input gradient thereby runs as a convolution of grad_output with the
flipped kernel, and needs no scatter.

Each function returns None where it does not apply (a CuPy or meta array, or a gather
too large to beat the strided kernels), and the caller runs its general kernel.
"""

from __future__ import annotations

import math

import numpy as np

_ndarray = np.ndarray
# Elements of the gathered matrix up to which one take beats the strided copy (and, for
# the input gradient, col2im's adds); up to _LARGE where the windows' rows are short (the
# strided copy's cost is per row there); past it the general kernels run.
_SMALL = 1 << 17
_SHORT_ROW = 8
_SMALL_ADJOINT = 1 << 15
_LARGE = 1 << 22
_PLAN_MAX = 1 << 16  # index entries (8 bytes each) of a plan kept
_plans: dict = {}


def _axis_index(n_out, k, src, st, lo, dl, transposed):
    """Per kernel offset and output position along one axis, the source position read
    (-1: a zero). Forward: position l reads l*st + k*dl - lo of the input. Transposed: input
    position s reads the grad_output window t where t*st = s + lo - k*dl."""
    kk = np.arange(k)[:, None]
    if transposed:
        t = np.arange(n_out)[None, :] + lo - kk * dl
        pos = t // st
        ok = (t % st == 0) & (pos >= 0) & (pos < src)
    else:
        pos = np.arange(n_out)[None, :] * st + kk * dl - lo
        ok = (pos >= 0) & (pos < src)
    return np.where(ok, pos, -1)


def _plan(src, kernel, out, stride, padding, dilation, transposed):
    """The (prod(kernel), prod(out)) gather index into a flattened source of shape ``src``
    with a zero appended, whether any entry reads that zero, and ``out`` (None: as many
    windows as fit)."""
    key = (src, kernel, out, stride, padding, dilation, transposed)
    plan = _plans.get(key)
    if plan is not None:
        return plan
    if len(_plans) >= 128:  # many geometries (a sweep): keep the cache bounded
        _plans.clear()
    if out is None:
        out = tuple(
            (s + lo + hi - dl * (k - 1) - 1) // st + 1
            for s, k, st, (lo, hi), dl in zip(src, kernel, stride, padding, dilation)
        )
    if min(out) <= 0 or min(src) <= 0 or math.prod(kernel) * math.prod(out) > _PLAN_MAX:
        # (left to the general kernels: no windows, their errors; or too large to gather)
        _plans[key] = plan = (None, False, out)
        return plan
    d = len(kernel)
    size = math.prod(src)
    flat = np.zeros((1,) * (2 * d), np.intp)
    bad = np.zeros((1,) * (2 * d), bool)
    step = 1
    for i in reversed(range(d)):
        pos = _axis_index(
            out[i], kernel[i], src[i], stride[i], padding[i][0], dilation[i], transposed
        )
        shape = [1] * (2 * d)
        shape[i], shape[d + i] = pos.shape
        pos = pos.reshape(shape)
        flat = flat + pos * step
        bad = bad | (pos < 0)
        step *= src[i]
    idx = np.where(bad, size, flat).reshape(math.prod(kernel), math.prod(out))
    plan = _plans[key] = (np.ascontiguousarray(idx), bool(bad.any()), out)
    return plan


def _gathered(a, idx, zero: bool):
    """a (N, C, *S) gathered to (N, C, K, L) through idx."""
    n, c = a.shape[:2]
    size = a.size // (n * c) if n * c else math.prod(a.shape[2:])
    if zero:
        src = np.zeros((n, c, size + 1), a.dtype)
        src[:, :, :size] = a.reshape(n, c, size)
    else:
        src = a.reshape(n, c, size)
    return src.take(idx, axis=2)


def _numpy(xp, *arrays) -> bool:
    return xp is np and all(type(a) is _ndarray for a in arrays)


def _worth(elements: int, row: int) -> bool:
    """Whether gathering ``elements`` beats the strided kernel, whose copies and adds
    run one call per row of ``row`` elements."""
    return elements <= _SMALL or (row <= _SHORT_ROW and elements <= _LARGE)


def convolution(xp, x, w, stride, padding, dilation, groups):
    """The convolution's result (N, O, *windows), or None."""
    idx, zero, blocks = _plan(x.shape[2:], w.shape[2:], None, stride, padding, dilation, False)
    n, o = x.shape[0], w.shape[0]
    if idx is None or not (_numpy(xp, x, w) and _worth(n * x.shape[1] * idx.size, blocks[-1])):
        return None
    ck = w.size // o if o else math.prod(w.shape[1:])
    cols = _gathered(x, idx, zero).reshape(n, groups, ck, idx.shape[1])
    return np.matmul(w.reshape(groups, o // groups, ck), cols).reshape(n, o, *blocks)


def input_grad(xp, g, w, size, stride, padding, dilation, groups):
    """The input gradient (N, C, *size), or None (also for a non-finite weight, whose
    products with the gathered zeros would be NaN where the adjoint has no term)."""
    kernel = w.shape[2:]
    idx, zero, _ = _plan(g.shape[2:], kernel, size, stride, padding, dilation, True)
    if idx is None or not _numpy(xp, g, w):
        return None
    n, o = g.shape[:2]
    og, cg, k = o // groups, w.shape[1], idx.shape[0]
    # (gathered: N*O*K*S elements; the strided kernel's GEMM writes N*C*K*L, then adds)
    elements = n * o * idx.size
    if elements > _SMALL_ADJOINT and (
        any(s != 1 for s in stride) or o > 2 * cg * groups or not _worth(elements, size[-1])
    ):
        return None
    if zero and not np.isfinite(w).all():
        return None
    wt = w.reshape(groups, og, cg, k).transpose(0, 2, 1, 3).reshape(groups, cg, og * k)
    cols = _gathered(g, idx, zero).reshape(n, groups, og * k, idx.shape[1])
    return np.matmul(wt, cols).reshape(n, cg * groups, *size)


def weight_grad(xp, x, g, size, stride, padding, dilation, groups):
    """The weight gradient (O, C/groups, *size), or None."""
    blocks = g.shape[2:]
    idx, zero, _ = _plan(x.shape[2:], size, blocks, stride, padding, dilation, False)
    n, c = x.shape[:2]
    if idx is None or not (_numpy(xp, x, g) and _worth(n * c * idx.size, blocks[-1])):
        return None
    o, length = g.shape[1], idx.shape[1]
    ckg = c // groups * idx.shape[0]
    cols = _gathered(x, idx, zero)
    if n == 1:
        rows = g.reshape(groups, o // groups, length)
        cols = cols.reshape(groups, ckg, length)
    else:
        rows = g.reshape(n, groups, o // groups, length).transpose(1, 2, 0, 3)
        rows = rows.reshape(groups, o // groups, n * length)
        cols = cols.reshape(n, groups, ckg, length).transpose(1, 2, 0, 3)
        cols = cols.reshape(groups, ckg, n * length)
    return np.matmul(rows, cols.transpose(0, 2, 1)).reshape(o, c // groups, *size)
