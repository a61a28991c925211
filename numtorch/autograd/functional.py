"""torch.autograd.functional: vjp, jvp, vhp, hvp, jacobian and hessian of a function of tensors.

Reverse-mode results come from ``autograd.grad`` on the eager tape (jvp and hvp by the
double-backward trick); vectorized jacobians are one batched backward pass
(``is_grads_batched``) or one vmapped forward-mode pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from typing import Any

from .._core.state import is_grad_enabled
from .._core.tensor import Tensor
from ..func._grad import autograd_grad as _func_grad
from ..func._vmap import vmap_call
from ..ops.creation import eye, zeros, zeros_like
from ..ops.shape import stack as _stack
from . import forward_ad as fwAD
from .engine import grad as _autograd_grad_fn
from .grad_mode import enable_grad, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

_STRATEGIES = ("forward-mode", "reverse-mode")

_NOT_DIFFERENTIABLE = {
    "outputs": (
        "Output {i} of the user-provided function does not require gradients. The outputs must "
        "be computed in a differentiable manner from the input when running in strict mode."
    ),
    "grad_inputs": (
        "The gradient with respect to input {i} is independent of the inputs of the "
        "user-provided function. This is not allowed in strict mode."
    ),
    "jacobian": (
        "While computing the hessian, found that the jacobian of the user-provided function "
        "with respect to input {i} is independent of the input. This is not allowed in strict "
        "mode. You should ensure that your function is twice differentiable and that the "
        "jacobian depends on the inputs (this would be violated by a linear function for "
        "example)."
    ),
}

_MISSING_GRAD = {
    "back": (
        "The output of the user-provided function is independent of input {i}. This is not "
        "allowed in strict mode."
    ),
    "back_trick": (
        "The gradient with respect to the input is independent of entry {i} in the "
        "grad_outputs when using the double backward trick to compute forward mode gradients. "
        "This is not allowed in strict mode."
    ),
    "double_back": (
        "The jacobian of the user-provided function is independent of input {i}. This is not "
        "allowed in strict mode."
    ),
    "double_back_trick": (
        "The hessian of the user-provided function is independent of entry {i} in the "
        "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
        "backward trick to replace forward mode AD."
    ),
}

_CONSTANT_GRAD = (
    "The {what} of the user-provided function is independent of input {i}. This is not allowed "
    "in strict mode when create_graph=True."
)

_V_NONE_OUTPUT = (
    "The vector v can only be None if the user-provided function returns a single Tensor with "
    "a single element."
)
_V_NONE_INPUT = (
    "The vector v can only be None if the input to the user-provided function is a single "
    "Tensor with a single element."
)

_BAD_STRATEGY = 'Expected strategy to be either "forward-mode" or "reverse-mode".'
_STRATEGY_HINT = (
    ' Hint: If your function has more outputs than inputs, "forward-mode" tends to be more '
    'performant. Otherwise, prefer to use "reverse-mode".'
)
_FORWARD_CREATE_GRAPH = (
    'torch.autograd.functional.jacobian: `create_graph=True` and `strategy="forward-mode"` '
    "are not supported together (yet). Please either set `create_graph=False` or "
    '`strategy="reverse-mode"`.'
)
_FORWARD_STRICT = (
    'torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are '
    "not supported together (yet). Please either set `strict=False` or "
    '`strategy="reverse-mode"`.'
)
_FORWARD_NOT_VECTORIZED = (  # PyTorch's text, missing space included
    "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
    "only implemented for `vectorize=True`."
)
_VECTORIZE_STRICT = (
    "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
    "supported together. Please either set `strict=False` or `vectorize=False`."
)

_OUTPUTS = "outputs of the user-provided function"


# ----------------------------------------------------------------------------- structure


def _as_tuple(value: Any, arg_name: str | None = None, fn_name: str | None = None) -> Any:
    """Whether ``value`` was a tuple, and ``value`` as a tuple of Tensors; without names,
    only ``value`` as a tuple, unchecked (as PyTorch's)."""
    if arg_name is None and fn_name is None:
        return tuple(value) if isinstance(value, (tuple, list)) else (value,)
    was_tuple = isinstance(value, tuple)
    items = value if was_tuple else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, Tensor):
            where = f"value at index {i}" if was_tuple else f"given {arg_name}"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                f"Tensors but the {where} has type {type(item)}."
            )
    return was_tuple, items


