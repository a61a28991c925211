"""torch.utils.data._utils.collate: batching samples into tensors."""

from .._collate import default_collate, default_convert

__all__ = ["default_collate", "default_convert"]
