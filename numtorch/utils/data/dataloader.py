"""DataLoader (torch.utils.data.dataloader): batches from a dataset, in the main thread or
in worker threads.

Workers (``num_workers > 0``) are threads: each has its own queue of batch indices and of
results, batches come back in the sampler's order, a worker's exception is raised in the
main thread, and waiting for a batch polls the worker so that a dead worker or a
``timeout`` ends in an error, never a hang. As in PyTorch, each worker of an iterable
dataset streams its own copy of the dataset (see ``get_worker_info``). Threads share
numtorch's default generator: random draws inside a dataset are not tied to one worker, so
their order across workers is not reproducible (``WorkerInfo.seed`` is PyTorch's seed for
the worker, for datasets that seed a generator of their own). ``multiprocessing_context``
is accepted and unused.
"""

from __future__ import annotations

import copy
import itertools
import math
import os
import queue
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..._core.device import is_cuda_available
from ...ops.creation import Generator
from ...ops.random import randint
from ._collate import default_collate, default_convert
from ._utils.pin_memory import pin_memory
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler


@dataclass(frozen=True)
class WorkerInfo:
    """What a worker knows about itself: its id, the number of workers, its seed and its
    copy of the dataset."""

    id: int
    num_workers: int
    seed: int
    dataset: Dataset
    worker_method: str = "thread"


_local = threading.local()


def get_worker_info() -> WorkerInfo | None:
    """The current worker's WorkerInfo; None outside a DataLoader worker."""
    return getattr(_local, "info", None)


class _InfiniteConstantSampler(Sampler):
    """None forever: the index sampler of an iterable dataset."""

    def __iter__(self) -> Iterator[None]:
        return itertools.repeat(None)


# ------------------------------------------------------------------ fetching
def _map_fetcher(dataset, auto_collation: bool, collate_fn: Callable, drop_last: bool):
    getitems = getattr(dataset, "__getitems__", None) if auto_collation else None

    def fetch(index):
        if not auto_collation:
            return collate_fn(dataset[index])
        return collate_fn(getitems(index) if getitems else [dataset[i] for i in index])

    return fetch


def _iterable_fetcher(dataset, auto_collation: bool, collate_fn: Callable, drop_last: bool):
    stream = iter(dataset)
    ended = False

    def fetch(index):
        nonlocal ended
        if ended:
            raise StopIteration
        if not auto_collation:
            return collate_fn(next(stream))
        data = list(itertools.islice(stream, len(index)))
        ended = len(data) < len(index)
        if not data or (drop_last and ended):
            raise StopIteration
        return collate_fn(data)

    return fetch


_T_co = TypeVar("_T_co", covariant=True)
_T = TypeVar("_T")
_collate_fn_t = Callable[[list[_T]], Any]  # PyTorch's annotations of DataLoader's hooks
_worker_init_fn_t = Callable[[int], None]


class DataLoader(Generic[_T_co]):
    """Iterates over a dataset in batches: the samples a sampler picks, merged by
    ``collate_fn`` (``default_collate`` when batching, ``default_convert`` when
    ``batch_size=None``)."""

    _initialized = False

    def __init__(
        self,
        dataset: Dataset,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | Iterable | None = None,
        batch_sampler: Sampler | Iterable | None = None,
        num_workers: int = 0,
        collate_fn: Callable | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context=None,
        generator: Generator | None = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; "
                "use num_workers=0 to disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing.let "
                "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if multiprocessing_context is not None and num_workers == 0:
            raise ValueError(
                "multiprocessing_context can only be used with multi-process loading "
                f"(num_workers > 0), but got num_workers={num_workers}"
            )

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in {False, None}:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, "
                    f"but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, "
                    f"but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler "
                    f"option, but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive "
                "with drop_last"
            )
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.collate_fn = collate_fn
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self._iterator = None
        self._len_reported = None  # len(self) of an iterable dataset, for the overrun warning
        self._initialized = True
        self.check_worker_number_rationality()

    def __setattr__(self, attr: str, val) -> None:
        frozen = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset")
        if self._initialized and attr in (*frozen, "persistent_workers"):
            raise ValueError(
                f"{attr} attribute should not be set after {type(self).__name__} is initialized"
            )
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> _BaseIter:
        if self.num_workers == 0:
            return _LoaderIter(self)
        if not self.persistent_workers:
            return _ThreadedIter(self)
        if self._iterator is None or self._iterator._stop.is_set():  # none yet, or failed
            self._iterator = _ThreadedIter(self)
        else:
            self._iterator._reset()
        return self._iterator

    def __len__(self) -> int:
        if not self._iterable:
            return len(self._index_sampler)
        length = self._len_reported = len(self.dataset)
        if self.batch_size is not None:
            length = (
                length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            )
        return length

    def check_worker_number_rationality(self) -> None:
        """Warn when more workers are asked for than there are CPUs to run them."""
        if not self.num_workers:
            return
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        if cpus is None or self.num_workers > cpus:
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total. "
                f"Our suggested max number of worker in current system is {cpus}, which is "
                "smaller than what this DataLoader is going to create. Please be aware that "
                "excessive worker creation might get DataLoader running slow or even freeze, "
                "lower the worker number to avoid potential slowness/freeze if necessary.",
                stacklevel=3,
            )


