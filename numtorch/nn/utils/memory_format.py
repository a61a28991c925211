"""torch.nn.utils.memory_format: convert the weights of 2-d and 3-d convolutions to a
memory format.

numtorch models no channels-last layout: the weights are copied in the layout the format
names where numtorch knows it (``clone``'s ``memory_format``), and keep their values,
shapes and identities."""

from __future__ import annotations

from typing import Any, TypeVar

from ...autograd.grad_mode import no_grad
from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]

_M = TypeVar("_M", bound=Module)


def _convert(module: _M, memory_format: Any, kinds: tuple) -> _M:
    if isinstance(module, kinds):
        with no_grad():
            module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module: _M, memory_format: Any) -> _M:
    """Convert the weight of every Conv2d/ConvTranspose2d in module (recursively) to
    memory_format; returns module."""
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module: _M, memory_format: Any) -> _M:
    """Convert the weight of every Conv3d/ConvTranspose3d in module (recursively) to
    memory_format; returns module."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
