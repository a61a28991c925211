"""vmap's level: BatchedTensor, the interpreter that runs batch rules, and the fallback.

A batch rule is ``rule(vmap, args, bdims, attrs) -> (out, out_bdims)``: ``args`` are the
inner values (one level down), ``bdims`` their batch dimensions (None: not batched at
this level; a list for list inputs), ``vmap`` this interpreter (``vmap.size``,
``vmap.randomness``). Rules compute with numtorch ops on the inner values, so they
dispatch to the lower levels and record autograd there.
"""

from __future__ import annotations

import math
import warnings

from .._core.dispatch import dispatch
from .._core.inplace import batched_write, check_inplace, commit, vmap_inplace_error, write_error
from .._core.interpreter import _VMAP_READ, FUNCTORCH, Interpreter, Kind, WrapperTensor
from .._core.policy import BatchedWrite
from .._core.state import state
from .._core.tensor import Size, Tensor
from ..ops.shape import stack

_fallback = {"enabled": True, "warn": True}
_warned: set = set()

_NO_STORAGE = "Cannot access data pointer of Tensor that doesn't have storage"
_ITEM = (
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
    "calling .item() on a Tensor, please try to rewrite what you're doing with other "
    "operations. If error is occurring somewhere inside PyTorch internals, please file a "
    "bug report."
)
_CONTROL_FLOW = (
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
    "flow. We don't support that yet, please file an issue at "
    "https://github.com/pytorch/pytorch/issues ."
)


def _vmap_innermost() -> bool:
    """Whether the innermost torch.func transform is a vmap: PyTorch's vmap then refuses a
    read of a batched value by its own text; through a grad or jvp level, by the text of
    its fallback, which cannot tell a read from control flow."""
    for interp in reversed(state.stack):
        if interp.kind in FUNCTORCH:
            return interp.kind is Kind.VMAP
    return True


def _set_vmap_fallback_enabled(enabled: bool) -> None:
    """Off: an op without a batch rule raises instead of looping over the batch."""
    _fallback["enabled"] = bool(enabled)


def _is_vmap_fallback_enabled() -> bool:
    return _fallback["enabled"]


def _set_vmap_fallback_warning_enabled(enabled: bool) -> None:
    _fallback["warn"] = bool(enabled)


class BatchedTensor(WrapperTensor):
    """A tensor with a batch dimension ``_bdim`` at its vmap level; shows the logical
    tensor (without that dimension)."""

    __slots__ = ()  # (_bdim: a slot of Tensor)

    @property
    def shape(self) -> Size:
        inner = self._inner  # (a plain inner value: its array's shape, without a call)
        s = list(inner._data.shape if type(inner) is Tensor else inner.shape)
        del s[self._bdim]
        return tuple.__new__(Size, s)  # (the inner shape's items are ints already)

    def size(self, dim=None):
        from .._core.tensor import wrap_dim

        s = self.shape
        return s if dim is None else s[wrap_dim(dim, len(s))]

    def dim(self) -> int:
        return self._inner.dim() - 1

    ndimension = dim

    @property
    def ndim(self) -> int:
        return self._inner.dim() - 1

    def numel(self) -> int:
        s = list(self._inner.shape)
        del s[self._bdim]
        return math.prod(s)

    nelement = numel

    def stride(self, dim=None):
        from .._core.tensor import wrap_dim

        st = list(self._inner.stride())
        del st[self._bdim]
        return tuple(st) if dim is None else st[wrap_dim(dim, len(st))]

    def is_contiguous(self, memory_format=None) -> bool:
        inner = self._inner
        if memory_format is None and self._bdim == 0 and type(inner) is Tensor:
            if inner._data.flags.c_contiguous:  # (a C-ordered batch of C-ordered samples)
                return True
        shape, stride = list(inner.shape), list(inner.stride())
        del shape[self._bdim], stride[self._bdim]
        if 0 in shape:  # PyTorch: a tensor with no elements is contiguous
            return True
        expected = 1
        for i in range(len(shape) - 1, -1, -1):
            n = shape[i]
            if n != 1:
                if stride[i] != expected:
                    return False
                expected *= n
        return True

    def __len__(self) -> int:
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def _read(self, text: str) -> RuntimeError:
        """vmap's error for a value read: ``text``, or, where a grad or jvp level runs
        inside the innermost vmap, PyTorch's text that does not know which read it was."""
        return RuntimeError(text if _vmap_innermost() else _VMAP_READ)

    def item(self):
        raise self._read(_ITEM)

    __float__ = __int__ = __complex__ = item

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.numel() != 1:  # (PyTorch's check comes first)
            raise TypeError("only integer tensors of a single element can be converted to an index")
        raise self._read(_ITEM)

    def __bool__(self) -> bool:
        raise self._read(_CONTROL_FLOW)

    def numpy(self, *, force: bool = False):
        raise RuntimeError(_NO_STORAGE)

    def tolist(self):
        raise RuntimeError(_NO_STORAGE)

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError(_NO_STORAGE)

    def data_ptr(self) -> int:
        raise RuntimeError(_NO_STORAGE)

    def detach(self) -> Tensor:
        return self._interp.wrap(self._inner.detach(), self._bdim)

    def __repr__(self) -> str:
        inner = repr(self._inner).replace("\n", "\n    ")
        return f"BatchedTensor(lvl={self._level}, bdim={self._bdim}, value=\n    {inner}\n)"

    __str__ = __repr__


