"""LazyModuleMixin: layers whose parameter shapes are inferred from their first input."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from ...autograd.grad_mode import no_grad
from ...ops.creation import empty
from ..parameter import UninitializedParameter, is_lazy
from .utils import _DeviceLike, _DTypeLike


class LazyModuleMixin:
    """Mixin for modules whose parameters start as ``UninitializedParameter``: the first
    call runs ``initialize_parameters(*args, **kwargs)`` (a forward pre-hook), then the
    module becomes ``cls_to_become``."""

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._load_hook = self.register_load_state_dict_pre_hook(type(self)._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(
            type(self)._infer_parameters, with_kwargs=True
        )

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        # uninitialized parameters enter the state dict as they are (detach would lose them)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = (
                    param if is_lazy(param) or keep_vars else param.detach()
                )
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _apply(self, fn: Callable, recurse: bool = True) -> Any:
        # to(dtype) / double() / ... before the first call set the dtype (and device) that
        # the uninitialized entries will materialize with
        for p in itertools.chain(self._parameters.values(), self._buffers.values()):
            if is_lazy(p):
                with no_grad():
                    new = fn(empty(0, dtype=p._pending_dtype, device=p.device))
                p._data, p._pending_dtype = new._data, new.dtype
        return super()._apply(fn, recurse)

    def _lazy_load_hook(
        self,
        state_dict: dict,
        prefix: str,
        local_metadata: dict,
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        """Materialize the uninitialized entries that the state dict gives a shape."""
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None:
                value = state_dict[key]
                if is_lazy(param) and not is_lazy(value):
                    param.materialize(value.shape)

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Give the uninitialized parameters their shapes from the first input."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}"
        )

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module is still uninitialized."""
        return any(
            is_lazy(p) for p in itertools.chain(self._parameters.values(), self._buffers.values())
        )

    def _infer_parameters(self, args: tuple, kwargs: dict | None = None) -> None:
        self.initialize_parameters(*args, **(kwargs or {}))
        if self.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        self._initialize_hook.remove()
        self._load_hook.remove()
        delattr(self, "_initialize_hook")
        delattr(self, "_load_hook")
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become

    def _replicate_for_data_parallel(self) -> Any:
        raise RuntimeError(
            "Modules with uninitialized parameters can't be used with `DataParallel`. "
            "Run a dummy forward pass to correctly initialize the modules"
        )


def _lazy_weight_and_bias(module: Any, bias: bool, device: _DeviceLike, dtype: _DTypeLike) -> None:
    """Replaces the placeholder ``weight`` (and ``bias``, if any) by uninitialized ones."""
    module.weight = UninitializedParameter(device=device, dtype=dtype)
    if bias:
        module.bias = UninitializedParameter(device=device, dtype=dtype)


def _materialize_weight_and_bias(module: Any, shape: tuple[int, ...], out_features: int) -> None:
    """Gives the uninitialized ``weight`` the shape ``shape`` (``bias``: out_features) and
    initializes them with ``reset_parameters``."""
    with no_grad():
        module.weight.materialize(shape)
        if module.bias is not None:
            module.bias.materialize((out_features,))
        module.reset_parameters()
