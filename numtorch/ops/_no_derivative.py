"""Ops PyTorch has no derivative for: the name of their node, and their formulas, which
raise PyTorch's errors when a gradient or a tangent is asked of them."""

from __future__ import annotations

from collections.abc import Callable

from .._core.op import REGISTRY
from .._core.state import graph_tasks, state

# PyTorch's node for such an op (its class is named ``NotImplemented``)
NOT_IMPLEMENTED = "torch::autograd::NotImplemented"


def no_derivative(name: str) -> tuple[Callable, Callable]:
    """The vjp formula (for each input) and the jvp of the op registered as ``name`` (its
    aten name too): backward raises "derivative for aten::<name> is not implemented",
    forward mode PyTorch's NotImplementedError; for an in-place write they name the
    in-place overload (``aten::<name>_``)."""

    def vjp(g):
        task = graph_tasks[-1][0] if graph_tasks else None
        inplace = getattr(task and task.current, "_inplace", False)
        raise RuntimeError(
            f"derivative for aten::{name}{'_' if inplace else ''} is not implemented"
        )

    def jvp(tangents):
        inplace = state.inplace_op is not None and state.inplace_op is REGISTRY.get(name)
        raise NotImplementedError(
            f"Trying to use forward AD with aten::{name}{'_' * inplace} that does not support it."
        )

    return vjp, jvp
