"""``torch.backends.cudnn`` of a CPU build: cuDNN is not there (``is_available()`` False,
``version()`` None); the flags keep PyTorch's defaults and can be set."""

from __future__ import annotations

from ._flags import _as_flag_module, _flags_context

enabled = True
benchmark = False
benchmark_limit = None  # (PyTorch reads it from cuDNN: None without it)
deterministic = False
allow_tf32 = True
_BOOL_FLAGS = {
    "enabled": "set_enabled_cudnn",
    "benchmark": "set_benchmark_cudnn",
    "deterministic": "set_deterministic_cudnn",
    "allow_tf32": "set_allow_tf32_cublas",  # (PyTorch's text names cuBLAS here)
}


def is_available() -> bool:
    """Whether cuDNN is available: never in numtorch."""
    return False


def version():
    """cuDNN's version: None, as there is no cuDNN."""
    return None


def is_acceptable(tensor) -> bool:
    """Whether cuDNN would take ``tensor``: never (no CUDA tensors)."""
    return False


_set = _flags_context(
    __name__,
    ("enabled", "benchmark", "deterministic", "allow_tf32"),
    "Set the cuDNN flags for the block and restore them after it.",
)


def flags(
    enabled=False,
    benchmark=False,
    benchmark_limit=10,
    deterministic=False,
    allow_tf32=True,
    fp32_precision="none",
    depthwise_kernel="auto",
):
    """Set the cuDNN flags for a ``with`` block (PyTorch's defaults: ``enabled=False``),
    restoring them after it. ``benchmark_limit`` is ignored without cuDNN."""
    return _set(
        enabled=enabled, benchmark=benchmark, deterministic=deterministic, allow_tf32=allow_tf32
    )


_as_flag_module(__name__)
