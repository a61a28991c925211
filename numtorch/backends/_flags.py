"""Flag modules for ``numtorch.backends``: boolean flags checked as PyTorch's setters check
them, and ``flags(...)`` context managers that restore them on exit."""

from __future__ import annotations

import types
from contextlib import contextmanager


class _FlagModule(types.ModuleType):
    """A backend module whose boolean flags (``_BOOL_FLAGS``: attribute -> the name PyTorch's
    setter gives in its error) refuse anything but a bool, as PyTorch's setters do."""

    def __setattr__(self, name, value):
        setter = self.__dict__.get("_BOOL_FLAGS", {}).get(name)
        if setter is not None and not isinstance(value, bool):
            raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")
        super().__setattr__(name, value)


def _as_flag_module(module_name: str) -> None:
    import sys

    sys.modules[module_name].__class__ = _FlagModule


def _flags_context(module_name: str, names: tuple[str, ...], doc: str):
    """A ``flags(...)`` context manager for the module's attributes ``names``: the
    arguments that are not None are set (checked) on entry; all are restored on exit."""
    import sys

    @contextmanager
    def flags(**values):
        module = sys.modules[module_name]
        saved = {name: getattr(module, name) for name in names}
        try:
            for name, value in values.items():
                if value is not None:
                    setattr(module, name, value)
            yield
        finally:
            for name, value in saved.items():
                object.__setattr__(module, name, value)

    flags.__doc__ = doc
    return flags
