"""torch._dynamo.exc: the errors compile raises."""

from __future__ import annotations


class InvalidBackend(RuntimeError):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for available "
            "backends."
        )


class Unsupported(RuntimeError):
    """What ``fullgraph=True`` refuses: a part of the function that cannot be traced."""
