"""Process-wide settings of the ``torch`` namespace: thread counts (the intra-op count
limits NumPy's BLAS and OpenMP pools through threadpoolctl, and numtorch's own slabs), deterministic algorithms,
float32 matmul precision, warn-always, the deprecated default tensor type, and the build
facts (``has_lapack``, ``compiled_with_cxx11_abi``, ...). Printing options are in
``_core/printing.py``."""

from __future__ import annotations

import os
import warnings

from ._core import dtype as dt
from ._core import parallel
from ._core.dtype import set_default_dtype


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (no affinity on this platform)
        return os.cpu_count() or 1


_state = {
    "interop": None,
    "interop_set": False,
    "deterministic": False,
    "warn_only": False,
    "matmul_precision": "highest",
    "warn_always": False,
}


# ------------------------------------------------------------------ threads
def _positive(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RuntimeError(f"{name} expects an int, but got {type(value).__name__}")
    if value <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return value


def get_num_threads() -> int:
    """The number of threads used for intra-op parallelism (NumPy's BLAS and OpenMP, and
    numtorch's kernels cut into slabs)."""
    return parallel.threads()


def set_num_threads(int) -> None:  # noqa: A002 - PyTorch's parameter name
    """Limit intra-op parallelism (NumPy's BLAS and OpenMP pools, numtorch's slabs) to
    ``int`` threads."""
    n = _positive(int, "set_num_threads")
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=n)
    parallel.set_threads(n)


def get_num_interop_threads() -> int:
    """The number of threads for inter-op parallelism."""
    n = _state["interop"]
    return _cores() if n is None else n


def set_num_interop_threads(int) -> None:  # noqa: A002 - PyTorch's parameter name
    """Set the inter-op thread count, once (PyTorch refuses a second call)."""
    n = _positive(int, "set_num_interop_threads")
    if _state["interop_set"]:
        raise RuntimeError(
            "Error: cannot set number of interop threads after parallel work has started or "
            "set_num_interop_threads called"
        )
    _state["interop"], _state["interop_set"] = n, True


def set_flush_denormal(mode: bool) -> bool:
    """Whether flushing denormal floats to zero could be set: NumPy has no such control,
    so numtorch reports it unsupported (False) and keeps denormals, as PyTorch does on a CPU
    without SSE3."""
    if not isinstance(mode, bool):
        raise TypeError(
            f"set_flush_denormal(): argument 'mode' (position 1) must be bool, not "
            f"{type(mode).__name__}"
        )
    return False


# ------------------------------------------------------------------ determinism
def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms (numtorch's kernels all are) and whether a
    nondeterministic one would only warn."""
    if not isinstance(mode, bool):
        raise TypeError(
            "_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
            f"{type(mode).__name__}"
        )
    if not isinstance(warn_only, bool):
        raise TypeError(
            "_set_deterministic_algorithms(): argument 'warn_only' must be bool, not "
            f"{type(warn_only).__name__}"
        )
    _state["deterministic"], _state["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]


def get_deterministic_debug_mode() -> int:
    """0 (default), 1 (warn) or 2 (error), as use_deterministic_algorithms left it."""
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode) -> None:
    """use_deterministic_algorithms by level: "default"/0 off, "warn"/1 warn only,
    "error"/2 on."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(
                "invalid value of debug_mode, expected one of `default`, `warn`, `error`, but "
                f"got {debug_mode}"
            )
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(
            f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}"
        )
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


# ------------------------------------------------------------------ matmul precision
def get_float32_matmul_precision() -> str:
    """ "highest", "high" or "medium" (numtorch's matmuls are always full float32)."""
    return _state["matmul_precision"]


def set_float32_matmul_precision(precision: str) -> None:
    """Record the float32 matmul precision; an unknown name warns and changes nothing."""
    if not isinstance(precision, str):
        raise RuntimeError(
            f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}"
        )
    if precision in ("highest", "high", "medium"):
        _state["matmul_precision"] = precision
        return
    warnings.warn(
        f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
        "setFloat32MatmulPrecision call has no effect.",
        UserWarning,
        stacklevel=2,
    )


# ------------------------------------------------------------------ warnings
def set_warn_always(b: bool) -> None:
    """Warnings PyTorch gives once per process are given every time when True."""
    _state["warn_always"] = bool(b)


def is_warn_always_enabled() -> bool:
    return _state["warn_always"]


# ------------------------------------------------------------------ default tensor type
_ONLY_FLOATING = "only floating-point types are supported as the default type"


def set_default_tensor_type(t, /) -> None:
    """Deprecated: the default floating dtype from a legacy tensor type or its name."""
    warnings.warn(
        "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
        "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
        UserWarning,
        stacklevel=2,
    )
    if isinstance(t, str):
        name = t
        try:
            d = dt.from_tensor_type(name.replace("torch.cuda.", "torch."))
        except KeyError:
            raise AttributeError(
                f"module 'torch' has no attribute '{name.rpartition('.')[2]}'"
            ) from None
    elif isinstance(getattr(t, "dtype", None), dt.dtype) and isinstance(t, type):
        name, d = repr(t)[8:-2], t.dtype
    else:
        raise TypeError(f"invalid type object: {_ONLY_FLOATING}")
    if name.startswith("torch.cuda."):
        raise TypeError(f"type {name} not available. Torch not compiled with CUDA enabled.")
    if not d.is_floating_point:
        raise TypeError(_ONLY_FLOATING)
    set_default_dtype(d)


# ------------------------------------------------------------------ build facts
def compiled_with_cxx11_abi() -> bool:
    """Whether PyTorch was built with _GLIBCXX_USE_CXX11_ABI=1 (its wheels are)."""
    return True


def is_vulkan_available() -> bool:
    return False


has_lapack = True  # SciPy's LAPACK
has_mkl = False  # NumPy's BLAS is not taken to be MKL
has_openmp = True
has_spectral = True  # NumPy's FFT
