"""torch.autograd.variable: the legacy ``Variable`` (any Tensor is one) and its
``_execution_engine``, the engine's Python face (``queue_callback`` among others)."""

from __future__ import annotations

import warnings

from .._core.tensor import Tensor
from ..ops.creation import tensor
from . import engine

__all__ = ["Variable"]


def _exactly_one(method: str, args: tuple):
    if len(args) != 1:
        raise TypeError(f"_EngineBase.{method}() takes exactly one argument ({len(args)} given)")
    return args[0]


class _EngineBase:
    """The engine as PyTorch's ``torch._C._EngineBase`` shows it to Python."""

    def queue_callback(self, *args) -> None:
        """Run a callable once the backward pass running now has finished (in the thread
        that runs it, after every gradient is accumulated, in the order queued)."""
        engine.queue_callback(_exactly_one("queue_callback", args))

    def is_checkpoint_valid(self) -> bool:
        return engine._is_checkpoint_valid()

    def run_backward(
        self,
        tensors,
        grad_tensors,
        keep_graph,
        create_graph,
        inputs=(),
        allow_unreachable=False,
        accumulate_grad=True,
    ):
        """The engine's entry: the gradients of ``inputs`` (``accumulate_grad=False``), or
        None after accumulating into the leaves' ``.grad``."""
        inputs = tuple(inputs) if inputs else None
        slots = engine.run_backward(
            tuple(tensors), tuple(grad_tensors), keep_graph, create_graph, inputs, accumulate_grad
        )
        if accumulate_grad:
            return None
        return tuple(slot[0] for slot in slots)


class VariableMeta(type):
    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=VariableMeta):
    """The legacy wrapper: ``Variable(t, requires_grad)`` is a new tensor sharing ``t``'s
    data, outside its graph; every Tensor is a Variable."""

    _execution_engine = _EngineBase()

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        if volatile:
            warnings.warn(
                "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                stacklevel=2,
            )
        if data is None:
            data = tensor([])
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)
