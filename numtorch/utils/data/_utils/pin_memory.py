"""torch.utils.data._utils.pin_memory: the DataLoader's batches copied to pinned memory."""

from __future__ import annotations

import collections.abc
import copy
from typing import Any

__all__ = ["pin_memory"]


def pin_memory(data: Any, device: str | None = None) -> Any:
    """``data`` with every tensor (and anything with a ``pin_memory`` method) pinned, inside
    mappings, namedtuples and sequences of the same types where they can be rebuilt."""
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        pinned = {k: pin_memory(v, device) for k, v in data.items()}
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update(pinned)
                return clone
            return type(data)(pinned)
        except TypeError:
            return pinned
    if isinstance(data, tuple):
        items = [pin_memory(v, device) for v in data]
        return type(data)(*items) if hasattr(data, "_fields") else type(data)(items)
    if isinstance(data, collections.abc.Sequence):
        items = [pin_memory(v, device) for v in data]
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, v in enumerate(items):
                    clone[i] = v
                return clone
            return type(data)(items)
        except TypeError:
            return items
    return data
