"""numtorch.compile (torch.compile): a function or module whose backward passes run as
compiled autograd's generated code.

This increment compiles the backward half of a training step: the wrapped callable runs
eagerly, any backward pass inside it is compiled, and so is a later backward pass from
its outputs (``loss = model(x); loss.backward()``). A captured backward graph (what
``_enable(numtorch.compile)`` hands over) is already generated code and comes back as it
is.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from . import nn
from ._core.state import compiled_nodes
from ._core.tensor import Tensor
from ._dynamo import BACKENDS, compiled_autograd
from ._dynamo._capture import CapturedGraph
from ._dynamo.compiled_autograd import _Compiler
from ._dynamo.exc import InvalidBackend

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


def compile(  # noqa: A001 - PyTorch's name
    model: Callable | None = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: str | Callable | None = None,
    mode: str | None = None,
    options: dict | None = None,
    name: str | None = None,
    disable: bool = False,
) -> Callable:
    """``model`` with its backward passes compiled (see the module doc); with no model, a
    decorator."""
    if mode is not None and options is not None:
        raise RuntimeError(
            "Either mode or options can be specified, but both can't be specified at the same time."
        )
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if backend is None:
        backend = "inductor"
    if isinstance(backend, str) and backend not in BACKENDS:
        raise InvalidBackend(backend)
    if model is None:
        return functools.partial(
            compile, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
            options=options, name=name, disable=disable,
        )  # fmt: skip
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if disable or isinstance(model, CapturedGraph):
        return model
    compiler = _Compiler(backend if callable(backend) else _identity, dynamic is not False)
    if isinstance(model, nn.Module):
        return OptimizedModule(model, compiler)
    return _compiled(model, compiler)


def _identity(graph: CapturedGraph) -> CapturedGraph:
    return graph


def _compiled(fn: Callable, compiler: _Compiler) -> Callable:
    @functools.wraps(fn)
    def run(*args, **kwargs):
        with compiled_autograd._enable(compiler.fn, compiler.dynamic):
            out = fn(*args, **kwargs)
        _mark(out, compiler)
        return out

    return run


def _mark(out: Any, compiler: _Compiler) -> None:
    """Outputs' backward passes run compiled, wherever they are called."""
    if isinstance(out, Tensor):
        fn = out.grad_fn
        if fn is not None:
            fn._compiler = compiler
            compiled_nodes.add(fn)
    elif isinstance(out, (list, tuple)):
        for o in out:
            _mark(o, compiler)
    elif isinstance(out, dict):
        for o in out.values():
            _mark(o, compiler)


class OptimizedModule(nn.Module):
    """A module under compile: its calls are the original module's, compiled
    (torch._dynamo.eval_frame.OptimizedModule)."""

    def __init__(self, mod: nn.Module, compiler: _Compiler) -> None:
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_call"] = _compiled(mod.__call__, compiler)

    def forward(self, *args, **kwargs):
        return self.__dict__["_call"](*args, **kwargs)

    def __getattr__(self, name: str):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._orig_mod, name)
