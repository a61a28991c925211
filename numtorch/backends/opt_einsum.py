"""``torch.backends.opt_einsum``: whether the opt_einsum package is installed, and the
path-finding ``enabled``/``strategy`` settings for einsum (numtorch's einsum contracts
from left to right, PyTorch's order without opt_einsum, whatever they say)."""

from __future__ import annotations

from contextlib import contextmanager
from functools import lru_cache


@lru_cache
def is_available() -> bool:
    """Whether the opt_einsum package can be imported."""
    return get_opt_einsum() is not None


def get_opt_einsum():
    """The opt_einsum package, or None where it is not installed."""
    try:
        import opt_einsum
    except ImportError:
        return None
    return opt_einsum


enabled = is_available()
strategy = "auto" if enabled else None
_STRATEGIES = ("auto", "greedy", "optimal")


def _check_enabled(value) -> None:
    if value and not is_available():
        raise ValueError(
            f"opt_einsum is not available, so setting `enabled` to {value} will not reap "
            "the benefits of calculating an optimal path for einsum. torch.einsum will "
            "fall back to contracting from left to right. To enable this optimal path "
            "calculation, please install opt-einsum."
        )


def _check_strategy(value, now_enabled) -> None:
    if not is_available():
        raise ValueError(
            f"opt_einsum is not available, so setting `strategy` to {value} will not be "
            "meaningful. torch.einsum will bypass path calculation and simply contract from "
            "left to right. Please install opt_einsum or unset `strategy`."
        )
    if not now_enabled:
        raise ValueError(
            f"opt_einsum is not enabled, so setting a `strategy` to {value} will not be "
            "meaningful. torch.einsum will bypass path calculation and simply contract from "
            "left to right. Please set `enabled` to `True` as well or unset `strategy`."
        )
    if value not in _STRATEGIES:
        raise ValueError(
            f"`strategy` must be one of the following: [auto, greedy, optimal] but is {value}"
        )


@contextmanager
def flags(enabled=None, strategy=None):
    """Set ``enabled``/``strategy`` (checked: opt_einsum must be installed, and enabled for
    a strategy) for a ``with`` block, restoring them after it."""
    module = globals()
    saved = (module["enabled"], module["strategy"])
    if enabled is not None:
        _check_enabled(enabled)
        module["enabled"] = enabled
    try:
        if strategy is not None:
            _check_strategy(strategy, module["enabled"])
            module["strategy"] = strategy
        yield
    finally:
        module["enabled"], module["strategy"] = saved
