"""Reductions: sum, mean, prod, the extrema, variance, norms, logsumexp, all/any, the
NaN-ignoring sums, aminmax and renorm.

The other parts of the family live beside it (``extrema``, ``softmax``, ``scans``,
``sorting``; what they share in ``_reduce_common``). This module imports each where its
code used to be, so the ops keep their registration order, and re-exports their names.
"""

from __future__ import annotations

import builtins
import math
import warnings
from collections.abc import Callable

import numpy as np

from .._core import dtype as dt
from .._core import op as _op
from .._core import parallel
from .._core.dispatch import dispatch
from .._core.layout import contiguous
from .._core.meta import by_kernel
from .._core.methods import tensor_methods
from .._core.no_kernel import NO_ACCUMULATE_TYPE, NoKernel, raises, unless_empty
from .._core.op import LINEAR, Op, undefined_grads
from .._core.symbolic import reciprocal
from .._core.tensor import wrap_dim
from .._opdb.samples import ErrorInput, S
from ._batching import Bind, front, materialize
from ._families import COMPLEX, COMPLEX_TOO, FLOATS, FLOATS_INT, FLOATS_INT_BOOL, to_float
from ._reduce_common import (
    _DIMS,
    _FLAT,
    _acc,
    _err_dim,
    _has_zero,
    _need_float,
    _partial_jvp,
    _partial_vjp,
    _shares,
    _sum_dims,
    _tensor,
    _wider,
    _write_rt,
    count,
    defop,
    dim1,
    dim_samples,
    dims_of,
    distinct,
    reduction,
    sum_short_rows,
    unreduce,
)
from .comparison import where
from .creation import ones_like, zeros_like
from .shape import cat

_pyany, _pymax = builtins.any, builtins.max  # the names are shadowed by ops below


# ------------------------------------------------------------------ sum, mean, prod
def _sum(xp, x, dim=None, keepdim=False, *, dtype=None):
    x, acc = _acc(xp, x, dtype)
    axes = dims_of(dim, x.ndim)
    if xp is np and x.size >= parallel.MIN_ELEMENTS // 64:
        # (where threads would not cut it; einsum needs no accumulator dtype for floats)
        if acc is None and (x.size < parallel.WORK or parallel.threads() < 2):
            out = sum_short_rows(x, axes, keepdim)
            if out is not None:
                return out
        if x.size >= parallel.MIN_ELEMENTS:
            return parallel.sum(x, axes, keepdim, acc)
    return x.sum(axis=axes, keepdims=keepdim, dtype=acc)


def _sum_samples(make):
    yield S((make((2, 3)),))
    yield S((np.asarray(make(())),))
    yield S((make((2, 3, 4)), 1))
    yield S((make((2, 3, 4)), (0, 2)), {"keepdim": True})
    yield S((make((2, 3)), -1))
    yield S((make((0, 3)), 0))
    yield S((make((2, 3)),), {"dtype": _wider(make)})
    yield S((make((2, 3)), None, True))


sum_p = defop(
    "sum",
    _sum,
    nin=1,
    vjp=lambda g, x_shape, dim, keepdim: unreduce(g, x_shape, dim, keepdim),
    jvp=LINEAR,
    samples=_sum_samples,
    test={"dtypes": (*FLOATS_INT_BOOL, *COMPLEX)},
    error_samples=_err_dim(),
    batch_rule=_DIMS,
    out=True,
    methods=True,
    aten_dim_list=True,
    node_name=lambda dim: "SumBackward0" if dim is None else "SumBackward1",  # sum, sum.dim_IntList
    complex32=unless_empty("sum_cpu"),  # (PyTorch runs an empty sum)
    meta=by_kernel,
)


def _sum_to_size(xp, x, size):
    size = tuple(size)
    lead = x.ndim - len(size)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(size) if s == 1 and x.shape[i + lead] != 1
    )
    out = x.sum(axis=axes, keepdims=True) if axes else x.copy()  # never an untracked alias
    return out.reshape(size) if lead else out


def _sum_to_size_rule(vmap, args, bdims, attrs):
    """Sum to (B, 1.., *size), keeping the batch and the dims the size leaves out."""
    x = front(args[0], bdims[0])
    size = tuple(attrs["size"])
    lead = _pymax(x.dim() - 1 - len(size), 0)
    out = sum_to_size(x, (vmap.size, *(1,) * lead, *size))
    return (out.reshape(vmap.size, *size) if lead else out), 0


def _sum_to_size_errors(make):
    yield ErrorInput(
        S((make((2, 3)), (4,))),
        RuntimeError,
        r"size \{\[4\]\} is not expandable to size \{\[2, 3\]\}",
    )


def _sum_to_size_complex32(arrays, attrs):
    """PyTorch's sum_to_size of complex32: sum's kernel refuses it where a dim is summed."""
    x, size = arrays[0], tuple(attrs["size"])
    return x.shape == size or "sum_cpu"


