"""PyTorch's error texts for failures NumPy reports its own way: shapes that do not
broadcast, allocations too large."""

from __future__ import annotations

import math

import numpy as np


def _shapes(inputs) -> list:
    return [a.shape for a in inputs if hasattr(a, "shape") and not isinstance(a, (list, tuple))]


def broadcast_message(inputs, error: Exception) -> str | None:
    """PyTorch's text for operands that do not broadcast, when NumPy's broadcasting is what
    failed (None otherwise)."""
    if not str(error).startswith(
        ("operands could not be broadcast together with shapes", "shape mismatch: objects cannot")
    ):
        return None
    return broadcast_mismatch(_shapes(inputs))


def result_shape(inputs, attrs) -> tuple:
    """The shape an op meant to allocate, for its error: the ``size`` it was asked for
    (factories, expand), else the shape its inputs broadcast to."""
    size = attrs.get("size")
    if isinstance(size, tuple) and all(isinstance(s, int) and s >= 0 for s in size):
        return size
    return _broadcast_shape(inputs)


def _broadcast_shape(inputs) -> tuple:
    """The shape the inputs broadcast to (the largest one's where they do not)."""
    shapes = _shapes(inputs)
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        return max(shapes, key=lambda s: math.prod(s), default=())


def kernel_failure(inputs, attrs: dict, error: Exception) -> str | None:
    """PyTorch's text for a kernel's failure on ``inputs`` when NumPy's broadcasting or
    allocation is what failed (None otherwise)."""
    return broadcast_message(inputs, error) or alloc_message(error, result_shape(inputs, attrs))


_MAX_BYTES = 2**63 - 1


def alloc_message(error: Exception, shape) -> str | None:
    """PyTorch's text for a tensor of ``shape`` too large to allocate, when NumPy's
    allocation is what failed (None otherwise): a size in bytes past int64 overflows,
    anything else is the allocator's refusal."""
    if isinstance(error, MemoryError) and hasattr(error, "_total_size"):
        return alloc_failed(error._total_size)
    if isinstance(error, ValueError) and str(error).startswith(
        ("array is too big", "Maximum allowed size exceeded", "iterator is too large")
    ):
        if math.prod(shape) > _MAX_BYTES:
            return "numel: integer multiplication overflow"
        return size_overflow(shape)
    return None


def alloc_failed(nbytes: int) -> str:
    """PyTorch's CPU allocator's text for a refused allocation of ``nbytes``."""
    return (
        "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
        f"memory: you tried to allocate {nbytes} bytes. Error code 12 (Cannot allocate memory)"
    )


def size_overflow(shape) -> str:
    """PyTorch's text for a shape whose size in bytes does not fit in an int64."""
    return f"Storage size calculation overflowed with sizes={list(shape)}"


def check_alloc(shape, itemsize: int) -> None:
    """Raise PyTorch's RuntimeError for a tensor of ``shape`` whose bytes overflow int64."""
    if math.prod(shape) * itemsize > _MAX_BYTES:
        raise RuntimeError(size_overflow(shape))


def broadcast_mismatch(shapes) -> str | None:
    """PyTorch's error text for shapes that do not broadcast, None if they do: the shapes
    fold left to right, and a pair fails at its rightmost mismatch."""
    shape: tuple = ()
    for s in shapes:
        n = max(len(shape), len(s))
        sa, sb = (1,) * (n - len(shape)) + tuple(shape), (1,) * (n - len(s)) + tuple(s)
        for i in range(n - 1, -1, -1):
            if sa[i] != sb[i] and sa[i] != 1 and sb[i] != 1:
                return (
                    f"The size of tensor a ({sa[i]}) must match the size of tensor b ({sb[i]}) "
                    f"at non-singleton dimension {i}"
                )
        shape = tuple(y if x == 1 else x for x, y in zip(sa, sb))
    return None
