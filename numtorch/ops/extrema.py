"""Extrema: amax/amin, max/min (of everything, along a dim with indices, or of two
tensors), argmax/argmin; and the (values, indices) op builder that sorting and the
cumulative extrema share, with the gather/scatter-add pair it differentiates through."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable

import numpy as np

from .._core.meta import by_kernel
from .._core.meta_array import has_values
from .._core.no_kernel import NoKernel, nonempty
from .._core.op import LINEAR, Op
from .._core.tensor import wrap_dim
from .._opdb.samples import ErrorInput, S
from ._batching import front, lrank, materialize, pad_to, pdim, vmap_depth
from ._families import FLOATS_INT
from ._reduce_common import (
    _DIMS,
    _FLAT,
    RT,
    _nonempty,
    _shares,
    _sum_dims,
    _tensor,
    defop,
    dim1,
    dim_samples,
    dims_of,
    distinct,
    keep,
    reduction,
)
from .binary import maximum_p, minimum_p
from .comparison import where


# ------------------------------------------------------------------ extrema
def _amax_kernel(name: str):
    """The amax/amin kernel: reduce over dims, refusing empty reductions like torch."""

    def kernel(xp, x, dim=(), keepdim=False):
        dims = dims_of(dim, x.ndim)
        if x.size == 0 and (x.ndim == 0 or _no_dim(dim)):
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        if x.size == 0:  # PyTorch names the dim as it was given
            for g in (dim,) if isinstance(dim, int) else tuple(dim):
                if x.shape[wrap_dim(g, x.ndim)] == 0:
                    raise IndexError(f"{name}(): Expected reduction dim {g} to have non-zero size.")
        r = getattr(xp, name)(x, axis=dims, keepdims=keepdim)
        if dim is None or x.dtype.kind != "f" or not has_values(r) or not (r == 0).any():
            return r  # max()/min() of everything keep NumPy's zero, as PyTorch's vector loop
        return _first_zero(xp, x, r, dims, keepdim)

    return kernel


def _first_zero(xp, x, r, dims, keepdim):
    """``r`` with each zero signed as the first zero it reduced: PyTorch's amax/amin keep the
    first of equal values, NumPy's may keep either sign."""
    rest = [d for d in range(x.ndim) if d not in dims]
    xt = xp.transpose(x, rest + list(dims)).reshape([x.shape[d] for d in rest] + [-1])
    first = xp.take_along_axis(xt, (xt == 0).argmax(-1)[..., None], -1)[..., 0]
    return xp.where(r == 0, first.reshape(r.shape), r)


_amax, _amin = _amax_kernel("amax"), _amax_kernel("amin")


def _no_dim(dim) -> bool:
    return dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0)


def _ties_partial(x, r, dim):
    """The gradient of an extremum, split evenly among the elements equal to it. max()/min()
    of everything (dim None) split a NaN result among the NaNs, as PyTorch's MaxBackward1;
    amax/amin (AmaxBackward0) do not."""
    mask = x == r
    if dim is None:  # and 0 elsewhere whatever g is (PyTorch fills a zero tensor there)
        mask = mask | ((x != x) & (r != r))
        return _shares(mask, x, dim), ~mask
    return _shares(mask, x, dim)


def _ties_jvp(t, x, result, dim, keepdim=False):
    """The mean tangent of the elements equal to the result: NaN where it is NaN (none is
    equal), as PyTorch's. Everything reduced (max(), min(), median()) is its
    evenly_read_jvp, whose product keeps a NaN tangent of another element; along dims
    (amax, amin) its amaxamin_jvp, which drops it."""
    mask = x == keep(result, x.dim(), dim, keepdim)
    if dim is None:  # (divided before the sum: 0 over nothing)
        return _sum_dims(t * _shares(mask, t, None), None, keepdim)
    return _sum_dims(where(mask, t, 0.0), dim, keepdim) / _sum_dims(mask.to(t.dtype), dim, keepdim)


