"""torch.utils: benchmark."""

from . import benchmark

__all__ = ["benchmark"]
