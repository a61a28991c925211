"""How AccumulateGrad turns a leaf's first gradient into its ``.grad`` (PyTorch's
``accumulate_grad.h`` and ``grad_layout_contract.h``): the gradient itself (a detach) when
nothing else holds it and it is laid out as the leaf is, else a copy laid out as the leaf
(``new_empty_strided`` + ``copy_``), or a contiguous clone for a leaf with gaps or overlaps.

Without dispatch modes the engine copies the arrays directly (``copy_obeying``), with the
strides PyTorch's ``.grad`` has; with modes it makes the calls PyTorch makes, so that the
modes see them (``first_grad``)."""

from __future__ import annotations

import numpy as np

from .._core.device import gpu_of, xp_of
from .._core.memory_format import contiguous_format
from .._core.state import graph_tasks
from .._core.tensor import Tensor


def _element_strides(arr) -> tuple:
    item = arr.itemsize
    return tuple(s // item for s in arr.strides)


def non_overlapping_and_dense(shape: tuple, strides: tuple) -> bool:
    """Whether the elements fill a block of memory exactly once, in some dim order (PyTorch's
    ``is_non_overlapping_and_dense``; dims of size 0 or 1 do not count)."""
    if len(shape) == 1:
        return shape[0] < 2 or strides[0] == 1
    expected = 1
    for d in sorted((d for d in range(len(shape)) if shape[d] >= 2), key=strides.__getitem__):
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def obeys_layout_contract(g, var) -> bool:
    """Whether the array ``g`` may be ``var``'s gradient as it is: the same strides in every
    dim of size > 1 (and none 0 where the size is 1) for a dense ``var``, C-contiguous
    otherwise."""
    shape = var.shape
    vs = _element_strides(var)
    if not non_overlapping_and_dense(shape, vs):
        return bool(g.flags.c_contiguous)
    for n, gs, s in zip(g.shape, _element_strides(g), vs):
        if (gs != s) if n != 1 else gs == 0:
            return False
    return True


def copy_obeying(g, var):
    """A copy of the array ``g`` that obeys the contract for ``var``: laid out as ``g`` where
    ``g`` does (PyTorch keeps such a gradient itself), as ``var`` where ``var`` is dense,
    else C-contiguous; on ``g``'s own device."""
    if type(g) is np.ndarray:
        if g.flags.c_contiguous and var.flags.c_contiguous:  # (the common case)
            return g.copy()
        return _copy_obeying(np, g, var)
    with gpu_of(g):
        return _copy_obeying(xp_of(g), g, var)


def _copy_obeying(xp, g, var):
    if obeys_layout_contract(g, var):
        return g.copy(order="K")
    if non_overlapping_and_dense(var.shape, _element_strides(var)):
        out = xp.empty_like(var, dtype=g.dtype)  # (order "K": var's strides)
        out[...] = g
        return out
    return g.copy(order="C")


def stealable(g: Tensor) -> bool:
    """Whether nothing but the running backward pass's buffer for this leaf holds ``g``:
    not a gradient the caller passed (or the implicit one), not one still waiting in another
    node's buffer (PyTorch's use-count test: the gradient ``add`` passes to both operands
    is copied for the first leaf and taken by the second)."""
    if not graph_tasks:
        return True
    task = graph_tasks[-1][0]
    if id(g) in task.user_grads:
        return False
    for buf in task.buffers.values():
        for x in buf:
            if x is g:
                return False
    return True


def clone_obey_contract(g: Tensor, var: Tensor) -> Tensor:
    """PyTorch's ``clone_obey_contract``: ``g`` copied into a tensor laid out as ``var``
    (under grad mode the copy is a CopyBackwards node), or a contiguous clone."""
    if non_overlapping_and_dense(var._data.shape, _element_strides(var._data)):
        out = g.new_empty_strided(var.shape, var.stride(), dtype=g.dtype, device=g.device)
        return out.copy_(g)
    return g.clone(memory_format=contiguous_format)


def first_grad(var: Tensor, g: Tensor, create_graph: bool) -> Tensor:
    """A leaf's ``.grad`` from its first gradient, by the calls PyTorch makes (so that
    dispatch modes see them)."""
    if not create_graph and stealable(g) and obeys_layout_contract(g._data, var._data):
        return g.detach()
    return clone_obey_contract(g, var)
