"""torch.autograd.Function: user-defined ops with their own backward, jvp and vmap rules.

A Function subclass becomes one op, built once per class, and ``apply`` dispatches it
like any other op, so every transform level handles it on its generic path:

- the op takes one list input (the forward's arguments) and returns the tuple of the
  forward's tensor outputs; ``attrs["call"]`` is the record of one call (the class, the
  ctx-style keyword arguments, the layout of the forward's output with its non-tensor
  values);
- level 0 runs the op's ``impl``: the forward on tensors under no_grad (with the ctx, or
  followed by ``setup_context``), then the node, which is the ctx;
- a grad level records the op through its ``recorder``: a ctx per level, set up by
  ``setup_context`` on that level's inner values; the node's backward calls the user's;
- forward mode calls the op's jvp formula: the user's ``jvp`` on a ctx set up the same way;
- vmap calls the op's batch rule: the ``vmap`` staticmethod, or (``generate_vmap_rule``)
  a derived Function applied one level down whose forward is the vmapped forward and
  whose backward and jvp are the user's, vmapped.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

from .._core import upcalls
from .._core.dispatch import dispatch
from .._core.inplace import LEAF_VIEW_WRITE
from .._core.interpreter import FUNCTORCH
from .._core.op import VARIADIC, Op, defop, named
from .._core.pytree import tree_flatten
from .._core.state import anomaly, state
from .._core.tensor import Tensor, _new, bump_version
from ..ops.creation import zeros_like
from . import anomaly_mode
from .node import Node, _edge, _seq, _zeros_for
from .profiler_record import named_range
from .rebase import _rebase
from .record import _meta
from .saved import FREED, Saved

__all__ = [
    "BackwardCFunction",
    "Function",
    "FunctionCtx",
    "FunctionMeta",
    "InplaceFunction",
    "once_differentiable",
]

_NO_EDGE = (None, 0)
_T = object()  # a tensor's place in a forward's output layout

_SETUP_CONTEXT = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, "
    "...), it must override the setup_context staticmethod. For more details, please see "
    "https://pytorch.org/docs/main/notes/extending.func.html"
)
_MANY_VIEWS = (
    "If your Function modifies inplace an input that is a view of another Tensor, your "
    "Function cannot return more than one Tensor. This is not supported by the current "
    "autograd engine. You should either make sure the input is not a view (using .clone() "
    "for example) or make your Function only return one Tensor (potentially splitting it into "
    "two Functions: one doing the inplace that returns a single Tensor and a second one that "
    "does the other operations). You can ask on the forum https://discuss.pytorch.org/ if you "
    "need help to do this change."
)


class FunctionCtx:
    """What ``forward``/``setup_context`` use to pass state to ``backward`` and ``jvp``."""

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Save tensors for ``backward`` (read back, version-checked, as ``saved_tensors``)."""
        self.to_save = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Save tensors for ``jvp`` (read back there as ``saved_tensors``)."""
        for tensor in tensors:
            if not (isinstance(tensor, Tensor) or tensor is None):
                raise AssertionError(
                    "save_for_forward expects all arguments to be tensors; you should "
                    "save non-tensors as attributes on ctx."
                )
        self.saved_for_forward = tensors

    def mark_dirty(self, *args: Tensor) -> None:
        """Mark inputs modified in place by ``forward``; they get this Function's history."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args: Tensor) -> None:
        """Mark outputs that do not require grad (``backward`` still gets a gradient
        for them: zeros, or None without materialized grads)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        """Whether missing gradients reach ``backward``/``jvp`` as zeros (True) or None."""
        self.materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """The node of one Function call, which is also its ctx (``y.grad_fn``)."""

    _forward_cls: Any = None
    _nt_layout: tuple = (False, (_T,))
    _nt_in_jvp = False
    materialize_grads = True
    _fits = False  # the engine sums and casts what the user's backward returns

    def name(self) -> str:
        return type(self).__name__

    @property
    def saved_tensors(self) -> tuple:
        if self._nt_in_jvp:
            return tuple(getattr(self, "saved_for_forward", ()))
        saved = self.saved
        if saved is None:
            raise RuntimeError(FREED)
        return tuple(None if s is None else s.unpack(self) for s in saved.values())

    saved_variables = saved_tensors

    def apply(self, grads: list, wanted) -> list:
        """Input gradients from output gradients: the user's backward."""
        materialize = self.materialize_grads
        args, k = [], 0
        for item in self._nt_layout[1]:
            if item is _T:
                g = grads[k]
                if g is None and materialize:
                    g = _zeros_for(self, k)
                args.append(g)
                k += 1
            else:
                args.append(None)
        res = _user_backward(self._forward_cls)(self, *args)
        return _check_grads(self, res, wanted)


