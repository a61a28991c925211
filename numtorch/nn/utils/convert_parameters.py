"""Parameters as one flat vector, and back."""

from __future__ import annotations

from collections.abc import Iterable

from ..._core.tensor import Tensor
from ...ops.shape import cat as _cat


def _typename(obj) -> str:
    """An object's type as ``torch.typename`` prints it (``list``, ``numpy.ndarray``)."""
    if hasattr(obj, "__qualname__"):
        module, name = getattr(obj, "__module__", "") or "", obj.__qualname__
    else:
        module, name = type(obj).__module__ or "", type(obj).__qualname__
    return name if module in ("", "builtins") else f"{module}.{name}"


def _check_param_device(param: Tensor, old_param_device: int | None) -> int:
    """The device index of the first parameter (-1 for CPU); raises if ``param`` is
    elsewhere."""
    index = param.device.index if param.device.type == "cuda" else -1
    index = 0 if index is None else index
    if old_param_device is not None and index != old_param_device:
        raise TypeError(
            "Found two parameters on different devices, this is currently not supported."
        )
    return index


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All ``parameters`` flattened and concatenated into one vector."""
    device, vec = None, []
    for param in parameters:
        device = _check_param_device(param, device)
        vec.append(param.view(-1))
    return _cat(vec)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Point each of ``parameters``' data at its slice of ``vec``, in order."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    device, pointer = None, 0
    for param in parameters:
        device = _check_param_device(param, device)
        n = param.numel()
        param.data = vec[pointer : pointer + n].view_as(param).data
        pointer += n
