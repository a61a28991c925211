"""Reverse mode's level: GradTrackingTensor, the interpreter that records every op on
this level's own tape, and ``grad``, ``grad_and_value`` and ``vjp``.

A node on a grad level saves the *inner* values (one level down) and its formulas run
on them, so a backward pass at this level computes with the lower levels' ops: under a
vmap it is batched, under an outer grad it is recorded there. Tensors of other levels
are constants here, which is what keeps nested derivatives apart (no perturbation
confusion).
"""

from __future__ import annotations

from collections.abc import Callable

from .._core.dispatch import dispatch, link_view
from .._core.inplace import _array, commit, shared_write_ok
from .._core.interpreter import Interpreter, WrapperTensor
from .._core.lift import born_inside, captured_write, catch_up, kept, lift
from .._core.out import INTERNAL_OVERLAP, internal_overlap
from .._core.pytree import tree_flatten, tree_map, tree_pprint, tree_unflatten
from .._core.state import state
from .._core.tensor import Tensor
from ..autograd.engine import run_backward
from ..autograd.rebase import rehistory
from ..autograd.record import record
from ..autograd.saved import disable_saved_tensors_hooks
from ..ops.creation import ones_like, zeros_like
from ._args import (
    check_argnums,
    check_tensor_outputs,
    other_args,
    replace_argnums,
    slice_argnums,
    split_aux,
)


class GradTrackingTensor(WrapperTensor):
    """A tensor at a grad level, with autograd state (``requires_grad``, ``grad_fn``) of
    its own at that level."""

    __slots__ = ()

    def detach(self) -> Tensor:
        return self._interp.wrap(self._inner.detach())

    def __repr__(self) -> str:
        inner = repr(self._inner).replace("\n", "\n    ")
        return f"GradTrackingTensor(lvl={self._level}, value=\n    {inner}\n)"

    __str__ = __repr__


_NO_SAVED_HOOKS = disable_saved_tensors_hooks(
    "torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor hooks. Please open "
    "an issue with your use case."
)


