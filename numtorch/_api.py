"""Public functions from the op registry: ``numtorch.<name>``, submodules, methods."""

from __future__ import annotations

import importlib

from ._core.op import REGISTRY
from ._core.tensor import Tensor


def install(namespace: dict) -> None:
    """Bind every op's function under its public name (``api``), then Tensor methods.

    Op modules may also define ``API`` ({dotted public name: function}) for functions
    that are not single ops, and ``TENSOR_METHODS`` ({name: function or property}).
    """
    from . import _methods

    for op in REGISTRY.values():
        api = op.api
        if api.startswith("Tensor.") or op.name != api.split(".")[-1]:
            continue
        if "." in api:
            mod, name = api.rsplit(".", 1)
            target = importlib.import_module(f"numtorch.{mod}").__dict__
        else:
            target, name = namespace, api
        target.setdefault(name, op.fn)
    from . import ops

    for mod in ops.MODULES:
        for path, fn in getattr(mod, "API", {}).items():
            if "." in path:
                sub, name = path.rsplit(".", 1)
                importlib.import_module(f"numtorch.{sub}").__dict__[name] = fn
            else:
                namespace[path] = fn
    _methods.install()
    for mod in ops.MODULES:
        for name, fn in getattr(mod, "TENSOR_METHODS", {}).items():
            setattr(Tensor, name, fn)
