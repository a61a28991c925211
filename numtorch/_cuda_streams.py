"""torch.cuda's devices, streams and events, mapped onto CuPy's: the current GPU is CuPy's
current device, a ``Stream`` holds a CuPy stream, an ``Event`` a CuPy event made when it is
first recorded (on the recording stream's GPU)."""

from __future__ import annotations

from typing import Any

from ._core.device import check_index, cuda_index, require_cuda, run_pending_checks
from ._core.device import device as _device
from ._core.methods import tensor_methods
from ._core.tensor import Tensor
from .nn._aten_norm import _no_cpu_kernel

__all__ = [
    "Event",
    "ExternalStream",
    "Stream",
    "StreamContext",
    "current_device",
    "current_stream",
    "default_stream",
    "device",
    "device_of",
    "set_device",
    "set_stream",
    "stream",
    "synchronize",
]


def current_device() -> int:
    """The index of the selected GPU."""
    return int(require_cuda().cuda.runtime.getDevice())


def _use(idx: int) -> None:
    check_index(idx)
    require_cuda().cuda.runtime.setDevice(idx)


def set_device(device: _device | str | int) -> None:
    """Select a GPU (a negative index: nothing)."""
    idx = cuda_index(device)
    if idx >= 0:
        _use(idx)


def _exchange(idx: int) -> int:
    """Select GPU ``idx`` (when not negative); the one selected before (-1: none was)."""
    if idx < 0:
        return -1
    before = current_device()
    if idx != before:
        _use(idx)
    return before


class device:
    """Context manager that selects a GPU (a negative index or None: nothing)."""

    def __init__(self, device: Any):
        self.idx = -1 if device is None else cuda_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = _exchange(self.idx)

    def __exit__(self, type: Any, value: Any, traceback: Any):
        if self.prev_idx >= 0:
            _exchange(self.prev_idx)
        return False


_select = device


class device_of(device):
    """Context manager that selects the GPU of a tensor (nothing for a CPU tensor)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


def synchronize(device: _device | str | int | None = None) -> None:
    """Wait for all kernels in all streams on a GPU to complete."""
    cp = require_cuda()
    with _select(device):
        cp.cuda.runtime.deviceSynchronize()
    run_pending_checks()


# ---------------------------------------------------------------- streams
class Stream:
    """A CUDA stream (a CuPy stream) of one GPU. ``priority`` is accepted; CuPy 13 makes
    every stream with the default priority."""

    def __init__(self, device=None, priority: int = 0, **kwargs):
        cp = require_cuda()
        if "_cupy" in kwargs:  # an existing CuPy stream of GPU device_index
            self._s, self.device_index = kwargs["_cupy"], kwargs["device_index"]
        else:
            with _select(device):
                self._s = cp.cuda.Stream(non_blocking=True)
                self.device_index = current_device()
        self.priority = priority
        self.device_type = 1  # (PyTorch's DeviceType::CUDA)

    @classmethod
    def _of(cls, s, idx: int) -> Stream:
        return cls(_cupy=s, device_index=idx)

    @property
    def device(self) -> _device:
        return _device("cuda", self.device_index)

    @property
    def cuda_stream(self) -> int:
        return int(self._s.ptr)

    stream_id = cuda_stream

    def wait_event(self, event: Event) -> None:
        """Make future work on this stream wait for ``event``."""
        event.wait(self)

    def wait_stream(self, stream: Stream) -> None:
        """Make future work on this stream wait for the work queued on ``stream`` now."""
        self.wait_event(stream.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        """Record ``event`` (a new one when None) on this stream."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    def query(self) -> bool:
        """Whether all work queued on this stream is done."""
        return bool(self._s.done)

    def synchronize(self) -> None:
        """Wait for the work queued on this stream."""
        self._s.synchronize()
        run_pending_checks()

    def __eq__(self, o) -> bool:
        if isinstance(o, Stream):
            return (self.cuda_stream, self.device_index) == (o.cuda_stream, o.device_index)
        return False

    def __hash__(self):
        return hash((self.cuda_stream, self.device))

    def __repr__(self):
        return f"<torch.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"

    def __cuda_stream__(self):
        return (0, self.cuda_stream)


class ExternalStream(Stream):
    """A stream made elsewhere, known by its pointer."""

    def __init__(self, stream_ptr: int, device=None, **kwargs):
        cp = require_cuda()
        with _select(device):
            idx = current_device()
            super().__init__(_cupy=cp.cuda.ExternalStream(stream_ptr, idx), device_index=idx)


