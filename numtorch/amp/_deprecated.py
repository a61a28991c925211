"""The device-specific spellings PyTorch deprecates (``torch.cpu.amp`` and
``torch.cuda.amp``): each warns with PyTorch's FutureWarning and is the device-neutral one
with its device fixed."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from .._core import dtype as dt
from . import autocast_mode
from .grad_scaler import GradScaler


def _warn(old: str, new: str) -> None:
    warnings.warn(f"`{old}` is deprecated. Please use `{new}` instead.", FutureWarning, 3)


def _autocast_for(device: str, default: dt.dtype) -> type:
    class autocast(autocast_mode.autocast):
        __doc__ = f"``torch.{device}.amp.autocast(args...)``: ``torch.amp.autocast({device!r})``."

        def __init__(
            self, enabled: bool = True, dtype: dt.dtype = default, cache_enabled: bool = True
        ):
            _warn(
                f"torch.{device}.amp.autocast(args...)", f"torch.amp.autocast('{device}', args...)"
            )
            super().__init__(device, enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)

    autocast.__module__ = f"numtorch.{device}.amp.autocast_mode"
    return autocast


def _scaler_for(device: str) -> type:
    class Scaler(GradScaler):
        __doc__ = (
            f"``torch.{device}.amp.GradScaler(args...)``: ``torch.amp.GradScaler({device!r})``."
        )

        def __init__(
            self,
            init_scale: float = 2.0**16,
            growth_factor: float = 2.0,
            backoff_factor: float = 0.5,
            growth_interval: int = 2000,
            enabled: bool = True,
        ) -> None:
            _warn(
                f"torch.{device}.amp.GradScaler(args...)",
                f"torch.amp.GradScaler('{device}', args...)",
            )
            super().__init__(
                device,
                init_scale=init_scale,
                growth_factor=growth_factor,
                backoff_factor=backoff_factor,
                growth_interval=growth_interval,
                enabled=enabled,
            )

    Scaler.__name__ = Scaler.__qualname__ = "GradScaler"
    Scaler.__module__ = f"numtorch.{device}.amp.grad_scaler"
    return Scaler


class _Namespace:
    """A ``torch.<device>.amp`` namespace."""

    def __init__(self, **names: Any) -> None:
        self.__dict__.update(names)


def _cuda_custom_fwd(fwd: Callable | None = None, *, cast_inputs: dt.dtype | None = None):
    _warn("torch.cuda.amp.custom_fwd(args...)", "torch.amp.custom_fwd(args..., device_type='cuda')")
    return autocast_mode.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def _cuda_custom_bwd(bwd: Callable | None = None):
    _warn("torch.cuda.amp.custom_bwd(args...)", "torch.amp.custom_bwd(args..., device_type='cuda')")
    return autocast_mode.custom_bwd(bwd, device_type="cuda")


_cuda_custom_fwd.__name__ = "custom_fwd"
_cuda_custom_bwd.__name__ = "custom_bwd"

cpu_amp = _Namespace(autocast=_autocast_for("cpu", dt.bfloat16), GradScaler=_scaler_for("cpu"))
cuda_amp = _Namespace(
    autocast=_autocast_for("cuda", dt.float16),
    GradScaler=_scaler_for("cuda"),
    custom_fwd=_cuda_custom_fwd,
    custom_bwd=_cuda_custom_bwd,
)
