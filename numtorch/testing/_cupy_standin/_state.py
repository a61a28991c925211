"""The stand-in's global state: the current GPU, the GPU count, device memory, the linalg
error policy, and strict mode's record of bare NumPy calls on device data."""

from __future__ import annotations

import os
import sys
import weakref

import numpy as np

current = [0]  # the current device's index (cupy.cuda.Device(i).use())
count = [2]  # how many stand-in GPUs there are
linalg = ["ignore"]
modules: dict = {}  # the stand-in's modules by name ('cupy', 'cupy.linalg', ...)  # cupyx.errstate(linalg=...): 'ignore' (CuPy's default) or 'raise'

# ---------------------------------------------------------------- strict mode
strict = [False]
sites: dict = {}  # "file:line" -> what was called there
_HERE = os.path.dirname(os.path.abspath(__file__))
_PACKAGE = os.path.dirname(os.path.dirname(_HERE))  # .../numtorch


def _site() -> str:
    """The numtorch "file:line" (outside the stand-in) that the current call came from."""
    f = sys._getframe(2)
    while f is not None:
        name = f.f_code.co_filename
        if name.startswith(_PACKAGE) and not name.startswith(_HERE):
            return f"{os.path.relpath(name, os.path.dirname(_PACKAGE))}:{f.f_lineno}"
        f = f.f_back
    return "(outside numtorch)"


def record(what: str) -> None:
    """In strict mode, note the numtorch line that called NumPy on device data."""
    if strict[0]:
        sites.setdefault(_site(), what)


# ---------------------------------------------------------------- host <-> device copies
# While a transfers() block counts, each copy between host and device is noted as
# (direction, what, numtorch "file:line"); direction is "D2H" or "H2D".
counting: list = []  # the open blocks' logs, innermost last


def transfer(direction: str, what: str) -> None:
    """Note a copy between host and device in every counting block."""
    if counting:
        entry = (direction, what, _site())
        for log in counting:
            log.append(entry)


# ---------------------------------------------------------------- device memory
# CuPy's pool hands out blocks rounded up to 512 bytes; a block returns to the pool when the
# array that owns it dies. The allocator hook lets numtorch observe each allocation as it can
# with cupy.cuda.set_allocator.
ROUND = 512
used = [0] * 16
free = [0] * 16
_owners: dict = {}  # id(root NumPy array) -> (its block's size, its GPU)
allocator: list = [None]  # set_allocator's function, or None for the pool's malloc


def _release(key: int, dev: int, size: int) -> None:
    if _owners.pop(key, None) is not None:
        used[dev] -= size
        free[dev] += size


def allocated(a: np.ndarray, dev: int | None) -> int:
    """The GPU of a new array: a view's is its memory's; new memory is on GPU ``dev`` (None:
    the current one) and accounted once per buffer, the allocator running with that GPU
    current, as CuPy allocates on the current GPU."""
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    key = id(root)
    known = _owners.get(key)
    if known is not None:
        return known[1]
    dev = current[0] if dev is None else dev
    size = -(-root.nbytes // ROUND) * ROUND
    before, current[0] = current[0], dev
    try:
        if allocator[0] is not None:
            allocator[0](size)
        else:
            malloc(size, dev)
    finally:
        current[0] = before
    _owners[key] = (size, dev)
    weakref.finalize(root, _release, key, dev, size)
    return dev


def malloc(size: int, dev: int) -> None:
    """The pool's allocation: from the pool's free blocks when it holds enough."""
    free[dev] = max(free[dev] - size, 0)
    used[dev] += size
