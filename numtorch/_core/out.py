"""Writing a result into an ``out=`` tensor, with PyTorch's checks of the write: autograd,
a written-to tensor whose elements share memory, an input partly overlapping it, the cast."""

from __future__ import annotations

import numpy as np

from . import upcalls
from .interpreter import FORWARD, Kind
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


def write_out(out, result, op=None, inputs=(), attrs=None):
    """Copy a result into an ``out=`` tensor (or tuple of tensors) and return it; ``op``
    and its ``inputs`` for PyTorch's check of an input partly overlapping ``out`` and for
    (with ``attrs``) for the names in its errors. Under transforms the values beneath them
    are written."""
    beneath = _beneath_transforms(out, result, op, inputs, attrs) if state.stack else None
    if beneath is None:
        return _write(out, result, op, inputs)
    late, under, result = beneath
    _write(under, result, op, inputs)
    if late is not None:
        raise late
    return out


def _write(out, result, op, inputs):
    if isinstance(out, (tuple, list)):
        for o in out:
            check_writable(o)
        for o, r in zip(out, result):
            _write(o, r, None, ())
        return out
    check_writable(out)
    if state.grad_enabled and (out._rg or result._rg):
        raise _no_autograd(op, result)
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


def _no_autograd(op, result) -> RuntimeError:
    name = op.name if op is not None else _op_label(result)
    return RuntimeError(
        f"{name}(): functions with out=... arguments don't support automatic "
        "differentiation, but one of the arguments requires grad."
    )


def _beneath_transforms(out, result, op, inputs, attrs) -> tuple | None:
    """PyTorch's refusals of an ``out=`` call as each transform level meets it, the top
    one first: vmap's (its fallback takes no out=), grad's (autograd's, where a value
    requires grad at its level) and forward mode's, which PyTorch raises after the write
    (returned, not raised). With it, ``out`` and ``result`` beneath the levels; None where
    a level is not one of these."""
    outs, results, ins = _tensors(out), _tensors(result), tuple(_all_tensors(inputs))
    late = None
    while True:
        tensors = (*outs, *results, *ins)
        top = max((t._level for t in tensors), default=0)
        if not top:
            break
        interp = next(t._interp for t in tensors if t._level == top)
        if not interp.alive:
            return None
        kind = interp.kind
        if kind is Kind.VMAP:
            raise RuntimeError(
                f"Batching rule not implemented for {_names(op, inputs, attrs)[0]}; the "
                "fallback path doesn't work on out= or view ops."
            )
        if kind is Kind.GRAD:
            if state.grad_enabled and any(t._rg for t in tensors if t._level == top):
                raise _no_autograd(op, results[0] if results else None)
        elif kind in FORWARD:
            late = late or NotImplementedError(
                f"Trying to use forward AD with {_names(op, inputs, attrs)[1]} that does not "
                "support it because it is an out= function"
            )
        else:
            return None
        outs, results, ins = (
            tuple(t._inner if t._level == top else t for t in ts) for ts in (outs, results, ins)
        )
    if isinstance(out, Tensor):
        return late, outs[0], results[0] if results else result
    return late, outs, results


def _all_tensors(inputs):
    for a in inputs:
        yield from _tensors(a)


def _names(op, inputs, attrs) -> tuple[str, str]:
    if op is None:
        return "aten::out", "out"
    return upcalls.out_names(op, tuple(inputs), attrs or {})


OVERLAP = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer "
    "to a single memory location. Please clone() the tensor before performing the operation."
)


def partial_overlap(a, b, batched: bool = False) -> bool:
    """PyTorch's partial overlap of two arrays: both dense (else it does not tell), sharing
    some bytes but not all of them with the same strides (size-1 dims included). ``batched``:
    arrays beneath a vmap, which PyTorch's batch rules line up (batch dims first, padded to
    one rank) before the check, so there the strides of size-1 dims are not compared."""
    if a is b or type(a) is not np.ndarray or type(b) is not np.ndarray or not a.size or not b.size:
        return False
    if not np.may_share_memory(a, b) or not (_dense(a) and _dense(b)):
        return False
    a0, b0 = a.ctypes.data, b.ctypes.data
    a1, b1 = a0 + a.nbytes, b0 + b.nbytes
    if a0 == b0 and a1 == b1:
        if batched:
            return _layout(a) != _layout(b)
        return a.strides != b.strides
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
    for positions, partial in ((spec.full, False), (spec.partial, True)):
        for i in positions:
            for t in _tensors(inputs[i] if i < len(inputs) else None):
                if t._ver is not written._ver:
                    continue
                if (
                    partial_overlap(w, _innermost(t), vmapped(written) or vmapped(t))
                    if partial
                    else overlaps(w, _innermost(t))
                ):
                    found = True
    if not found:
        return
    if spec.first is not None:
        full = {n: d for n, d, _ in op.attrs} | attrs
        if spec.first(op, [_meta(a) for a in inputs], full) is False:
            return
    raise RuntimeError(OVERLAP)


