"""The base of the layers that only store their constructor arguments and pass them on to
one ``nn.functional`` function (activations, losses), and the helper that gives each such
class PyTorch's own ``__init__``/``forward`` signature."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ..._core.tensor import Tensor
from .module import Module


def signed(qualname: str, params: str, body: str, returns: str = "None") -> Callable:
    """The function ``def <name>(<params>) -> <returns>: <body>``, compiled from its
    parameter list so that ``inspect.signature`` and Python's own argument errors read
    exactly as for a hand-written one (the way dataclasses build their ``__init__``)."""
    src = f"from __future__ import annotations\ndef _f({params}) -> {returns}:\n    {body}\n"
    ns: dict[str, Any] = {}
    exec(src, {}, ns)  # noqa: S102 - source built from our own literal tables
    fn = ns["_f"]
    fn.__name__ = qualname.rpartition(".")[2]
    fn.__qualname__ = qualname
    return fn


def _names(params: str) -> tuple[str, ...]:
    """The parameter names of a parameter list."""
    return tuple(inspect.signature(signed("_", params, "pass")).parameters)


class Forwarding(Module):
    """A layer whose ``forward`` is ``_fn(*inputs, **{name: self.name for name in _fwd})``:
    the constructor arguments are stored as attributes under their own names."""

    _fn: Callable
    _fwd: tuple[str, ...] = ()
    _params: tuple[str, ...] = ()
    _buffer_args: tuple[str, ...] = ()  # arguments registered as buffers (loss weights)

    def _setup(self, args: dict) -> None:
        """Module.__init__, then every constructor argument (``args`` as the generated
        ``__init__``'s ``locals()``) stored under its name."""
        Module.__init__(self)
        for name, value in args.items():
            if name in self._buffer_args:
                self.register_buffer(name, value)
            elif name not in ("self", "__class__"):
                setattr(self, name, value)
        self._post_init()

    def _post_init(self) -> None:
        """Argument checks and derived attributes of one layer (none by default)."""

    def _fwd_kwargs(self) -> dict:
        return {name: getattr(self, name) for name in self._fwd}

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(input, **self._fwd_kwargs())


def forwarding(
    base: type[Forwarding],
    name: str,
    fn: Callable,
    params: str | None,
    doc: str,
    *,
    inputs: str = "input: Tensor",
    fwd: tuple[str, ...] | None = None,
    module: str,
    **attrs: Any,
) -> type:
    """The class ``name(base)``: ``__init__(self, <params>)`` stores its arguments (base's
    ``__init__`` where params is None), ``forward(self, <inputs>)`` returns
    ``fn(<inputs>, **stored arguments)``; ``fwd`` names the stored arguments passed on (all
    but the legacy size_average/reduce by default); ``attrs`` are further class
    attributes."""
    names = base._params if params is None else _names(params)
    if fwd is None:
        fwd = tuple(n for n in names if n not in ("size_average", "reduce"))
    if params is not None:
        attrs["__init__"] = signed(f"{name}.__init__", f"self, {params}", "self._setup(locals())")
    call = f"return self._fn({', '.join(_names(inputs))}, **self._fwd_kwargs())"
    forward = signed(f"{name}.forward", f"self, {inputs}", call, "Tensor")
    ns = {
        "forward": forward,
        "__doc__": doc,
        "__module__": module,
        "__qualname__": name,
        "_fn": staticmethod(fn),
        "_fwd": fwd,
        "_params": names,
        **attrs,
    }
    return type(name, (base,), ns)
