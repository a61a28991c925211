"""torch._dynamo: compiled autograd (and the counters it keeps)."""

from __future__ import annotations

from . import _forward, compiled_autograd, config, exc, utils  # noqa: F401 - torch._dynamo.<module>


def reset() -> None:
    """Forget every compiled graph and program (torch._dynamo.reset); the counters stay."""
    compiled_autograd.reset()
    for frame in list(_forward.FRAMES):
        frame.clear()


def mark_dynamic(t, index, *, min=None, max=None) -> None:  # noqa: A002 - PyTorch's names
    """Let numtorch.compile treat dim ``index`` (an int or a list of ints) of ``t`` as
    dynamic: its sizes other than 0 and 1 share one graph (torch._dynamo.mark_dynamic)."""
    dims = {index} if isinstance(index, int) else set(index)
    t._dynamo_dynamic_indices = frozenset(getattr(t, "_dynamo_dynamic_indices", ())) | dims


maybe_mark_dynamic = mark_dynamic


# The backends numtorch.compile accepts by name (each runs the generated code).
BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs")


def list_backends(exclude_tags=("debug", "experimental")) -> list[str]:
    """The backend names compile accepts (torch._dynamo.list_backends)."""
    return ["cudagraphs", "inductor"] if exclude_tags else sorted(BACKENDS)
