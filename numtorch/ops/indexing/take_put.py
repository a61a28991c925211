"""take and put (flat indices into the flattened input) and take_along_dim (gather with
broadcasting)."""

from __future__ import annotations

from contextlib import contextmanager
from functools import partial

import numpy as np

from ..._core.device import checked_index, xp_of
from ..._core.interpreter import values_hidden
from ..._core.layout import preserve
from ..._core.meta import by_kernel, by_kernel_or_input_shaped, kernel_checks
from ..._core.meta_array import has_values
from ..._core.no_kernel import unless_empty
from ..._core.op import LINEAR, ErrorInput, defop
from ..._core.policy import Overlap
from ..._core.tensor import Tensor, wrap_dim
from ..._opdb.samples import S
from .._add_at import add_at
from .._batching import front, lrank, lshape, materialize, pdim
from .._families import COMPLEX_TOO
from ..creation import zeros, zeros_like
from ._common import _OOB, _batch_arange, _numel, _same_dtype, check_index_dtype
from .advanced import _raw_index_put
from .advanced import index as _index
from .gather_scatter import _as1d, _gather, _scatter_add


@contextmanager
def _flat_oob(empty: str):
    """Report a flat-index bounds error (take/put) with PyTorch's text (``empty`` where
    the input has no elements)."""
    try:
        yield
    except IndexError as e:
        if str(e) == "index is out of bounds for dimension with size 0":
            raise IndexError(empty) from None
        m = _OOB.fullmatch(str(e))
        if m is None:
            raise
        raise IndexError(
            f"out of range: tried to access index {m[1]} on a tensor of {m[2]} elements."
        ) from None


_TAKE_EMPTY = "take(): tried to take from an empty tensor"


_PUT_EMPTY = "put_(): Tried to put elements into an empty tensor"


def _check_flat_index(index, n: int, empty: str):
    """take/put: every index must address one of the n elements (checked at the next
    synchronization on a GPU: ``checked_index``). Returns the index to read with."""
    if index.size:
        if not n:
            raise IndexError(empty)
        if not has_values(index):
            return index
        bad = (index >= n) | (index < -n)
        return checked_index(xp_of(index), index, bad, partial(_flat_out_of_range, n))
    return index


def _flat_out_of_range(n: int, v: int) -> IndexError:
    return IndexError(f"out of range: tried to access index {v} on a tensor of {n} elements.")


def _check_flat_on_gpu(index, n: int, empty: str) -> None:
    """A batch rule's take/put check on a GPU, deferred before the indexing it runs (whose
    own deferred check would name the indexing, where the CPU rewrites its error)."""
    if not values_hidden(index) and index.device.type == "cuda":
        _check_flat_index(index._data, n, empty)


def _take_rule(vmap, args, bdims, attrs):
    """take on each batch element's flattened input: an index of (B, numel)."""
    (x, index), (xb, ib) = args, bdims
    check_index_dtype(index, "take")
    if xb is None:
        return take(x, front(index, ib)), 0
    xf = front(x, xb).reshape(vmap.size, -1)
    _check_flat_on_gpu(index, xf.shape[1], _TAKE_EMPTY)
    with _flat_oob(_TAKE_EMPTY):
        if ib is None:
            return _index(xf, [index], (1,), tuple(xf.shape)), 0
        i = front(index, ib)
        ar = _batch_arange(vmap, i.dim() - 1, xf.device)
        return _index(xf, [ar, i], (0, 1), tuple(xf.shape)), 0


def _take(xp, input, index):
    check_index_dtype(index, "take")
    index = _check_flat_index(index, input.size, _TAKE_EMPTY)
    return input.reshape(-1)[index]


