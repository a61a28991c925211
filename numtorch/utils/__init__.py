"""torch.utils: benchmark, data."""

from . import benchmark, checkpoint, data

__all__ = ["benchmark", "checkpoint", "data"]
