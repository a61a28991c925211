"""Reductions: sums, means, extrema, norms, scans, sorting."""

from __future__ import annotations

import builtins
import inspect
import math
import warnings
from collections import namedtuple
from collections.abc import Callable

import numpy as np

from .._core import dtype as dt
from .._core import op as _op
from .._core.dispatch import dispatch, values_hidden
from .._core.layout import contiguous, preserve
from .._core.op import LINEAR, NoKernel, Op, named, tensor_methods, undefined_grads
from .._core.symbolic import reciprocal
from .._core.tensor import check_unique_dims, wrap_dim
from ..testing.samples import ErrorInput, S
from ._batching import (
    Bind,
    along_dims,
    front,
    lrank,
    materialize,
    pad_to,
    pdim,
    rule_generator,
    vmap_depth,
)
from ._families import FLOATS, FLOATS_INT, FLOATS_INT_BOOL, silent, to_float
from .binary import maximum, minimum
from .comparison import where
from .creation import arange, as_tensor, full, ones_like, zeros_like
from .shape import cat

_pyany, _pymax = builtins.any, builtins.max  # the names are shadowed by ops below


# ------------------------------------------------------------------ dims
def dims_of(dim, ndim: int) -> tuple:
    """Normalize a dim argument (None, int, or sequence) to a sorted tuple of axes."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    n = _pymax(ndim, 1)
    out = []
    for d in dim:
        if not -n <= d < n:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})"
            )
        out.append(d % n)
    check_unique_dims(out)
    return tuple(sorted(out)) if ndim else ()


def dim1(dim: int, ndim: int) -> int:
    """One dim, checked and made non-negative (0-d tensors accept 0 and -1)."""
    d = dims_of(dim, _pymax(ndim, 1))
    return d[0]


def keep(r, ndim: int, dim, keepdim: bool):
    """A reduced tensor reshaped with its reduced dims kept (size 1), for broadcasting."""
    if keepdim or ndim == 0:
        return r
    kept = list(r.shape)
    for d in dims_of(dim, ndim):
        kept.insert(d, 1)
    return r.reshape(kept)


def unreduce(g, shape, dim, keepdim: bool):
    """Broadcast a reduced gradient back to `shape` (re-inserting reduced dims)."""
    return keep(g, len(shape), dim, keepdim).expand(shape)


def count(shape, dim) -> int:
    """How many elements a reduction over `dim` combines."""
    return math.prod(shape[d] for d in dims_of(dim, len(shape)))


# Reductions, scans and softmax give contiguous results (defop's default layout; NumPy
# keeps a permuted input's axis order, PyTorch does not).
defop = _op.defop


def _nonempty(name: str, x, dims, what: str = "") -> None:
    if x.size == 0:
        if x.ndim == 0 or not dims:
            return
        for d in dims:
            if x.shape[d] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _need_float(name: str, x, dtype=None) -> None:
    if dtype is None and x.dtype.kind not in "fc":
        raise RuntimeError(
            f"{name}(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {dt.of(x).scalar_name}"
        )
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(
            f"{name}(): could not infer output dtype. Optional dtype must be either a floating "
            f"point or complex dtype. Got: {dtype.scalar_name}"
        )


def _acc(xp, x, dtype):
    """x in the ``dtype=`` asked for, and the dtype a sum or product of it is made in:
    that one (NumPy widens small integers), else int64 for integers and bools."""
    if dtype is not None:
        return x.astype(dtype.np), dtype.np
    return x, (xp.int64 if x.dtype.kind in "biu" else None)


# vmap: move the batch first and shift the dims; dim=None means every dim, or (argmax-like
# ops) the flattened tensor.
_DIMS = along_dims()
_FLAT = along_dims(none="flatten")


# ------------------------------------------------------------------ return types
def _rt(name: str, fields: tuple = ("values", "indices")):
    base = namedtuple(name, fields)

    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs:  # like torch's structseq: one sequence of fields
            args = tuple(args[0])
        return base.__new__(cls, *args, **kwargs)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{body})"

    t = type(name, (base,), {"__new__": __new__, "__repr__": __repr__, "__slots__": ()})
    t.__module__ = "numtorch.return_types"
    return t


def _tensor(x):
    """Public functions take tensors; NumPy scalars (0-d results) are converted."""
    from .._core.tensor import Tensor

    if isinstance(x, Tensor):
        return x
    return as_tensor(np.asarray(x))


RT = {
    n: _rt(n)
    for n in (
        "max", "min", "sort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax", "cummin"
    )
}  # fmt: skip
RT["aminmax"] = _rt("aminmax", ("min", "max"))


# ------------------------------------------------------------------ generator
def reduction(
    name: str,
    kernel: Callable,
    partial: Callable | None,
    *,
    extra: tuple = (),
    samples=None,
    dtypes=FLOATS,
    methods=True,
    **kw,
) -> Op:
    """A dim/keepdim reduction ``kernel(xp, x, dim, keepdim, *extra)``.

    ``partial(x, r, dim, **extra)`` is d result / d x (``r`` the result with reduced
    dims kept), so vjp = g * partial and jvp = sum(t * partial) over the reduced dims.
    A partial that names its second parameter ``_r`` does not read the result, and the
    vjp does not save it (an in-place write into the result is then no error).
    """
    names = ("x", "result", "dim", "keepdim", *extra)
    vjp = jvp = None
    if partial is not None:

        def vjp(g, x, result=None, dim=None, keepdim=False, **ex):
            return _partial_vjp(partial, g, x, result, dim, keepdim, ex)

        def jvp(t, x, result, dim, keepdim, **ex):
            return _partial_jvp(partial, t, x, result, dim, keepdim, ex)

        reads = list(inspect.signature(partial).parameters)[1] == "r"
        vjp = named(vjp, ("g", *(n for n in names if reads or n != "result")))
        jvp = named(kw.pop("jvp", jvp), ("t", *names))
    kw.setdefault("batch_rule", _DIMS)
    return defop(
        name,
        kernel,
        nin=1,
        vjp=vjp,
        jvp=jvp,
        samples=samples,
        test={"dtypes": dtypes, **kw.pop("test", {})},
        methods=methods,
        **kw,
    )


def _partial_vjp(partial, g, x, result, dim, keepdim, extra):
    """g (broadcast back over the reduced dims) times d result / d x. A partial may give
    (p, zero): the product is then 0 where ``zero`` holds, whatever g is (inf included)."""
    r = None if result is None else keep(result, x.dim(), dim, keepdim)
    p = partial(x, r, dim, **extra)
    if type(p) is tuple:
        p, zero = p
        return where(zero, 0.0, unreduce(g, x.shape, dim, keepdim) * p)
    return unreduce(g, x.shape, dim, keepdim) * p


def _partial_jvp(partial, t, x, result, dim, keepdim, extra):
    """t times d result / d x, summed over the reduced dims (a (p, zero) partial's terms
    are 0 where ``zero`` holds)."""
    r = keep(result, x.dim(), dim, keepdim)
    p = partial(x, r, dim, **extra)
    if type(p) is tuple:
        p, zero = p
        return _sum_dims(where(zero, 0.0, t * p), dim, keepdim)
    if p.dtype is dt.bool_:  # a selection (nansum's): the others' tangents, NaN or not, drop
        return _sum_dims(where(p, t, 0.0), dim, keepdim)
    return _sum_dims(t * p, dim, keepdim)


def _sum_dims(p, dim, keepdim):
    if p.dim() == 0:
        return p
    return sum.fn(p, dims_of(dim, p.dim()), keepdim)


# ------------------------------------------------------------------ samples
def distinct(make, shape, scale: float = 0.5):
    """Distinct values (a shuffled grid) in the maker's dtype: no ties for argmax/sort grads."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    n = math.prod(shape)
    p = make.perm(n).reshape(shape)
    if make.is_float:
        return np.asarray((p - n / 2) * scale + make(shape, -0.1, 0.1)).astype(make.dtype)
    return np.asarray(p).astype(make.dtype)


