"""Tensors as MPI buffers: argument checks, contiguous NumPy arrays, ranks within a group."""

from __future__ import annotations

import numpy as np

from .._core.interpreter import WrapperTensor
from .._core.tensor import Tensor
from ..func._batched import BatchedTensor
from . import _groups


def check_tensor(param, name: str) -> None:
    if not isinstance(param, Tensor):
        raise TypeError(
            f"""Invalid function argument. Expected parameter `{name}` of type torch.Tensor
             but got {type(param)} instead."""
        )


def check_tensor_list(param, name: str) -> None:
    if not isinstance(param, list):
        raise TypeError(
            f"""Invalid function argument. Expected parameter `{name}` of type List[torch.Tensor]
             but got {type(param)} instead."""
        )
    if not all(isinstance(p, Tensor) for p in param):
        raise TypeError(
            f"""Invalid function argument. Expected parameter `{name}` of type List[torch.Tensor]
             but got {type(param)} with elements of type {[type(p) for p in param]}."""
        )


def array(t: Tensor, aten: str) -> np.ndarray:
    """The NumPy array behind a tensor, through grad and jvp wrappers (a collective works on
    the values, outside autograd, as PyTorch's c10d ops do); vmap has no batch rule."""
    while isinstance(t, WrapperTensor):
        if isinstance(t, BatchedTensor):
            raise RuntimeError(
                f"Batching rule not implemented for c10d::{aten}. We could not generate a fallback."
            )
        t = t._inner
    data = t._data
    if not isinstance(data, np.ndarray):
        raise NotImplementedError(
            "numtorch.distributed runs on CPU tensors; move device tensors to the CPU first"
        )
    if t._conj:
        data = np.conj(data)
    return data


def contiguous(a: np.ndarray) -> np.ndarray:
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def as_bytes(a: np.ndarray) -> np.ndarray:
    """A contiguous array's bytes, as a flat uint8 view (the transport of non-reducing
    collectives and point-to-point messages: any dtype, no datatype mapping)."""
    return contiguous(a).reshape(-1).view(np.uint8)


def write(a: np.ndarray, values: np.ndarray) -> None:
    """Write a result into a tensor's array in place."""
    if values is not a:
        a[...] = values.reshape(a.shape)


def group_rank(pg, global_rank, group_rank_, name: str) -> int:
    """The rank within ``pg`` that ``name``/``group_name`` give (global or group rank)."""
    if group_rank_ is not None:
        if global_rank is not None:
            raise ValueError("Can't specify both group_rank and global_rank")
        r = group_rank_
    else:
        if global_rank is None:
            raise ValueError("Must specify global_rank or group_rank")
        r = global_rank if pg is _groups._state.world else _groups.get_group_rank(pg, global_rank)
    if r < 0 or r >= pg.size():
        raise RuntimeError(f"Invalid {name} rank: {r} (group of size {pg.size()})")
    return r


def not_self(pg, r: int, kind: str) -> None:
    if pg.rank() == r:
        raise ValueError(
            f"Invalid {kind} rank: {kind} rank should not be the same as the rank of the "
            "current process."
        )


def root_of(pg, rank, group_rank_) -> int:
    """The root a gather or scatter names (group rank 0 where neither rank is given)."""
    if rank is None and group_rank_ is None:
        return 0
    return group_rank(pg, rank, group_rank_, "root")


def check_root_list(mine: bool, given: bool, name: str, role: str) -> None:
    """PyTorch's checks of the list that only the root of a gather or scatter passes."""
    if mine and not given:
        raise ValueError(f"Argument ``{name}`` must be specified on {role} rank.")
    if not mine and given:
        raise ValueError(f"Argument ``{name}`` must NOT be specified on non-{role} ranks.")


def peer(pg, rank, group_rank_, kind: str) -> int:
    """The group rank of a point-to-point partner (``kind``: destination or source)."""
    r = group_rank(pg, rank, group_rank_, kind)
    not_self(pg, r, kind)
    return r


def source(pg, rank, group_rank_, any_source) -> int:
    """The sender a receive names, ``any_source`` where neither rank is given."""
    if rank is None and group_rank_ is None:
        return any_source
    return peer(pg, rank, group_rank_, "source")
