"""Function transforms (torch.func)."""

from ._batched import (
    BatchedTensor,
    _is_vmap_fallback_enabled,
    _set_vmap_fallback_enabled,
    _set_vmap_fallback_warning_enabled,
)
from ._jvp import jvp
from ._vmap import vmap

__all__ = [
    "BatchedTensor",
    "_is_vmap_fallback_enabled",
    "_set_vmap_fallback_enabled",
    "_set_vmap_fallback_warning_enabled",
    "jvp",
    "vmap",
]
