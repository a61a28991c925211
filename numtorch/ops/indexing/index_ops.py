"""index_select, index_add, index_fill and index_copy: ops along ``dim`` with a vector
index."""

from __future__ import annotations

import numpy as np

from ..._core.device import xp_of
from ..._core.dispatch import dispatch
from ..._core.interpreter import values_hidden
from ..._core.layout import preserve
from ..._core.meta import by_kernel, kernel_checks, mixed_devices
from ..._core.meta_array import MetaArray
from ..._core.methods import tensor_methods
from ..._core.op import LINEAR, ErrorInput, defop
from ..._core.policy import BatchedWrite, InplacePolicy, Overlap
from ..._core.tensor import Tensor, wrap_dim
from ..._opdb.samples import S
from .._batching import front, lrank, lshape, materialize, pad_to, pdim, rule_generator
from .._families import COMPLEX_TOO
from ..creation import zeros_like
from ._common import (
    _INDEX_DTYPES,
    _INT_KINDS,
    _add_rows,
    _bounds,
    _dim_api,
    _method,
    _numel,
    _same_dtype,
    check_index_dtype,
    in_range,
)
from .gather_scatter import _scatter, _scatter_add


def _check_index_dtype(index, msg: str) -> None:
    """Raise ``msg`` (with ``{}`` for the dtype's name) unless index has an integer dtype."""
    if isinstance(index, Tensor) and index.dtype.np.kind not in _INT_KINDS:
        raise RuntimeError(msg.format(index.dtype.scalar_name))


def _moved(a, dim):
    return a if a.ndim == 0 else a.swapaxes(0, dim)


def _index_select(xp, input, index, dim):
    check_index_dtype(index, "index_select")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if input.ndim == 0:
        wrap_dim(dim, 0)
        if index.size != 1:
            raise RuntimeError(
                f"index_select(): Index to scalar can have only 1 value, got {index.size} value(s)"
            )
        in_range(xp, index, 1)
        return input.copy()
    dim = wrap_dim(dim, input.ndim)
    if index.size and not input.shape[dim] and input.ndim > 1:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if index.size:
        index = in_range(xp, index, input.shape[dim])
    return xp.take(input, index.reshape(-1), axis=dim)


def _vector_index(index, ib, name: str, dtype_msg: str) -> None:
    """index_select/index_*: PyTorch's checks of the index's dtype and logical rank."""
    if name in _INDEX_DTYPES:
        check_index_dtype(index, name)
    else:
        _check_index_dtype(index, dtype_msg)
    if lrank(index, ib) > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")


def _spread(vmap, index, ib, shape: tuple, p: int):
    """A vector index (batched: one per batch element) as a full gather/scatter index of
    the batch-first ``shape`` with its length at dim ``p``."""
    i = front(index, ib).reshape(vmap.size, -1) if ib is not None else index.reshape(1, -1)
    k = i.shape[1]
    i = i.reshape(i.shape[0], *((1,) * (p - 1)), k, *((1,) * (len(shape) - p - 1)))
    return i.expand(*shape[:p], k, *shape[p + 1 :])


def _index_select_rule(vmap, args, bdims, attrs):
    (x, index), (xb, ib) = args, bdims
    if isinstance(index, Tensor) and index.dtype.np not in (np.int32, np.int64):
        # (PyTorch's rule gathers: a gather's dtype error)
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    _vector_index(
        index, ib, "index_select", "index_select(): Expected dtype int32 or int64 for index"
    )
    n, dim, k = lrank(x, xb), attrs["dim"], _numel(lshape(index, ib))
    if n == 0:  # one value per batch element: a gather of (B, 1)
        wrap_dim(dim, 0)
        xf = materialize(vmap, x, xb).unsqueeze(1)
        i = materialize(vmap, index, ib).reshape(vmap.size, k)
        out = xf.gather(1, i)  # (PyTorch's rule: any count of values, a gather's errors)
        return (out.reshape(vmap.size) if k == 1 else out), 0
    if ib is None:
        xf, p = front(x, xb), pdim(dim, n)
        if not values_hidden(index):  # PyTorch's batch rule gathers: a gather's bounds error
            _bounds(index._data, xf.shape[p], p)
        return _raw_index_select(xf, index, p), 0
    if xb is None:  # one selection of B * k entries, split back
        d = wrap_dim(dim, n)
        out = _raw_index_select(x, front(index, ib).reshape(-1), d)
        return out.reshape(*x.shape[:d], vmap.size, k, *x.shape[d + 1 :]), d
    xf = front(x, xb)
    p = pdim(dim, n)
    return xf.gather(p, _spread(vmap, index, ib, tuple(xf.shape), p)), 0


