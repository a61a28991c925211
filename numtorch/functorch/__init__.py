"""functorch: the pre-2.0 names of the function transforms, kept as PyTorch keeps them
(each warns that it moved to torch.func), and make_functional and its kin."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .. import func as _func
from .. import nn
from ..func import _make_functional as _nn_impl
from ..func._make_functional import FunctionalModule, FunctionalModuleWithBuffers
from ..torch_version import __version__ as __version__  # functorch's is torch's


def _warn_deprecated(api: str, new_api: str | None = None) -> None:
    new_api = new_api or f"torch.func.{api}"
    warnings.warn(
        "We've integrated functorch into PyTorch. As the final step of the integration, "
        f"`functorch.{api}` is deprecated as of PyTorch 2.0 and will be deleted in a future "
        f"version of PyTorch >= 2.3. Please use `{new_api}` instead; see the PyTorch 2.0 "
        "release notes and/or the `torch.func` migration guide for more details "
        "https://pytorch.org/docs/main/func.migrating.html",
        FutureWarning,
        stacklevel=3,
    )


def vmap(
    func: Callable,
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable:
    """torch.vmap, under its old name."""
    _warn_deprecated("vmap", "torch.vmap")
    return _func.vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)


def grad(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """torch.func.grad, under its old name."""
    _warn_deprecated("grad")
    return _func.grad(func, argnums, has_aux)


def grad_and_value(
    func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable:
    """torch.func.grad_and_value, under its old name."""
    _warn_deprecated("grad_and_value")
    return _func.grad_and_value(func, argnums, has_aux)


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> Any:
    """torch.func.vjp, under its old name."""
    _warn_deprecated("vjp")
    return _func.vjp(func, *primals, has_aux=has_aux)


def jvp(
    func: Callable, primals: Any, tangents: Any, *, strict: bool = False, has_aux: bool = False
) -> Any:
    """torch.func.jvp, under its old name."""
    _warn_deprecated("jvp")
    return _func.jvp(func, primals, tangents, strict=strict, has_aux=has_aux)


def jacrev(
    func: Callable,
    argnums: int | tuple[int, ...] = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
    _preallocate_and_copy: bool = False,
) -> Callable:
    """torch.func.jacrev, under its old name."""
    _warn_deprecated("jacrev")
    return _func.jacrev(func, argnums, has_aux=has_aux, chunk_size=chunk_size)


def jacfwd(
    func: Callable,
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    *,
    randomness: str = "error",
) -> Callable:
    """torch.func.jacfwd, under its old name."""
    _warn_deprecated("jacfwd")
    return _func.jacfwd(func, argnums, has_aux, randomness=randomness)


def hessian(func: Callable, argnums: int = 0) -> Callable:
    """torch.func.hessian, under its old name."""
    _warn_deprecated("hessian")
    return _func.hessian(func, argnums=argnums)


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """torch.func.functionalize, under its old name."""
    _warn_deprecated("functionalize")
    return _func.functionalize(func, remove=remove)


def make_functional(model: nn.Module, disable_autograd_tracking: bool = False) -> Any:
    """(func, params) of a module without buffers; see torch.func.functional_call."""
    _warn_deprecated("make_functional", "torch.func.functional_call")
    return _nn_impl.make_functional(model, disable_autograd_tracking)


def make_functional_with_buffers(model: nn.Module, disable_autograd_tracking: bool = False) -> Any:
    """(func, params, buffers) of a module; see torch.func.functional_call."""
    _warn_deprecated("make_functional_with_buffers", "torch.func.functional_call")
    return _nn_impl.make_functional_with_buffers(model, disable_autograd_tracking)


def combine_state_for_ensemble(models: Sequence[nn.Module]) -> Any:
    """(func, params, buffers) of an ensemble; see torch.func.stack_module_state."""
    _warn_deprecated("combine_state_for_ensemble", "torch.func.stack_module_state")
    return _nn_impl.combine_state_for_ensemble(models)


__all__ = [
    "FunctionalModule",
    "FunctionalModuleWithBuffers",
    "combine_state_for_ensemble",
    "functionalize",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "make_functional",
    "make_functional_with_buffers",
    "vjp",
    "vmap",
]
