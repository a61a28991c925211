"""torch.utils.benchmark: time statements (Timer) and print the results (Measurement,
Compare) as PyTorch does."""

from .utils.common import (
    Measurement,
    TaskSpec,
    ordered_unique,
    select_unit,
    trim_sigfig,
    unit_to_english,
)
from .utils.compare import Colorize, Compare
from .utils.timer import Language, Timer, timer

__all__ = [
    "Colorize",
    "Compare",
    "Language",
    "Measurement",
    "TaskSpec",
    "Timer",
    "ordered_unique",
    "select_unit",
    "timer",
    "trim_sigfig",
    "unit_to_english",
]
