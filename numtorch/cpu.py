"""torch.cpu: here only its ``amp`` namespace, PyTorch's deprecated CPU spellings of
``torch.amp.autocast`` and ``torch.amp.GradScaler``."""

from __future__ import annotations

from .amp._deprecated import cpu_amp as amp

__all__ = ["amp"]