def _extrema_errors(name):
    def errors(make):
        yield ErrorInput(S((make((0, 3)), 0)), IndexError, rf"{name}\(\): Expected reduction dim 0")
        yield ErrorInput(S((make((2, 3)), 2)), IndexError, "Dimension out of range")

    return errors


def _amax_samples(make):
    yield from dim_samples(maker=distinct)(make)
    if make.is_float:  # ties split the gradient
        yield S((np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.5]], make.dtype), 1))
    yield S((make((0, 3)), 1))


def _all_or_values(name: str) -> Callable:
    """The kernel PyTorch names for amax/amin: everything reduced is max()/min()'s."""
    return lambda arrays, attrs: f"{name}_all" if attrs.get("dim") is None else f"{name}_values_cpu"


amax_p = reduction(
    "amax",
    _amax,
    _ties_partial,
    jvp=_ties_jvp,
    samples=_amax_samples,
    dtypes=FLOATS_INT,
    error_samples=_extrema_errors("amax"),
    out=True,
    aten_dim_list=True,
    no_kernel=NoKernel("c", _all_or_values("max"), when=nonempty),  # (empty: no kernel)
    # max() reduces everything with dim=None: PyTorch's MaxBackward1
    node_name=lambda dim: "MaxBackward1" if dim is None else "AmaxBackward0",
)
amax = amax_p.fn
amin_p = reduction(
    "amin",
    _amin,
    _ties_partial,
    jvp=_ties_jvp,
    samples=_amax_samples,
    dtypes=FLOATS_INT,
    error_samples=_extrema_errors("amin"),
    out=True,
    aten_dim_list=True,
    no_kernel=NoKernel("c", _all_or_values("min"), when=nonempty),  # (empty: no kernel)
    # min() reduces everything with dim=None: PyTorch's MinBackward1
    node_name=lambda dim: "MinBackward1" if dim is None else "AminBackward0",
)
amin = amin_p.fn


# Indexed reductions differentiate through a gather/scatter-add pair along one dim.
def _gather_dim(xp, x, index, dim):
    if x.ndim == 0:
        return x.copy()
    return xp.take_along_axis(x, index, axis=dim)


def _scatter_add_dim(xp, g, index, dim, shape):
    shape = tuple(shape)
    if not shape:
        return g.reshape(()).copy()
    g = xp.broadcast_to(g, index.shape)
    flat = xp.zeros(index.shape, xp.int64)
    stride = 1
    for a in range(len(shape) - 1, -1, -1):
        if a == dim:
            pos = index
        else:
            pos = xp.arange(index.shape[a]).reshape(
                [-1 if i == a else 1 for i in range(len(shape))]
            )
        flat = flat + pos * stride
        stride *= shape[a]
    out = xp.bincount(flat.ravel(), weights=g.ravel(), minlength=math.prod(shape))
    return out.reshape(shape).astype(g.dtype)


def _gather_rule(vmap, args, bdims, attrs):
    """Both inputs batch-first (an unbatched one expanded: the index sets the shape); a
    logical 0-d input runs as shape (1,)."""
    (x, index), (bx, bi) = args, bdims
    rank = lrank(x, bx)
    x, index = materialize(vmap, x, bx), materialize(vmap, index, bi)
    if rank == 0:
        return gather_dim(x.unsqueeze(1), index.reshape(vmap.size, 1), 1).squeeze(1), 0
    return gather_dim(x, index, pdim(attrs["dim"], rank)), 0


def _scatter_add_rule(vmap, args, bdims, attrs):
    """The index batch-first (expanded if unbatched); an unbatched g broadcasts to it."""
    (g, index), (bg, bi) = args, bdims
    shape = tuple(attrs["shape"])
    index = materialize(vmap, index, bi)
    if not shape:  # a logical 0-d result: g itself, run as shape (1,)
        g = materialize(vmap, g, bg).reshape(vmap.size, 1)
        out = scatter_add_dim(g, index.reshape(vmap.size, 1), 1, (vmap.size, 1))
        return out.squeeze(1), 0
    if bg is not None:
        g = pad_to(front(g, bg), index.dim() - 1)
    return scatter_add_dim(g, index, pdim(attrs["dim"], len(shape)), (vmap.size, *shape)), 0