sum_to_size_p = defop(
    "sum_to_size",
    _sum_to_size,
    nin=1,
    vjp=lambda g, x_shape: g.expand(x_shape),
    jvp=LINEAR,
    samples=lambda make: [S((make((2, 3, 4)), (3, 1))), S((make((2, 3)), (2, 3)))],
    api="Tensor.sum_to_size",
    batch_rule=_sum_to_size_rule,
    methods=False,
    error_samples=_sum_to_size_errors,
    test=COMPLEX_TOO,
    complex32=_sum_to_size_complex32,
    meta=by_kernel,
)
sum_to_size = sum_to_size_p.fn


def _sum_to_size_method(self, *size):
    """self summed to ``size`` (self broadcasts from it); self itself when it has that size,
    as in PyTorch (the same tensor, so that autograd sees the alias)."""
    if len(size) == 1 and not isinstance(size[0], int):
        size = size[0]
    size = tuple(int(k) for k in size)
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or _pyany(k != 1 and k != shape[lead + i] for i, k in enumerate(size)):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    return self if size == shape else sum_to_size(self, size)


def _mean(xp, x, dim=None, keepdim=False, *, dtype=None):
    _need_float("mean", x, dtype)
    if dtype is not None:
        x = x.astype(dtype.np)
    dims = dims_of(dim, x.ndim)
    if x.size == 0:  # nan where nothing is averaged, without NumPy's warning
        with np.errstate(invalid="ignore", divide="ignore"):
            return (x.sum(axis=dims, keepdims=keepdim) / count(x.shape, dims)).astype(x.dtype)
    if x.dtype.kind == "f" and x.dtype.itemsize >= 4:
        # NumPy's mean for these dtypes (a sum, divided in the sum's dtype), without its
        # Python-level overhead
        n = 1
        for d in dims:
            n *= x.shape[d]
        return x.sum(axis=dims, keepdims=keepdim) / n
    return xp.mean(x, axis=dims, keepdims=keepdim)


def _mean_errors(make):
    yield ErrorInput(S((make((2, 3), dtype="int64"),)), RuntimeError, r"mean\(\): could not infer")
    yield ErrorInput(S((make((2, 3)), 2)), IndexError, "Dimension out of range")


def _mean_vjp(g, x_shape, dim, keepdim):
    return unreduce(g, x_shape, dim, keepdim) * reciprocal(_pymax(count(x_shape, dim), 1))


def _mean_vjp_arrays(g, x_shape, dim, keepdim):
    """``_mean_vjp`` on arrays, for a mean over every dim."""
    if dim is not None:
        return NotImplemented
    # (each element is the 0-d g times 1/n, the product the formula's expanded mul makes)
    return np.full(x_shape, g * reciprocal(_pymax(count(x_shape, dim), 1)), g.dtype)


_op.on_arrays(_mean_vjp, _mean_vjp_arrays)


def _mean_dims(x, dim, keepdim):
    """x's mean over ``dim`` (every dim for None), in numtorch ops."""
    return mean(x, dims_of(dim, x.dim()) if x.dim() else None, keepdim)


mean_p = defop(
    "mean",
    _mean,
    nin=1,
    vjp=_mean_vjp,
    jvp=LINEAR,
    samples=_sum_samples,
    error_samples=_mean_errors,
    batch_rule=_DIMS,
    out=True,
    methods=True,
    aten_dim_list=True,
    node_name=lambda dim: "MeanBackward0" if dim is None else "MeanBackward1",
    test=COMPLEX_TOO,
    complex32=unless_empty("sum_cpu", empty="div_cpu"),  # (PyTorch's refusing kernels)
    meta=by_kernel,
)
mean = mean_p.fn


def _prod(xp, x, dim=None, keepdim=False, *, dtype=None):
    if isinstance(dim, (tuple, list)):  # (one dim only: its signatures take an int)
        raise TypeError(
            f"prod() received an invalid combination of arguments - got (Tensor, "
            f"{type(dim).__name__}), but expected one of:\n * (Tensor input, *, torch.dtype dtype "
            "= None)\n * (Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = "
            "None, Tensor out = None)\n"
        )
    x, acc = _acc(xp, x, dtype)
    if dim is None:
        return x.prod(keepdims=keepdim, dtype=acc)
    if not x.ndim:
        wrap_dim(dim, 0)
        return x.prod(keepdims=keepdim, dtype=acc)
    return x.prod(axis=dim1(dim, x.ndim), keepdims=keepdim, dtype=acc)


