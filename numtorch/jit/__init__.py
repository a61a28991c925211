"""torch.jit: TorchScript's API over numtorch.compile. ``script`` and ``trace`` keep the
code as Python and run it compiled; the annotations run as PyTorch runs them eagerly;
TorchScript archives (``save``/``load``) are refused."""

from __future__ import annotations

from ._async import Future, fork, wait
from ._freeze import freeze, optimize_for_inference
from ._markers import (
    Attribute,
    Final,
    annotate,
    export,
    ignore,
    interface,
    is_scripting,
    isinstance,
    unused,
)
from ._script import (
    CompilationUnit,
    RecursiveScriptModule,
    ScriptFunction,
    ScriptModule,
    ScriptWarning,
    script,
    script_method,
)
from ._serialization import load, save
from ._trace import (
    TopLevelTracedModule,
    TracedModule,
    TracerWarning,
    TracingCheckError,
    is_tracing,
    trace,
    trace_module,
)

__all__ = [
    "Attribute",
    "CompilationUnit",
    "Final",
    "Future",
    "RecursiveScriptModule",
    "ScriptFunction",
    "ScriptModule",
    "ScriptWarning",
    "TopLevelTracedModule",
    "TracedModule",
    "TracerWarning",
    "TracingCheckError",
    "annotate",
    "export",
    "fork",
    "freeze",
    "ignore",
    "interface",
    "is_scripting",
    "is_tracing",
    "isinstance",
    "load",
    "optimize_for_inference",
    "save",
    "script",
    "script_method",
    "trace",
    "trace_module",
    "unused",
    "wait",
]

_fork = fork
_wait = wait
