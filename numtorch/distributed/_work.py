"""Work: a pending operation on MPI's non-blocking requests, waited on under a timeout.

MPI has no timeout of its own, so every wait polls ``Testall`` until the process group's
deadline; a peer that died or never arrives makes the wait raise instead of hang.
"""

from __future__ import annotations

import os
import time
from datetime import timedelta

from . import _mpi
from ._types import DistBackendError

_SPIN_SECONDS = 0.05  # yielding spin before backing off into sleeps
_BACKOFF = 0.02  # a sleep is at most this share of the time waited so far
_MAX_SLEEP = 1e-3


def poll(requests, seconds: float, what: str, statuses=None) -> None:
    """Drive MPI's progress on ``requests`` until all complete or ``seconds`` pass.

    For the first milliseconds it tests in a loop that yields the core after every test
    (``sched_yield``): a partner on its own core is answered within microseconds, and a
    partner that shares this core (more ranks than cores, or other work on the machine)
    gets the core instead of losing it to a hot spin. A longer wait sleeps between tests,
    each sleep a small share of the time waited so far, so a late partner costs at most
    that share in latency and the waiting rank takes no CPU meanwhile."""
    MPI = _mpi.MPI()
    if not requests:
        return
    test = MPI.Request.Testall
    if test(requests, statuses):
        return
    start = time.monotonic()
    deadline = start + seconds
    while not test(requests, statuses):
        now = time.monotonic()
        if now > deadline:
            ms = int(seconds * 1000)
            raise DistBackendError(
                f"Timed out waiting {ms}ms for {what} to complete (rank "
                f"{MPI.COMM_WORLD.Get_rank()}): a peer rank died, hung or never called it"
            )
        waited = now - start
        if waited < _SPIN_SECONDS:
            os.sched_yield()
        else:
            time.sleep(min(_MAX_SLEEP, _BACKOFF * waited))


def _seconds(timeout) -> float:
    return timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)


class Future:
    """The value of a Work (PyTorch's torch.futures.Future, the parts DDP's hooks use).
    ``then`` chains lazily: the callback runs when the chained future is waited on or seen
    completed, so a communication hook's Work keeps running meanwhile."""

    def __init__(self, work: Work) -> None:
        self._work = work

    def wait(self):
        self._work.wait()
        return self._work.result()

    value = wait

    def done(self) -> bool:
        return self._work.is_completed()

    def then(self, callback) -> Future:
        return Future(_Then(self, callback))


class Work:
    """A collective or point-to-point operation started with ``async_op=True``."""

    _source = -1

    def __init__(self, requests, *, timeout, what: str, finish=None, result=None) -> None:
        self._requests = list(requests)
        self._timeout = timeout
        self._what = what
        self._finish = finish
        self._result = [] if result is None else result
        self._done = False
        self._exception = None
        MPI = _mpi.MPI()
        self._statuses = [MPI.Status() for _ in self._requests]

    def _complete(self) -> None:
        self._done = True
        if self._finish is not None:
            self._finish()
            self._finish = None

    def wait(self, timeout=None) -> bool:
        if not self._done:
            seconds = _seconds(self._timeout if timeout is None else timeout)
            try:
                poll(self._requests, seconds, self._what, self._statuses)
            except DistBackendError as e:
                self._exception = e
                raise
            self._complete()
        return True

    synchronize = wait

    def is_completed(self) -> bool:
        if not self._done and _mpi.MPI().Request.Testall(self._requests, self._statuses):
            self._complete()
        return self._done

    def is_success(self) -> bool:
        return self.is_completed() and self._exception is None

    def exception(self):
        return self._exception

    def result(self) -> list:
        self.wait()
        return self._result

    def source_rank(self) -> int:
        self.wait()
        return self._source

    def get_future(self) -> Future:
        return Future(self)

    def block_current_stream(self) -> None:
        self.wait()


class _Done(Work):
    """A finished Work holding a value."""

    def __init__(self, value) -> None:
        super().__init__((), timeout=0, what="", result=value)
        self._done = True


class _Then(Work):
    """``callback(parent)`` once the parent future has completed."""

    def __init__(self, parent: Future, callback) -> None:
        super().__init__((), timeout=0, what="then")
        self._parent, self._callback = parent, callback

    def _run(self) -> None:
        self._result = self._callback(self._parent)
        self._done = True

    def wait(self, timeout=None) -> bool:
        if not self._done:
            self._parent.wait()
            self._run()
        return True

    def is_completed(self) -> bool:
        if not self._done and self._parent.done():
            self._run()
        return self._done