def _prod_partial(x, r, dim):
    """d prod / d x_i = the product of the others: r / x without zeros, else the products
    before and after i (no division, so exact at every order whatever the zeros)."""
    if x.dim() == 0 or (x.numel() if dim is None else x.shape[dim1(dim, x.dim())]) == 1:
        return ones_like(x)  # the product of nothing else (not inf / inf)
    if not _has_zero(x):
        return (r / x).conj()
    y, d = (x.reshape(-1), 0) if dim is None else (x, dim1(dim, x.dim()))
    n = y.shape[d]
    if n == 0:
        return zeros_like(x)
    one = ones_like(y.narrow(d, 0, 1))
    before = cat([one, y.narrow(d, 0, n - 1)], d).cumprod(d)
    after = cat([y.narrow(d, 1, n - 1), one], d).flip(d).cumprod(d).flip(d)
    return (before * after).reshape(x.shape).conj()


def _prod_samples(make):
    for a in (
        (make((2, 3), 0.5, 2),),
        (make((), 0.5, 2),),
        (make((2, 3, 4), -2, -0.5), 1),
        (make((2, 3), 0.5, 2), -1, True),
        (make((0, 3)), 0),
        (make((), 0.5, 2), 0),
    ):
        yield S(a)
    yield S((make((2, 3), 0.5, 2), 0), {"dtype": _wider(make)})
    if make.is_float:
        z = make((3, 4), 0.5, 2)
        z[1, 2] = 0  # one zero in a row, two in a column
        z[0, 2] = 0
        yield S((z, 1))
        yield S((z, 0), {"keepdim": True})


prod_p = reduction(
    "prod",
    _prod,
    _prod_partial,
    samples=_prod_samples,
    dtypes=(*FLOATS_INT, *COMPLEX),
    out=True,
    batch_rule=_FLAT,
    node_name=lambda dim: "ProdBackward0" if dim is None else "ProdBackward1",
    complex32=unless_empty("prod_out_cpu"),  # (PyTorch's kernel that refuses ComplexHalf)
    autocast="fp32",
)


# ------------------------------------------------------------------ extrema
from .extrema import (  # noqa: E402, F401
    _ties_partial,
    amax,
    amax_p,
    amin,
    amin_p,
    argmax_p,
    argmin_p,
    gather_dim,
    max,
    min,
    scatter_add_dim,
)


