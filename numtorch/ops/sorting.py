"""Sorting and order statistics: sort, argsort, topk, kthvalue, mode, median and
nanmedian."""

from __future__ import annotations

import math

import numpy as np

from .._core import dtype as dt
from .._core import meta_rules
from .._core.layout import preserve
from .._core.meta import by_kernel
from .._core.methods import tensor_methods
from .._core.no_kernel import NoKernel, dimensioned, dimensioned_nonempty
from .._opdb.samples import ErrorInput, S
from ._batching import materialize, vmap_depth
from ._families import FLOATS_INT, FLOATS_INT_BOOL
from ._reduce_common import (
    _DIMS,
    RT,
    _err_dim,
    _tensor,
    _wrap,
    _write_rt,
    defop,
    dim1,
    distinct,
)
from .comparison import where
from .creation import full
from .extrema import _indexed_op, _ties_jvp
from .scans import _accumulate


def _argsort_kernel(xp, x, d: int, descending: bool):
    if descending:  # stable descending: sort the reversed slice, then reverse back
        n = x.shape[d]
        return n - 1 - xp.flip(xp.argsort(xp.flip(x, d), axis=d, kind="stable"), d)
    return xp.argsort(x, axis=d, kind="stable")


def _sort(xp, x, dim=-1, descending=False, *, stable=False):
    d = dim1(dim, x.ndim)
    if x.ndim == 0:
        return x.copy(), xp.zeros((), xp.int64)
    idx = _argsort_kernel(xp, x, d, descending).astype(xp.int64)
    return xp.take_along_axis(x, idx, axis=d), idx


def _argsort(xp, x, dim=-1, descending=False, *, stable=False):
    return _sort(xp, x, dim, descending, stable=stable)[1]


def _sort_samples(make):
    yield S((distinct(make, (2, 3)),))
    yield S((distinct(make, (2, 3, 4)), 1))
    yield S((distinct(make, (2, 3, 4)), -1, True))
    yield S((distinct(make, (3, 4)),), {"dim": 0, "descending": True})
    yield S((distinct(make, ()),))
    yield S((make((0, 3)), 0))
    if make.dtype != np.float64:  # ties (not in the float64 grad tests): stable order
        yield S((make((3, 5), -1, 1, dtype="int64").astype(make.dtype),), {"stable": True})
        ties = make((3, 5), -1, 1, dtype="int64").astype(make.dtype)
        yield S((ties,), {"stable": True, "dim": 1, "descending": True})


def _sort_errors(make):
    yield from _err_dim()(make)
    # with stable=, PyTorch's signature takes dim and descending by keyword only
    yield ErrorInput(
        S((make((2, 3)), 1), {"stable": True}),
        TypeError,
        "received an invalid combination of arguments - got \\(Tensor, int, stable=bool\\)",
    )


sort_p = _indexed_op(
    "sort",
    _sort,
    samples=_sort_samples,
    error_samples=_sort_errors,
    test={"dtypes": FLOATS_INT},
    layout=preserve,
    no_kernel=NoKernel("c", error=(RuntimeError, " Sort does not support complex dtypes on CPU")),
)
_raw_sort = sort_p.fn
argsort_p = defop(
    "argsort",
    _argsort,
    nin=1,
    samples=_sort_samples,
    error_samples=_sort_errors,
    test={"dtypes": FLOATS_INT},
    batch_rule=_DIMS,
    methods=True,
    out=True,  # (PyTorch's argsort takes out= with stable=)
    layout=preserve,
    no_kernel=NoKernel("c", error=(RuntimeError, " Sort does not support complex dtypes on CPU")),
    meta=by_kernel,
)


def _topk(xp, x, k, dim=-1, largest=True, sorted=True):
    d = dim1(dim, x.ndim)
    n = x.shape[d] if x.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if x.ndim == 0:
        return x.copy(), xp.zeros((), xp.int64)
    idx = xp.take(_argsort_kernel(xp, x, d, largest), xp.arange(k), axis=d).astype(xp.int64)
    return xp.take_along_axis(x, idx, axis=d), idx


def _topk_samples(make):
    yield S((distinct(make, (2, 5)), 2))
    yield S((distinct(make, (2, 3, 4)), 2, 1))
    yield S((distinct(make, (3, 4)), 3, 0, False))
    yield S((distinct(make, (3, 4)), 1), {"largest": False, "dim": -1})
    yield S((distinct(make, (3, 4)), 0))
    yield S((distinct(make, ()), 1))


