"""Random generators (torch.Generator): one default generator per device, seeded by
``manual_seed``, with states that ``get_state``/``set_state`` save and restore exactly.

A CPU generator is NumPy's PCG64. A GPU generator is, as PyTorch's, a Philox state: a seed
and an offset. Each draw on a GPU uses a fresh ``cupy.random.Philox4x3210`` seeded by the
pair and then advances the offset by 4, so the numbers are made on the device and a
restored (seed, offset) state reproduces the draws that followed it.
"""

from __future__ import annotations

import numpy as np

from .._core import dtype as dt
from .._core.device import _cupy, backend
from .._core.device import device as Device
from .._core.interpreter import side_effect
from .._core.meta_array import META_RNG
from .._core.tensor import Tensor, _make

_DEFAULT_SEED = 67280421310721  # PyTorch's initial seed: unseeded runs are reproducible too


# A generator's state as a uint8 tensor: numtorch's own fixed-size layout (PyTorch's is its
# Mersenne Twister's): the PCG64 state and increment (16 bytes each, little-endian), the
# cached 32-bit half-draw (flag, value: 4 bytes each) and the initial seed (8 bytes).
_STATE_LAYOUT = np.dtype(
    [
        ("state", "<u8", 2),
        ("inc", "<u8", 2),
        ("has_uint32", "<u4"),
        ("uinteger", "<u4"),
        ("seed", "<u8"),
    ]
)
_STATE_SIZE = _STATE_LAYOUT.itemsize
# A GPU generator's state, as PyTorch's CUDA one: the seed and the Philox offset.
_PHILOX_LAYOUT = np.dtype([("seed", "<u8"), ("offset", "<i8")])
_PHILOX_STEP = 4  # how far one draw advances the offset (PyTorch's offsets are multiples of 4)
_SEED_MIN, _SEED_END = -(2**63), 2**64


def _seed_value(seed) -> int:
    """A seed as PyTorch reads one: int() of it, within a signed or unsigned 64-bit range
    (negative seeds wrap modulo 2**64)."""
    seed = int(seed)
    if not _SEED_MIN <= seed < _SEED_END:
        raise ValueError("Overflow when unpacking long long")
    return seed % _SEED_END


def _split128(v: int) -> list[int]:
    return [v & (2**64 - 1), v >> 64]


def _state_bytes(new_state) -> np.ndarray:
    """The bytes of a state tensor, refused as PyTorch refuses one that is not a contiguous
    CPU uint8 tensor (type, then contiguity)."""
    if not isinstance(new_state, Tensor):
        raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
    if new_state.dtype != dt.uint8 or new_state.device.type != "cpu":
        raise TypeError("RNG state must be a torch.ByteTensor")
    if not new_state.is_contiguous():
        raise RuntimeError("RNG state must be contiguous")
    return np.ascontiguousarray(new_state.numpy(force=True)).reshape(-1)  # any shape


def _check_state(new_state) -> np.ndarray:
    """A CPU generator's state bytes (PyTorch's checks, then the size)."""
    raw = _state_bytes(new_state)
    if raw.size != _STATE_SIZE:
        raise RuntimeError(
            f"Expected a CPUGeneratorImplState of size {_STATE_SIZE} but found the input RNG "
            f"state size to be {raw.size}"
        )
    return raw


def _fresh_seed() -> int:
    return int(np.random.SeedSequence().entropy % 2**63)


class Generator:
    """A source of random numbers (torch.Generator): seeded, with a savable state."""

    def __new__(cls, device="cpu"):
        if cls is Generator and Device(device).type == "cuda":
            cls = CudaGenerator
        return super().__new__(cls)

    def __init__(self, device="cpu"):
        self.device = Device(device)
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed) -> Generator:
        side_effect("a generator seeded")
        seed = _seed_value(seed)
        self._seed = seed
        self._rng = np.random.default_rng(seed)
        return self

    def seed(self) -> int:
        s = _fresh_seed()
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        """The generator's state as a uint8 tensor (for ``set_state``)."""
        bits = self._rng.bit_generator.state
        rec = np.zeros((), _STATE_LAYOUT)
        rec["state"] = _split128(bits["state"]["state"])
        rec["inc"] = _split128(bits["state"]["inc"])
        rec["has_uint32"] = bits["has_uint32"]
        rec["uinteger"] = bits["uinteger"]
        rec["seed"] = self._seed
        return _make(np.frombuffer(rec.tobytes(), np.uint8).copy())

    def set_state(self, new_state: Tensor) -> Generator:
        side_effect("a generator's state set")
        rec = np.frombuffer(_check_state(new_state).tobytes(), _STATE_LAYOUT)[0]
        state, inc = (int(v[0]) | int(v[1]) << 64 for v in (rec["state"], rec["inc"]))
        self._rng.bit_generator.state = {  # in place: holders of the NumPy generator follow
            "bit_generator": "PCG64",
            "state": {"state": state, "inc": inc | 1},
            "has_uint32": int(rec["has_uint32"] != 0),
            "uinteger": int(rec["uinteger"]),
        }
        self._seed = int(rec["seed"])
        return self

    def clone_state(self) -> Generator:
        """A new generator on the same device in this one's state."""
        g = Generator(self.device)
        return g.set_state(self.get_state())

    def graphsafe_get_state(self):
        raise NotImplementedError("graphsafe_get_state is not supported in this Generator")

    def graphsafe_set_state(self, state) -> None:
        if not isinstance(state, Generator):
            raise TypeError(f"expected a Generator, but got {type(state).__name__}")
        raise NotImplementedError("graphsafe_set_state is not supported in this Generator")

    def get_offset(self) -> int:
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset) -> Generator:
        raise RuntimeError("CPU Generator does not use offset")

    def __repr__(self) -> str:
        return f"<numtorch.Generator object on {self.device}>"


