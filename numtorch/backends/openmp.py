"""``torch.backends.openmp``: whether an OpenMP pool is there."""


def is_available() -> bool:
    """Whether numtorch is built with OpenMP (``torch.has_openmp``)."""
    from .._settings import has_openmp

    return has_openmp