def _user_backward(cls) -> Callable:
    backward, vjp = cls.backward, cls.vjp
    if backward is not Function.backward and vjp is not Function.vjp:
        raise RuntimeError(
            "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
            "should only implement one of them."
        )
    return vjp if vjp is not Function.vjp else backward


def _check_grads(node: BackwardCFunction, res, wanted) -> list:
    """PyTorch's checks on what a backward returned; the gradients the engine wants (one
    per tensor input)."""
    res = res if isinstance(res, tuple) else (res,)
    n = node._nt_nin
    if len(res) > n and all(r is None for r in res[n:]):
        res = res[:n]
    if len(res) != n:
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients (expected {n}, "
            f"got {len(res)})"
        )
    metas = iter(node.in_meta[0])
    out = []
    for i, (r, a) in enumerate(zip(res, node._nt_is_tensor)):
        if not a:
            if r is not None:
                raise RuntimeError(
                    f"function {node.name()} returned a gradient different than None at "
                    f"position {i + 1}, but the corresponding forward input was not a Variable"
                )
            continue
        m = next(metas)
        if r is None:
            out.append(None)
            continue
        if not isinstance(r, Tensor):
            raise TypeError(
                f"function {node.name()} returned a gradient of type {type(r).__name__} at "
                f"position {i + 1}, but expected a Tensor or None"
            )
        if not _expandable(m[0], tuple(r.shape)):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {len(out)} - got "
                f"{list(r.shape)} but expected shape compatible with {list(m[0])}"
            )
        out.append(r if wanted[len(out)] else None)
    return out


def _expandable(shape: tuple, to: tuple) -> bool:
    """Whether ``shape`` broadcasts to ``to`` (a gradient of shape ``to`` sums to it)."""
    if len(shape) > len(to):
        return False
    return all(a == b or a == 1 for a, b in zip(reversed(shape), reversed(to)))


