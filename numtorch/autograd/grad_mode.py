"""Grad-mode context managers, usable as decorators too (thread-local)."""

from __future__ import annotations

import functools
import inspect

from .._core.state import is_grad_enabled, state
from .._core.tensor import inference_entered


class _Mode:
    """Base: a context manager that is also a decorator."""

    def __call__(self, fn):
        if inspect.isclass(fn):
            raise TypeError("grad-mode decorators do not apply to classes")
        if inspect.isgeneratorfunction(fn):

            @functools.wraps(fn)
            def gen(*args, **kwargs):
                with self.clone():
                    yield from fn(*args, **kwargs)

            return gen

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper

    def clone(self):
        return type(self)()


class no_grad(_Mode):
    """Disable gradient recording."""

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = state.grad_enabled
        state.grad_enabled = False

    def __exit__(self, *exc):
        state.grad_enabled = self.prev


class enable_grad(_Mode):
    """Enable gradient recording."""

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = state.grad_enabled
        state.grad_enabled = True

    def __exit__(self, *exc):
        state.grad_enabled = self.prev


class set_grad_enabled(_Mode):
    """Set grad mode on or off; takes effect immediately, or for a with-block."""

    def __init__(self, mode: bool):
        self.prev = state.grad_enabled
        self.mode = bool(mode)
        state.grad_enabled = self.mode

    def __enter__(self):
        state.grad_enabled = self.mode

    def __exit__(self, *exc):
        state.grad_enabled = self.prev

    def clone(self):
        return set_grad_enabled(self.mode)

    def __call__(self, fn):
        state.grad_enabled = self.prev  # as a decorator it must not change the mode now
        return super().__call__(fn)


class inference_mode(_Mode):
    """no_grad, and the tensors made inside are inference tensors (``Tensor.is_inference``):
    no version counter, no in-place writes or saving for backward outside the mode."""

    def __init__(self, mode: bool = True):
        self.mode = mode
        self.prev = (state.grad_enabled, state.inference)

    def __enter__(self):
        self.prev = (state.grad_enabled, state.inference)
        if self.mode:
            state.grad_enabled = False
            state.inference = True
            inference_entered(True)

    def __exit__(self, *exc):
        state.grad_enabled, state.inference = self.prev
        if self.mode:
            inference_entered(False)

    def clone(self):
        return inference_mode(self.mode)

    def __call__(self, fn=None):
        if isinstance(fn, bool):
            return inference_mode(fn)
        return super().__call__(fn)


__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled"]
