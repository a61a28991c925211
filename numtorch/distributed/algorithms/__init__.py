"""torch.distributed.algorithms: ``Join`` for uneven inputs and DDP's communication hooks."""

# ruff: noqa: F401
from . import ddp_comm_hooks, join
from .join import Join, Joinable, JoinHook
