"""Writing a result into an ``out=`` tensor, with PyTorch's checks of the write: autograd,
a written-to tensor whose elements share memory, an input partly overlapping it, the cast."""

from __future__ import annotations

import numpy as np

from .interpreter import Kind
from .meta_array import MetaArray
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


def overlaps(a, b) -> bool:
    """PyTorch's full or partial overlap of two arrays (what assert_no_overlap refuses): the
    same array, or two non-empty dense ones sharing some bytes (else it does not tell)."""
    if a is b:
        return True
    if type(a) is not np.ndarray or type(b) is not np.ndarray or not a.size or not b.size:
        return False
    if not np.may_share_memory(a, b) or not (_dense(a) and _dense(b)):
        return False
    a0, b0 = a.ctypes.data, b.ctypes.data
    return a0 < b0 + b.nbytes and b0 < a0 + a.nbytes


def check_written(op, written: Tensor, inputs: tuple, attrs: dict) -> None:
    """PyTorch's checks (``op.overlap``) of the tensor ``op`` writes, self of its in-place
    form or an ``out=`` tensor, against its ``inputs``; where one fails, the op's checks
    that PyTorch makes first come first. Made before the kernel, so a refused write
    leaves every tensor as it was."""
    spec = op.overlap
    w = _innermost(written)
    found = False
    for positions, test in ((spec.full, overlaps), (spec.partial, partial_overlap)):
        for i in positions:
            for t in _tensors(inputs[i] if i < len(inputs) else None):
                if t._ver is written._ver and test(w, _innermost(t)):
                    found = True
    if not found:
        return
    if spec.first is not None:
        full = {n: d for n, d, _ in op.attrs} | attrs
        if spec.first(op, [_meta(a) for a in inputs], full) is False:
            return
    raise RuntimeError(OVERLAP)


def check_out(op, out, inputs: tuple, attrs: dict) -> None:
    """``check_written`` for an ``out=`` tensor, after PyTorch's refusals of autograd and of
    vmap through ``out=`` (raised later)."""
    if not isinstance(out, Tensor):
        return
    tensors = (out, *(t for a in inputs for t in _tensors(a)))
    if state.grad_enabled and any(t._rg for t in tensors):
        return
    if state.stack and any(_batched(t) for t in tensors):
        return
    check_written(op, out, inputs, attrs)


def refuse_overlap(written: Tensor, operands: tuple) -> None:
    """PyTorch's assert_no_overlap of ``written`` with each of ``operands``."""
    w = _innermost(written)
    for t in operands:
        if isinstance(t, Tensor) and t._ver is written._ver and overlaps(w, _innermost(t)):
            raise RuntimeError(OVERLAP)


def _batched(t: Tensor) -> bool:
    while t._level:
        if t._interp.kind is Kind.VMAP:
            return True
        t = t._inner
    return False


def _innermost(t: Tensor):
    """A tensor's array, beneath the transforms' wrappers."""
    while t._level:
        t = t._inner
    return t._data


def _tensors(a) -> tuple:
    if isinstance(a, Tensor):
        return (a,)
    if isinstance(a, (list, tuple)):
        return tuple(t for t in a if isinstance(t, Tensor))
    return ()


def _meta(a):
    """A meta array of a tensor's logical shape and dtype (lists of them as lists)."""
    if isinstance(a, Tensor):
        return MetaArray(tuple(a.shape), a.dtype.np)
    if isinstance(a, (list, tuple)):
        return type(a)(_meta(x) for x in a)
    return a


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
    fn = t.grad_fn  # (a traced value's is its real tensor's)
    return fn._op.name if fn is not None and hasattr(fn, "_op") else "op"
