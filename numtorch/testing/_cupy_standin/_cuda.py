"""``cupy.cuda`` of the stand-in: devices, the runtime's queries, streams, events and the
memory pool, with CuPy's names and behaviour (work is never queued, so every stream is always
done)."""

from __future__ import annotations

import time
import types

from . import _state


class CUDARuntimeError(RuntimeError):
    pass


def _check(dev: int) -> int:
    if not 0 <= dev < _state.count[0]:
        raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
    return dev


class Device:
    """A stand-in GPU; as a context manager it is the current device until the block ends."""

    def __init__(self, device=None):
        self.id = _state.current[0] if device is None else _check(int(device))
        self._before: list = []

    def use(self) -> None:
        _state.current[0] = self.id

    def synchronize(self) -> None:
        pass

    def __enter__(self):
        self._before.append(_state.current[0])
        _state.current[0] = self.id
        return self

    def __exit__(self, *exc):
        _state.current[0] = self._before.pop()

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)

    def __int__(self):
        return self.id

    def __repr__(self):
        return f"<CUDA Device {self.id}>"

    @property
    def compute_capability(self) -> str:
        return "90"

    @property
    def mem_info(self) -> tuple:
        return runtime.memGetInfo()


def _props(dev: int) -> dict:
    _check(dev)
    return {
        "name": b"CuPy stand-in (CPU)",
        "major": 9,
        "minor": 0,
        "totalGlobalMem": 80 * 2**30,
        "multiProcessorCount": 132,
    }


runtime = types.SimpleNamespace(
    CUDARuntimeError=CUDARuntimeError,
    getDeviceCount=lambda: _state.count[0],
    getDevice=lambda: _state.current[0],
    setDevice=lambda dev: _state.current.__setitem__(0, _check(dev)),
    deviceSynchronize=lambda: None,
    getDeviceProperties=_props,
    memGetInfo=lambda: (80 * 2**30 - _state.used[_state.current[0]], 80 * 2**30),
    runtimeGetVersion=lambda: 12080,
    driverGetVersion=lambda: 12080,
    is_hip=False,
)


# ---------------------------------------------------------------- streams and events
_current_stream: dict = {}  # device -> its current Stream


def _device_match(device_id: int) -> int:
    """CuPy's check that a stream is used on the GPU it was made on (-1: any)."""
    cur = _state.current[0]
    if device_id not in (-1, cur):
        raise RuntimeError(
            f"The device that the stream is created on ({device_id}) does not match with the "
            f"current device ({cur})"
        )
    return cur


class Stream:
    """A stream: ``with stream:`` makes it the current stream of its device. The null and
    per-thread default singletons belong to every device (``device_id`` -1), as in CuPy."""

    def __init__(self, null: bool = False, non_blocking: bool = False, ptds: bool = False):
        if null or ptds:
            self.ptr, self.device_id = (0 if null else 2), -1
        else:
            self.ptr, self.device_id = id(self), _state.current[0]
        self._before: list = []

    def __enter__(self):
        dev = _device_match(self.device_id)
        self._before.append((dev, get_current_stream()))
        _current_stream[dev] = self
        return self

    def __exit__(self, *exc):
        dev, before = self._before.pop()
        _current_stream[dev] = before

    def use(self):
        _current_stream[_device_match(self.device_id)] = self
        return self

    def synchronize(self) -> None:
        pass

    @property
    def done(self) -> bool:
        return True

    def record(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def wait_event(self, event) -> None:
        pass

    def __eq__(self, other):
        return isinstance(other, Stream) and other.ptr == self.ptr

    def __hash__(self):
        return self.ptr

    def __repr__(self):
        return f"<{type(self).__name__} {self.ptr} (device {self.device_id})>"


class ExternalStream(Stream):
    """A stream made elsewhere, known by its pointer."""

    def __init__(self, ptr: int, device_id: int = -1):
        self.ptr, self.device_id = ptr, device_id
        self._before = []


Stream.null = Stream(null=True)
Stream.ptds = Stream(ptds=True)


def get_current_stream(device_id: int = -1) -> Stream:
    dev = _state.current[0] if device_id == -1 else device_id
    return _current_stream.get(dev, Stream.null)


class Event:
    """An event: the time it was recorded (work is done as it is queued here)."""

    def __init__(self, block: bool = False, disable_timing: bool = False, interprocess=False):
        self._time = None
        self._timing = not disable_timing

    def record(self, stream=None) -> None:
        self._time = time.perf_counter()

    def synchronize(self) -> None:
        pass

    @property
    def done(self) -> bool:
        return True

    @property
    def ptr(self) -> int:
        return id(self)


def get_elapsed_time(start: Event, end: Event) -> float:
    """Milliseconds between two recorded events."""
    if not (start._timing and end._timing):
        raise CUDARuntimeError("cudaErrorInvalidResourceHandle: invalid resource handle")
    if start._time is None or end._time is None:
        raise CUDARuntimeError("cudaErrorInvalidResourceHandle: invalid resource handle")
    return (end._time - start._time) * 1e3


# ---------------------------------------------------------------- memory
class MemoryPointer:
    def __init__(self, ptr: int, device_id: int, size: int = 0):
        self.ptr = ptr
        self.device_id = device_id
        self.mem = types.SimpleNamespace(size=size, ptr=ptr, device_id=device_id)

    def __int__(self):
        return self.ptr


class MemoryPool:
    """CuPy's default pool: blocks in use and blocks kept for reuse, per device."""

    def malloc(self, size: int) -> MemoryPointer:
        size = -(-size // _state.ROUND) * _state.ROUND
        _state.malloc(size, _state.current[0])
        return MemoryPointer(0, _state.current[0], size)

    def used_bytes(self) -> int:
        return _state.used[_state.current[0]]

    def free_bytes(self) -> int:
        return _state.free[_state.current[0]]

    def total_bytes(self) -> int:
        return self.used_bytes() + self.free_bytes()

    def free_all_blocks(self, stream=None) -> None:
        _state.free[_state.current[0]] = 0

    def n_free_blocks(self) -> int:
        return int(self.free_bytes() > 0)

    def get_limit(self) -> int:
        return 0

    def set_limit(self, size=None, fraction=None) -> None:
        pass


_POOL = MemoryPool()


def get_default_memory_pool() -> MemoryPool:
    return _POOL


def set_allocator(allocator=None) -> None:
    """Route every allocation through ``allocator(size)`` (None: the default pool)."""
    _state.allocator[0] = None if allocator is None or allocator == _POOL.malloc else allocator


def get_allocator():
    return _POOL.malloc if _state.allocator[0] is None else _state.allocator[0]


def get_device_id() -> int:
    return _state.current[0]


def is_available() -> bool:
    return True


cuda = types.SimpleNamespace(
    Device=Device,
    Stream=Stream,
    ExternalStream=ExternalStream,
    Event=Event,
    MemoryPool=MemoryPool,
    MemoryPointer=MemoryPointer,
    runtime=runtime,
    get_current_stream=get_current_stream,
    get_elapsed_time=get_elapsed_time,
    set_allocator=set_allocator,
    get_allocator=get_allocator,
    get_device_id=get_device_id,
    is_available=is_available,
    memory=types.SimpleNamespace(MemoryPool=MemoryPool, MemoryPointer=MemoryPointer),
)