def _index_select_samples(make):
    yield S((make((3, 4)), 0, np.array([2, 0, 2], dtype=np.int64)))
    yield S((make((3, 4)), -1, np.array([3, 1], dtype=np.int64)))
    yield S((make((2, 3, 4)), 1, np.array([1], dtype=np.int64)))
    yield S((make((3, 4)), 1, np.array(2, dtype=np.int64)))
    yield S((make((3, 4)), 0, np.zeros(0, dtype=np.int64)))
    yield S((make(()), 0, np.array([0], dtype=np.int64)))


def _index_select_first(op, arrays, attrs):
    """index_select's checks that PyTorch makes before those of an ``out=`` tensor."""
    input, index = arrays
    wrap_dim(attrs["dim"], input.ndim)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if input.ndim == 0 and index.size != 1:
        raise RuntimeError(
            f"index_select(): Index to scalar can have only 1 value, got {index.size} value(s)"
        )
    check_index_dtype(index, "index_select")


def _index_select_meta(op, arrays, attrs):
    """The input's shape with ``dim`` as long as the index: PyTorch's meta kernel checks no
    index."""
    input, index = arrays[0], arrays[1]
    if not input.ndim:
        return MetaArray((), input.dtype)
    dim = wrap_dim(attrs["dim"], input.ndim)
    return MetaArray(input.shape[:dim] + (index.size,) + input.shape[dim + 1 :], input.dtype)


index_select_p = defop(
    "index_select",
    _index_select,
    nin=2,
    out=True,
    vjp=(
        lambda g, input, index, dim: _raw_index_add(zeros_like(input), index, g, dim=dim),
        None,
    ),
    jvp=LINEAR,
    samples=_index_select_samples,
    batch_rule=_index_select_rule,
    overlap=Overlap(full=(0, 1), first=_index_select_first),
    error_samples=lambda make: [
        ErrorInput(S((make((3, 4)), 0, np.array([5]))), IndexError, "index out of range in self"),
        ErrorInput(
            S((make((3, 4)), 0, np.array([1.0]))),
            RuntimeError,
            r"index_select\(\): Expected dtype int32 or int64 for index",
        ),
    ],
    float8=True,  # (PyTorch copies float8)
    test=COMPLEX_TOO,
    complex32=True,
    meta=mixed_devices(_index_select_meta),
)
_raw_index_select = index_select_p.fn


def _dim_index(xp, input, dim, index, name, exc=IndexError, prefix="", source=None):
    """Checks shared by index_add/index_fill/index_copy, in PyTorch's order (the index's
    dtype and rank, the dim, the source's dtype and shape, then the bounds); returns the
    wrapped dim and the index (made safe on a GPU, whose bounds check is deferred)."""
    check_index_dtype(index, name)
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    dim = wrap_dim(dim, input.ndim)
    if source is not None:
        _same_dtype(name, input, source)
        _check_index_source(name, input.shape, index.size, getattr(source, "shape", ()), dim)
    index = _bounds(
        index,
        input.shape[dim] if input.ndim else 1,
        dim,
        negative=name == "index_fill",
        exc=exc,
        prefix=prefix,
    )
    return dim, index


