"""Anomaly mode (torch.autograd.anomaly_mode): forward tracebacks on nodes, NaN checks."""

from __future__ import annotations

import sys
import traceback
import warnings

from .._core.state import (
    graph_tasks,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)

__all__ = ["detect_anomaly", "set_detect_anomaly"]

# Modules of the machinery that records a node; the stored traceback ends above their
# frames, at the call that ran the op (as PyTorch's ends at the Python line calling a C++
# op). An op's generated Python function runs in a namespace with no module name.
_INTERNAL = tuple(
    f"numtorch.{d}" for d in ("_core.", "ops.", "autograd.", "func.", "nn._", "linalg", "special")
)


class detect_anomaly:
    """Context manager that turns anomaly detection on for the autograd engine.

    Nodes recorded inside keep the traceback of the forward call that made them; a node
    whose backward raises warns with that traceback; with ``check_nan`` a backward that
    returns NaN raises.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and "
            "should only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Set anomaly detection on or off, now, or for a with-block."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


def store(node) -> None:
    """Record the forward traceback (and the node running backward, if any) on a node."""
    f = sys._getframe(1)
    while f is not None and (f.f_globals.get("__name__") or "numtorch._core.").startswith(
        _INTERNAL
    ):
        f = f.f_back
    meta = node.metadata
    meta["traceback_"] = traceback.format_list(traceback.extract_stack(f))
    if graph_tasks and graph_tasks[-1][0].current is not None:
        meta["parent_"] = graph_tasks[-1][0].current


def check_nan(node, outs: list) -> None:
    """PyTorch's error when a node's backward returned NaN in some output."""
    for i, g in enumerate(outs):
        if g is None:
            continue
        while g._level:  # a transform's wrapper: check the values it holds
            g = g._inner
        d = g._data
        if (d != d).any():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def run(execute, task, *args) -> None:
    """``execute(task, *args)``; warns with the failing node's forward traceback."""
    try:
        execute(task, *args)
    except Exception:
        if task.current is not None:
            _warn_stack(task.current)
        raise


def _warn_stack(node) -> None:
    meta = node._metadata or {}
    _warn(node.name(), meta.get("traceback_"), False)
    parent = meta.get("parent_")
    while parent is not None:
        meta = parent._metadata or {}
        _warn(parent.name(), meta.get("traceback_"), True)
        parent = meta.get("parent_")


def _warn(name: str, stack, is_parent: bool) -> None:
    if stack is None:
        msg = (
            f"Error detected in {name}. No forward pass information available. Enable detect "
            "anomaly during forward pass for more information."
        )
    elif is_parent:
        msg = (
            f"\n\nPrevious calculation was induced by {name}. Traceback of forward call that "
            "induced the previous calculation:\n" + "".join(stack)
        )
    else:
        msg = (
            f"Error detected in {name}. Traceback of forward call that caused the error:\n"
            + "".join(stack)
        )
    warnings.warn(msg, stacklevel=5)
