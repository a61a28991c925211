"""Counting and statistics: bincount, histc, isin, cov and corrcoef.

bincount, histc and isin are primitives with no derivative, as in PyTorch: histc and isin
give results that never require grad; bincount's result requires grad when its weights
do, and its backward raises (forward mode too). bincount's result length depends on the
data: under vmap every sample's must be the same (PyTorch's loop stacks them). cov and corrcoef are composites of public ops, so their
gradients and batching follow from those ops.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._core import dtype as dt
from .._core.dispatch import dispatch
from .._core.interpreter import WrapperTensor
from .._core.meta import by_kernel, value_sized
from .._core.meta_array import MetaArray
from .._core.methods import tensor_method
from .._core.no_kernel import NoKernel
from .._core.op import ErrorInput, composite, defop
from .._core.tensor import Tensor
from .._opdb.samples import S
from ._add_at import add_at
from ._batching import front, lshape, materialize, rule_generator
from ._families import COMPLEX, FLOATS, FLOATS_INT, promote
from ._no_derivative import NOT_IMPLEMENTED
from .creation import arange

# ------------------------------------------------------------------ bincount
_BINCOUNT_INPUT = "bincount only supports 1-d non-negative integral inputs."
_BINCOUNT_WEIGHTS = "weights should be 1-d and have the same length as input"
_BINCOUNT_FORWARD_AD = "Trying to use forward AD with aten::bincount that does not support it."


def _bincount(xp, input, weights=None, minlength=0):
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.ndim != 1 or (input.size and input.min() < 0):
        raise RuntimeError(_BINCOUNT_INPUT)
    if weights is None:
        return xp.bincount(input, minlength=minlength).astype(np.int64)
    if weights.ndim != 1 or weights.shape[0] != input.shape[0]:
        raise RuntimeError(_BINCOUNT_WEIGHTS)
    out_dtype = np.float32 if weights.dtype == np.float32 else np.float64
    w = dt.real_for(weights, np.float64).astype(np.float64)
    return xp.bincount(input, weights=w, minlength=minlength).astype(out_dtype)


def _bincount_vjp(g):
    raise RuntimeError("derivative for aten::bincount is not implemented")


def _bincount_jvp(tweights):
    raise NotImplementedError(_BINCOUNT_FORWARD_AD)


def _bincount_samples(make):
    yield S((np.array([1, 3, 3, 0, 7], dtype=make.dtype),))
    yield S((np.array([2, 0, 2], dtype=make.dtype),), {"minlength": 6})
    yield S((np.array([], dtype=make.dtype),))
    yield S((np.array([], dtype=make.dtype),), {"minlength": 3})
    w = make((4,), -2, 2, dtype=np.float64)
    yield S((np.array([1, 0, 1, 4], dtype=make.dtype), w))
    w32 = make((4,), -2, 2, dtype=np.float32)
    yield S((np.array([1, 0, 1, 4], dtype=make.dtype), w32), {"minlength": 2})
    yield S((np.array([3, 0, 3], dtype=make.dtype), np.array([1, 2, 5], dtype=np.int64)))
    yield S((np.array([0, 5], dtype=np.uint8),))
    yield S((np.array([0, 5, 5], dtype=np.int32), np.array([0.5, 1, 2], dtype=np.float16)))


def _bincount_errors(make):
    ints = np.array([1, 3], dtype=np.int64)
    yield ErrorInput(S((ints,), {"minlength": -1}), RuntimeError, "minlength should be >= 0")
    yield ErrorInput(S((np.array([1, -3], dtype=np.int64),)), RuntimeError, _BINCOUNT_INPUT)
    yield ErrorInput(S((np.array([[1, 3]], dtype=np.int64),)), RuntimeError, _BINCOUNT_INPUT)
    yield ErrorInput(S((np.array(1, dtype=np.int64),)), RuntimeError, _BINCOUNT_INPUT)
    yield ErrorInput(
        S((ints, np.array([1.0, 2.0, 3.0], dtype=np.float32))), RuntimeError, _BINCOUNT_WEIGHTS
    )
    yield ErrorInput(
        S((ints, np.array([[1.0, 2.0]], dtype=np.float32))), RuntimeError, _BINCOUNT_WEIGHTS
    )
    yield ErrorInput(
        S((np.array([1.0, 3.0], dtype=np.float32),)),
        NotImplementedError,
        "\"bincount_cpu\" not implemented for 'Float'",
    )
    yield ErrorInput(
        S((np.array([True, False]),)),
        NotImplementedError,
        "\"bincount_cpu\" not implemented for 'Bool'",
    )


def _bincount_rule(vmap, args, bdims, attrs):
    """One bincount of every sample's values offset by its index times the common length,
    as PyTorch's loop over the samples gives it; its errors where the lengths differ."""
    input, weights = args
    bi, bw = bdims
    minlength = attrs["minlength"]
    x = materialize(vmap, input, bi)
    w = None if weights is None else materialize(vmap, weights, bw)
    k = x.shape[-1] if x.dim() else 0
    regular = (
        minlength >= 0
        and x.dim() == 2
        and x.dtype.np.kind in "iu"
        and (w is None or (w.dim() == 2 and w.shape[1] == k))
    )
    if not regular or not vmap.size:  # the first sample's error (or empty result)
        out = dispatch(bincount_p, (x[0], None if w is None else w[0]), attrs)
        return out.unsqueeze(0).expand(vmap.size, *out.shape).contiguous(), 0
    if k and _values(x.amin()).min() < 0:
        raise RuntimeError(_BINCOUNT_INPUT)
    # (outer vmaps' samples first, this vmap's last: what PyTorch's nested loops see)
    lens = _values(x.amax(-1)) + 1 if k else np.zeros(vmap.size, np.int64)
    lens = np.maximum(lens, minlength)
    outer = lens.shape[:-1]
    for b in range(vmap.size):  # each sample's own (outer) loop first
        _same_sizes(lens[..., b].reshape(-1), ())
    _same_sizes(lens.reshape(-1, vmap.size)[0], outer)
    n = int(lens.flat[0])
    offsets = arange(vmap.size, dtype=dt.int64).unsqueeze(1) * n
    flat = (x + offsets).reshape(-1)
    out = dispatch(
        bincount_p,
        (flat, None if w is None else w.reshape(-1)),
        {"minlength": vmap.size * n},
    )
    return out.reshape(vmap.size, n), 0