def _check_index_source(name: str, shape, n_index: int, source_shape, dim) -> None:
    """PyTorch's checks of index_add_/index_copy_'s source against self and the index (on
    logical shapes, so the batch rule makes them too)."""
    shape, source_shape = tuple(shape), tuple(source_shape)
    if name == "index_add" and not (shape and source_shape):
        # a 0-d source stands for one row only of a 0-d self
        if not source_shape and n_index != 1:
            d = wrap_dim(dim, max(len(shape), 1))
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
        if shape or source_shape:
            raise RuntimeError(
                "source tensor shape must match self tensor shape, excluding the specified "
                f"dimension. Got self.shape = {list(shape)} source.shape = {list(source_shape)}"
            )
        return
    if not shape or not source_shape:
        return
    d = wrap_dim(dim, len(shape))
    rest, src_rest = shape[:d] + shape[d + 1 :], source_shape[:d] + source_shape[d + 1 :]
    if name == "index_copy":
        if len(source_shape) != len(shape):
            raise IndexError(
                "index_copy_(): When source and destination are not scalars, their "
                f"dimensionality must match. Source dimensionality ({len(source_shape)}), "
                f"destination dimensionality ({len(shape)})"
            )
        if rest != src_rest:
            raise RuntimeError(
                "index_copy_(): Source/destination tensor must have same slice shapes. "
                f"Destination slice shape: {' '.join(map(str, rest))} at dimension {d} and "
                f"source slice shape: {' '.join(map(str, src_rest))} at dimension 0."
            )
        if n_index != source_shape[d]:
            raise IndexError(
                f"index_copy_(): Number of indices ({n_index}) should be equal to "
                f"source.size(dim) ({source_shape[d]})"
            )
        return
    if len(source_shape) > d and n_index != source_shape[d]:
        raise RuntimeError(
            f"index_add_(): Number of indices ({n_index}) should be equal to source.size(dim): "
            f"({source_shape[d]}), for dim: {d}"
        )
    if len(source_shape) != len(shape) or rest != src_rest:
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(shape)} source.shape = {list(source_shape)}"
        )


def _index_update_rule(op, mode):
    """index_add/index_fill/index_copy: the batch first and ``dim`` shifted; with a batched
    index (or index_fill's batched value) the op runs as scatter_add/scatter on the index
    spread over the other dims. A logical 0-d input runs as (B, 1)."""
    name = op.name

    def rule(vmap, args, bdims, attrs):
        (x, index, src), (xb, ib, sb) = args, bdims
        _vector_index(index, ib, name, f"{name}(): Expected dtype int64 for index")
        n, dim = lrank(x, xb), attrs["dim"]
        xf = materialize(vmap, x, xb)
        if mode == "fill":
            if isinstance(src, Tensor) and lrank(src, sb):
                raise RuntimeError(
                    "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                    f"{lrank(src, sb)} dimension(s)."
                )
            val = src if sb is None else front(src, sb)
        else:
            # PyTorch's index_add_ batch rule checks the values with the batch first and dim
            # shifted (index_copy_'s checks each sample)
            shape, sshape = lshape(x, xb), lshape(src, sb)
            if mode == "add":  # (the dtypes first, as the kernel checks them)
                _same_dtype(name, x, src)
            if n and mode == "add":
                shape, sshape, d = (vmap.size, *shape), (vmap.size, *sshape), pdim(dim, n)
            else:
                d = dim
            _check_index_source(name, shape, _numel(lshape(index, ib)), sshape, d)
            if ib is None and not values_hidden(index) and n:
                # PyTorch's rules: index_add_ into a dim before the last runs the kernel's
                # slice loop (its IndexError), else a scatter's bounds error at the shifted dim
                p = pdim(dim, n)
                if mode == "add" and p < n:
                    if index.numel():
                        in_range(xp_of(index._data), index._data, xf.shape[p])
                else:
                    _bounds(index._data, xf.shape[p], p)
            val = materialize(vmap, src, sb)
        if n == 0:
            wrap_dim(dim, 0)
            xf = xf.reshape(vmap.size, 1)
            if mode != "fill":
                val = val.reshape(vmap.size, -1)
            p = 1
        else:
            p = pdim(dim, n)
        new = {**attrs, "dim": p}
        if ib is None and (mode != "fill" or sb is None):
            out = dispatch(op, (xf, index, val), new)
        else:
            size = xf.shape[p]
            if mode == "fill":  # negative positions are valid here, not in scatter
                index = index + (index < 0) * size
            ie = _spread(vmap, index, ib, tuple(xf.shape), p)
            if mode == "fill":
                if isinstance(val, Tensor):
                    val = val.reshape(*val.shape[: sb is not None], *((1,) * (xf.dim() - 1)))
                    val = val.expand(ie.shape)
                out = _scatter(xf, ie, val, dim=p)
            else:
                if val.dim() < xf.dim():
                    val = pad_to(val, xf.dim() - 1)
                val = val.expand(ie.shape)
                if mode == "add":
                    alpha = attrs["alpha"]
                    out = _scatter_add(xf, ie, val if alpha == 1 else val * alpha, dim=p)
                else:
                    out = _scatter(xf, ie, val, dim=p)
        return (out.reshape(vmap.size) if n == 0 else out), 0

    return rule


