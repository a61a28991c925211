"""Tensor-level hooks and retain_grad."""

from __future__ import annotations

import weakref

from .._core import upcalls
from .._core.device import copy_of
from .._core.memory_format import contiguous_format
from .._core.state import state
from .._core.tensor import Tensor, _make
from .node import RemovableHandle


def register_tensor_hook(t: Tensor, hook) -> RemovableHandle:
    """hook(grad) -> new grad or None, run when the gradient for t is computed."""
    if not t._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    fn = t.grad_fn
    if fn is None:
        if t.__dict__.get("_hooks") is None:
            t._hooks = []
        return RemovableHandle(t._hooks, hook)
    if fn._tensor_pre_hooks is None:
        fn._tensor_pre_hooks = {}
    fn._hooked = fn._any_hooks = True
    return RemovableHandle(fn._tensor_pre_hooks, hook, key=t._out_nr)


def retain_grad(t: Tensor) -> None:
    """Populate t.grad for a non-leaf tensor during backward."""
    if not t._rg:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if t.grad_fn is None or t._retains_grad:
        return
    ref = weakref.ref(t)

    def hook(g):
        var = ref()
        if var is None:
            return
        if var._grad is None:  # (PyTorch's contiguous clone; modes see it)
            if g._rg or state.modes:
                var._grad = g.clone(memory_format=contiguous_format)
            else:
                var._grad = _make(copy_of(g._data))
        else:
            var._grad = var._grad + g

    fn = t.grad_fn
    if fn._retain_hooks is None:
        fn._retain_hooks = {}
    fn._hooked = fn._any_hooks = True
    fn._retain_hooks[t._out_nr] = hook
    t._retains_grad = True
    t._retain_nr = t._out_nr


def register_post_accumulate_grad_hook(t: Tensor, hook) -> RemovableHandle:
    """hook(t) after a gradient has been accumulated into the leaf's ``.grad``."""
    if not t._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if t.__dict__.get("_post_acc_hooks") is None:
        t._post_acc_hooks = []
    return RemovableHandle(t._post_acc_hooks, hook)


upcalls.provide(
    register_hook=register_tensor_hook,
    retain_grad=retain_grad,
    register_post_accumulate_grad_hook=register_post_accumulate_grad_hook,
)
