"""Thread-local state: grad mode, inference mode, and the transform stack."""

from __future__ import annotations

import threading


class _State(threading.local):
    def __init__(self):
        self.grad_enabled = True
        self.inference = False
        # Active transform interpreters, innermost last; interpreter.level == index + 1.
        self.stack: list = []


state = _State()


def is_grad_enabled() -> bool:
    return state.grad_enabled


def is_inference_mode_enabled() -> bool:
    return state.inference
