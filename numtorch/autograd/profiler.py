"""torch.autograd.profiler: the profiler of op calls and backward nodes.

``profile`` times every op call (``aten::mul``), every backward node
(``autograd::engine::evaluate_function: MulBackward0`` around ``MulBackward0``) and every
``record_function`` block run while it is on, with their nesting, and optionally the
input shapes, the bytes each op's results allocate and the calling Python stack.
Profiling costs nothing when off (``profiler_record`` says how it observes).
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any

from . import profiler_record as _rec
from .profiler_util import DeviceType, EventList, FunctionEvent, FunctionEventAvg

__all__ = [
    "DeviceType",
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "emit_itt",
    "emit_nvtx",
    "kineto_available",
    "profile",
    "record_function",
]


def kineto_available() -> bool:
    """Whether PyTorch's Kineto library is there: numtorch has its own profiler instead."""
    return False


def build_events(
    session: _rec.Session, use_device: str | None = None, with_flops: bool = False
) -> EventList:
    """A finished session's ranges as FunctionEvents in start order, with their nesting,
    times in microseconds from the session's start, and memory summed over children."""
    t0 = session.start
    made: dict[int, FunctionEvent] = {}
    events = []
    for i, r in enumerate(session.ranges, 1):
        end = r.end if r.end is not None else session.stop
        e = FunctionEvent(
            id=i,
            name="ProfilerStep*" if r.name.startswith("ProfilerStep#") else r.name,
            trace_name=r.name,
            thread=r.thread,
            start_us=(r.start - t0) / 1000,
            end_us=(end - t0) / 1000,
            input_shapes=r.shapes if session.record_shapes else [],
            stack=r.stack if session.with_stack else [],
            use_device=use_device,
            cpu_memory_usage=r.mem if session.profile_memory else 0,
            sequence_nr=r.seq,
            is_user_annotation=r.user,
        )
        made[id(r)] = e
        parent = made.get(id(r.parent)) if r.parent is not None else None
        if parent is not None:
            parent.append_cpu_child(e)
            e.set_cpu_parent(parent)
        events.append(e)
    for e in reversed(events):  # children after parents: each total is complete when added
        if e.cpu_parent is not None:
            e.cpu_parent.cpu_memory_usage += e.cpu_memory_usage
    return EventList(
        events, use_device=use_device, profile_memory=session.profile_memory, with_flops=with_flops
    )


class record_function(contextlib.ContextDecorator):
    """A named range: as a context manager or a decorator, the ops run inside it are its
    children in the profiler's results (a no-op while no profiler is on)."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self._ranges: list = []

    def __enter__(self) -> record_function:
        if _rec.enabled():
            self._ranges.append(_rec.open_range(self.name, user=True))
        else:
            self._ranges.append(None)
        return self

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        if not self.run_callbacks_on_exit or not self._ranges:
            return
        r = self._ranges.pop()
        if r is not None:
            _rec.close_range(r)

    def _call_end_callbacks_on_future(self, fut):
        """Close the range when ``fut`` completes (numtorch's futures are complete)."""
        self.run_callbacks_on_exit = False
        if self._ranges:
            r = self._ranges.pop()
            if r is not None:
                _rec.close_range(r)
        return fut


_DEVICES = ("cuda", "xpu", "mtia", "hpu")


class profile:
    """Context manager that profiles op calls and backward nodes (the legacy autograd
    profiler). After it exits, ``function_events``, ``key_averages()``, ``table()``,
    ``export_chrome_trace()`` and ``export_stacks()`` give the results."""

    def __init__(
        self,
        enabled: bool = True,
        *,
        use_cuda: bool = False,
        use_device: str | None = None,
        record_shapes: bool = False,
        with_flops: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_modules: bool = False,
        use_kineto: bool = False,
        use_cpu: bool = True,
        experimental_config=None,
        acc_events: bool = False,
        custom_trace_id_callback=None,
    ) -> None:
        self.enabled = enabled
        if not enabled:
            return
        self.use_cuda = use_cuda
        if use_cuda:
            warnings.warn(
                "The attribute `use_cuda` will be deprecated soon, "
                "please use ``use_device = 'cuda'`` instead.",
                FutureWarning,
                stacklevel=2,
            )
            use_device = "cuda"
        if use_device is not None:
            if use_device not in _DEVICES:
                warnings.warn(f"The {use_device} is not a valid device option.", stacklevel=2)
            elif use_device == "cuda":
                warnings.warn("CUDA is not available, disabling CUDA profiling", stacklevel=2)
                self.use_cuda = False
            else:
                warnings.warn(
                    f"{use_device.upper()} is not available, disabling "
                    f"{use_device.upper()} profiling",
                    stacklevel=2,
                )
            use_device = None  # (numtorch profiles the CPU: device times are never there)
        self.use_device = use_device
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        self.entered = False
        self._session: _rec.Session | None = None
        self._function_events: EventList | None = None

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._session = _rec.Session(self.record_shapes, self.profile_memory, self.with_stack)
        _rec.start(self._session)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> bool:
        if not self.enabled:
            return False
        _rec.stop(self._session)
        events = build_events(self._session, self.use_device, self.with_flops)
        if self.acc_events and self._function_events is not None:
            events = EventList(
                [*self._function_events, *events],
                use_device=self.use_device,
                profile_memory=self.profile_memory,
                with_flops=self.with_flops,
            )
        self._function_events = events
        self.entered = False
        return False

    @property
    def function_events(self) -> EventList | None:
        return self._function_events

    def _events(self) -> EventList:
        if self._function_events is None:
            raise AssertionError("Expected profiling results")
        return self._function_events

    def __repr__(self) -> str:
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return repr(self._function_events)

    def __str__(self) -> str:
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return str(self._function_events)

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_src_column_width: int = 75,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header: str | None = None,
        top_level_events_only: bool = False,
        time_unit: str | None = None,
    ) -> str:
        return self._events().table(
            sort_by=sort_by,
            row_limit=row_limit,
            max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            header=header,
            top_level_events_only=top_level_events_only,
            time_unit=time_unit,
        )

    table.__doc__ = EventList.table.__doc__

    def export_chrome_trace(self, path: str) -> None:
        return self._events().export_chrome_trace(path)

    export_chrome_trace.__doc__ = EventList.export_chrome_trace.__doc__

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        events = self._events()
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        return events.export_stacks(path, metric)

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> EventList:
        return self._events().key_averages(
            group_by_input_shape, group_by_stack_n, group_by_overload_name
        )

    key_averages.__doc__ = EventList.key_averages.__doc__

    def total_average(self) -> FunctionEventAvg:
        return self._events().total_average()

    total_average.__doc__ = EventList.total_average.__doc__

    @property
    def self_cpu_time_total(self) -> float:
        """The sum of every event's self time."""
        return self._events().self_cpu_time_total


class _NoOpAnnotator:
    """Context manager that does nothing: the CPU has no NVTX or ITT ranges to emit."""

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError(f"{type(self).__name__} context manager is not reentrant")
        self.entered = True
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> bool:
        self.entered = False
        return False


class emit_nvtx(_NoOpAnnotator):
    """NVIDIA Tools Extension ranges for each op (nothing to emit without CUDA)."""


class emit_itt(_NoOpAnnotator):
    """Intel ITT ranges for each op (nothing to emit here)."""