# ------------------------------------------------------------------ variance
def _variance(xp, x, dim, correction, keepdim, name: str):
    dims = dims_of(dim, x.ndim)
    n = count(x.shape, dims)
    if n - correction <= 0:  # inf/nan like PyTorch, with its warning rather than NumPy's
        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel).",
            stacklevel=8,
        )
        c = x - x.sum(axis=dims, keepdims=True) / _pymax(n, 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (c * c).sum(axis=dims, keepdims=keepdim) / x.dtype.type(
                _pymax(n - correction, 0)
            )
    if _wide(x):  # squares and sums in double, read from x (no double copy of it); the
        # result stays double for std's root (the callers round it to x's dtype)
        c = xp.subtract(x, _wide_mean(xp, x, dims, True), dtype=xp.float64)
        xp.multiply(c, c, out=c)
        return c.sum(axis=dims, keepdims=keepdim) / (n - correction)
    if x.size:  # shifted by a sample of each row: exactly 0 for equal values, as PyTorch's
        x = x - x[tuple(slice(0, 1) if a in dims else slice(None) for a in range(x.ndim))]
    return xp.var(x, axis=dims, ddof=correction, keepdims=keepdim)


def _wide(x) -> bool:
    """float32 and half, whose moments PyTorch's CPU kernel accumulates in double (the
    squares of 1e30 fit; the std of [1e30, -2.8] is finite; equal values give exactly 0)."""
    return x.dtype.kind == "f" and x.dtype.itemsize < 8


def _wide_mean(xp, x, dims, keepdim):
    return xp.add.reduce(x, axis=dims, dtype=xp.float64, keepdims=keepdim) / count(x.shape, dims)


def _var(xp, x, dim=None, correction=1, keepdim=False):
    return _spread(xp, x, dim, correction, keepdim, "var", root=False)


def _std(xp, x, dim=None, correction=1, keepdim=False):
    return _spread(xp, x, dim, correction, keepdim, "std", root=True)


def _spread(xp, x, dim, correction, keepdim, name: str, root: bool):
    """The variance or (root) the standard deviation (a float32 or half x's rounded from
    double once)."""
    v = _variance(xp, x, dim, correction, keepdim, name)
    v = xp.sqrt(v) if root else v
    return v.astype(x.dtype, copy=False) if _wide(x) else v


def _dof(x, dim, correction) -> float:
    d = count(x.shape, dim) - correction
    return d if d > 0 else 0.0


def _centered(x, dim):
    return x - _mean_dims(x, dim, True)


def _scale(c: float, d: float) -> float:
    return c / d if d else math.inf


def _var_partial(x, _r, dim, correction):
    """2 (x - mean) / dof, with dof <= 0 read as 0 (the forward's S / max(0, n - c) is the
    same function there; PyTorch's finite 2 / (n - c) for dof < 0 along a dim is not its
    derivative). Over everything PyTorch's convention is +inf, NaN where x is the mean."""
    d = _dof(x, dim, correction)
    if not d and (dim is None or x.dim() == 0):
        return where(x == _mean_dims(x, dim, True), math.nan, math.inf)
    return _centered(x, dim) * _scale(2.0, d)


def _std_partial(x, r, dim, correction):
    """With the mask where the spread is 0: the gradient is 0 there (like PyTorch), not
    0/0 nor g * 0 for an infinite g; the inner where keeps the division's own derivative
    finite there."""
    zero = r == 0
    return _centered(x, dim) * _scale(1.0, _dof(x, dim, correction)) / where(zero, 1.0, r), zero


def _var_jvp(t, x, result, dim, keepdim, correction=1):
    return _partial_jvp(_var_partial, t, x, result, dim, keepdim, {"correction": correction})


def _std_jvp(t, x, result, dim, keepdim, correction=1):
    """var's tangent over twice the result, 0 where the result is 0 (PyTorch's formula: NaN
    over an empty dim, where the result is NaN)."""
    return where(result == 0, 0.0, _var_jvp(t, x, result, dim, keepdim, correction) / (2 * result))


def _var_samples(make):
    yield S((make((2, 3)),))
    yield S((make((3, 4)), 1))
    yield S((make((2, 3, 4)), (0, 2)), {"keepdim": True, "correction": 0})
    yield S((make((2, 3, 4)), -1), {"correction": 2})
    yield S((make((2, 3)),), {"dim": 0, "keepdim": True})
    yield S((make((3, 4)), 1, True))  # legacy unbiased
    yield S((make((3, 4)), False))  # legacy var(input, unbiased)
    yield S((make((3, 4)), 1, False, True))  # legacy var(input, dim, unbiased, keepdim)


def _var_errors(name: str):
    def errors(make):
        for d in ("int64", "bool"):
            yield ErrorInput(
                S((make((2, 3), dtype=d),)), RuntimeError, f"^{name} only support floating point"
            )
        yield ErrorInput(S((make((2, 3)), 2)), IndexError, "Dimension out of range")

    return errors


def _floating_only(name: str) -> NoKernel:
    return NoKernel(
        "bi", error=(RuntimeError, f"{name} only support floating point and complex dtypes")
    )


_VEXTRA = ("correction",)
var_p = reduction(
    "var",
    _var,
    _var_partial,
    extra=_VEXTRA,
    samples=_var_samples,
    error_samples=_var_errors("std and var"),
    methods=False,
    no_kernel=_floating_only("std and var"),
    aten_dim_list=True,
    dtypes=(*FLOATS, *COMPLEX),
    complex32=True,
)
std_p = reduction(
    "std",
    _std,
    _std_partial,
    extra=_VEXTRA,
    samples=_var_samples,
    jvp=_std_jvp,
    error_samples=_var_errors("std and var"),
    methods=False,
    no_kernel=_floating_only("std and var"),
    aten_dim_list=True,
    dtypes=(*FLOATS, *COMPLEX),
    complex32=True,
)


def _var_mean(xp, x, dim=None, correction=1, keepdim=False):
    spread = _spread(xp, x, dim, correction, keepdim, "var_mean", root=False)
    return spread, _moment_mean(xp, x, dim, keepdim)


def _std_mean(xp, x, dim=None, correction=1, keepdim=False):
    spread = _spread(xp, x, dim, correction, keepdim, "std_mean", root=True)
    return spread, _moment_mean(xp, x, dim, keepdim)


def _moment_mean(xp, x, dim, keepdim):
    if _wide(x) and x.size:
        return _wide_mean(xp, x, dims_of(dim, x.ndim), keepdim).astype(x.dtype)
    return _mean(xp, x, dim, keepdim)


def _moments_op(
    name: str, kernel: Callable, partial: Callable, spread_jvp: Callable, reads_result: bool
) -> Op:
    """(spread, mean) of x in one op; the gradient adds both outputs' parts. Only std's
    part reads the result (saved, as in PyTorch)."""

    def moments_vjp(g, x, spread, dim, correction, keepdim):
        # An output with no gradient adds nothing (not 0 * a NaN partial where dof <= 0)
        c = {"correction": correction}
        part = None if g[0] is None else _partial_vjp(partial, g[0], x, spread, dim, keepdim, c)
        if g[1] is None:
            return part
        m = _mean_vjp(g[1], x.shape, dim, keepdim)
        return m if part is None else part + m

    if reads_result:

        @undefined_grads
        def vjp(g, x, result, dim, correction, keepdim):
            return moments_vjp(g, x, result[0], dim, correction, keepdim)

    else:

        @undefined_grads
        def vjp(g, x, dim, correction, keepdim):
            return moments_vjp(g, x, None, dim, correction, keepdim)

    def jvp(t, x, result, dim, correction, keepdim):
        spread = spread_jvp(t, x, result[0], dim, keepdim, correction)
        return spread, _mean_dims(t, dim, keepdim)

    return defop(
        name,
        kernel,
        nin=1,
        nout=2,
        vjp=vjp,
        jvp=jvp,
        samples=_var_samples,
        error_samples=_var_errors(name),
        batch_rule=_DIMS,
        no_kernel=_floating_only(name),
        test=COMPLEX_TOO,
        aten_dim_list=True,
        complex32=True,
        meta=by_kernel,
        saved_outputs=(0,) if reads_result else (),  # (std_mean's node saves result0)
    )


var_mean_p = _moments_op(
    "var_mean",
    _var_mean,
    _var_partial,
    _var_jvp,
    False,
)
std_mean_p = _moments_op(
    "std_mean",
    _std_mean,
    _std_partial,
    _std_jvp,
    True,
)


def _var_args(dim, unbiased, keepdim, correction, name):
    """Reads both signatures: (dim, *, correction, keepdim) and legacy (dim, unbiased, keepdim)."""
    if isinstance(dim, bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None:
        if correction is not None:
            raise RuntimeError(f"{name}: Cannot pass both correction and unbiased arguments")
        correction = 1 if unbiased else 0
    return dim, 1 if correction is None else correction, keepdim


def _variance_api(op: Op):
    name = op.name

    def fn(
        input,
        dim=None,
        unbiased: bool | None = None,
        keepdim: bool = False,
        *,
        correction=None,
        out=None,
    ):
        dim, c, keepdim = _var_args(dim, unbiased, keepdim, correction, name)
        res = op.fn(input, dim, c, keepdim)
        if out is not None:
            from .._core.out import write_out

            return write_out(out, res)
        return res

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{name}(input, dim=None, *, correction=1, keepdim=False)`` (also the legacy ``unbiased`` form)."
    return fn


var = _variance_api(var_p)
std = _variance_api(std_p)
var_mean = _variance_api(var_mean_p)
std_mean = _variance_api(std_mean_p)


# ------------------------------------------------------------------ norms
def _norm_dtype_check(xp, x, dtype) -> None:
    """dtype= may widen the input, never narrow it or change its kind (PyTorch's checks)."""
    want, cx = np.dtype(dtype.np), x.dtype.kind == "c"
    if want.kind not in "fc":
        raise RuntimeError(
            f"linalg.vector_norm: dtype should be floating point or complex, but got {dtype.scalar_name}"
        )
    if cx != (want.kind == "c"):
        kind = "complex" if cx else "real"
        raise RuntimeError(
            f"linalg.vector_norm: dtype should be {kind} for {kind} inputs, but got "
            + dtype.scalar_name
        )
    if xp.promote_types(x.dtype, want) != want:
        raise RuntimeError(
            f"linalg.vector_norm: the dtype of the input ({dt.of(x).scalar_name}) should be "
            f"convertible without narrowing to the specified dtype ({dtype.scalar_name})"
        )


def _vector_norm(xp, x, ord=2, dim=None, keepdim=False, *, dtype=None):
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            + dt.of(x).scalar_name
        )
    if dtype is not None:
        _norm_dtype_check(xp, x, dtype)
        x = x.astype(dtype.np)
    dims = dims_of(dim, x.ndim)
    if ord == 2 and xp is np and x.dtype.kind == "f" and parallel.large(x):  # (|x|² is x²)
        return np.sqrt(parallel.sum(parallel.ufunc(np.multiply, x, x), dims, keepdim))
    a = xp.abs(x)
    if ord < 0 or ord == math.inf:  # (no identity: PyTorch refuses an empty reduction)
        if x.size == 0 and (x.ndim == 0 or _pyany(x.shape[d] == 0 for d in dims)):
            given = [dim] if isinstance(dim, int) else list(dim or ())
            empty = [d for d in given if x.shape[d] == 0]  # (PyTorch names the dim as given)
            where_ = f"the dimension {empty[0]}" if empty else "an empty tensor "
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {ord} norm on {where_}because "
                + ("this dimension is empty and " if empty else "")
                + "the operation does not have an identity"
            )
    if ord in (math.inf, -math.inf):
        return (xp.amax if ord > 0 else xp.amin)(a, axis=dims, keepdims=keepdim)
    if ord == 0:
        return (a != 0).sum(axis=dims, keepdims=keepdim).astype(a.dtype)
    if ord == 1:
        return a.sum(axis=dims, keepdims=keepdim)
    if ord == 2:
        return xp.sqrt((a * a).sum(axis=dims, keepdims=keepdim))
    with np.errstate(divide="ignore"):
        return ((a**ord).sum(axis=dims, keepdims=keepdim)) ** (1.0 / ord)


