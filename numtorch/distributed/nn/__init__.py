"""torch.distributed.nn: collectives that autograd differentiates (``functional``)."""

# ruff: noqa: F401
from . import functional
