"""torch.utils._python_dispatch: modes that see every op call below autograd.

A ``TorchDispatchMode`` entered as a context manager gets each op run on plain tensors
(forward ops and the ops backward formulas run) as
``__torch_dispatch__(func, types, args, kwargs)``, with ``func`` an aten ``OpOverload``
(``aten.mul.Tensor``; see ``numtorch._core.aten`` for the names and argument mapping).
Its return value is the op's result. Modes nest: the innermost sees a call first, and
ops called inside a handler (``func(*args, **kwargs)`` included) go to the next mode out.
"""

from __future__ import annotations

from typing import Any

from .._core.aten import BELOW, OpOverload, aten, real_modes
from .._core.state import state

__all__ = ["TorchDispatchMode", "OpOverload", "aten"]


class TorchDispatchMode:
    """Base class of dispatch modes: subclasses define ``__torch_dispatch__``."""

    def __init__(self, _dispatch_key=None) -> None:
        self._dispatch_key = _dispatch_key

    def __torch_dispatch__(self, func, types, args=(), kwargs=None) -> Any:
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        """Deprecated in PyTorch: ``with Mode(...)`` instead."""
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls) -> bool:
        return False


def _get_current_dispatch_mode():
    """The innermost active mode, or None (inside a handler: the next mode out)."""
    modes = real_modes()
    return modes[-1] if modes else None


def _get_current_dispatch_mode_stack() -> list:
    """The active modes, outermost first."""
    return real_modes()


def _len_torch_dispatch_stack() -> int:
    return len(real_modes())


def _push_mode(mode: TorchDispatchMode) -> None:
    """Make ``mode`` the innermost active mode."""
    state.modes.append(mode)


def _pop_mode(k=None) -> TorchDispatchMode:
    """Remove and return the innermost active mode."""
    modes = state.modes
    if not modes or modes[-1] is BELOW:
        raise RuntimeError("trying to pop from empty mode stack")
    return modes.pop()


def is_in_torch_dispatch_mode(include_infra_modes: bool = True) -> bool:
    return bool(real_modes())