def _same_sizes(lens: np.ndarray, outer: tuple) -> None:
    """PyTorch's error for stacking its loop's results of lengths ``lens`` (each of shape
    ``(*outer, len)``) where they differ."""
    if lens.size and (lens != lens[0]).any():
        b = int(np.argmax(lens != lens[0]))
        first, other = [*outer, int(lens[0])], [*outer, int(lens[b])]
        raise RuntimeError(
            f"stack expects each tensor to be equal size, but got {first} at entry 0 "
            f"and {other} at entry {b}"
        )


def _values(t: Tensor) -> np.ndarray:
    """The values of an inner value at every outer vmap's sample: an array of shape
    (*outer batch sizes, outermost first, *t.shape)."""
    if not isinstance(t, WrapperTensor):
        return t.numpy(force=True)
    a = _values(t._inner)
    bd = getattr(t, "_bdim", None)
    if bd is None:
        return a
    nb = a.ndim - t._inner.dim()
    return np.moveaxis(a, nb + bd, nb)


def _bincount_complex32(arrays, attrs) -> bool | str:
    """PyTorch's bincount refuses a complex32 input; complex32 weights give their real
    parts' sums in float64."""
    return "bincount_cpu" if arrays[0].dtype == dt.C32 else True


bincount_p = defop(
    "bincount",
    _bincount,
    nin=2,
    vjp=(None, _bincount_vjp),
    jvp=_bincount_jvp,
    node_name=NOT_IMPLEMENTED,
    batch_rule=_bincount_rule,
    samples=_bincount_samples,
    error_samples=_bincount_errors,
    no_kernel=NoKernel("bfc", "bincount_cpu", inputs=(0,)),
    complex32=_bincount_complex32,
    value_shaped=True,
    # the backward raises (PyTorch has no derivative): tests/test_reductions.py checks it
    test={"dtypes": ("int64",), "no_grad_test": True},
    meta=value_sized,
)


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each non-negative integer occurs in the 1-d ``input`` (summing
    ``weights`` instead of counting ones when given), at least ``minlength`` bins."""
    if isinstance(minlength, bool) or not isinstance(minlength, int):
        raise TypeError(
            f"bincount(): argument 'minlength' must be int, not {type(minlength).__name__}"
        )
    return dispatch(bincount_p, (input, weights), {"minlength": minlength})


tensor_method(bincount, "bincount")


# ------------------------------------------------------------------ histc
def _fmt(v: float) -> str:
    return f"{v:g}"


def _fmt_bound(v: float) -> str:
    """A bound of a data range as PyTorch's error prints it (NaN as its C library does)."""
    return "-nan" if math.isnan(v) else _fmt(v)