def dim_samples(
    shapes=((2, 3, 4),), low=-2.0, high=2.0, maker=None, all_dims=True, tuple_dims=True
):
    """dim/keepdim variants: all dims, one dim (negative too), several dims, 0-d, empty."""

    def samples(make):
        mk = (lambda s: maker(make, s)) if maker else (lambda s: make(s, low, high))
        if all_dims:
            yield S((mk((2, 3)),))
            yield S((mk(()),))
        for s in shapes:
            yield S((mk(s), 1))
            yield S((mk(s), -1), {"keepdim": True})
            if tuple_dims:
                yield S((mk(s), (0, 2)), {"keepdim": True})
                yield S((mk(s), (-1, 0)))
        yield S((mk(()), 0))
        yield S((mk((2, 3)), 0), {"keepdim": False})

    return samples


def _err_dim(fn_args=()):
    def errors(make):
        yield ErrorInput(S((make((2, 3)), 2, *fn_args)), IndexError, "Dimension out of range")

    return errors


# ------------------------------------------------------------------ sum, mean, prod
def _sum(xp, x, dim=None, keepdim=False, *, dtype=None):
    x, acc = _acc(xp, x, dtype)
    return x.sum(axis=dims_of(dim, x.ndim), keepdims=keepdim, dtype=acc)


def _sum_samples(make):
    yield S((make((2, 3)),))
    yield S((np.asarray(make(())),))
    yield S((make((2, 3, 4)), 1))
    yield S((make((2, 3, 4)), (0, 2)), {"keepdim": True})
    yield S((make((2, 3)), -1))
    yield S((make((0, 3)), 0))
    yield S((make((2, 3)),), {"dtype": dt.float64})
    yield S((make((2, 3)), None, True))


