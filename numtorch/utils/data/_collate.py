"""default_collate and default_convert (torch.utils.data): samples into batches of tensors."""

from __future__ import annotations

import collections.abc
import copy
import re
from typing import Any

import numpy as np

from ..._core import dtype as dt
from ..._core.tensor import Tensor
from ...ops import shape
from ...ops.creation import as_tensor, tensor

# NumPy dtypes of strings and objects: such arrays are not made tensors.
_STR_OR_OBJECT = re.compile(r"[SaUO]")
_ERROR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _is_numpy(x) -> bool:
    kind = type(x)
    return kind.__module__ == "numpy" and kind.__name__ not in ("str_", "string_")


def _rebuild(like, items: dict | list):
    """A container of ``like``'s type holding ``items`` (a plain dict/list when the type
    cannot be built that way)."""
    kind = type(like)
    try:
        if isinstance(like, collections.abc.Mapping):
            if isinstance(like, collections.abc.MutableMapping):
                out = copy.copy(like)
                out.update(items)
                return out
            return kind(items)
        if isinstance(like, collections.abc.MutableSequence):
            out = copy.copy(like)
            for i, v in enumerate(items):
                out[i] = v
            return out
        return kind(items)
    except TypeError:
        return items


def default_convert(data: Any) -> Any:
    """NumPy arrays and scalars inside ``data`` (nested in mappings, namedtuples and
    sequences) made tensors; everything else unchanged (the collate of unbatched loading)."""
    if isinstance(data, Tensor):
        return data
    if _is_numpy(data):
        if isinstance(data, np.ndarray) and _STR_OR_OBJECT.search(data.dtype.str):
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild(data, {k: default_convert(data[k]) for k in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild(data, [default_convert(d) for d in data])
    return data


def default_collate(batch: list | tuple) -> Any:
    """A list of samples as one batch: tensors stacked along a new first dimension, NumPy
    arrays and numbers made tensors (floats float64, ints int64), strings kept as a list,
    and mappings, namedtuples and sequences collated field by field."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return shape.stack(batch, 0)
    if isinstance(elem, np.ndarray):
        if _STR_OR_OBJECT.search(elem.dtype.str):
            raise TypeError(_ERROR.format(elem.dtype))
        return default_collate([as_tensor(b) for b in batch])
    if isinstance(elem, (np.bool_, np.number, np.object_)):
        return as_tensor(batch)
    if isinstance(elem, float):
        return tensor(batch, dtype=dt.float64)
    if isinstance(elem, int):  # bool included: a bool tensor
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild(elem, {k: default_collate([d[k] for d in batch]) for k in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(s) for s in zip(*batch)]
        return columns if isinstance(elem, tuple) else _rebuild(elem, columns)
    raise TypeError(_ERROR.format(type(elem)))