def _histc_rows(xp, rows, bins, min, max):
    """The histograms of each row of ``rows`` (n, k), as PyTorch's histc of each row."""
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    n, k = rows.shape
    out = xp.zeros((n, bins), dtype=rows.dtype)
    if min == max and k:
        lo = rows.min(axis=1).astype(np.float64)
        hi = rows.max(axis=1).astype(np.float64)
        bad = ~(xp.isfinite(lo) & xp.isfinite(hi))
        if bad.any():  # (PyTorch's CUDA kernel reads the range on the host too)
            i = int(xp.argmax(bad))
            lo_s, hi_s = (_fmt_bound(float(v[i])) for v in (lo, hi))
            raise RuntimeError(f"torch.histc: range of [{lo_s}, {hi_s}] is not finite")
    else:
        lo = xp.full(n, float(min))
        hi = xp.full(n, float(max))
        if not (np.isfinite(min) and np.isfinite(max)):
            raise RuntimeError(
                f"torch.histc: range of [{_fmt(float(min))}, {_fmt(float(max))}] is not finite"
            )
        if min > max:
            raise RuntimeError("torch.histc: max must be larger than min")
    same = lo == hi
    lo = xp.where(same, lo - 1, lo)
    hi = xp.where(same, hi + 1, hi)
    if not k:
        return out
    work = np.float64 if rows.dtype == np.float64 else np.float32
    x = rows.astype(work)
    lo_w = lo.astype(work)[:, None]
    hi_w = hi.astype(work)[:, None]
    inside = (x >= lo_w) & (x <= hi_w)
    pos = xp.where(inside, (x - lo_w) * work(bins) / (hi_w - lo_w), 0)
    idx = xp.minimum(pos.astype(np.int64), bins - 1)
    flat = idx + xp.arange(n)[:, None] * bins
    if xp is np:
        counts = xp.bincount(flat[inside], minlength=n * bins)
    else:  # (CuPy's bincount and a mask's count read back; PyTorch's histc reads nothing)
        flat = xp.where(inside, flat, n * bins).reshape(-1)  # (outside: a spare last bin)
        counts = xp.zeros(n * bins + 1, xp.int32)
        add_at(xp, counts, flat, xp.ones(flat.shape, xp.int32))
        counts = counts[:-1]
    return counts.reshape(n, bins).astype(rows.dtype)


def _histc(xp, input, bins=100, min=0, max=0):
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)):
        raise TypeError(f"histc(): argument 'bins' must be int, not {type(bins).__name__}")
    return _histc_rows(xp, input.reshape(1, -1), bins, min, max)[0]


def _histc_rows_kernel(xp, input, bins=100, min=0, max=0):
    return _histc_rows(xp, input, bins, min, max)


def _histc_meta(op, arrays, attrs):
    """``bins`` counts of the input's dtype (the range's checks on the given bounds only)."""
    x, bins = arrays[0], attrs["bins"]
    _histc(np, np.zeros((0,), x.dtype), bins, attrs["min"], attrs["max"])
    return MetaArray((bins,), x.dtype)


def _histc_rows_rule(op):
    """Rows batched again: fold the new batch into the rows."""

    def rule(vmap, args, bdims, attrs):
        x = front(args[0], bdims[0])
        b, n = x.shape[0], x.shape[1]
        out = dispatch(op, (x.reshape(b * n, x.shape[2]),), attrs)
        return out.reshape(b, n, out.shape[-1]), 0

    return rule