def check_out(op, out, inputs: tuple, attrs: dict) -> None:
    """An ``out=`` call's checks before the kernel: the transforms' refusals of ``out=``
    (forward mode's aside), then ``check_written`` for the ``out=`` tensor where autograd
    and vmap let it through."""
    if state.stack:
        _beneath_transforms(out, (), op, inputs, attrs)
    if op.overlap is None or not isinstance(out, Tensor):
        return
    tensors = (out, *(t for a in inputs for t in _tensors(a)))
    if state.grad_enabled and any(t._rg for t in tensors):
        return
    if state.stack and any(vmapped(t) for t in tensors):
        return
    check_written(op, out, inputs, attrs)


def refuse_overlap(written: Tensor, operands: tuple) -> None:
    """PyTorch's assert_no_overlap of ``written`` with each of ``operands``."""
    w = _innermost(written)
    for t in operands:
        if isinstance(t, Tensor) and t._ver is written._ver and overlaps(w, _innermost(t)):
            raise RuntimeError(OVERLAP)


def vmap_views(written: Tensor, t: Tensor, per_sample: bool) -> tuple:
    """The arrays of ``written`` and ``t`` (values beneath a vmap) whose overlap PyTorch's
    vmap checks: each sample's (its fallback runs the op one sample at a time), else the
    whole arrays with their batch dims in front and, where batched, padded with dims of
    size 1 to one logical rank (the in-place batch rules' view of them)."""
    (wa, wd), (ta, td) = _bdims(written), _bdims(t)
    if per_sample:
        return _sample(wa, wd), _sample(ta, td)
    rank = max(wa.ndim - len(wd), ta.ndim - len(td))
    return _front(wa, wd, rank), _front(ta, td, rank)


def _bdims(t: Tensor) -> tuple:
    """t's array beneath the transforms and the positions of its vmap dims in it, the
    innermost vmap's first."""
    dims: list = [None] * t.dim()
    while t._level:
        if t._interp.kind is Kind.VMAP and t._bdim is not None:
            dims.insert(t._bdim, t._level)
        t = t._inner
    found = sorted((lv, i) for i, lv in enumerate(dims) if lv is not None)
    return t._data, [i for _, i in found]


def _sample(a, bdims: list):
    return a[tuple(0 if i in bdims else slice(None) for i in range(a.ndim))] if bdims else a


def _front(a, bdims: list, rank: int):
    if not bdims:
        return a
    k = len(bdims)
    a = np.moveaxis(a, bdims, range(k))
    if a.ndim - k >= rank:
        return a
    shape = (*a.shape[:k], *(1,) * (rank - a.ndim + k), *a.shape[k:])
    strides = _view_strides(a.shape, a.strides, shape)
    return np.lib.stride_tricks.as_strided(a, shape, strides, writeable=False)


def _view_strides(old: tuple, strides: tuple, new: tuple) -> tuple:
    """The strides ``Tensor.view(new)`` gives a tensor of shape ``old`` with ``strides``
    (only a view that exists is asked for): PyTorch's, whose dims of size 1 take the
    stride of the dims after them times their size."""
    out = [0] * len(new)
    d = len(new) - 1
    base, numel, seen = strides[-1], 1, 1
    for i in range(len(old) - 1, -1, -1):
        numel *= old[i]
        if i == 0 or (old[i - 1] != 1 and strides[i - 1] != numel * base):
            while d >= 0 and (seen < numel or new[d] == 1):
                out[d] = seen * base
                seen *= new[d]
                d -= 1
            if i > 0:
                base, numel, seen = strides[i - 1], 1, 1
    return tuple(out)


def vmapped(t: Tensor) -> bool:
    """Whether t is a vmap's value (at any of its levels)."""
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
    """a's (size, stride) pairs without its dims of size 1."""
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
