"""In-place ops: checks, the write, the version bump; the new history is autograd's."""

from __future__ import annotations

import re

from . import upcalls
from .dispatch import MULTI_OUTPUT, OVERLAP, WrapperTensor, dispatch, partial_overlap
from .state import state
from .tensor import Tensor, VersionCounter, _new

LEAF_VIEW_WRITE = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)
_WHY = {
    MULTI_OUTPUT: " This view is the output of a function that returns multiple views. Such "
    "functions do not allow the output views to be modified inplace. You should replace the "
    "inplace operation by an out-of-place one.",
    "no_grad": " Given that this use case is ambiguous and error-prone, it is forbidden. You can "
    "clarify your code by moving both the view and the inplace either both inside the no_grad "
    "block (if you don't want the inplace to be tracked) or both outside (if you want the "
    "inplace to be tracked).",
}


def view_write_error(view: Tensor, indirect: bool = False) -> str:
    """PyTorch's text refusing an in-place write into a view with a ``_creation`` (or, when
    ``indirect``, into its base or another view of it) while autograd is involved."""
    fn = view._grad_fn  # the node the view had when made, not a regenerated one
    what = "its base or another view of its base has been" if indirect else "is being"
    if fn is None:
        msg = f"A view was created in no_grad mode and {what} modified inplace with grad mode enabled."
    else:
        head = f"Output {view._out_nr} of {_BACKWARD.sub('', fn.name())} is a view"
        if view._creation == MULTI_OUTPUT:
            msg = f"{head} and {what} modified inplace."
        else:
            msg = (
                f"{head} of a view which was created in no_grad mode and {what} modified "
                "inplace with grad mode enabled."
            )
    return msg + _WHY[view._creation]


_BACKWARD = re.compile(r"Backward\d*$")


def check_inplace(self: Tensor, args: tuple = ()) -> None:
    """PyTorch's errors for in-place writes into leaves that require grad, and into views
    whose writes autograd refuses (``args``: the op's other inputs)."""
    if not state.grad_enabled:
        return
    if self._inplace_error is not None:  # a view an autograd.Function returned
        raise RuntimeError(self._inplace_error)
    if self._view is not None:
        root = self._view[0]
        if self._creation is not None and (
            _requires_grad(root) or any([_requires_grad(a) for a in args])
        ):
            raise RuntimeError(view_write_error(self))
        if root._rg and root._grad_fn is None:
            raise RuntimeError(LEAF_VIEW_WRITE)
    elif self._rg and self._grad_fn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )


# In-place ops whose PyTorch kernels take any overlap of their operands with self (they read
# them whole first, or are no elementwise kernel).
_NO_OVERLAP_CHECK = frozenset(
    ("fill", "masked_fill", "index_fill", "masked_scatter", "addmm", "addmv", "addbmm", "baddbmm")
)


def check_overlap(op, self: Tensor, args: tuple) -> None:
    """PyTorch's error for an operand that partly overlaps the tensor an in-place op writes
    (the same elements in the same layout are fine). Views share the version counter of
    their base, which makes the common case one identity test per operand."""
    ver = self._ver
    for a in args:
        if (
            isinstance(a, Tensor)
            and a._ver is ver
            and a is not self
            and op.name not in _NO_OVERLAP_CHECK
            and partial_overlap(_array(self), _array(a))
        ):
            raise RuntimeError(OVERLAP)


def _array(t: Tensor):
    while isinstance(t, WrapperTensor):
        t = t._inner
    return t._data


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
    check_inplace(self, args)
    if args:
        check_overlap(op, self, args)
    if attrs and "out" in attrs:
        raise TypeError(f"{op.name}_() got an unexpected keyword argument 'out'")
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
    try:
        commit(self, result, op)
    except RuntimeError as e:
        if op.name in _CPP_CAST and str(e).startswith("result type"):
            if not any(isinstance(a, Tensor) for a in args):
                raise RuntimeError(cast_error(result.dtype, self.dtype, cpp=True)) from None
        raise
    return self


# In-place ops whose own dtype check (with Python-number operands) names the C++ type of
# the output, where TensorIterator's names its ScalarType: clamp_(max=1.5) of an int64
# tensor says "long int", add_(1.5) says "Long".
_CPP_CAST = frozenset({"clamp", "clamp_min", "clamp_max"})


def cast_error(frm, to, cpp: bool = False) -> str:
    """PyTorch's text for a result of dtype ``frm`` that can't be written into ``to``."""
    return (
        f"result type {frm.scalar_name} can't be cast to the desired output type "
        f"{to.cpp_name if cpp else to.scalar_name}"
    )


def commit(self: Tensor, result: Tensor, op=None) -> None:
    """Write result's values into self, bump the version, and rebase history. As in
    PyTorch, the shape is checked first, then a transform's own conditions (a level's
    commit ends in this function on its inner values, which checks the dtype), then the
    dtype."""
    if tuple(result.shape) != tuple(self.shape):
        raise RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape "
            f"{list(result.shape)}"
        )
    if state.stack:
        lvl = max(self._level, result._level)
        if lvl:
            state.stack[lvl - 1].commit(self, result, op)
            return
    sd, rd = self.dtype, result.dtype
    if rd != sd and rd._kind > sd._kind:
        raise RuntimeError(cast_error(rd, sd))
    data = self._data
    try:
        data[...] = result._data
    except ValueError as e:
        if "read-only" in str(e):
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers "
                "to a single memory location. Please clone() the tensor before performing the "
                "operation."
            ) from None
        raise
    self._ver.v += 1
    upcalls.rehistory(self, result, result._rg)
