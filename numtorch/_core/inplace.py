"""In-place ops: checks, the write, the version bump; the new history is autograd's."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from . import autocast_state, upcalls
from . import dtype as dt
from .device import gpu_of, xp_of
from .dispatch import MULTI_OUTPUT, _max_level, dispatch
from .interpreter import Kind, WrapperTensor, torch_level
from .lift import born_inside, captured_write, catch_up
from .messages import broadcast_mismatch
from .out import (
    INTERNAL_OVERLAP,
    OVERLAP,
    check_written,
    internal_overlap,
    partial_overlap,
    vmap_views,
    vmapped,
)
from .policy import BatchedWrite
from .signature import numpy_aliases
from .state import state
from .tensor import WRAPPER_SLOTS, Tensor, VersionCounter, _new, bump_version, check_writable

if TYPE_CHECKING:
    from collections.abc import Callable

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


def check_internal_overlap(a, op=None, args: tuple = ()) -> None:
    """PyTorch's error for a write by ``op`` (with operands ``args``) into an array whose
    elements share memory."""
    if internal_overlap(a) and not shared_write_ok(op, args) and not state.self_write:
        raise RuntimeError(INTERNAL_OVERLAP)


def shared_write_ok(op, args: tuple = ()) -> bool:
    """Whether ``op``'s in-place form may write into elements that share memory: a 0-d
    tensor value refuses where the policy asks a number (fill_(Tensor), after its check of
    the value's dims, the kernel's here), and so does a value vmap batches (PyTorch's batch
    rule copies it, whatever its dims, and the copy refuses)."""
    if op is None or not op.inplace_policy.shared_ok:
        return False
    if op.inplace_policy.shared_needs_number:
        v = args[0] if args else None
        return not (isinstance(v, Tensor) and (not v.dim() or vmapped(v)))
    return True


def view_write_error(view: Tensor, indirect: bool = False) -> str:
    """PyTorch's text refusing an in-place write into a view with a ``_creation`` (or, when
    ``indirect``, into its base or another view of it) while autograd is involved."""
    fn = view._grad_fn  # the node the view had when made, not a regenerated one
    what = "its base or another view of its base has been" if indirect else "is being"
    if fn is None:
        msg = f"A view was created in no_grad mode and {what} modified inplace with grad mode enabled."
    else:
        head = f"Output {view._out_nr} of {short_name(fn)} is a view"
        if view._creation == MULTI_OUTPUT:
            msg = f"{head} and {what} modified inplace."
        else:
            msg = (
                f"{head} of a view which was created in no_grad mode and {what} modified "
                "inplace with grad mode enabled."
            )
    return msg + _WHY[view._creation]


_BACKWARD = re.compile(r"Backward(\d*)$")


def short_name(fn) -> str:
    """A node's name (``fn`` a node, or a node's name) as PyTorch's view and version errors
    print it: ``Backward0`` dropped, another overload's number kept (``PowBackward2`` is
    ``Pow2``)."""
    name = fn if isinstance(fn, str) else fn.name()
    m = _BACKWARD.search(name)
    if m is None:
        return name
    return name[: m.start()] + ("" if m[1] == "0" else m[1])


def check_inplace(self: Tensor, args: tuple = ()) -> None:
    """PyTorch's errors for in-place writes into leaves that require grad, and into views
    whose writes autograd refuses (``args``: the op's other inputs)."""
    if not state.grad_enabled:
        return
    if self._level and self._interp.kind is Kind.TRACE:  # a tracer's value: the real tensor's
        self, args = self._inner, tuple(a._inner if _traced(a) else a for a in args)
    if self._level and self._interp.kind is Kind.FUNCTIONALIZE:  # its value's own checks
        return check_inplace(self._inner, args)
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


_NUMPY_KEYWORDS = frozenset(("axis", "keepdims"))  # (op.NUMPY_NAMES' values)


def check_overlap(op, self: Tensor, args: tuple) -> None:
    """PyTorch's error for an operand that partly overlaps the tensor an in-place op writes
    (the same elements in the same layout are fine). Views share the version counter of
    their base, which makes the common case one identity test per operand."""
    if op.inplace_policy.operand_overlap_ok:
        return
    ver = self._ver
    for a in args:
        if not isinstance(a, Tensor) or a._ver is not ver or a is self:
            continue
        if vmapped(self) or vmapped(a):
            per_sample = batched_write(op, args) is BatchedWrite.FALLBACK
            if partial_overlap(*vmap_views(self, a, per_sample)):
                raise RuntimeError(OVERLAP)
        elif partial_overlap(_array(self), _array(a)):
            raise RuntimeError(OVERLAP)


def _array(t: Tensor):
    while isinstance(t, WrapperTensor):
        t = t._inner
    return t._data


def _traced(a) -> bool:
    return isinstance(a, WrapperTensor) and a._interp.kind is Kind.TRACE


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


def run_inplace(op, self: Tensor, args: tuple, attrs: dict, form: str | None = None) -> Tensor:
    """self.<op>_(*args): the functional op, then its result written into self. ``form``:
    the in-place method's own name where PyTorch's is not ``<op>_`` (``clip_`` runs clamp,
    ``zero_`` fill): vmap's errors name it, and the node's name may (``ZeroBackward0``)."""
    outer = state.inplace_form
    state.inplace_form = form
    try:
        return _run_inplace(op, self, args, attrs)
    finally:
        state.inplace_form = outer


def _run_inplace(op, self: Tensor, args: tuple, attrs: dict) -> Tensor:
    policy = op.inplace_policy
    if args and args[0] is self and policy.self_source_noop and not state.self_write:
        return _into_itself(op, self, args, attrs)
    check_writable(self, policy.zero_text)
    stack = state.stack
    if stack:
        catch_up(self)
        check_captured(self, args, op, attrs)
    unchecked = policy.batched is BatchedWrite.UNCHECKED
    checked = stack and not unchecked
    above = checked and _max_level(args) > self._level
    if above:  # a vmap above self's levels: its error first
        _check_batched_into_unbatched(self, args, op)
    if not policy.untracked_integer_target or self.dtype._kind >= 2:
        check_inplace(self, args)
    if args and op.overlap is None:
        check_overlap(op, self, args)
    if attrs:
        _check_keywords(op, len(args) - op.nin + 1, attrs)
    if checked and not above:
        _check_batched_into_unbatched(self, args, op)
    data = _array(self) if self._level else self._data
    if (
        0 in data.strides
        and not policy.checks_first
        and (unchecked or _max_level(args) <= self._level)
    ):
        if policy.cpp_cast:
            _check_number_bounds(self, args, attrs)
        check_internal_overlap(data, op, args)  # before the op's own errors, as in PyTorch
    if op.overlap is not None:
        check_written(op, self, (self, *args), attrs)
    if state.stack:
        check_sample_broadcast(self, args, op)
    src = self
    if state.grad_enabled and _needs_old_value(op, self, args):
        # A formula needs self's old value, which the write destroys: save a copy.
        src = _old_value(self)
    # dispatch modes see this call as the in-place overload (aten.add_.Tensor); so do the
    # formulas of an op without a derivative, which name it
    outer = state.inplace_op
    state.inplace_op = op
    # PyTorch's autocast kernels are the functional overloads': an in-place form is not cast
    paused = (
        autocast_state.pause() if op.autocast is not None and autocast_state.ACTIVE[0] else None
    )
    try:
        if len(attrs) == len(op.attrs) and (not attrs or not _NUMPY_KEYWORDS & attrs.keys()):
            result = dispatch(op, (src, *args), attrs)
        else:  # bind defaults (and NumPy's keyword names) through the op's signature
            result = op.fn(src, *args, **attrs)
    finally:
        state.inplace_op = outer
        if paused is not None:
            autocast_state.resume(paused)
    _check_own_write(self, args, result, policy)
    commit(self, result, op)
    return self


def _into_itself(op, self: Tensor, args: tuple, attrs: dict) -> Tensor:
    """``self.copy_(self)``: PyTorch's kernel returns at once, so nothing checks or writes
    self's memory (an expanded self too); its version, history and the transforms' levels
    see the write."""
    state.self_write = True
    try:
        return run_inplace(op, self, args, attrs)
    finally:
        state.self_write = False


def _check_own_write(self: Tensor, args: tuple, result: Tensor, policy) -> None:
    """An op's own errors for a result that can't be written into self, which PyTorch
    raises before the write's: a shape (outside transforms), a cast with its own text."""
    if policy.shape_error is not None and not state.stack and result.shape != self.shape:
        raise RuntimeError(policy.shape_error(self, args))
    own, cpp = policy.cast_text, policy.cpp_cast
    if own is None and not (cpp and not any(isinstance(a, Tensor) for a in args)):
        return
    sd, rd = self.dtype, result.dtype
    if rd != sd and rd._kind > sd._kind:
        if own is not None:
            raise RuntimeError(own.format(sd.scalar_name, rd.scalar_name))
        raise RuntimeError(cast_error(rd, sd, cpp=True))


def _check_keywords(op, npos: int, attrs: dict) -> None:
    """Python's error for a keyword the in-place method does not take (``out``; a name
    that is not an attribute's; a NumPy name whose attribute is given too), naming it."""
    names = [n for n, _, _ in op.attrs]
    given = set(names[: max(npos, 0)]) | attrs.keys()
    aliases = numpy_aliases(op)
    for k in attrs:
        if k in names or (k in aliases and aliases[k] not in given):
            continue
        raise TypeError(f"{op.name}_() got an unexpected keyword argument '{k}'")


def expand_error(shape: list, size: list) -> str:
    """PyTorch's text for a bool mask of ``shape`` that does not expand to ``size``."""
    if len(shape) > len(size):
        return (
            f"expand(CPUBoolType{{{shape}}}, size={size}): the number of sizes provided "
            f"({len(size)}) must be greater or equal to the number of dimensions in the tensor "
            f"({len(shape)})"
        )
    lead = len(size) - len(shape)
    i = next(i for i in range(len(size) - 1, lead - 1, -1) if shape[i - lead] not in (1, size[i]))
    return (
        f"The expanded size of the tensor ({size[i]}) must match the existing size "
        f"({shape[i - lead]}) at non-singleton dimension {i}.  Target sizes: {size}.  Tensor "
        f"sizes: {shape}"
    )


def _check_number_bounds(self: Tensor, args: tuple, attrs: dict) -> None:
    """clamp_'s cast check of number bounds, which PyTorch makes before the overlap check
    (a tensor bound's comes after it)."""
    bounds = [*args, *attrs.values()]
    if any(isinstance(b, Tensor) for b in bounds):
        return
    nums = [b for b in bounds if isinstance(b, (bool, int, float))]
    if nums:
        rd = dt.result_type((self.dtype, self.dim()), *nums)
        if rd != self.dtype and rd._kind > self.dtype._kind:
            raise RuntimeError(cast_error(rd, self.dtype, cpp=True))


def cast_error(frm, to, cpp: bool = False) -> str:
    """PyTorch's text for a result of dtype ``frm`` that can't be written into ``to``."""
    return (
        f"result type {frm.scalar_name} can't be cast to the desired output type "
        f"{to.cpp_name if cpp else to.scalar_name}"
    )


def commit(self: Tensor, result: Tensor, op=None) -> None:
    """Write result's values into self, bump the version, and rebase history. As in
    PyTorch, a write into elements that share memory is refused first, then the shape is
    checked, then a transform's own conditions (a level's commit ends in this function on
    its inner values, which checks the dtype), then the dtype."""
    lvl = max(catch_up(self), result._level) if state.stack else 0
    shared = False
    if not lvl:
        data = self._data
        shared = 0 in data.strides and internal_overlap(data)
        if shared:
            check_internal_overlap(data, op)
    if tuple(result.shape) != tuple(self.shape):
        raise write_error(self, result, op)
    if lvl:
        state.stack[lvl - 1].commit(self, result, op)
        return
    sd, rd = self.dtype, result.dtype
    if rd != sd and rd._kind > sd._kind:
        raise RuntimeError(cast_error(rd, sd))
    data = self._data
    value = result._data
    if rd != sd and data.dtype in dt.REDUCED_NP:  # (PyTorch's conversion, through float32)
        value = dt.cast(value, data.dtype)
    if state.self_write:  # (its own values)
        pass
    elif type(data) is np.ndarray:
        _write(data, value, shared)
    else:
        with gpu_of(data):  # (CuPy writes with the array's GPU current)
            _write(data, value, shared)
    bump_version(self)
    upcalls.rehistory(self, result, result._rg)


def _write(data, value, shared: bool) -> None:
    if shared:  # an allowed write into shared elements: the ones it changes
        xp_of(data).copyto(data, value, where=value != data)
    else:
        try:
            data[...] = value
        except ValueError as e:  # a read-only array: NumPy's own shared-memory views
            if "read-only" in str(e):
                raise RuntimeError(INTERNAL_OVERLAP) from None
            raise


def check_captured(self: Tensor, args: tuple, op, attrs: dict) -> None:
    """PyTorch's error, before the op runs, for an in-place write into a tensor that an
    active grad or jvp level captured from outside (whatever the value written; a tensor
    made inside the level is lifted into it by a write of its values, _core/lift.py)."""
    for interp in state.stack:
        if (
            interp.kind in _TRACKING
            and not interp.legacy  # (numtorch's stand-in for autograd.functional's)
            and not _has_level(self, interp)
            and not born_inside(self, interp)
        ):
            raise RuntimeError(captured_write(op, (self, *args), attrs))


_TRACKING = frozenset((Kind.GRAD, Kind.JVP))


def _has_level(t: Tensor, interp) -> bool:
    while isinstance(t, WrapperTensor):
        if t._interp is interp:
            return True
        t = t._inner
    return False


# ------------------------------------------------------------------ errors of the write
def batched_write(op, args: tuple = ()) -> BatchedWrite:
    """How PyTorch's vmap runs ``op``'s in-place form with these operands."""
    if op is None:
        return BatchedWrite.ARITHMETIC
    policy = op.inplace_policy
    if policy.batched_tensor_value is not None and isinstance(args[1:2] and args[1], Tensor):
        return policy.batched_tensor_value
    return policy.batched


def inplace_label(op, args: tuple = ()) -> str:
    """The op's name in vmap's batched-into-unbatched in-place error."""
    how = batched_write(op, args)
    if how is BatchedWrite.ARITHMETIC:
        return "inplace arithmetic"
    name = state.inplace_form or f"{op.name}_"
    return name if how is BatchedWrite.PLAIN else f"aten::{name}"


def vmap_inplace_error(op, level: int, args: tuple = ()) -> RuntimeError:
    """vmap's error for an in-place op whose batched operand would write into an unbatched
    self (PyTorch's fallback names the vmap level)."""
    name = inplace_label(op, args)
    where = f"at level {torch_level(level)}" if name.startswith("aten::") else "in a vmap"
    return RuntimeError(
        f"vmap: {name}(self, *extra_args) is not possible because there exists a "
        "Tensor `other` in extra_args that has more elements than `self`. This "
        "happened due to `other` being vmapped over but `self` not being vmapped over "
        f"{where}. Please try to use out-of-place operators instead of {name}. If "
        "said operator is being called inside the PyTorch framework, please file a bug "
        "report instead."
    )


def _vmap_levels(t) -> dict:
    """{level: batch size} of the vmaps that batch ``t``."""
    out = {}
    while isinstance(t, WrapperTensor):
        if t._interp.kind is Kind.VMAP:
            out[t._interp.level] = t._interp.size
        t = t._inner
    return out


def write_error(self: Tensor, result: Tensor, op=None) -> RuntimeError:
    """PyTorch's error for writing ``result`` into ``self`` of another shape. Under vmap, a
    result batched where self is not is vmap's error first; the ops with batch rules of
    their own show the shapes with their batch dims in front (the ones that run through
    the fallback show each sample's)."""
    shape, full = list(self.shape), list(result.shape)
    if state.stack and (self._level or result._level):
        sl, rl = _vmap_levels(self), _vmap_levels(result)
        how = batched_write(op)
        missing = [lv for lv in rl if lv not in sl]
        if how is not BatchedWrite.UNCHECKED and missing:
            return vmap_inplace_error(op, max(missing))
        if how is not BatchedWrite.FALLBACK:
            padded = shape
            if sl:  # the batch rule pads self to the result's rank
                padded = [sl[lv] for lv in sorted(sl)] + [1] * (len(full) - len(shape)) + shape
            batched = [rl[lv] for lv in sorted(rl)] + full
            if padded != batched:
                shape, full = padded, batched
            else:  # torch.func writes into the padded self (each sample refuses): its
                sd, rd = self.dtype, result.dtype  # cast check, else each sample's error
                if rd != sd and rd._kind > sd._kind:
                    return RuntimeError(cast_error(rd, sd))
    elif op is not None and op.inplace_policy.fresh_result:
        return RuntimeError(
            f"Bad in-place call: input tensor size {shape} and output tensor size {full} "
            "should match"
        )
    return RuntimeError(f"output with shape {shape} doesn't match the broadcast shape {full}")


def _check_batched_into_unbatched(self: Tensor, args: tuple, op) -> None:
    """vmap's error, before the op runs, for an operand batched where self is not."""
    sl = None
    for a in args:
        if isinstance(a, Tensor) and a._level:
            if sl is None:
                sl = _vmap_levels(self)
            missing = [lv for lv in _vmap_levels(a) if lv not in sl]
            if missing and not _rebinds(self, max(missing)):
                raise vmap_inplace_error(op, max(missing), args)


def _rebinds(t, level: int) -> bool:
    """Whether a functionalize level above ``level`` holds t: its write may rebind t to the
    out-of-place result instead (numtorch.func.functionalize)."""
    while isinstance(t, WrapperTensor):
        if t._interp.kind is Kind.FUNCTIONALIZE and t._level > level:
            return True
        t = t._inner
    return False


def check_write(self: Tensor, result: Tensor, op) -> None:
    """Raise PyTorch's error where ``result`` cannot be written into ``self`` (for in-place
    forms that write through another op, named as ``op``)."""
    if tuple(result.shape) != tuple(self.shape):
        raise write_error(self, result, op)
    if state.stack and result._level:
        _check_batched_into_unbatched(self, (result,), op)


def check_operands(self: Tensor, args: tuple, op) -> None:
    """vmap's error for an operand batched where self is not, before the op runs."""
    if state.stack:
        _check_batched_into_unbatched(self, args, op)


def check_sample_broadcast(self: Tensor, args: tuple, op) -> None:
    """Under vmap, an elementwise in-place op that PyTorch runs through its fallback (one
    sample at a time) reports operands that do not broadcast by each sample's shapes."""
    if not op.broadcasts or batched_write(op, args) is not BatchedWrite.FALLBACK:
        return
    shapes = [tuple(a.shape) for a in (self, *args) if isinstance(a, Tensor)]
    msg = broadcast_mismatch(shapes)
    if msg is not None:
        raise RuntimeError(msg)


# ------------------------------------------------------------------ in-place view ops
def inplace_view(view: Callable, name: str, renumber: int = 1) -> Callable:
    """The Tensor method ``name`` (``t_``, ``squeeze_``, ...): ``view(self, ...)`` (a view
    op's public function) taken over by self, which keeps its memory and object and gets
    the view's shape and strides. As in PyTorch, the version is bumped and self's history
    becomes the view op's node, named as PyTorch's in-place overload (its functional
    overload's number + ``renumber``: ``TBackward1``, ``SqueezeBackward3``)."""

    def method(self, *args, **kwargs):
        check_writable(self, zero_text=None)  # (a ZeroTensor takes another layout)
        check_inplace(self)
        relayout(self, view(self, *args, **kwargs), renumber)
        return self

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place form of ``{name[:-1]}``: self becomes that view of itself."
    return method


def relayout(self: Tensor, view: Tensor, renumber: int = 1) -> None:
    """self takes the layout of ``view``, a view of self: its array (a transform's
    wrapper: its inner value and batch dim or tangent), then its history and view chain."""
    if self._level:
        old = self._inner
        for cls in type(self).__mro__:
            for slot in cls.__dict__.get("__slots__", ()):
                if slot not in ("__dict__", "__weakref__") and slot not in _TENSOR_SLOTS:
                    setattr(self, slot, getattr(view, slot))
        for slot in _LAYOUT_SLOTS:  # the wrapper's fields that say where its value lies
            if hasattr(view, slot):
                setattr(self, slot, getattr(view, slot))
    else:
        old = self._data
        self._data = view._data
    bump_version(self)
    upcalls.relayout(self, view, old, renumber)


_TENSOR_SLOTS = frozenset(Tensor.__slots__)
_LAYOUT_SLOTS = tuple(s for s in WRAPPER_SLOTS if s != "_interp")
