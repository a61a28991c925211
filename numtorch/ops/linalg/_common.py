"""What every linear-algebra module shares: the LinAlgError type, the dtype and shape
checks (with PyTorch's texts), constant matrices for formulas, the helpers of batch rules,
and the torch.return_types tuples with their ``out=`` writer."""

from __future__ import annotations

import numpy as np

from ..._core import dtype as dt
from ..._core.dispatch import dispatch
from ..._core.out import write_out
from ..._core.tensor import Tensor
from .._batching import front, lrank, lshape, pad_to, rule_generator
from .._families import COMPLEX, COMPLEX_TOO, FLOATS_INT
from ..creation import eye, tensor


class LinAlgError(RuntimeError):
    """Raised when a matrix is singular or not positive-definite (torch.linalg.LinAlgError)."""


# ------------------------------------------------------------------ dtype checks
_INT = {"dtypes": (*FLOATS_INT, *COMPLEX)}  # integer dtypes tested too
_CX = COMPLEX_TOO  # the op database's dtypes of a complex-capable op


def _tname(a) -> str:
    return dt.of(a).scalar_name


def _dtypes(arrays):
    return [a for a in arrays if hasattr(a, "dtype") and hasattr(a, "ndim")]


def _same_dtype(message):
    """A prepare step: all array inputs must share a dtype; ``message(arrays)`` otherwise."""

    def prepare(arrays, attrs=None):
        a, b = arrays[0], arrays[-1]
        if type(a) is np.ndarray and type(b) is np.ndarray and len(arrays) == 2:
            if a.dtype == b.dtype:  # (the commonest call, without the general scan)
                return arrays, None
        arr = _dtypes(arrays)
        if any(a.dtype != arr[0].dtype for a in arr):
            raise RuntimeError(message(arr))
        return arrays, None

    return prepare


def _m1m2(arr):
    return (
        f"expected m1 and m2 to have the same dtype, but got: {dt.of(arr[0]).cpp_name} != "
        f"{dt.of(arr[1]).cpp_name}"
    )


def _scalar_type(arr):
    b = next(a for a in arr if a.dtype != arr[0].dtype)
    return f"expected scalar type {_tname(arr[0])} but found {_tname(b)}"


def _float_only(name):
    """A prepare step for decompositions: floating inputs only, all of one dtype."""

    def prepare(arrays, attrs=None):
        a, b = arrays[0], arrays[-1]
        if type(a) is np.ndarray and type(b) is np.ndarray and len(arrays) == 2:
            if a.dtype == b.dtype:  # (the commonest call, without the general scan)
                return arrays, None
        arr = _dtypes(arrays)
        for a in arr:
            if a.dtype.kind not in "fc":
                raise RuntimeError(
                    f"{name}: Expected a floating point or complex tensor as input. Got {_tname(a)}"
                )
        if any(a.dtype != arr[0].dtype for a in arr):
            raise RuntimeError(
                f"{name}: Expected A and B to have the same dtype, but found A of type "
                f"{_tname(arr[0])} and B of type {_tname(arr[1])} instead"
            )
        return arrays, None

    return prepare


def _square(name, A, what="A"):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"{name}: {what} must be batches of square matrices, but they are "
            f"{A.shape[-2]} by {A.shape[-1]} matrices"
        )


def _fresh(xp, out, *inputs):
    """Copy a kernel result that aliases an input (numpy may return views)."""
    for a in inputs:
        if hasattr(a, "shape") and out.size and xp.may_share_memory(out, a):
            return out.copy()
    return out


# ------------------------------------------------------------------ constants for formulas
def _eye(n: int, like):
    return eye(n, dtype=like.dtype, device=like.device)


def _tri(n: int, like, k: int = 0, upper: bool = False):
    """A constant 0/1 mask of the lower (or upper) triangle from diagonal ``k``."""
    m = 1.0 - np.tri(n, n, k - 1) if upper else np.tri(n, n, k)
    return tensor(m, dtype=like.dtype, device=like.device)