class FunctionMeta(type):
    """Builds, per Function class, its node class ``<Name>Backward`` and its op."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(
            name + "Backward", (BackwardCFunction,), {"_forward_cls": cls, "__module__": __name__}
        )
        cls._nt_vmapped = {}
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Base class of custom autograd operations: subclass it with staticmethods
    ``forward`` (and ``setup_context``), ``backward``, optionally ``jvp`` and ``vmap``, and
    call ``apply``."""

    generate_vmap_rule = False

    def __init__(self, *args, **kwargs):
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are "
            "all static, so you should invoke them on the class itself. Instantiating an "
            "autograd function will raise an error in a future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        """The computation: ``forward(ctx, *args)``, or ``forward(*args)`` with
        ``setup_context``."""
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        """Set up ``ctx`` from the forward's inputs and output."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """Gradients of the inputs from gradients of the outputs."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        """Tangents of the outputs from tangents of the inputs."""
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @staticmethod
    def vmap(info, in_dims, *args):
        """The forward on batched inputs: returns (outputs, out_dims)."""
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap "
            "staticmethod or set generate_vmap_rule=True."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run the Function on ``args``, recording it for every active transform."""
        setup = _is_setup_context_defined(cls.setup_context)
        if setup:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        elif _transforms_active():
            raise RuntimeError(_SETUP_CONTEXT)
        call = _Call(cls, kwargs)
        out = dispatch(_op_of(cls), (list(args),), {"call": call})
        if call.dirty:  # an input modified in place is returned as itself
            out = tuple(args[call.dirty[k]] if k in call.dirty else o for k, o in enumerate(out))
        return _join(call.layout, out)


def _is_setup_context_defined(fn) -> bool:
    return fn is not Function.setup_context


def _transforms_active() -> bool:
    """Whether a torch.func transform is active (forward_ad's dual level is not one)."""
    return any(interp.kind in FUNCTORCH for interp in state.stack)


class InplaceFunction(Function):
    """Kept for PyTorch compatibility: a Function with an ``inplace`` flag."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace


class _SavedDict(dict):
    """A node's saved tensors: always truthy, so that the engine frees them (and
    ``saved_tensors`` raises) after a backward pass even when none were saved."""

    __slots__ = ()

    def __bool__(self) -> bool:
        return True


class _Call:
    """One Function call: shared by the levels it passes through."""

    __slots__ = ("cls", "kwargs", "layout", "ctx", "ctx_args", "dirty")

    def __init__(self, cls, kwargs: dict):
        self.cls = cls
        self.kwargs = kwargs
        self.layout = None
        self.ctx = None  # the level-0 ctx and the argument list it was set up on
        self.ctx_args = None
        self.dirty = None  # {output index: input index} of the inputs marked dirty


def _split(out) -> tuple:
    """(layout, tensors) of a forward's output: a tuple or one value; non-tensors stay."""
    is_tuple = isinstance(out, tuple)
    items = out if is_tuple else (out,)
    layout = (is_tuple, tuple(_T if isinstance(o, Tensor) else o for o in items))
    return layout, tuple(o for o in items if isinstance(o, Tensor))


def _join(layout: tuple, tensors) -> Any:
    it = iter(tensors)
    res = tuple(next(it) if o is _T else o for o in layout[1])
    return res if layout[0] else res[0]


def _new_ctx(cls) -> BackwardCFunction:
    ctx = _new(cls._backward_cls)
    ctx._seq = next(_seq)
    ctx.saved = _SavedDict()
    ctx._op = _op_of(cls)
    ctx.attrs = {}
    ctx.next_functions = ()
    ctx.in_meta = [[]]
    ctx._out_meta = ()
    return ctx


class _no_grad:  # noqa: N801 - a cheap grad-mode switch for the forward
    __slots__ = ("prev",)

    def __enter__(self):
        self.prev = state.grad_enabled
        state.grad_enabled = False

    def __exit__(self, *exc):
        state.grad_enabled = self.prev


def _ids(ctx, name: str) -> set:
    return {id(t) for t in getattr(ctx, name, ()) if t is not None}


# In-place writes into a view a Function returned would bypass its backward (PyTorch's texts).
_CUSTOM_VIEW = (
    "Output {k} of {name} is a view and is being modified inplace. This view was created "
    "inside a custom Function (or because an input was returned as-is) and the autograd logic "
    "to handle view+inplace would override the custom backward associated with the custom "
    "Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by "
    "cloning the output of the custom Function."
)
_MANY_OUTPUT_VIEWS = (
    "Output {k} of {name} is a view and is being modified inplace. This view is the output of "
    "a function that returns multiple views. Such functions do not allow the output views to "
    "be modified inplace. You should replace the inplace operation by an out-of-place one."
)


