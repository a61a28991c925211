"""torch._dynamo.config: the compiler's settings, with PyTorch's names and defaults.

numtorch.compile traces and guards as it always does; these settings are kept so that
programs which read, set or patch them run (``config.verbose = True``). Setting or
reading a name PyTorch does not have raises its AttributeError.
"""

from __future__ import annotations

import contextlib
import sys
import types
from typing import Any

_DEFAULTS: dict[str, Any] = {
    "verbose": False,
    "suppress_errors": False,
    "cache_size_limit": 8,
    "recompile_limit": 8,
    "accumulated_cache_size_limit": 256,
    "accumulated_recompile_limit": 256,
    "fail_on_recompile_limit_hit": False,
    "error_on_recompile": False,
    "capture_scalar_outputs": False,
    "capture_dynamic_output_shape_ops": False,
    "capture_func_transforms": True,
    "automatic_dynamic_shapes": True,
    "assume_static_by_default": True,
    "dynamic_shapes": True,
    "specialize_int": False,
    "specialize_float": False,
    "force_parameter_static_shapes": True,
    "allow_unspec_int_on_nn_module": False,
    "optimize_ddp": True,
    "compiled_autograd": False,
    "guard_nn_modules": True,
    "skip_nnmodule_hook_guards": True,
    "raise_on_ctx_manager_usage": True,
    "replay_record_enabled": False,
    "use_lazy_graph_module": True,
}


def _missing(name: str) -> AttributeError:
    return AttributeError(f"torch._dynamo.config.{name} does not exist")


def __getattr__(name: str) -> Any:
    raise _missing(name)


def get_config_copy() -> dict[str, Any]:
    """The current value of every setting."""
    module = sys.modules[__name__]
    return {name: getattr(module, name) for name in _DEFAULTS}


def load_config(config: dict[str, Any]) -> None:
    """Set the settings named in ``config``."""
    module = sys.modules[__name__]
    for name, value in config.items():
        setattr(module, name, value)


def patch(arg1: str | dict | None = None, arg2: Any = None, **changes: Any):
    """A context manager (and decorator) that changes settings for its extent:
    ``patch("name", value)``, ``patch({"name": value})`` or ``patch(name=value)``."""
    if isinstance(arg1, str):
        changes = {arg1: arg2}
    elif isinstance(arg1, dict):
        changes = dict(arg1)
    return _Patch(changes)


class _Patch(contextlib.ContextDecorator):
    def __init__(self, changes: dict[str, Any]):
        self._changes = changes
        self._saved: list[dict[str, Any]] = []

    def __enter__(self) -> None:
        module = sys.modules[__name__]
        for name in self._changes:
            if name not in _DEFAULTS:
                raise _missing(name)
        self._saved.append({name: getattr(module, name) for name in self._changes})
        load_config(self._changes)

    def __exit__(self, *exc: object) -> None:
        load_config(self._saved.pop())


class _ConfigModule(types.ModuleType):
    """Refuses to set a name that is not a setting, as PyTorch's config module does."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _DEFAULTS and not name.startswith("__"):
            raise _missing(name)
        super().__setattr__(name, value)


globals().update(_DEFAULTS)
sys.modules[__name__].__class__ = _ConfigModule