def _mv(A, x):
    return (A @ x.unsqueeze(-1)).squeeze(-1)


# ------------------------------------------------------------------ batch rules (vmap)
def _align(x, bd, rank: int):
    """x batch-first with logical rank ``rank``; an unbatched x gets size-1 leading dims
    (a view), for kernels that need every operand to have the same number of dims."""
    if bd is None:
        return x.reshape((1,) * (rank + 1 - x.dim()) + tuple(x.shape))
    return pad_to(front(x, bd), rank)


def _check_dtypes(op, args, bdims, attrs) -> None:
    """Raise the op's own dtype error, with its messages decided on logical ranks."""
    if op.prepare is None:
        return
    first = None  # (a plain value's dtype read off its array: no property calls)
    for a in args:
        if isinstance(a, Tensor):
            d = a._data.dtype if type(a) is Tensor else a.dtype.np
            if first is None:
                first = d
            elif d != first:
                break
    else:
        return
    op.prepare(
        [
            np.zeros((1,) * lrank(a, b), a.dtype.np) if isinstance(a, Tensor) else a
            for a, b in zip(args, bdims, strict=False)
        ],
        attrs,
    )


def _min_rank(name: str, shape: tuple, what: str = "A") -> None:
    if len(shape) < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")


def _stacked(op, name):
    """Decompositions and matrix functions of one input: the kernels take stacks of
    matrices, so the batch dim just goes first (a logical vector is rejected first, since
    physically it would look like a matrix)."""

    def rule(vmap, args, bdims, attrs):
        x, bd = args[0], bdims[0]
        _min_rank(name, lshape(x, bd))
        return dispatch(op, (front(x, bd), *args[1:]), attrs), 0

    return rule


stacked = rule_generator(_stacked)


# ------------------------------------------------------------------ out= and return types
def _write(out, res):
    """Write a composite's result into ``out=``; returns ``out``."""
    return write_out(out, res)


def _tuple_out(res, out):
    """A tuple result, or written into the tensors of ``out=`` (as a tuple of its type)."""
    if out is None:
        return res
    _write(tuple(out), tuple(res))
    return type(res)(out)


def return_type(name: str, fields: tuple):
    """A torch.return_types-style tuple: built from one sequence, fields by name or index."""

    def __new__(cls, seq):
        seq = tuple(seq)
        if len(seq) != len(fields):
            raise TypeError(
                f"torch.return_types.{name} takes a {len(fields)}-sequence ({len(seq)}-sequence given)"
            )
        return tuple.__new__(cls, seq)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self, strict=False))
        return f"torch.return_types.{name}(\n{body})"

    ns = {"__new__": __new__, "__repr__": __repr__, "__slots__": (), "n_fields": len(fields)}
    ns["__reduce__"] = lambda self: (type(self), (tuple(self),))
    for i, f in enumerate(fields):
        ns[f] = property(lambda self, i=i: tuple.__getitem__(self, i))
    cls = type(name, (tuple,), ns)
    cls.__module__ = "torch.return_types"
    return cls


linalg_qr_rt = return_type("linalg_qr", ("Q", "R"))
linalg_eigh_rt = return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_svd_rt = return_type("linalg_svd", ("U", "S", "Vh"))
linalg_slogdet_rt = return_type("linalg_slogdet", ("sign", "logabsdet"))
slogdet_rt = return_type("slogdet", ("sign", "logabsdet"))
linalg_inv_ex_rt = return_type("linalg_inv_ex", ("inverse", "info"))
linalg_cholesky_ex_rt = return_type("linalg_cholesky_ex", ("L", "info"))
linalg_solve_ex_rt = return_type("linalg_solve_ex", ("result", "info"))
svd_rt = return_type("svd", ("U", "S", "V"))
qr_rt = return_type("qr", ("Q", "R"))