# ------------------------------------------------------------------ iterators
class _BaseIter:
    """One pass over a DataLoader: the sampler's indices fetched and collated."""

    def __init__(self, loader: DataLoader) -> None:
        if loader.pin_memory and not is_cuda_available():
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, then device "
                "pinned memory won't be used.",
                stacklevel=3,
            )
        self._loader = loader
        self._pin = loader.pin_memory and is_cuda_available()
        make = _iterable_fetcher if loader._iterable else _map_fetcher
        # Worker threads get this function: it must not hold the loader (nor so the iterator).
        auto, collate_fn, drop_last = loader._auto_collation, loader.collate_fn, loader.drop_last
        self._make_fetcher = lambda dataset: make(dataset, auto, collate_fn, drop_last)
        self._start()

    def _start(self) -> None:
        loader = self._loader
        self._sampler_iter = iter(loader._index_sampler)
        self._base_seed = int(randint(0, 2**62, (), generator=loader.generator).item())
        self._num_yielded = 0

    def __iter__(self) -> _BaseIter:
        return self

    def __len__(self) -> int:
        return len(self._loader._index_sampler)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self) -> Any:
        data = self._next_data()
        if self._pin:
            data = pin_memory(data)
        self._num_yielded += 1
        reported = self._loader._len_reported
        if self._loader._iterable and reported is not None and self._num_yielded > reported:
            warnings.warn(
                f"Length of IterableDataset {self._loader.dataset} was reported to be "
                f"{reported}(when accessing len(dataloader)), but {self._num_yielded} samples "
                "have been fetched. ",
                stacklevel=2,
            )
        return data


class _LoaderIter(_BaseIter):
    """A pass in the main thread (``num_workers=0``)."""

    def __init__(self, loader: DataLoader) -> None:
        if loader.timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        super().__init__(loader)
        self._fetch = self._make_fetcher(loader.dataset)

    def _next_data(self):
        return self._fetch(next(self._sampler_iter))


class _Failure:
    """An exception raised in a worker, carried to the main thread."""

    def __init__(self, error: BaseException, worker: int) -> None:
        self.error, self.worker = error, worker


_EXHAUSTED = object()  # a worker's iterable dataset has ended
_RESET = object()  # start a new epoch (persistent workers)
_POLL_S = 0.1


def _worker_loop(
    info: WorkerInfo,
    init_fn: Callable | None,
    make_fetcher: Callable,
    tasks: queue.Queue,
    results: queue.Queue,
    stop: threading.Event,
) -> None:
    """A worker thread: fetch each batch index it is sent until told to stop. It holds no
    reference to its iterator, so an abandoned iterator is collected and stops it."""
    _local.info = info
    wid, dataset = info.id, info.dataset
    failure, fetch = None, None
    try:
        if init_fn is not None:
            init_fn(wid)
        fetch = make_fetcher(dataset)
    except Exception as e:  # noqa: BLE001 - raised in the main thread with the first batch
        failure = _Failure(e, wid)
    while not stop.is_set():
        try:
            task = tasks.get(timeout=_POLL_S)
        except queue.Empty:
            continue
        if task is None:
            return
        if task is _RESET:
            if failure is None:
                fetch = make_fetcher(dataset)
            continue
        tid, index = task
        if failure is not None:
            results.put((tid, failure))
            continue
        try:
            data = fetch(index)
        except StopIteration:
            data = _EXHAUSTED
        except Exception as e:  # noqa: BLE001 - raised in the main thread
            data = _Failure(e, wid)
        results.put((tid, data))


