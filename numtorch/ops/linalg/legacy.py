"""torch.triangular_solve: the older spelling of linalg.solve_triangular, with its arguments
reversed, its ``transpose`` flag and a copy of A (broadcast to the batch) as the second
result, whose gradient passes straight to A."""

from __future__ import annotations

import warnings

import numpy as np

from ..._core.methods import tensor_methods
from ..._core.op import NoKernel, composite
from ..._opdb.samples import ErrorInput as E
from ..._opdb.samples import S
from ._common import _CX, _tuple_out, return_type
from ._samples import _wc
from .triangular import linalg_solve_triangular

triangular_solve_rt = return_type("triangular_solve", ("solution", "cloned_coefficient"))

_WARNING = (
    "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be "
    "removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments "
    "reversed and does not return a copy of one of the inputs.\nX = torch.triangular_solve(B, "
    "A).solution\nshould be replaced with\nX = torch.linalg.solve_triangular(A, B)."
)
_warned = []


def _checks(b, A):
    if b.dim() < 2:
        raise RuntimeError(
            "torch.triangular_solve: Expected b to have at least 2 dimensions, but it has "
            f"{b.dim()} dimensions instead"
        )
    if A.dim() < 2:
        raise RuntimeError(
            "torch.triangular_solve: Expected A to have at least 2 dimensions, but it has "
            f"{A.dim()} dimensions instead"
        )
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"A must be batches of square matrices, but they are {A.shape[-2]} by "
            f"{A.shape[-1]} matrices"
        )
    if b.dtype != A.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type {b.dtype.scalar_name} "
            f"and A of type {A.dtype.scalar_name} instead."
        )
    if b.shape[-2] != A.shape[-1]:
        n = A.shape[-1]
        raise RuntimeError(
            f"Incompatible matrix sizes for triangular_solve: each A matrix is {n} by {n} but "
            f"each b matrix is {b.shape[-2]} by {b.shape[-1]}"
        )


def _column_major(x):
    return x.mT.contiguous().mT


def _samples(make):
    A = _wc(make, (3, 3))
    yield S((make((3, 2)), A))
    yield S((make((3, 2)), A), {"upper": False, "transpose": True})
    yield S((make((3, 2)), A, True, False, True))
    yield S((make((2, 3, 2)), A))
    yield S((make((3, 1)), _wc(make, (2, 3, 3))), {"transpose": True})


def _errors(make):
    A = _wc(make, (3, 3))
    yield E(
        S((make((3,)), A)),
        RuntimeError,
        "torch.triangular_solve: Expected b to have at least 2 dimensions, but it has 1 dimensions instead",
    )
    yield E(
        S((make((3, 2)), A[:2].copy())),
        RuntimeError,
        "A must be batches of square matrices, but they are 2 by 3 matrices",
    )
    yield E(
        S((make((2, 2)), A)),
        RuntimeError,
        "Incompatible matrix sizes for triangular_solve: each A matrix is 3 by 3 but each b "
        "matrix is 2 by 2",
    )
    yield E(
        S((make((3, 2)).astype(np.float32), A.astype(np.float64))),
        RuntimeError,
        "Expected b and A to have the same dtype, but found b of type Float and A of type Double instead.",
    )


@composite(
    nout=2,
    no_kernel=NoKernel("bi", "triangular_solve_cpu"),
    # PyTorch's forward-mode formula lets the whole tangent of A in (its backward, and the
    # finite differences, only the triangle the solve reads): numtorch follows the latter,
    # and tests/test_linalg.py compares the rest with PyTorch
    test={**_CX, "no_oracle": True},
    samples=_samples,
    error_samples=_errors,
)
def triangular_solve(
    input, A, upper: bool = True, transpose: bool = False, unitriangular: bool = False, *, out=None
):
    """(solution, cloned_coefficient): X with op(A) X = b, op(A) = A or A^T, and a copy of A."""
    if not _warned:
        _warned.append(True)
        warnings.warn(_WARNING, UserWarning, stacklevel=2)
    b = input
    _checks(b, A)
    M = A.mT if transpose else A
    X = linalg_solve_triangular(M, b, upper=upper != transpose, unitriangular=unitriangular)
    batch = tuple(np.broadcast_shapes(tuple(b.shape[:-2]), tuple(A.shape[:-2])))
    clone = _column_major(A.expand(batch + tuple(A.shape[-2:])).clone())
    return _tuple_out(triangular_solve_rt((_column_major(X), clone)), out)


tensor_methods({"triangular_solve": triangular_solve})
