"""Forward-mode AD in the eager API (torch.autograd.forward_ad): dual tensors at a level."""

from __future__ import annotations

from collections import namedtuple

from .._core import upcalls
from .._core.interpreter import Kind
from .._core.lift import catch_up
from .._core.state import state
from .._core.tensor import Tensor
from ..func._jvp import check_dual

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])

_levels: list = []  # the active dual level (at most one, as in PyTorch)


def enter_dual_level() -> int:
    """Enter a new forward-grad level; returns its index."""
    from ..func._jvp import JvpInterpreter

    if _levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    interp = JvpInterpreter()
    interp.kind = Kind.DUAL  # forward mode, outside torch.func
    interp.__enter__()
    _levels.append(interp)
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Leave the current forward-grad level; its dual tensors can no longer be used."""
    if not _levels:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    interp = _levels.pop()
    if state.stack and state.stack[-1] is interp:
        interp.__exit__(None, None, None)


class dual_level:
    """Context manager for a forward AD level: ``with dual_level(): ...``."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()


def _current():
    if not _levels:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    return _levels[-1]


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A dual tensor with ``tensor`` as primal and ``tangent`` as its forward gradient."""
    interp = _current()
    check_dual(tensor, tangent)
    return interp.wrap(tensor, tangent)


def unpack_dual(tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """(primal, tangent) of a dual tensor at the current level; (tensor, None) otherwise."""
    if _levels and isinstance(tensor, Tensor):
        catch_up(tensor)  # (a view made before its root took a tangent)
        p, t = _levels[-1].unwrap(tensor)
        return UnpackedDualTensor(p, t)
    return UnpackedDualTensor(tensor, None)


def _dual_call(func, args: tuple, tangents: tuple) -> list[tuple[Tensor, Tensor | None]]:
    """func(*args) at a fresh dual level, ``tangents[k]`` (None: none) the tangent of
    ``args[k]``; (primal, tangent) of each tensor output (gradcheck's forward mode)."""
    with dual_level():
        duals = [a if t is None else make_dual(a, t) for a, t in zip(args, tangents)]
        outs = func(*duals)
        outs = outs if isinstance(outs, (tuple, list)) else (outs,)
        return [tuple(unpack_dual(o)) for o in outs if isinstance(o, Tensor)]


upcalls.provide(dual_call=_dual_call)

__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
]
