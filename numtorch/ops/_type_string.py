"""The name PyTorch's error texts give a tensor's type (C++ ``Tensor::toString``)."""

from __future__ import annotations

from .._core import dtype as dt

# the scalar types with a legacy tensor class (torch.FloatTensor, torch.cuda.FloatTensor)
_LEGACY = frozenset(("Float", "Double", "Half", "Long", "Int", "Short", "Char", "Byte"))
_BACKENDS = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta"}


def type_string(dtype: dt.dtype, device: str = "cpu") -> str:
    """A tensor's type in PyTorch's texts: its legacy tensor class on the CPU or a GPU where
    the scalar type has one ("torch.FloatTensor", "torch.cuda.LongTensor"), else the
    backend's type ("CPUBoolType", "CUDAComplexFloatType", "MetaFloatType")."""
    name = dtype.scalar_name
    if name in _LEGACY and device in ("cpu", "cuda"):
        return f"torch.{'cuda.' if device == 'cuda' else ''}{name}Tensor"
    return f"{_BACKENDS.get(device, device)}{name}Type"
