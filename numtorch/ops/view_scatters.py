"""The view scatters: a copy of ``input`` with ``src`` written into one of its views
(``diagonal_scatter``, ``select_scatter``, ``slice_scatter``, ``as_strided_scatter``), and
``Tensor.fill_diagonal_``, a write through diagonal views in place."""

from __future__ import annotations

import numpy as np

from .._core import dtype as dt
from .._core.dispatch import dispatch
from .._core.meta import by_kernel
from .._core.methods import tensor_methods
from .._core.op import LINEAR, ErrorInput, composite, defop
from .._core.tensor import Tensor, wrap_dim
from .._opdb.samples import S
from ._batching import materialize, pdim, rule_generator
from ._families import COMPLEX_TOO
from .creation import tensor, zeros_like
from .views import _select_args, diagonal_view


def _check_src(view, src) -> None:
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. "
            f"src size = {list(src.shape)}, slice size = {list(view.shape)}"
        )


def clone_preserve_strides(xp, a):
    """A copy of a with a's strides (PyTorch copies the whole storage), or, where a's
    elements share memory (an expanded tensor), a contiguous copy."""
    if a.size == 0 or any(n > 1 and s <= 0 for n, s in zip(a.shape, a.strides)):
        return a.copy()
    extent = 1 + sum((n - 1) * s for n, s in zip(a.shape, a.strides)) // a.itemsize
    out = dt.as_strided(xp, xp.zeros(extent, dtype=a.dtype), a.shape, a.strides)
    out[...] = a
    return out


def _write(xp, input, src, view_of):
    """A copy of input laid out as input with src written into view_of(copy)."""
    out = clone_preserve_strides(xp, input)
    view = view_of(out)
    _check_src(view, src)
    view[...] = src
    return out


def _scatter_rule(op, names):
    """Both operands batch first, the dim attributes shifted past the batch."""

    def rule(vmap, args, bdims, attrs):
        x = materialize(vmap, args[0], bdims[0])
        src = materialize(vmap, args[1], bdims[1])
        rank = x.dim() - 1
        new = dict(attrs)
        for n in names:
            new[n] = pdim(attrs[n], rank)
        return dispatch(op, (x, src), new), 0

    return rule


scatter_rule = rule_generator(_scatter_rule)


# ------------------------------------------------------------------ diagonal_scatter
def _diagonal_scatter(xp, input, src, offset=0, dim1=0, dim2=1):
    return _write(xp, input, src, lambda out: diagonal_view(xp, out, offset, dim1, dim2))


def _diagonal_input_vjp(g, offset, dim1, dim2):
    return diagonal_scatter(g, zeros_like(g.diagonal(offset, dim1, dim2)), offset, dim1, dim2)


def _diagonal_src_vjp(g, offset, dim1, dim2):
    return g.diagonal(offset, dim1, dim2)


def _diagonal_scatter_samples(make):
    yield S((make((3, 3)), make((3,))))
    yield S((make((3, 4)), make((3,)), 1))
    yield S((make((3, 4)), make((2,)), -1))
    yield S((make((2, 3, 4)), make((3, 2)), 0, -1, 0))
    yield S((make((2, 3, 4)), make((2, 2))), {"offset": 1, "dim1": 2, "dim2": 1})
    yield S((make((2, 3)), make((0,)), 5))
    yield S((make((0, 3)), make((0,))))


def _diagonal_scatter_errors(make):
    yield ErrorInput(
        S((make((3, 4)), make((4,)))),
        RuntimeError,
        r"expected src to have a size equal to the slice of self\. src size = \[4\], "
        r"slice size = \[3\]",
    )
    yield ErrorInput(
        S((make((3, 4)), make((3,)), 0, 1, 1)),
        RuntimeError,
        "diagonal dimensions cannot be identical 1, 1",
    )
    yield ErrorInput(S((make((3, 4)), make((3,)), 0, 1, 2)), IndexError, r"\[-2, 1\], but got 2")


diagonal_scatter_p = defop(
    "diagonal_scatter",
    _diagonal_scatter,
    nin=2,
    vjp=(_diagonal_input_vjp, _diagonal_src_vjp),
    jvp=LINEAR,
    batch_rule=scatter_rule(("dim1", "dim2")),
    samples=_diagonal_scatter_samples,
    error_samples=_diagonal_scatter_errors,
    layout=None,
    methods=True,
    test=COMPLEX_TOO,
    complex32=True,
    meta=by_kernel,
)
diagonal_scatter = diagonal_scatter_p.fn


