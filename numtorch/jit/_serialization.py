"""``jit.save``/``jit.load``: TorchScript archives, which numtorch cannot write or read."""

from __future__ import annotations

from typing import Any

__all__ = ["load", "save", "unsupported"]


def unsupported(what: str) -> RuntimeError:
    """The error for TorchScript serialization, naming what was asked."""
    return RuntimeError(
        f"{what}: TorchScript serialization is not supported by numtorch; save the "
        "module's state_dict with numtorch.save and load it into a module built in Python"
    )


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    """Refused: numtorch writes no TorchScript archive."""
    raise unsupported("torch.jit.save")


def load(f: Any, map_location: Any = None, _extra_files: Any = None) -> Any:
    """Refused: numtorch reads no TorchScript archive."""
    raise unsupported("torch.jit.load")
