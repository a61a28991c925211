"""Devices: 'cpu' is NumPy; 'cuda' is CuPy when it is installed and a GPU is present; 'meta'
is ``MetaArray`` (shape, dtype and strides without data)."""

from __future__ import annotations

import contextlib
import re
import types

import numpy as np

from . import gpu_memory
from .meta_array import META_XP, MetaArray


class device:
    __slots__ = ("type", "index")

    def __init__(self, type: str | device = "cpu", index: int | None = None):
        if isinstance(type, device):
            type, index = type.type, type.index
        if ":" in type or not type.isalpha():
            type, index = _parse(type)
        if type not in ("cpu", "cuda", "meta"):
            raise RuntimeError(
                f"Expected one of {_TORCH_TYPES} device type at start of device string: {type}"
            )
        self.type = type
        self.index = index

    def __repr__(self) -> str:
        idx = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{idx})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index or 0) == (
            other.type,
            other.index or 0,
        )

    def __hash__(self) -> int:
        return hash((self.type, self.index or 0))

    def __enter__(self) -> device:
        """Make this the default device of factory functions until the block ends."""
        _entered.append(_default[0])
        set_default_device(self)
        return self

    def __exit__(self, *exc) -> None:
        _default[0] = _entered.pop()


# the device types PyTorch knows (numtorch makes tensors on cpu, cuda and meta)
_TORCH_TYPES = (
    "cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, "
    "vulkan, mps, meta, hpu, mtia, privateuseone"
)
_DEVICE_STRING = re.compile(r"([a-zA-Z_]+)(?::([1-9][0-9]*|0))?")


def _parse(text: str) -> tuple[str, int | None]:
    """A device string's (type, index), as PyTorch parses it."""
    if not text:
        raise RuntimeError("Device string must not be empty")
    m = _DEVICE_STRING.fullmatch(text)
    if m is None:
        raise RuntimeError(f"Invalid device string: '{text}'")
    return m[1], None if m[2] is None else int(m[2])


CPU = device("cpu")
_CUDA = device("cuda", 0)
META = device("meta")


# CuPy and cupyx as numtorch uses them: the installed ones, or a stand-in given to use_cupy.
_chosen: list = [None, None]


def _cupy():
    if _chosen[0] is not None:
        return _chosen[0]
    try:
        import cupy
    except ImportError:
        return None
    return cupy


def cupyx():
    """The cupyx module that goes with ``_cupy()`` (cupyx.scipy's special, linalg, fft)."""
    if _chosen[1] is not None:
        return _chosen[1]
    import cupyx
    import cupyx.scipy.linalg
    import cupyx.scipy.special  # noqa: F401

    return cupyx


def use_cupy(cupy, cupyx) -> None:
    """Use these modules as CuPy and cupyx (a stand-in), or the installed ones (None)."""
    _chosen[0], _chosen[1] = cupy, cupyx
    _gpu_count.clear()
    _cuda_devices.clear()
    _bound.clear()
    _cuda_used[0] = cupy is not None
    _initialized[0] = False
    gpu_memory.forget()
    pending_checks.clear()  # (checks made on the arrays of the modules replaced)


# True once any array other than NumPy's was made (CuPy, meta): until then kernels skip the
# backend lookup.
_cuda_used = [False]
_initialized = [False]  # whether a GPU was put to use (torch.cuda.is_initialized)


def _first_use(cp) -> None:
    _initialized[0] = True
    gpu_memory.install(cp)


_NOT_COMPILED = "Torch not compiled with CUDA enabled"


def require_cuda():
    """CuPy, when it is installed and sees a GPU; else PyTorch's error for a build without
    CUDA (an AssertionError) or for a machine without a GPU."""
    cp = _cupy()
    if cp is None:
        raise AssertionError(_NOT_COMPILED)
    if not is_cuda_available():
        raise RuntimeError("No CUDA GPUs are available")
    return cp


def backend(dev: device):
    """The array module of a device: on a GPU other than the current one, CuPy's functions
    run with that GPU current (they make their arrays there)."""
    if dev.type == "cpu":
        return np
    if dev.type == "meta":
        _cuda_used[0] = True
        return META_XP
    cp = require_cuda()
    _cuda_used[0] = True
    if not _initialized[0]:
        _first_use(cp)
    idx = dev.index
    if idx is None or idx == cp.cuda.runtime.getDevice():
        return cp
    check_index(idx)
    bound = _bound.get(idx)
    if bound is None or bound._mod is not cp:
        bound = _bound[idx] = _OnGpu(cp, idx)
    return bound


class _OnGpu:
    """A CuPy module as seen from one GPU: its functions run with that GPU current."""

    def __init__(self, mod, index: int):
        self._mod = mod
        self._index = index

    def __getattr__(self, name: str):
        v = getattr(self._mod, name)
        if isinstance(v, (types.ModuleType, types.SimpleNamespace)):
            v = _OnGpu(v, self._index)
        elif callable(v) and not isinstance(v, type):
            v = _guarded(v, self._index)
        setattr(self, name, v)
        return v