# ------------------------------------------------------------------ select_scatter
def _select_view(out, dim, index):
    d, i = _select_args(out.shape, dim, index)
    return out[(slice(None),) * d + (i, Ellipsis)]


def _select_scatter(xp, input, src, dim, index):
    return _write(xp, input, src, lambda out: _select_view(out, dim, index))


def _select_input_vjp(g, dim, index):
    return select_scatter(g, zeros_like(g.select(dim, index)), dim, index)


def _select_src_vjp(g, dim, index):
    return g.select(dim, index)


def _select_scatter_samples(make):
    yield S((make((4, 3)), make((3,)), 0, 1))
    yield S((make((2, 5)), make((2,)), -1, -2))
    yield S((make((3,)), make(()), 0, 2))
    yield S((make((2, 3, 4)), make((2, 4)), 1, 0))


def _select_scatter_errors(make):
    yield ErrorInput(
        S((make((3, 4)), make((3,)), 0, 0)),
        RuntimeError,
        r"src size = \[3\], slice size = \[4\]",
    )
    yield ErrorInput(
        S((make((3, 4)), make((4,)), 0, 5)),
        IndexError,
        r"select\(\): index 5 out of range for tensor of size \[3, 4\] at dimension 0",
    )
    yield ErrorInput(
        S((make((3,)), make((1,)), 0, 1)),
        RuntimeError,
        r"src size = \[1\], slice size = \[\]",
    )


select_scatter_p = defop(
    "select_scatter",
    _select_scatter,
    nin=2,
    vjp=(_select_input_vjp, _select_src_vjp),
    jvp=LINEAR,
    batch_rule=scatter_rule(("dim",)),
    samples=_select_scatter_samples,
    error_samples=_select_scatter_errors,
    layout=None,
    methods=True,
    complex_grad=False,  # (PyTorch refuses autograd of its complex result)
    test=COMPLEX_TOO,
    complex32=True,
    meta=by_kernel,
)
select_scatter = select_scatter_p.fn


# ------------------------------------------------------------------ slice_scatter
def _slice_index(shape, dim, start, end, step):
    if len(shape) == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, len(shape))
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return (slice(None),) * d + (slice(start, end, step),)


def _slice_scatter(xp, input, src, dim=0, start=None, end=None, step=1):
    index = _slice_index(input.shape, dim, start, end, step)
    return _write(xp, input, src, lambda out: out[index])


def _slice_of(g, dim, start, end, step):
    return g[_slice_index(tuple(g.shape), dim, start, end, step)]


def _slice_input_vjp(g, dim, start, end, step):
    zero = zeros_like(_slice_of(g, dim, start, end, step))
    return slice_scatter(g, zero, dim, start, end, step)


def _slice_scatter_samples(make):
    yield S((make((4, 3)), make((1, 3)), 0, 1, 2))
    yield S((make((4, 3)), make((4, 3))))
    yield S((make((3, 5)), make((3, 2)), 1), {"step": 3})
    yield S((make((3, 5)), make((3, 1)), -1, -1))
    yield S((make((3, 5)), make((3, 0)), 1, 10))
    yield S((make((3, 5)), make((3, 0)), 1, 3, 1))
    yield S((make((2, 6, 2)), make((2, 2, 2)), 1, -5, -1, 2))


def _slice_scatter_errors(make):
    yield ErrorInput(
        S((make((3, 4)), make((3, 4)), 0, 1)),
        RuntimeError,
        r"src size = \[3, 4\], slice size = \[2, 4\]",
    )
    yield ErrorInput(
        S((make((3, 4)), make((1, 4)), 0, 1, 2, 0)), RuntimeError, "slice step must be positive"
    )
    yield ErrorInput(
        S((make(()), make(()))), IndexError, r"slice\(\) cannot be applied to a 0-dim tensor\."
    )
    yield ErrorInput(S((make((3,)), make((3,)), 1)), IndexError, r"\[-1, 0\], but got 1")