def current_stream(device: _device | str | int | None = None) -> Stream:
    """The selected stream of a GPU (default: the current one)."""
    cp = require_cuda()
    idx = cuda_index(device, optional=True)
    return Stream._of(cp.cuda.get_current_stream(idx), idx)


def default_stream(device: _device | str | int | None = None) -> Stream:
    """The default stream of a GPU (default: the current one)."""
    cp = require_cuda()
    return Stream._of(cp.cuda.Stream.null, cuda_index(device, optional=True))


def set_stream(stream: Stream) -> None:
    """Select a stream on its GPU, and its GPU (None: nothing)."""
    if stream is None:
        return
    if stream.device_index != current_device():
        _use(stream.device_index)
    stream._s.use()


class StreamContext:
    """Context manager that selects a stream (None: nothing)."""

    def __init__(self, stream: Stream | None):
        self.stream = stream
        self.src_prev_stream = self.dst_prev_stream = None

    def __enter__(self):
        s = self.stream
        if s is None:
            return
        self.src_prev_stream = current_stream(None)
        if self.src_prev_stream.device != s.device:
            with device(s.device):
                self.dst_prev_stream = current_stream(s.device)
        set_stream(s)

    def __exit__(self, type: Any, value: Any, traceback: Any):
        s = self.stream
        if s is None:
            return
        if self.src_prev_stream.device != s.device:
            set_stream(self.dst_prev_stream)
        set_stream(self.src_prev_stream)


def stream(stream: Stream | None) -> StreamContext:
    """Select a stream for the block (None: nothing)."""
    return StreamContext(stream)


# ---------------------------------------------------------------- events
class Event:
    """A CUDA event (a CuPy event, made on the GPU of the stream that first records it)."""

    def __init__(
        self,
        enable_timing: bool = False,
        blocking: bool = False,
        interprocess: bool = False,
        external: bool = False,
    ):
        require_cuda()
        self.enable_timing = enable_timing
        self._blocking, self._interprocess = blocking, interprocess
        self._e = None
        self._device_index = -1

    @property
    def device(self) -> _device | None:
        return None if self._e is None else _device("cuda", self._device_index)

    def record(self, stream: Stream | None = None) -> None:
        """Record the event on ``stream`` (default: the current stream)."""
        if stream is None:
            stream = current_stream()
        cp = require_cuda()
        if self._e is None:
            with device(stream.device_index):
                self._e = cp.cuda.Event(
                    block=self._blocking,
                    disable_timing=not self.enable_timing,
                    interprocess=self._interprocess,
                )
            self._device_index = stream.device_index
        elif self._device_index != stream.device_index:
            raise RuntimeError(
                f"Event device {self._device_index} does not match recording stream's device "
                f"{stream.device_index}."
            )
        with device(self._device_index):
            self._e.record(stream._s)

    def wait(self, stream: Stream | None = None) -> None:
        """Make future work on ``stream`` (default: the current one) wait for this event."""
        if stream is None:
            stream = current_stream()
        if self._e is not None:
            with device(stream.device_index):
                stream._s.wait_event(self._e)

    def query(self) -> bool:
        """Whether the work this event captured is done (True before it is recorded)."""
        return True if self._e is None else bool(self._e.done)

    def synchronize(self) -> None:
        """Wait for the work this event captured."""
        if self._e is not None:
            self._e.synchronize()
        run_pending_checks()

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds from this event to ``end_event``."""
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        if self._e is None or end_event._e is None:
            raise ValueError("Both events must be recorded before calculating elapsed time.")
        if not (self.query() and end_event.query()):
            raise RuntimeError("Both events must be completed before calculating elapsed time.")
        return float(require_cuda().cuda.get_elapsed_time(self._e, end_event._e))

    def __repr__(self):
        return f"<torch.cuda.Event {id(self._e) if self._e is not None else 0:#x}>"


# ---------------------------------------------------------------- Tensor.record_stream
_in_use: list = []  # (event, array): kept alive until the work queued at record time is done


def _record_stream(self: Tensor, stream: Stream) -> None:
    """Keep this tensor's memory from being reused until the work now queued on ``stream``
    is done."""
    _no_cpu_kernel("record_stream", self)
    _in_use[:] = [(e, a) for e, a in _in_use if not e.query()]
    _in_use.append((stream.record_event(), self._data))


tensor_methods({"record_stream": _record_stream})
