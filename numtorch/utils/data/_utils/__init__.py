"""torch.utils.data._utils: the DataLoader's helpers under PyTorch's private path."""

from . import collate, pin_memory

__all__ = ["collate", "pin_memory"]