def _unpack(res: tuple, was_tuple: bool) -> Any:
    """Undo ``_as_tuple``: a lone Tensor when the original was not a tuple."""
    return res if was_tuple else res[0]


def _unpack_nested(res: Sequence, outer_tuple: bool, inner_tuple: bool) -> Any:
    """Undo ``_as_tuple`` on both levels of nested blocks (outputs x inputs)."""
    if not inner_tuple:
        res = tuple(row[0] for row in res)
    return _unpack(res, outer_tuple)


def _prepare(tensors: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """Fresh tensor objects for ``tensors``: differentiable views of them when the caller
    wants gradients to reach them (create_graph), detached leaves otherwise."""
    return tuple(
        t.view_as(t) if create_graph and t.requires_grad else t.detach().requires_grad_(need_graph)
        for t in tensors
    )


def _finish(res: tuple, create_graph: bool) -> tuple:
    """Results without history unless ``create_graph`` (nested tuples allowed)."""
    if create_graph:
        return res
    return tuple(r.detach() if isinstance(r, Tensor) else _finish(r, False) for r in res)


# PyTorch's names for the helpers above, which libraries import (pytorch-minimize).
_grad_preprocess = _prepare
_grad_postprocess = _finish


def _tuple_postprocess(res: Any, to_unpack: bool | tuple[bool, bool]) -> Any:
    """Undo ``_as_tuple`` on ``res``: one flag, or (outer, inner) for nested blocks."""
    if isinstance(to_unpack, tuple):
        if len(to_unpack) != 2:
            raise AssertionError("Expected to_unpack tuple to have exactly 2 elements")
        return _unpack_nested(res, *to_unpack)
    return _unpack(res, to_unpack)


def _check_v(v: tuple, like: tuple, like_is_tuple: bool) -> None:
    """``v`` has one tensor per entry of ``like``, each of the same size."""
    if len(v) != len(like):
        if like_is_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(like)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, like)):
        if a.size() != b.size():
            prefix = f"Entry {i} in " if like_is_tuple else ""
            raise RuntimeError(
                f"{prefix}v has invalid size: should be {b.size()} but got {a.size()}."
            )


def _prepare_v(v: Any, like: tuple, like_is_tuple: bool, fn_name: str, create_graph: bool) -> tuple:
    """``v`` as a validated tuple of tensors, connected to its history only under create_graph."""
    _, v = _as_tuple(v, "v", fn_name)
    v = _prepare(v, create_graph, need_graph=False)
    _check_v(v, like, like_is_tuple)
    return v


def _require_single_element(tensors: tuple, message: str) -> None:
    """Raise ``message`` unless ``tensors`` is one tensor of one element (v may be None)."""
    if len(tensors) != 1 or tensors[0].numel() != 1:
        raise RuntimeError(message)


# ----------------------------------------------------------------------------- strictness


def _check_requires_grad(tensors: Sequence, kind: str, strict: bool) -> None:
    """In strict mode: every entry exists and requires grad (``kind`` picks the message)."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. "
                "This is not allowed in strict mode."
            )
        if not t.requires_grad:
            raise RuntimeError(_NOT_DIFFERENTIABLE[kind].format(i=i))


def _fill_zeros(grads: tuple, refs: tuple, strict: bool, create_graph: bool, stage: str) -> tuple:
    """Zeros shaped like ``refs`` for missing gradients; strict mode refuses them instead,
    and with create_graph also refuses gradients that do not depend on the inputs."""
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_MISSING_GRAD[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if stage.startswith("double") else "jacobian"
            raise RuntimeError(_CONSTANT_GRAD.format(what=what, i=i))
        res.append(g)
    return tuple(res)


# ----------------------------------------------------------------------------- gradients


def _grad(
    outputs: tuple,
    inputs: tuple,
    grad_outputs: tuple | None = None,
    create_graph: bool = False,
    retain_graph: bool | None = None,
    is_grads_batched: bool = False,
) -> tuple:
    """autograd.grad over the outputs that require grad (None entries and constants are
    skipped); None for every input when no output is differentiable."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    return _autograd_grad_fn(
        tuple(o for o, _ in kept),
        inputs,
        tuple(g for _, g in kept),
        retain_graph=retain_graph,
        create_graph=create_graph,
        allow_unused=True,
        is_grads_batched=is_grads_batched,
    )


