"""Writing a result into an ``out=`` tensor, with PyTorch's checks of the write: autograd,
a written-to tensor whose elements share memory, an input partly overlapping it, the cast."""

from __future__ import annotations

import numpy as np

from .state import state
from .tensor import Tensor, bump_version, check_writable

INTERNAL_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


def internal_overlap(a) -> bool:
    """PyTorch's has_internal_overlap is YES: a non-empty array with a stride-0 dim of
    size > 1 (PyTorch lets the harder cases through)."""
    return a.size > 0 and any(s == 0 and n > 1 for n, s in zip(a.shape, a.strides))


def write_out(out, result, op=None, inputs=()):
    """Copy a result into an ``out=`` tensor (or tuple of tensors) and return it; ``op``
    and its ``inputs`` for PyTorch's check of an input partly overlapping ``out``."""
    if isinstance(out, (tuple, list)):
        for o in out:
            check_writable(o)
        for o, r in zip(out, result):
            write_out(o, r)
        return out
    check_writable(out)
    if state.grad_enabled and (out._rg or result._rg):
        raise RuntimeError(
            f"{_op_label(result)}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    data = out._data
    if 0 in data.strides and internal_overlap(data):
        raise RuntimeError(INTERNAL_OVERLAP)
    if op is not None and op.out_overlap_check:
        for a in inputs:
            for t in a if isinstance(a, (list, tuple)) else (a,):
                if (
                    isinstance(t, Tensor)
                    and t._ver is out._ver
                    and not t._level
                    and partial_overlap(out._data, t._data)
                ):
                    raise RuntimeError(OVERLAP)
    rd, od = result.dtype, out.dtype
    if rd != od and rd._kind > od._kind:
        raise RuntimeError(
            f"result type {rd.scalar_name} can't be cast to the desired output type "
            f"{od.scalar_name}"
        )
    if out._data.shape != result._data.shape:
        out._data = np.empty(result._data.shape, out._data.dtype)
    out._data[...] = result._data
    bump_version(out)
    return out


OVERLAP = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer "
    "to a single memory location. Please clone() the tensor before performing the operation."
)


def partial_overlap(a, b) -> bool:
    """PyTorch's partial overlap of two arrays: both dense (else it does not tell), sharing
    some bytes but not all of them in the same layout."""
    if a is b or type(a) is not np.ndarray or type(b) is not np.ndarray or not a.size or not b.size:
        return False
    if not np.may_share_memory(a, b) or not (_dense(a) and _dense(b)):
        return False
    a0, b0 = a.ctypes.data, b.ctypes.data
    a1, b1 = a0 + a.nbytes, b0 + b.nbytes
    if a0 == b0 and a1 == b1:
        return _layout(a) != _layout(b)
    return a0 < b1 and b0 < a1


def _layout(a) -> tuple:
    """a's (size, stride) pairs without its dims of size 1 (whose strides never move to
    another element), so a (1,)-shaped and a 0-dim array of one element lie alike."""
    return tuple((n, s) for n, s in zip(a.shape, a.strides) if n != 1)


def _dense(a) -> bool:
    """PyTorch's non-overlapping and dense: the elements fill one block, in some dim order."""
    if a.flags.c_contiguous or a.flags.f_contiguous:
        return True
    expect = a.itemsize
    for stride, n in sorted((s, n) for s, n in zip(a.strides, a.shape) if n != 1):
        if stride != expect:
            return False
        expect *= n
    return True


def _op_label(t) -> str:
    fn = t._grad_fn
    return fn._op.name if fn is not None and hasattr(fn, "_op") else "op"