# ----------------------------------------------------------------- level 0
def _eager(args: tuple, attrs: dict) -> tuple:
    """The op at level 0: forward on tensors, then the node (the ctx) if grad is needed."""
    call = attrs["call"]
    cls = call.cls
    inputs = args[0]
    grad_on = state.grad_enabled
    needs = tuple(isinstance(a, Tensor) and a._rg for a in inputs)
    ctx = _new_ctx(cls)
    ctx.needs_input_grad = needs
    with _no_grad(), named_range(cls.__name__):
        if _is_setup_context_defined(cls.setup_context):
            out = cls.forward(*inputs)
            cls.setup_context(ctx, tuple(inputs), out)
        else:
            out = cls.forward(ctx, *inputs, **call.kwargs)
    layout, raw = _split(out)
    call.layout, call.ctx, call.ctx_args = layout, ctx, inputs
    executable = grad_on and any(needs)
    dirty = _mark_dirty(ctx, inputs)
    non_diff = _ids(ctx, "non_differentiable")
    in_ids = {id(a) for a in inputs if isinstance(a, Tensor)}
    if dirty - {id(o) for o in raw}:
        raise RuntimeError(
            "Some elements marked as dirty during the forward method were not returned as "
            "output. The inputs that are modified inplace must all be outputs of the Function."
        )
    outs = []
    if dirty:
        call.dirty = {k: _index_of(inputs, o) for k, o in enumerate(raw) if id(o) in dirty}
    for o in raw:
        if id(o) in dirty:
            if executable:
                _check_dirty(o, len(raw))
        elif id(o) in in_ids or o._base is not None:
            o = _plain_view(o)  # an input returned as-is comes back as a view of it
            if executable and id(o) not in non_diff:
                o._inplace_error = (_MANY_OUTPUT_VIEWS if len(raw) > 1 else _CUSTOM_VIEW).format(
                    k=len(outs), name=cls.__name__
                )
        outs.append(o)
    if executable:
        _attach(ctx, layout, inputs, needs, tuple(outs), raw, non_diff, level0=True)
        for k, (o, r) in enumerate(zip(outs, raw)):
            if id(r) in dirty:
                _rebase_dirty(o, ctx, k)
    else:
        _save(ctx, raw, tuple(outs), level0=True, diff=())
    return tuple(outs)


def _mark_dirty(ctx, inputs) -> set:
    """The ids of the inputs ``ctx.mark_dirty`` named, each of whose version counter is
    bumped once per mention, as PyTorch's ``_mark_dirty`` does (whether or not grad is
    needed); a tensor that is not an input is warned about and treated as a plain output."""
    marked = getattr(ctx, "dirty_tensors", None)
    if not marked:
        return set()
    for t in marked:
        if not isinstance(t, Tensor):  # (PyTorch's text, cut short as it is there)
            raise RuntimeError("mark_dirty can only accept variables, but argument ")
        bump_version(t)
    in_ids = {id(a) for a in inputs if isinstance(a, Tensor)}
    dirty = {id(t) for t in marked}
    if dirty - in_ids:
        warnings.warn(
            "ctx.mark_dirty() received a tensor that was not an input. Only input Tensors "
            "that have been mutated should be passed to ctx.mark_dirty().",
            stacklevel=2,
        )
    return dirty & in_ids


def _check_dirty(t: Tensor, nout: int) -> None:
    if t._view is not None:
        root = t._view[0]
        if root._rg and root._grad_fn is None:
            raise RuntimeError(LEAF_VIEW_WRITE)
        if nout > 1:
            raise RuntimeError(_MANY_VIEWS)
    elif t._rg and t._grad_fn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad has been used in an in-place operation."
        )


def _rebase_dirty(t: Tensor, ctx, k: int) -> None:
    """A dirty input takes this node as its history (through its base for a view)."""
    if t._level or t._view is None:
        _rebase(t, ctx, k)
        return
    carrier = _new(Tensor)
    carrier._data, carrier._ver, carrier._base = t._data, t._ver, None
    carrier._grad_fn, carrier._rg = ctx, True
    if k:
        carrier._out_nr = k
    upcalls.rehistory(t, carrier, True)


def _index_of(inputs, t) -> int:
    return next(i for i, a in enumerate(inputs) if a is t)


def _plain_view(t: Tensor) -> Tensor:
    """A tensor over t's memory and version counter, outside view tracking (the Function's
    node, not a view's regenerated history, is its grad_fn)."""
    v = _new(Tensor)
    v._data, v._ver, v._rg, v._grad_fn = t._data, t._ver, False, None
    v._base = t if t._base is None else t._base
    return v