histc_rows_p = defop(
    "_histc_rows",
    _histc_rows_kernel,
    batch_rule=rule_generator(_histc_rows_rule)(),
)


def _histc_rule(op):
    """Each sample's histogram is one row of the rows op."""

    def rule(vmap, args, bdims, attrs):
        x = front(args[0], bdims[0])
        return dispatch(histc_rows_p, (x.reshape(x.shape[0], -1),), attrs), 0

    return rule


def _histc_kernel_name(arrays, attrs) -> str:
    """PyTorch's kernel refusing histc's dtype: a complex one's aminmax where the range is
    the values' (a nonempty input), else the histogram's (complex32's edges' linspace)."""
    x = arrays[0]
    if x.dtype.kind == "b" or x.dtype == dt.C32:
        if x.dtype.kind != "b" and x.size and attrs.get("min", 0) == attrs.get("max", 0):
            return "aminmax_cpu"
        return "linspace_cpu"
    if x.dtype.kind == "c" and x.size and attrs.get("min", 0) == attrs.get("max", 0):
        return "aminmax_cpu"
    return "histogram_cpu"


def _histc_samples(make):
    yield S((make((7,), -2, 2),))
    yield S((make((3, 4), -2, 2),), {"bins": 5})
    yield S((make((3, 4), -2, 2),), {"bins": 4, "min": -1, "max": 1})
    yield S((make((6,), -2, 2),), {"bins": 3, "min": 1.5, "max": 1.5})
    yield S((np.full((4,), 2.0, dtype=make.dtype),), {"bins": 4})
    yield S((make((0,)),), {"bins": 3})
    yield S((make(()),), {"bins": 2})
    x = np.array([1.0, 2.0, 1.0, np.nan, np.inf, -1.0], dtype=make.dtype)
    yield S((x,), {"bins": 4, "min": 0, "max": 3}, name="nan and inf outside")


def _histc_errors(make):
    x = make((3,), dtype=np.float32)
    yield ErrorInput(
        S((x,), {"bins": 0}),
        RuntimeError,
        r"torch.histogram\(\): bins must be > 0, but got 0 for dimension 0",
    )
    yield ErrorInput(
        S((x,), {"bins": 4, "min": 3, "max": 1}),
        RuntimeError,
        "torch.histc: max must be larger than min",
    )
    yield ErrorInput(
        S((x,), {"bins": 4, "max": float("inf")}),
        RuntimeError,
        r"torch.histc: range of \[0, inf\] is not finite",
    )
    y = np.array([1.0, np.inf], dtype=np.float32)
    yield ErrorInput(
        S(
            (y,),
        ),
        RuntimeError,
        r"torch.histc: range of \[1, inf\] is not finite",
    )
    yield ErrorInput(
        S((np.array([1, 2], dtype=np.int64),)),
        NotImplementedError,
        "\"histogram_cpu\" not implemented for 'Long'",
    )
    yield ErrorInput(
        S((np.array([True]),)),
        NotImplementedError,
        "\"linspace_cpu\" not implemented for 'Bool'",
    )
    yield ErrorInput(
        S((np.array([1j], dtype=np.complex64),)),
        NotImplementedError,
        "\"aminmax_cpu\" not implemented for 'ComplexFloat'",
    )


histc_p = defop(
    "histc",
    _histc,
    batch_rule=rule_generator(_histc_rule)(),
    samples=_histc_samples,
    error_samples=_histc_errors,
    no_kernel=NoKernel("bic", _histc_kernel_name),
    complex32=_histc_kernel_name,
    test={"dtypes": FLOATS},
    out=True,
    methods=True,
    meta=_histc_meta,
)
histc = histc_p.fn


# ------------------------------------------------------------------ isin
def _check_isin(*operands) -> None:
    """PyTorch refuses a bool or complex operand (a number as a 0-d tensor of its own)."""
    for a in operands:
        if isinstance(a, bool):
            name = "Bool"
        elif isinstance(a, complex):
            name = "ComplexDouble"
        elif isinstance(a, (int, float)):
            continue
        else:
            d = dt.of(a)
            if not (d == dt.bool_ or d.is_complex):
                continue
            name = d.scalar_name
        raise RuntimeError(f"Unsupported input type encountered for isin(): {name}")


