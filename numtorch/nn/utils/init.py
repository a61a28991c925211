"""torch.nn.utils.init: skip_init, a module built without running its initializers."""

from __future__ import annotations

import inspect
from typing import Any

from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Module:
    """module_cls(*args, **kwargs) whose parameters and buffers hold unspecified values.

    numtorch has no meta device, so the module is built on its final device and its
    initializers do run; their values are simply not promised."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs["device"] = kwargs.get("device", "cpu")
    return module_cls(*args, **kwargs)
