"""torch.utils: benchmark, checkpoint, data, hooks."""

from . import benchmark, checkpoint, data, hooks

__all__ = ["benchmark", "checkpoint", "data", "hooks"]
