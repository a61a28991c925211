"""Thread-local state: grad mode, inference mode, and the transform stack; anomaly mode."""

from __future__ import annotations

import threading
import weakref


class _State(threading.local):
    def __init__(self):
        self.grad_enabled = True
        self.inference = False
        # Active transform interpreters, innermost last; interpreter.level == index + 1.
        self.stack: list = []
        # Random ops lift to the innermost vmap below this level (set while a vmap level
        # runs a random op's rule, so that its lower levels batch the draw too).
        self.random_ceiling = 1 << 30
        # Active TorchDispatchModes, innermost last (numtorch._core.aten); empty when off.
        self.modes: list = []
        # The op an in-place method runs now while modes are on: modes see its ``op_`` form.
        self.inplace_op = None
        # The in-place method running, where its name is not its op's + "_" (run_inplace's form).
        self.inplace_form = None
        # An in-place write of a tensor into itself runs now (copy_ of self): no level
        # checks its memory or writes its values (numtorch._core.inplace).
        self.self_write = False
        # The active compiled-autograd context (numtorch._dynamo.compiled_autograd), or None.
        self.compiler = None


state = _State()

# The nodes of numtorch.compile's outputs now alive: a backward pass through one of them runs
# compiled (node._compiler says how).
compiled_nodes: weakref.WeakSet = weakref.WeakSet()

# The graph tasks now executing, innermost last: (task, roots, id). A task's ``current`` is
# the node whose backward runs now (torch._C._current_autograd_node, anomaly's parent_).
graph_tasks: list = []


class _Anomaly:
    """Anomaly mode's flags: process-wide, as in PyTorch (not thread-local)."""

    __slots__ = ("enabled", "check_nan")

    def __init__(self):
        self.enabled = False
        self.check_nan = True


anomaly = _Anomaly()


def is_grad_enabled() -> bool:
    return state.grad_enabled


def is_inference_mode_enabled() -> bool:
    return state.inference


def is_anomaly_enabled() -> bool:
    return anomaly.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return anomaly.check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly mode on or off (torch.set_anomaly_enabled)."""
    anomaly.enabled = bool(enabled)
    anomaly.check_nan = bool(check_nan)
