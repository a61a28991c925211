"""torch.profiler.profile: the autograd profiler driven by a schedule of steps.

``schedule(step)`` says what each step does (``ProfilerAction``): nothing, warm up,
record, or record and then hand the results to ``on_trace_ready``. ``profile.step()``
moves to the next step and runs the actions between the two steps' states, as PyTorch's
profiler does.
"""

from __future__ import annotations

import os
import socket
import time
import warnings
from collections.abc import Callable, Iterable
from enum import Enum
from functools import partial
from typing import Any

from ..autograd import profiler as prof
from ..autograd.profiler_util import EventList


class ProfilerActivity(Enum):
    """What a profiler may trace; numtorch traces the CPU."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(Enum):
    """What the profiler does at a step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities() -> set[ProfilerActivity]:
    """The activities this profiler traces: the CPU's."""
    return {ProfilerActivity.CPU}


def kineto_available() -> bool:
    return False


def schedule(
    *,
    wait: int,
    warmup: int,
    active: int,
    repeat: int = 0,
    skip_first: int = 0,
    skip_first_wait: int = 0,
) -> Callable[[int], ProfilerAction]:
    """A schedule: skip ``skip_first`` steps, then cycles of ``wait`` idle steps,
    ``warmup`` steps and ``active`` recorded steps (the last one saves), ``repeat``
    times (0: until the end). ``skip_first_wait`` leaves out the first cycle's wait."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), "
            f"warmup={warmup} (need >= 0), active={active} (need > 0), "
            f"repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0)."
        )
    if warmup == 0:
        warnings.warn(
            "Profiler won't be using warmup, this can skew profiler results", stacklevel=2
        )
    cycle = wait + warmup + active

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _default_schedule_fn(_: int) -> ProfilerAction:
    """Without a schedule: record every step."""
    return ProfilerAction.RECORD


def tensorboard_trace_handler(
    dir_name: str,
    worker_name: str | None = None,
    use_gzip: bool = False,
    use_python_export: bool = False,
) -> Callable:
    """An ``on_trace_ready`` that writes each trace into ``dir_name`` as
    ``<worker>.<ns>.pt.trace.json`` (TensorBoard's profiler plugin reads it)."""

    def handler_fn(p) -> None:
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        path = os.path.join(dir_name, name)
        if use_gzip:
            import gzip
            import shutil

            p.export_chrome_trace(path)
            with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.remove(path)
        else:
            p.export_chrome_trace(path)

    return handler_fn


_warned: list = []  # (the warning about cleared events is given once)


class profile:
    """Profiler context manager with a schedule (see the module doc). Without a schedule
    it records from ``start()`` (or entering) to ``stop()``; ``events()``,
    ``key_averages()``, ``export_chrome_trace()`` and ``export_stacks()`` read the last
    recorded trace."""

    def __init__(
        self,
        *,
        activities: Iterable[ProfilerActivity] | None = None,
        schedule: Callable[[int], ProfilerAction] | None = None,
        on_trace_ready: Callable[..., Any] | None = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config=None,
        execution_trace_observer=None,
        acc_events: bool = False,
        use_cuda: bool | None = None,
        custom_trace_id_callback: Callable[[], str] | None = None,
    ) -> None:
        acts = set(activities) if activities else supported_activities()
        if use_cuda is not None:
            warnings.warn(
                "`use_cuda` is deprecated, use `activities` argument instead", stacklevel=2
            )
            if use_cuda:
                acts.add(ProfilerActivity.CUDA)
            else:
                acts.discard(ProfilerActivity.CUDA)
        if not acts:
            raise AssertionError("No valid profiler activities found")
        self.activities = acts
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.on_trace_ready = on_trace_ready
        self.custom_trace_id_callback = custom_trace_id_callback
        self.profiler: prof.profile | None = None
        self.schedule = schedule or _default_schedule_fn
        self.record_steps = schedule is not None
        self.step_rec_fn: prof.record_function | None = None
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        A = ProfilerAction
        self.action_map: dict[tuple, list] = {
            (A.NONE, A.WARMUP): [self.prepare_trace],
            (A.NONE, A.RECORD): [self.prepare_trace, self.start_trace],
            (A.NONE, A.RECORD_AND_SAVE): [self.prepare_trace, self.start_trace],
            (A.WARMUP, A.NONE): [
                partial(warnings.warn, "Incorrect schedule: WARMUP followed by NONE"),
                self.start_trace,
                self.stop_trace,
            ],
            (A.WARMUP, A.RECORD): [self.start_trace],
            (A.WARMUP, A.RECORD_AND_SAVE): [self.start_trace],
            (A.RECORD, A.NONE): [
                partial(warnings.warn, "Incorrect schedule: RECORD followed by NONE"),
                self.stop_trace,
            ],
            (A.RECORD, A.WARMUP): [
                partial(warnings.warn, "Incorrect schedule: RECORD followed by WARMUP"),
                self.stop_trace,
            ],
            (A.RECORD_AND_SAVE, A.NONE): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, A.WARMUP): [
                self.stop_trace,
                self._trace_ready,
                self.prepare_trace,
            ],
            (A.RECORD_AND_SAVE, A.RECORD): [
                self.stop_trace,
                self._trace_ready,
                self.prepare_trace,
                self.start_trace,
            ],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [
                self.stop_trace,
                self._trace_ready,
                self.prepare_trace,
                self.start_trace,
            ],
            (A.WARMUP, None): [self.start_trace, self.stop_trace],
            (A.RECORD, None): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, None): [self.stop_trace, self._trace_ready],
        }

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        self.stop()

    def start(self) -> None:
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self._enter_step()

    def stop(self) -> None:
        self._exit_step()
        self._transit_action(self.current_action, None)

    def step(self) -> None:
        """Signal that the next step starts."""
        self._exit_step()
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit_action(prev, self.current_action)
        if self.record_steps:
            self._enter_step()

    def _enter_step(self) -> None:
        self.step_rec_fn = prof.record_function("ProfilerStep#" + str(self.step_num))
        self.step_rec_fn.__enter__()

    def _exit_step(self) -> None:
        if self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None

    def _transit_action(self, prev, current) -> None:
        for action in self.action_map.get((prev, current), ()):
            action()

    def _trace_ready(self) -> None:
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def prepare_trace(self) -> None:
        """Make the profiler of the next trace (warming up needs nothing more here)."""
        if self.profiler is not None and not self.acc_events and not _warned:
            _warned.append(True)
            warnings.warn(
                "Warning: Profiler clears events at the end of each cycle. Only events from "
                "the current cycle will be reported. To keep events across cycles, set "
                "acc_events=True.",
                stacklevel=2,
            )
        if self.profiler is None or not self.acc_events:
            self.profiler = prof.profile(
                record_shapes=self.record_shapes,
                with_flops=self.with_flops,
                profile_memory=self.profile_memory,
                with_stack=self.with_stack,
                with_modules=self.with_modules,
                acc_events=self.acc_events,
            )

    def start_trace(self) -> None:
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before starting trace")
        self.profiler.__enter__()

    def stop_trace(self) -> None:
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before stopping trace")
        self.profiler.__exit__(None, None, None)

    def _results(self, what: str) -> prof.profile:
        if self.profiler is None:
            raise AssertionError(f"Profiler must be initialized before {what}")
        return self.profiler

    def events(self) -> EventList | None:
        """The events of the last trace."""
        return self._results("accessing events").function_events

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> EventList:
        """The last trace's events averaged by name (and shapes or stack when asked)."""
        p = self._results("getting key averages")
        return p.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def export_chrome_trace(self, path: str, use_python_export: bool = False) -> None:
        """Write the last trace as a Chrome trace JSON file."""
        self._results("exporting chrome trace").export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Write the last trace's stacks in the folded flame-graph format."""
        self._results("exporting stacks").export_stacks(path, metric)

    def add_metadata(self, key: str, value: str) -> None:
        """Metadata for the trace (numtorch's traces carry none)."""

    def add_metadata_json(self, key: str, value: str) -> None:
        """Metadata for the trace (numtorch's traces carry none)."""