def _norm_partial(x, r, dim, ord):
    """d ||x||_ord / d x, as PyTorch's norm_backward writes it. ord 0 counts: no gradient
    (PyTorch's undefined one). inf: split among the elements at the norm, or at a NaN.
    Below 1: 0 where x is 0 (|x|**ord is even: its central difference there is 0), the
    norm's power unmasked; from 1 up: 0 where the norm is 0."""
    if ord == 0:
        return None
    if ord == 1:
        return x.sgn()
    if ord in (math.inf, -math.inf):
        mask = (x.abs() == r) | x.isnan()
        return x.sgn() * _shares(mask, x, dim)
    if ord < 1:
        return where(x == 0, 0.0, x.sgn() * x.abs() ** (ord - 1)) * r ** (1 - ord)
    zero = r == 0
    safe = where(zero, 1.0, r)
    if ord == 2:
        return where(zero, 0.0, x / safe)
    scaled = x.sgn() * x.abs() ** (ord - 1) if ord < 2 else x * x.abs() ** (ord - 2)
    return scaled / safe ** (ord - 1), zero


def _re(z):
    return z.real if z.is_complex() else z


def _norm_jvp(t, x, result, dim, keepdim, ord=2):
    """PyTorch's norm_jvp: the tangents' sum times the norm's power, or over it (0 where
    the norm is 0), so an infinite element whose term is 0 leaves an infinite norm's
    tangent infinite; inf: the mean tangent of the elements at the norm, or at a NaN."""
    if ord == 0:
        return zeros_like(result)
    if ord in (1, math.inf, -math.inf):
        return _partial_jvp(_norm_partial, t, x, result, dim, keepdim, {"ord": ord})
    a = x.abs()
    if ord < 1:
        s = where(x == 0, 0.0, a ** (ord - 1)) * _re(x.sgn() * t.conj())
        return _sum_dims(s, dim, keepdim) * result ** (1 - ord)
    if ord < 2:
        s = a ** (ord - 1) * _re(x.sgn() * t.conj())
    else:
        s = (a ** (ord - 2) if ord != 2 else 1) * _re(x * t.conj())
    return where(result == 0, 0.0, _sum_dims(s, dim, keepdim) / result ** (ord - 1))


