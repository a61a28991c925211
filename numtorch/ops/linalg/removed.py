"""The linear-algebra functions PyTorch removed in 1.9 and keeps as stubs that raise:
torch.eig, torch.lstsq, torch.solve, torch.symeig and torch.matrix_rank (and the Tensor
methods eig, lstsq, solve and symeig), each with PyTorch's RuntimeError text."""

from __future__ import annotations

from ..._core.methods import tensor_methods

_REMOVED = "This function was deprecated since version 1.9 and is now removed."

_EIG = (
    f"{_REMOVED} `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` "
    "rather than real tensors mimicking complex tensors.\n\n"
    "L, _ = torch.eig(A) should be replaced with:\nL_complex = torch.linalg.eigvals(A)\n\n"
    "and\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
    "L_complex, V_complex = torch.linalg.eig(A)"
)
_LSTSQ = (
    f"{_REMOVED} `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
    "`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition in "
    "the returned tuple (although it returns other information about the problem).\n\n"
    "To get the QR decomposition consider using `torch.linalg.qr`.\n\n"
    "The returned solution in `torch.lstsq` stored the residuals of the solution in the last "
    "m - n columns of the returned value whenever m > n. In torch.linalg.lstsq, the residuals "
    "are in the field 'residuals' of the returned named tuple.\n\n"
    "The unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\n"
    "should be replaced with:\nX = torch.linalg.lstsq(A, B).solution"
)
_SOLVE = (
    f"{_REMOVED} `torch.solve` is deprecated in favor of `torch.linalg.solve`. "
    "`torch.linalg.solve` has its arguments reversed and does not return the LU factorization.\n\n"
    "To get the LU factorization see `torch.lu`, which can be used with `torch.lu_solve` or "
    "`torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\n"
    "X = torch.linalg.solve(A, B)"
)
_SYMEIG = (
    f"{_REMOVED} The default behavior has changed from using the upper triangular portion of "
    "the matrix by default to using the lower triangular portion.\n\n"
    "L, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
    "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\n"
    "L, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
    "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"
)
_MATRIX_RANK = (
    f"{_REMOVED}\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter "
    "'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'."
)


def eig(self, eigenvectors: bool = False, *, e=None, v=None):
    """Removed: use linalg.eig or linalg.eigvals."""
    raise RuntimeError(_EIG)


def lstsq(input, A, *, out=None):
    """Removed: use linalg.lstsq (its arguments are reversed)."""
    raise RuntimeError(_LSTSQ)


def solve(input, A, *, out=None):
    """Removed: use linalg.solve (its arguments are reversed)."""
    raise RuntimeError(_SOLVE)


def symeig(input, eigenvectors: bool = False, upper: bool = True, *, out=None):
    """Removed: use linalg.eigh or linalg.eigvalsh."""
    raise RuntimeError(_SYMEIG)


def matrix_rank(input, tol=None, symmetric: bool = False, *, out=None):
    """Removed: use linalg.matrix_rank."""
    raise RuntimeError(_MATRIX_RANK)


def _eig_method(self, eigenvectors=False):
    return eig(self, eigenvectors)


def _lstsq_method(self, other):
    return lstsq(self, other)


def _solve_method(self, other):
    return solve(self, other)


def _symeig_method(self, eigenvectors=False):
    return symeig(self, eigenvectors)


tensor_methods(
    {
        "eig": _eig_method,
        "lstsq": _lstsq_method,
        "solve": _solve_method,
        "symeig": _symeig_method,
    }
)
