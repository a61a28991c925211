"""gather, scatter, scatter_add and scatter_reduce: ops along ``dim`` with an index of the
input's rank; their batch rule generator ``dim_family`` and the ``ufunc.at`` accumulation
they share."""

from __future__ import annotations

import math

import numpy as np

from ..._core import dtype as dt
from ..._core.dispatch import dispatch
from ..._core.inplace import run_inplace
from ..._core.meta import by_kernel, by_kernel_or_input_shaped, mixed_devices
from ..._core.methods import tensor_methods
from ..._core.no_kernel import unless_empty
from ..._core.op import LINEAR, ErrorInput, defop
from ..._core.out import check_out, write_out
from ..._core.policy import BatchedWrite, InplacePolicy, Overlap
from ..._core.tensor import Tensor, wrap_dim
from ..._opdb.samples import S
from .._add_at import add_at
from .._batching import lrank, lshape, materialize, pdim, rule_generator
from .._families import COMPLEX_TOO
from ..comparison import where
from ..creation import zeros_like
from ._common import _bounds, _dim_api, _method, _same_dtype, check_index_dtype
from .basic import getitem, getitem_backward


def _scatter_key(xp, index, dim: int) -> tuple:
    """The full advanced index addressing ``out[..., index[i], ...]`` along ``dim``."""
    nd = index.ndim
    grids = [
        xp.arange(n).reshape((1,) * k + (n,) + (1,) * (nd - k - 1))
        for k, n in enumerate(index.shape)
    ]
    grids[dim] = index
    return tuple(grids)