slice_scatter_p = defop(
    "slice_scatter",
    _slice_scatter,
    nin=2,
    vjp=(_slice_input_vjp, _slice_of),
    jvp=LINEAR,
    batch_rule=scatter_rule(("dim",)),
    samples=_slice_scatter_samples,
    error_samples=_slice_scatter_errors,
    layout=None,
    out=True,
    methods=True,
    complex_grad=False,  # (PyTorch refuses autograd of its complex result)
    test=COMPLEX_TOO,
    complex32=True,
    meta=by_kernel,
)
slice_scatter = slice_scatter_p.fn


# ------------------------------------------------------------------ as_strided_scatter
def _window(input: Tensor, size, stride, storage_offset) -> Tensor:
    """The flat indices of the window (size, stride, storage_offset) on a contiguous
    input's elements, checked against them as PyTorch checks a storage."""
    size, stride, offset = tuple(size), tuple(stride), storage_offset or 0
    if any(n < 0 for n in size):
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={list(size)} and strides="
            f"{list(stride)}"
        )
    pos = np.full(size, offset, dtype=np.int64)
    for d, (n, st) in enumerate(zip(size, stride)):
        pos += np.arange(n, dtype=np.int64).reshape((n,) + (1,) * (len(size) - d - 1)) * st
    item, n = input.dtype.itemsize, input.numel()
    need = int(pos.max()) + 1 if pos.size else 0
    if need > n:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {item} requiring a storage size of {need * item} are out of bounds "
            f"for storage of size {n * item}"
        )
    return tensor(pos, dtype=dt.int64, device=input.device)


def _as_strided_scatter_samples(make):
    yield S((make((3, 3)), make((3,)), (3,), (4,)))
    yield S((make((2, 4)), make((2, 2)), (2, 2), (4, 1), 1))
    yield S((make((4,)), make((2, 2)), (2, 2), (1, 2)))


def _as_strided_scatter_errors(make):
    yield ErrorInput(
        S((make((3, 3)), make((2,)), (3,), (4,))),
        RuntimeError,
        r"expected src to have a size equal to the slice of self\. src size = \[2\], "
        r"slice size = \[3\]",
    )
    yield ErrorInput(S((make((3, 3)), make((3,)), (3,), (5,))), RuntimeError, "out of bounds")


@composite(
    samples=_as_strided_scatter_samples,
    error_samples=_as_strided_scatter_errors,
    # PyTorch's input gradient is the complement of the true one (its formula is known
    # wrong): finite differences decide; tests/test_views.py checks the src gradient
    # (a batch dim last makes each sample non-contiguous, which numtorch refuses)
    test={**COMPLEX_TOO, "no_grad_test": True, "vmap_last": False},
)
def as_strided_scatter(
    input: Tensor, src: Tensor, size, stride, storage_offset: int | None = None
) -> Tensor:
    """A copy of input with src written into its window ``as_strided(size, stride,
    storage_offset)`` (over its elements in order: input must be contiguous)."""
    if input._level == 0 and not input.is_contiguous():  # (a transform's: its logical)
        raise NotImplementedError(
            "numtorch: as_strided_scatter of a non-contiguous input (PyTorch's window is on "
            "its memory order): call .contiguous() first"
        )
    idx = _window(input, size, stride, storage_offset)
    if tuple(src.shape) != tuple(idx.shape):
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. "
            f"src size = {list(src.shape)}, slice size = {list(idx.shape)}"
        )
    flat = input.reshape(-1).index_put((idx.reshape(-1),), src.reshape(-1).to(input.dtype))
    return flat.reshape(input.shape)


# ------------------------------------------------------------------ fill_diagonal_
def fill_diagonal_(self: Tensor, fill_value, wrap: bool = False) -> Tensor:
    """Fill the main diagonal of self (all dims of one length, or a matrix) in place; with
    ``wrap``, a tall matrix's diagonal starts again every ``ncols + 1`` rows."""
    shape = tuple(self.shape)
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and any(n != shape[0] for n in shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    diag = self
    while diag.dim() > 1:
        diag = diag.diagonal(0, 0, 1)
    diag.fill_(fill_value)
    if wrap and len(shape) == 2:
        height, width = shape
        for start in range(width + 1, height, width + 1):
            self.narrow(0, start, height - start).diagonal().fill_(fill_value)
    return self


tensor_methods({"fill_diagonal_": fill_diagonal_, "as_strided_scatter": as_strided_scatter})