# ----------------------------------------------------------------- the node
def _attach(ctx, layout, args, needs, outs: tuple, raw: tuple, non_diff: set, level0: bool):
    """Make ctx the node of ``outs``: edges for the inputs that need grad, history for the
    differentiable outputs, saved tensors (``raw`` are the outputs setup_context saw)."""
    # edges (and metadata) for the tensor inputs only, as PyTorch's
    ctx.next_functions = tuple(
        _edge(a) if n else _NO_EDGE for a, n in zip(args, needs) if isinstance(a, Tensor)
    )
    ctx.in_meta = [[_meta(a) for a in args if isinstance(a, Tensor)]]
    ctx._nt_nin = len(args)
    ctx._nt_is_tensor = tuple(isinstance(a, Tensor) for a in args)
    ctx._out_meta = tuple(_meta(o) for o in outs)
    ctx._nt_layout = layout
    diff = []
    for k, (o, r) in enumerate(zip(outs, raw)):
        if id(r) in non_diff or not (o.dtype.is_floating_point or o.dtype.is_complex):
            continue
        o._grad_fn = ctx
        o._rg = True
        if k:
            o._out_nr = k
        diff.append(id(r))
    _save(ctx, raw, outs, level0, set(diff))
    if anomaly.enabled:
        anomaly_mode.store(ctx)


def _save(ctx, raw: tuple, outs: tuple, level0: bool, diff: set) -> None:
    to_save = getattr(ctx, "to_save", None)
    if not to_save:
        return
    by_id = {id(r): o for r, o in zip(raw, outs)}
    saved = _SavedDict()
    for i, t in enumerate(to_save):
        if t is None:
            saved[i] = None
            continue
        if not isinstance(t, Tensor):
            raise TypeError(
                f"save_for_backward can only save variables, but argument {i} is of type "
                f"{type(t).__name__}"
            )
        out = by_id.get(id(t)) if level0 else None  # a grad level saves its inner values
        if out is not None and id(t) in diff:
            saved[i] = Saved(out, True)
        else:
            saved[i] = Saved(t if out is None else out, False)
    ctx.saved = saved
    del ctx.to_save


def _record(args: tuple, attrs: dict, outputs: tuple, inner) -> None:
    """The op's node on a grad level: a ctx set up on this level's inner values."""
    call = attrs["call"]
    cls = call.cls
    level_args = args[0]
    own = level_args if inner is None else inner[0][0]
    raw = outputs if inner is None else inner[1]
    needs = tuple(
        isinstance(a, Tensor) and a._rg and (inner is None or a is not ia)
        for a, ia in zip(level_args, own)
    )
    ctx = _new_ctx(cls)
    ctx.needs_input_grad = needs
    with _no_grad():
        cls.setup_context(ctx, tuple(own), _join(call.layout, raw))
    if any(needs):
        _attach(
            ctx,
            call.layout,
            level_args,
            needs,
            outputs,
            raw,
            _ids(ctx, "non_differentiable"),
            False,
        )
        dirty = _ids(ctx, "dirty_tensors")
        for k, r in enumerate(raw):
            if id(r) in dirty:
                _rebase_dirty(level_args[_index_of(own, r)], ctx, k)


# ----------------------------------------------------------------- forward mode
def _jvp_formula(tangents, args, result, call):
    """The output tangents: the user's jvp on a ctx set up on the primals."""
    cls = call.cls
    if call.ctx is not None and call.ctx_args is args:
        ctx = call.ctx  # set up at level 0 on these very primals (the ctx-style forward's)
    else:
        ctx = _new_ctx(cls)
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) for a in args)
        with _no_grad():
            cls.setup_context(ctx, tuple(args), _join(call.layout, result))
    given = tangents[0] or [None] * len(args)
    fill = ctx.materialize_grads
    tangents = [
        None if not isinstance(a, Tensor) else tt if tt is not None or not fill else zeros_like(a)
        for a, tt in zip(args, given)
    ]
    ctx._nt_in_jvp = True
    try:
        res = cls.jvp(ctx, *tangents)
    finally:
        ctx._nt_in_jvp = False
    res = res if isinstance(res, tuple) else (res,)
    non_diff = _ids(ctx, "non_differentiable")
    picked = [r for r, item in zip(res, call.layout[1]) if item is _T]
    return tuple(None if id(o) in non_diff else r for o, r in zip(result, picked))