def _guarded(fn, index: int):
    def call(*args, **kwargs):
        with _cupy().cuda.Device(index):
            return fn(*args, **kwargs)

    call.__name__ = getattr(fn, "__name__", "call")
    return call


_bound: dict = {}  # a GPU's index -> CuPy as seen from it


_STAY = contextlib.nullcontext()


def on_gpu(index: int | None):
    """A context in which GPU ``index`` is current (nothing to do when it already is)."""
    if index is None:
        return _STAY
    cp = _cupy()
    if index == cp.cuda.runtime.getDevice():
        return _STAY
    return cp.cuda.Device(index)


def gpu_of(arr):
    """A context in which the GPU of an array is current (nothing for other arrays)."""
    if type(arr) is np.ndarray or type(arr) in _ARRAY_TYPES:
        return _STAY
    return on_gpu(arr.device.id)


def copy_of(arr):
    """A copy of an array on its own device (CuPy copies to the current GPU)."""
    if type(arr) is np.ndarray:
        return arr.copy()
    with gpu_of(arr):
        return arr.copy()


def cuda_index(dev, optional: bool = False, allow_cpu: bool = False) -> int:
    """A GPU's index from an int, a device or its name (PyTorch's ``_get_device_index``): the
    current GPU for None or 'cuda' when ``optional``; -1 for the CPU when ``allow_cpu``."""
    if isinstance(dev, int) and not isinstance(dev, bool):
        return dev
    if isinstance(dev, str):
        dev = _Device(dev)
    idx = None
    if isinstance(dev, device):
        if allow_cpu:
            if dev.type not in ("cuda", "cpu"):
                raise ValueError(f"Expected a cuda or cpu device, but got: {dev}")
        elif dev.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {dev}")
        idx = -1 if dev.type == "cpu" else dev.index
    else:
        idx = getattr(dev, "idx", None)  # a torch.cuda.device context
    if idx is None:
        if not optional:
            raise ValueError(
                f"Expected a torch.device with a specified index or an integer, but got:{dev}"
            )
        idx = int(require_cuda().cuda.runtime.getDevice())
    return idx


def check_index(idx: int) -> None:
    """PyTorch's error for a GPU index beyond the GPUs there are."""
    n = cuda_device_count()
    if not 0 <= idx < n:
        raise RuntimeError(
            "CUDA error: invalid device ordinal\nCUDA kernel errors might be asynchronously "
            "reported at some other API call, so the stacktrace below might be incorrect.\n"
            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
            "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
        )


def resolved(dev: device) -> device:
    """A device with its index: 'cuda' is the current GPU."""
    if dev.type != "cuda" or dev.index is not None:
        return dev
    return _Device("cuda", require_cuda().cuda.runtime.getDevice())


def to_gpu(x, index: int | None):
    """An array (CPU or GPU) on GPU ``index`` (None: the current one); copied across GPUs."""
    cp = require_cuda()
    _cuda_used[0] = True
    if not _initialized[0]:
        _first_use(cp)
    if index is None:
        index = cp.cuda.runtime.getDevice()
    else:
        check_index(index)
    if type(x) is np.ndarray:
        with on_gpu(index):
            return cp.asarray(x)
    if x.device.id == index:
        return x
    with cp.cuda.Device(index):
        return x.copy()


# The array types other than NumPy's and CuPy's: their device and array module.
_ARRAY_TYPES: dict = {MetaArray: (META, META_XP)}


_cuda_devices: dict = {}  # a GPU's index -> its device


def device_of(arr) -> device:
    if type(arr) is np.ndarray:
        return CPU
    known = _ARRAY_TYPES.get(type(arr))
    if known is not None:
        return known[0]
    if isinstance(arr, np.ndarray):  # a subclass (np.memmap of a loaded checkpoint)
        return CPU
    idx = arr.device.id
    d = _cuda_devices.get(idx)
    if d is None:
        d = _cuda_devices[idx] = device("cuda", idx)
    return d


def xp_of(arr):
    """The array module an array belongs to."""
    if isinstance(arr, np.ndarray):
        return np
    known = _ARRAY_TYPES.get(type(arr))
    return _cupy() if known is None else known[1]


def array_module(a):
    """The array module of an operand that is not a NumPy array: None for a number."""
    known = _ARRAY_TYPES.get(type(a))
    if known is not None:
        return known[1]
    return _cupy() if hasattr(a, "__cuda_array_interface__") else None


_gpu_count: list = []  # the number of GPUs, counted once


