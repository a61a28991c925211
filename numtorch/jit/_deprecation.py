"""The DeprecationWarning every ``torch.jit`` entry point gives, in PyTorch's words."""

from __future__ import annotations

import warnings


def warn_deprecated(name: str, or_export: bool = False) -> None:
    """Warn that ``torch.jit.<name>`` is deprecated in favour of torch.compile (or, with
    ``or_export``, torch.compile or torch.export), pointing at the caller's caller."""
    advice = (
        "Please switch to `torch.compile` or `torch.export`."
        if or_export
        else "Please use `torch.compile` instead."
    )
    warnings.warn(f"`torch.jit.{name}` is deprecated. {advice}", DeprecationWarning, stacklevel=3)
