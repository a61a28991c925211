"""torch._dynamo: compiled autograd (and the counters it keeps)."""

from __future__ import annotations

from . import _forward, compiled_autograd, exc, utils  # noqa: F401 - torch._dynamo.<module>


def reset() -> None:
    """Forget every compiled graph and program (torch._dynamo.reset); the counters stay."""
    compiled_autograd.reset()
    for frame in list(_forward.FRAMES):
        frame.entries.clear()


# The backends numtorch.compile accepts by name (each runs the generated code).
BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs")


def list_backends(exclude_tags=("debug", "experimental")) -> list[str]:
    """The backend names compile accepts (torch._dynamo.list_backends)."""
    return ["cudagraphs", "inductor"] if exclude_tags else sorted(BACKENDS)