class GradInterpreter(Interpreter):
    """One grad level: runs each op on the inner values and records it on this level."""

    def __init__(self, legacy: bool = False):
        self._outer_grad_mode = True
        self.legacy = legacy  # numtorch's stand-in for PyTorch's autograd (not torch.func)

    def __enter__(self):
        _NO_SAVED_HOOKS.__enter__()
        super().__enter__()
        # A transform ignores the grad mode around it; a no_grad inside f still applies.
        self._outer_grad_mode = state.grad_enabled
        state.grad_enabled = True
        return self

    def __exit__(self, *exc):
        state.grad_enabled = self._outer_grad_mode
        try:
            return super().__exit__(*exc)
        finally:
            _NO_SAVED_HOOKS.__exit__()

    def wrap(self, x: Tensor) -> GradTrackingTensor:
        return GradTrackingTensor._new(x, self)

    def wrap_input(self, x) -> GradTrackingTensor:
        """A differentiable input: a leaf that requires grad at this level."""
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        w = self.wrap(x)
        w._set_requires_grad()
        return w

    def unwrap(self, a):
        if isinstance(a, GradTrackingTensor) and a._interp is self:
            return a._inner
        return a

    def process(self, op, args: tuple, attrs: dict):
        if op.list_inputs:
            unwrap = self.unwrap
            inner = tuple(
                [unwrap(x) for x in a]
                if i in op.list_inputs and isinstance(a, (list, tuple))
                else unwrap(a)
                for i, a in enumerate(args)
            )
        else:  # (unwrap, inline: a loop costs less than a comprehension over a few)
            inner = []
            for a in args:
                inner.append(
                    a._inner if isinstance(a, GradTrackingTensor) and a._interp is self else a
                )
            inner = tuple(inner)
        out = dispatch(op, inner, attrs)
        src = args[0]
        if op.view and isinstance(src, GradTrackingTensor) and src._interp is self:
            if op.nout == 1:  # a view where the inner op gave one (not where it copied)
                if out._ver is src._ver:
                    res = GradTrackingTensor._new(out, self)
                    link_view(res, src, op, attrs)
                else:
                    res = self.wrap(out)
            else:  # several views (split): each linked as the view that gives it
                res = tuple(GradTrackingTensor._new(o, self) for o in out)
                for r, (v, va) in zip(res, op.pieces(tuple(src.shape), attrs)):
                    link_view(r, src, v, va, True)
        elif op.nout == 1:
            res = GradTrackingTensor._new(out, self)
        else:
            res = tuple(self.wrap(o) for o in out)
        if op.ndiff and state.grad_enabled and (op.recorder is not None or self._tracks(args, op)):
            record(op, args, attrs, res, (inner, out))
        return res

    def _tracks(self, args: tuple, op) -> bool:
        """Whether an input requires grad at this level (else, as in PyTorch, the op is not
        recorded and its outputs do not require grad)."""
        for i, a in enumerate(args):
            if isinstance(a, GradTrackingTensor):
                # (_rg, without the property's call where a is no view)
                if (a._rg_bit if a._view is None else a._rg) and a._interp is self:
                    return True
            elif isinstance(a, (list, tuple)) and i in op.list_inputs:
                for t in a:
                    if isinstance(t, GradTrackingTensor) and t._rg and t._interp is self:
                        return True
        return False

    def adopt(self, t: Tensor, value) -> None:
        t.__class__ = GradTrackingTensor

    def tracks(self, t: Tensor) -> bool:
        """Whether t, a tensor of this level, carries a derivative of it."""
        return t._rg

    def commit(self, target: Tensor, result: Tensor, op=None) -> None:
        """An in-place write: the inner values in place, then this level's history."""
        tin, rin = self.unwrap(target), self.unwrap(result)
        if tin is target:
            if not result._rg:  # no history to carry (a non-float result, an integer copy_)
                commit(tin, rin, op)
                return
            # A tensor made inside the transform is lifted into this level (PyTorch's is a
            # wrapper from the start); one captured from outside is refused.
            if not born_inside(target, self):
                raise RuntimeError(captured_write(op))
            lift(target, self)
            tin = target._inner
        # PyTorch's grad writes into a tensor it tracks by a copy, which refuses shared
        # elements: at the write, or in backward for the ops that may write them (fill_,
        # triu_, ...); a copy_ of self into itself writes nothing
        shared = target._rg and internal_overlap(_array(tin))
        if shared and not shared_write_ok(op) and not state.self_write:
            raise RuntimeError(INTERNAL_OVERLAP)
        commit(tin, rin, op)
        rehistory(target, result, rin is not result and result._rg, shared)

    def backward(self, outputs, cotangents, inputs, keep_graph: bool = True) -> list:
        """Gradients (inner values, or None where unused) of ``outputs`` with respect to
        ``inputs``, all tensors at this level; cotangents are inner values."""
        pairs = [
            (o, c)
            for o, c in zip(outputs, cotangents)
            if isinstance(o, GradTrackingTensor) and o._interp is self and o._rg
        ]
        if not pairs:
            return [None] * len(inputs)
        outs, cts = zip(*pairs)
        slots = run_backward(outs, cts, keep_graph, True, inputs, accumulate=False)
        return [s[0] for s in slots]


def _unwrap_tree(interp: GradInterpreter, tree):
    return tree_map(lambda x: interp.unwrap(x) if isinstance(x, Tensor) else x, tree)


def _zeros_where_none(grads: list, like: list) -> list:
    return [zeros_like(x) if g is None else g for g, x in zip(grads, like)]


_GV = "grad_and_value(f)(*args)"


