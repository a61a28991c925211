"""TorchScript's annotations and decorators, which run eagerly as they do in PyTorch when
nothing is scripted: ``ignore``, ``unused``, ``export``, ``annotate``, ``Final``,
``is_scripting``, ``isinstance``, ``Attribute``, ``interface``."""

from __future__ import annotations

import builtins
import collections
import types
import typing
import warnings
from collections.abc import Callable
from typing import Any, Final

from ._deprecation import warn_deprecated

__all__ = [
    "Attribute",
    "Final",
    "FunctionModifiers",
    "annotate",
    "export",
    "ignore",
    "interface",
    "is_scripting",
    "isinstance",
    "unused",
]

Attribute = collections.namedtuple("Attribute", ["value", "type"])


class FunctionModifiers:
    """What a decorator tells the TorchScript compiler about a function."""

    UNUSED = "unused (ignored and replaced with raising of an exception)"
    IGNORE = "ignore (leave as a call to Python, cannot be torch.jit.save'd)"
    EXPORT = "export (compile this function even if nothing calls it)"
    DEFAULT = "default (compile if called from an exported function / forward)"


def _mark(fn, modifier: str):
    if builtins.isinstance(fn, property):
        for f in (fn.fget, fn.fset):
            if f is not None:
                f._torchscript_modifier = modifier
        return fn
    fn._torchscript_modifier = modifier
    return fn


def export(fn: Callable) -> Callable:
    """Mark a module method as an entry point of its scripted module; eagerly, ``fn``."""
    return _mark(fn, FunctionModifiers.EXPORT)


def unused(fn: Callable) -> Callable:
    """Mark a function the compiler leaves out; eagerly, ``fn``."""
    return _mark(fn, FunctionModifiers.UNUSED)


def ignore(drop=False, **kwargs) -> Callable:
    """Mark a function the compiler leaves to Python; usable bare or as ``ignore(drop)``."""
    if callable(drop):
        return _mark(drop, FunctionModifiers.IGNORE)
    if not builtins.isinstance(drop, bool):
        raise RuntimeError(
            f"Argument to @torch.jit.ignore must be a bool or a function but got {drop}"
        )
    drop_on_export = kwargs.pop("drop_on_export", None)
    if drop_on_export or drop:
        start = "ignore(drop_on_export=True)" if drop_on_export else "ignore(True)"
        warnings.warn(
            f"{start} has been deprecated. TorchScript will now drop the function "
            "call on compilation. Use torch.jit.unused now. {}",
            FutureWarning,
            stacklevel=2,
        )
        drop = drop or bool(drop_on_export)

    def decorator(fn):
        return _mark(fn, FunctionModifiers.UNUSED if drop else FunctionModifiers.IGNORE)

    return decorator


def is_scripting() -> bool:
    """Whether the code runs as TorchScript: never, in numtorch (scripted code runs as
    Python)."""
    return False


def annotate(the_type: Any, the_value: Any) -> Any:
    """``the_value``: a type hint for the TorchScript compiler."""
    return the_value


def isinstance(obj: Any, target_type: Any) -> bool:  # noqa: A001 - PyTorch's name
    """``builtins.isinstance`` that also takes typing containers (``List[int]``,
    ``Dict[str, Tensor]``, ``Optional[int]``, ``Tuple[...]``) and checks their items."""
    if builtins.isinstance(target_type, tuple):
        return any(isinstance(obj, t) for t in target_type)
    origin = typing.get_origin(target_type)
    if origin is None:
        return target_type is Any or builtins.isinstance(obj, target_type)
    args = typing.get_args(target_type)
    if origin is typing.Union or origin is types.UnionType:
        return any(isinstance(obj, t) for t in args)
    if not builtins.isinstance(obj, origin):
        return False
    if origin is list:
        return all(isinstance(v, args[0]) for v in obj) if args else True
    if origin is dict:
        return all(isinstance(k, args[0]) and isinstance(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        return len(obj) == len(args) and all(map(isinstance, obj, args))
    return True


def interface(obj: type) -> type:
    """Declare an interface type (a class of method signatures); eagerly, the class."""
    warn_deprecated("interface")
    if not builtins.isinstance(obj, type):
        raise RuntimeError("interface must be applied to a class")
    return obj