def _norm_samples(make):
    for o in (2, 3, 1, math.inf, -math.inf, 0, 0.5, -1.5):
        yield S((distinct(make, (2, 3)), o))
    yield S((make(()),))
    yield S((make((2, 3, 4)),), {"dim": (0, 2), "keepdim": True})
    yield S((distinct(make, (3, 4)), math.inf, -1))
    yield S((make((3, 4)), 3, 0, True))
    yield S((make((0, 3)),))
    yield S((make((3, 4)), 2, 1), {"dtype": _wider(make)})


def _norm_errors(make):
    yield ErrorInput(S((make((2, 3), dtype="int64"),)), RuntimeError, "Expected a floating point")
    yield ErrorInput(S((make((0, 3)), math.inf)), RuntimeError, "cannot compute the inf norm")


vector_norm_p = reduction(
    "vector_norm",
    _vector_norm,
    _norm_partial,
    extra=("ord",),
    samples=_norm_samples,
    jvp=_norm_jvp,
    error_samples=_norm_errors,
    api="linalg.vector_norm",
    out=True,
    methods=False,
    node_name="LinalgVectorNormBackward0",
    dtypes=(*FLOATS, *COMPLEX),
    complex32=True,
    aten_dim_list=True,
)
vector_norm = vector_norm_p.fn