def _call(func: Callable, inputs: tuple, fn_name: str, strict: bool) -> tuple[bool, tuple]:
    """Run the user's function; (was its output a tuple, its outputs as a tuple)."""
    was_tuple, outputs = _as_tuple(func(*inputs), _OUTPUTS, fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    return was_tuple, outputs


def _call_scalar(func: Callable, inputs: tuple, fn_name: str, strict: bool) -> Tensor:
    """Run a user's function that must return one tensor with one element."""
    was_tuple, outputs = _call(func, inputs, fn_name, strict)
    if was_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a single "
            "element"
        )
    return outputs[0]


def _backward_mode(create_graph: bool) -> set_grad_enabled:
    """The grad mode for the final backward pass: on under create_graph, else unchanged."""
    return set_grad_enabled(True if create_graph else is_grad_enabled())


# ----------------------------------------------------------------------------- vjp / jvp


def vjp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple[Any, Any]:
    """(func(inputs), v^T J): the vector-Jacobian product at ``inputs``."""
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _call(func, inputs, "vjp", strict)
        if v is not None:
            v = _prepare_v(v, outputs, outputs_tuple, "vjp", create_graph)
        else:
            _require_single_element(outputs, _V_NONE_OUTPUT)
    with _backward_mode(create_graph):
        grads = _grad(outputs, inputs, v, create_graph=create_graph)
        res = _fill_zeros(grads, inputs, strict, create_graph, "back")
    return (
        _unpack(_finish(outputs, create_graph), outputs_tuple),
        _unpack(_finish(res, create_graph), inputs_tuple),
    )


