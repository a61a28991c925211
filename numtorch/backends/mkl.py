"""``torch.backends.mkl``: whether the BLAS underneath is taken to be MKL."""


def is_available() -> bool:
    """Whether numtorch is built with MKL (``torch.has_mkl``)."""
    from .._settings import has_mkl

    return has_mkl