# ----------------------------------------------------------------- vmap
class VmapInfo(NamedTuple):
    batch_size: int
    randomness: str


def _has_vmap(cls) -> bool:
    return cls.vmap is not Function.vmap


def _batch_rule(vmap, vals, bdims, attrs):
    call = attrs["call"]
    cls = call.cls
    args, dims = vals[0], bdims[0]
    if cls.generate_vmap_rule:
        if _has_vmap(cls):
            raise RuntimeError(
                f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True "
                "and an overridden vmap staticmethod. Please set generate_vmap_rule=False or "
                "delete the overridden vmap staticmethod to avoid ambiguity. For more details, "
                "please see https://pytorch.org/docs/main/notes/extending.func.html"
            )
    elif not _has_vmap(cls):
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
            "override and implement the vmap staticmethod or set generate_vmap_rule=True. For "
            "more details, please see https://pytorch.org/docs/main/notes/extending.func.html"
        )
    if all(d is None for d in dims):  # nothing batched here: the level below runs it
        return dispatch(_op_of(cls), (args,), attrs), None
    if cls.generate_vmap_rule:
        derived = _vmapped(cls, tuple(dims), vmap.size, vmap.randomness)
        *outs, layout = derived.apply(*args)
        call.layout = layout
        return tuple(outs), (0,) * len(outs)
    result = cls.vmap(VmapInfo(vmap.size, vmap.randomness), tuple(dims), *args)
    _check_vmap_result(result)
    output, out_dims = result
    layout, tensors = _split(output)
    flat_dims = _out_dims(output, out_dims)
    call.layout = layout
    items = output if isinstance(output, tuple) else (output,)
    tdims = []
    for o, d in zip(items, flat_dims):
        if isinstance(o, Tensor):
            tdims.append(None if d is None else d % o.dim())
    return tensors, tuple(tdims)


def _check_vmap_result(result) -> None:
    base = (
        "Expected the vmap staticmethod to have two returns, an output and out_dims with pytree "
        "structure compatible with the output. "
    )
    if not isinstance(result, tuple):
        raise RuntimeError(base + f"Got a {type(result)} instead")
    if len(result) != 2:
        raise RuntimeError(base + f"Got {len(result)} returns instead")


def _out_dims(output, out_dims) -> list:
    """One out_dim per item of the output (a tuple or one value)."""
    items = output if isinstance(output, tuple) else (output,)
    if not isinstance(out_dims, tuple) or not isinstance(output, tuple):
        if isinstance(out_dims, tuple) and len(out_dims) == 1 and not isinstance(output, tuple):
            return list(out_dims)
        if not isinstance(out_dims, tuple):
            return [out_dims] * len(items)
    elif len(out_dims) == len(items):
        return list(out_dims)
    raise RuntimeError(
        "The autograd.Function's vmap staticmethod returned an incompatible (output, out_dims) "
        f"tuple. Expected out_dims={out_dims} to be compatible with the structure of `output`. "
        f"out_dims has structure {tree_flatten(out_dims)[1]} but output has structure "
        f"{tree_flatten(output)[1]}. For more details, please see "
        "https://pytorch.org/docs/main/notes/extending.func.html"
    )


def _restore_vmap(fn: Callable, in_dims, size: int, randomness: str, args: tuple):
    """fn(*args) vmapped over ``in_dims`` (batch size ``size``); every tensor it returns
    is batched along dim 0."""
    if all(d is None for d in tree_flatten(in_dims)[0]):
        out = fn(*args)
        flat, spec = tree_flatten(out)
        from .._core.pytree import tree_unflatten

        return tree_unflatten(
            [x.unsqueeze(0).expand(size, *x.shape) if isinstance(x, Tensor) else x for x in flat],
            spec,
        )
    return upcalls.vmap_call(fn, in_dims, 0, randomness, None, args, {}, none_ok=True)


