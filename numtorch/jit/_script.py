"""``script``: a function or module kept as Python and run through ``numtorch.compile``.

A scripted module (``RecursiveScriptModule``) shares its original's parameters and buffers,
wraps each submodule the same way, and runs the original class's methods with itself as
``self``. A scripted function is a ``ScriptFunction``. Nothing is serialized: saving
raises (``_serialization``)."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any

from .. import _compile
from .._dynamo.compiled_autograd import _Compiler
from ..nn.modules.module import Module
from ._deprecation import warn_deprecated
from ._serialization import unsupported

__all__ = [
    "CompilationUnit",
    "RecursiveScriptModule",
    "ScriptFunction",
    "ScriptModule",
    "ScriptWarning",
    "script",
    "script_method",
]


class ScriptWarning(Warning):
    pass


def compiled(fn: Callable, module: Module | None = None) -> Callable:
    """``fn`` through numtorch.compile; a call it cannot compile runs eagerly, silently
    (TorchScript would have compiled it)."""
    frame = _compile._compiled(fn, _Compiler(_compile._identity, True), False, module, None)
    frame.warned = True
    return frame


def _source(fn: Callable) -> str:
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return ""


class ScriptFunction:
    """A scripted or traced function (torch.jit.ScriptFunction): calls run ``fn``, compiled."""

    def __init__(self, fn: Callable) -> None:
        self._fn = fn
        self._call = compiled(fn)
        self.name = getattr(fn, "__name__", type(fn).__name__)
        self.qualified_name = f"{getattr(fn, '__module__', '__main__')}.{self.name}"
        self.__doc__ = getattr(fn, "__doc__", None)

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    @property
    def code(self) -> str:
        """The function's Python source (TorchScript's is its own)."""
        return _source(self._fn)

    def save(self, f, _extra_files=None) -> None:
        raise unsupported("ScriptFunction.save")


ScriptFunction.__module__ = "numtorch.jit"


class ScriptModule(Module):
    """A module of TorchScript (torch.jit.ScriptModule); a subclass runs as a Module."""

    def save(self, f, _extra_files=None) -> None:
        raise unsupported("ScriptModule.save")

    def save_to_buffer(self, _extra_files=None) -> bytes:
        raise unsupported("ScriptModule.save_to_buffer")

    def __reduce__(self):
        raise unsupported("pickling a ScriptModule")


class RecursiveScriptModule(ScriptModule):
    """A module made by ``script``: the original's parameters and buffers (shared), its
    submodules wrapped alike, its other attributes copied, its methods (those of its class,
    which this one's class derives from) run with this as ``self``."""

    @classmethod
    def _wrap(cls, original: Module, child: type | None = None) -> RecursiveScriptModule:
        """``original`` as an instance of ``cls`` (made a subclass of its class)."""
        if isinstance(original, ScriptModule):
            return original
        self = object.__new__(_derived(cls, type(original)))
        d = self.__dict__
        for k, v in original.__dict__.items():
            if k not in ("_parameters", "_buffers", "_modules"):
                d[k] = v  # flags, constants, hook dicts: copied as TorchScript does
        d["_parameters"] = original._parameters
        d["_buffers"] = original._buffers
        wrap = (child or cls)._wrap
        d["_modules"] = {n: m if m is None else wrap(m) for n, m in original._modules.items()}
        d["_original_class"] = type(original)
        d["original_name"] = type(original).__name__
        d["_call"] = compiled(self._forward, self)
        return self

    def forward(self, *args, **kwargs):
        return self.__dict__["_call"](*args, **kwargs)

    def _forward(self, *args, **kwargs):
        return self.__dict__["_original_class"].forward(self, *args, **kwargs)

    def extra_repr(self) -> str:
        return f"original_name={self.original_name}"

    @property
    def code(self) -> str:
        """The forward's Python source (TorchScript's is its own)."""
        return _source(self.__dict__["_original_class"].forward)


_DERIVED: dict = {}


def _derived(base: type, cls: type) -> type:
    """``base`` with ``cls``'s methods behind its own, named as ``base``."""
    out = _DERIVED.get((base, cls))
    if out is None:
        names = {"__module__": base.__module__, "__qualname__": base.__qualname__}
        out = _DERIVED[base, cls] = type(base.__name__, (base, cls), names)
    return out


def script_method(fn: Callable) -> Callable:
    """Mark a method of a ScriptModule subclass for compiling; it runs as Python."""
    warn_deprecated("script_method", or_export=True)
    return fn


class CompilationUnit:
    """A unit of TorchScript source: numtorch compiles none."""

    def __init__(self, lang: str | None = None, _frames_up: int = 0) -> None:
        if lang is not None:
            raise RuntimeError("numtorch cannot compile TorchScript source text")


def script(
    obj: Any,
    optimize: Any = None,
    _frames_up: int = 0,
    _rcb: Any = None,
    example_inputs: Any = None,
) -> Any:
    """A module as a ``RecursiveScriptModule``, a function as a ``ScriptFunction``; a class
    and what is already scripted come back as they are."""
    warn_deprecated("script", or_export=True)
    if optimize is not None:
        warnings.warn(
            "`optimize` is deprecated and has no effect. "
            "Use `with torch.jit.optimized_execution()` instead",
            FutureWarning,
            stacklevel=2,
        )
    if isinstance(obj, (ScriptModule, ScriptFunction)) or isinstance(obj, type):
        return obj
    if isinstance(obj, Module):
        return RecursiveScriptModule._wrap(obj)
    if not callable(obj):
        raise RuntimeError(f"Type '{type(obj).__name__}' cannot be compiled")
    return ScriptFunction(obj)