sum = defop(
    "sum",
    _sum,
    nin=1,
    vjp=lambda g, x_shape, dim, keepdim: unreduce(g, x_shape, dim, keepdim),
    jvp=LINEAR,
    samples=_sum_samples,
    test={"dtypes": FLOATS_INT_BOOL},
    error_samples=_err_dim(),
    batch_rule=_DIMS,
    out=True,
    methods=True,
    node_name=lambda dim: "SumBackward0" if dim is None else "SumBackward1",  # sum, sum.dim_IntList
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
    out = sum_to_size.fn(x, (vmap.size, *(1,) * lead, *size))
    return (out.reshape(vmap.size, *size) if lead else out), 0


sum_to_size = defop(
    "sum_to_size", _sum_to_size, nin=1, vjp=lambda g, x_shape: g.expand(x_shape), jvp=LINEAR,
    samples=lambda make: [S((make((2, 3, 4)), (3, 1))), S((make((2, 3)), (2, 3)))],
    api="Tensor.sum_to_size", batch_rule=_sum_to_size_rule, methods=False,
    error_samples=lambda make: [ErrorInput(S((make((2, 3)), (4,))), RuntimeError, r"size \{\[4\]\} is not expandable to size \{\[2, 3\]\}")],
)  # fmt: skip


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
    return self if size == shape else sum_to_size.fn(self, size)


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


def _mean_dims(x, dim, keepdim):
    """x's mean over ``dim`` (every dim for None), in numtorch ops."""
    return mean.fn(x, dims_of(dim, x.dim()) if x.dim() else None, keepdim)


mean = defop(
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
    node_name=lambda dim: "MeanBackward0" if dim is None else "MeanBackward1",
)


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


def _has_zero(x) -> bool:
    """Whether the cheap formula (dividing by x) is unsafe: a zero, or an infinity (inf /
    inf). Inside a transform the data cannot steer control flow, so the exact formula is
    taken there."""
    return x.dim() > 0 and (
        values_hidden(x) or bool((x == 0).any()) or bool(x.abs().eq(math.inf).any())
    )


def _prod_partial(x, r, dim):
    """d prod / d x_i = the product of the others: r / x without zeros, else the products
    before and after i (no division, so exact at every order whatever the zeros)."""
    if x.dim() == 0 or (x.numel() if dim is None else x.shape[dim1(dim, x.dim())]) == 1:
        return ones_like(x)  # the product of nothing else (not inf / inf)
    if not _has_zero(x):
        return r / x
    y, d = (x.reshape(-1), 0) if dim is None else (x, dim1(dim, x.dim()))
    n = y.shape[d]
    if n == 0:
        return zeros_like(x)
    one = ones_like(y.narrow(d, 0, 1))
    before = cat.fn([one, y.narrow(d, 0, n - 1)], d).cumprod(d)
    after = cat.fn([y.narrow(d, 1, n - 1), one], d).flip(d).cumprod(d).flip(d)
    return (before * after).reshape(x.shape)


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
    yield S((make((2, 3), 0.5, 2), 0), {"dtype": dt.float64})
    if make.is_float:
        z = make((3, 4), 0.5, 2)
        z[1, 2] = 0  # one zero in a row, two in a column
        z[0, 2] = 0
        yield S((z, 1))
        yield S((z, 0), {"keepdim": True})


prod = reduction(
    "prod", _prod, _prod_partial, samples=_prod_samples, dtypes=FLOATS_INT, out=True,
    batch_rule=_FLAT, node_name=lambda dim: "ProdBackward0" if dim is None else "ProdBackward1",
)  # fmt: skip


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
        if dim is None or x.dtype.kind != "f" or not (r == 0).any():
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


def _shares(mask, x, dim):
    """1/count at the true elements of ``mask`` (count taken over ``dim``), 0 elsewhere,
    in ``x``'s dtype (a bool / int quotient would be the default float32)."""
    m = mask.to(x.dtype)
    return m / _sum_dims(m, dim, True)


def _ties_partial(x, r, dim):
    """The gradient of an extremum, split evenly among the elements equal to it. max()/min()
    of everything (dim None) split a NaN result among the NaNs, as PyTorch's MaxBackward1;
    amax/amin (AmaxBackward0) do not."""
    mask = x == r
    if dim is None:  # and 0 elsewhere whatever g is (PyTorch fills a zero tensor there)
        mask = mask | ((x != x) & (r != r))
        return _shares(mask, x, dim), ~mask
    return _shares(mask, x, dim)


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


amax = reduction(
    "amax",
    _amax,
    _ties_partial,
    samples=_amax_samples,
    dtypes=FLOATS_INT,
    error_samples=_extrema_errors("amax"),
    out=True,
    # max() reduces everything with dim=None: PyTorch's MaxBackward1
    node_name=lambda dim: "MaxBackward1" if dim is None else "AmaxBackward0",
)
amin = reduction(
    "amin",
    _amin,
    _ties_partial,
    samples=_amax_samples,
    dtypes=FLOATS_INT,
    error_samples=_extrema_errors("amin"),
    out=True,
    # min() reduces everything with dim=None: PyTorch's MinBackward1
    node_name=lambda dim: "MinBackward1" if dim is None else "AminBackward0",
)


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
        return gather_dim.fn(x.unsqueeze(1), index.reshape(vmap.size, 1), 1).squeeze(1), 0
    return gather_dim.fn(x, index, pdim(attrs["dim"], rank)), 0


def _scatter_add_rule(vmap, args, bdims, attrs):
    """The index batch-first (expanded if unbatched); an unbatched g broadcasts to it."""
    (g, index), (bg, bi) = args, bdims
    shape = tuple(attrs["shape"])
    index = materialize(vmap, index, bi)
    if not shape:  # a logical 0-d result: g itself, run as shape (1,)
        g = materialize(vmap, g, bg).reshape(vmap.size, 1)
        out = scatter_add_dim.fn(g, index.reshape(vmap.size, 1), 1, (vmap.size, 1))
        return out.squeeze(1), 0
    if bg is not None:
        g = pad_to(front(g, bg), index.dim() - 1)
    return scatter_add_dim.fn(g, index, pdim(attrs["dim"], len(shape)), (vmap.size, *shape)), 0


gather_dim = defop(
    "_gather_dim", _gather_dim, nin=2, api="ops.reduction.gather_dim.fn", jvp=LINEAR,
    batch_rule=_gather_rule,
    vjp=(lambda g, x_shape, index, dim: scatter_add_dim.fn(g, index, dim, x_shape), None),
    test={"no_oracle": True}, samples=lambda make: [S((make((3, 4)), make.index((3, 2), 4), 1)), S((make((3, 4)), make.index((2, 4), 3), 0))],
)  # fmt: skip
scatter_add_dim = defop(
    "_scatter_add_dim", _scatter_add_dim, nin=2, api="ops.reduction.scatter_add_dim.fn", jvp=LINEAR,
    batch_rule=_scatter_add_rule,
    vjp=(lambda g, index, dim: gather_dim.fn(g, index, dim), None),
    test={"no_oracle": True}, samples=lambda make: [S((make((3, 2)), make.index((3, 2), 4), 1, (3, 4)))],
)  # fmt: skip


def _indexed_vjp(g, x_shape, result, dim, keepdim=True):
    """The vjp of (values, indices) = f(x, dim): scatter g to the chosen positions (only the
    indices are read, as in PyTorch: the values may be modified in place)."""
    n = len(x_shape)
    d = dim1(dim, n)
    return scatter_add_dim.fn(keep(g, n, d, keepdim), keep(result[1], n, d, keepdim), d, x_shape)


def _indexed_jvp(t, result, dim, keepdim=True):
    d = dim1(dim, t.dim())
    v = gather_dim.fn(t, keep(result[1], t.dim(), d, keepdim), d)
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

    return defop(name, kernel, nin=1, nout=2, ndiff=1, batch_rule=_DIMS, vjp=vjp, jvp=jvp, **kw)


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


max_dim = _indexed_op(
    "max", _arg_extremum("max", "argmax"), samples=_max_samples, error_samples=_max_errors("max"),
    test={"dtypes": FLOATS_INT},
)  # fmt: skip
min_dim = _indexed_op(
    "min", _arg_extremum("min", "argmin"), samples=_max_samples, error_samples=_max_errors("min"),
    test={"dtypes": FLOATS_INT},
)  # fmt: skip


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
            from .._core.dispatch import write_out

            write_out(tuple(out), tuple(res))
            return RT[name](*out)
        return res

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{name}(input)``, ``{name}(input, dim, keepdim)`` -> (values, indices), or ``{name}(input, other)``."
    return fn


max = _max_overloads(max_dim, amax, maximum)
min = _max_overloads(min_dim, amin, minimum)


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


argmax, argmin = (
    defop(
        name,
        _argext(name, name),
        nin=1,
        samples=_argmax_samples,
        batch_rule=_FLAT,
        test={"dtypes": FLOATS_INT},
        out=True,
        methods=True,
        no_kernel=NoKernel("b", error=(RuntimeError, f"{name}(): does not support bool input")),
    )
    for name in ("argmax", "argmin")
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
    return _centered(x, dim) * _scale(2.0, _dof(x, dim, correction))


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
var_op = reduction(
    "var", _var, _var_partial, extra=_VEXTRA, samples=_var_samples,
    error_samples=_var_errors("std and var"),
    methods=False, no_kernel=_floating_only("std and var"),
)  # fmt: skip
std_op = reduction(
    "std", _std, _std_partial, extra=_VEXTRA, samples=_var_samples, jvp=_std_jvp,
    error_samples=_var_errors("std and var"),
    methods=False, no_kernel=_floating_only("std and var"),
)  # fmt: skip


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
    )


var_mean_op = _moments_op("var_mean", _var_mean, _var_partial, _var_jvp, False)
std_mean_op = _moments_op("std_mean", _std_mean, _std_partial, _std_jvp, True)


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
            from .._core.dispatch import write_out

            return write_out(out, res)
        return res

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{name}(input, dim=None, *, correction=1, keepdim=False)`` (also the legacy ``unbiased`` form)."
    return fn


var = _variance_api(var_op)
std = _variance_api(std_op)
var_mean = _variance_api(var_mean_op)
std_mean = _variance_api(std_mean_op)


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
    a = xp.abs(x)
    if ord in (math.inf, -math.inf):
        if x.size == 0 and (x.ndim == 0 or _pyany(x.shape[d] == 0 for d in dims)):
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because "
                "the operation does not have an identity"
            )
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
    """d ||x||_ord / d x (0 where the norm is 0, like PyTorch)."""
    if ord == 0:
        return x * 0
    if ord == 1:
        return x.sign()
    if ord in (math.inf, -math.inf):
        p = _ties_partial(x.abs(), r, dim)
        return x.sign() * (p[0] if type(p) is tuple else p)  # (PyTorch's: no zero fill)
    safe = where(r == 0, 1.0, r)
    if ord == 2:
        return where(r == 0, 0.0, x / safe)
    return where(r == 0, 0.0, x.sign() * (x.abs() / safe) ** (ord - 1))


