"""torch.distributed._tensor: the old name of torch.distributed.tensor."""

from ..tensor import DTensor

__all__ = ["DTensor"]