take_p = defop(
    "take",
    _take,
    out=True,
    vjp=(lambda g, input, index: put(zeros_like(input), index, g, True), None),
    jvp=LINEAR,
    batch_rule=_take_rule,
    overlap=Overlap(
        full=(0, 1), first=lambda op, arrays, attrs: check_index_dtype(arrays[1], "take")
    ),
    samples=lambda make: [
        S((make((3, 4)), np.array([[0, 11], [5, 5]]))),
        S((make((2, 3)), np.array([-1, 2, 0]))),
        S((make(()), np.array(0))),
        S((make((3,)), np.zeros(0, dtype=np.int64))),
    ],
    error_samples=lambda make: [
        ErrorInput(
            S((make((3, 4)), np.array([15]))),
            IndexError,
            "out of range: tried to access index 15 on a tensor of 12 elements.",
        ),
        ErrorInput(
            S((make((3, 4)), np.array([1.0], dtype=np.float32))),
            RuntimeError,
            r"take\(\): Expected a long tensor for index, but got Float",
        ),
    ],
    methods=True,
    test=COMPLEX_TOO,
    complex32=unless_empty("take_cpu", at=1),  # (an empty index: no kernel)
    meta=by_kernel,
)
take = take_p.fn


def _put_rule(vmap, args, bdims, attrs):
    """put into each batch element's flattened input: index_put on (B, numel)."""
    (x, index, src), (xb, ib, sb) = args, bdims
    check_index_dtype(index, "put")
    ni = _numel(lshape(index, ib))
    ns = _numel(lshape(src, sb)) if isinstance(src, Tensor) else 1
    if ni != ns:
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {ns}, index.numel() = {ni}"
        )
    xf = materialize(vmap, x, xb).reshape(vmap.size, -1)
    if isinstance(src, Tensor):
        if src.dtype != x.dtype:
            src = src.to(x.dtype)
        src = src.reshape(-1) if sb is None else front(src, sb).reshape(vmap.size, -1)
    if ib is None:
        indices, dims = [index.reshape(-1)], (1,)
    else:
        rows = _batch_arange(vmap, 1, xf.device)
        indices, dims = [rows, front(index, ib).reshape(vmap.size, -1)], (0, 1)
    _check_flat_on_gpu(index, xf.shape[1], _PUT_EMPTY)
    with _flat_oob(_PUT_EMPTY):
        out = _raw_index_put(xf, indices, src, attrs["accumulate"], dims=dims)
    return out.reshape(vmap.size, *lshape(x, xb)), 0


def _put(xp, input, index, source, accumulate=False):
    check_index_dtype(index, "put")
    _same_dtype("put", input, source)
    n = input.size
    if index.size != (source.size if hasattr(source, "size") else 1):
        raise IndexError(
            f"put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.size}, index.numel() = {index.size}"
        )
    index = _check_flat_index(index, n, _PUT_EMPTY)
    out = input.copy()
    flat = out.reshape(-1)
    src = xp.asarray(source, dtype=out.dtype).reshape(-1)
    if accumulate:
        add_at(xp, flat, index.reshape(-1), src)
    else:
        flat[index.reshape(-1)] = src
    return flat.reshape(input.shape)


def _put_vjp_input(g, index, accumulate):
    if accumulate:
        return g
    return put(g, index, zeros(index.shape, dtype=g.dtype, device=g.device), False)


def _put_samples(make):
    yield S((make((3, 4)), np.array([[0, 11], [5, 4]]), make((2, 2))))
    yield S((make((2, 3)), np.array([-1, 2, 0]), make((3,))))
    yield S((make((2, 3)), np.array([1, 2, 1]), make((3,))), {"accumulate": True})
    yield S((make(()), np.array(0), make(())))


def _put_errors(make):
    yield ErrorInput(
        S((make((3, 4)), np.array([15]), make((1,)))),
        IndexError,
        "out of range: tried to access index 15 on a tensor of 12 elements.",
    )


put_p = defop(
    "put",
    _put,
    nin=3,
    batch_rule=_put_rule,
    layout=preserve,
    vjp=(
        _put_vjp_input,
        None,
        lambda g, index, source: g.take(index).reshape(source.shape),
    ),
    jvp=LINEAR,
    samples=_put_samples,
    error_samples=_put_errors,
    overlap=Overlap(full=(1, 2), first=kernel_checks),
    methods=True,
    inplace=True,
    test=COMPLEX_TOO,
    complex32="take_put_cpu",  # (PyTorch's kernel that refuses ComplexHalf)
    meta=by_kernel_or_input_shaped,
)
put = put_p.fn


