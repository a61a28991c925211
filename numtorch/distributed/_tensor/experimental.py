"""torch.distributed._tensor.experimental: the old name of tensor.experimental."""

from ..tensor.experimental import implicit_replication

__all__ = ["implicit_replication"]