def _gather_dim_samples(make):
    yield S((make((3, 4)), make.index((3, 2), 4), 1))
    yield S((make((3, 4)), make.index((2, 4), 3), 0))


gather_dim_p = defop(
    "_gather_dim",
    _gather_dim,
    nin=2,
    api="ops.reduction.gather_dim",
    jvp=LINEAR,
    batch_rule=_gather_rule,
    vjp=(lambda g, x_shape, index, dim: scatter_add_dim(g, index, dim, x_shape), None),
    test={"no_oracle": True},
    samples=_gather_dim_samples,
)
gather_dim = gather_dim_p.fn
scatter_add_dim_p = defop(
    "_scatter_add_dim",
    _scatter_add_dim,
    nin=2,
    api="ops.reduction.scatter_add_dim",
    jvp=LINEAR,
    batch_rule=_scatter_add_rule,
    vjp=(lambda g, index, dim: gather_dim(g, index, dim), None),
    test={"no_oracle": True},
    samples=lambda make: [S((make((3, 2)), make.index((3, 2), 4), 1, (3, 4)))],
    meta=by_kernel,
)
scatter_add_dim = scatter_add_dim_p.fn


def _indexed_vjp(g, x_shape, result, dim, keepdim=True):
    """The vjp of (values, indices) = f(x, dim): scatter g to the chosen positions (only the
    indices are read, as in PyTorch: the values may be modified in place)."""
    n = len(x_shape)
    d = dim1(dim, n)
    return scatter_add_dim(keep(g, n, d, keepdim), keep(result[1], n, d, keepdim), d, x_shape)


def _indexed_jvp(t, result, dim, keepdim=True):
    d = dim1(dim, t.dim())
    v = gather_dim(t, keep(result[1], t.dim(), d, keepdim), d)
    return v if keepdim else v.reshape(result[1].shape)


def _arg_extremum(name: str, fn: str):
    def kernel(xp, x, dim, keepdim=False):
        d = dim1(dim, x.ndim)
        if x.ndim == 0:
            return x.copy(), xp.zeros((), xp.int64)
        _nonempty(name, x, (d,))
        idx = getattr(xp, fn)(x, axis=d, keepdims=True)
        vals = xp.take_along_axis(x, idx, axis=d)
        if not keepdim:
            idx, vals = idx.squeeze(d), vals.squeeze(d)
        return vals, idx.astype(xp.int64)

    kernel.__name__ = name
    return kernel


def _indexed_op(name: str, kernel: Callable, **kw) -> Op:
    """(values, indices) of x along ``dim``, differentiated through the indices; without a
    ``keepdim`` attribute the results keep every dim (sort, topk, cummax)."""
    if "keepdim" in inspect.signature(kernel).parameters:
        vjp, jvp = _indexed_vjp, _indexed_jvp
    else:

        def vjp(g, x_shape, result, dim):
            return _indexed_vjp(g, x_shape, result, dim)

        def jvp(t, result, dim):
            return _indexed_jvp(t, result, dim)

    return defop(
        name,
        kernel,
        nin=1,
        nout=2,
        ndiff=1,
        out_names=("values", "indices"),
        saved_outputs=(1,),  # (its node saves the indices)
        batch_rule=_DIMS,
        vjp=vjp,
        jvp=jvp,
        **kw,
        meta=by_kernel,
    )


def _max_samples(make):
    yield S((distinct(make, (2, 3, 4)), 1))  # first: reaches the max/min op itself
    yield S((distinct(make, (2, 3)),))
    yield S((distinct(make, ()),))
    yield S((distinct(make, (2, 3, 4)), -1, True))
    yield S((distinct(make, (3, 4)),), {"dim": 0, "keepdim": False})
    yield S((distinct(make, ()), 0))
    yield S((make((0, 3)), 1))
    if make.is_float:  # ties in the all-reduce split the gradient
        yield S((np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.5]], make.dtype),))


