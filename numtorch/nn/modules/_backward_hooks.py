"""A module's full backward hooks: gradients with respect to its outputs and inputs, each
delivered once per backward as a tuple.

The tensors a module's forward receives (and returns) pass through one identity node per
side; a hook on that node's output sees the complete gradients of the whole group at once.
One tensor goes through a view; several go through one flat concatenation, whose
gradient arrives in one piece.
"""

from __future__ import annotations

from ..._core.state import is_grad_enabled
from ..._core.tensor import Tensor
from ...ops.creation import zeros_like
from ...ops.shape import cat


def _group_identity(tensors: list[Tensor], on_grads) -> list[Tensor]:
    """Identity on tensors; on_grads(list of grads) -> None or new grads runs once their
    gradients are complete."""
    if len(tensors) == 1:
        (t,) = tensors
        alias = t.view_as(t)

        def one(g):
            new = on_grads([g])
            return None if new is None else new[0]

        alias.register_hook(one)
        return [alias]
    if len({t.dtype for t in tensors}) > 1:
        raise NotImplementedError(
            "numtorch: full backward hooks need the tensors that require grad on one side of "
            "a module (its inputs, or its outputs) to share a dtype"
        )
    shapes = [t.shape for t in tensors]
    sizes = [t.numel() for t in tensors]
    flat = cat([t.reshape(-1) for t in tensors])

    def many(g):
        new = on_grads([p.view(s) for p, s in zip(g.split(sizes), shapes)])
        if new is None:
            return None
        return cat([(n if n is not None else p).reshape(-1) for n, p in zip(new, g.split(sizes))])

    flat.register_hook(many)
    return [p.view(s) for p, s in zip(flat.split(sizes), shapes)]


def _needs_grad(x) -> bool:
    return isinstance(x, Tensor) and x.requires_grad


def _group(xs) -> tuple[list[int], list[int]]:
    """(positions of the floating tensors, positions of those that require grad): when any
    requires grad, every floating tensor has a gradient entry, zeros for the others (they
    are the non-differentiable outputs of PyTorch's hook function)."""
    rg = [i for i, x in enumerate(xs) if _needs_grad(x)]
    if not rg:
        return [], []
    return [i for i, x in enumerate(xs) if isinstance(x, Tensor) and x.is_floating_point()], rg


class BackwardHook:
    """The full backward hooks and pre-hooks of one call of a module."""

    def __init__(self, module, hooks: list, pre_hooks: list):
        self.module = module
        self.hooks, self.pre_hooks = hooks, pre_hooks  # (as the call found them)
        self.n_inputs = 0
        self.input_idx = None
        self.grad_outputs = None

    def setup_inputs(self, args: tuple) -> tuple:
        self.n_inputs = len(args)
        if not is_grad_enabled():
            return args
        idx, rg = _group(args)
        if not rg or not self.hooks:
            return args
        self.input_idx, self.input_rg, self.inputs = idx, rg, args
        new = list(args)
        for i, t in zip(rg, _group_identity([args[i] for i in rg], self._input_grads)):
            new[i] = t
        return tuple(new)

    def setup_outputs(self, result):
        single = not isinstance(result, tuple)
        outs = (result,) if single else result
        idx, rg = _group(outs)
        if not rg or not is_grad_enabled():
            return result
        self.output_idx, self.output_rg, self.outputs = idx, rg, outs
        new = list(outs)
        for i, t in zip(rg, _group_identity([outs[i] for i in rg], self._output_grads)):
            new[i] = t
        return new[0] if single else type(result)(new)

    @staticmethod
    def _pack(values, idx, rg, grads) -> tuple:
        """One entry per value: the gradient of a tensor that requires grad, zeros for
        another floating tensor, None for anything else."""
        out = [None] * len(values)
        for i in idx:
            out[i] = zeros_like(values[i])
        for i, g in zip(rg, grads):
            out[i] = g
        return tuple(out)

    def _run(self, hooks, grads: tuple, what: str, noun: str, *extra) -> tuple[tuple, bool]:
        """Each hook(module, grads, *extra) in turn; one that returns a tuple replaces
        grads. Returns (grads, whether any replaced them)."""
        changed = False
        for hook in hooks:
            res = hook(self.module, grads, *extra)
            if res is None:
                continue
            res = res if isinstance(res, tuple) else (res,)
            if len(res) != len(grads):
                raise RuntimeError(
                    f"Backward {what} returned an invalid number of {noun}, got "
                    f"{len(res)}, but expected {len(grads)}"
                )
            grads, changed = res, True
        return grads, changed

    def _output_grads(self, grads):
        mod = self.module
        grad_outputs = self._pack(self.outputs, self.output_idx, self.output_rg, grads)
        grad_outputs, changed = self._run(self.pre_hooks, grad_outputs, "pre hook", "grad_output")
        self.grad_outputs = grad_outputs
        if self.input_idx is None and self.hooks:
            none = (None,) * self.n_inputs
            for hook in self.hooks:
                res = hook(mod, none, grad_outputs)
                if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                    raise RuntimeError(
                        "Backward hook for Modules where no input requires gradient should "
                        "always return None or None for all gradients."
                    )
            self.grad_outputs = None
        return [grad_outputs[i] for i in self.output_rg] if changed else None

    def _input_grads(self, grads):
        grad_inputs = self._pack(self.inputs, self.input_idx, self.input_rg, grads)
        grad_inputs, changed = self._run(
            self.hooks, grad_inputs, "hook", "grad_input", self.grad_outputs
        )
        self.grad_outputs = None
        return [grad_inputs[i] for i in self.input_rg] if changed else None
