"""``fork``/``wait``: TorchScript's tasks, which run at once in numtorch (as PyTorch runs
them when not scripted), and the ``Future`` they return."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._deprecation import warn_deprecated

__all__ = ["Future", "fork", "wait"]

_UNSET = object()


class Future:
    """The result of a task (torch.futures.Future): done, with a value or an exception."""

    def __init__(self) -> None:
        self._value: Any = _UNSET
        self._error: BaseException | None = None
        self._callbacks: list = []

    def done(self) -> bool:
        return self._value is not _UNSET or self._error is not None

    def wait(self) -> Any:
        """The value, or the task's exception raised again."""
        if self._error is not None:
            raise self._error
        return self._value

    value = wait

    def set_result(self, result: Any) -> None:
        self._value = result
        self._run_callbacks()

    def set_exception(self, result: BaseException) -> None:
        self._error = result
        self._run_callbacks()

    def then(self, callback: Callable) -> Future:
        """A Future of ``callback(self)``, run once this one is done."""
        out = Future()

        def chain(fut):
            try:
                out.set_result(callback(fut))
            except Exception as e:  # the chained future carries it, as PyTorch's does
                out.set_exception(e)

        self.add_done_callback(chain)
        return out

    def add_done_callback(self, callback: Callable) -> None:
        if self.done():
            callback(self)
        else:
            self._callbacks.append(callback)

    def _run_callbacks(self) -> None:
        callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)


def fork(func: Callable, *args, **kwargs) -> Future:
    """Run ``func(*args, **kwargs)`` now; its result in a Future."""
    warn_deprecated("fork")
    fut = Future()
    fut.set_result(func(*args, **kwargs))  # (an exception propagates here, as in PyTorch)
    return fut


def wait(future: Future) -> Any:
    """The value of a forked task."""
    warn_deprecated("wait")
    return future.wait()