def _max_errors(name):
    def errors(make):
        yield ErrorInput(
            S((make((0,)),)), RuntimeError, rf"{name}\(\): Expected reduction dim to be specified"
        )
        yield ErrorInput(S((make((0, 3)), 0)), IndexError, rf"{name}\(\): Expected reduction dim 0")
        yield ErrorInput(S((make((2, 3)), 2)), IndexError, "Dimension out of range")

    return errors


max_dim_p = _indexed_op(
    "max",
    _arg_extremum("max", "argmax"),
    samples=_max_samples,
    error_samples=_max_errors("max"),
    test={"dtypes": FLOATS_INT},
    no_kernel=NoKernel("c", error=(RuntimeError, "max(): does not support complex input")),
)
min_dim_p = _indexed_op(
    "min",
    _arg_extremum("min", "argmin"),
    samples=_max_samples,
    error_samples=_max_errors("min"),
    test={"dtypes": FLOATS_INT},
    no_kernel=NoKernel("c", error=(RuntimeError, "min(): does not support complex input")),
)


def _max_overloads(op: Op, all_op: Op, elementwise: Op):
    """torch.max/min: of everything, along a dim (values, indices), or of two tensors."""
    name = op.name

    def fn(input, dim=None, keepdim: bool = False, *, other=None, out=None):
        input = _tensor(input)
        if other is not None:
            dim = other
        if not isinstance(dim, (int, type(None))):  # max(a, b): the elementwise form
            return (
                elementwise.fn(input, dim) if out is None else elementwise.fn(input, dim, out=out)
            )
        if dim is None:
            if input.numel() == 0:
                if input._level and vmap_depth(input):  # torch.func's rule reduces dim 1
                    raise IndexError(f"{name}(): Expected reduction dim 1 to have non-zero size.")
                raise RuntimeError(
                    f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                    "Specify the reduction dim with the 'dim' argument."
                )
            return all_op.fn(input, None)
        res = RT[name](*op.fn(input, dim, keepdim))
        if out is not None:
            from .._core.out import write_out

            write_out(tuple(out), tuple(res), op, (input,), {"dim": dim})
            return RT[name](*out)
        return res

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{name}(input)``, ``{name}(input, dim, keepdim)`` -> (values, indices), or ``{name}(input, other)``."
    return fn


max = _max_overloads(max_dim_p, amax_p, maximum_p)
min = _max_overloads(min_dim_p, amin_p, minimum_p)


def _argext(name: str, fn: str):
    def kernel(xp, x, dim=None, keepdim=False):
        if dim is None:
            if x.size == 0:
                raise IndexError(
                    f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
                )
            i = getattr(xp, fn)(x.reshape(-1))
            return xp.asarray(i, xp.int64).reshape((1,) * x.ndim if keepdim else ())
        d = dim1(dim, x.ndim)
        if x.ndim == 0:
            return xp.zeros((), xp.int64)
        _nonempty(name, x, (d,))
        return getattr(xp, fn)(x, axis=d, keepdims=keepdim).astype(xp.int64)

    return kernel


def _argmax_samples(make):
    yield S((distinct(make, (2, 3)),))
    yield S((distinct(make, ()),))
    yield S((distinct(make, (2, 3, 4)), 1))
    yield S((distinct(make, (2, 3, 4)), -1, True))
    # 1-d: torch.func.vmap keeps one dim where the unbatched call keeps every dim
    yield S((distinct(make, (5,)),), {"keepdim": True})
    yield S((distinct(make, ()), 0))


argmax_p, argmin_p = (
    defop(
        name,
        _argext(name, name),
        nin=1,
        samples=_argmax_samples,
        batch_rule=_FLAT,
        test={"dtypes": FLOATS_INT},
        out=True,
        methods=True,
        no_kernel=(
            NoKernel("b", error=(RuntimeError, f"{name}(): does not support bool input")),
            NoKernel("c", error=(RuntimeError, f"{name}(): does not support complex input")),
        ),
        meta=by_kernel,
    )
    for name in ("argmax", "argmin")
)