class CudaGenerator(Generator):
    """A GPU's generator (``torch.Generator(device='cuda')``): a seed and a Philox offset."""

    def __init__(self, device="cuda"):
        d = Device(device)
        index = d.index
        if index is None:  # as PyTorch's: the current GPU's
            index = int(backend(d).cuda.runtime.getDevice())
        self.device = Device("cuda", index)
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed) -> CudaGenerator:
        side_effect("a generator seeded")
        self._seed = _seed_value(seed)
        self._offset = 0
        return self

    def get_state(self) -> Tensor:
        """The seed and the offset as 16 bytes of a CPU uint8 tensor (PyTorch's layout)."""
        rec = np.zeros((), _PHILOX_LAYOUT)
        rec["seed"], rec["offset"] = self._seed, self._offset
        return _make(np.frombuffer(rec.tobytes(), np.uint8).copy())

    def set_state(self, new_state: Tensor) -> CudaGenerator:
        side_effect("a generator's state set")
        raw = _state_bytes(new_state)
        if raw.size == 8:  # a seed alone, as PyTorch accepts: offset 0
            raw = np.concatenate([raw, np.zeros(8, np.uint8)])
        elif raw.size != _PHILOX_LAYOUT.itemsize:
            raise RuntimeError("RNG state is wrong size")
        rec = np.frombuffer(raw.tobytes(), _PHILOX_LAYOUT)[0]
        offset = int(rec["offset"])
        self._check_offset(offset)
        self._seed, self._offset = int(rec["seed"]), offset
        return self

    def get_offset(self) -> int:
        return self._offset

    def set_offset(self, offset) -> CudaGenerator:
        offset = int(offset)
        self._check_offset(offset)
        self._offset = offset
        return self

    @staticmethod
    def _check_offset(offset: int) -> None:
        if offset % _PHILOX_STEP:
            raise RuntimeError("offset must be a multiple of 4")

    def draws(self):
        """A CuPy generator for one draw, made on the current GPU from (seed, offset); the
        offset moves on, so the next draw gets other numbers."""
        cp = _cupy()
        seed, offset = self._seed, self._offset
        self._offset = offset + _PHILOX_STEP
        return cp.random.default_rng(cp.random.Philox4x3210([seed, offset]))


# One default generator per device ("cpu", "cuda:0", "cuda:1", ...); manual_seed seeds them.
_generators: dict[str, Generator] = {"cpu": Generator()}


def _default(dev) -> Generator:
    """The default generator of a device (a name or a device; 'cuda': the current GPU's)."""
    key = str(dev)
    g = _generators.get(key)
    if g is None:
        d = Device(dev)
        if d.type == "cuda" and d.index is None:
            return _default(Device("cuda", int(backend(d).cuda.runtime.getDevice())))
        # a GPU's generator starts from the CPU's seed: the last manual_seed, as in PyTorch
        g = _generators[key] = Generator(d).manual_seed(_generators["cpu"].initial_seed())
    return g


def manual_seed(seed) -> Generator:
    """Seed the random generator of every device; returns the CPU one."""
    for g in _generators.values():
        g.manual_seed(seed)
    return _generators["cpu"]


def seed() -> int:
    """Seed every device's generator with a non-deterministic number and return it."""
    s = _generators["cpu"].seed()
    manual_seed(s)
    return s


def initial_seed() -> int:
    return _generators["cpu"].initial_seed()


def get_rng_state() -> Tensor:
    return _generators["cpu"].get_state()


def set_rng_state(new_state: Tensor) -> None:
    _generators["cpu"].set_state(new_state)


def default_generator(dev: str = "cpu") -> np.random.Generator:
    """The NumPy generator behind the CPU's default generator."""
    return _default(dev)._rng


def all_states() -> dict:
    """Every default generator's state (for ``restore_states``)."""
    return {k: g.get_state() for k, g in _generators.items()}


def restore_states(states: dict) -> None:
    """Put the default generators back in the states ``all_states`` gave."""
    for k, state in states.items():
        _generators[k].set_state(state)


def _wrong_device(want: str, found: str) -> RuntimeError:
    return RuntimeError(f"Expected a '{want}' device type for generator but found '{found}'")


def rng(generator, device=None) -> np.random.Generator:
    """The NumPy generator a draw on the CPU (or the meta device) uses: ``generator``'s, or
    the device's default."""
    if device is not None and device.type == "meta":
        return META_RNG  # (a draw on the meta device is its shape and dtype)
    if generator is None:
        return _generators["cpu"]._rng
    if isinstance(generator, CudaGenerator):
        raise _wrong_device("cpu", "cuda")
    if isinstance(generator, Generator):
        return generator._rng
    return generator  # a NumPy Generator


def gpu_rng(generator, device: Device):
    """The CuPy generator of one draw on a GPU (made on the current GPU): from ``generator``
    or the GPU's default generator."""
    if generator is None:
        generator = _default(device)
    elif not isinstance(generator, CudaGenerator):
        raise _wrong_device("cuda", "cpu")
    return generator.draws()


__all__ = [
    "CudaGenerator",
    "all_states",
    "restore_states",
    "Generator",
    "gpu_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "rng",
    "seed",
    "set_rng_state",
]
