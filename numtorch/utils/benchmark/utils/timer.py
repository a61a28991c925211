"""Timer: timeit for numtorch statements, with replicates, warmup and PyTorch's results."""

from __future__ import annotations

import enum
import sys
import textwrap
import timeit as _timeit
from collections.abc import Callable
from typing import Any, NoReturn

from .... import cuda as _cuda
from .common import Measurement, TaskSpec

__all__ = ["Language", "Timer", "timer"]


def timer() -> float:
    """The current time, after the GPU (when one is in use) has finished its queued work."""
    if _cuda.is_initialized():
        _cuda.synchronize()
    return _timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def _tidy(code: str) -> str:
    """Dedented, without the leading newline of a block string or trailing blanks."""
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()


class Timer:
    """Times a Python statement (``stmt``, after ``setup``, with ``globals``), as
    ``torch.utils.benchmark.Timer`` does: ``timeit`` for a fixed count, ``blocked_autorange``
    and ``adaptive_autorange`` to choose one. ``torch`` in the statement is numtorch unless
    ``globals`` says otherwise. numtorch has no thread pool of its own: ``num_threads`` only
    labels the results."""

    def __init__(
        self,
        stmt: str = "pass",
        setup: str = "pass",
        global_setup: str = "",
        timer: Callable[[], float] = timer,
        globals: dict[str, Any] | None = None,
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
        language: Language | str = Language.PYTHON,
    ) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("numtorch's Timer runs Python statements only")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(
                f"global_setup is C++ only, got `{global_setup}`. Most likely this code can "
                "simply be moved to `setup`."
            )
        self._globals = dict(globals or {})  # a copy: exec adds __builtins__
        # the package face, imported already (this module is reached through it)
        self._globals.setdefault("torch", sys.modules[__name__.split(".")[0]])
        stmt, setup = _tidy(stmt), _tidy(setup)
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(
            stmt=stmt,
            setup=setup,
            global_setup=global_setup,
            label=label,
            sub_label=sub_label,
            description=description,
            env=env,
            num_threads=num_threads,
        )

    def _time(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)  # a timer call alone takes longer

    def _measurement(self, number: int, times: list[float]) -> Measurement:
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def timeit(self, number: int = 1000000) -> Measurement:
        """Run ``stmt`` ``number`` times (after a warmup of ``number // 100``): one
        replicate."""
        self._time(max(number // 100, 2))
        return self._measurement(number, [self._time(number)])

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], NoReturn] | None = None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self, min_run_time: float) -> int:
        """The smallest power of ten of runs per replicate that makes the timer's own cost
        negligible (also the warmup)."""
        empty = sorted(self._time(0) for _ in range(5))[2]
        number = 1
        while number * 10 <= 2147483647:
            took = self._time(number)
            if took > min_run_time or (empty / took <= 1e-4 and took >= min_run_time / 1000):
                break
            number *= 10
        return number

    def _replicates(self, number, min_run_time, max_run_time, done, callback) -> list[float]:
        """Replicates of ``number`` runs until ``min_run_time`` is spent and ``done(times)``
        holds, or ``max_run_time`` is spent."""
        times: list[float] = []
        total, finished = 0.0, False
        while total < min_run_time or not finished:
            t = self._time(number)
            times.append(t)
            total += t
            if callback:
                callback(number, t)
            finished = done(times)
            if max_run_time and total > max_run_time:
                break
        return times

    def blocked_autorange(
        self, callback: Callable[[int, float], NoReturn] | None = None, min_run_time: float = 0.2
    ) -> Measurement:
        """Replicates of a block of runs (sized so that the timer's cost is under 0.01%) until
        ``min_run_time`` seconds are spent."""
        number = self._block_size(min_run_time)
        times = self._replicates(number, min_run_time, None, lambda ts: True, callback)
        return self._measurement(number, times)

    def adaptive_autorange(
        self,
        threshold: float = 0.1,
        *,
        min_run_time: float = 0.01,
        max_run_time: float = 10.0,
        callback: Callable[[int, float], NoReturn] | None = None,
    ) -> Measurement:
        """As ``blocked_autorange``, until the IQR is under ``threshold`` times the median
        (with more than 3 replicates and ``min_run_time`` spent) or ``max_run_time`` is
        spent."""
        number = self._block_size(0.05)

        def done(times):
            return len(times) > 3 and self._measurement(number, times).meets_confidence(threshold)

        times = self._replicates(number, min_run_time, max_run_time, done, callback)
        return self._measurement(number, times)

    def collect_callgrind(self, *args, **kwargs) -> NoReturn:
        raise NotImplementedError("numtorch's Timer has no Callgrind support")