def grad_and_value(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """A function returning (gradient of ``func`` w.r.t. the ``argnums`` arguments, its
    value) (torch.func.grad_and_value); with ``has_aux``, (gradient, (value, aux))."""
    return _grad_and_value(func, argnums, has_aux, False)


def autograd_grad(func: Callable, argnums) -> Callable:
    """``grad`` where numtorch stands in for PyTorch's autograd with a grad level
    (autograd.functional's forward-over-reverse hessian): not a torch.func transform, so
    that the function may call Tensor.requires_grad_ as under PyTorch's."""
    gv = _grad_and_value(func, argnums, False, True)
    return lambda *args, **kwargs: gv(*args, **kwargs)[0]


def _grad_and_value(func: Callable, argnums, has_aux: bool, legacy: bool) -> Callable:
    def wrapper(*args, **kwargs):
        nums = check_argnums(argnums, len(args))
        with GradInterpreter(legacy) as interp:
            flat, spec = tree_flatten(slice_argnums(args, nums))
            interp.hold((other_args(args, nums), kwargs))
            wrapped = [interp.wrap_input(x) for x in flat]
            new = tree_unflatten(wrapped, spec)
            output, aux = split_aux(func(*replace_argnums(args, nums, new), **kwargs), has_aux, _GV)
            if isinstance(output, Tensor):
                catch_up(output)  # (a view made before its root took a tracked value)
            if not isinstance(output, Tensor):
                raise RuntimeError(
                    f"{_GV}: Expected f(*args) to return a Tensor, got {_torch_named(type(output))}"
                )
            if output.dim() != 0:
                raise RuntimeError(
                    f"{_GV}: Expected f(*args) to return a scalar Tensor, got tensor with "
                    f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs "
                    "instead?"
                )
            value = interp.unwrap(output)
            grads = interp.backward([output], [ones_like(value)], wrapped, keep_graph=False)
            grads = tree_unflatten(_zeros_where_none(grads, flat), spec)
            if has_aux:
                return grads, (value, _unwrap_tree(interp, aux))
            return grads, value

    return wrapper


def grad(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """A function returning the gradient of scalar ``func`` w.r.t. the ``argnums``
    arguments (torch.func.grad); with ``has_aux``, (gradient, aux)."""
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


_VJP = "vjp(f, *primals)"


def vjp(func: Callable, *primals, has_aux: bool = False):
    """(func(*primals), vjp_fn) where vjp_fn(cotangents) is the vector-Jacobian product
    with respect to every primal (torch.func.vjp); with ``has_aux``, also aux."""
    with GradInterpreter() as interp:
        flat_in, in_spec = tree_flatten(primals)
        wrapped = [interp.wrap_input(x) for x in flat_in]
        out, aux = split_aux(func(*tree_unflatten(wrapped, in_spec)), has_aux, _VJP)
        flat_out, out_spec = tree_flatten(out)
        check_tensor_outputs(flat_out, _VJP)
        for o in flat_out:
            catch_up(o)  # (a view made before its root took a tracked value)
        flat_out = [kept(o, interp) for o in flat_out]  # (vjp_fn runs after this level's exit)
        for o in flat_out:
            if not (o.dtype.is_floating_point or o.dtype.is_complex):
                raise RuntimeError(
                    "vjp(f, ...): All outputs of f must be floating-point or complex Tensors, "
                    f"got Tensor with dtype {o.dtype}"
                )
        results = tree_unflatten([interp.unwrap(o) for o in flat_out], out_spec)
        if has_aux:
            aux = _unwrap_tree(interp, aux)

    def vjp_fn(cotangents, retain_graph: bool = True, create_graph: bool | None = None):
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure "
                f"of outputs to the function. cotangents: {tree_pprint(ct_spec)}, primal output: "
                f"{tree_pprint(out_spec)}"
            )
        for i, (o, c) in enumerate(zip(flat_out, flat_ct)):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {c.shape} and "
                    f"output[{i}] has a shape of {o.shape}."
                )
        grads = interp.backward(flat_out, flat_ct, wrapped, keep_graph=retain_graph)
        return tree_unflatten(_zeros_where_none(grads, flat_in), in_spec)

    return (results, vjp_fn, aux) if has_aux else (results, vjp_fn)


def _torch_named(cls: type) -> str:
    """A class as PyTorch's texts show it: numtorch's own (return types) under torch's name."""
    return str(cls).replace("'numtorch.", "'torch.")
