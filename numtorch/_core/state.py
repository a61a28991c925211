"""Thread-local state: grad mode, inference mode, and the transform stack."""

from __future__ import annotations

import threading


class _State(threading.local):
    def __init__(self):
        self.grad_enabled = True
        self.inference = False
        # Active transform interpreters, innermost last; interpreter.level == index + 1.
        self.stack: list = []
        # Random ops lift to the innermost vmap below this level (set while a vmap level
        # runs a random op's rule, so that its lower levels batch the draw too).
        self.random_ceiling = 1 << 30


state = _State()


def is_grad_enabled() -> bool:
    return state.grad_enabled


def is_inference_mode_enabled() -> bool:
    return state.inference