class _WrappedCtx:
    """A ctx seen by the user's methods inside a derived Function: attribute reads and
    writes go to the real ctx."""

    _reserved = ("_pt_inner_ctx",)

    def __init__(self, ctx):
        object.__setattr__(self, "_pt_inner_ctx", ctx)

    def __getattr__(self, name):
        return getattr(self._pt_inner_ctx, name)

    def __setattr__(self, name, value):
        setattr(self._pt_inner_ctx, name, value)


class _CtxCustomSave(_WrappedCtx):
    """setup_context under vmap: saved tensors are kept unbatched, with their batch dims."""

    def _unwrap(self, ts):
        vals, dims = [], []
        for t in ts:
            if isinstance(t, Tensor) and t._level and t._interp is state.stack[-1]:
                vals.append(t._inner)
                dims.append(t._bdim)
            else:
                vals.append(t)
                dims.append(None)
        return vals, tuple(dims)

    def save_for_backward(self, *tensors):
        vals, dims = self._unwrap(tensors)
        self._pt_inner_ctx.save_for_backward(*vals)
        self._pt_inner_ctx._nt_saved_bdims = dims

    def save_for_forward(self, *tensors):
        vals, dims = self._unwrap(tensors)
        self._pt_inner_ctx.save_for_forward(*vals)
        self._pt_inner_ctx._nt_fwd_bdims = dims

    def mark_non_differentiable(self, *args):
        self._pt_inner_ctx.mark_non_differentiable(*self._unwrap(args)[0])

    def mark_dirty(self, *args):
        self._pt_inner_ctx.mark_dirty(*self._unwrap(args)[0])


class _CtxWithSaved(_WrappedCtx):
    def __init__(self, ctx, saved):
        super().__init__(ctx)
        object.__setattr__(self, "_pt_saved", saved)

    @property
    def saved_tensors(self):
        return self._pt_saved


def _reduce(g, in_dim, shape, size: int):
    """A gradient batched along dim 0 as the input it belongs to: summed over the batch
    for an unbatched input, else per example summed to the input's shape, batch at in_dim."""
    if g is None:
        return None
    if in_dim is None:
        g = g.sum(0)
        return g
    gs = tuple(g.shape[1:])
    if shape is not None and gs != tuple(shape):
        n = len(gs) - len(shape)
        if n > 0:
            g = g.sum(tuple(range(1, n + 1)))
        elif n < 0:
            g = g.reshape(size, *((1,) * -n), *gs).expand(size, *shape)
        keep = tuple(i + 1 for i, (a, b) in enumerate(zip(shape, g.shape[1:])) if a == 1 and b != 1)
        if keep:
            g = g.sum(keep, keepdim=True)
    return g.movedim(0, in_dim) if in_dim else g


