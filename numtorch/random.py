"""torch.random: the default generator's seed and state, and ``fork_rng``.

The functions are numtorch's own top-level ones (``numtorch.random.manual_seed is
numtorch.manual_seed``, as in PyTorch). A state is a uint8 tensor in numtorch's layout (see
``Generator.get_state``): restoring it reproduces the draws exactly.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

from . import cuda as _cuda
from ._core.device import device as _device
from .ops import creation as _creation
from .ops.creation import Generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = [
    "set_rng_state",
    "get_rng_state",
    "manual_seed",
    "seed",
    "initial_seed",
    "fork_rng",
    "thread_safe_generator",
]

default_generator = _creation._generators["cpu"]
_fork_rng_warned_already = False


def _cuda_states(devices: list) -> list:
    """The generator state of each listed GPU."""
    return [(d, _cuda.get_rng_state(d)) for d in devices]


def _restore_cuda(states: list) -> None:
    for d, state in states:
        _cuda.set_rng_state(state, d)


def _device_count(device_type: str) -> int:
    """How many devices of a type fork_rng forks by default (none but CUDA's here)."""
    return _cuda.device_count() if device_type == "cuda" else 0


def _warn_many_devices(device_type: str, count: int, caller: str, devices_kw: str) -> None:
    global _fork_rng_warned_already
    if count <= 1 or _fork_rng_warned_already:
        return
    kind = device_type.upper()
    warnings.warn(
        f"{kind} reports that you have {count} available devices, and you have used {caller} "
        f"without explicitly specifying which devices are being used. For safety, we "
        f"initialize *every* {kind} device by default, which can be quite slow if you have a "
        f"lot of {kind}s. If you know that you are only making use of a few {kind} devices, "
        f"set the environment variable {kind}_VISIBLE_DEVICES or the '{devices_kw}' keyword "
        f"argument of {caller} with the set of devices you are actually using. For example, if "
        "you are using CPU only, set device.upper()_VISIBLE_DEVICES= or devices=[]; if you are "
        f"using device 0 only, set {kind}_VISIBLE_DEVICES=0 or devices=[0].  To initialize all "
        f"devices and suppress this warning, set the '{devices_kw}' keyword argument to "
        f"`range(torch.{device_type}.device_count())`.",
        stacklevel=3,
    )
    _fork_rng_warned_already = True


@contextlib.contextmanager
def fork_rng(
    devices=None,
    enabled=True,
    _caller="fork_rng",
    _devices_kw="devices",
    device_type=None,
) -> Iterator:
    """Fork the random state: on leaving (also by an exception) the CPU generator, and the
    listed devices' generators, are back in the state they had on entering."""
    if device_type == "meta":
        yield
        return
    device_type = device_type or "cuda"  # no accelerator but CUDA: CPU's is always forked
    _device(device_type)  # an unknown type: PyTorch's error
    if device_type == "cpu":
        raise AttributeError("module 'torch.cpu' has no attribute 'get_rng_state'")
    if not enabled:
        yield
        return
    if devices is None:
        count = _device_count(device_type)
        _warn_many_devices(device_type, count, _caller, _devices_kw)
        devices = list(range(count))
    else:
        devices = list(devices)  # traversed twice: a generator argument would run dry
    cpu_state = get_rng_state()
    device_states = _cuda_states(devices) if device_type == "cuda" else []
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        _restore_cuda(device_states)


def thread_safe_generator() -> Generator | None:
    """The current thread worker's generator; None outside one (the default generator)."""
    from .utils.data import get_worker_info

    info = get_worker_info()
    rng = getattr(info, "rng", None)
    if info is not None and info.worker_method == "thread" and rng is not None:
        return rng.torch_generator
    return None