# ufunc.at is fast on one flat index into a 1-d array (NumPy's indexed loops) and slow on
# tuples of index arrays or on whole rows; _flat_at (here) and _add_rows (in _common) reduce
# accumulations to fast cases.
def _flat_at(xp, ufunc: str, out, key: tuple, vals) -> None:
    """``ufunc.at(out, key, vals)`` in place: ``key`` holds one index array per dim of
    ``out`` (broadcasting together to ``vals``' shape); duplicates accumulate."""
    at = getattr(xp, ufunc).at
    if not out.flags.c_contiguous:
        if xp is not np:
            flat = xp.ascontiguousarray(out)
            _flat_at(xp, ufunc, flat, key, vals)
            out[...] = flat
            return
        at(out, key, vals)
        return
    lin = 0
    for k, stride in zip(key, out.strides):
        lin = lin + k.astype(xp.intp, copy=False) * (stride // out.itemsize)
    if hasattr(vals, "shape") and vals.ndim:
        lin = xp.broadcast_to(lin, vals.shape)
        vals = vals.reshape(-1)
    if xp is not np:
        if ufunc == "add":
            add_at(xp, out.reshape(-1), lin.reshape(-1), vals)
        else:
            _gpu_at(xp, ufunc, out.reshape(-1), lin.reshape(-1), vals)
        return
    at(out.reshape(-1), lin.reshape(-1), vals)


def _gpu_at(xp, ufunc: str, out, lin, vals) -> None:
    """``ufunc.at`` where CuPy has none (multiply) or a different one: the k-th occurrence
    of every index at once, for k up to the largest count of one index (no duplicates
    within a step, so a plain fancy-index update is exact)."""
    f = getattr(xp, ufunc)
    vals = xp.broadcast_to(xp.asarray(vals, out.dtype), lin.shape)
    order = xp.argsort(lin, kind="stable")
    s = lin[order]
    first = xp.searchsorted(s, s, side="left")
    rank = xp.arange(s.size) - first
    for k in range(int(rank.max()) + 1 if s.size else 0):
        pick = order[rank == k]
        idx = lin[pick]
        out[idx] = f(out[idx], vals[pick])


def _region(a, shape) -> object:
    """The leading ``shape`` block of ``a`` (a source larger than its index)."""
    if not hasattr(a, "shape") or tuple(a.shape) == tuple(shape):
        return a
    return a[tuple(slice(0, s) for s in shape)]


def _check_dims(name: str, input, index, src=None, dim=0) -> None:
    if index.ndim != max(input.ndim, 0) and not (index.ndim <= 1 and input.ndim <= 1):
        raise RuntimeError(
            "Index tensor must have the same number of dimensions as input tensor"
            if name == "gather"
            else "Index tensor must have the same number of dimensions as self tensor"
        )
    src_shape = src.shape if getattr(src, "ndim", 0) else None
    for d in range(index.ndim):
        big_self = d != dim and input.ndim and index.shape[d] > input.shape[d]
        if name == "gather":
            if big_self:
                raise RuntimeError(
                    f"Size does not match at dimension {d} expected index {list(index.shape)} "
                    f"to be no larger than self {list(input.shape)} apart from dimension {dim}"
                )
        elif big_self or (src_shape is not None and index.shape[d] > src_shape[d]):
            # PyTorch's scatter_shape_check: one text for either operand being too small
            msg = (
                f"Expected index {list(index.shape)} to be no larger than self "
                f"{list(input.shape)} apart from dimension {dim}"
            )
            if src_shape is not None:
                msg += f" and to be no larger size than src {list(src_shape)}"
            raise RuntimeError(msg)


def _as1d(fn):
    """Run a dim-kernel on 0-d operands as if they were 1-d of one element."""

    def kernel(xp, input, index, *rest, dim, **kw):
        if input.ndim == 0:
            wrap_dim(dim, 0)
            rest = tuple(r.reshape(-1) if getattr(r, "ndim", 1) == 0 else r for r in rest)
            out = fn(xp, input.reshape(1), index.reshape(-1), *rest, dim=0, **kw)
            return out.reshape(index.shape if fn.__name__ == "_gather" else ())
        return fn(xp, input, index, *rest, dim=wrap_dim(dim, input.ndim), **kw)

    return kernel


def _grad_region(gsub, shape):
    """Zero-pad a gradient for the leading block of a larger source back to ``shape``."""
    if tuple(gsub.shape) == tuple(shape):
        return gsub
    return getitem_backward(gsub, tuple(shape), tuple(slice(0, s) for s in gsub.shape))


def _dim_family(op, like=(0,)):
    """gather/scatter-like ops: every tensor batch-first (the unbatched ones expanded: the
    kernel needs equal sizes), ``dim`` shifted past the batch. Operands of at most one
    logical dim, one of them 0-d, run as (B, n) and are reshaped back; ``like`` names the
    input whose logical shape each output takes then."""

    def rule(vmap, args, bdims, attrs):
        ranks = [lrank(a, b) for a, b in zip(args, bdims) if isinstance(a, Tensor)]
        vals = [
            materialize(vmap, a, b) if isinstance(a, Tensor) else a for a, b in zip(args, bdims)
        ]
        new = dict(attrs)
        small = max(ranks[:2]) <= 1 and min(ranks[:2]) == 0
        if small:
            wrap_dim(attrs["dim"], 1)
            vals = [v.reshape(vmap.size, -1) if isinstance(v, Tensor) else v for v in vals]
            new["dim"] = 1
        else:
            new["dim"] = pdim(attrs["dim"], ranks[0])
        out = dispatch(op, tuple(vals), new)
        if not small:
            return out, 0
        shapes = [(vmap.size, *lshape(args[i], bdims[i])) for i in like]
        if op.nout == 1:
            return out.reshape(shapes[0]), 0
        return tuple(o.reshape(s) for o, s in zip(out, shapes)), 0

    return rule


dim_family = rule_generator(_dim_family)


def _gather_first(op, arrays, attrs):
    """gather's check that PyTorch makes before those of an ``out=`` tensor."""
    wrap_dim(attrs["dim"], arrays[0].ndim)


def _scatter_first(name: str):
    """The checks of the scatter ``name`` that PyTorch makes before its overlap check (its
    meta function's: the reduce is checked after)."""

    def first(op, arrays, attrs):
        input, index, src = arrays
        dim = wrap_dim(attrs["dim"], input.ndim) if input.ndim else 0
        check_index_dtype(index, "scatter")
        _same_dtype("scatter", input, src)
        _check_dims(name, input, index, src, dim)

    return first


def _gather(xp, input, index, *, dim):
    check_index_dtype(index, "gather")
    _check_dims("gather", input, index, dim=dim)
    index = _bounds(index, input.shape[dim], dim)
    return input[_scatter_key(xp, index, dim)]


def _gather_k(xp, input, index, dim, *, sparse_grad=False):
    return _as1d(_gather)(xp, input, index, dim=dim)


def _gather_samples(make):
    yield S((make((3, 4)), 0, make.index((2, 4), 3)))
    yield S((make((3, 4)), 1, make.index((3, 6), 4)))
    yield S((make((3, 4)), -1, make.index((2, 2), 4)))
    yield S((make((2, 3, 4)), 1, make.index((2, 2, 4), 3)))
    yield S((make(()), 0, np.array(0)))
    yield S((make((3, 4)), 0, make.index((0, 4), 3)))


def _gather_errors(make):
    x = make((3, 4))
    yield ErrorInput(
        S((x, 0, np.array([[5]]))),
        RuntimeError,
        "index 5 is out of bounds for dimension 0 with size 3",
    )
    yield ErrorInput(
        S((x, 0, np.array([[1.0]]))),
        RuntimeError,
        r"gather\(\): Expected dtype int32/int64 for index",
    )


gather_p = defop(
    "gather",
    _gather_k,
    nin=2,
    out=True,
    vjp=(
        lambda g, input, index, dim: _scatter_add(zeros_like(input), index, g, dim=dim),
        None,
    ),
    jvp=LINEAR,
    samples=_gather_samples,
    error_samples=_gather_errors,
    batch_rule=dim_family(like=(1,)),
    overlap=Overlap(full=(0,), partial=(1,), first=_gather_first),
    test=COMPLEX_TOO,
    complex32=unless_empty("scatter_gather_tensor_cpu", at=1),  # (an empty index: none)
    meta=mixed_devices(by_kernel),
)


def _scatter_core(xp, input, index, src, *, dim, reduce=None, name="scatter"):
    check_index_dtype(index, "scatter")
    _same_dtype("scatter", input, src)
    _check_dims(name, input, index, src, dim)
    index = _bounds(index, input.shape[dim], dim)
    out = input.copy()
    key = _scatter_key(xp, index, dim)
    vals = _region(src, index.shape) if hasattr(src, "shape") else src
    if reduce is None:
        out[key] = vals
    elif reduce in ("add", "sum"):
        _flat_at(xp, "add", out, key, xp.broadcast_to(xp.asarray(vals, out.dtype), index.shape))
    elif reduce in ("multiply", "prod"):
        vals = xp.broadcast_to(xp.asarray(vals, out.dtype), index.shape)
        _flat_at(xp, "multiply", out, key, vals)
    else:
        raise RuntimeError("reduce argument must be either add or multiply.")
    return out


def _scatter_complex32(arrays, attrs):
    """PyTorch's scatter kernel refusing complex32: a value's or a source's."""
    if not hasattr(arrays[2], "shape"):
        return "scatter_gather_scalar_cpu"
    return "scatter_gather_tensor_cpu"


def _scatter_k(xp, input, index, src, dim, reduce=None):
    return _as1d(_scatter_core)(xp, input, index, src, dim=dim, reduce=reduce)


def _scatter_vjp_input(g, index, dim, reduce):
    if reduce is not None:
        raise RuntimeError("derivative for aten::scatter is not implemented")
    return _scatter(g, index, 0.0, dim=dim)


def _scatter_vjp_src(g, index, src, dim, reduce):
    if reduce is not None:
        raise RuntimeError("derivative for aten::scatter is not implemented")
    return _grad_region(g.gather(dim, index), src.shape)


def _unique_index(make, shape, dim, size):
    """Index values that are distinct along ``dim`` (a permutation per line)."""
    out = np.zeros(shape, dtype=np.int64)
    moved = np.moveaxis(out, dim, -1)
    for pos in np.ndindex(moved.shape[:-1]):
        moved[pos] = make.perm(size)[: shape[dim]]
    return out


def _scatter_samples(make):
    yield S((make((3, 4)), 0, _unique_index(make, (2, 4), 0, 3), make((2, 4))))
    yield S((make((3, 4)), 1, _unique_index(make, (3, 2), 1, 4), make((3, 2))))
    yield S((make((2, 3, 4)), -1, _unique_index(make, (2, 2, 3), 2, 4), make((2, 2, 3))))
    yield S((make((3, 4)), 0, _unique_index(make, (2, 4), 0, 3), 1.5))
    yield S((make((3, 4)), 0, _unique_index(make, (2, 3), 0, 3)), {"value": 2.0})
    yield S((make(()), 0, np.array(0), make(())))


def _scatter_errors(make):
    x = make((3, 4))
    yield ErrorInput(
        S((x, 0, np.array([[5]]), 1.0)),
        RuntimeError,
        "index 5 is out of bounds for dimension 0 with size 3",
    )
    yield ErrorInput(
        S((x, 0, np.array([[1.0]]), 1.0)),
        RuntimeError,
        r"scatter\(\): Expected dtype int32/int64 for index",
    )
    yield ErrorInput(
        S((x, 0, np.array([[0]]), x), {"reduce": "foo"}),
        RuntimeError,
        "reduce argument must be either add or multiply",
    )


scatter_p = defop(
    "scatter",
    _scatter_k,
    nin=3,
    vjp=(_scatter_vjp_input, None, _scatter_vjp_src),
    jvp=LINEAR,
    samples=_scatter_samples,
    error_samples=_scatter_errors,
    batch_rule=dim_family(),
    overlap=Overlap(full=(1, 2), first=_scatter_first("scatter")),
    test=COMPLEX_TOO,
    complex32=_scatter_complex32,
    meta=by_kernel,
)
_scatter = scatter_p.fn


def _scatter_args(src, value, reduce):
    if src is None and value is None:
        raise TypeError("scatter() missing 1 required positional argument: 'src' or 'value'")
    return src if src is not None else value


def scatter(
    input: Tensor,
    dim: int,
    index: Tensor,
    src=None,
    *,
    value=None,
    reduce: str | None = None,
    out=None,
) -> Tensor:
    """Write ``src`` (a tensor or a scalar ``value``) into ``input`` at ``index`` along ``dim``."""
    args, attrs = (input, index, _scatter_args(src, value, reduce)), {"dim": dim, "reduce": reduce}
    if out is not None:
        check_out(scatter_p, out, args, attrs)
    r = dispatch(scatter_p, args, attrs)
    return r if out is None else write_out(out, r)


def scatter_(
    self: Tensor, dim: int, index: Tensor, src=None, *, value=None, reduce: str | None = None
) -> Tensor:
    """In-place :func:`scatter`."""
    return run_inplace(
        scatter_p, self, (index, _scatter_args(src, value, reduce)), {"dim": dim, "reduce": reduce}
    )


def _scatter_add_k(xp, input, index, src, dim):
    return _as1d(_scatter_core)(xp, input, index, src, dim=dim, reduce="add", name="scatter_add")


def _scatter_add_samples(make):
    yield S((make((3, 4)), 0, make.index((4, 4), 3), make((4, 4))))
    yield S((make((3, 4)), 1, make.index((3, 5), 4), make((3, 5))))
    yield S((make((2, 3, 4)), -2, make.index((2, 5, 4), 3), make((2, 5, 4))))
    yield S((make(()), 0, np.array(0), make(())))


def _scatter_add_errors(make):
    yield ErrorInput(
        S((make((3, 4)), 0, np.array([[5]]), make((1, 1)))),
        RuntimeError,
        "index 5 is out of bounds",
    )


scatter_add_p = defop(
    "scatter_add",
    lambda xp, input, index, src, dim: _scatter_add_k(xp, input, index, src, dim),
    nin=3,
    vjp=(
        lambda g: g,
        None,
        lambda g, index, src, dim: _grad_region(g.gather(dim, index), src.shape),
    ),
    jvp=LINEAR,
    samples=_scatter_add_samples,
    out=True,
    batch_rule=dim_family(),
    error_samples=_scatter_add_errors,
    test=COMPLEX_TOO,
    complex32="scatter_gather_tensor_cpu",  # (PyTorch's kernel that refuses ComplexHalf)
    inplace_policy=InplacePolicy(batched=BatchedWrite.PLAIN),
    overlap=Overlap(full=(1, 2), first=_scatter_first("scatter_add")),
    meta=by_kernel,
)
_scatter_add = scatter_add_p.fn


_REDUCE_AT = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum"}
_REDUCES = tuple(_REDUCE_AT)


def _reduce_identity(reduce: str, dtype):
    """The value that leaves a reduction unchanged (the lowest value of the dtype for amax)."""
    if reduce in ("sum", "mean", "prod"):
        return int(reduce == "prod")
    lo = reduce == "amax"
    if dtype.kind == "b":
        return not lo
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if lo else info.max
    return -math.inf if lo else math.inf


def _scatter_reduce(xp, input, index, src, dim, reduce, *, include_self=True):
    if reduce not in _REDUCE_AT:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    if input.ndim == 0:
        wrap_dim(dim, 0)
        input, index, src, dim = input.reshape(1), index.reshape(-1), src.reshape(-1), 0
        shape0 = ()
    else:
        dim, shape0 = wrap_dim(dim, input.ndim), input.shape
    check_index_dtype(index, "scatter")
    _same_dtype("scatter", input, src)
    _check_dims("scatter_reduce", input, index, src, dim)
    if input.dtype.kind == "c" and reduce in ("amax", "amin"):
        raise dt.not_implemented(f"scatter_gather_tensor_cpu_reduce_{reduce}", input)
    index = _bounds(index, input.shape[dim], dim)
    key = _scatter_key(xp, index, dim)
    vals = _region(src, index.shape)
    out = input.copy()
    if not include_self:
        out[key] = _reduce_identity(reduce, out.dtype)
    _flat_at(xp, _REDUCE_AT[reduce], out, key, vals)
    if reduce == "mean":
        cnt = xp.zeros(input.shape, dtype=xp.int64) + int(include_self)
        _flat_at(xp, "add", cnt, key, 1)
        cnt = xp.maximum(cnt, 1)
        out = out // cnt if out.dtype.kind in "iu" else out / cnt
    return out.reshape(shape0).astype(input.dtype)


def _sr_stats(xp, input, index, src, result, dim, reduce, include_self):
    """Non-differentiable weights for scatter_reduce's vjp: (input weight, src weight)."""
    if input.ndim == 0:
        input, index, src, result = (a.reshape(-1) for a in (input, index, src, result))
        dim = 0
    dim = wrap_dim(dim, input.ndim)
    key = _scatter_key(xp, index, dim)
    vals = _region(src, index.shape)
    hit = xp.zeros(input.shape, dtype=bool)
    hit[key] = True
    keep = xp.ones(input.shape) if include_self else (~hit).astype(input.dtype)
    if reduce in ("sum", "prod"):
        return keep, xp.ones(index.shape)
    if reduce == "mean":
        cnt = xp.zeros(input.shape) + int(include_self)
        _flat_at(xp, "add", cnt, key, 1)
        inv = 1 / xp.maximum(cnt, 1)
        w = keep * inv if include_self else keep
        return w, inv[key]
    # amax / amin: the gradient is shared evenly among the elements equal to the result
    tie_in = (input == result) * keep
    tie_src = (vals == result[key]).astype(input.dtype)
    n = tie_in.copy()
    _flat_at(xp, "add", n, key, tie_src)
    n = xp.maximum(n, 1)
    return tie_in / n, tie_src / n[key]


def _sr_stats_kernel(xp, input, index, src, result, dim, reduce, include_self):
    weights = _sr_stats(xp, input, index, src, result, dim, reduce, include_self)
    return tuple(
        w.astype(input.dtype).reshape(s) for w, s in zip(weights, (input.shape, index.shape))
    )


sr_stats_p = defop(
    "scatter_reduce_weights",
    _sr_stats_kernel,
    nin=4,
    nout=2,
    batch_rule=dim_family(like=(0, 1)),
)
sr_stats = sr_stats_p.fn


def _sr_vjp_input(g, input, index, src, result, dim, reduce, include_self):
    w, _ = sr_stats(input.detach(), index, src.detach(), result.detach(), dim, reduce, include_self)
    if reduce == "prod" and include_self:
        return g * _prod_of_others(input, index, src, dim)
    return g * w


def _prod_of_others(input, index, src, dim):
    """result / input of scatter_reduce's prod without dividing by a zero of input."""
    masked = input.masked_fill(input == 0, 1)
    return _raw_scatter_reduce(masked, index, src, dim, "prod", include_self=True) / masked


def _sr_vjp_src(g, input, index, src, result, dim, reduce, include_self):
    _, w = sr_stats(input.detach(), index, src.detach(), result.detach(), dim, reduce, include_self)
    if reduce == "prod":
        return _grad_region(
            g.gather(dim, index)
            * _src_prod_of_others(input, index, src, result, dim, include_self),
            src.shape,
        )
    return _grad_region(g.gather(dim, index) * w, src.shape)


def _src_prod_of_others(input, index, src, result, dim, include_self):
    """For each scattered src element, the product of the others in its group: result / src
    where src is not 0, the group's product with it taken as 1 where it is the group's only 0
    (two zeros make it 0)."""
    s = _region_t(src, index.shape)
    zero = s == 0
    count = _scatter_add(zeros_like(input), index, zero.to(input.dtype), dim=dim)
    single = zero & (count.gather(dim, index) == 1)
    without = _raw_scatter_reduce(
        input, index, s.masked_fill(single, 1), dim, "prod", include_self=include_self
    )
    return where(
        single, without.gather(dim, index), result.gather(dim, index) / s.masked_fill(zero, 1)
    )


def _sr_jvp(tinput, tsrc, input, index, src, result, dim, reduce, include_self):
    w_in, w_src = sr_stats(
        input.detach(), index, src.detach(), result.detach(), dim, reduce, include_self
    )
    ts = _region_t(tsrc, index.shape)
    base = zeros_like(result)
    if reduce == "prod":
        others = _src_prod_of_others(input, index, src, result, dim, include_self)
        return tinput * w_in * _prod_of_others(input, index, src, dim) + _scatter_add(
            base, index, ts * others, dim=dim
        )
    return tinput * w_in + _scatter_add(base, index, ts * w_src, dim=dim)


def _region_t(src, shape):
    if tuple(src.shape) == tuple(shape):
        return src
    return getitem(src, tuple(slice(0, n) for n in shape), tuple(src.shape))


def _scatter_reduce_samples(make):
    # (PyTorch has no complex amax/amin: error samples)
    reduces = ("sum", "prod", "mean") if make.dtype.kind == "c" else _REDUCES
    for reduce in reduces:
        lo = 0.5 if reduce == "prod" else -2
        for inc in (True, False):
            yield S(
                (
                    make((3, 4), lo, 2),
                    0,
                    np.array([[0, 1, 2, 0], [0, 0, 2, 2]]),
                    make((2, 4), lo, 2),
                    reduce,
                ),
                {"include_self": inc},
            )
        yield S((make((2, 3), lo, 2), 1, np.array([[2, 2], [0, 1]]), make((2, 2), lo, 2), reduce))


def _scatter_reduce_errors(make):
    yield ErrorInput(
        S((make((3, 4)), 0, np.array([[0]]), make((1, 1)), "foo")),
        RuntimeError,
        "reduce argument must be either sum, prod, mean, amax or amin, got foo",
    )
    for reduce, cdt, name in (
        ("amax", "complex128", "ComplexDouble"),
        ("amin", "complex64", "ComplexFloat"),
    ):
        yield ErrorInput(  # (before the bounds check, as PyTorch's)
            S((make((3, 4), dtype=cdt), 0, np.array([[5]]), make((1, 1), dtype=cdt), reduce)),
            NotImplementedError,
            f"\"scatter_gather_tensor_cpu_reduce_{reduce}\" not implemented for '{name}'",
        )
    yield ErrorInput(
        S((make((3, 4)), 0, np.array([[5]]), make((1, 1)), "sum")),
        RuntimeError,
        "index 5 is out of bounds for dimension 0 with size 3",
    )


def _scatter_reduce_complex32(arrays, attrs) -> bool | str:
    """PyTorch's scatter_reduce kernel refusing complex32; an empty index reaches none (a
    mean still divides by the counts)."""
    reduce = attrs["reduce"]
    if arrays[1].size == 0:
        return "div_cpu" if reduce == "mean" else True
    if not attrs["include_self"]:
        return "scatter_reduce_exclude_input_init"
    if reduce in ("sum", "prod"):
        return "scatter_gather_tensor_cpu"
    return f"scatter_gather_tensor_cpu_reduce_{reduce}"


scatter_reduce_p = defop(
    "scatter_reduce",
    _scatter_reduce,
    nin=3,
    vjp=(_sr_vjp_input, None, _sr_vjp_src),
    jvp=_sr_jvp,
    samples=_scatter_reduce_samples,
    batch_rule=dim_family(),
    error_samples=_scatter_reduce_errors,
    overlap=Overlap(full=(1, 2), first=_scatter_first("scatter_reduce")),
    complex_grad=False,  # (PyTorch refuses autograd of its complex result)
    complex32=_scatter_reduce_complex32,
    test=COMPLEX_TOO,
    meta=by_kernel_or_input_shaped,
)
_raw_scatter_reduce = scatter_reduce_p.fn


def scatter_reduce(
    input: Tensor,
    dim: int,
    index: Tensor,
    src: Tensor,
    reduce: str,
    *,
    include_self: bool = True,
    out=None,
) -> Tensor:
    """Reduce ``src`` into ``input`` at ``index`` along ``dim`` ('sum', 'prod', 'mean', 'amax', 'amin')."""
    if out is not None:
        attrs = {"dim": dim, "reduce": reduce, "include_self": include_self}
        check_out(scatter_reduce_p, out, (input, index, src), attrs)
    r = _raw_scatter_reduce(input, index, src, dim, reduce, include_self=include_self)
    return r if out is None else write_out(out, r)


def scatter_reduce_(
    self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True
) -> Tensor:
    """In-place :func:`scatter_reduce`."""
    attrs = {"dim": dim, "reduce": reduce, "include_self": include_self}
    return run_inplace(scatter_reduce_p, self, (index, src), attrs)


gather, _ = _dim_api(gather_p)


scatter_add, scatter_add_ = _dim_api(scatter_add_p)


tensor_methods(
    {
        "gather": _method(gather),
        "scatter": _method(scatter),
        "scatter_": scatter_,
        "scatter_add": _method(scatter_add),
        "scatter_add_": scatter_add_,
        "scatter_reduce": _method(scatter_reduce),
        "scatter_reduce_": scatter_reduce_,
    }
)