def _topk_errors(make):
    yield ErrorInput(S((make((2, 3)), 4)), RuntimeError, "selected index k out of range")


def _dim_size(arrays, attrs) -> int:
    """The size of the dim an op of one tensor works along (1 for a 0-d tensor)."""
    x = arrays[0]
    return x.shape[dim1(attrs["dim"], x.ndim)] if x.ndim else 1


topk_p = _indexed_op(
    "topk",
    _topk,
    samples=_topk_samples,
    error_samples=_topk_errors,
    test={"dtypes": FLOATS_INT},
    no_kernel=(
        NoKernel(
            "b",
            error=(RuntimeError, "topk does not support bool dtypes on CPU"),
            when=lambda arrays, attrs: 0 <= attrs["k"] <= _dim_size(arrays, attrs),
        ),
        NoKernel("c", error=(RuntimeError, " topk does not support complex dtypes on CPU")),
    ),
)


def _kthvalue(xp, x, k, dim=-1, keepdim=False):
    d = dim1(dim, x.ndim)
    n = x.shape[d] if x.ndim else 1
    if not n:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if x.ndim == 0:
        return x.copy(), xp.zeros((), xp.int64)
    idx = xp.take(xp.argsort(x, axis=d, kind="stable"), xp.asarray([k - 1]), axis=d).astype(
        xp.int64
    )
    vals = xp.take_along_axis(x, idx, axis=d)
    return (vals, idx) if keepdim else (vals.squeeze(d), idx.squeeze(d))


def _kth_samples(make):
    yield S((distinct(make, (2, 5)), 2))
    yield S((distinct(make, (2, 3, 4)), 2, 1))
    yield S((distinct(make, (3, 4)), 3, 0, True))
    yield S((distinct(make, (3, 4)), 1), {"keepdim": True, "dim": -1})
    yield S((distinct(make, ()), 1))


def _kth_errors(make):
    yield ErrorInput(
        S((make((2, 3)), 4)), RuntimeError, r"kthvalue\(\): selected number k out of range"
    )
    yield ErrorInput(
        S((make((2, 3)), 0)), RuntimeError, r"kthvalue\(\): selected number k out of range"
    )


kthvalue_p = _indexed_op(
    "kthvalue",
    _kthvalue,
    samples=_kth_samples,
    error_samples=_kth_errors,
    test={"dtypes": FLOATS_INT},
    no_kernel=(
        NoKernel("b", "kthvalue_cpu", when=lambda arrays, attrs: _dim_size(arrays, attrs)),
        NoKernel("c", "kthvalue_cpu", when=dimensioned),  # (0-dim: a copy)
    ),
)
_raw_kthvalue = kthvalue_p.fn


def _mode(xp, x, dim=-1, keepdim=False):
    d = dim1(dim, x.ndim)
    if x.ndim == 0:
        return x.copy(), xp.zeros((), xp.int64)
    if not x.shape[d]:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    xs = xp.moveaxis(x, d, -1)
    order = xp.argsort(xs, axis=-1, kind="stable")
    s = xp.take_along_axis(xs, order, -1)
    pos = xp.arange(s.shape[-1])
    change = s[..., 1:] != s[..., :-1]
    start = xp.concatenate([xp.ones(s.shape[:-1] + (1,), bool), change], -1)
    end = xp.concatenate([change, xp.ones(s.shape[:-1] + (1,), bool)], -1)
    first = _accumulate(xp, "maximum", xp.where(start, pos, 0), -1)
    # the longest run of equal sorted values (the smallest value on a tie), at its last
    # element: the value's last occurrence, since the sort is stable
    at = xp.argmax(xp.where(end, pos - first + 1, 0), axis=-1)[..., None]
    values = xp.moveaxis(xp.take_along_axis(s, at, -1), -1, d)
    indices = xp.moveaxis(xp.take_along_axis(order, at, -1), -1, d).astype(xp.int64)
    return (values, indices) if keepdim else (values.squeeze(d), indices.squeeze(d))


def _mode_samples(make):
    yield S((distinct(make, (2, 5)),))
    yield S((distinct(make, (2, 3, 4)), 1))
    yield S((distinct(make, (3, 4)), 0, True))
    yield S((distinct(make, ()),))
    yield S((make((0, 3)), 1))
    if make.dtype != np.float64:  # repeated values (not in the float64 grad tests)
        yield S((make((4, 7), -1, 2, dtype="int64").astype(make.dtype),))
        yield S((make((5, 3), -1, 2, dtype="int64").astype(make.dtype), 0, True))