def _prepare_inputs_and_v(
    inputs: Any, v: Any, fn_name: str, create_graph: bool
) -> tuple[bool, tuple, tuple | None]:
    """Inputs prepared for differentiation and ``v`` validated against them."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _prepare(inputs, create_graph, need_graph=True)
    if v is not None:
        v = _prepare_v(v, inputs, inputs_tuple, fn_name, create_graph)
    else:
        _require_single_element(inputs, _V_NONE_INPUT)
    return inputs_tuple, inputs, v


def jvp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple[Any, Any]:
    """(func(inputs), J v): the Jacobian-vector product, by the double-backward trick."""
    with enable_grad():
        inputs_tuple, inputs, v = _prepare_inputs_and_v(inputs, v, "jvp", create_graph)
        outputs_tuple, outputs = _call(func, inputs, "jvp", strict)
        # The backward pass is linear in these dummies; their value never matters.
        dummies = tuple(zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _grad(outputs, inputs, dummies, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with enable_grad() if create_graph else nullcontext():
        grads = _grad(grad_inputs, dummies, v, create_graph=create_graph)
        res = _fill_zeros(grads, outputs, strict, create_graph, "back_trick")
    return (
        _unpack(_finish(outputs, create_graph), outputs_tuple),
        _unpack(_finish(res, create_graph), outputs_tuple),
    )


# ----------------------------------------------------------------------------- vhp / hvp


def _scalar_and_gradient(
    func: Callable, inputs: Any, v: Any, fn_name: str, create_graph: bool, strict: bool
) -> tuple[bool, tuple, tuple | None, Tensor, tuple]:
    """Shared start of vhp and hvp: the prepared inputs and v, the scalar output and its
    gradient with history (for a second backward pass)."""
    inputs_tuple, inputs, v = _prepare_inputs_and_v(inputs, v, fn_name, create_graph)
    out = _call_scalar(func, inputs, fn_name, strict)
    jac = _grad((out,), inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return inputs_tuple, inputs, v, out, jac


def _second_order_result(
    out: Tensor, res: tuple, inputs_tuple: bool, create_graph: bool
) -> tuple[Any, Any]:
    """(output, result) as vhp and hvp return them."""
    return _finish((out,), create_graph)[0], _unpack(_finish(res, create_graph), inputs_tuple)


def vhp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple[Any, Any]:
    """(func(inputs), v^T H): vector times the Hessian of a scalar function."""
    with enable_grad():
        inputs_tuple, inputs, v, out, jac = _scalar_and_gradient(
            func, inputs, v, "vhp", create_graph, strict
        )
    with _backward_mode(create_graph):
        grads = _grad(jac, inputs, v, create_graph=create_graph)
        res = _fill_zeros(grads, inputs, strict, create_graph, "double_back")
    return _second_order_result(out, res, inputs_tuple, create_graph)


def hvp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple[Any, Any]:
    """(func(inputs), H v): the Hessian of a scalar function times a vector, by the
    double-backward trick on its gradient."""
    with enable_grad():
        inputs_tuple, inputs, v, out, jac = _scalar_and_gradient(
            func, inputs, v, "hvp", create_graph, strict
        )
        dummies = tuple(zeros_like(x, requires_grad=True) for x in inputs)
        jac_dummies = _grad(jac, inputs, dummies, create_graph=True)
    with _backward_mode(create_graph):
        grads = _grad(jac_dummies, dummies, v, create_graph=create_graph)
        res = _fill_zeros(grads, inputs, strict, create_graph, "double_back_trick")
    return _second_order_result(out, res, inputs_tuple, create_graph)


# ----------------------------------------------------------------------------- jacobian


def _construct_standard_basis_for(
    tensors: tuple[Tensor, ...], tensor_numels: tuple[int, ...]
) -> tuple[Tensor, ...]:
    """The identity of size sum(tensor_numels), split by columns into one chunk per tensor,
    each in that tensor's dtype and device: chunk k is (total, tensor_numels[k])
    (PyTorch's private helper, which libraries import)."""
    if len(tensors) != len(tensor_numels):
        raise AssertionError(
            "Expected tensors and tensor_numels to have the same length, "
            f"but got {len(tensors)} and {len(tensor_numels)}"
        )
    if len(tensors) == 0:
        raise AssertionError("Expected at least one tensor")
    if len(tensors) == 1:  # (the identity itself)
        t = tensors[0]
        return (eye(tensor_numels[0], dtype=t.dtype, device=t.device),)
    total, start, chunks = sum(tensor_numels), 0, []
    for t, n in zip(tensors, tensor_numels):
        chunk = zeros(total, n, dtype=t.dtype, device=t.device)
        chunk[start : start + n] = eye(n, dtype=t.dtype, device=t.device)
        chunks.append(chunk)
        start += n
    return tuple(chunks)


def _jacobian_rows(outputs: tuple, inputs: tuple, create_graph: bool, strict: bool) -> tuple:
    """Jacobian blocks [output][input], one backward pass per output element."""
    blocks = []
    for i, out in enumerate(outputs):
        flat = out.reshape(-1)
        rows: list[list] = [[] for _ in inputs]
        for j in range(out.numel()):
            grads = _grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
            for k, (g, x) in enumerate(zip(grads, inputs)):
                rows[k].append(_jacobian_row(g, x, i, k, create_graph, strict))
        blocks.append(tuple(_stack(r, 0).view(out.size() + x.size()) for r, x in zip(rows, inputs)))
    return tuple(blocks)


def _jacobian_row(
    g: Tensor | None, x: Tensor, i: int, k: int, create_graph: bool, strict: bool
) -> Tensor:
    """One row of block (i, k): the gradient, or zeros where output i ignores input k."""
    if g is None:
        if strict:
            raise RuntimeError(
                f"Output {i} of the user-provided function is independent of input {k}. "
                "This is not allowed in strict mode."
            )
        return zeros_like(x)
    if strict and create_graph and not g.requires_grad:
        # PyTorch names the output's index here; so do we, for identical messages.
        raise RuntimeError(_CONSTANT_GRAD.format(what="jacobian", i=i))
    return g


def _jacobian_batched(outputs: tuple, inputs: tuple, create_graph: bool) -> tuple:
    """Jacobian blocks [output][input] from one batched backward pass whose grad_outputs
    are the standard basis of the concatenated, flattened outputs."""
    numels = tuple(o.numel() for o in outputs)
    basis = _construct_standard_basis_for(outputs, numels)
    flat = tuple(o if o.dim() == 1 else o.reshape(-1) for o in outputs)  # (internal)
    grads = _grad(flat, inputs, basis, create_graph=create_graph, is_grads_batched=True)
    total = sum(numels)
    per_input = [
        g if g is not None else zeros_like(x).expand((total, *x.shape))
        for g, x in zip(grads, inputs)
    ]
    pieces = [g.split(numels, dim=0) if len(numels) > 1 else (g,) for g in per_input]
    return tuple(
        tuple(_block(p[i], out.shape + x.shape, create_graph) for p, x in zip(pieces, inputs))
        for i, out in enumerate(outputs)
    )


def _block(g: Tensor, shape: tuple, create_graph: bool) -> Tensor:
    """``g`` viewed as ``shape``; without create_graph (the result is detached next), ``g``
    itself where it has that shape already."""
    if not create_graph and g.shape == shape:
        return g
    return g.view(shape)


def _jacobian_forward(func: Callable, inputs: Any, strict: bool, vectorize: bool) -> Any:
    """Jacobian by forward mode: one vmapped pass of dual tensors whose tangents are the
    standard basis of the concatenated, flattened inputs."""
    if strict:
        raise RuntimeError(_FORWARD_STRICT)
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError(_FORWARD_NOT_VECTORIZED)
    numels = tuple(x.numel() for x in inputs)
    seen: dict = {}

    def push(*tangents: Tensor) -> tuple:
        with fwAD.dual_level():
            duals = tuple(fwAD.make_dual(x, t.view_as(x)) for x, t in zip(inputs, tangents))
            seen["tuple"], outs = _as_tuple(func(*duals), "outputs", None)
            pairs = [fwAD.unpack_dual(o) for o in outs]
            seen["shapes"] = [p.size() for p, _ in pairs]
            return tuple(zeros_like(p) if t is None else t for p, t in pairs)

    # (PyTorch's first vmap, as PyTorch's jacobian uses: not a torch.func transform)
    basis = tuple(_construct_standard_basis_for(inputs, numels))
    per_output = vmap_call(push, 0, 0, "error", None, basis, {}, legacy=True)
    # Lists, not tuples: PyTorch's forward-mode jacobian returns lists of lists when the
    # inputs are a tuple, and so do we.
    blocks = [
        [
            piece.permute(*range(1, piece.dim()), 0).reshape(shape + x.size())
            for piece, x in zip(jac.split(numels, dim=0), inputs)
        ]
        for jac, shape in zip(per_output, seen["shapes"])
    ]
    return _unpack_nested(blocks, seen["tuple"], inputs_tuple)


def jacobian(
    func: Callable,
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of ``func`` at ``inputs``: block [i][j] has shape output_i + input_j."""
    if strategy not in _STRATEGIES:
        raise AssertionError(_BAD_STRATEGY + _STRATEGY_HINT)
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(_FORWARD_CREATE_GRAPH)
        return _jacobian_forward(func, inputs, strict, vectorize)
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _call(func, inputs, "jacobian", strict)
        if vectorize:
            if strict:
                raise RuntimeError(_VECTORIZE_STRICT)
            blocks = _jacobian_batched(outputs, inputs, create_graph)
        else:
            blocks = _jacobian_rows(outputs, inputs, create_graph, strict)
        return _unpack_nested(_finish(blocks, create_graph), outputs_tuple, inputs_tuple)


# ----------------------------------------------------------------------------- hessian


def hessian(
    func: Callable,
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of a scalar ``func``: the Jacobian of its (reverse-mode) gradient; block
    [i][j] has shape input_i + input_j."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in _STRATEGIES:
        raise AssertionError(_BAD_STRATEGY)

    def scalar(*xs: Tensor) -> Tensor:
        out = _call_scalar(func, xs, "hessian", strict)
        return out if out.dim() == 0 else out.squeeze()  # (only differentiated: no alias)

    def gradient(*xs: Tensor) -> tuple:
        if outer_jacobian_strategy == "forward-mode":
            # Forward over reverse: the inner gradient is a func transform, so that the
            # tangents of the outer dual tensors flow through its backward pass.
            return _func_grad(scalar, argnums=tuple(range(len(xs))))(*xs)
        # The gradient of the scalar, with its graph: what jacobian(scalar, xs,
        # create_graph=True) gives, without the row-by-row views and stack around the one
        # backward pass (xs are the outer jacobian's fresh leaves already).
        grads = _grad((scalar(*xs),), xs, create_graph=True)
        jac = tuple(zeros_like(x) if g is None else g for g, x in zip(grads, xs))
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(
        gradient,
        inputs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return _unpack_nested(res, inputs_tuple, inputs_tuple)
