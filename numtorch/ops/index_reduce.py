"""index_reduce / Tensor.index_reduce_: ``source``'s slices along ``dim`` reduced into
``input`` at the positions ``index`` names: scatter_reduce with the index vector spread
over ``source``'s shape (its vjp, jvp and batch rule are scatter_reduce's)."""

from __future__ import annotations

import numpy as np

from .._core import dtype as dt
from .._core.interpreter import values_hidden
from .._core.methods import tensor_method
from .._core.op import ErrorInput, composite
from .._core.out import refuse_overlap
from .._core.tensor import Tensor, wrap_dim
from .._opdb.samples import S
from .indexing.gather_scatter import scatter_reduce, scatter_reduce_

_REDUCES = ("prod", "mean", "amax", "amin")


def _scatter_index(
    name: str,
    input: Tensor,
    dim: int,
    index: Tensor,
    source: Tensor,
    reduce: str,
    include_self,
    written: Tensor | None = None,
) -> tuple[int, Tensor]:
    """PyTorch's checks of index_reduce's arguments (in its order, ``name`` its function's;
    ``written``: the tensor an in-place form writes, which may share no memory with the
    index or the source); the wrapped dim and ``index`` expanded over ``source``'s shape
    along it."""
    if reduce not in _REDUCES:
        raise RuntimeError(
            "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
            f"{reduce}."
        )
    if not isinstance(include_self, bool):
        raise TypeError(
            f"{name}(): argument 'include_self' must be bool, not {type(include_self).__name__}"
        )
    nd = input.dim()
    d = wrap_dim(dim, nd)
    if index.dim() > 1:
        raise IndexError(
            f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.dim()} with "
            f"type: {index.dtype.scalar_name} and size: {list(index.shape)}"
        )
    if index.dtype.is_floating_point or index.dtype.is_complex or index.dtype.itemsize < 4:
        raise RuntimeError(
            "index_reduce_(): Expected dtype int32/int64 for index but got: "
            f"{index.dtype.scalar_name}"
        )
    if input.dtype != source.dtype:
        raise RuntimeError(
            f"index_reduce_(): self ({input.dtype.scalar_name}) and source "
            f"({source.dtype.scalar_name}) must have the same scalar type"
        )
    n = source.shape[d] if source.dim() else 1
    if index.numel() != n:
        raise RuntimeError(
            f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
            f"source.size(dim): ({n}), for dim: {d}"
        )
    same = source.dim() == nd and all(
        a == b for i, (a, b) in enumerate(zip(input.shape, source.shape)) if i != d
    )
    if not same and (nd or source.dim()):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(input.shape)} source.shape = {list(source.shape)}"
        )
    if written is not None:
        refuse_overlap(written, (index, source))
    if not values_hidden(index) and not index.is_meta and index.numel():  # (values unread)
        size = input.shape[d] if nd else 1
        if bool(((index < 0) | (index >= size)).any()):
            raise IndexError("index out of range in self")
    if not nd:
        return 0, index.reshape(())
    spread = [1] * nd
    spread[d] = -1
    return d, index.reshape(spread).expand(*source.shape)


def _samples(make):
    # int64 indices only: PyTorch's backward of index_reduce fails for int32 ones (it calls
    # index_fill, which takes int64 only); int32 forward is in tests/test_indexing.py.
    for reduce in _REDUCES:
        lo = 0.5 if reduce == "prod" else -2.0
        yield S((make((3, 4), lo), 0, np.array([0, 2, 0]), make((3, 4), lo), reduce))
        yield S(
            (make((4, 2), lo).T, -1, np.array([3, 1, 3]), make((2, 3), lo), reduce),
            {"include_self": False},
            name="non-contiguous, include_self=False",
        )
    yield S((make(()), 0, np.array([0]), make(()), "amax"), {"include_self": False}, name="0-d")


def _errors(make):
    x, s = make((3, 4)), make((2, 4))
    i = np.array([0, 2])
    yield ErrorInput(
        S((x, 0, i, s, "sum")),
        RuntimeError,
        "Expected reduce to be one of prod, mean, amax or amin but got sum",
    )
    yield ErrorInput(
        S((x, 0, np.ones((1, 2), np.int64), s, "mean")),
        IndexError,
        r"Index is supposed to be a vector, but got dim: 2 with type: Long and size: \[1, 2\]",
    )
    yield ErrorInput(
        S((x, 0, np.array([0, 1, 2]), s, "mean")),
        RuntimeError,
        r"Number of indices \(3\) should be equal to source.size\(dim\): \(2\), for dim: 0",
    )
    yield ErrorInput(
        S((x, 0, np.array([0, 3]), s, "mean")), IndexError, "index out of range in self"
    )
    yield ErrorInput(
        S((x, 0, np.array([0, -1]), s, "mean")), IndexError, "index out of range in self"
    )
    yield ErrorInput(
        S((x, 0, i, make((2, 3)), "amin")),
        RuntimeError,
        r"Got self.shape = \[3, 4\] source.shape = \[2, 3\]",
    )
    yield ErrorInput(S((x, 2, i, s, "amin")), IndexError, r"\[-2, 1\], but got 2")


_C32_KERNELS = {"mean": "div_cpu", "amax": "maximum_cpu", "amin": "minimum_cpu"}


def _complex32(inputs, attrs) -> bool | str:
    """PyTorch's kernel refusing a complex32 index_reduce: the excluding init's, or the one
    that combines the slices (a product runs)."""
    reduce = attrs["reduce"]
    if reduce not in ("prod", "mean", "amax", "amin"):
        return True  # (the reduce check's error first)
    if not attrs["include_self"]:
        return "index_reduce_func_exclude_input_init"
    return _C32_KERNELS.get(reduce, True)


@composite(samples=_samples, error_samples=_errors, methods=True, complex32=_complex32)
def index_reduce(
    input: Tensor,
    dim: int,
    index: Tensor,
    source: Tensor,
    reduce: str,
    *,
    include_self: bool = True,
) -> Tensor:
    """``input`` with ``source``'s slices along ``dim`` reduced ('prod', 'mean', 'amax',
    'amin') into the slices ``index`` names (with input's own values if ``include_self``)."""
    d, idx = _scatter_index("index_reduce", input, dim, index, source, reduce, include_self)
    if input.dtype is dt.complex32:  # PyTorch's product runs (in complex64 here, rounded)
        c64 = scatter_reduce(input.cfloat(), d, idx, source.cfloat(), reduce)
        return c64.to(dt.complex32)
    return scatter_reduce(input, d, idx, source, reduce, include_self=include_self)


def index_reduce_(
    self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *, include_self: bool = True
) -> Tensor:
    """In-place :func:`index_reduce`."""
    d, idx = _scatter_index("index_reduce_", self, dim, index, source, reduce, include_self, self)
    return scatter_reduce_(self, d, idx, source, reduce, include_self=include_self)


tensor_method(index_reduce_)