def _norm_jvp(t, x, result, dim, keepdim, ord=2):
    """The tangent, 0 where the norm is 0 whatever t holds (PyTorch masks the result)."""
    v = _partial_jvp(_norm_partial, t, x, result, dim, keepdim, {"ord": ord})
    return v if ord in (0, 1, math.inf, -math.inf) else where(result == 0, 0.0, v)


def _norm_samples(make):
    for o in (2, 3, 1, math.inf, -math.inf, 0, 0.5, -1.5):
        yield S((distinct(make, (2, 3)), o))
    yield S((make(()),))
    yield S((make((2, 3, 4)),), {"dim": (0, 2), "keepdim": True})
    yield S((distinct(make, (3, 4)), math.inf, -1))
    yield S((make((3, 4)), 3, 0, True))
    yield S((make((0, 3)),))
    yield S((make((3, 4)), 2, 1), {"dtype": dt.float64})


def _norm_errors(make):
    yield ErrorInput(S((make((2, 3), dtype="int64"),)), RuntimeError, "Expected a floating point")
    yield ErrorInput(S((make((0, 3)), math.inf)), RuntimeError, "cannot compute the inf norm")


vector_norm = reduction(
    "vector_norm", _vector_norm, _norm_partial, extra=("ord",), samples=_norm_samples, jvp=_norm_jvp,
    error_samples=_norm_errors, api="linalg.vector_norm", out=True, methods=False,
    node_name="LinalgVectorNormBackward0",
)  # fmt: skip


