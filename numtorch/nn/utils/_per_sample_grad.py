"""torch.nn.utils._per_sample_grad: call_for_per_sample_grads, a module's forward after
which backward fills each trainable parameter's ``grad_sample`` with one gradient per
sample of the batch."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable

from ..._core.pytree import tree_flatten
from ..._core.tensor import Tensor
from ...func._module import functional_call
from ..modules.module import Module
from ._expanded_weights.expanded_weights_impl import ExpandedWeight
from ._expanded_weights.layers import per_sample_forward

__all__ = ["call_for_per_sample_grads"]


def _batch_size_of(args: tuple, kwargs: dict, batch_first: bool) -> int:
    """The batch size all tensors among args and kwargs agree on."""
    size = None
    for leaf in tree_flatten((args, kwargs))[0]:
        if not isinstance(leaf, Tensor):
            continue
        this = leaf.shape[0] if batch_first else leaf.shape[1]
        if size is not None and size != this:
            raise RuntimeError(
                "When computing batch size, found at least one input with batch size "
                f"{size} and one with batch size {this}. Please specify it explicitly using "
                "the batch size kwarg in call_for_per_sample_grads"
            )
        size = this
    if size is None:
        raise RuntimeError(
            "Unable to find a tensor in the passed args and kwargs. They may not be "
            "pytree-able and so ExpandedWeights cannot compute the batch size from the "
            "inputs. Please specify it explicitly"
        )
    return size


@contextlib.contextmanager
def _per_sample_forwards(module: Module):
    """Each submodule that holds a trainable parameter runs its per-sample forward."""
    owners = [
        m
        for m in module.modules()
        if any(p is not None and p.requires_grad for p in m._parameters.values())
    ]
    saved = [m.__dict__.get("forward") for m in owners]
    try:
        for m in owners:
            m.__dict__["forward"] = per_sample_forward(m)
        yield
    finally:
        for m, old in zip(owners, saved):
            if old is None:
                del m.__dict__["forward"]
            else:
                m.__dict__["forward"] = old


def call_for_per_sample_grads(
    module: Module,
    *,
    batch_size: int | None = None,
    loss_reduction: str = "sum",
    batch_first: bool = True,
) -> Callable:
    """module's forward, after which backward sets ``grad_sample`` (batch first) on each
    parameter that requires grad instead of ``grad``; with ``loss_reduction="mean"`` the
    per-sample gradients are scaled by the batch size."""
    if loss_reduction not in ("sum", "mean"):
        raise RuntimeError(
            f"Expected loss_reduction argument to be sum or mean, got {loss_reduction}"
        )
    if not isinstance(module, Module):
        raise RuntimeError(f"Module passed must be nn.Module, got {type(module).__name__}")
    if not (batch_size is None or isinstance(batch_size, int)):
        raise RuntimeError(
            f"Batch size passed must be None or an integer, got {type(batch_size).__name__}"
        )
    if batch_size is not None and batch_size < 1:
        raise RuntimeError(f"Batch size must be positive, got {batch_size}")
    for weight in module.parameters():
        if getattr(weight, "grad_sample", None) is not None:
            raise RuntimeError(
                "Current Expanded Weights accumulates the gradients, which will be incorrect "
                "for multiple calls without clearing gradients. Please clear out the "
                f"grad_sample parameter of {weight} or post an issue to pytorch/pytorch to "
                "prioritize correct behavior"
            )

    @functools.wraps(module.forward)
    def wrapper(*args, **kwargs):
        size = batch_size if batch_size is not None else _batch_size_of(args, kwargs, batch_first)
        params = {
            name: ExpandedWeight(p, size, loss_reduction) if p.requires_grad else p
            for name, p in module.named_parameters()
        }
        with _per_sample_forwards(module):
            return functional_call(module, params, args, kwargs)

    return wrapper
