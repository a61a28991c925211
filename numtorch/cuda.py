"""torch.cuda: the GPU, through CuPy when it is installed and sees one.

Without CuPy these behave as PyTorch's CPU-only build does: ``is_available()`` is False,
``device_count()`` 0, the seeding and cache functions do nothing, and whatever needs a
GPU raises ``AssertionError: Torch not compiled with CUDA enabled``.
"""

from __future__ import annotations

from ._core.device import _cuda_used, cuda_device_count, require_cuda
from ._core.device import device as _device
from ._core.device import is_cuda_available as is_available
from .amp._deprecated import cuda_amp as amp  # noqa: F401 (torch.cuda.amp, deprecated)
from .ops import creation as _creation

__all__ = [
    "current_device",
    "device_count",
    "empty_cache",
    "get_device_capability",
    "get_device_name",
    "initial_seed",
    "is_available",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "memory_allocated",
    "seed",
    "seed_all",
    "synchronize",
]


def device_count() -> int:
    """The number of GPUs."""
    return cuda_device_count()


def is_initialized() -> bool:
    """Whether a tensor has been put on a GPU yet."""
    return _cuda_used[0]


def current_device() -> int:
    """The index of the selected GPU."""
    return int(require_cuda().cuda.runtime.getDevice())


def _index(device) -> int:
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    d = _device(device)
    return current_device() if d.index is None else d.index


def synchronize(device: _device | str | int | None = None) -> None:
    """Wait for the GPU's queued work to finish."""
    cp = require_cuda()
    with cp.cuda.Device(_index(device)):
        cp.cuda.runtime.deviceSynchronize()


def get_device_name(device: _device | str | int | None = None) -> str:
    """The GPU's name."""
    name = require_cuda().cuda.runtime.getDeviceProperties(_index(device))["name"]
    return name.decode() if isinstance(name, bytes) else name


def get_device_capability(device: _device | str | int | None = None) -> tuple[int, int]:
    """The GPU's compute capability (major, minor)."""
    props = require_cuda().cuda.runtime.getDeviceProperties(_index(device))
    return int(props["major"]), int(props["minor"])


def empty_cache() -> None:
    """Release the cached GPU memory the allocator holds (nothing to do before first use)."""
    if _cuda_used[0]:
        require_cuda().get_default_memory_pool().free_all_blocks()


def memory_allocated(device: _device | str | int | None = None) -> int:
    """Bytes of GPU memory held by tensors (0 before first use)."""
    return int(require_cuda().get_default_memory_pool().used_bytes()) if _cuda_used[0] else 0


def _generator():
    return _creation._default("cuda")


def manual_seed(seed: int) -> None:
    """Seed the GPU's random generator (harmless without a GPU, as in PyTorch)."""
    _generator().manual_seed(seed)


manual_seed_all = manual_seed  # one GPU generator: numtorch's draws are per device type


def seed() -> None:
    """Seed the GPU's generator with a non-deterministic number."""
    _generator().seed()


seed_all = seed


def initial_seed() -> int:
    """The GPU generator's seed."""
    require_cuda()
    return _generator().initial_seed()
