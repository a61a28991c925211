"""``torch.backends.mps``: no Metal in numtorch."""


def is_available() -> bool:
    """Whether MPS can be used: never."""
    return False


def is_built() -> bool:
    """Whether numtorch is built with MPS: it is not."""
    return False
