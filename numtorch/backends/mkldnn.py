"""``torch.backends.mkldnn``: numtorch has no oneDNN, so ``is_available()`` is False; the
flags keep PyTorch's defaults and can be set."""

from __future__ import annotations

from ._flags import _as_flag_module, _flags_context

enabled = True
deterministic = False
_BOOL_FLAGS = {"enabled": "set_enabled_mkldnn", "deterministic": "set_deterministic_mkldnn"}


def is_available() -> bool:
    """Whether numtorch is built with oneDNN (MKL-DNN): it is not."""
    return False


_set = _flags_context(
    __name__,
    ("enabled", "deterministic"),
    "Set the oneDNN flags for the block and restore them after it.",
)


def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    """Set the oneDNN flags for a ``with`` block (PyTorch's defaults: ``enabled=False``),
    restoring them after it."""
    return _set(enabled=enabled, deterministic=deterministic)


_as_flag_module(__name__)