def _mode_errors(make):
    yield ErrorInput(S((make((0, 3)), 0)), IndexError, r"mode\(\): Expected reduction dim 0")


mode_p = _indexed_op(
    "mode",
    _mode,
    samples=_mode_samples,
    error_samples=_mode_errors,
    test={"dtypes": FLOATS_INT_BOOL},
    no_kernel=NoKernel("c", "mode_cpu", when=dimensioned_nonempty),
)


def _nan_as(dtype):
    """NaN cast to ``dtype`` as PyTorch's kernels do: the most negative value of a 32- or
    64-bit integer, 0 for narrower ones."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return int(np.iinfo(dtype).min) if dtype.itemsize >= 4 else 0
    return math.nan


def _no_bool(x, kernel: str) -> None:
    """The median family has no bool or complex kernels (PyTorch's error names ``kernel``)."""
    if dt.of(x) is dt.bool_ or dt.of(x).is_complex:
        raise dt.not_implemented(kernel, x)


def _median(xp, x):
    if x.size == 0:  # the median of nothing is NaN
        return xp.asarray(_nan_as(x.dtype), x.dtype)
    f = xp.sort(x.reshape(-1))  # NaN sorts last; one NaN makes the median NaN
    return f[-1 if f[-1] != f[-1] else (x.size - 1) // 2].copy()


def _median_rule(vmap, args, bdims, attrs):
    """The lower middle of each sorted flattened slice, NaN where the slice has one."""
    x = materialize(vmap, args[0], bdims[0]).reshape(vmap.size, -1)
    _no_bool(x, "median_out")  # PyTorch's rule runs median along a dim: its kernel's name
    n = x.shape[1]
    if n == 0:
        return full((vmap.size,), _nan_as(x.dtype.np), dtype=x.dtype, device=x.device), 0
    s = _raw_sort(x, 1)[0]
    last = s.select(1, n - 1)
    return where(last != last, last, s.select(1, (n - 1) // 2)), 0


def _median_samples(make):
    yield S((distinct(make, (2, 3)),))
    yield S((distinct(make, (5,)),))
    yield S((distinct(make, ()),))
    yield S((distinct(make, (2, 3, 4)), 1))
    yield S((distinct(make, (3, 4)), -1, True))
    yield S((distinct(make, (4, 3)),), {"dim": 0})
    yield S((distinct(make, ()), 0))
    if make.dtype == np.float32:  # NaN propagates (not in the float64 finite-difference tests)
        nan = distinct(make, (2, 3))
        nan[1, 0] = np.nan
        yield S((nan,))


def _median_vjp(g, x, result):
    """g split evenly among the elements equal to the median, or among the NaNs if it is
    NaN; 0 elsewhere whatever g is (eager PyTorch's masked_fill: a NaN g stays where the
    median is, as the others do not move it)."""
    mask = (x == result) | ((x != x) & (result != result))
    return where(mask, g / mask.sum(), 0.0)


def _median_errors(make):
    yield ErrorInput(S((make((0, 3)), 0)), IndexError, r"median\(\): Expected reduction dim 0")


# median's and nanmedian's formulas (the same split of the gradient)
_MEDIAN_RULES = {
    "vjp": _median_vjp,
    "jvp": lambda t, x, result: _ties_jvp(t, x, result, None),
    "error_samples": _median_errors,
}
median_p = defop(
    "median",
    _median,
    **_MEDIAN_RULES,
    samples=_median_samples,
    test={"dtypes": FLOATS_INT},
    batch_rule=_median_rule,
    no_kernel=(
        NoKernel("b", "median_cpu", when=lambda arrays, attrs: arrays[0].size),
        NoKernel("c", "median_cpu"),
    ),
    meta=meta_rules.to_scalar,
)
_raw_median = median_p.fn


sort = _wrap("sort", sort_p)
topk = _wrap("topk", topk_p)
kthvalue = _wrap("kthvalue", kthvalue_p)
mode = _wrap("mode", mode_p)


def median(input, dim=None, keepdim: bool = False, *, out=None):
    """median(input): the lower middle value; median(input, dim) -> (values, indices)."""
    if dim is None:
        return _raw_median(input)
    input = _tensor(input)
    d = dim1(dim, input.dim())
    if input.dim() and input.shape[d] == 0:  # under vmap PyTorch names the physical dim
        p = d + vmap_depth(input)
        raise IndexError(f"median(): Expected reduction dim {p} to have non-zero size.")
    _no_bool(input, "median_out")  # kthvalue's own refusal would name kthvalue's kernel
    n = input.shape[d] if input.dim() else 1
    values, indices = _raw_kthvalue(input, (n - 1) // 2 + 1, d, True)
    if input.dim() and input.dtype.is_floating_point:  # a NaN in a slice is its median
        nan = input.isnan()
        indices = where(nan.any(d, keepdim=True), nan.to(dt.uint8).argmax(d, keepdim=True), indices)
        values = input.gather(d, indices)
    if not keepdim and input.dim():
        # (values are no view: an in-place write into them rebases their own history)
        values, indices = values.squeeze(d).clone(), indices.squeeze(d)
    res = RT["median"](values, indices)
    if out is not None:
        from .._core.out import write_out

        write_out(tuple(out), tuple(res))
        return RT["median"](*out)
    return res


def _nanmedian(xp, x):
    if x.size == 0:
        return xp.asarray(_nan_as(x.dtype), x.dtype)
    f = xp.sort(x.reshape(-1))  # NaN sorts last
    k = int((f == f).sum())
    return f[max(k - 1, 0) // 2].copy()  # no number: the first NaN


def _nanmedian_rule(vmap, args, bdims, attrs):
    """The lower middle of the numbers of each sorted flattened slice (NaN if none)."""
    x = materialize(vmap, args[0], bdims[0]).reshape(vmap.size, -1)
    if x.shape[1] == 0:
        return full((vmap.size,), _nan_as(x.dtype.np), dtype=x.dtype, device=x.device), 0
    _no_bool(x, "median_out")  # (PyTorch's rule runs nanmedian along a dim)
    s = _raw_sort(x, 1)[0]
    pos = ((s == s).sum(1, keepdim=True) - 1).clamp_min(0) // 2
    return s.gather(1, pos).squeeze(1), 0


def _nanmedian_samples(make):
    yield from _median_samples(make)
    if make.is_float:  # NaNs are skipped (the gradient of the numbers is finite)
        nan = distinct(make, (3, 4))
        nan[0, 1] = nan[2, 0] = nan[2, 3] = np.nan
        yield S((nan,))
        yield S((nan, 1))
        yield S((nan, 0, True))
    if make.dtype == np.float32:  # all NaN: NaN (not in the float64 finite-difference tests)
        yield S((np.full((3,), np.nan, make.dtype),))


nanmedian_p = defop(
    "nanmedian",
    _nanmedian,
    **_MEDIAN_RULES,
    samples=_nanmedian_samples,
    test={"dtypes": FLOATS_INT},
    batch_rule=_nanmedian_rule,
    no_kernel=(
        NoKernel("b", "median_cpu", when=lambda arrays, attrs: arrays[0].size),
        NoKernel("c", "median_cpu"),
    ),
    meta=meta_rules.to_scalar,
)
_raw_nanmedian = nanmedian_p.fn


def nanmedian(input, dim=None, keepdim: bool = False, *, out=None):
    """The median of the numbers (NaN skipped; NaN where there are none); with ``dim``,
    (values, indices) along it."""
    if dim is None:
        res = _raw_nanmedian(input)
        if out is None:
            return res
        from .._core.out import write_out

        return write_out(out, res)
    input = _tensor(input)
    nd = input.dim()
    d = dim1(dim, nd)
    if nd and input.shape[d] == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    _no_bool(input, "median_out")  # (after the dim's checks, as PyTorch's)
    x = input if nd else input.reshape(1)
    order = _raw_sort(x, d)[1]  # NaN sorts last
    pos = ((x == x).sum(d, keepdim=True) - 1).clamp_min(0) // 2
    indices = order.gather(d, pos)
    values = x.gather(d, indices)
    if not keepdim or not nd:
        values, indices = values.squeeze(d).clone(), indices.squeeze(d)  # (no view: median's)
    return _write_rt("nanmedian", (values, indices), out)


tensor_methods(
    {
        "sort": sort,
        "topk": topk,
        "kthvalue": kthvalue,
        "mode": mode,
        "median": median,
        "nanmedian": nanmedian,
    }
)