def _vmapped(cls, in_dims: tuple, size: int, randomness: str):
    """The Function one level below a vmap: forward is cls.forward vmapped; backward and
    jvp are cls's, vmapped over the saved tensors and the gradients."""
    key = (in_dims, size, randomness)
    derived = cls._nt_vmapped.get(key)
    if derived is not None:
        return derived

    def forward(*operands):
        box = []

        def fwd(*xs):
            layout, tensors = _split(cls.forward(*xs))
            box.append(layout)
            return tensors

        tensors = _restore_vmap(fwd, in_dims, size, randomness, operands)
        return (*tensors, box[0])

    def setup_context(ctx, inputs, output):
        *outs, layout = output
        user_out = _join(layout, outs)
        out_dims = _join(
            (layout[0], tuple(_T if o is _T else None for o in layout[1])), [0] * len(outs)
        )

        def inner(inputs, user_out):
            cls.setup_context(_CtxCustomSave(ctx), inputs, user_out)
            ctx._nt_input_shapes = tuple(
                tuple(x.shape) if isinstance(x, Tensor) else None for x in inputs
            )

        ctx._nt_saved_bdims = ctx._nt_fwd_bdims = ()
        _restore_vmap(inner, (in_dims, out_dims), size, randomness, (tuple(inputs), user_out))
        ctx._nt_user_layout = layout

    def backward(ctx, *grads):
        layout = ctx._nt_user_layout
        it = iter(grads[:-1])
        gs = tuple(next(it) if o is _T else None for o in layout[1])
        gdims = tuple(None if g is None else 0 for g in gs)

        def bw(saved, gs):
            res = _user_backward(cls)(_CtxWithSaved(ctx, saved), *gs)
            return res if isinstance(res, tuple) else (res,)

        res = _restore_vmap(
            bw, (ctx._nt_saved_bdims, gdims), size, randomness, (ctx.saved_tensors, gs)
        )
        shapes = ctx._nt_input_shapes
        return (
            tuple(
                _reduce(g, d, s, size) for g, d, s in zip(res, in_dims + (None,) * len(res), shapes)
            )
            + res[len(in_dims) :]
        )

    def jvp(ctx, *tangents):
        tdims = tuple(None if t is None else d for t, d in zip(tangents, in_dims))

        def jv(saved, ts):
            res = cls.jvp(_CtxWithSaved(ctx, saved), *ts)
            return res if isinstance(res, tuple) else (res,)

        res = _restore_vmap(
            jv, (ctx._nt_fwd_bdims, tdims), size, randomness, (ctx.saved_tensors, tangents)
        )
        layout = ctx._nt_user_layout
        return (*(r for r, o in zip(res, layout[1]) if o is _T), None)

    derived = FunctionMeta(
        f"Vmapped{cls.__name__}",
        (Function,),
        {
            "forward": staticmethod(forward),
            "setup_context": staticmethod(setup_context),
            "backward": staticmethod(backward),
            "jvp": staticmethod(jvp),
            "generate_vmap_rule": True,
        },
    )
    cls._nt_vmapped[key] = derived
    return derived


# ----------------------------------------------------------------- the op
def _op_of(cls) -> Op:
    """The op of a Function class, built on first use."""
    op = cls.__dict__.get("_nt_op")
    if op is None:
        op = _function_op(cls)
        cls._nt_op = op
    return op


def _function_op(cls) -> Op:
    """The op of a Function class (see the module doc)."""
    jvp_args = ("tangents", "args", "result", "call")
    return Op(
        name=cls.__name__,
        impl=_eager,
        recorder=_record,
        inputs=("args",),
        attrs=(("call", None, inspect.Parameter.KEYWORD_ONLY),),
        nin=1,
        list_inputs=frozenset((0,)),
        nout=VARIADIC,
        ndiff=VARIADIC,
        vjps=(None,),
        vjp_args=((),),
        saves=((),),
        jvp=named(_jvp_formula, jvp_args),
        jvp_args=jvp_args,
        batch_rule=_batch_rule,
        api=cls.__name__,
        node_name=cls.__name__ + "Backward",
    )


# ----------------------------------------------------------------- once_differentiable
_TWICE = "trying to differentiate twice a function that was marked with @once_differentiable"


def _delayed_vjp(g):
    raise RuntimeError(_TWICE)


def _delayed_rule(vmap, args, bdims, attrs):
    return dispatch(_delayed_error_p, tuple(args), attrs), bdims[0]


_delayed_error_p = defop(
    "delayed_error",
    lambda xp, input: input,
    vjp=_delayed_vjp,
    node_name="torch::autograd::Error",
    batch_rule=_delayed_rule,
    register=False,
)


def once_differentiable(fn: Callable) -> Callable:
    """A backward that runs without recording; differentiating its result raises."""

    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        with _no_grad():
            outputs = fn(ctx, *args, **kwargs)
        if not state.grad_enabled:
            return outputs
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        res = tuple(None if o is None else _delayed(o) for o in outs)
        return res[0] if single else res

    return wrapper


def _delayed(t: Tensor) -> Tensor:
    t = t.detach()
    t.requires_grad = True
    return dispatch(_delayed_error_p, (t,))