# ------------------------------------------------------------------ logsumexp
def _logsumexp(xp, x, dim, keepdim=False):
    dims = dims_of(dim, x.ndim)
    if x.size == 0:
        return xp.log(xp.exp(x).sum(axis=dims, keepdims=keepdim))
    m = xp.amax(x, axis=dims, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        out = xp.log(xp.exp(x - m).sum(axis=dims, keepdims=True)) + m
    return out if keepdim else out.reshape([s for i, s in enumerate(x.shape) if i not in dims])


def _logsumexp_partial(x, r, dim):
    return (x - r).exp().conj()


def _logsumexp_jvp(t, x, result, dim, keepdim):
    """Over nothing NaN, PyTorch's sum of no tangents divided by a sum of no exponentials."""
    v = _partial_jvp(_logsumexp_partial, t, x, result, dim, keepdim, {})
    return v / 0.0 if x.numel() == 0 else v


logsumexp_p = reduction(
    "logsumexp",
    _logsumexp,
    _logsumexp_partial,
    jvp=_logsumexp_jvp,
    prepare=to_float,
    samples=dim_samples(all_dims=False),
    error_samples=_err_dim(),
    out=True,
    test={"dtypes": (*FLOATS_INT, *COMPLEX)},
    aten_dim_list=True,
    complex32="exp_vml_cpu",  # (PyTorch's kernel that refuses ComplexHalf)
)


# ------------------------------------------------------------------ softmax
from .softmax import (  # noqa: E402, F401
    _log_softmax_backward_data_p,
    _softmax,
    _softmax_backward_data_p,
    log_softmax,
    nn_log_softmax,
    nn_softmax,
    softmax,
    softmax_dim,
)

# ------------------------------------------------------------------ scans
# isort: split
from .scans import cummax, cummin, cumprod_p, cumsum_p, logcumsumexp_p  # noqa: E402, F401


# ------------------------------------------------------------------ logical reductions
def _logical_samples(make):
    yield S((make((2, 3)),))
    yield S((np.asarray(make(())),))
    yield S((make((2, 3, 4)), 1))
    yield S((make((2, 3, 4)), -1, True))
    yield S((make((2, 3, 4)), (0, 2)))
    yield S((make((0, 3)), 0))
    yield S((make((0, 3)),))
    yield S((np.zeros((2, 3), make.dtype), 1))
    yield S((make((2, 3)), ()))  # reduces nothing


_LOGIC = ("float32", "int64", "bool")


def _logical_reduction(name: str):
    """all/any: bool results (uint8 for uint8 input, like PyTorch)."""

    def kernel(xp, x, dim=None, keepdim=False):
        axis = () if _empty_dims(dim) else dims_of(dim, x.ndim)  # dim=(): reduce nothing
        out = getattr(xp, name)(x, axis=axis, keepdims=keepdim)
        return xp.asarray(out, xp.uint8 if x.dtype == xp.uint8 else xp.bool_)

    return defop(
        name,
        kernel,
        nin=1,
        samples=_logical_samples,
        test={"dtypes": _LOGIC},
        error_samples=_err_dim(),
        batch_rule=Bind(_logical_rule),
        out=True,
        methods=True,
        complex32=True,
        meta=by_kernel,
    )


def _empty_dims(dim) -> bool:
    return isinstance(dim, (tuple, list)) and not dim


def _logical_rule(op):
    """along_dims, but an empty dim list stays empty (all/any reduce nothing over it)."""
    dims = _DIMS.bind(op)

    def rule(vmap, args, bdims, attrs):
        if _empty_dims(attrs.get("dim")):
            return dispatch(op, (materialize(vmap, args[0], bdims[0]),), attrs), 0
        return dims(vmap, args, bdims, attrs)

    return rule


all_p, any_p = _logical_reduction("all"), _logical_reduction("any")


def _count_nonzero(xp, x, dim=None):
    return (x != 0).sum(axis=dims_of(dim, x.ndim)).astype(xp.int64)


count_nonzero_p = defop(
    "count_nonzero",
    _count_nonzero,
    nin=1,
    error_samples=_err_dim(),
    test={"dtypes": _LOGIC},
    batch_rule=_DIMS,
    samples=lambda make: (s for s in _logical_samples(make) if not s.kwargs and len(s.args) < 3),
    methods=True,
    complex32=True,
    meta=by_kernel,
)


# ------------------------------------------------------------------ nan-ignoring reductions
def _nansum(xp, x, dim=None, keepdim=False, *, dtype=None):
    x, acc = _acc(xp, x, dtype)
    return xp.nansum(x, axis=dims_of(dim, x.ndim), keepdims=keepdim, dtype=acc)


def _nanmean(xp, x, dim=None, keepdim=False, *, dtype=None):
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            f"nanmean(): expected input to have floating point or complex dtype but got {dt.of(x).scalar_name}"
        )
    _need_float("nanmean", x, dtype)
    if dtype is not None:
        x = x.astype(dtype.np)
    dims = dims_of(dim, x.ndim)
    n = (~xp.isnan(x)).sum(axis=dims, keepdims=keepdim)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (xp.nansum(x, axis=dims, keepdims=keepdim) / n).astype(x.dtype)


def _nan_samples(make):
    for s in dim_samples(tuple_dims=True)(make):
        if make.is_float and s.args[0].size > 2:
            s.args[0].reshape(-1)[1] = np.nan
        yield s


def _notnan(x, _r, dim):
    return x == x


def _nanmean_partial(x, _r, dim):
    return _shares(x == x, x, dim)


def _nanmean_jvp(t, x, result, dim, keepdim):
    """PyTorch's nansum of the tangents over the count: NaN where nothing is averaged (a
    NaN tangent of a NaN element dropped)."""
    num = x == x
    return _sum_dims(where(num, t, 0.0), dim, keepdim) / _sum_dims(num.to(t.dtype), dim, keepdim)


