"""The arguments and windows every windowed pool shares: kernel, stride, padding and
dilation checked into tuples (in PyTorch's words), the input's rank and dtype checks, the
output sizes, the padded windows as a strided view, and the argument-error samples of the
max and average pools.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtype as dt
from .._core.op import ErrorInput
from .._opdb.samples import S
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


def _check_dtype(x, name: str, allowed: str = "float", empty_runs: bool = False) -> None:
    """PyTorch's error for a dtype its pool has no kernel for: floats and the integer types
    of ``allowed`` ("float", "int64" or "int") pass; with ``empty_runs`` an empty input
    too (PyTorch's unpool and fractional pool reach no kernel for it)."""
    n = x.dtype.name
    if empty_runs and 0 in x.shape:
        return
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