def cuda_device_count() -> int:
    """How many GPUs CuPy sees (0 without CuPy)."""
    if not _gpu_count:
        cp = _cupy()
        try:
            _gpu_count.append(0 if cp is None else int(cp.cuda.runtime.getDeviceCount()))
        except Exception:  # CuPy without a driver or a GPU
            _gpu_count.append(0)
    return _gpu_count[0]


def is_cuda_available() -> bool:
    return cuda_device_count() > 0


# ------------------------------------------------------------------ the default device
# Where factory functions put a tensor when no device is given; None is the CPU (the fast
# path: one read and a None check).
_default: list = [None]
_entered: list = []  # the default devices that ``with device(...)`` blocks replaced


def placement(dev):
    """The device a factory function uses: ``dev``, or the default device when it is None."""
    return _default[0] if dev is None else dev


def set_default_device(device: device | str | int | None) -> None:
    """Make ``device`` the one factory functions use when given none (None: the CPU)."""
    if device is None:
        _default[0] = None
        return
    if isinstance(device, int) and not isinstance(device, bool):
        if not is_cuda_available():
            raise RuntimeError("Cannot access accelerator device when none is available.")
        device = _Device("cuda", device)
    d = _Device(device)
    _default[0] = None if d.type == "cpu" else d


def get_default_device() -> device:
    """The device factory functions use when given none."""
    d = _default[0]
    if d is None:
        return CPU
    if d.index is None:  # PyTorch asks for the current GPU here, and fails without one
        return _Device(d.type, require_cuda().cuda.runtime.getDevice())
    return d


_Device = device


# ------------------------------------------------------------------ arrays placed on a GPU
def gpu_index(dev: device) -> int:
    """A GPU's index: its own, or the current GPU's when it names none."""
    if dev.index is not None:
        return dev.index
    return int(require_cuda().cuda.runtime.getDevice())


def host_to_gpu(arr, dev: device):
    """A host (NumPy) array copied to the GPU ``dev``."""
    cp = require_cuda()
    with cp.cuda.Device(gpu_index(dev)):
        return cp.asarray(arr)


def copy_array(arr):
    """A copy of an array on the array's own device (CuPy copies to the current GPU)."""
    if type(arr) is np.ndarray or type(arr) in _ARRAY_TYPES:
        return arr.copy()
    with arr.device:
        return arr.copy()


# ------------------------------------------------------------------ deferred device checks
# A GPU kernel's bounds check that PyTorch makes on the device (an assert that surfaces at the
# next synchronization) instead of reading back: (the device's 0-d bool verdict, the maker of
# the CPU's error, 0-d device values the error is made of). The pending ones are read in one
# copy per GPU at the next synchronizing call; the CPU raises at call time and adds none.
pending_checks: list = []
_PENDING_MOST = 1024  # then they are read, so a program that never synchronizes keeps few


def defer_check(bad, error, *values) -> None:
    """At the next synchronization, raise ``error(*values)`` (the values read back as Python
    numbers) if the 0-d bool device array ``bad`` is true."""
    pending_checks.append((bad, error, values))
    if len(pending_checks) >= _PENDING_MOST:
        run_pending_checks()


def run_pending_checks() -> None:
    """Read the pending device checks (one copy per GPU) and raise the error of the first
    failing one; none stays pending either way."""
    if not pending_checks:
        return
    checks = pending_checks[:]
    pending_checks.clear()
    cp = _cupy()
    on_gpu: dict = {}
    for i, (bad, _, _) in enumerate(checks):
        on_gpu.setdefault(bad.device.id, []).append(i)
    failed = []
    for gpu, ids in on_gpu.items():
        with cp.cuda.Device(gpu):
            verdicts = cp.stack([checks[i][0] for i in ids]).get()
        failed.extend(i for i, v in zip(ids, verdicts, strict=True) if v)
    if failed:
        _, error, values = checks[min(failed)]
        raise error(*(v.item() for v in values))


def checked_index(xp, index, bad, error, fill: int = 0):
    """``index`` where no entry may be ``bad`` (a bool array of its shape). On the CPU,
    ``error(v)`` for the first bad entry ``v`` is raised now; on a GPU the check stays on the
    device until the next synchronization (``defer_check``) and the index comes back with
    ``fill`` at the bad entries, so that the kernel reads nothing out of bounds."""
    if xp is np:
        raise_first(index, bad, error)
        return index
    if not index.size:
        return index
    flat = bad.reshape(-1)
    defer_check(flat.any(), error, index.reshape(-1)[flat.argmax()])
    return xp.where(bad, fill, index)


def raise_first(index, bad, error) -> None:
    """Raise ``error(v)`` for the first entry ``v`` of ``index`` where ``bad`` (a bool array of
    its shape) is true, if any: now (on a GPU, a read back)."""
    flat = bad.reshape(-1)
    if flat.any():
        raise error(int(index.reshape(-1)[flat.argmax()]))
