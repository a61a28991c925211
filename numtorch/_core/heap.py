"""The C heap's policy for tensor buffers. glibc's malloc returns a large freed block to the
system at once (through munmap, or by trimming the heap's top) and so the next tensor of
that size is fresh memory again, faulted in page by page: for the megabyte-sized temporaries
of an eager program that costs as much as the arithmetic. Raising the two thresholds once,
at import, keeps freed buffers in the heap for reuse, as PyTorch's CPU allocator reuse does.

Left as it is where the user set either threshold (``MALLOC_MMAP_THRESHOLD_``,
``MALLOC_TRIM_THRESHOLD_``), where ``NUMTORCH_MALLOC_TUNING=0``, and off glibc."""

from __future__ import annotations

import os

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20  # glibc's upper bound for it on 64-bit systems
TRIM_THRESHOLD = 128 << 20

_USER_SET = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_")


def _glibc() -> bool:
    try:
        return os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")
    except (AttributeError, ValueError, OSError):
        return False


def tune() -> bool:
    """Set malloc's mmap and trim thresholds for reuse of tensor-sized blocks; whether it
    did."""
    if os.environ.get("NUMTORCH_MALLOC_TUNING", "1") == "0":
        return False
    if any(name in os.environ for name in _USER_SET) or not _glibc():
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    # (the trim threshold first: fixing the mmap threshold also ends glibc's own adjusting)
    return bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) and mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    )


TUNED = tune()
