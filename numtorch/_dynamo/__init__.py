"""torch._dynamo: compiled autograd (and the counters it keeps)."""

from __future__ import annotations

from . import compiled_autograd, utils


def reset() -> None:
    """Forget every compiled graph (torch._dynamo.reset); the counters stay."""
    compiled_autograd.reset()