def _take_along_dim_rule(vmap, args, bdims, attrs):
    """The batch first (an unbatched operand gets a size-1 batch dim: the kernel
    broadcasts), ``dim`` shifted; dim=None is take on the flattened indices."""
    (x, index), (xb, ib) = args, bdims
    check_index_dtype(index, "take_along_dim")
    dim = attrs["dim"]
    if dim is None:
        return vmap.call(lambda a, i: take(a, i.reshape(-1)), args, bdims)
    n, ni = lrank(x, xb), lrank(index, ib)
    if n != ni:
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of dimensions, "
            f"but got {n} dimensions for input, and {ni} dimensions for indices"
        )
    xf = front(x, xb) if xb is not None else x.unsqueeze(0)
    i = front(index, ib) if ib is not None else index.unsqueeze(0)
    if n == 0:
        wrap_dim(dim, 0)
        out = take_along_dim(xf.unsqueeze(1), i.unsqueeze(1), 1)
        return out.reshape(out.shape[0]), 0
    return take_along_dim(xf, i, pdim(dim, n)), 0


def _take_along_dim(xp, input, indices, dim=None):
    check_index_dtype(indices, "take_along_dim")
    if dim is None:
        return _take(xp, input, indices.reshape(-1))
    if input.ndim != indices.ndim:
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of dimensions, "
            f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices"
        )
    if input.ndim == 0:
        return _as1d(_gather)(xp, input, indices, dim=dim)
    dim = wrap_dim(dim, input.ndim)
    bshape = np.broadcast_shapes(
        tuple(1 if d == dim else s for d, s in enumerate(input.shape)),
        tuple(1 if d == dim else s for d, s in enumerate(indices.shape)),
    )
    x = xp.broadcast_to(
        input, tuple(input.shape[d] if d == dim else s for d, s in enumerate(bshape))
    )
    i = xp.broadcast_to(
        indices, tuple(indices.shape[d] if d == dim else s for d, s in enumerate(bshape))
    )
    return _gather(xp, x, i, dim=dim)


def _take_along_dim_vjp(g, input, indices, dim):
    if dim is None:
        return put(zeros_like(input), indices.reshape(-1), g, True)
    if input.dim() == 0:
        return g.sum()
    d = dim % input.dim()
    bshape = np.broadcast_shapes(
        tuple(1 if k == d else s for k, s in enumerate(input.shape)),
        tuple(1 if k == d else s for k, s in enumerate(indices.shape)),
    )
    base = zeros(
        tuple(input.shape[k] if k == d else s for k, s in enumerate(bshape)),
        dtype=g.dtype,
        device=g.device,
    )
    idx = indices.expand(tuple(indices.shape[k] if k == d else s for k, s in enumerate(bshape)))
    return _scatter_add(base, idx, g, dim=d)


take_along_dim_p = defop(
    "take_along_dim",
    _take_along_dim,
    nin=2,
    out=True,
    vjp=(_take_along_dim_vjp, None),
    jvp=LINEAR,
    batch_rule=_take_along_dim_rule,
    samples=lambda make: [
        S((make((3, 4)), make.index((2, 4), 3), 0)),
        S((make((3, 4)), make.index((3, 1), 4), 1)),
        S((make((3, 1)), make.index((1, 5), 3), 0)),
        S((make((2, 3)), make.index((4,), 6))),
        S((make((3, 4)), make.index((2, 4), 3)), {"dim": -2}),
    ],
    error_samples=lambda make: [
        ErrorInput(
            S((make((3, 4)), np.array([[1.0]], dtype=np.float32), 0)),
            RuntimeError,
            "dtype of indices should be Long but got Float",
        )
    ],
    methods=True,
    test=COMPLEX_TOO,
    complex32="scatter_gather_tensor_cpu",  # (PyTorch's kernel that refuses ComplexHalf)
    meta=by_kernel,
)
take_along_dim = take_along_dim_p.fn
