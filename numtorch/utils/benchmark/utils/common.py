"""What a Timer measures (TaskSpec) and what it returns (Measurement), with the unit
helpers that print them."""

from __future__ import annotations

import dataclasses
import math
import textwrap
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = [
    "Measurement",
    "TaskSpec",
    "ordered_unique",
    "select_unit",
    "trim_sigfig",
    "unit_to_english",
]

_MAX_SIGFIGS = 4
_MIN_CI = 25e-9  # a confidence interval is never taken below 25 ns
_IQR_WARN = 0.1  # IQR / median above these: the measurement prints a warning
_IQR_GROSS_WARN = 0.25


def _block(text: str) -> str:
    return textwrap.indent(text, "  ")


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """What a Timer runs and how its results are labelled (everything but the globals)."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (or the statement) with the sub-label: a measurement's name."""
        sub = self.sub_label
        if self.label is not None:
            return self.label + (f": {sub}" if sub else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {sub}" if sub else "")
        return f"stmt:{f' ({sub})' if sub else ''}\n{_block(self.stmt)}"

    def setup_str(self) -> str:
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return f"setup:\n{_block(self.setup)}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The title, description and setup, as a Measurement prints them (a multi-line
        section is followed by a blank line)."""
        parts = [p for p in (self.title, self.description or "", self.setup_str()) if p]
        return "\n".join(p + "\n" if "\n" in p else p for p in parts)


_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(repr=False)
class Measurement:
    """The times of ``number_per_run`` runs of a statement, once per replicate, with their
    statistics (per run) and PyTorch's printed summary."""

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None

    def __post_init__(self) -> None:
        self._stats: tuple | None = None

    def __getattr__(self, name: str) -> Any:
        if name in _FIELDS:  # stmt, label, env, num_threads, ...: the task's
            return getattr(self.task_spec, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def times(self) -> list[float]:
        """Seconds per run, one entry per replicate."""
        return [t / self.number_per_run for t in self.raw_times]

    def _statistics(self) -> tuple:
        """(sorted times, median, mean, 25th and 75th percentiles), computed once."""
        if self._stats is None:
            ts = sorted(self.times)
            if ts:
                q25, q50, q75 = np.quantile(np.asarray(ts, dtype=np.float64), [0.25, 0.5, 0.75])
                mean = float(np.mean(ts))
            else:
                q25 = q50 = q75 = mean = -1.0
            self._stats = (tuple(ts), float(q50), mean, float(q25), float(q75))
        return self._stats

    @property
    def median(self) -> float:
        return self._statistics()[1]

    @property
    def mean(self) -> float:
        return self._statistics()[2]

    @property
    def iqr(self) -> float:
        """The interquartile range of the per-run times."""
        _, _, _, q25, q75 = self._statistics()
        return q75 - q25

    @property
    def significant_figures(self) -> int:
        """How many digits of the median the spread of the middle half supports (1 to 4)."""
        ts = self._statistics()[0]
        middle = np.asarray(ts[len(ts) // 4 : math.ceil(3 * len(ts) / 4)], dtype=np.float64)
        std = float(middle.std()) if middle.size else 0.0
        ci = max(1.645 * std / math.sqrt(max(middle.size, 1)), _MIN_CI)
        return min(max(math.floor(math.log10(self.median / ci)), 1), _MAX_SIGFIGS)

    def meets_confidence(self, threshold: float = _IQR_WARN) -> bool:
        return self.iqr / self.median < threshold

    @property
    def _warnings(self) -> tuple[str, ...]:
        if not self.raw_times:
            return ()
        for threshold, why in (
            (_IQR_GROSS_WARN, "This suggests significant environmental influence."),
            (_IQR_WARN, "This could indicate system fluctuation."),
        ):
            if not self.meets_confidence(threshold):
                share = self.iqr / self.median * 100
                return (
                    f"  WARNING: Interquartile range is {share:.1f}% of the median measurement."
                    f"\n           {why}",
                )
        return ()

    @property
    def has_warnings(self) -> bool:
        return bool(self._warnings)

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        ts, median, _, q25, q75 = self._statistics()
        n = len(ts)
        unit, scale = select_unit(median)
        lines = [object.__repr__(self), self.task_spec.summarize()]
        lines.append(f"  {'Median: ' if n > 1 else ''}{median / scale:.2f} {unit}")
        if n >= 4:
            lines.append(
                f"  IQR:    {(q75 - q25) / scale:.2f} {unit} "
                f"({q25 / scale:.2f} to {q75 / scale:.2f})"
            )
        threads = self.num_threads
        lines.append(
            f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
            f"{'per measurement,' if n > 1 else ','} {threads} thread{'s' if threads > 1 else ''}"
        )
        lines.extend(self._warnings)
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """One Measurement per task, with the per-run times of all its replicates
        (``number_per_run=1``; metadata is dropped)."""
        groups: dict[TaskSpec, list[float]] = {}
        for m in measurements:
            groups.setdefault(m.task_spec, []).extend(m.times)
        return [Measurement(1, times, spec) for spec, times in groups.items()]


_UNITS = {-3: ("ns", 1e-9), -2: ("us", 1e-6), -1: ("ms", 1e-3)}


def select_unit(t: float) -> tuple[str, float]:
    """The unit (ns, us, ms or s) in which ``t`` seconds reads as 1 to 999, and its scale."""
    if not t > 0 or math.isinf(t):
        return "s", 1.0
    return _UNITS.get(math.floor(math.log10(t) / 3), ("s", 1.0))


def unit_to_english(u: str) -> str:
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    scale = 10.0 ** (math.ceil(math.log10(abs(x))) - n)
    return float(round(x / scale) * scale)


def ordered_unique(elements: Iterable[Any]) -> list[Any]:
    """The distinct elements in the order they first appear."""
    return list(dict.fromkeys(elements))
