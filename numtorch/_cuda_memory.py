"""torch.cuda's memory queries, answered from CuPy's default memory pool (what tensors hold
and what the pool keeps) and from the peaks numtorch's allocator records
(``_core/gpu_memory.py``). Before any GPU use every count is 0, as in PyTorch."""

from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import Any

from ._core import gpu_memory
from ._core.device import _initialized, cuda_device_count, cuda_index, on_gpu, require_cuda
from ._core.device import device as _device

__all__ = [
    "empty_cache",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_max_memory_allocated",
    "reset_peak_memory_stats",
]

Device = _device | str | int | None


def _pool_bytes(device: Device) -> tuple[int, int, int]:
    """(the GPU's index, bytes in use, bytes the pool holds) on a GPU."""
    cp = require_cuda()
    idx = cuda_index(device, optional=True)
    pool = cp.get_default_memory_pool()
    with on_gpu(idx):
        return idx, int(pool.used_bytes()), int(pool.total_bytes())


def memory_stats(device: Device = None) -> dict[str, Any]:
    """The allocator's statistics on a GPU ({} before any GPU use): PyTorch's
    ``allocated_bytes``, ``active_bytes`` and ``reserved_bytes`` counts for all pools."""
    if not _initialized[0]:
        return {}
    idx, used, reserved = _pool_bytes(device)
    total = gpu_memory.allocated_total[idx]
    stats = {
        "allocated_bytes.all.allocated": total,
        "allocated_bytes.all.current": used,
        "allocated_bytes.all.freed": max(total - used, 0),
        "allocated_bytes.all.peak": max(gpu_memory.peak_used[idx], used),
        "active_bytes.all.current": used,
        "active_bytes.all.peak": max(gpu_memory.peak_used[idx], used),
        "reserved_bytes.all.current": reserved,
        "reserved_bytes.all.peak": max(gpu_memory.peak_reserved[idx], reserved),
        "num_alloc_retries": 0,
        "num_ooms": 0,
    }
    return OrderedDict(sorted(stats.items()))


def memory_allocated(device: Device = None) -> int:
    """Bytes of GPU memory held by tensors."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device: Device = None) -> int:
    """The most bytes held by tensors since the start or the last peak reset."""
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device: Device = None) -> int:
    """Bytes of GPU memory the allocator holds (in use and cached)."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device: Device = None) -> int:
    """The most bytes the allocator held since the start or the last peak reset."""
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device: Device = None) -> None:
    """Start the peaks over from the current counts."""
    idx, used, reserved = _pool_bytes(device)
    gpu_memory.peak_used[idx] = used
    gpu_memory.peak_reserved[idx] = reserved


def reset_max_memory_allocated(device: Device = None) -> None:
    """reset_peak_memory_stats, with PyTorch's warning that it resets every peak."""
    warnings.warn(
        "torch.cuda.reset_max_memory_allocated now calls torch.cuda.reset_peak_memory_stats, "
        "which resets /all/ peak memory stats.",
        FutureWarning,
        stacklevel=2,
    )
    reset_peak_memory_stats(device)


def empty_cache() -> None:
    """Give the cached blocks of every GPU back (nothing to do before first use)."""
    if not _initialized[0]:
        return
    pool = require_cuda().get_default_memory_pool()
    for idx in range(cuda_device_count()):
        with on_gpu(idx):
            pool.free_all_blocks()


def mem_get_info(device: Device = None) -> tuple[int, int]:
    """(free, total) bytes of a GPU's memory, as the driver reports them."""
    cp = require_cuda()
    with on_gpu(cuda_index(device, optional=True)):
        free, total = cp.cuda.runtime.memGetInfo()
    return int(free), int(total)
