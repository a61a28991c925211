"""Composite tensor functions that combine or rearrange tensors: block_diag,
cartesian_prod, combinations, diagflat, column_stack, chain_matmul, msort.

Each is written with public ops, so gradients, jvp and vmap come from those ops.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np

from .._core import dtype as dt
from .._core.methods import tensor_method
from .._core.op import ErrorInput, composite
from .._core.out import write_out
from .._core.pyargs import parsed
from .._core.tensor import Tensor
from .._opdb.samples import S
from ._families import COMPLEX_TOO
from .creation import tensor, zeros
from .linalg.contractions import multi_dot
from .shape import _check_tensor_list, cat, diag_p, hstack_p
from .sorting import sort

_diag, _hstack = diag_p.fn, hstack_p.fn


def _check_tensors(tensors) -> None:
    """Variadic tensor arguments (PyTorch parses them as one tensor list)."""
    _check_tensor_list(tuple(tensors), "")


def _check_input(input, name: str) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )


# ------------------------------------------------------------------ block_diag
def _block_diag_samples(make):
    yield S((make((2, 3)), make((2,)), make(())))
    yield S((make((2, 2)),))
    yield S((make((0, 3)), make((2, 0)), make((1, 1))))
    yield S((make((2, 3)), make((1, 2), dtype="int64")))


def _block_diag_errors(make):
    yield ErrorInput(
        S((make((2, 2)), make((2, 2, 2)))),
        RuntimeError,
        "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input 1 has 3 dimensions",
    )


@composite(samples=_block_diag_samples, error_samples=_block_diag_errors, test=COMPLEX_TOO)
def block_diag(*tensors):
    """A block diagonal matrix of the tensors (0-d and 1-d ones as one row)."""
    _check_tensors(tensors)
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                f"{t.dim()} dimensions"
            )
    if not tensors:
        return zeros((1, 0))
    dtype = dt.result_type(*((t.dtype, t.dim()) for t in tensors))
    blocks = [t.reshape((1, -1)) if t.dim() < 2 else t for t in tensors]
    cols = sum(b.shape[1] for b in blocks)
    parts, left = [], 0
    for b in blocks:
        r, c = b.shape
        pieces = [
            zeros((r, left), dtype=dtype, device=b.device),
            b.to(dtype),
            zeros((r, cols - left - c), dtype=dtype, device=b.device),
        ]
        parts.append(cat(pieces, 1))
        left += c
    return cat(parts, 0)


# ------------------------------------------------------------------ cartesian_prod, combinations
def _check_1d(t) -> None:
    if t.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")


def _cartesian_samples(make):
    yield S((make((3,)), make((2,))))
    yield S((make((2,)), make((3,)), make((2,))))
    yield S((make((4,)),))
    yield S((make((3,)), make((0,))))


def _cartesian_errors(make):
    yield ErrorInput(
        S((make((3,)), make((3, 2)))), RuntimeError, r"Expect a 1D vector, but got shape \[3, 2\]"
    )
    yield ErrorInput(
        S((make((3,)), make((2,), dtype="float64"))),
        RuntimeError,
        "meshgrid expects all tensors to have the same dtype",
    )


@composite(samples=_cartesian_samples, error_samples=_cartesian_errors, test=COMPLEX_TOO)
def cartesian_prod(*tensors):
    """The cartesian product of 1-d tensors: one row per combination, the last varying fastest."""
    _check_tensors(tensors)
    for t in tensors:
        _check_1d(t)
    if len(tensors) == 1:
        return tensors[0]
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors[1:]:
        if t.dtype != tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    sizes = tuple(t.shape[0] for t in tensors)
    n = len(tensors)
    cols = []
    for i, t in enumerate(tensors):
        shape = (1,) * i + (sizes[i],) + (1,) * (n - i - 1)
        cols.append(t.reshape(shape).expand(sizes).reshape((-1, 1)))
    return cat(cols, 1)


def _combination_rows(n: int, r: int, with_replacement: bool) -> np.ndarray:
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(n), r))
    return np.array(rows, dtype=np.int64).reshape(len(rows), r)


def _combinations_samples(make):
    yield S((make((4,)),))
    yield S((make((4,)), 3, True))
    yield S((make((3,)),), {"r": 1})
    yield S((make((3,)),), {"r": 2, "with_replacement": True})
    yield S((make((2,)), 3))
    yield S((make((0,)),))


def _combinations_errors(make):
    yield ErrorInput(
        S((make((4, 2)),)), RuntimeError, r"Expect a 1D vector, but got shape \[4, 2\]"
    )
    yield ErrorInput(S((make((4,)), -1)), RuntimeError, "Expect a non-negative number, but got -1")


@composite(samples=_combinations_samples, error_samples=_combinations_errors, test=COMPLEX_TOO)
def combinations(input, r: int = 2, with_replacement: bool = False):
    """The length-``r`` combinations of a 1-d tensor's elements, one per row (in order)."""
    _check_input(input, "combinations")
    _check_1d(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty((0,))
    rows = _combination_rows(input.shape[0], r, with_replacement)
    index = tensor(rows.reshape(-1))
    return input.index_select(0, index).reshape(rows.shape)


# ------------------------------------------------------------------ diagflat
@composite(
    samples=lambda make: [
        S((make((2, 3)),)),
        S((make((3,)), 1)),
        S((make((3,)),), {"offset": -2}),
        S((make(()),)),
        S((make((0,)),)),
    ],
    methods=True,
    test=COMPLEX_TOO,
)
def diagflat(input, offset: int = 0):
    """A 2-d tensor with the flattened input on diagonal ``offset``."""
    _check_input(input, "diagflat")
    return _diag(input.reshape(-1), offset)


# ------------------------------------------------------------------ column_stack
def _column_stack_samples(make):
    yield S(([make((3,)), make((3, 2))],))
    yield S(([make(()), make(())],))
    yield S(([make((2, 3, 4)), make((2, 1, 4))],))
    yield S(([make((3,)), make((3,), dtype="int64")],))


def _column_stack_errors(make):
    yield ErrorInput(S(([],)), RuntimeError, "column_stack expects a non-empty TensorList")
    yield ErrorInput(
        S(([make((3,)), make((2,))],)),
        RuntimeError,
        "Sizes of tensors must match except in dimension 1. Expected size 3 but got size 2 for "
        "tensor number 1 in the list.",
    )
    yield ErrorInput(
        S((make((3,)),)),
        TypeError,
        r"column_stack\(\): argument 'tensors' \(position 1\) must be tuple of Tensors, not Tensor",
    )


@composite(samples=_column_stack_samples, error_samples=_column_stack_errors, test=COMPLEX_TOO)
def column_stack(tensors, *, out=None):
    """Stack the tensors as columns: 0-d and 1-d ones become columns, then hstack."""
    _check_tensor_list(tensors, "column_stack")
    if len(tensors) == 0:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    cols = [t.reshape((t.numel(), 1)) if t.dim() <= 1 else t for t in tensors]
    return _hstack(cols, out=out)


# ------------------------------------------------------------------ chain_matmul
_CHAIN_MATMUL_DEPRECATED = (
    "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
    "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
    "multiple parameters."
)


def _chain_matmul_samples(make):
    yield S((make((2, 3)), make((3, 4))))
    yield S((make((2, 3)), make((3, 4)), make((4, 2))))
    yield S((make((2, 3)),))


def _chain_matmul_errors(make):
    yield ErrorInput(S(()), RuntimeError, r"chain_matmul\(\): Expected one or more matrices")
    yield ErrorInput(
        S((make((3,)), make((3, 2)))), RuntimeError, "Tensor dimension is 1, expected 2 instead."
    )
    yield ErrorInput(
        S((make((2, 3)), make((3, 2)), make((3, 3)))),
        RuntimeError,
        r"multi_dot\(\): tensors 1 and 2 with shapes \[3, 2\] and \[3, 3\] cannot be multiplied",
    )


@composite(
    samples=_chain_matmul_samples,
    error_samples=_chain_matmul_errors,
    test=COMPLEX_TOO,
)
def chain_matmul(*matrices, out=None):
    """Deprecated: the product of 2-d matrices (``linalg.multi_dot`` of them)."""
    warnings.warn(_CHAIN_MATMUL_DEPRECATED, UserWarning, stacklevel=2)
    _check_tensors(matrices)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    for i, (a, b) in enumerate(itertools.pairwise(matrices)):
        if a.dtype == b.dtype and a.shape[1] != b.shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {list(a.shape)} and "
                f"{list(b.shape)} cannot be multiplied"
            )
    if len(matrices) == 1:
        res = matrices[0].clone()
        return res if out is None else write_out(out, res)
    return multi_dot(list(matrices), out=out)


# ------------------------------------------------------------------ msort
@composite(samples=lambda make: [S((make((3, 2)),)), S((make((4,)),)), S((make(()),))])
def msort(input, *, out=None):
    """``input`` sorted along its first dim (the values of ``sort(input, dim=0)``)."""
    _check_input(input, "msort")
    if out is not None and out.dtype != input.dtype:
        raise RuntimeError(
            f"Expected out tensor to have dtype {input.dtype.cpp_name}, but got "
            f"{out.dtype.cpp_name} instead"
        )
    res = sort(input, dim=0).values
    return res if out is None else write_out(out, res)


# (PyTorch's parser refuses another argument, the method's Python any argument)
msort = parsed("torch.msort")(msort)
tensor_method(parsed("Tensor.msort", method=True)(msort.__wrapped__), "msort")
