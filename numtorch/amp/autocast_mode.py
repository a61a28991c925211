"""torch.autocast: regions where ops run in an op-specific dtype, and the state functions
(``is_autocast_enabled``, ``get_autocast_dtype``, ...), ``custom_fwd`` and ``custom_bwd``.

Which dtype an op runs in is a fact on its declaration (``Op.autocast``); the casting
itself is ``numtorch._core.autocast``'s.
"""

from __future__ import annotations

import collections.abc
import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .._core import autocast as _switch
from .._core import autocast_state as _st
from .._core import dtype as dt
from .._core.device import is_cuda_available
from .._core.tensor import Tensor

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast exists for ``device_type`` ('cpu', 'cuda', ...)."""
    return _st.is_available(device_type)


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` in this thread (no argument: 'cuda')."""
    return _st.is_enabled("cuda" if device_type is None else device_type)


def set_autocast_enabled(device_type: str | bool, enabled: bool | None = None) -> None:
    """Turn autocast on or off for ``device_type`` (one argument: for 'cuda')."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _switch.set_enabled(device_type, enabled)


def get_autocast_dtype(device_type: str) -> dt.dtype:
    """The lower precision dtype autocast uses on ``device_type``."""
    return _st.get_dtype(device_type)


def set_autocast_dtype(device_type: str, dtype: dt.dtype) -> None:
    """Set the lower precision dtype autocast uses on ``device_type``."""
    _st.set_dtype(device_type, dtype)


def is_autocast_cache_enabled() -> bool:
    """Whether autocast caches the casts of weights within a region."""
    return _st.tls.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _st.tls.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Forget the casts of weights made so far in this thread."""
    _st.clear_cache()


def autocast_increment_nesting() -> int:
    _st.tls.nesting += 1
    return _st.tls.nesting


def autocast_decrement_nesting() -> int:
    _st.tls.nesting -= 1
    return _st.tls.nesting


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"{old} is deprecated. Please use {new} instead.", DeprecationWarning, 3)


def _legacy_enabled(short: str, device: str) -> tuple[Callable, Callable]:
    """PyTorch's deprecated ``is_autocast_<short>_enabled`` and ``set_autocast_<short>_enabled``."""

    def is_enabled() -> bool:
        _deprecated(
            f"torch.is_autocast_{short}_enabled()", f"torch.is_autocast_enabled('{device}')"
        )
        return _st.is_enabled(device)

    def set_enabled(enabled: bool) -> None:
        _deprecated(
            f"torch.set_autocast_{short}_enabled(enabled)",
            f"torch.set_autocast_enabled('{device}', enabled)",
        )
        _switch.set_enabled(device, enabled)

    is_enabled.__name__ = is_enabled.__qualname__ = f"is_autocast_{short}_enabled"
    set_enabled.__name__ = set_enabled.__qualname__ = f"set_autocast_{short}_enabled"
    return is_enabled, set_enabled


def _legacy_dtype(short: str, device: str) -> tuple[Callable, Callable]:
    """PyTorch's deprecated ``get_autocast_<short>_dtype`` and ``set_autocast_<short>_dtype``."""

    def get_dtype() -> dt.dtype:
        _deprecated(f"torch.get_autocast_{short}_dtype()", f"torch.get_autocast_dtype('{device}')")
        return _st.get_dtype(device)

    def set_dtype(dtype: dt.dtype) -> None:
        _deprecated(
            f"torch.set_autocast_{short}_dtype(dtype)",
            f"torch.set_autocast_dtype('{device}', dtype)",
        )
        _st.set_dtype(device, dtype)

    get_dtype.__name__ = get_dtype.__qualname__ = f"get_autocast_{short}_dtype"  # (pickles)
    set_dtype.__name__ = set_dtype.__qualname__ = f"set_autocast_{short}_dtype"
    return get_dtype, set_dtype


is_autocast_cpu_enabled, set_autocast_cpu_enabled = _legacy_enabled("cpu", "cpu")
is_autocast_ipu_enabled, set_autocast_ipu_enabled = _legacy_enabled("ipu", "ipu")
is_autocast_xla_enabled, set_autocast_xla_enabled = _legacy_enabled("xla", "xla")
get_autocast_cpu_dtype, set_autocast_cpu_dtype = _legacy_dtype("cpu", "cpu")
get_autocast_gpu_dtype, set_autocast_gpu_dtype = _legacy_dtype("gpu", "cuda")
get_autocast_ipu_dtype, set_autocast_ipu_dtype = _legacy_dtype("ipu", "ipu")
get_autocast_xla_dtype, set_autocast_xla_dtype = _legacy_dtype("xla", "xla")


def _check_device_type(device_type) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


class autocast:
    """A region (context manager or decorator) in which ops run in an op-specific dtype:
    matrix products and convolutions in ``dtype`` (default ``get_autocast_dtype``:
    bfloat16 on the CPU, float16 on CUDA), losses, reductions and decompositions that need
    range in float32. ``autocast(enabled=False)`` regions nest inside enabled ones."""

    def __init__(
        self,
        device_type: str,
        dtype: dt.dtype | None = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ):
        _check_device_type(device_type)
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(self.device):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{self.device}'"
            )
        self._cache_enabled = (
            is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        )
        name = self.device.upper()
        supported = (dt.bfloat16, dt.float16)
        if enabled:
            if self.device == "cuda":
                if not is_cuda_available():
                    warnings.warn(
                        "CUDA is not available or torch_xla is imported. Disabling autocast.",
                        stacklevel=2,
                    )
                    enabled = False
            elif self.fast_dtype not in supported:
                warnings.warn(
                    f"In {name} autocast, but the target dtype is not supported. Disabling "
                    f"autocast.\n{name} Autocast only supports dtypes of "
                    + ", ".join(map(str, supported))
                    + " currently.",
                    stacklevel=2,
                )
                enabled = False
        self._enabled = enabled

    def __enter__(self) -> autocast:
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> bool:
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func: Callable) -> Callable:
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                "Did you mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n"
                "        output = model(input)"
            )

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorate_autocast


def _cast(value, device_type: str, dtype: dt.dtype):
    """Floating tensors (not float64) on ``device_type`` in ``value``, a container
    searched through, cast to ``dtype``."""
    if isinstance(value, Tensor):
        eligible = (
            value.is_floating_point()
            and value.device.type == device_type
            and value.dtype is not dt.float64
        )
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {
            _cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()
        }
    if isinstance(value, collections.abc.Iterable):
        items = (_cast(v, device_type, dtype) for v in value)
        return type(value)(items) if isinstance(value, (list, tuple)) else items
    return value


def custom_fwd(
    fwd: Callable | None = None, *, device_type: str, cast_inputs: dt.dtype | None = None
) -> Callable:
    """A decorator for a custom ``autograd.Function``'s ``forward``: with ``cast_inputs``,
    inside an autocast region its floating tensor arguments are cast to that dtype and it
    runs with autocast off; without, it runs under the current autocast state."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(
                *_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs)
            )

    return decorate_fwd


def custom_bwd(bwd: Callable | None = None, *, device_type: str) -> Callable:
    """A decorator for a custom ``autograd.Function``'s ``backward``: it runs with the
    autocast state its ``forward`` (decorated with ``custom_fwd``) ran with."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