def _worker_copy(dataset: IterableDataset) -> IterableDataset:
    try:
        return copy.deepcopy(dataset)
    except Exception as e:
        raise TypeError(
            "DataLoader worker threads each stream their own copy of an IterableDataset, and "
            f"this one cannot be copied (copy.deepcopy raised {type(e).__name__}: {e}); make it "
            "copyable or use num_workers=0"
        ) from e


class _ThreadedIter(_BaseIter):
    """One pass (or, with persistent workers, every pass) over a DataLoader with worker
    threads; up to ``prefetch_factor`` batches in flight per worker."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        n = loader.num_workers
        self._stop = threading.Event()
        self._tasks = [queue.Queue() for _ in range(n)]
        self._results = [queue.Queue() for _ in range(n)]
        # An iterable dataset is streamed by each worker from its own copy, as in PyTorch.
        copies = [
            _worker_copy(loader.dataset) if loader._iterable else loader.dataset for _ in range(n)
        ]
        self._workers = [
            threading.Thread(
                target=_worker_loop,
                args=(
                    WorkerInfo(w, n, self._base_seed + w, copies[w]),
                    loader.worker_init_fn,
                    self._make_fetcher,
                    self._tasks[w],
                    self._results[w],
                    self._stop,
                ),
                name=f"DataLoader worker {w}",
                daemon=True,
            )
            for w in range(n)
        ]
        for t in self._workers:
            t.start()
        self._begin_epoch()

    def _begin_epoch(self) -> None:
        n = self._loader.num_workers
        self._active = [True] * n
        self._owner: dict[int, int] = {}  # task id -> worker
        self._sent = self._received = self._next_worker = 0
        for _ in range(self._loader.prefetch_factor * n):
            self._send()

    def _reset(self) -> None:
        """A new epoch on the same workers: outstanding batches dropped, streams restarted."""
        while self._received < self._sent:
            self._receive(self._owner.pop(self._received))
            self._received += 1
        self._start()
        for q in self._tasks:
            q.put(_RESET)
        self._begin_epoch()

    def _send(self) -> None:
        """The sampler's next index to the next active worker, if any."""
        n = self._loader.num_workers
        workers = [(self._next_worker + k) % n for k in range(n)]
        worker = next((w for w in workers if self._active[w]), None)
        if worker is None:
            return
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        self._next_worker = (worker + 1) % n
        self._tasks[worker].put((self._sent, index))
        self._owner[self._sent] = worker
        self._sent += 1

    def _receive(self, worker: int):
        timeout = self._loader.timeout
        waited = 0.0
        while True:
            try:
                return self._results[worker].get(timeout=_POLL_S)[1]
            except queue.Empty:
                waited += _POLL_S
            if timeout and waited >= timeout:
                self._shutdown()
                raise RuntimeError(f"DataLoader timed out after {timeout} seconds")
            if not self._workers[worker].is_alive():
                self._shutdown()
                raise RuntimeError(f"DataLoader worker (thread {worker}) exited unexpectedly")

    def _next_data(self):
        while self._received < self._sent:
            worker = self._owner.pop(self._received)
            data = self._receive(worker)
            self._received += 1
            if data is _EXHAUSTED:
                self._active[worker] = False
                self._send()
                continue
            if isinstance(data, _Failure):
                self._shutdown()
                data.error.add_note(f"Caught in DataLoader worker {data.worker}.")
                raise data.error
            self._send()
            return data
        if not self._loader.persistent_workers:
            self._shutdown()
        raise StopIteration

    def _shutdown(self) -> None:
        if getattr(self, "_stop", None) is not None and not self._stop.is_set():
            self._stop.set()
            for q in self._tasks:
                q.put(None)

    def __del__(self) -> None:
        self._shutdown()
