"""Calls from a low layer up into a higher one.

Imports point down only. Where a low layer must call up (the dispatcher records a node,
a Tensor runs ``backward``, the engine vmaps a batched backward), it calls
``upcalls.<name>(...)``, and the layer that owns the function installs it at import time
with ``provide(<name>=fn)``. This is the one mechanism for upward calls.
"""

from __future__ import annotations

from collections.abc import Callable

_NAMES: set[str] = set()


def _missing(name: str, owner: str) -> Callable:
    _NAMES.add(name)

    def call(*args, **kwargs):
        raise RuntimeError(f"numtorch: {name} is provided by {owner}, which was not imported")

    return call


# Each name, the layer that provides it, and what it does.
record = _missing("record", "numtorch.autograd.record")  # a node for an op call's outputs
# op's recorder at level 0: recorder(op)(args, attrs, outputs) is record(op, args, attrs, outputs)
recorder = _missing("recorder", "numtorch.autograd.record")
rehistory = _missing("rehistory", "numtorch.autograd.rebase")  # history after an in-place write
refresh_view = _missing("refresh_view", "numtorch.autograd.rebase")  # a stale view's grad_fn
relayout = _missing("relayout", "numtorch.autograd.rebase")  # history after t_, squeeze_, ...
backward = _missing("backward", "numtorch.autograd.engine")  # Tensor.backward
register_hook = _missing("register_hook", "numtorch.autograd.hooks")  # Tensor.register_hook
retain_grad = _missing("retain_grad", "numtorch.autograd.hooks")  # Tensor.retain_grad
# Tensor.register_post_accumulate_grad_hook
register_post_accumulate_grad_hook = _missing(
    "register_post_accumulate_grad_hook", "numtorch.autograd.hooks"
)
vmap_call = _missing("vmap_call", "numtorch.func")  # the engine's batched backward
dual_call = _missing("dual_call", "numtorch.autograd.forward_ad")  # gradcheck's forward mode
# a backward pass run as compiled code (NotImplemented: run it eagerly)
compiled_backward = _missing("compiled_backward", "numtorch._dynamo.compiled_autograd")
dispatch_mode = _missing("dispatch_mode", "numtorch._core.aten")  # an op call under modes
detach_op = _missing("detach_op", "numtorch.ops.tensor_extras")  # Tensor.detach as an op call
# the name PyTorch's errors give an in-place call (aten::add_.Tensor)
inplace_name = _missing("inplace_name", "numtorch._core.aten")
# the names PyTorch's errors give an out= call (aten::add.out, add_out)
out_names = _missing("out_names", "numtorch._core.aten")


def _plain_factory(fn: Callable, args: tuple, kwargs: dict):
    return fn(*args, **kwargs)


# a factory call (zeros, randn, ...) while state.modes is true (the profiler times it)
factory_mode = _plain_factory
_NAMES.add("factory_mode")


def provide(**fns: Callable) -> None:
    """Install the functions a higher layer owns (``provide(record=record)``)."""
    for name, fn in fns.items():
        if name not in _NAMES:
            raise KeyError(f"numtorch: no upward call named {name!r}")
        globals()[name] = fn
