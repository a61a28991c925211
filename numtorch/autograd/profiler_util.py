"""torch.autograd.profiler_util: the profiler's results.

``FunctionEvent`` is one timed range (an op call, a backward node, a ``record_function``),
``FunctionEventAvg`` the sum of the events of one key, and ``EventList`` a list of either
with PyTorch's summary table, Chrome trace and flame-graph stack exports. Times are in
microseconds, memory in bytes.
"""

from __future__ import annotations

import enum
import json
import os

from .profiler_table import _format_time, build_table

__all__ = ["DeviceType", "EventList", "FunctionEvent", "FunctionEventAvg", "Interval"]


class DeviceType(enum.Enum):
    """Where an event ran (torch.autograd.DeviceType); numtorch's events are on the CPU."""

    CPU = 0
    CUDA = 1


class Interval:
    """A time range in microseconds."""

    __slots__ = ("start", "end")

    def __init__(self, start: float, end: float) -> None:
        self.start = start
        self.end = end

    def elapsed_us(self) -> float:
        return self.end - self.start


class _Times:
    """The ``*_str`` texts and the per-call average of an event or an average of events."""

    @property
    def cpu_time(self) -> float:
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self) -> float:
        return 0.0 if self.count == 0 else self.device_time_total / self.count

    cuda_time = device_time

    @property
    def cpu_time_str(self) -> str:
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self) -> str:
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self) -> str:
        return _format_time(self.self_cpu_time_total)

    @property
    def device_time_str(self) -> str:
        return _format_time(self.device_time)

    @property
    def device_time_total_str(self) -> str:
        return _format_time(self.device_time_total)

    @property
    def self_device_time_total_str(self) -> str:
        return _format_time(self.self_device_time_total)


class FunctionEvent(_Times):
    """One profiled range: its name, thread, time range, shapes, memory and nesting."""

    def __init__(
        self,
        id: int,
        name: str,
        thread: int,
        start_us: float,
        end_us: float,
        overload_name: str | None = None,
        fwd_thread: int | None = None,
        input_shapes: list | None = None,
        stack: list | None = None,
        scope: int = 0,
        use_device: str | None = None,
        cpu_memory_usage: int = 0,
        device_memory_usage: int = 0,
        is_async: bool = False,
        is_remote: bool = False,
        sequence_nr: int = -1,
        node_id: int = -1,
        device_type: DeviceType = DeviceType.CPU,
        device_index: int = 0,
        is_legacy: bool = False,
        flops: int | None = None,
        trace_name: str | None = None,
        is_user_annotation: bool = False,
    ) -> None:
        self.id = id
        self.node_id = node_id
        self.name = name
        self.overload_name = overload_name or ""
        self.trace_name = trace_name if trace_name is not None else name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = fwd_thread
        self.kernels: list = []
        self.count = 1
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.scope = scope
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.device_memory_usage = device_memory_usage
        self.is_async = is_async
        self.is_remote = is_remote
        self.sequence_nr = sequence_nr
        self.device_type = device_type
        self.device_index = device_index
        self.is_legacy = is_legacy
        self.flops = flops or 0
        self.is_user_annotation = is_user_annotation
        self.self_cpu_percent = -1
        self.total_cpu_percent = -1

    def append_cpu_child(self, child: FunctionEvent) -> None:
        """Add a range that ran inside this one."""
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent: FunctionEvent) -> None:
        self.cpu_parent = parent

    @property
    def key(self) -> str:
        return self.name

    @property
    def cpu_time_total(self) -> float:
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self) -> float:
        """The time not spent in child ranges."""
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self) -> int:
        """The bytes allocated by this range itself, not by its children."""
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    device_time_total = 0.0
    self_device_time_total = 0.0
    self_device_memory_usage = 0
    cuda_time_total = 0.0
    self_cuda_time_total = 0.0
    cuda_memory_usage = 0
    self_cuda_memory_usage = 0

    def __repr__(self) -> str:
        return (
            f"<FunctionEvent id={self.id} name={self.name} overload_name={self.overload_name} "
            f"device_type={self.device_type} node_id={self.node_id} "
            f"cpu_time={self.cpu_time_str} start_us={self.time_range.start} "
            f"end_us={self.time_range.end} "
            f"cpu_children={[c.id for c in self.cpu_children]} name={self.name} "
            f"thread={self.thread} input_shapes={self.input_shapes} "
            f"cpu_memory_usage={self.cpu_memory_usage} is_async={self.is_async} "
            f"is_remote={self.is_remote} seq_nr={self.sequence_nr} is_legacy={self.is_legacy}>"
        )