class VmapInterpreter(Interpreter):
    """One vmap level: runs each op's batch rule (or the fallback) on inner values."""

    kind = Kind.VMAP

    def __init__(self, size: int, randomness: str, legacy: bool = False):
        self.size = size
        self.randomness = randomness
        self.legacy = legacy  # PyTorch's first vmap: Tensor.requires_grad_ is allowed

    def wrap(self, x: Tensor, bdim: int) -> BatchedTensor:
        t = BatchedTensor._new(x, self)
        t._bdim = bdim
        return t

    def unwrap(self, a):
        """(inner value, bdim) of an argument at this level."""
        if isinstance(a, BatchedTensor) and a._interp is self:
            return a._inner, a._bdim
        return a, None

    def process(self, op, args: tuple, attrs: dict):
        vals, bdims = [], []
        lists = op.list_inputs
        for i, a in enumerate(args):
            if isinstance(a, BatchedTensor) and a._interp is self:  # (unwrap, inline)
                vals.append(a._inner)
                bdims.append(a._bdim)
            elif lists and i in lists and isinstance(a, (list, tuple)):
                pairs = [self.unwrap(x) for x in a]
                vals.append([p[0] for p in pairs])
                bdims.append([p[1] for p in pairs])
            else:
                vals.append(a)
                bdims.append(None)
        rule = op.batch_rule
        if rule is not None and not op.random:
            out, obd = rule(self, vals, bdims, attrs)
        elif op.random:
            prev = state.random_ceiling
            state.random_ceiling = self.level
            try:
                out, obd = rule(self, vals, bdims, attrs)
            finally:
                state.random_ceiling = prev
        else:
            out, obd = fallback(self, op, vals, bdims, attrs)
        if op.nout == 1:
            if obd is None:
                return out
            res = BatchedTensor._new(out, self)
            res._bdim = obd
            if op.view and out._ver is vals[0]._ver and bdims[0] is not None:
                _link(res, args[0], op, attrs)
            return res
        if not isinstance(obd, (tuple, list)):
            obd = (obd,) * len(out)
        res = tuple(o if b is None else self.wrap(o, b) for o, b in zip(out, obd))
        if op.view and bdims[0] is not None and all(o._ver is vals[0]._ver for o in out):
            for r, (v, va) in zip(res, op.pieces(tuple(args[0].shape), attrs)):
                if isinstance(r, BatchedTensor):
                    _link(r, args[0], v, va)
        return res

    def call(self, fn, args, bdims, attrs=None):
        """Run ``fn`` on re-wrapped arguments at this level (a rule by decomposition into
        other ops); returns (inner outputs, out bdims)."""

        def wrap(a, b):
            if isinstance(b, list):
                return [wrap(x, y) for x, y in zip(a, b)]
            return a if b is None else self.wrap(a, b)

        out = fn(*(wrap(a, b) for a, b in zip(args, bdims)), **(attrs or {}))
        if isinstance(out, (tuple, list)):
            pairs = [self.unwrap(o) for o in out]
            return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
        return self.unwrap(out)

    def commit(self, target: Tensor, result: Tensor, op=None) -> None:
        """In-place write of ``result`` into ``target`` where either is batched here."""
        tx, tb = self.unwrap(target)
        rx, rb = self.unwrap(result)
        if tb is None:
            if batched_write(op) is BatchedWrite.UNCHECKED:
                raise write_error(target, result, op)
            raise vmap_inplace_error(op, self.level)
        if rb is None:
            rx = rx.unsqueeze(tb).expand(tx.shape)
        elif rb != tb:
            rx = rx.movedim(rb, tb)
        check_inplace(tx)
        commit(tx, rx, op)


def _link(t: BatchedTensor, src: BatchedTensor, op, attrs) -> None:
    """t, the view ``op(src)`` at this level, knows its root and the chain of views from it
    (logical shapes), so that lifting it into an outer level lifts its root too (see
    _core/lift.py); it has no autograd state of its own to link."""
    view = src._view
    t._view = (src, ((op, attrs),)) if view is None else (view[0], (*view[1], (op, attrs)))
    t._view_ver = src._ver.v


def _select(a, bd, b):
    if isinstance(bd, list):
        return [_select(x, y, b) for x, y in zip(a, bd)]
    return a if bd is None else a.select(bd, b)


def fallback(vmap: VmapInterpreter, op, vals, bdims, attrs):
    """Run the op once per batch element and stack the results (slow)."""
    name = op.name
    if not _fallback["enabled"]:
        raise RuntimeError(f"{name} hit the vmap fallback which is currently disabled")
    if _fallback["warn"] and name not in _warned:
        _warned.add(name)
        warnings.warn(
            "There is a performance drop because we have not yet implemented the batching rule "
            f"for {name}. Please file us an issue on GitHub so that we can prioritize its "
            "implementation.",
            UserWarning,
            stacklevel=4,
        )
    outs = [
        dispatch(op, tuple(_select(a, bd, b) for a, bd in zip(vals, bdims)), attrs)
        for b in range(vmap.size)
    ]
    if op.nout == 1:
        return stack(outs), 0
    return tuple(stack([o[k] for o in outs]) for k in range(len(outs[0]))), 0
