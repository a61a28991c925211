"""torch.distributed.tensor: the DTensor type, so that code can ask whether a tensor is one.

numtorch does not shard tensors over a device mesh: no DTensor is ever made, and making one
raises. A plain tensor is never a DTensor, which is what such code checks.
"""

from __future__ import annotations

from ..._core.tensor import Tensor

__all__ = ["DTensor"]


class DTensor(Tensor):
    """A tensor sharded or replicated over a device mesh (not supported by numtorch)."""

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        raise NotImplementedError("numtorch has no distributed tensors (DTensor)")

    @staticmethod
    def from_local(local_tensor: Tensor, device_mesh=None, placements=None, **kwargs) -> DTensor:
        """Build a DTensor from each rank's local shard (not supported by numtorch)."""
        raise NotImplementedError("numtorch has no distributed tensors (DTensor)")