nansum_p = reduction(
    "nansum",
    _nansum,
    _notnan,
    samples=_nan_samples,
    dtypes=FLOATS_INT,
    out=True,
    aten_dim_list=True,
    no_kernel=NoKernel("c", error=(RuntimeError, "nansum on CPU does not support complex inputs")),
)
nanmean_p = reduction(
    "nanmean",
    _nanmean,
    _nanmean_partial,
    jvp=_nanmean_jvp,
    samples=_nan_samples,
    out=True,
    aten_dim_list=True,
    no_kernel=NoKernel("c", error=(RuntimeError, "nansum on CPU does not support complex inputs")),
)


# ------------------------------------------------------------------ sorting
from .sorting import (  # noqa: E402, F401
    argsort_p,
    kthvalue,
    median,
    mode,
    nanmedian,
    sort,
    topk,
)


# ------------------------------------------------------------------ aminmax, renorm
def _aminmax_samples(make):
    yield S((distinct(make, (2, 3)),))
    yield S((distinct(make, (2, 3, 4)),), {"dim": 1})
    yield S((distinct(make, (3, 4)),), {"dim": -1, "keepdim": True})
    yield S((distinct(make, (2, 3)),), {"keepdim": True})
    yield S((distinct(make, ()),), {"dim": 0})
    yield S((make((0, 3)),), {"dim": 1})


def _aminmax_errors(make):
    yield ErrorInput(S((make((0, 3)),)), RuntimeError, r"aminmax\(\): cannot compute aminmax")
    yield ErrorInput(
        S((make((0, 3)),), {"dim": 0}), IndexError, "aminmax: Expected reduction dim 0 to have"
    )


def _aminmax_kernel(inputs, attrs) -> str:
    """PyTorch's kernel refusing a complex aminmax; a 0-dim input along a dim is refused by
    aminmax's own check first."""
    x = inputs[0]
    if attrs.get("dim") is not None and not x.dim():
        raise RuntimeError(f"aminmax not implemented for {x.dtype.scalar_name}")
    return "aminmax_cpu"


@_op.composite(
    samples=_aminmax_samples,
    error_samples=_aminmax_errors,
    methods=True,
    nout=2,
    test={"dtypes": FLOATS_INT},
    no_kernel=NoKernel("c", _aminmax_kernel),
    complex32=_aminmax_kernel,
)
def aminmax(input, *, dim=None, keepdim: bool = False, out=None):
    """(min, max) of everything or along ``dim``."""
    input = _tensor(input)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has "
                "no identity."
            )
        dims = ()
    else:
        dims = dim1(dim, input.dim())
        if input.dim() and input.shape[dims] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {dims} to have non-zero size.")
    res = (amin(input, dims, keepdim), amax(input, dims, keepdim))
    return _write_rt("aminmax", res, out)


def _renorm_samples(make):
    yield S((make((3, 4)), 2, 0, 1.0))
    yield S((make((2, 3, 2)), 1, 1, 1.5))
    yield S((make((3, 4)), 3.0, -1, 0.5))
    yield S((distinct(make, (3, 4)), math.inf, 1, 1.0))
    yield S((make((3, 4), 0.05, 0.1), 2, 0, 5.0))  # every norm within maxnorm: unchanged
    yield S((make((0, 3)), 2, 0, 1.0))


def _renorm_errors(make):
    yield ErrorInput(S((make((2, 3)), 0, 0, 1.0)), RuntimeError, "renorm: non-positive-norm")
    yield ErrorInput(
        S((make((2, 3)), 2, 0, -1)), RuntimeError, "renorm: expected maxnorm to be >= 0 but got -1"
    )
    yield ErrorInput(
        S((make((3,)), 2, 0, 1.0)), RuntimeError, "renorm: input needs at least 2 dimensions"
    )
    yield ErrorInput(S((make((2, 3)), 2, 2, 1.0)), IndexError, "Dimension out of range")


# PyTorch's renorm has no accumulate type for complex32 (an internal assert)
_NO_ACCUMULATE_TYPE = NO_ACCUMULATE_TYPE


@_op.composite(
    samples=_renorm_samples,
    error_samples=_renorm_errors,
    methods=True,
    layout=contiguous,
    test=COMPLEX_TOO,
    complex32=raises(RuntimeError, _NO_ACCUMULATE_TYPE),
)
def renorm(input, p, dim: int, maxnorm, *, out=None):
    """Each slice along ``dim`` whose p-norm exceeds ``maxnorm`` scaled down to that norm."""
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    nd = input.dim()
    if nd < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {nd} dimensions")
    d = dim1(dim, nd)
    norm = vector_norm(input, p, tuple(i for i in range(nd) if i != d), True)
    res = input * where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    if out is None:
        return res
    from .._core.out import write_out

    return write_out(out, res)


def _renorm_(self, p, dim: int, maxnorm):
    return self.copy_(renorm(self.clone(), p, dim, maxnorm))  # the clone: what backward saves


tensor_methods(
    {
        "max": max,
        "sum_to_size": _sum_to_size_method,
        "min": min,
        "var": var,
        "std": std,
        "renorm_": _renorm_,
    }
)