_ISIN_SIGNATURES = (
    " * (Tensor elements, Tensor test_elements, *, bool assume_unique = False, bool invert = "
    "False, Tensor out = None)\n"
    " * (Number element, Tensor test_elements, *, bool assume_unique = False, bool invert = "
    "False, Tensor out = None)\n"
    " * (Tensor elements, Number test_element, *, bool assume_unique = False, bool invert = "
    "False, Tensor out = None)\n"
)


def _isin(xp, elements, test_elements, assume_unique=False, invert=False):
    if not hasattr(elements, "dtype") and not hasattr(test_elements, "dtype"):
        got = f"{type(elements).__name__}, {type(test_elements).__name__}"
        raise TypeError(
            f"isin() received an invalid combination of arguments - got ({got}), but expected "
            f"one of:\n{_ISIN_SIGNATURES}"
        )
    _check_isin(elements, test_elements)
    (elements, test_elements), _ = promote([elements, test_elements])
    e = xp.asarray(elements)
    found = xp.isin(e, xp.asarray(test_elements), invert=invert)
    return xp.asarray(found, dtype=bool)


def _isin_rule(op):
    """Unbatched test elements: elementwise in ``elements``. Batched ones: each sample's
    elements against its own test elements (a comparison of every pair)."""

    def rule(vmap, args, bdims, attrs):
        elements, test = args
        be, bt = bdims
        if bt is None:
            return dispatch(op, (elements, test), attrs), be
        _check_isin(elements, test)
        t = front(test, bt)
        if isinstance(elements, Tensor):
            shape = lshape(elements, be)
            e = materialize(vmap, elements, be)
        else:
            shape = ()
            e = t.new_full((t.shape[0],), elements)
        pairs = e.reshape(e.shape[0], -1, 1) == t.reshape(t.shape[0], 1, -1)
        found = pairs.any(-1).reshape(t.shape[0], *shape)
        return (found.logical_not() if attrs.get("invert") else found), 0

    return rule


def _isin_samples(make):
    a = np.round(make((3, 4), -4, 4))
    b = np.round(make((5,), -4, 4))
    yield S((a, b))
    yield S((a, b), {"invert": True})
    yield S((np.arange(-3, 3).astype(make.dtype), b[:2]), {"assume_unique": True})
    yield S((a, np.round(make((2, 2), -4, 4))))
    yield S((np.round(make((), -4, 4)), b))
    yield S((a, 2))
    yield S((a, 2.5), {"invert": True})
    yield S((1, b))
    yield S((a, np.round(make((0,), -4, 4))))
    yield S((np.round(make((0, 3), -4, 4)), b))
    if make.is_float:
        x = np.array([1.0, np.nan, -0.0, np.inf], dtype=make.dtype)
        yield S((x, np.array([np.nan, 0.0, np.inf], dtype=make.dtype)), name="nan and zeros")
        yield S((a, np.array([1, 2], dtype=np.int64)))
    else:
        yield S((a, np.array([1.0, 2.5], dtype=np.float32)))


def _isin_errors(make):
    yield ErrorInput(
        S((np.array([True, False]), np.array([True]))),
        RuntimeError,
        "Unsupported input type encountered for isin\\(\\): Bool",
    )
    yield ErrorInput(
        S((np.array([1j], dtype=np.complex64), np.array([1j], dtype=np.complex64))),
        RuntimeError,
        "Unsupported input type encountered for isin\\(\\): ComplexFloat",
    )
    ints = np.array([1, 2], dtype=np.int64)
    yield ErrorInput(S((ints, True)), RuntimeError, "isin\\(\\): Bool")
    yield ErrorInput(S((ints, 1j)), RuntimeError, "isin\\(\\): ComplexDouble")
    yield ErrorInput(S((ints, np.array([True]))), RuntimeError, "isin\\(\\): Bool")


