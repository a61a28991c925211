"""torch.cuda: the GPU, through CuPy when it is installed and sees one.

Without CuPy these behave as PyTorch's CPU-only build does: ``is_available()`` is False,
``device_count()`` 0, the seeding and cache functions do nothing, and whatever needs a
GPU raises ``AssertionError: Torch not compiled with CUDA enabled``.
"""

from __future__ import annotations

from ._core.device import _initialized, cuda_device_count, cuda_index, require_cuda
from ._core.device import device as _device
from ._core.device import is_cuda_available as is_available
from ._core.tensor import Tensor
from ._cuda_memory import (  # the memory queries, the selected GPU, streams and events
    empty_cache,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_stats,
    reset_max_memory_allocated,
    reset_peak_memory_stats,
)
from ._cuda_streams import (
    Event,
    ExternalStream,
    Stream,
    StreamContext,
    current_device,
    current_stream,
    default_stream,
    device,
    device_of,
    set_device,
    set_stream,
    stream,
    synchronize,
)
from .amp._deprecated import cuda_amp as amp  # noqa: F401 (torch.cuda.amp, deprecated)
from .ops import generator as _generator

__all__ = [
    "Event",
    "ExternalStream",
    "Stream",
    "StreamContext",
    "current_device",
    "current_stream",
    "default_stream",
    "device",
    "device_count",
    "device_of",
    "empty_cache",
    "get_device_capability",
    "get_device_name",
    "get_rng_state",
    "get_rng_state_all",
    "initial_seed",
    "is_available",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_max_memory_allocated",
    "reset_peak_memory_stats",
    "seed",
    "seed_all",
    "set_device",
    "set_rng_state",
    "set_rng_state_all",
    "set_stream",
    "stream",
    "synchronize",
]


def device_count() -> int:
    """The number of GPUs."""
    return cuda_device_count()


def is_initialized() -> bool:
    """Whether a GPU has been put to use yet."""
    return _initialized[0]


def get_device_name(device: _device | str | int | None = None) -> str:
    """The GPU's name."""
    name = require_cuda().cuda.runtime.getDeviceProperties(cuda_index(device, True))["name"]
    return name.decode() if isinstance(name, bytes) else name


def get_device_capability(device: _device | str | int | None = None) -> tuple[int, int]:
    """The GPU's compute capability (major, minor)."""
    props = require_cuda().cuda.runtime.getDeviceProperties(cuda_index(device, True))
    return int(props["major"]), int(props["minor"])


# ------------------------------------------------------------------ random generators
# One generator per GPU. Without a GPU the seeding functions do nothing (PyTorch defers them
# until CUDA starts, which it never does then).
def _gpu_generator(device=None):
    """The default generator of a GPU (an index, a name or a device; None: the current)."""
    if isinstance(device, int) and not isinstance(device, bool):
        device = _device("cuda", device)
    d = _device("cuda" if device is None else device)
    index = current_device() if d.index is None else d.index
    if not 0 <= index < device_count():
        raise IndexError("tuple index out of range")  # PyTorch's default_generators[index]
    return _generator._default(_device("cuda", index))


def manual_seed(seed: int) -> None:
    """Seed the current GPU's random generator."""
    if is_available():
        _gpu_generator().manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's random generator."""
    for i in range(device_count()):
        _gpu_generator(i).manual_seed(int(seed))


def seed() -> None:
    """Seed the current GPU's generator with a non-deterministic number."""
    if is_available():
        _gpu_generator().seed()


def seed_all() -> None:
    """Seed every GPU's generator with one non-deterministic number."""
    if is_available():
        s = _gpu_generator(0).seed()
        manual_seed_all(s)


def initial_seed() -> int:
    """The current GPU generator's seed."""
    require_cuda()
    return _gpu_generator().initial_seed()


def get_rng_state(device: int | str | _device = "cuda") -> Tensor:
    """A GPU generator's state (its seed and Philox offset) as a CPU uint8 tensor."""
    require_cuda()
    return _gpu_generator(device).get_state()


def set_rng_state(new_state: Tensor, device: int | str | _device = "cuda") -> None:
    """Restore a GPU generator's state from ``get_rng_state``."""
    new_state = new_state.clone()  # (PyTorch copies it before it looks at CUDA)
    if is_available():
        _gpu_generator(device).set_state(new_state)


def get_rng_state_all() -> list[Tensor]:
    """Every GPU generator's state."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states) -> None:
    """Restore every GPU generator's state from ``get_rng_state_all``."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)