index_update_rule = rule_generator(_index_update_rule)


def _index_add(xp, input, index, source, dim, *, alpha=1):
    dim, index = _dim_index(xp, input, dim, index, "index_add", RuntimeError, source=source)
    out = xp.array(input)
    if out.ndim == 0:
        out[...] += (source.sum() if hasattr(source, "sum") else source) * alpha
        return out
    src = source if alpha == 1 else source * alpha
    _add_rows(xp, _moved(out, dim), index.reshape(-1), _moved(xp.asarray(src, out.dtype), dim))
    return out


def _index_add_vjp_source(g, index, source, dim, alpha):
    # (source saved, as PyTorch's node saves it: its shape, and a write into it is caught)
    if source.dim():
        r = g.index_select(dim, index).expand_as(source)
    else:
        r = g.index_select(dim, index.squeeze(0))
    return r * alpha if alpha != 1 else r


def _index_add_samples(make):
    yield S((make((3, 4)), 0, np.array([2, 0, 2]), make((3, 4))))
    yield S((make((3, 4)), 1, np.array([1, 1]), make((3, 2))), {"alpha": 2.0})
    yield S((make((2, 3, 4)), -2, np.array([0]), make((2, 1, 4))))
    yield S((make((3, 4)), 0, np.zeros(0, dtype=np.int64), make((0, 4))))


def _index_add_errors(make):
    yield ErrorInput(
        S((make((3, 4)), 0, np.array([5]), make((1, 4)))),
        RuntimeError,
        "index 5 is out of bounds for dimension 0 with size 3",
    )


index_add_p = defop(
    "index_add",
    _index_add,
    nin=3,
    batch_rule=index_update_rule("add"),
    vjp=(lambda g: g, None, _index_add_vjp_source),
    jvp=LINEAR,
    out=True,
    samples=_index_add_samples,
    error_samples=_index_add_errors,
    inplace_policy=InplacePolicy(checks_first=True, batched=BatchedWrite.PLAIN),
    overlap=Overlap(full=(1, 2), first=kernel_checks),
    test=COMPLEX_TOO,
    complex32=True,
    meta=by_kernel,
)
_raw_index_add = index_add_p.fn


def _index_fill(xp, input, index, value, dim):
    dim, index = _dim_index(xp, input, dim, index, "index_fill")
    _check_fill_value(value)
    out = xp.array(input)
    if out.ndim == 0:
        if index.size:
            out[...] = value
        return out
    _moved(out, dim)[index.reshape(-1)] = value
    return out


