"""``trace``: a function or module run once on example inputs, then kept as Python and
run through ``numtorch.compile`` (whose guards stand for the trace's fixed shapes)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from .._core.tensor import Tensor
from ..nn.modules.module import Module
from ._deprecation import warn_deprecated
from ._script import RecursiveScriptModule, ScriptFunction, ScriptModule

__all__ = [
    "TopLevelTracedModule",
    "TracedModule",
    "TracerWarning",
    "TracingCheckError",
    "is_tracing",
    "trace",
    "trace_module",
]

_TRACING = [0]  # how many traces are running their example inputs


class TracerWarning(Warning):
    pass


class TracingCheckError(Exception):
    def __init__(self, graph_diff_error, tensor_compare_error, extra_msg=None) -> None:
        self.message = "Tracing failed sanity checks!\n"
        if extra_msg is not None:
            self.message += extra_msg + "\n"
        for part in (graph_diff_error, tensor_compare_error):
            if part is not None:
                self.message += part + "\n"
        super().__init__(self.message)


class TracedModule(RecursiveScriptModule):
    """A traced submodule (torch.jit.TracedModule)."""


class TopLevelTracedModule(TracedModule):
    """The module ``trace`` returns (torch.jit.TopLevelTracedModule)."""


def is_tracing() -> bool:
    """Whether a ``trace`` is running its example inputs now."""
    return _TRACING[0] > 0


def _as_tuple(example_inputs: Any) -> tuple:
    if isinstance(example_inputs, (Tensor, dict)):
        return (example_inputs,)
    return example_inputs if isinstance(example_inputs, tuple) else tuple(example_inputs)


def _run(fn: Callable, example_inputs: Any, kwarg_inputs: bool) -> None:
    """Run ``fn`` on the example inputs, as tracing does (its errors propagate)."""
    _TRACING[0] += 1
    try:
        if kwarg_inputs:
            fn(**example_inputs)
        else:
            fn(*_as_tuple(example_inputs))
    finally:
        _TRACING[0] -= 1


def trace(
    func: Callable,
    example_inputs: Any = None,
    optimize: Any = None,
    check_trace: bool = True,
    check_inputs: Any = None,
    check_tolerance: float = 1e-5,
    strict: bool = True,
    _force_outplace: bool = False,
    _module_class: Any = None,
    _compilation_unit: Any = None,
    example_kwarg_inputs: dict | None = None,
    _store_inputs: bool = True,
) -> Any:
    """``func`` run on ``example_inputs`` (or ``example_kwarg_inputs``), returned as a
    ``ScriptFunction``, or a module as a ``TopLevelTracedModule``."""
    warn_deprecated("trace", or_export=True)
    if isinstance(func, ScriptModule):
        warnings.warn(
            "The input to trace is already a ScriptModule, tracing it is a no-op. Returning "
            "the object as is.",
            stacklevel=2,
        )
        return func
    module = func if isinstance(func, Module) else None
    bound = getattr(func, "__self__", None)
    if module is None and isinstance(bound, Module):
        if getattr(func, "__name__", None) != "forward":
            raise AttributeError(
                "trace doesn't support compiling individual module's functions.\n"
                "Please use trace_module"
            )
        module = bound
    if module is not None:
        if example_inputs is None:
            if not isinstance(example_kwarg_inputs, dict):
                raise RuntimeError("example_kwarg_inputs should be a dict")
            example_inputs = example_kwarg_inputs
        return _trace_module(
            module, {"forward": example_inputs}, isinstance(example_kwarg_inputs, dict)
        )
    kwarg_inputs = isinstance(example_kwarg_inputs, dict)
    _run(func, example_kwarg_inputs if kwarg_inputs else example_inputs, kwarg_inputs)
    return ScriptFunction(func)


def trace_module(
    mod: Module,
    inputs: dict,
    optimize: Any = None,
    check_trace: bool = True,
    check_inputs: Any = None,
    check_tolerance: float = 1e-5,
    strict: bool = True,
    _force_outplace: bool = False,
    _module_class: Any = None,
    _compilation_unit: Any = None,
    example_inputs_is_kwarg: bool = False,
    _store_inputs: bool = True,
) -> Any:
    """``mod`` with each named method run on its example inputs, returned as a
    ``TopLevelTracedModule``."""
    return _trace_module(mod, inputs, example_inputs_is_kwarg)


def _trace_module(mod: Module, inputs: dict, kwarg_inputs: bool) -> Any:
    warn_deprecated("trace_method", or_export=True)
    if not isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    for name, example in inputs.items():
        _run(mod if name == "forward" else getattr(mod, name), example, kwarg_inputs)
    return TopLevelTracedModule._wrap(mod, TracedModule)