class FunctionEventAvg(_Times):
    """The events of one key (name, and shapes or stack when grouped by them) summed."""

    def __init__(self) -> None:
        self.key: str | None = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device: str | None = None
        self.cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.self_device_time_total = 0.0
        self.input_shapes: list | None = None
        self.overload_name: str | None = None
        self.stack: list | None = None
        self.scope: int | None = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children: list | None = None
        self.cpu_parent: FunctionEvent | None = None
        self.device_type = DeviceType.CPU
        self.is_legacy = False
        self.flops = 0
        self.is_user_annotation = False

    def add(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        """Fold an event (or another average of the same key) into this one."""
        if self.key is None:
            self.key = other.key
            self.node_id = other.node_id
            self.is_async = other.is_async
            self.is_remote = other.is_remote
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
            self.overload_name = other.overload_name
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.scope = other.scope
            self.device_type = other.device_type
            self.is_legacy = other.is_legacy
            self.use_device = other.use_device
            self.is_user_annotation = other.is_user_annotation
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise AssertionError("Expected other to be a FunctionEvent or FunctionEventAvg")
        if other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {other.key} vs {self.key}")
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.count += other.count
        self.flops += other.flops
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self) -> str:
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
            f"cpu_time={self.cpu_time_str}  self_cuda_time=0.000us cuda_time=0.000us "
            f"input_shapes={self.input_shapes or ''} cpu_memory_usage={self.cpu_memory_usage} "
            "cuda_memory_usage=0>"
        )


_STACK_METRICS = [
    "self_cpu_time_total",
    "self_cuda_time_total",
    "self_xpu_time_total",
    "self_privateuse1_time_total",
]


def _device_attr(name: str) -> str:
    """A metric's attribute: ``cuda``/``xpu``/``privateuse1`` names read the device's."""
    for dev in ("cuda", "xpu", "privateuse1"):
        name = name.replace(dev, "device")
    return name


class EventList(list):
    """A list of profiler events, with summaries and exports."""

    def __init__(self, *args, **kwargs) -> None:
        use_device = kwargs.pop("use_device", None)
        profile_memory = kwargs.pop("profile_memory", False)
        with_flops = kwargs.pop("with_flops", False)
        super().__init__(*args, **kwargs)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops

    def __str__(self) -> str:
        return self.table()

    @property
    def self_cpu_time_total(self) -> float:
        """The sum of every event's self time."""
        return sum(e.self_cpu_time_total for e in self)

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
        """PyTorch's summary table of these events (see ``profiler_table``)."""
        return build_table(
            self,
            sort_by=sort_by,
            header=header,
            row_limit=row_limit,
            max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            profile_memory=self._profile_memory,
            top_level_events_only=top_level_events_only,
            time_unit=time_unit,
        )

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace (JSON ``traceEvents`` of complete "X"
        events, times in microseconds) that chrome://tracing and Perfetto open."""
        pid = os.getpid()
        events = []
        for e in self:
            if not isinstance(e, FunctionEvent) or e.trace_name is None:
                continue
            args = {}
            if e.input_shapes:
                args["Input Dims"] = e.input_shapes
            if e.sequence_nr >= 0:
                args["Sequence number"] = e.sequence_nr
            events.append(
                {
                    "ph": "X",
                    "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                    "name": e.trace_name,
                    "pid": pid,
                    "tid": e.thread,
                    "ts": e.time_range.start,
                    "dur": e.time_range.elapsed_us(),
                    "args": args,
                }
            )
        with open(path, "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)

    def supported_export_stacks_metrics(self) -> list[str]:
        return list(_STACK_METRICS)

    def export_stacks(self, path: str, metric: str) -> None:
        """Write one line per event with a recorded stack, outermost frame first,
        ``frame;frame;... value`` (the folded format flame graph tools read)."""
        if metric not in _STACK_METRICS:
            raise ValueError("metric should be one of: " + str(_STACK_METRICS))
        clean = str.maketrans(" ;\t\n", "____")
        with open(path, "w") as f:
            for e in self:
                if not e.stack:
                    continue
                value = int(getattr(e, _device_attr(metric)))
                if value > 0:
                    frames = ";".join(s.translate(clean) for s in reversed(e.stack))
                    f.write(f"{frames} {value}\n")

    def key_averages(
        self,
        group_by_input_shapes: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> EventList:
        """One ``FunctionEventAvg`` per key: the event's name, and its input shapes, its
        innermost ``group_by_stack_n`` frames or its overload name when asked."""
        groups: dict[tuple, FunctionEventAvg] = {}
        for e in self:
            key: tuple = (e.key, e.node_id)
            if group_by_input_shapes:
                key += (str(e.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple(e.stack[:group_by_stack_n])
            if group_by_overload_name:
                key += (e.overload_name,)
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg()
            avg.add(e)
        out = EventList(
            groups.values(),
            use_device=self._use_device,
            profile_memory=self._profile_memory,
            with_flops=self._with_flops,
        )
        for avg in out:
            avg.stack = avg.stack[:group_by_stack_n] if avg.stack else []
            if not group_by_input_shapes:
                avg.input_shapes = ""
            if not group_by_overload_name:
                avg.overload_name = ""
        return out

    def total_average(self) -> FunctionEventAvg:
        """Every event summed into one average, keyed ``Total``."""
        total = FunctionEventAvg()
        for e in self:
            total.cpu_time_total += e.cpu_time_total
            total.self_cpu_time_total += e.self_cpu_time_total
            total.cpu_memory_usage += e.cpu_memory_usage
            total.self_cpu_memory_usage += e.self_cpu_memory_usage
            total.count += e.count
        total.key = "Total"
        return total
