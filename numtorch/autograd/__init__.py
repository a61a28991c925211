"""torch.autograd: the eager engine, grad modes, and graph inspection."""

from __future__ import annotations

from . import anomaly_mode, function, graph, hooks, profiler, rebase, record, variable  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .engine import backward, grad
from .function import Function
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from .gradcheck import gradcheck, gradgradcheck
from .task import set_multithreading_enabled
from .variable import Variable

__all__ = [
    "Function",
    "Variable",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "inference_mode",
    "no_grad",
    "set_detect_anomaly",
    "set_grad_enabled",
    "set_multithreading_enabled",
]
