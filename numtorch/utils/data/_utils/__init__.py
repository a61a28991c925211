"""torch.utils.data._utils: the DataLoader's helpers under PyTorch's private path."""

from . import collate

__all__ = ["collate"]
