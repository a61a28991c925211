"""Intra-op parallelism for large NumPy kernels on the CPU. NumPy releases the GIL inside its
loops, so a kernel cut into slabs along one axis runs on ``get_num_threads()`` threads, as
PyTorch's CPU kernels do: the caller computes the first slab and worker threads the others.
Every slab is computed by the same loop as the whole, so results do not depend on the
thread count. Small kernels, kernels called from a worker, and processes limited to one
thread run in the caller alone."""

from __future__ import annotations

import contextvars
import math
import os
import queue
import threading

import numpy as np

# Work (elements times the passes a kernel makes over them, a pass being about a multiply's
# cost) below which one thread is faster: waking a worker costs 40–100 µs on a virtual
# machine, a pass over 2**19 float64 elements about 250 µs.
WORK = 1 << 19
MIN_ELEMENTS = WORK // 8  # (no kernel weighs more than 8 passes: a cheap first test)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (no affinity on this platform)
        return os.cpu_count() or 1


def _default_threads() -> int:
    """The cores this process may run on, or fewer where OpenMP's count in the environment
    says so (PyTorch's default)."""
    first = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    cores = _cores()
    return min(int(first), cores) if first.isdigit() and int(first) > 0 else cores


_threads = [_default_threads()]
_workers: list = []
_local = threading.local()


def threads() -> int:
    """The number of threads a kernel may use."""
    return _threads[0]


def set_threads(n: int) -> None:
    """Let kernels use ``n`` threads (``torch.set_num_threads``)."""
    _threads[0] = n


def _work(inbox: queue.SimpleQueue) -> None:
    _local.worker = True
    while True:
        job, done = inbox.get()
        try:
            job()
        except BaseException as e:  # handed to the caller, which raises it
            done.put(e)
        else:
            done.put(None)


def _worker(i: int) -> queue.SimpleQueue:
    while len(_workers) <= i:
        inbox = queue.SimpleQueue()
        threading.Thread(target=_work, args=(inbox,), daemon=True, name="numtorch-intraop").start()
        _workers.append(inbox)
    return _workers[i]


def _forget_workers() -> None:  # a forked child has none of its parent's threads
    _workers.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers)


def slabs(elements: int, extent: int, passes: int = 1) -> int:
    """How many slabs a kernel making ``passes`` passes over ``elements`` elements, cut along
    an axis of length ``extent``, is worth running as (1: in the caller alone)."""
    n = _threads[0]
    work = elements * passes
    if n < 2 or work < WORK or getattr(_local, "worker", False):
        return 1
    return max(1, min(n, extent, work // (WORK // 2)))


def run(body, n: int) -> None:
    """``body(i, n)`` for i in range(n): slab 0 in the caller, the others on workers in the
    caller's context (NumPy's error state is a context variable); the first error raised by
    any slab is raised here after all of them finished."""
    done: queue.SimpleQueue = queue.SimpleQueue()
    for i in range(1, n):
        ctx = contextvars.copy_context()
        _worker(i - 1).put(((lambda i=i, ctx=ctx: ctx.run(body, i, n)), done))
    err = None
    try:
        body(0, n)
    except BaseException as e:
        err = e
    for _ in range(1, n):
        e = done.get()
        err = err or e
    if err is not None:
        raise err


def bounds(i: int, n: int, extent: int) -> slice:
    """The i-th of n near-equal slices of range(extent)."""
    return slice(extent * i // n, extent * (i + 1) // n)


def _at(axis: int, s: slice) -> tuple:
    """The index of slice ``s`` along ``axis``."""
    return (slice(None),) * axis + (s,)


def _leading(a, ndim: int, s: slice):
    """The slab of operand ``a`` (broadcast to ``ndim`` dims) for slice ``s`` of the leading
    axis."""
    if type(a) is not np.ndarray or a.ndim < ndim or a.shape[0] == 1:
        return a
    return a[s]


def large(a: np.ndarray, b=None) -> bool:
    """Whether an elementwise kernel of ``a`` and ``b`` (an array, a number or None) may be
    large enough to cut (a cheap bound of its size, for the hot path)."""
    n = a.size
    if type(b) is np.ndarray and b.shape != a.shape:
        n *= b.size
    return n >= MIN_ELEMENTS


def ufunc(uf: np.ufunc, *args, passes: int = 1):
    """``uf(*args)`` (operands arrays or numbers; a ufunc as costly as ``passes``
    multiplies), cut along the leading axis of the result when large and its operands are
    C-contiguous, into a C-contiguous result as the ufunc would make for them."""
    arrays = [a for a in args if type(a) is np.ndarray]
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    n = slabs(math.prod(shape), shape[0], passes) if shape else 1
    if n == 1 or not all(a.flags.c_contiguous for a in arrays):
        return uf(*args)
    dtype = uf(*(a[(0,) * a.ndim] if type(a) is np.ndarray else a for a in args)).dtype
    out = np.empty(shape, dtype)

    def body(i: int, n: int) -> None:
        s = bounds(i, n, shape[0])
        uf(*(_leading(a, len(shape), s) for a in args), out=out[s])

    run(body, n)
    return out


def rows(body, x: np.ndarray, out: np.ndarray, keep: int, passes: int) -> np.ndarray:
    """``body(x_slab, out_slab)`` over slabs of ``x`` and ``out`` (of one shape) cut along an
    axis other than ``keep``, the axis ``body`` works along (``passes``: its cost in
    multiplies per element); ``out``."""
    axis = max(range(x.ndim), key=lambda a: -1 if a == keep else x.shape[a], default=None)
    n = 1 if axis is None or axis == keep else slabs(x.size, x.shape[axis], passes)
    if n == 1:
        body(x, out)
        return out

    def part(i: int, n: int) -> None:
        s = _at(axis, bounds(i, n, x.shape[axis]))
        body(x[s], out[s])

    run(part, n)
    return out


def sum(x: np.ndarray, axes: tuple, keepdims: bool, dtype=None):  # noqa: A001
    """``x.sum(axis=axes, keepdims=keepdims, dtype=dtype)``, cut along the longest axis that
    is not reduced when large (floats: the result keeps their dtype or ``dtype``)."""
    kept = [a for a in range(x.ndim) if a not in axes]
    axis = max(kept, key=lambda a: x.shape[a], default=None)
    n = 1 if axis is None else slabs(x.size, x.shape[axis])
    if n == 1 or x.dtype.kind not in "fc":
        return x.sum(axis=axes, keepdims=keepdims, dtype=dtype)
    at = axis if keepdims else kept.index(axis)
    shape = [1 if a in axes else x.shape[a] for a in range(x.ndim) if keepdims or a in kept]
    out = np.empty(shape, dtype or x.dtype)

    def body(i: int, n: int) -> None:
        s = bounds(i, n, x.shape[axis])
        x[_at(axis, s)].sum(axis=axes, keepdims=keepdims, dtype=dtype, out=out[_at(at, s)])

    run(body, n)
    return out
