"""torch.autograd: the eager engine, grad modes, and graph inspection."""

from __future__ import annotations

from .._core.dispatch import set_recorder
from . import forward_ad, functional, graph, views  # noqa: F401
from .engine import backward, grad
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from .graph import record

set_recorder(record)

__all__ = ["backward", "enable_grad", "grad", "inference_mode", "no_grad", "set_grad_enabled"]
