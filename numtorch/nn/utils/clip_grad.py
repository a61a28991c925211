"""Gradient clipping: by the total norm of all gradients, or elementwise by value.

Every function runs under no_grad.
``foreach`` is accepted for PyTorch's signature; every path here is the same.
"""

from __future__ import annotations

import functools
import types
import warnings
from collections.abc import Iterable

from ..._core.tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...ops.clamp import clamp
from ...ops.creation import tensor
from ...ops.reduction import vector_norm as _vector_norm
from ...ops.shape import stack as _stack

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_"]

_tensor_or_tensors = Tensor | Iterable[Tensor]


def _no_grad(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with no_grad():
            return func(*args, **kwargs)

    return wrapper


def _as_list(tensors: _tensor_or_tensors) -> list[Tensor]:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _grads(parameters: _tensor_or_tensors) -> list[Tensor]:
    return [p.grad for p in _as_list(parameters) if p.grad is not None]


@_no_grad
def _get_total_norm(
    tensors: _tensor_or_tensors,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The ``norm_type``-norm of all of ``tensors`` taken as one vector."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    device = tensors[0].device
    norms = [_vector_norm(t, norm_type).to(device) for t in tensors]
    total = _vector_norm(_stack(norms), norm_type)
    if error_if_nonfinite and bool(total.isnan() | total.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return total


@_no_grad
def _clip_grads_with_norm_(
    parameters: _tensor_or_tensors,
    max_norm: float,
    total_norm: Tensor,
    foreach: bool | None = None,
) -> None:
    """Scale the gradients in place by min(max_norm / (total_norm + 1e-6), 1)."""
    grads = _grads(parameters)
    max_norm = float(max_norm)
    if not grads:
        return
    coef = clamp(max_norm / (total_norm + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef.to(g.device))


@_no_grad
def clip_grad_norm_(
    parameters: _tensor_or_tensors,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scale the gradients in place so that their total norm is at most ``max_norm``;
    returns the total norm before clipping."""
    was_generator = isinstance(parameters, types.GeneratorType)
    parameters = _as_list(parameters)
    if was_generator and not parameters:
        warnings.warn(
            "`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3
        )
    total = _get_total_norm(_grads(parameters), norm_type, error_if_nonfinite, foreach)
    _clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(
    parameters: _tensor_or_tensors,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Deprecated alias of :func:`clip_grad_norm_`."""
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(
    parameters: _tensor_or_tensors, clip_value: float, foreach: bool | None = None
) -> None:
    """Clamp the gradients in place to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    for g in _grads(parameters):
        g.clamp_(min=-clip_value, max=clip_value)
