"""DataParallel with no GPU: PyTorch's then runs the wrapped module on the CPU unchanged."""

from __future__ import annotations

from ..._core.device import is_cuda_available
from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """On the CPU, ``DataParallel(m)(x)`` is ``m(x)``; ``module`` is the wrapped module."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0) -> None:
        super().__init__()
        self.module = module
        self.device_ids = []
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """``module(*inputs, **module_kwargs)``; with no GPU, PyTorch's error."""
    if not is_cuda_available():
        raise RuntimeError("device type could not be determined")
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))
