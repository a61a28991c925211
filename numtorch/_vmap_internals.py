"""torch._vmap_internals: PyTorch's first vmap (``_vmap``), which libraries still import,
as a thin layer over ``numtorch.func.vmap``.

It differs from ``torch.vmap`` as PyTorch's does: positional arguments only, outputs must be
a Tensor or a tuple of Tensors (``allow_none_pass_through`` lets Nones through), and
``out_dims`` is an int or a tuple of ints.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from ._core.tensor import Tensor
from .func._vmap import vmap_call

__all__ = ["vmap"]


def _name(func: Callable) -> str:
    return getattr(func, "__name__", repr(func))


def _check_out_dims(out_dims: Any, func: Callable) -> None:
    if isinstance(out_dims, int):
        return
    if not isinstance(out_dims, tuple) or not all(isinstance(d, int) for d in out_dims):
        raise ValueError(
            f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int or "
            f"a tuple of int representing where in the outputs the vmapped dimension "
            f"should appear."
        )


def _check_outputs(outputs: Any, func: Callable) -> None:
    if isinstance(outputs, Tensor):
        return
    if not isinstance(outputs, tuple):
        raise ValueError(
            f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type "
            f"{type(outputs)} as the return."
        )
    for idx, output in enumerate(outputs):
        if not isinstance(output, Tensor):
            raise ValueError(
                f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got "
                f"type {type(output)} for return {idx}."
            )


def _vmap(
    func: Callable,
    in_dims: Any = 0,
    out_dims: Any = 0,
    allow_none_pass_through: bool = False,
) -> Callable:
    """``func`` mapped over dimension ``in_dims`` of its positional arguments; the
    mapped dimension of each output sits at ``out_dims`` (torch._vmap_internals._vmap)."""

    @functools.wraps(func)
    def wrapped(*args: Any) -> Any:
        _check_out_dims(out_dims, func)

        @functools.wraps(func)  # vmap's error texts name ``func``
        def checked(*batched: Any) -> Any:
            outputs = func(*batched)
            if not allow_none_pass_through:
                _check_outputs(outputs, func)
            return outputs

        return vmap_call(
            checked, in_dims, out_dims, "error", None, args, {}, allow_none_pass_through, True
        )

    return wrapped


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0) -> Callable:
    """Deprecated: use ``torch.vmap`` (torch._vmap_internals.vmap)."""
    warnings.warn(
        "Please use `torch.vmap` instead of `torch._vmap_internals.vmap`.",
        FutureWarning,
        stacklevel=2,
    )
    return _vmap(func, in_dims, out_dims)
