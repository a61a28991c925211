"""torch.distributed.tensor.experimental: implicit_replication."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["implicit_replication"]


@contextmanager
def implicit_replication() -> Iterator[None]:
    """Let DTensor ops treat plain tensors as replicated; with no DTensors in numtorch,
    a region in which every tensor is already plain."""
    yield
