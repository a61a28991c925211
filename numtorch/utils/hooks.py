"""torch.utils.hooks: the handle that removes a registered hook, and the serialization
markers for tensor hooks."""

from __future__ import annotations

import warnings
from collections.abc import Callable

from .._core.tensor import Tensor
from ..nn.modules.module import RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks"]


def unserializable_hook(f: Callable) -> Callable:
    """Mark a hook as one that is not serialized, silencing warn_if_has_hooks for it."""
    f.__torch_unserializable__ = True
    return f


def _tensor_hooks(tensor: Tensor) -> list:
    # a leaf keeps its hooks; a non-leaf's sit on its grad_fn, keyed by output number
    fn = tensor.grad_fn
    if fn is None:
        return list(tensor.__dict__.get("_hooks") or ())
    return list((fn._tensor_pre_hooks or {}).get(tensor._out_nr, ()))


def warn_if_has_hooks(tensor: Tensor) -> None:
    """Warn for each backward hook on a tensor that serialization will drop."""
    for hook in _tensor_hooks(tensor):
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(
                f"backward hook {hook!r} on tensor will not be serialized.  If this is "
                "expected, you can decorate the function with "
                "@torch.utils.hooks.unserializable_hook to suppress this warning",
                stacklevel=2,
            )
