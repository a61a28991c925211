"""torch.profiler: the profiler with schedules, trace handlers and steps, on top of
``numtorch.autograd.profiler``."""

from __future__ import annotations

from ..autograd.profiler import record_function
from ..autograd.profiler_util import DeviceType
from .profiler import (
    ProfilerAction,
    ProfilerActivity,
    kineto_available,
    profile,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)

__all__ = [
    "profile",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
    "ProfilerAction",
    "ProfilerActivity",
    "kineto_available",
    "DeviceType",
    "record_function",
]
