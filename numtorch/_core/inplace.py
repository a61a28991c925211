"""In-place ops: checks, the write, the version bump; the new history is autograd's."""

from __future__ import annotations

from . import upcalls
from .device import xp_of
from .dispatch import OVERLAP, WrapperTensor, _max_level, dispatch, internal_overlap
from .state import state
from .tensor import Tensor, VersionCounter, _new

LEAF_VIEW_WRITE = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)


# In-place ops PyTorch lets write into a tensor whose elements share memory (an expanded
# one); each writes only the elements it changes.
_OVERLAP_OK = frozenset(
    ("fill", "index_fill", "index_put", "masked_fill", "tril", "triu", "conj_physical")
)
# In-place ops whose argument checks PyTorch makes before the overlap check: theirs is at
# the write.
_CHECKS_FIRST = frozenset(("sub", "rsub", "addcdiv", "lerp"))


def _physical(t: Tensor):
    """The array under t's transform wrappers (a batched tensor's has the batch dim)."""
    while isinstance(t, WrapperTensor):
        t = t._inner
    return t._data


def check_overlap(a, op=None) -> None:
    """PyTorch's error for a write by ``op`` into an array whose elements share memory."""
    if internal_overlap(a) and (op is None or op.name not in _OVERLAP_OK):
        raise RuntimeError(OVERLAP)


def check_inplace(self: Tensor) -> None:
    """PyTorch's errors for in-place writes into leaves that require grad."""
    if not state.grad_enabled:
        return
    if self._inplace_error is not None:  # a view an autograd.Function returned
        raise RuntimeError(self._inplace_error)
    if self._view is not None:
        root = self._view[0]
        if root._rg and root._grad_fn is None:
            raise RuntimeError(LEAF_VIEW_WRITE)
    elif self._rg and self._grad_fn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )


def _requires_grad(t) -> bool:
    """Whether t, or a tensor inside a transform's wrapper, requires grad at its level."""
    while isinstance(t, WrapperTensor):
        if t._rg:
            return True
        t = t._inner
    return isinstance(t, Tensor) and t._rg


def _old_value(self: Tensor) -> Tensor:
    """A copy of self's values that stands for self in the graph (its edge is self's), so
    the in-place op's node connects to self's history as in PyTorch, with no clone node.
    Inside a transform, a recorded clone."""
    if self._level:
        return self.clone()
    t = _new(Tensor)
    t._data = self._data.copy() if not state.modes else _mode_copy(self)
    t._ver = VersionCounter()
    t._base = None
    t._rg = self._rg  # first: a view refreshes its history on reading it
    t._grad_fn = self._grad_fn
    if self._out_nr:
        t._out_nr = self._out_nr
    return t


def _needs_old_value(op, self: Tensor, args: tuple) -> bool:
    """Whether the gradient of an input that requires grad needs self's value."""
    first = op.inputs[0]
    pairs = zip(op.saves, (self, *args[: op.nin - 1]))
    return any(first in names and _requires_grad(a) for names, a in pairs)


def _mode_copy(self: Tensor):
    """The copy of self's values made through dispatch modes (they see ``aten.clone``, as in
    PyTorch) without a node: the copy stands for self in the graph."""
    enabled = state.grad_enabled
    state.grad_enabled = False
    try:
        return self.clone()._data
    finally:
        state.grad_enabled = enabled


def run_inplace(op, self: Tensor, args: tuple, attrs: dict) -> Tensor:
    """self.<op>_(*args): the functional op, then its result written into self."""
    check_inplace(self)
    if attrs and "out" in attrs:
        raise TypeError(f"{op.name}_() got an unexpected keyword argument 'out'")
    data = _physical(self) if self._level else self._data
    if 0 in data.strides and op.name not in _CHECKS_FIRST and _max_level(args) <= self._level:
        check_overlap(data, op)  # before the op's own errors, as in PyTorch
    src = self
    if state.grad_enabled and _needs_old_value(op, self, args):
        # A formula needs self's old value, which the write destroys: save a copy.
        src = _old_value(self)
    modes = state.modes
    if modes:  # dispatch modes see this call as the in-place overload (aten.add_.Tensor)
        state.inplace_op = op
    try:
        if len(attrs) == len(op.attrs):
            result = dispatch(op, (src, *args), attrs)
        else:  # bind defaults through the op's signature
            result = op.fn(src, *args, **attrs)
    finally:
        if modes:
            state.inplace_op = None
    commit(self, result, op)
    return self


def commit(self: Tensor, result: Tensor, op=None) -> None:
    """Write result's values into self, bump the version, and rebase history."""
    lvl = max(self._level, result._level) if state.stack else 0
    shared = False
    if not lvl:
        data = self._data
        shared = 0 in data.strides and internal_overlap(data)
        if shared:
            check_overlap(data, op)
    sd, rd = self.dtype, result.dtype
    if rd != sd and rd._kind > sd._kind:
        raise RuntimeError(
            f"result type {rd.scalar_name} can't be cast to the desired output type "
            f"{sd.scalar_name}"
        )
    if tuple(result.shape) != tuple(self.shape):
        raise RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape "
            f"{list(result.shape)}"
        )
    if lvl:
        state.stack[lvl - 1].commit(self, result, op)
        return
    if shared:  # an allowed write into shared elements: the ones it changes
        xp_of(data).copyto(data, result._data, where=result._data != data)
    else:
        data[...] = result._data
    self._ver.v += 1
    upcalls.rehistory(self, result, result._rg)