# ------------------------------------------------------------------ softmax family
def _logsumexp(xp, x, dim, keepdim=False):
    dims = dims_of(dim, x.ndim)
    if x.size == 0:
        return xp.log(xp.exp(x).sum(axis=dims, keepdims=keepdim))
    m = xp.amax(x, axis=dims, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        out = xp.log(xp.exp(x - m).sum(axis=dims, keepdims=True)) + m
    return out if keepdim else out.reshape([s for i, s in enumerate(x.shape) if i not in dims])


logsumexp = reduction(
    "logsumexp", _logsumexp, lambda x, r, dim: (x - r).exp(), prepare=to_float,
    samples=dim_samples(all_dims=False), error_samples=_err_dim(), out=True,
    test={"dtypes": FLOATS_INT},
)  # fmt: skip


def softmax_dim(ndim: int, name: str, stacklevel: int) -> int:
    """The dim nn.functional.<name> picks when none is given, with PyTorch's deprecation
    warning (``stacklevel`` as the public function received it)."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_kernel(log: bool):
    """softmax or log_softmax along one dim, shifted by the maximum for stability."""

    name = "log_softmax" if log else "softmax"

    def kernel(xp, x, dim, *, dtype=None):
        if dtype is not None:
            x = x.astype(dtype.np)
        d = dim1(dim, x.ndim)
        if x.size == 0:
            return x.copy()
        if x.dtype.kind not in "f":
            impl = "_lastdim" if d == _pymax(x.ndim - 1, 0) else ""
            raise dt.not_implemented(f"{name}{impl}_kernel_impl", x)
        if x.ndim == 0:
            return xp.zeros_like(x) if log else xp.ones_like(x)
        s = x - xp.amax(x, axis=d, keepdims=True)  # then in place: one pass less each
        if log:
            s -= xp.log(xp.exp(s).sum(axis=d, keepdims=True))
            return s
        xp.exp(s, out=s)
        s /= s.sum(axis=d, keepdims=True)
        return s

    return silent(kernel)  # a row of all -inf gives nan, as in PyTorch


def _sm_samples(make):
    yield S((make((2, 3)), 1))
    yield S((make((2, 3, 4)), -1))
    yield S((make((2, 3, 4)), 0))
    yield S((make(()), 0))
    yield S((make((0, 3)), 1))
    yield S((make((3, 4)), 1), {"dtype": dt.float64})


def _sm_errors(make):
    yield ErrorInput(S((make((2, 3)), 2)), IndexError, "Dimension out of range")
    ints = make((2, 3), dtype=np.int64)
    yield ErrorInput(
        S((ints, 1)), NotImplementedError, "_lastdim_kernel_impl\" not implemented for 'Long'"
    )
    yield ErrorInput(
        S((ints, 0)), NotImplementedError, "softmax_kernel_impl\" not implemented for 'Long'"
    )


def _sm_op(name, kernel, vjp, jvp):
    return defop(
        name, kernel, nin=1, vjp=vjp, jvp=jvp, samples=_sm_samples, error_samples=_sm_errors,
        batch_rule=_DIMS,
    )  # fmt: skip


# ------------------------------------------------------------------ softmax backward
def _sm_backward_kernel(log: bool):
    """softmax's gradient y * (g - sum(g * y)), log_softmax's g - exp(y) * sum(g), along
    ``dim``, in one buffer."""

    name = "log_softmax_backward" if log else "softmax_backward"

    def kernel(xp, grad_output, output, dim, input_dtype):
        if not log and grad_output.shape != output.shape:  # (PyTorch's log form checks none)
            raise RuntimeError(
                "Expected tensor for argument #1 'grad' to have same size as tensor for "
                f"argument #2 'output'; but {list(grad_output.shape)} does not equal "
                f"{list(output.shape)} (while checking arguments for softmax_backward)"
            )
        d = dim1(dim, output.ndim)
        if grad_output.dtype.kind != "f":
            impl = "_lastdim" if d == _pymax(output.ndim - 1, 0) else ""
            raise dt.not_implemented(f"{name}{impl}_kernel_impl", grad_output)
        if grad_output.dtype != output.dtype:
            raise RuntimeError(
                f"expected scalar type {dt.from_np(grad_output.dtype).scalar_name} but found "
                f"{dt.from_np(output.dtype).scalar_name}"
            )
        if not output.ndim:  # one element: the sum is the element itself
            return grad_output * (1 - xp.exp(output) if log else output * (1 - output))
        if log:
            out = xp.exp(output)
            out *= grad_output.sum(axis=d, keepdims=True)
            xp.subtract(grad_output, out, out=out)
        else:
            out = grad_output * output
            xp.subtract(grad_output, out.sum(axis=d, keepdims=True), out=out)
            out *= output
        return out  # (grad_output's dtype: PyTorch's CPU kernels leave input_dtype aside)

    return kernel


def _sm_backward_rule(op):
    def rule(vmap, args, bdims, attrs):
        g, y = (materialize(vmap, a, b) for a, b in zip(args, bdims))
        if g.dim() == 1:  # a logical 0-d pair
            return op.fn(g.unsqueeze(1), y.unsqueeze(1), 1, attrs["input_dtype"]).squeeze(1), 0
        return op.fn(g, y, pdim(attrs["dim"], g.dim() - 1), attrs["input_dtype"]), 0

    return rule


def _sm_backward_samples(make):
    for shape, dim in (((2, 3), 1), ((2, 3, 4), 0), ((3, 4), -1), ((), 0), ((0, 3), 1)):
        g = make(shape)
        yield S((g, make(shape), dim, dt.from_np(g.dtype)))


def _sm_backward_op(name: str, log: bool, vjp: tuple, jvp) -> Op:
    return defop(
        name, _sm_backward_kernel(log), nin=2, vjp=vjp, jvp=jvp, samples=_sm_backward_samples,
        batch_rule=rule_generator(_sm_backward_rule)(), methods=False,
    )  # fmt: skip


def _sm_sum(x, dim):
    return _sum_dims(x, dim, True)


_softmax_backward_data_op = _sm_backward_op(
    "_softmax_backward_data", False,
    (
        lambda g, output, dim, input_dtype: _softmax_backward_data_op.fn(g, output, dim, input_dtype),
        lambda g, grad_output, output, dim: g * (grad_output - _sm_sum(grad_output * output, dim))
        - grad_output * _sm_sum(g * output, dim),
    ),
    lambda tgrad_output, toutput, grad_output, output, dim, input_dtype: (
        toutput * (grad_output - _sm_sum(grad_output * output, dim))
        + output * (tgrad_output - _sm_sum(tgrad_output * output + grad_output * toutput, dim))
    ),
)  # fmt: skip
_log_softmax_backward_data_op = _sm_backward_op(
    "_log_softmax_backward_data", True,
    (
        lambda g, output, dim: g - _sm_sum(g * output.exp(), dim),
        lambda g, grad_output, output, dim: -g * output.exp() * _sm_sum(grad_output, dim),
    ),
    lambda tgrad_output, toutput, grad_output, output, dim, input_dtype: (
        tgrad_output
        - output.exp() * (_sm_sum(tgrad_output, dim) + toutput * _sm_sum(grad_output, dim))
    ),
)  # fmt: skip

softmax_op = _sm_op(
    "softmax", _softmax_kernel(log=False),
    lambda g, result, dim: _softmax_backward_data_op.fn(g, result, dim, result.dtype),
    lambda t, result, dim: result * (t - (t * result).sum(dim, True)),
)  # fmt: skip
log_softmax_op = _sm_op(
    "log_softmax", _softmax_kernel(log=True),
    lambda g, result, dim: _log_softmax_backward_data_op.fn(g, result, dim, result.dtype),
    lambda t, result, dim: t - (result.exp() * t).sum(dim, True),
)  # fmt: skip


def _sm_api(op: Op, functional: bool):
    if functional:

        def fn(input, dim=None, _stacklevel: int = 3, dtype=None):
            if dim is None:
                dim = softmax_dim(input.dim(), op.name, _stacklevel)
            return op.fn(input, dim, dtype=dtype)

    else:

        def fn(input, dim, dtype=None):
            return op.fn(input, dim, dtype=dtype)

    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"``{op.name}(input, dim, dtype=None)`` along ``dim``."
    return fn


softmax = _sm_api(softmax_op, False)
log_softmax = _sm_api(log_softmax_op, False)


# ------------------------------------------------------------------ scans
def _revcumsum(g, dim):
    """sum_{k >= i} g_k along dim: the transpose of cumsum (a reversed scan: a total minus
    the running sums would spread one NaN or inf to every element, and cancel)."""
    if g.dim() == 0:
        return g
    return g.flip(dim).cumsum(dim).flip(dim)


def _scan(name: str, fn: str):
    def kernel(xp, x, dim, *, dtype=None):
        d = dim1(dim, x.ndim)
        x, acc = _acc(xp, x, dtype)
        if x.ndim == 0:
            return x.astype(acc or x.dtype)
        if dtype is not None and dtype.name == "bool":
            raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for 'Bool'")
        out = getattr(xp, fn)(x, axis=d, dtype=acc)
        return _plus_zero(out) if fn == "cumsum" else out

    return kernel


def _plus_zero(out):
    """A running sum starts from +0, as PyTorch's does: a leading -0.0 becomes +0.0."""
    if out.dtype.kind in "fc":
        out += 0.0
    return out


_cumsum = _scan("cumsum", "cumsum")
_cumprod = _scan("cumprod", "cumprod")


def _accumulate(xp, ufunc: str, x, axis: int):
    """``ufunc.accumulate`` along ``axis``; CuPy has no ``accumulate`` for most ufuncs, so
    there it is a scan in log2(n) whole-array steps."""
    f = getattr(xp, ufunc)
    if xp is np:
        return f.accumulate(x, axis=axis)
    y = xp.moveaxis(x, axis, -1).copy()
    k = 1
    while k < y.shape[-1]:
        y[..., k:] = f(y[..., k:], y[..., :-k])
        k *= 2
    return xp.moveaxis(y, -1, axis)


def _logcumsumexp(xp, x, dim):
    d = dim1(dim, x.ndim)
    return x.copy() if x.ndim == 0 else _plus_zero(_accumulate(xp, "logaddexp", x, d))


def _scan_samples(low=-2.0, high=2.0):
    def samples(make):
        yield S((make((2, 3), low, high), 1))
        yield S((make((2, 3, 4), low, high), -1))
        yield S((make((2, 3, 4), low, high), 0))
        yield S((np.asarray(make((), low, high)), 0))
        yield S((make((0, 3), low, high), 0))
        yield S((make((3, 4), low, high), 1), {"dtype": dt.float64})

    return samples


def _scan_op(name, kernel, vjp, jvp, samples, dtypes=FLOATS, **kw):
    return defop(
        name, silent(kernel), nin=1, vjp=vjp, jvp=jvp, samples=samples, error_samples=_err_dim(),
        test={"dtypes": dtypes}, out=True, batch_rule=_DIMS, methods=True, **kw,
    )  # fmt: skip


cumsum = _scan_op(
    "cumsum", _cumsum, lambda g, dim: _revcumsum(g, dim), LINEAR, _scan_samples(),
    dtypes=FLOATS_INT_BOOL, inplace=True,
)  # fmt: skip


def _cumprod_others(x, d: int):
    """m[..., i, k] = prod_{j <= k, j != i} x_j for k >= i, else 0 (x's dim d moved last)."""
    n = x.shape[d]
    k = arange(n, device=x.device)
    i = k.reshape(n, 1)
    c = where(i == k, 1.0, x.movedim(d, -1).unsqueeze(-2)).cumprod(-1)
    return where(k >= i, c, 0.0)


def _cumprod_vjp(g, x, result, dim):
    """Through result / x without zeros; exact O(n^2) products of the others with zeros."""
    if not _has_zero(x):
        return _revcumsum(g * result, dim) / x
    d = dim1(dim, x.dim())
    return (_cumprod_others(x, d) * g.movedim(d, -1).unsqueeze(-2)).sum(-1).movedim(-1, d)


def _cumprod_jvp(t, x, result, dim):
    if not _has_zero(x):
        return result * (t / x).cumsum(dim)
    d = dim1(dim, x.dim())
    return (_cumprod_others(x, d) * t.movedim(d, -1).unsqueeze(-1)).sum(-2).movedim(-1, d)


def _cumprod_samples(make):
    yield from _scan_samples(0.5, 1.5)(make)
    if make.is_float:
        z = make((3, 4), 0.5, 1.5)
        z[0, 1] = z[1, 0] = z[1, 2] = z[2, 3] = 0  # one zero and two zeros in a row
        yield S((z, 1))
        yield S((z, 0))


cumprod = _scan_op(
    "cumprod", _cumprod, _cumprod_vjp, _cumprod_jvp, _cumprod_samples,
    dtypes=FLOATS_INT, inplace=True,
)  # fmt: skip


def _linear_scan(a, b, d: int):
    """s_i = a_i s_{i-1} + b_i along dim d (s_{-1} = 0), in log2(n) whole-tensor steps."""
    n, k = b.shape[d], 1
    while k < n:
        m = n - k
        b = cat.fn(
            [b.narrow(d, 0, k), b.narrow(d, k, m) + a.narrow(d, k, m) * b.narrow(d, 0, m)], d
        )
        if 2 * k < n:
            a = cat.fn([a.narrow(d, 0, k), a.narrow(d, k, m) * a.narrow(d, 0, m)], d)
        k *= 2
    return b


def _lcse_weights(x, d: int):
    """The weights exp(x_j - r_i) of r = logcumsumexp(x) without r (x_j - r_i loses x_j's
    low digits when |x| is large): with M the running max, e_j = exp(x_j - M_j), the decay
    a_i = exp(M_{i-1} - M_i) and D_i = sum_{j <= i} exp(x_j - M_i), the weight is
    e_j a_{j+1} ... a_i / D_i. Also: where r_i = -inf (every x_j = -inf, D_i = 0) and where
    r_i = +inf (from the first +inf on: the scan stops, e = 0, a = 1)."""
    m = x.cummax(d).values
    top = m == math.inf
    low = m == -math.inf
    mg = where(low | top, 0.0, m)
    e = where(top, 0.0, (where(top, 0.0, x) - mg).exp())
    n = x.shape[d]
    prev = cat.fn([mg.narrow(d, 0, 1), mg.narrow(d, 0, n - 1)], d)
    was_low = cat.fn([low.narrow(d, 0, 1), low.narrow(d, 0, n - 1)], d)
    a = where(top, 1.0, where(was_low, 0.0, (prev - mg).exp()))
    return e, a, _linear_scan(a, e, d), low, top


def _logcumsumexp_vjp(g, x, result, dim):
    """sum_{i >= j} g_i exp(x_j - r_i): a reversed scan of g_i / D_i with the decays (NaN
    into every x_j = -inf where r_i = -inf, and at x_j = +inf, like PyTorch)."""
    if x.dim() == 0 or not x.numel():
        return g
    d = dim1(dim, x.dim())
    e, a, den, low, top = _lcse_weights(x, d)
    c = where(top, 0.0, where(low, math.nan, g / where(low, 1.0, den)))
    nxt = cat.fn([a.narrow(d, 1, x.shape[d] - 1), zeros_like(a.narrow(d, 0, 1))], d)
    out = e * _linear_scan(nxt.flip(d), c.flip(d), d).flip(d)
    return where(x == math.inf, math.nan, out)


def _logcumsumexp_jvp(t, x, result, dim):
    """sum_{j <= i} t_j exp(x_j - r_i): a scan of t_j e_j with the decays, over D_i; 0 where
    r_i = -inf, NaN where r_i = +inf, like PyTorch."""
    if x.dim() == 0 or not x.numel():
        return t
    d = dim1(dim, x.dim())
    e, a, den, low, top = _lcse_weights(x, d)
    out = _linear_scan(a, t * e, d) / where(low, 1.0, den)
    return where(top, math.nan, where(low, 0.0, out))


logcumsumexp = _scan_op(
    "logcumsumexp", _logcumsumexp, _logcumsumexp_vjp, _logcumsumexp_jvp,
    lambda make: (s for s in _scan_samples()(make) if "dtype" not in s.kwargs),
    no_kernel=NoKernel(
        "bi", "logcumsumexp_out_cpu", first=lambda arrays, attrs: dim1(attrs["dim"], arrays[0].ndim)
    ),
)  # fmt: skip


def _cumext(name: str, ufunc: str):
    def kernel(xp, x, dim):
        if x.ndim == 0:
            if dim not in (-1, 0):  # PyTorch's own check for a scalar, not the dim wrap's
                raise IndexError(
                    f"{name}(): Expected reduction dim -1 or 0 for scalar but got {dim}"
                )
            return x.copy(), xp.zeros((), xp.int64)
        d = dim1(dim, x.ndim)
        vals = _accumulate(xp, ufunc, x, d)
        pos = xp.arange(x.shape[d]).reshape([-1 if i == d else 1 for i in range(x.ndim)])
        idx = (
            # ties take the latest position, and every NaN takes over, like PyTorch
            _accumulate(xp, "maximum", xp.where((x == vals) | (x != x), pos, 0), d)
            if x.size
            else xp.zeros(x.shape, xp.int64)
        )
        return vals, idx.astype(xp.int64)

    kernel.__name__ = name
    return _indexed_op(
        name, kernel, error_samples=_err_dim(),
        samples=lambda make: (S((distinct(make, s), d)) for s, d in (((2, 3), 1), ((2, 3, 4), -1), ((2, 3, 4), 0), ((), 0))),
        test={"dtypes": FLOATS_INT},
    )  # fmt: skip


cummax_op = _cumext("cummax", "maximum")
cummin_op = _cumext("cummin", "minimum")


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


all, any = _logical_reduction("all"), _logical_reduction("any")


def _count_nonzero(xp, x, dim=None):
    return (x != 0).sum(axis=dims_of(dim, x.ndim)).astype(xp.int64)


count_nonzero = defop(
    "count_nonzero",
    _count_nonzero,
    nin=1,
    error_samples=_err_dim(),
    test={"dtypes": _LOGIC},
    batch_rule=_DIMS,
    samples=lambda make: (s for s in _logical_samples(make) if not s.kwargs and len(s.args) < 3),
    methods=True,
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


nansum = reduction("nansum", _nansum, _notnan, samples=_nan_samples, dtypes=FLOATS_INT, out=True)
nanmean = reduction("nanmean", _nanmean, _nanmean_partial, samples=_nan_samples, out=True)


# ------------------------------------------------------------------ sorting
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


sort_op = _indexed_op(
    "sort",
    _sort,
    samples=_sort_samples,
    error_samples=_err_dim(),
    test={"dtypes": FLOATS_INT},
    layout=preserve,
)
argsort = defop(
    "argsort",
    _argsort,
    nin=1,
    samples=_sort_samples,
    error_samples=_err_dim(),
    test={"dtypes": FLOATS_INT},
    batch_rule=_DIMS,
    methods=True,
    layout=preserve,
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


topk_op = _indexed_op(
    "topk", _topk, samples=_topk_samples, error_samples=_topk_errors, test={"dtypes": FLOATS_INT},
    no_kernel=NoKernel(
        "b", error=(RuntimeError, "topk does not support bool dtypes on CPU"),
        when=lambda arrays, attrs: 0 <= attrs["k"] <= _dim_size(arrays, attrs),
    ),
)  # fmt: skip


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


kthvalue_op = _indexed_op(
    "kthvalue",
    _kthvalue,
    samples=_kth_samples,
    error_samples=_kth_errors,
    test={"dtypes": FLOATS_INT},
    no_kernel=NoKernel("b", "kthvalue_cpu", when=lambda arrays, attrs: _dim_size(arrays, attrs)),
)


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
    first = xp.maximum.accumulate(xp.where(start, pos, 0), axis=-1)
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


mode_op = _indexed_op(
    "mode", _mode, samples=_mode_samples, error_samples=_mode_errors,
    test={"dtypes": FLOATS_INT_BOOL}, no_kernel=NoKernel("c", "mode_cpu"),
)  # fmt: skip


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
    if x.dtype is dt.bool_:  # PyTorch's rule runs median along a dim: its kernel's name
        raise dt.not_implemented("median_out", x)
    n = x.shape[1]
    if n == 0:
        return full((vmap.size,), _nan_as(x.dtype.np), dtype=x.dtype, device=x.device), 0
    s = sort_op.fn(x, 1)[0]
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


def _median_partial(x, r):
    """Split evenly among the elements equal to the median, or among the NaNs if it is NaN."""
    return _shares((x == r) | ((x != x) & (r != r)), x, None)


def _median_errors(make):
    yield ErrorInput(S((make((0, 3)), 0)), IndexError, r"median\(\): Expected reduction dim 0")


# median's and nanmedian's formulas (the same split of the gradient)
_MEDIAN_RULES = {
    "vjp": lambda g, x, result: g * _median_partial(x, result),
    "jvp": lambda t, x, result: (t * _median_partial(x, result)).sum(),
    "error_samples": _median_errors,
}
median_op = defop(
    "median",
    _median,
    **_MEDIAN_RULES,
    samples=_median_samples,
    test={"dtypes": FLOATS_INT},
    batch_rule=_median_rule,
    no_kernel=NoKernel("b", "median_cpu", when=lambda arrays, attrs: arrays[0].size),
)


# ------------------------------------------------------------------ public functions
def _wrap(rt: str, op: Op, *names: str):
    """A public function returning torch.return_types-style (values, indices)."""

    def fn(input, *args, out=None, **kwargs):
        res = rt_type(*op.fn(input, *args, **kwargs))
        if out is not None:
            from .._core.dispatch import write_out

            write_out(tuple(out), tuple(res))
            return rt_type(*out)
        return res

    rt_type = RT[rt]
    fn.__name__ = fn.__qualname__ = rt
    fn.__doc__ = f"``{rt}`` -> (values, indices)."
    fn.__signature__ = inspect.Signature(
        [inspect.Parameter("input", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [p for p in inspect.signature(op.fn).parameters.values()][1:]
    )
    return fn


sort = _wrap("sort", sort_op)
topk = _wrap("topk", topk_op)
kthvalue = _wrap("kthvalue", kthvalue_op)
mode = _wrap("mode", mode_op)
cummax = _wrap("cummax", cummax_op)
cummin = _wrap("cummin", cummin_op)


def median(input, dim=None, keepdim: bool = False, *, out=None):
    """median(input): the lower middle value; median(input, dim) -> (values, indices)."""
    if dim is None:
        return median_op.fn(input)
    input = _tensor(input)
    d = dim1(dim, input.dim())
    if input.dim() and input.shape[d] == 0:  # under vmap PyTorch names the physical dim
        p = d + vmap_depth(input)
        raise IndexError(f"median(): Expected reduction dim {p} to have non-zero size.")
    _no_bool(input, "median_out")  # kthvalue's own refusal would name kthvalue's kernel
    n = input.shape[d] if input.dim() else 1
    values, indices = kthvalue_op.fn(input, (n - 1) // 2 + 1, d, True)
    if input.dim() and input.dtype.is_floating_point:  # a NaN in a slice is its median
        nan = input.isnan()
        indices = where(nan.any(d, keepdim=True), nan.to(dt.uint8).argmax(d, keepdim=True), indices)
        values = input.gather(d, indices)
    if not keepdim and input.dim():
        values, indices = values.squeeze(d), indices.squeeze(d)
    res = RT["median"](values, indices)
    if out is not None:
        from .._core.dispatch import write_out

        write_out(tuple(out), tuple(res))
        return RT["median"](*out)
    return res


def _write_rt(rt: str, res: tuple, out):
    """``res`` as return type ``rt``, copied into ``out`` if given."""
    if out is None:
        return RT[rt](res)
    from .._core.dispatch import write_out

    write_out(tuple(out), tuple(res))
    return RT[rt](out)


# ------------------------------------------------------------------ nanmedian, aminmax, renorm
def _nanmedian(xp, x):
    if x.size == 0:
        return xp.asarray(_nan_as(x.dtype), x.dtype)
    f = xp.sort(x.reshape(-1))  # NaN sorts last
    k = int((f == f).sum())
    return f[_pymax(k - 1, 0) // 2].copy()  # no number: the first NaN


def _nanmedian_rule(vmap, args, bdims, attrs):
    """The lower middle of the numbers of each sorted flattened slice (NaN if none)."""
    x = materialize(vmap, args[0], bdims[0]).reshape(vmap.size, -1)
    if x.shape[1] == 0:
        return full((vmap.size,), _nan_as(x.dtype.np), dtype=x.dtype, device=x.device), 0
    s = sort_op.fn(x, 1)[0]
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


nanmedian_op = defop(
    "nanmedian",
    _nanmedian,
    **_MEDIAN_RULES,
    samples=_nanmedian_samples,
    test={"dtypes": FLOATS_INT},
    batch_rule=_nanmedian_rule,
    no_kernel=NoKernel("bc", "median_cpu"),
)


def nanmedian(input, dim=None, keepdim: bool = False, *, out=None):
    """The median of the numbers (NaN skipped; NaN where there are none); with ``dim``,
    (values, indices) along it."""
    if dim is None:
        res = nanmedian_op.fn(input)
        if out is None:
            return res
        from .._core.dispatch import write_out

        return write_out(out, res)
    input = _tensor(input)
    _no_bool(input, "median_out")
    nd = input.dim()
    d = dim1(dim, nd)
    if nd and input.shape[d] == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    x = input if nd else input.reshape(1)
    order = sort_op.fn(x, d)[1]  # NaN sorts last
    pos = ((x == x).sum(d, keepdim=True) - 1).clamp_min(0) // 2
    indices = order.gather(d, pos)
    values = x.gather(d, indices)
    if not keepdim or not nd:
        values, indices = values.squeeze(d), indices.squeeze(d)
    return _write_rt("nanmedian", (values, indices), out)


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


@_op.composite(
    samples=_aminmax_samples, error_samples=_aminmax_errors, methods=True, nout=2,
    test={"dtypes": FLOATS_INT}, no_kernel=NoKernel("c", "aminmax_cpu"),
)  # fmt: skip
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
    res = (amin.fn(input, dims, keepdim), amax.fn(input, dims, keepdim))
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


@_op.composite(
    samples=_renorm_samples, error_samples=_renorm_errors, methods=True, layout=contiguous
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
    norm = vector_norm.fn(input, p, tuple(i for i in range(nd) if i != d), True)
    res = input * where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    if out is None:
        return res
    from .._core.dispatch import write_out

    return write_out(out, res)


def _renorm_(self, p, dim: int, maxnorm):
    return self.copy_(renorm(self.clone(), p, dim, maxnorm))  # the clone: what backward saves


# nn.functional's forms pick a dim (with PyTorch's warning) when none is given.
nn_softmax = _sm_api(softmax_op, True)
nn_log_softmax = _sm_api(log_softmax_op, True)

tensor_methods({
    "max": max, "sum_to_size": _sum_to_size_method, "min": min, "var": var, "std": std,
    "softmax": softmax, "log_softmax": log_softmax, "sort": sort, "topk": topk,
    "kthvalue": kthvalue, "mode": mode, "median": median, "cummax": cummax, "cummin": cummin,
    "nanmedian": nanmedian, "renorm_": _renorm_,
})  # fmt: skip
