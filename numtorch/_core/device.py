"""Devices: 'cpu' is NumPy; 'cuda' is CuPy when it is installed and a GPU is present."""

from __future__ import annotations

import numpy as np


class device:
    __slots__ = ("type", "index")

    def __init__(self, type: str | device = "cpu", index: int | None = None):
        if isinstance(type, device):
            type, index = type.type, type.index
        if ":" in type:
            type, idx = type.split(":")
            index = int(idx)
        if type not in ("cpu", "cuda"):
            raise RuntimeError(
                f"Expected one of cpu, cuda device type at start of device string: {type}"
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


CPU = device("cpu")
_CUDA = device("cuda", 0)


def _cupy():
    try:
        import cupy
    except ImportError:
        return None
    return cupy


# True once any CuPy array was made: until then kernels skip the backend lookup.
_cuda_used = [False]


def backend(dev: device):
    """The array module of a device."""
    if dev.type == "cpu":
        return np
    cp = _cupy()
    if cp is None:
        raise RuntimeError("Torch not compiled with CUDA enabled")
    _cuda_used[0] = True
    return cp


def device_of(arr) -> device:
    return CPU if type(arr) is np.ndarray else _CUDA


def xp_of(arr):
    """The array module an array belongs to."""
    return np if isinstance(arr, np.ndarray) else _cupy()


def is_cuda_available() -> bool:
    cp = _cupy()
    if cp is None:
        return False
    try:
        return cp.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False
