"""torch.distributed._composable.fsdp: the old name of torch.distributed.fsdp."""

from ...fsdp import FSDPModule, MixedPrecisionPolicy, fully_shard

__all__ = ["FSDPModule", "MixedPrecisionPolicy", "fully_shard"]