def _check_fill_value(value) -> None:
    if hasattr(value, "ndim") and value.ndim:
        raise RuntimeError(
            f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.ndim} dimension(s)."
        )


def _index_fill_first(op, arrays, attrs):
    """index_fill_'s check that PyTorch makes before its overlap check."""
    _check_fill_value(arrays[2])


def _index_fill_vjp_value(g, index, dim):
    return (g - _raw_index_fill(g, index, 0.0, dim=dim)).sum()


def _index_fill_samples(make):
    yield S((make((3, 4)), 0, np.array([2, 0]), 1.5))
    yield S((make((3, 4)), 1, np.array([3, 1]), make(())))
    yield S((make((2, 3, 4)), -1, np.array([0, 3]), -2.0))
    yield S((make(()), 0, np.array([0]), make(())))


def _index_fill_errors(make):
    yield ErrorInput(
        S((make((3, 4)), 0, np.array([5]), 1.0)),
        IndexError,
        "index 5 is out of bounds for dimension 0 with size 3",
    )


index_fill_p = defop(
    "index_fill",
    _index_fill,
    nin=3,
    batch_rule=index_update_rule("fill"),
    layout=preserve,
    node_name=lambda value: "IndexFillBackward0" if value is None else "IndexFillBackward1",
    checked_scalars=("value",),
    vjp=(
        lambda g, index, dim: _raw_index_fill(g, index, 0.0, dim=dim),
        None,
        _index_fill_vjp_value,
    ),
    jvp=LINEAR,
    samples=_index_fill_samples,
    error_samples=_index_fill_errors,
    inplace_policy=InplacePolicy(shared_ok=True),
    overlap=Overlap(full=(1,), first=_index_fill_first),
    test=COMPLEX_TOO,
    complex32=True,
    meta=by_kernel,
)
_raw_index_fill = index_fill_p.fn


def _index_copy(xp, input, index, source, dim):
    dim, index = _dim_index(
        xp, input, dim, index, "index_copy", IndexError, "index_copy_(): ", source=source
    )
    out = xp.array(input)
    if out.ndim == 0:
        out[...] = source
        return out
    _moved(out, dim)[index.reshape(-1)] = _moved(xp.asarray(source), dim)
    return out


def _index_copy_samples(make):
    yield S((make((3, 4)), 0, np.array([2, 0]), make((2, 4))))
    yield S((make((3, 4)), 1, np.array([3, 0, 1]), make((3, 3))))
    yield S((make((2, 3, 4)), -2, np.array([1]), make((2, 1, 4))))


def _index_copy_errors(make):
    yield ErrorInput(
        S((make((3, 4)), 0, np.array([5]), make((1, 4)))),
        IndexError,
        "index 5 is out of bounds for dimension 0 with size 3",
    )


index_copy_p = defop(
    "index_copy",
    _index_copy,
    nin=3,
    batch_rule=index_update_rule("copy"),
    vjp=(
        lambda g, index, dim: _raw_index_fill(g, index, 0.0, dim=dim),
        None,
        lambda g, index, dim: g.index_select(dim, index),
    ),
    jvp=LINEAR,
    samples=_index_copy_samples,
    error_samples=_index_copy_errors,
    overlap=Overlap(full=(1, 2)),
    test=COMPLEX_TOO,
    complex32=True,
    autocast="promote",
    meta=by_kernel,
)


index_select, _ = _dim_api(index_select_p)


index_add, index_add_ = _dim_api(index_add_p)


index_fill, index_fill_ = _dim_api(index_fill_p)


index_copy, index_copy_ = _dim_api(index_copy_p)


tensor_methods(
    {
        "index_select": _method(index_select),
        "index_add": _method(index_add),
        "index_add_": index_add_,
        "index_fill": _method(index_fill),
        "index_fill_": index_fill_,
        "index_copy": _method(index_copy),
        "index_copy_": index_copy_,
    }
)