def _isin_complex32(arrays, attrs) -> str:
    """PyTorch's kernel refusing a complex32 isin, which its size heuristic picks: the
    default one for few test elements, else the sorting one's unique (or sort's error)
    (a number's test elements and an empty tensor of elements run: ``isin`` computes
    those itself)."""
    n = int(np.size(arrays[0]))
    if np.size(arrays[1]) < int(np.float32(10.0) * np.float32(n**0.145)):
        return "isin_default_cpu"
    if attrs["assume_unique"]:
        raise RuntimeError(" Sort does not support complex dtypes on CPU")
    return "unique"


isin_p = defop(
    "isin",
    _isin,
    batch_rule=rule_generator(_isin_rule)(),
    samples=_isin_samples,
    error_samples=_isin_errors,
    test={"dtypes": FLOATS_INT},
    out=True,
    complex32=_isin_complex32,
    meta=by_kernel,
)


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False, out=None):
    """Whether each of ``elements`` is among ``test_elements`` (not, with ``invert``)."""
    if isinstance(elements, Tensor) and elements.dtype is dt.complex32:
        if not isinstance(test_elements, Tensor):  # PyTorch compares (eq), as a ComplexHalf
            res = elements != test_elements if invert else elements == test_elements
            return res if out is None else out.copy_(res)
        if elements.numel() == 0:  # (no kernel)
            res = elements.real.to(dt.bool_)
            return res if out is None else out.copy_(res)
    return isin_p.fn(elements, test_elements, assume_unique=assume_unique, invert=invert, out=out)


# ------------------------------------------------------------------ cov, corrcoef
_DOF = (
    "cov(): degrees of freedom is <= 0. Correction should be strictly less than the number "
    "of observations."
)


def _concrete(t) -> bool:
    """Whether a value can be read (data-dependent checks are skipped under transforms,
    where the value is per sample)."""
    return isinstance(t, Tensor) and not isinstance(t, WrapperTensor)


