"""torch.utils: benchmark, data."""

from . import benchmark, data

__all__ = ["benchmark", "data"]
