"""torch.distributed.fsdp: the FSDPModule type and the mixed-precision policy, so that code
can ask whether a module is fully sharded.

numtorch does not shard modules: fully_shard raises, and no module is an FSDPModule.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..._core.dtype import dtype
from ...nn.modules.module import Module

__all__ = ["FSDPModule", "MixedPrecisionPolicy", "fully_shard"]


class FSDPModule:
    """The class fully_shard mixes into a sharded module's type."""


@dataclass(frozen=True)
class MixedPrecisionPolicy:
    """The dtypes a sharded module computes, reduces gradients and returns outputs in."""

    param_dtype: dtype | None = None
    reduce_dtype: dtype | None = None
    output_dtype: dtype | None = None
    cast_forward_inputs: bool = True


def fully_shard(module: Module, **kwargs) -> Module:
    """Shard a module's parameters over a data-parallel mesh (not supported by numtorch)."""
    raise NotImplementedError("numtorch has no fully sharded data parallelism (fully_shard)")