def _check_weights(w, name: str, n_obs: int, want_int: bool) -> None:
    if w.dim() > 1:
        raise RuntimeError(
            f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
            f"{w.dim()} dimensions"
        )
    if want_int:
        if w.dtype.is_floating_point or w.dtype.is_complex or w.dtype == dt.bool_:
            raise RuntimeError(
                f"cov(): expected {name} to have integral dtype but got {name} with "
                f"{w.dtype.scalar_name} dtype"
            )
    elif not w.dtype.is_floating_point:
        raise RuntimeError(
            f"cov(): expected {name} to have floating point dtype but got {name} with "
            f"{w.dtype.scalar_name} dtype"
        )
    if w.numel() != n_obs:
        raise RuntimeError(
            f"cov(): expected {name} to have the same numel as there are observations in the "
            f"input but got {w.numel()} != {n_obs}"
        )
    if _concrete(w) and bool((w < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def _cov_samples(make):
    yield S((make((3, 5)),))
    yield S((make((5,)),))
    yield S((make((2, 4)),), {"correction": 0})
    yield S((make((2, 4)),), {"correction": 2})
    yield S((make((1, 1)),))
    yield S((make((3, 0)),))
    yield S((make((0, 3)),))
    yield S((make(()),), {"correction": 0})
    fw = np.array([1, 2, 1, 3, 1], dtype=np.int64)
    yield S((make((3, 5)),), {"fweights": fw})
    if make.is_float:
        real = np.finfo(make.dtype).dtype  # aweights are real for a complex input too
        aw = make((5,), 0.5, 2, dtype=real)
        yield S((make((3, 5)),), {"aweights": aw})
        yield S((make((3, 5)),), {"fweights": fw, "aweights": aw, "correction": 0})
        yield S((make((2, 5)),), {"fweights": fw, "aweights": make((5,), 0.5, 2, dtype=real)})


def _cov_errors(make):
    x = make((3, 5), dtype=np.float32)
    yield ErrorInput(
        S((make((2, 2, 2), dtype=np.float32),)),
        RuntimeError,
        r"cov\(\): expected input to have two or fewer dimensions but got an input with 3 ",
    )
    yield ErrorInput(
        S((np.array([[True, False]]),)),
        RuntimeError,
        r"cov\(\): bool dtype is not supported for input",
    )
    yield ErrorInput(
        S((x,), {"fweights": np.ones(5, dtype=np.float32)}),
        RuntimeError,
        r"cov\(\): expected fweights to have integral dtype but got fweights with Float dtype",
    )
    yield ErrorInput(
        S((x,), {"fweights": np.array([1, -2, 1, 3, 1])}),
        RuntimeError,
        r"cov\(\): fweights cannot be negative",
    )
    yield ErrorInput(
        S((x,), {"fweights": np.array([1, 2, 1, 3])}),
        RuntimeError,
        r"cov\(\): expected fweights to have the same numel as there are observations in the "
        r"input but got 4 != 5",
    )
    yield ErrorInput(
        S((x,), {"fweights": np.ones((1, 5), dtype=np.int64)}),
        RuntimeError,
        r"cov\(\): expected fweights to have one or fewer dimensions but got fweights with 2 ",
    )
    yield ErrorInput(
        S((x,), {"aweights": np.ones(5, dtype=np.int64)}),
        RuntimeError,
        r"cov\(\): expected aweights to have floating point dtype but got aweights with Long ",
    )
    yield ErrorInput(
        S((x.astype(np.complex64),), {"aweights": np.ones(5, dtype=np.complex64)}),
        RuntimeError,
        r"cov\(\): expected aweights to have floating point dtype but got aweights with "
        "ComplexFloat ",
    )
    yield ErrorInput(
        S((x,), {"aweights": -np.ones(5, dtype=np.float32)}),
        RuntimeError,
        r"cov\(\): aweights cannot be negative",
    )


def _check_input(input: Tensor, name: str) -> None:
    if input.dim() > 2:
        raise RuntimeError(
            f"{name}(): expected input to have two or fewer dimensions but got an input with "
            f"{input.dim()} dimensions"
        )


@composite(
    samples=_cov_samples,
    error_samples=_cov_errors,
    test={"dtypes": (*FLOATS_INT, *COMPLEX)},
    methods=True,
)
def cov(
    input: Tensor,
    *,
    correction: int = 1,
    fweights: Tensor | None = None,
    aweights: Tensor | None = None,
) -> Tensor:
    """The covariance matrix of the variables in the rows of ``input`` (observations in
    columns), with optional frequency and observation weights."""
    _check_input(input, "cov")
    if isinstance(correction, bool) or not isinstance(correction, int):
        raise TypeError(
            f"cov(): argument 'correction' must be int, not {type(correction).__name__}"
        )
    if input.dtype == dt.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    n_obs = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights(fweights, "fweights", n_obs, True)
        w = fweights
    if aweights is not None:
        _check_weights(aweights, "aweights", n_obs, False)
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = n_obs
        avg = x.sum(1) / n_obs
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm = w_sum - correction
    if isinstance(norm, Tensor):
        if _concrete(norm) and bool(norm <= 0):
            warnings.warn(_DOF, UserWarning, stacklevel=2)
        norm = norm.clamp(min=0) if not norm.dtype.is_complex else norm
    elif norm <= 0:
        warnings.warn(_DOF, UserWarning, stacklevel=2)
        norm = 0
    centred = x - avg.unsqueeze(1)
    right = centred * w if w is not None else centred
    c = centred.mm(right.t().conj())
    return (c / norm).squeeze()


def _corrcoef_samples(make):
    yield S((make((3, 5)),))
    yield S((make((5,)),))
    yield S((make((2, 4)),))


@composite(
    samples=_corrcoef_samples,
    error_samples=lambda make: [
        ErrorInput(
            S((make((2, 2, 2), dtype=np.float32),)),
            RuntimeError,
            r"corrcoef\(\): expected input to have two or fewer dimensions but got an input "
            "with 3 dimensions",
        )
    ],
    test={"dtypes": (*FLOATS_INT, *COMPLEX)},
    methods=True,
)
def corrcoef(input: Tensor) -> Tensor:
    """The Pearson correlation coefficients of the variables in the rows of ``input``."""
    _check_input(input, "corrcoef")
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    std = (d.real if d.is_complex() else d).sqrt()
    c = c / std.reshape(-1, 1)
    c = c / std.reshape(1, -1)
    if c.is_complex():
        return c.real.clip(-1, 1) + c.imag.clip(-1, 1) * 1j
    return c.clip(-1, 1)
