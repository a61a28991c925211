"""A CPU stand-in for CuPy, so that numtorch's GPU path runs in every test run without a GPU.

Its arrays wrap NumPy arrays but are not NumPy arrays: they refuse implicit conversion to
NumPy and mixing with NumPy arrays with CuPy's errors, return 0-d arrays where CuPy does, and
offer only what the installed CuPy offers (``_names``, regenerated from a CuPy wheel by
``scripts/gen_cupy_names.py``). ``cupyx.scipy``'s modules, CuPy's linalg error policy
(non-finite results on singular input unless ``cupyx.errstate(linalg='raise')``), streams,
events, the memory pool and several GPUs are imitated.

numtorch uses it when asked: ``enable()`` (the tests' ``cuda`` fixture), or the environment
variable ``NUMTORCH_CUPY_STANDIN=1`` (``=strict`` also records bare NumPy calls). In strict
mode every NumPy function called on device data is recorded with the numtorch file and line
that called it (``sites()``). ``transfers()`` counts the copies between host and device made
in a block, with the numtorch line of each.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from . import _state
from ._array import ndarray
from ._module import StandinGap, cupy, cupyx

__all__ = [
    "StandinGap",
    "active",
    "clear_sites",
    "cupy",
    "cupyx",
    "disable",
    "enable",
    "ndarray",
    "sites",
    "transfers",
]


def enable(*, strict: bool = False, devices: int = 2) -> None:
    """Make the stand-in numtorch's CuPy, with ``devices`` GPUs."""
    from ..._core import device

    _state.count[0] = devices
    _state.strict[0] = strict
    device.use_cupy(cupy, cupyx)


def disable() -> None:
    """Give numtorch back its own CuPy (the real one, or none)."""
    from ..._core import device

    _state.strict[0] = False
    _state.current[0] = 0
    device.use_cupy(None, None)


def active() -> bool:
    """Whether numtorch uses the stand-in now."""
    from ..._core import device

    return device._chosen[0] is cupy


def clear_sites() -> None:
    _state.sites.clear()


def report() -> None:
    """Print strict mode's record to stderr (``NUMTORCH_CUPY_STANDIN=strict`` does at exit)."""
    import sys

    found = sites()
    if found:
        print(f"numtorch called NumPy on device data at {len(found)} sites:", file=sys.stderr)
        for where, what in sorted(found.items()):
            print(f"  {where}: {what}", file=sys.stderr)


def sites() -> dict:
    """Strict mode's record: numtorch's "file:line" -> the NumPy call made there."""
    return dict(_state.sites)


class Transfers(list):
    """The copies between host and device made in a ``transfers()`` block: entries
    ``(direction, what, "file:line")``, direction "D2H" (device to host) or "H2D"."""

    def sites(self, direction: str | None = None) -> list:
        """The numtorch lines that copied (in ``direction`` only, if given)."""
        return [f"{w} {d} {what}" for d, what, w in self if direction in (None, d)]


@contextlib.contextmanager
def transfers() -> Iterator[Transfers]:
    """Count the copies between host and device (``get``, ``item``, conversions to Python
    numbers, ``tolist``; arrays made from host data, ``set``, NumPy index arrays) made in the
    block, with the numtorch line that made each."""
    log = Transfers()
    _state.counting.append(log)
    try:
        yield log
    finally:
        _state.counting.remove(log)
