"""Binning: ``searchsorted``, ``bucketize``, ``histogram`` and ``histogramdd``.

Positions come from PyTorch's own binary searches (``lower_bound``/``upper_bound`` with
its comparisons, so NaN and unsorted boundaries land where PyTorch's do), vectorized over
every value at once. The histogram kernel takes a leading batch dim, which is its batch
rule. None has a derivative: searchsorted's result is an integer tensor; a histogram's
results require grad when the input does, and their backward raises PyTorch's error.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._core import dtype as dt
from .._core.dispatch import dispatch
from .._core.layout import contiguous
from .._core.meta import by_kernel
from .._core.meta_array import has_values
from .._core.methods import tensor_method
from .._core.no_kernel import NoKernel, unless_empty
from .._core.op import VARIADIC, ErrorInput, defop
from .._core.out import write_out
from .._core.tensor import Tensor
from .._opdb.samples import S
from ._add_at import add_at
from ._batching import front, lshape, materialize, rule_generator
from ._families import promote
from ._no_derivative import NOT_IMPLEMENTED
from .linalg._common import return_type

# ------------------------------------------------------------------ binary search


def _bisect(xp, bd, val, right: bool, sorter=None):
    """For each row of ``bd`` (..., m) and the values ``val`` (..., k) of the same leading
    shape: PyTorch's lower (upper if ``right``) bound of each value, by its comparisons
    (``mid >= val``, ``mid > val``), through ``sorter`` if given."""
    m = bd.shape[-1]
    lo = xp.zeros(val.shape, dtype=np.int64)
    hi = xp.full(val.shape, m, dtype=np.int64)
    for _ in range(max(int(m), 1).bit_length() + 1):
        active = lo < hi
        if has_values(active) and not active.any():
            break
        mid = lo + ((hi - lo) >> 1)
        at = xp.minimum(mid, m - 1)
        if sorter is not None:
            at = xp.take_along_axis(sorter, at, axis=-1)
        mv = xp.take_along_axis(bd, at, axis=-1)
        go_right = ~(mv > val) if right else ~(mv >= val)
        lo = xp.where(active & go_right, mid + 1, lo)
        hi = xp.where(active & ~go_right, mid, hi)
    return lo


# ------------------------------------------------------------------ searchsorted
def _check_side(side, right: bool) -> bool:
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(
                f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}"
            )
        if right and side == "left":
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to opposites, got side of "
                "left while right was True"
            )
        return side == "right"
    return right


def _searchsorted(xp, sorted_sequence, input, sorter=None, out_int32=False, right=False):
    bd, val = sorted_sequence, input
    scalar = not hasattr(val, "ndim")
    if bd.ndim == 0:
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
            "dimension"
        )
    if scalar:
        if bd.ndim != 1:
            raise RuntimeError(
                "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
                f"dimension is 1, but we got boundaries tensor dim({bd.ndim}) and input value's "
                "dim(0) numel(1)"
            )
        val = xp.asarray(val, dtype=bd.dtype)
    elif bd.ndim != 1 and (bd.ndim != val.ndim or bd.shape[:-1] != val.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(bd.shape)} and input value tensor {list(val.shape)}"
        )
    if sorter is not None:
        if sorter.dtype != np.int64:
            raise RuntimeError(
                "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                f"{dt.from_np(sorter.dtype).scalar_name}"
            )
        if sorter.shape != bd.shape:
            raise RuntimeError(
                "torch.searchsorted(): boundary and sorter must have the same size, but got "
                f"boundary tensor {list(bd.shape)}and got sorter tensor {list(sorter.shape)}"
            )
        if (
            sorter.size
            and has_values(sorter)
            and (sorter.min() < 0 or sorter.max() >= bd.shape[-1])
        ):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
    if bd.ndim == 1:  # every value searches the one row
        flat = val.reshape(1, -1)
        pos = _bisect(xp, bd[None], flat, right, None if sorter is None else sorter[None])
        pos = pos.reshape(val.shape)
    else:
        pos = _bisect(xp, bd, val, right, sorter)
    return pos.astype(np.int32 if out_int32 else np.int64)


def _searchsorted_prepare(arrays, attrs=None):
    """Boundaries and values in their promoted dtype (a Python number stays one); the sorter
    as it is."""
    seq, val, sorter = arrays
    (seq, val), _ = promote([seq, val], attrs)
    return [seq, val, sorter], (np.int32 if attrs.get("out_int32") else np.int64)


@rule_generator
def _searchsorted_rule(op):
    def rule(vmap, args, bdims, attrs):
        seq, val, sorter = args
        sb, vb, tb = bdims
        if not isinstance(val, Tensor):  # a number searched in each batched row
            seq = materialize(vmap, seq, sb)
            vals = seq.new_full((seq.shape[0], 1), val)
            sorter = None if sorter is None else materialize(vmap, sorter, tb)
            out = dispatch(op, (seq, vals, sorter), attrs)
            return out.squeeze(-1), 0
        one_row = len(lshape(seq, sb)) == 1
        if one_row and sb is None and tb is None:  # unbatched boundaries: values any shape
            return dispatch(op, (seq, front(val, vb), sorter), attrs), (
                0 if vb is not None else None
            )
        seq = materialize(vmap, seq, sb)
        sorter = None if sorter is None else materialize(vmap, sorter, tb)
        val = materialize(vmap, val, vb)
        if one_row:  # each sample's row searched by all its values
            shape = val.shape
            out = dispatch(op, (seq, val.reshape(shape[0], -1), sorter), attrs)
            return out.reshape(shape), 0
        return dispatch(op, (seq, val, sorter), attrs), 0

    return rule


def _searchsorted_samples(make):
    bd = np.sort(make((6,)))
    yield S((bd, make((2, 3))))
    yield S((bd, make((4,))), {"right": True})
    yield S((bd, make((4,))), {"side": "right", "out_int32": True})
    rows = np.sort(make((2, 5)), axis=-1)
    yield S((rows, make((2, 3))))
    yield S((np.sort(make((2, 3, 4)), axis=-1), make((2, 3, 2))), {"right": True})
    unsorted = make((5,))
    yield S((unsorted, make((3,))), {"sorter": np.argsort(unsorted, kind="stable")})
    ties = np.array([0, 1, 1, 1, 2], dtype=make.dtype)
    yield S((ties, np.array([1, 0, 2, 3], dtype=make.dtype)), name="ties")
    yield S((ties, np.array([1, 0, 2, 3], dtype=make.dtype)), {"right": True}, name="ties")
    yield S((bd, make((0,))))
    yield S((bd, make(())))


def _searchsorted_errors(make):
    bd = np.sort(make((4,)))
    yield ErrorInput(
        S((bd, make((3,))), {"side": "foo"}), RuntimeError, "side can only be 'left' or 'right'"
    )
    yield ErrorInput(
        S((bd, make((3,))), {"side": "left", "right": True}),
        RuntimeError,
        "side and right can't be set to opposites",
    )
    yield ErrorInput(
        S((make((2, 4)), make((3, 1)))),
        RuntimeError,
        r"boundaries tensor should be 1 dimension or the first N-1 dimensions",
    )
    yield ErrorInput(
        S((make(()), make((3,)))), RuntimeError, "boundaries tensor should have positive dimension"
    )
    yield ErrorInput(
        S((bd, make((3,))), {"sorter": np.array([0, 1], dtype=np.int64)}),
        RuntimeError,
        "boundary and sorter must have the same size",
    )
    yield ErrorInput(
        S((bd, make((3,))), {"sorter": np.array([0, 1, 2, 4], dtype=np.int64)}),
        RuntimeError,
        "sorter index out of range",
    )


def _has_values(arrays, attrs) -> bool:
    return getattr(arrays[1], "size", 1) > 0


searchsorted_p = defop(
    "searchsorted",
    _searchsorted,
    nin=3,
    batch_rule=_searchsorted_rule(),
    prepare=_searchsorted_prepare,
    samples=_searchsorted_samples,
    error_samples=_searchsorted_errors,
    test={"dtypes": ("float32", "float64", "int64")},
    # (PyTorch reaches no kernel for empty values)
    no_kernel=NoKernel("bc", "searchsorted_out_cpu", inputs=(0, 1), when=_has_values),
    complex32=unless_empty("searchsorted_out_cpu", at=1),
    meta=by_kernel,
)


def _check_out_dtype(out, out_int32: bool) -> None:
    want = dt.int32 if out_int32 else dt.int64
    if out is not None and out.dtype != want:
        raise RuntimeError(
            "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
            "Long(int64) depending on whether out_int32 flag is True, but we got output "
            f"tensor's dtype {out.dtype.scalar_name} and out_int32 flag is {out_int32}"
        )


def searchsorted(
    sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None, out=None
):
    """Where each value of ``input`` would go in the innermost rows of ``sorted_sequence``
    (the first index whose boundary is >= the value; > with ``right`` or ``side="right"``),
    through ``sorter``'s order if given."""
    right = _check_side(side, right)
    _check_out_dtype(out, out_int32)
    attrs = {"out_int32": bool(out_int32), "right": right}
    res = dispatch(searchsorted_p, (sorted_sequence, input, sorter), attrs)
    return res if out is None else write_out(out, res)


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The bucket of each value of ``input`` among the 1-d ``boundaries``."""
    if isinstance(boundaries, Tensor) and boundaries.dim() != 1:
        raise RuntimeError(
            f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})"
        )
    _check_out_dtype(out, out_int32)
    attrs = {"out_int32": bool(out_int32), "right": bool(right)}
    res = dispatch(searchsorted_p, (boundaries, input, None), attrs)
    return res if out is None else write_out(out, res)


# ------------------------------------------------------------------ histogramdd
histogram_rt = return_type("histogram", ("hist", "bin_edges"))
histogramdd_rt = return_type("histogramdd", ("hist", "bin_edges"))
_DD = "torch.histogramdd: "


def _linspace(xp, lo, hi, n: int, dtype):
    """PyTorch's linspace of n + 1 edges per row of lo, hi (B,): the first half stepped
    from the start, the second from the end, each a fused multiply-add."""
    steps = n + 1
    step = ((hi - lo) / dtype.type(n)).astype(dtype)[:, None]
    i = xp.arange(steps).astype(dtype)
    head = _fused_mul_add(xp, step, i, lo[:, None], dtype)
    tail = _fused_mul_add(xp, -step, (steps - 1 - i).astype(dtype), hi[:, None], dtype)
    return xp.where(i < steps // 2, head, tail)


def _fused_mul_add(xp, a, b, c, dtype):
    """``a * b + c`` rounded once to ``dtype``: in a wider dtype where there is one; float64
    on a GPU (CuPy has no long double) adds back the product's and the sum's rounding errors
    (Dekker's two-product, Knuth's two-sum)."""
    if dtype != np.float64 or xp is np:
        wide = np.longdouble if dtype == np.float64 else np.float64
        return (a.astype(wide) * b.astype(wide) + c.astype(wide)).astype(dtype)
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    z = s - p
    t = (p - (s - z)) + (c - z)
    return s + (t + e)


def _split(a):
    """``a`` as the sum of two halves of 26 significant bits each (Veltkamp's split)."""
    big = a * 134217729.0  # 2**27 + 1
    high = big - (big - a)
    return high, a - high


def _range_text(v: float) -> str:
    return f"{v:g}"


def _histogramdd(xp, input, weight, bins, bin_ct=None, range=None, density=False, batched=0):
    """The histogram of the points ``input`` (..., D) (after ``batched`` leading batch dims,
    which every tensor argument has), with ``bin_ct`` bins per dim or the edges tensors
    ``bins``; returns the hist, then the edges of each dim."""
    if input.dtype == np.float16:
        raise dt.not_implemented("histogramdd", input)
    if input.ndim < 2 + batched:
        raise RuntimeError(_DD + "input tensor should have at least 2 dimensions")
    d = input.shape[-1]
    bshape = input.shape[:batched]
    nb = int(np.prod(bshape))
    x = input.reshape(nb, -1, d)
    dtype = input.dtype
    count = len(bin_ct) if bin_ct is not None else len(bins)
    if count != d:
        raise RuntimeError(
            "histogramdd: The size of bins must be equal to the innermost dimension of the input."
        )
    if weight is not None:
        if weight.shape != input.shape[:-1]:
            raise RuntimeError(
                _DD + "if weight tensor is provided it should have the same shape as the input "
                "tensor excluding its innermost dimension, but got input with shape "
                f"{list(input.shape[batched:])} and weight with shape "
                f"{list(weight.shape[batched:])}"
            )
        if weight.dtype != dtype:
            raise RuntimeError(
                _DD + "if weight tensor is provided, input tensor and weight tensor should have "
                f"the same dtype, but got input({dt.from_np(dtype).cpp_name}), and "
                f"weight({dt.from_np(weight.dtype).cpp_name})"
            )
    edges = []
    if bin_ct is not None:
        if range is not None and len(range) != 2 * d:
            raise RuntimeError(
                f"{_DD}for a {d}-dimensional histogram range should have {2 * d} elements, but "
                f"got {len(range)}"
            )
        for k, n in enumerate(bin_ct):
            if n <= 0:
                raise RuntimeError(
                    f"torch.histogram(): bins must be > 0, but got {n} for dimension {k}"
                )
            if range is not None:
                lo = xp.full(nb, range[2 * k], dtype=dtype)
                hi = xp.full(nb, range[2 * k + 1], dtype=dtype)
            elif x.shape[1]:
                lo, hi = x[..., k].min(axis=1), x[..., k].max(axis=1)
            else:
                lo, hi = xp.zeros(nb, dtype=dtype), xp.ones(nb, dtype=dtype)
            bad = lo > hi
            if bool(bad.any()):
                j = int(xp.argmax(bad))
                raise RuntimeError(
                    f"{_DD}min should not exceed max, but got min {_range_text(lo[j])} max "
                    f"{_range_text(hi[j])} for dimension {k}"
                )
            finite = xp.isfinite(lo) & xp.isfinite(hi)
            if not bool(finite.all()):
                j = int(xp.argmin(finite))
                raise RuntimeError(
                    f"{_DD}dimension {k}'s range [{_range_text(lo[j])}, {_range_text(hi[j])}] "
                    "is not finite"
                )
            same = lo == hi
            lo = xp.where(same, lo - dtype.type(0.5), lo).astype(dtype)
            hi = xp.where(same, hi + dtype.type(0.5), hi).astype(dtype)
            edges.append(_linspace(xp, lo, hi, int(n), dtype))
    else:
        for k, b in enumerate(bins):
            if b.ndim != 1 + batched:
                raise RuntimeError(
                    f"{_DD}bins tensor should have one dimension, but got {b.ndim - batched} "
                    f"dimensions in the bins tensor for dimension {k}"
                )
            if b.dtype != dtype:
                raise RuntimeError(
                    f"{_DD}input tensor and bins tensors should have the same dtype, but got "
                    f"input with dtype {dt.from_np(dtype).cpp_name} and bins for dimension {k} "
                    f"with dtype {dt.from_np(b.dtype).cpp_name}"
                )
            edges.append(b.reshape(nb, -1))
    shape = tuple(max(e.shape[-1] - 1, 0) for e in edges)
    cells = int(np.prod(shape)) if shape else 1
    hist = xp.zeros((nb, cells), dtype=dtype)
    if cells and x.shape[1]:
        keep = xp.ones(x.shape[:2], dtype=bool)
        flat = xp.zeros(x.shape[:2], dtype=np.int64)
        for k, e in enumerate(edges):
            v, m = x[..., k], e.shape[-1]
            keep &= (v >= e[:, :1]) & (v <= e[:, -1:])
            pos = _bisect(xp, e, v, True) - 1
            pos = xp.clip(xp.where(pos == m - 1, pos - 1, pos), 0, m - 2)
            flat = flat * (m - 1) + pos
        batch = xp.broadcast_to(xp.arange(nb)[:, None], x.shape[:2])
        vals = weight.reshape(nb, -1) if weight is not None else xp.ones(x.shape[:2], dtype)
        add_at(xp, hist, (batch[keep], flat[keep]), vals[keep])
    hist = hist.reshape((nb, *shape))
    if density:
        total = hist.reshape(nb, -1).sum(axis=1).astype(dtype)
        hist = (hist / total.reshape((nb,) + (1,) * len(shape))).astype(dtype)
        for k, e in enumerate(edges):
            view = [nb] + [1] * len(shape)
            view[k + 1] = -1
            hist = (hist / xp.diff(e, axis=-1).reshape(view)).astype(dtype)
    if not batched:  # given edges come back as they are (PyTorch's result aliases them)
        return (hist[0], *(e[0] for e in edges)) if bin_ct is not None else (hist[0], *bins)
    return (hist.reshape(bshape + hist.shape[1:]), *(e.reshape(bshape + (-1,)) for e in edges))


def _edges_alias(out, inputs, attrs=None):
    """Given edges tensors stay themselves; the rest is allocated contiguous."""
    if any(out is b for b in inputs[2]):
        return out
    return contiguous(out)


@rule_generator
def _histogram_rule(op):
    def rule(vmap, args, bdims, attrs):
        input, weight, bins = args
        ib, wb, bb = bdims
        input = materialize(vmap, input, ib)
        weight = None if weight is None else materialize(vmap, weight, wb)
        bins = [materialize(vmap, b, d) for b, d in zip(bins, bb or [None] * len(bins))]
        out = dispatch(op, (input, weight, bins), {**attrs, "batched": attrs["batched"] + 1})
        return out, [0] * len(out)

    return rule


def _no_derivative(aten):
    def vjp(g, bin_ct):
        which = aten or (
            "_histogramdd_from_bin_cts" if bin_ct is not None else "_histogramdd_from_bin_tensors"
        )
        raise RuntimeError(f"derivative for aten::{which} is not implemented")

    def jvp(tinput, tweight, tbins):
        raise NotImplementedError(
            f"Trying to use forward AD with aten::{aten or 'histogramdd'} that does not support it."
        )

    return vjp, jvp


def _histogram_samples(make):
    x = make((7,), -2, 2)
    yield S((x,))
    yield S((x, 4))
    yield S((x, 3), {"range": (-1.0, 1.0), "density": True})
    yield S((make((2, 3)), 3), {"weight": make((2, 3), 0.5, 2.0)})
    yield S((x, np.array([-2.0, -0.5, 0.0, 2.0], dtype=make.dtype)))
    yield S(
        (x, np.array([-1.0, 0.5, 1.5], dtype=make.dtype)), {"weight": make((7,)), "density": True}
    )
    yield S((np.full((3,), 0.25, dtype=make.dtype), 2), name="one value")
    yield S((make((0,)), 3), name="empty")


def _histogram_errors(make):
    x = make((5,))
    yield ErrorInput(S((x, 0)), RuntimeError, r"torch.histogram\(\): bins must be > 0, but got 0")
    yield ErrorInput(
        S((x, 3), {"range": (3.0, 1.0)}),
        RuntimeError,
        "min should not exceed max, but got min 3 max 1",
    )
    yield ErrorInput(
        S((np.array([1.0, np.inf], dtype=make.dtype), 3)),
        RuntimeError,
        r"range \[1, inf\] is not finite",
    )
    yield ErrorInput(
        S((x, 3), {"weight": make((2,))}),
        RuntimeError,
        "if weight tensor is provided it should have",
    )
    yield ErrorInput(
        S((x, make((2, 3)))), RuntimeError, "bins tensor should have one dimension, but got 2"
    )
    yield ErrorInput(
        S((x.astype(np.int64), 3)),
        NotImplementedError,
        "\"histogramdd\" not implemented for 'Long'",
    )


def _histogramdd_samples(make):
    pts = make((6, 2), -2, 2)
    yield S((pts, [2, 3]))
    yield S((pts, 2))
    yield S((pts, [3, 2]), {"range": [-2.0, 2.0, -1.0, 1.0], "density": True})
    yield S((make((4, 3, 1)), [4]), {"weight": make((4, 3), 0.5, 2.0)})
    edges = [
        np.array([-2.0, -0.5, 0.5, 2.0], dtype=make.dtype),
        np.array([-2.0, 0.0, 2.0], dtype=make.dtype),
    ]
    yield S((pts, edges), {"weight": make((6,), 0.5, 2.0), "density": True})


def _histogramdd_errors(make):
    pts = make((3, 2))
    yield ErrorInput(S((pts, [2, 3, 4])), RuntimeError, "The size of bins must be equal")
    yield ErrorInput(S((make((3,)), 2)), RuntimeError, "should have at least 2 dimensions")
    yield ErrorInput(
        S((pts, 2), {"range": [0.0, 1.0]}),
        RuntimeError,
        "for a 2-dimensional histogram range should have 4 elements, but got 2",
    )


def _complex_kernel(arrays, attrs) -> str:
    """PyTorch's kernel refusing a complex histogram: histogramdd's (its aminmax) for bin
    counts over the values' range, else the histogram's (complex32's edges' linspace)."""
    if attrs["bin_ct"] is None:
        return "histogram_cpu"
    if attrs["range"] is None and arrays[0].size:
        return "histogramdd"
    return "linspace_cpu" if arrays[0].dtype == dt.C32 else "histogram_cpu"


def _histogram_op(name: str, kernel, aten: str | None, samples, errors, layout):
    vjp, jvp = _no_derivative(aten)
    return defop(
        name,
        kernel,
        nin=3,
        list_inputs=(2,),
        nout=VARIADIC,
        vjp=(vjp, vjp, vjp),  # (bins too: PyTorch has not_implemented for each)
        jvp=jvp,
        node_name=NOT_IMPLEMENTED,
        batch_rule=_histogram_rule(),
        layout=layout,
        samples=samples,
        error_samples=errors,
        no_kernel=(NoKernel("bi", "histogramdd", inputs=(0,)), NoKernel("c", _complex_kernel)),
        complex32=_complex_kernel,
        # the backward raises (PyTorch has no derivative): tests/test_histogram.py checks it
        test={"no_grad_test": True},
    )


def _histogram(xp, input, weight, bins, bin_ct=None, range=None, density=False, batched=0):
    """``_histogramdd``, the given edges copied (PyTorch's histogram allocates its edges)."""
    hist, *edges = _histogramdd(xp, input, weight, bins, bin_ct, range, density, batched)
    if bin_ct is None and not batched:
        edges = [e.copy() for e in edges]
    return (hist, *edges)


# histogram's given edges come back copied, histogramdd's as they are
histogram_p = _histogram_op(
    "histogram", _histogram, "histogram", _histogram_samples, _histogram_errors, contiguous
)
histogramdd_p = _histogram_op(
    "histogramdd", _histogramdd, None, _histogramdd_samples, _histogramdd_errors, _edges_alias
)


def _bins_args(bins, d: int):
    """(bin counts, edges tensors) from histogramdd's ``bins``: an int, ints or tensors."""
    if isinstance(bins, Tensor):
        return None, [bins]
    if isinstance(bins, numbers.Integral):
        return (int(bins),) * d, None
    bins = list(bins)
    if bins and all(isinstance(b, numbers.Integral) for b in bins):
        return tuple(int(b) for b in bins), None
    for i, b in enumerate(bins):
        if not isinstance(b, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 1, but got {type(b).__name__}"
            )
    return None, bins


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    """The histogram of ``input``'s values: ``bins`` equal bins over ``range`` (default:
    the values' min to max), or the edges tensor ``bins``; counts (or ``weight`` sums), as
    a density if asked. Returns (hist, bin_edges)."""
    if range is not None:
        range = tuple(float(v) for v in range)
        if len(range) != 2:
            raise RuntimeError(
                f"{_DD}for a 1-dimensional histogram range should have 2 elements, but got "
                f"{len(range)}"
            )
    ct, edges = _bins_args(bins, 1)
    x = input.reshape(-1, 1) if isinstance(input, Tensor) else input
    w = weight.reshape(-1) if isinstance(weight, Tensor) and weight.shape == input.shape else weight
    if isinstance(weight, Tensor) and weight.shape != input.shape:
        raise RuntimeError(
            _DD + "if weight tensor is provided it should have the same shape as the input "
            "tensor excluding its innermost dimension, but got input with shape "
            f"{list(x.shape)} and weight with shape {list(weight.shape)}"
        )
    attrs = {"bin_ct": ct, "range": range, "density": bool(density), "batched": 0}
    hist, e = dispatch(histogram_p, (x, w, edges or []), attrs)
    res = histogram_rt((hist, e))
    if out is None:
        return res
    write_out(tuple(out), tuple(res))
    return return_type("histogram_out", ("hist", "bin_edges"))(out)


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """The d-dimensional histogram of the points ``input`` (..., d): ``bins`` is an int
    or a count per dim, or an edges tensor per dim. Returns (hist, bin_edges)."""
    d = input.shape[-1] if isinstance(input, Tensor) and input.dim() else 1
    ct, edges = _bins_args(bins, d)
    if range is not None:
        range = tuple(float(v) for v in range)
    attrs = {"bin_ct": ct, "range": range, "density": bool(density), "batched": 0}
    hist, *e = dispatch(histogramdd_p, (input, weight, edges or []), attrs)
    return histogramdd_rt((hist, tuple(e)))


tensor_method(histogram, "histogram")

__all__ = [
    "bucketize",
    "histogram",
    "histogram_p",
    "histogramdd",
    "histogramdd_p",
    "searchsorted",
    "searchsorted_p",
]
