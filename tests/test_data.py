"""utils.data against torch.utils.data: datasets, samplers, default_collate/convert and the
DataLoader on the same data; randomness by its properties (numtorch and PyTorch draw from
different generators); worker threads against single-threaded loading."""

from __future__ import annotations

import collections
import gc
import itertools
import threading
import time
import warnings

import numpy as np
import pytest
from twolibs import assert_close, assert_same, assert_same_error, run_both

import numtorch as nt

Point = collections.namedtuple("Point", "x y")


class Opaque:
    """A sample type default_collate does not know."""


def _data(lib):
    x = lib.tensor(np.arange(14.0).reshape(7, 2))
    y = lib.tensor(np.arange(7) % 3)
    return lib.utils.data.TensorDataset(x, y)


class Squares:
    """A plain map-style dataset of dict samples (no Dataset base, as users write them)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"i": i, "sq": float(i * i), "name": f"s{i}", "arr": np.full(2, i, np.float32)}


def _stream(lib, n):
    class Stream(lib.utils.data.IterableDataset):
        def __iter__(self):
            info = lib.utils.data.get_worker_info()
            start, step = (0, 1) if info is None else (info.id, info.num_workers)
            return iter(range(start, n, step))

        def __len__(self):
            return n

    return Stream()


# ------------------------------------------------------------------ collate
def _samples(lib):
    """One batch of each kind default_collate handles."""
    t = lambda a: lib.tensor(np.asarray(a))  # noqa: E731
    return {
        "tensors": [t([1.0, 2.0]), t([3.0, 4.0])],
        "int_tensors": [t([1, 2]), t([3, 4])],
        "scalar_tensors": [t(1.5), t(2.5)],
        "arrays": [np.ones((2, 2), np.float32), np.zeros((2, 2), np.float32)],
        "int_arrays": [np.arange(3), np.arange(3, 6)],
        "bool_arrays": [np.array([True, False]), np.array([False, False])],
        "np_scalars": [np.float32(1.5), np.float32(2.0)],
        "np_ints": [np.int64(3), np.int64(4)],
        "np_bools": [np.bool_(True), np.bool_(False)],
        "floats": [1.5, 2.0, -3.0],
        "ints": [1, 2, 3],
        "bools": [True, False],
        "strings": ["a", "bc"],
        "bytes": [b"a", b"b"],
        "dicts": [{"a": 1, "b": t([1.0])}, {"a": 2, "b": t([2.0])}],
        "ordered": [collections.OrderedDict(k=1.0), collections.OrderedDict(k=2.0)],
        "tuples": [(1, 2.0, "x"), (3, 4.0, "y")],
        "lists": [[1, t([1.0])], [2, t([2.0])]],
        "namedtuples": [Point(1, 2.0), Point(3, 4.0)],
        "nested": [{"p": Point(t([1]), [1.0, 2.0])}, {"p": Point(t([2]), [3.0, 4.0])}],
    }


@pytest.mark.parametrize("kind", list(_samples(nt)))
def test_default_collate_matches_torch(kind):
    ours, theirs = run_both(lambda lib: lib.utils.data.default_collate(_samples(lib)[kind]))
    assert type(ours).__name__ == type(theirs).__name__
    assert_same(lambda lib: lib.utils.data.default_collate(_samples(lib)[kind]))


@pytest.mark.parametrize(
    "kind", ["arrays", "np_scalars", "dicts", "tuples", "namedtuples", "lists"]
)
def test_default_convert_matches_torch(kind):
    assert_same(lambda lib: lib.utils.data.default_convert(_samples(lib)[kind]))
    assert_same(lambda lib: lib.utils.data.default_convert(_samples(lib)[kind][0]))


@pytest.mark.parametrize(
    "batch",
    [
        [[1, 2], [3]],  # sequences of unequal length
        [Opaque(), Opaque()],  # an unsupported type
        [np.array(["a"]), np.array(["b"])],  # arrays of strings
        [object(), object()],
    ],
    ids=["unequal", "opaque", "str_arrays", "object"],
)
def test_default_collate_errors_match_torch(batch):
    assert_same_error(lambda lib: lib.utils.data.default_collate(batch))


def test_default_collate_of_tensors_of_different_shapes():
    assert_same_error(lambda lib: lib.utils.data.default_collate([lib.zeros(2), lib.zeros(3)]))


# ------------------------------------------------------------------ datasets
def test_tensor_dataset():
    def prog(lib):
        ds = _data(lib)
        return len(ds), ds[2], ds[-1], ds[1:3]

    assert_same(prog)
    assert_same_error(lambda lib: lib.utils.data.TensorDataset(lib.zeros(3), lib.zeros(4)))


def test_subset_concat_stack_and_chain():
    def prog(lib):
        d = lib.utils.data
        ds = _data(lib)
        sub = d.Subset(ds, [5, 0, 3])
        cat = ds + sub  # Dataset.__add__: a ConcatDataset
        stack = d.StackDataset(ds, ds)
        named = d.StackDataset(a=ds, b=list(range(7)))
        chain = _stream(lib, 3) + _stream(lib, 2)  # IterableDataset.__add__: a ChainDataset
        return (
            len(sub),
            sub[1],
            sub[[0, 2]],
            sub.__getitems__([2, 1]),
            type(cat).__name__,
            len(cat),
            cat[7],
            cat[9],
            cat[-1],
            cat[-10],
            cat.cumulative_sizes,
            len(stack),
            stack[1],
            named[4],
            list(chain),
            len(chain),
            type(chain).__name__,
        )

    assert_same(prog)


@pytest.mark.parametrize(
    "prog",
    [
        lambda lib: lib.utils.data.ConcatDataset([]),
        lambda lib: lib.utils.data.ConcatDataset([_data(lib), _stream(lib, 2)]),
        lambda lib: lib.utils.data.ConcatDataset([_data(lib)])[-8],
        lambda lib: list(lib.utils.data.ChainDataset([_stream(lib, 2), _data(lib)])),
        lambda lib: lib.utils.data.StackDataset(),
        lambda lib: lib.utils.data.StackDataset(_data(lib), [1, 2]),
        lambda lib: lib.utils.data.StackDataset(_data(lib), b=_data(lib)),
        lambda lib: lib.utils.data.Dataset()[0],
        lambda lib: type("Stream", (lib.utils.data.IterableDataset,), {})(),
        lambda lib: type("Ds", (lib.utils.data.Dataset[int],), {})()[0],
    ],
    ids=[
        "concat_empty",
        "concat_iterable",
        "concat_index",
        "chain_map",
        "stack_none",
        "stack_sizes",
        "stack_both",
        "abstract",
        "abstract_iter",
        "generic",
    ],
)
def test_dataset_errors_match_torch(prog):
    assert_same_error(prog)


def test_subset_subclass_must_override_getitems_too():
    def prog(lib):
        class Mine(lib.utils.data.Subset):
            def __getitem__(self, idx):
                return 0

        return Mine(range(3), [0])

    assert_same_error(prog)


def test_random_split():
    nt.manual_seed(3)
    parts = nt.utils.data.random_split(range(10), [3, 7])
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    nt.manual_seed(3)
    again = nt.utils.data.random_split(range(10), [3, 7])
    assert [p.indices for p in again] == [p.indices for p in parts]
    g = nt.Generator().manual_seed(5)
    split = nt.utils.data.random_split(range(10), [5, 5], generator=g)
    same = nt.utils.data.random_split(range(10), [5, 5], generator=nt.Generator().manual_seed(5))
    assert [p.indices for p in split] == [p.indices for p in same]
    assert [list(p) for p in split] == [p.indices for p in split]  # Subset of a range


@pytest.mark.parametrize(
    "lengths", [[0.3, 0.7], [0.33, 0.33, 0.34], [0.1, 0.1, 0.8], [1.0, 0.0], [0.5, 0.5]]
)
def test_random_split_fractions_sizes_and_warnings(lengths):
    def prog(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            parts = lib.utils.data.random_split(range(11), lengths)
        indices = sorted(i for p in parts for i in p.indices)
        return [len(p) for p in parts], indices, [str(w.message) for w in caught]

    assert_same(prog)


@pytest.mark.parametrize("lengths", [[3, 3], [0.5, 0.6], [-0.5, 1.5], [1.2, -0.2]])
def test_random_split_errors_match_torch(lengths):
    assert_same_error(lambda lib: lib.utils.data.random_split(range(7), lengths))


# ------------------------------------------------------------------ samplers
@pytest.mark.parametrize(
    "n, size, drop_last", [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False)]
)
def test_batch_sampler_matches_torch(n, size, drop_last):
    def prog(lib):
        d = lib.utils.data
        s = d.BatchSampler(d.SequentialSampler(range(n)), size, drop_last)
        return list(s), len(s), list(d.BatchSampler(range(n), size, drop_last))

    assert_same(prog)


@pytest.mark.parametrize(
    "prog",
    [
        lambda lib: lib.utils.data.BatchSampler(range(3), 0, False),
        lambda lib: lib.utils.data.BatchSampler(range(3), 2.0, False),
        lambda lib: lib.utils.data.BatchSampler(range(3), True, False),
        lambda lib: lib.utils.data.BatchSampler(range(3), 2, 1),
        lambda lib: lib.utils.data.RandomSampler(range(3), replacement=1),
        lambda lib: lib.utils.data.RandomSampler(range(3), num_samples=0),
        lambda lib: lib.utils.data.RandomSampler([], num_samples=None),
        lambda lib: lib.utils.data.WeightedRandomSampler([1.0, 2.0], 0),
        lambda lib: lib.utils.data.WeightedRandomSampler([1.0, 2.0], 2, replacement=0),
        lambda lib: lib.utils.data.WeightedRandomSampler([[1.0, 2.0]], 2),
        lambda lib: list(lib.utils.data.WeightedRandomSampler([1.0, -2.0], 2)),
        lambda lib: list(lib.utils.data.WeightedRandomSampler([0.0, 0.0], 2)),
        lambda lib: list(lib.utils.data.WeightedRandomSampler([1.0, -2.0], 1)),
        lambda lib: list(lib.utils.data.WeightedRandomSampler([1.0, -2.0], 2, replacement=False)),
        lambda lib: list(lib.utils.data.WeightedRandomSampler([1.0, float("nan")], 2)),
        lambda lib: list(lib.utils.data.WeightedRandomSampler([1.0, float("inf")], 2)),
        lambda lib: list(lib.utils.data.WeightedRandomSampler([1.0, 2.0], 3, replacement=False)),
    ],
    ids=[
        "bs0",
        "bs_float",
        "bs_bool",
        "drop_last_int",
        "replacement",
        "num_samples",
        "empty",
        "w_num",
        "w_replacement",
        "w_2d",
        "w_negative",
        "w_zero",
        "w_negative_1",
        "w_negative_norepl",
        "w_nan",
        "w_inf",
        "w_too_many",
    ],
)
def test_sampler_errors_match_torch(prog):
    assert_same_error(prog)


def test_sequential_and_sampler_lengths():
    def prog(lib):
        d = lib.utils.data
        return (
            list(d.SequentialSampler(range(4))),
            len(d.RandomSampler(range(5))),
            len(d.RandomSampler(range(5), replacement=True, num_samples=12)),
            len(d.SubsetRandomSampler([4, 1, 7])),
            len(d.WeightedRandomSampler([1.0, 2.0], 9)),
            sorted(d.SubsetRandomSampler([4, 1, 7])),
        )

    assert_same(prog)


def test_random_sampler_is_a_seeded_permutation():
    d = nt.utils.data
    nt.manual_seed(0)
    a, b = list(d.RandomSampler(range(20))), list(d.RandomSampler(range(20)))
    assert sorted(a) == sorted(b) == list(range(20)) and a != b
    nt.manual_seed(0)
    assert list(d.RandomSampler(range(20))) == a  # the default generator, reseeded
    g1, g2 = nt.Generator().manual_seed(7), nt.Generator().manual_seed(7)
    assert list(d.RandomSampler(range(20), generator=g1)) == list(
        d.RandomSampler(range(20), generator=g2)
    )
    # More samples than items without replacement: whole permutations, then a part of one.
    draws = list(d.RandomSampler(range(4), num_samples=10))
    assert sorted(draws[:4]) == sorted(draws[4:8]) == [0, 1, 2, 3] and len(set(draws[8:])) == 2
    with_repl = list(d.RandomSampler(range(3), replacement=True, num_samples=300))
    assert len(with_repl) == 300 and set(with_repl) == {0, 1, 2}
    sub = list(d.SubsetRandomSampler([10, 20, 30, 40], generator=nt.Generator().manual_seed(1)))
    assert sorted(sub) == [10, 20, 30, 40]


def test_weighted_random_sampler_frequencies():
    w = np.array([0.1, 0.9, 0.4, 0.7, 3.0, 0.6])
    n = 20000
    draws = list(nt.utils.data.WeightedRandomSampler(w.tolist(), n, generator=nt.Generator()))
    counts = np.bincount(draws, minlength=len(w))
    p = w / w.sum()
    sigma = np.sqrt(n * p * (1 - p))
    assert np.all(np.abs(counts - n * p) < 5 * sigma), (counts, n * p)
    # Without replacement: distinct indices; the heaviest weight is almost always first.
    firsts = [
        list(nt.utils.data.WeightedRandomSampler([1.0, 100.0, 1.0], 3, replacement=False))
        for _ in range(50)
    ]
    assert all(sorted(f) == [0, 1, 2] for f in firsts)
    assert sum(f[0] == 1 for f in firsts) > 40
    nt.manual_seed(2)
    a = list(nt.utils.data.WeightedRandomSampler(w.tolist(), 10))
    nt.manual_seed(2)
    assert list(nt.utils.data.WeightedRandomSampler(w.tolist(), 10)) == a


# ------------------------------------------------------------------ DataLoader
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"batch_size": 3},
        {"batch_size": 3, "drop_last": True},
        {"batch_size": 7},
        {"batch_size": 10},
        {"batch_size": None},
        {"sampler": [6, 0, 3]},
        {"batch_size": 2, "sampler": [6, 0, 3]},
        {"batch_sampler": [[0, 1], [4], [2, 5, 6]]},
        {"batch_size": 2, "collate_fn": lambda b: len(b)},
        {"batch_size": 2, "pin_memory": False},
    ],
    ids=[
        "default",
        "bs3",
        "drop_last",
        "exact",
        "larger",
        "no_batching",
        "sampler",
        "sampler_bs",
        "batch_sampler",
        "collate_fn",
        "pin_memory",
    ],
)
def test_loader_matches_torch(kwargs):
    def prog(lib):
        loader = lib.utils.data.DataLoader(_data(lib), **kwargs)
        return len(loader), list(loader), list(loader)

    assert_same(prog)


@pytest.mark.parametrize("batch_size", [None, 1, 3])
def test_loader_over_dict_samples_matches_torch(batch_size):
    assert_same(lambda lib: list(lib.utils.data.DataLoader(Squares(5), batch_size=batch_size)))


@pytest.mark.parametrize(
    "kwargs", [{}, {"batch_size": 2}, {"batch_size": 2, "drop_last": True}, {"batch_size": None}]
)
def test_loader_over_iterable_dataset_matches_torch(kwargs):
    def prog(lib):
        loader = lib.utils.data.DataLoader(_stream(lib, 7), **kwargs)
        return len(loader), list(loader)

    assert_same(prog)


def test_loader_warns_when_an_iterable_dataset_outruns_its_length():
    def prog(lib):
        class Liar(lib.utils.data.IterableDataset):
            def __iter__(self):
                return iter(range(3))

            def __len__(self):
                return 2

        loader = lib.utils.data.DataLoader(Liar(), batch_size=None)
        len(loader)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = list(loader)
        return out, len(caught)

    assert_same(prog)


def test_loader_shuffle_is_seeded_and_reshuffles():
    ds = nt.utils.data.TensorDataset(nt.arange(10))
    order = lambda loader: [int(i) for (b,) in loader for i in b]  # noqa: E731
    nt.manual_seed(0)
    loader = nt.utils.data.DataLoader(ds, batch_size=4, shuffle=True)
    first, second = order(loader), order(loader)
    assert sorted(first) == sorted(second) == list(range(10)) and first != second
    assert [len(b[0]) for b in loader] == [4, 4, 2]
    nt.manual_seed(0)
    assert order(nt.utils.data.DataLoader(ds, batch_size=4, shuffle=True)) == first
    g = nt.Generator().manual_seed(9)
    by_g = order(nt.utils.data.DataLoader(ds, batch_size=4, shuffle=True, generator=g))
    g2 = nt.Generator().manual_seed(9)
    assert order(nt.utils.data.DataLoader(ds, batch_size=4, shuffle=True, generator=g2)) == by_g


@pytest.mark.parametrize(
    "kwargs",
    [
        {"batch_sampler": [[0]], "batch_size": 2},
        {"batch_sampler": [[0]], "shuffle": True},
        {"batch_sampler": [[0]], "sampler": [0]},
        {"batch_sampler": [[0]], "drop_last": True},
        {"sampler": [0], "shuffle": True},
        {"batch_size": None, "drop_last": True},
        {"num_workers": -1},
        {"timeout": -1},
        {"prefetch_factor": 2},
        {"persistent_workers": True},
        {"num_workers": 1, "prefetch_factor": -1},
        {"multiprocessing_context": "fork"},
        {"batch_size": 0},
    ],
    ids=[
        "bs_batch_size",
        "bs_shuffle",
        "bs_sampler",
        "bs_drop_last",
        "sampler_shuffle",
        "none_drop_last",
        "workers",
        "timeout",
        "prefetch",
        "persistent",
        "neg_prefetch",
        "context",
        "bs0",
    ],
)
def test_loader_option_errors_match_torch(kwargs):
    assert_same_error(lambda lib: lib.utils.data.DataLoader(_data(lib), **kwargs))


@pytest.mark.parametrize("kwargs", [{"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}])
def test_loader_iterable_dataset_errors_match_torch(kwargs):
    class Fixed(Opaque):
        def __repr__(self):
            return "Fixed"

    kwargs = {k: (Fixed() if k != "shuffle" else v) for k, v in kwargs.items()}
    assert_same_error(lambda lib: lib.utils.data.DataLoader(_stream(lib, 3), **kwargs))


def test_loader_attribute_errors_and_timeout_without_workers_match_torch():
    def reassign(lib):
        loader = lib.utils.data.DataLoader(_data(lib))
        loader.batch_size = 3

    assert_same_error(reassign)
    assert_same_error(lambda lib: iter(lib.utils.data.DataLoader(_data(lib), timeout=1)))


# ------------------------------------------------------------------ worker threads
@pytest.mark.parametrize(
    "kwargs", [{"batch_size": 2}, {"batch_size": None}, {"batch_size": 3, "drop_last": True}]
)
def test_workers_give_the_single_threaded_batches(kwargs):
    def batches(**extra):
        return list(nt.utils.data.DataLoader(Squares(9), **kwargs, **extra))

    ref = batches()
    for workers in (1, 2):
        assert_close(batches(num_workers=workers), ref)
        assert_close(batches(num_workers=workers, prefetch_factor=1), ref)


def test_workers_over_an_iterable_dataset_match_torch_order():
    # Each worker streams its own share; batches alternate between the workers, as in
    # PyTorch (computed here without starting PyTorch's worker processes).
    loader = nt.utils.data.DataLoader(_stream(nt, 9), batch_size=2, num_workers=2)
    assert [b.tolist() for b in loader] == [[0, 2], [1, 3], [4, 6], [5, 7], [8]]
    assert nt.utils.data.get_worker_info() is None


def test_worker_init_fn_info_and_errors():
    seen = []

    def init(wid):
        info = nt.utils.data.get_worker_info()
        seen.append((wid, info.id, info.num_workers, info.dataset is not None))

    list(nt.utils.data.DataLoader(Squares(4), num_workers=2, worker_init_fn=init))
    assert sorted(seen) == [(0, 0, 2, True), (1, 1, 2, True)]

    class Bad(nt.utils.data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            if i == 2:
                raise KeyError("boom")
            return i

    with pytest.raises(KeyError, match="boom"):
        list(nt.utils.data.DataLoader(Bad(), num_workers=2))
    persistent = nt.utils.data.DataLoader(Bad(), num_workers=2, persistent_workers=True)
    for _ in range(2):  # a failed epoch's workers are replaced by the next epoch's
        assert [int(b) for b in itertools.islice(persistent, 2)] == [0, 1]
        with pytest.raises(KeyError, match="boom"):
            list(persistent)

    def failing_init(wid):
        raise ValueError(f"init {wid}")

    with pytest.raises(ValueError, match="init"):
        list(nt.utils.data.DataLoader(Squares(4), num_workers=2, worker_init_fn=failing_init))


def test_worker_timeout_raises_instead_of_hanging():
    release = threading.Event()

    class Stuck(nt.utils.data.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            release.wait(10)
            return i

    start = time.perf_counter()
    try:
        with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.2 seconds"):
            list(nt.utils.data.DataLoader(Stuck(), num_workers=1, timeout=0.2))
        assert time.perf_counter() - start < 5
    finally:
        release.set()


def test_workers_need_a_copyable_iterable_dataset():
    class Uncopyable(nt.utils.data.IterableDataset):
        def __init__(self):
            self.lock = threading.Lock()

        def __iter__(self):
            return iter(range(3))

    with pytest.raises(TypeError, match="cannot be copied"):
        iter(nt.utils.data.DataLoader(Uncopyable(), num_workers=2))
    assert list(nt.utils.data.DataLoader(Uncopyable(), batch_size=None)) == [0, 1, 2]


def _settled_workers(deadline_s: float = 30.0) -> int:
    """The number of live DataLoader worker threads once those that are stopping have ended."""
    deadline = time.perf_counter() + deadline_s
    while True:
        gc.collect()
        alive = sum(t.name.startswith("DataLoader worker") for t in threading.enumerate())
        if alive == 0 or time.perf_counter() > deadline:
            return alive
        time.sleep(0.05)


def test_persistent_workers_and_abandoned_iterators():
    assert _settled_workers() == 0
    loader = nt.utils.data.DataLoader(
        Squares(5), batch_size=2, num_workers=2, persistent_workers=True
    )
    first = [b["i"].tolist() for b in loader]
    it = iter(loader)
    next(it)  # abandoned mid-epoch: the next epoch starts afresh on the same workers
    second = [b["i"].tolist() for b in loader]
    assert first == second == [[0, 1], [2, 3], [4]]
    assert sum(t.name.startswith("DataLoader worker") for t in threading.enumerate()) == 2
    del loader, it
    it = iter(nt.utils.data.DataLoader(Squares(5), num_workers=2))
    next(it)
    del it  # an abandoned iterator stops its workers
    assert _settled_workers() == 0


# ------------------------------------------------------------------ DistributedSampler
# (dataset length, replicas): even and uneven splits, padding longer than the dataset, one
# replica, an empty dataset
SPLITS = [(n, r) for n in (0, 1, 2, 5, 7, 10, 12, 23) for r in (1, 2, 3, 4, 5, 8)]


def _all_ranks(lib, n, replicas, **kw):
    d = lib.utils.data.distributed
    samplers = [d.DistributedSampler(range(n), replicas, r, **kw) for r in range(replicas)]
    return [(list(s), len(s), s.num_samples, s.total_size) for s in samplers]


@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_in_order_matches_torch(drop_last):
    def prog(lib):
        return [_all_ranks(lib, n, r, shuffle=False, drop_last=drop_last) for n, r in SPLITS]

    assert_same(prog)


def test_distributed_sampler_is_exported_where_torch_exports_it():
    import torch

    assert nt.utils.data.DistributedSampler is nt.utils.data.distributed.DistributedSampler
    assert torch.utils.data.DistributedSampler is torch.utils.data.distributed.DistributedSampler
    attrs = ["dataset", "num_replicas", "rank", "epoch", "drop_last", "num_samples"]
    attrs += ["total_size", "shuffle", "seed"]

    def prog(lib):
        s = lib.utils.data.DistributedSampler(range(10), 3, 1, seed=4, drop_last=True)
        return sorted(vars(s)), [getattr(s, a) for a in attrs]

    assert_same(prog)


def test_numtorch_randperm_does_not_reproduce_torchs_sequence():
    """Why the shuffled split is tested by its properties: numtorch's Generator draws from
    NumPy's stream, not PyTorch's Mersenne Twister, so the same seed gives another order."""
    import torch

    g, tg = nt.Generator(), torch.Generator()
    g.manual_seed(0)
    tg.manual_seed(0)
    assert nt.randperm(10, generator=g).tolist() != torch.randperm(10, generator=tg).tolist()


def _reassemble(ranks: list) -> list:
    """The padded index list every replica strides through, rebuilt from their shares."""
    replicas = len(ranks)
    out = [None] * (len(ranks[0]) * replicas)
    for r, share in enumerate(ranks):
        out[r::replicas] = share
    return out


@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_shuffle_is_a_disjoint_padded_cover(drop_last):
    for n, replicas in SPLITS:
        ours = _all_ranks(nt, n, replicas, seed=3, drop_last=drop_last)
        theirs = run_both(lambda lib: _all_ranks(lib, n, replicas, drop_last=drop_last))[1]
        # the same share sizes as PyTorch's
        assert [o[1:] for o in ours] == [t[1:] for t in theirs]
        assert all(len(o[0]) == o[1] for o in ours)
        full = _reassemble([o[0] for o in ours])
        g = nt.Generator()
        g.manual_seed(3)
        perm = nt.randperm(n, generator=g).tolist()  # PyTorch's: randperm seeded seed + epoch
        if drop_last:  # disjoint: the permutation's first total_size indices
            assert full == perm[: len(full)]
            assert len(set(full)) == len(full)
        else:  # every index once, then the permutation's first ones again as padding
            assert full[:n] == perm
            assert sorted(full[:n]) == list(range(n))
            pad = len(full) - n
            assert full[n:] == (perm * (pad // max(n, 1) + 1))[:pad]


def test_distributed_sampler_set_epoch_reshuffles_reproducibly():
    import torch

    s = nt.utils.data.DistributedSampler(range(40), num_replicas=2, rank=1, seed=5)
    first = list(s)
    assert list(s) == first  # same epoch, same order
    s.set_epoch(1)
    second = list(s)
    assert second != first and s.epoch == 1
    s.set_epoch(0)
    assert list(s) == first
    # the generator is seeded with seed + epoch, in both libraries
    for lib in (nt, torch):
        a = lib.utils.data.DistributedSampler(range(40), 2, 0, seed=2)
        a.set_epoch(3)
        b = lib.utils.data.DistributedSampler(range(40), 2, 0, seed=5)
        assert list(a) == list(b)
        c = lib.utils.data.DistributedSampler(range(40), 2, 0, seed=6)
        assert list(c) != list(b)


@pytest.mark.parametrize(
    "replicas, rank",
    [(2, 2), (2, -1), (0, 0), (3, 7)],
)
def test_distributed_sampler_rank_errors_match_torch(replicas, rank):
    assert_same_error(lambda lib: lib.utils.data.DistributedSampler(range(5), replicas, rank))


@pytest.mark.parametrize(
    "kwargs", [{}, {"num_replicas": 2}, {"rank": 0}], ids=["neither", "no_rank", "no_replicas"]
)
def test_distributed_sampler_asks_the_default_process_group(kwargs):
    import importlib.util

    def prog(lib):
        return lib.utils.data.DistributedSampler(range(5), **kwargs)

    available = importlib.util.find_spec("numtorch.distributed") is not None
    if available:
        import numtorch.distributed

        available = numtorch.distributed.is_available()
    if available:  # as PyTorch here: no process group initialized
        assert_same_error(prog)
    else:
        with pytest.raises(RuntimeError) as info:
            prog(nt)
        assert str(info.value) == "Requires distributed package to be available"


@pytest.mark.parametrize("shuffle", [False, True])
def test_distributed_sampler_drives_a_data_loader(shuffle):
    def batches(lib, rank):
        data = _data(lib)
        sampler = lib.utils.data.DistributedSampler(data, 2, rank, shuffle=shuffle)
        loader = lib.utils.data.DataLoader(data, batch_size=2, sampler=sampler)
        return [(x.tolist(), y.tolist()) for x, y in loader]

    def prog(lib):
        return [batches(lib, r) for r in range(2)]

    if not shuffle:
        assert_same(prog)
        return
    ours = prog(nt)
    rows = [row for rank in ours for x, _ in rank for row in x]
    assert len(rows) == 8  # 7 samples padded to 8
    assert sorted({tuple(r) for r in rows}) == [(2.0 * i, 2.0 * i + 1) for i in range(7)]


def test_collate_under_torchs_private_path():
    """torch.utils.data._utils.collate and dataloader's _collate_fn_t, which libraries import."""
    from numtorch.utils.data import _utils, dataloader

    batch = [(nt.tensor([1.0, 2.0]), 3), (nt.tensor([4.0, 5.0]), 6)]
    x, y = _utils.collate.default_collate(batch)
    assert x.tolist() == [[1.0, 2.0], [4.0, 5.0]] and y.tolist() == [3, 6]
    assert _utils.collate.default_convert is nt.utils.data.default_convert
    assert dataloader._collate_fn_t.__origin__ is collections.abc.Callable


# ------------------------------------------------------------------ on a device
def test_a_loader_feeds_training_on_either_device(dev):
    """Batches pinned when asked (with a GPU there to pin for), moved to ``dev`` in the loop
    and trained on: the losses and weights of torch on the CPU."""
    data = np.random.default_rng(3).standard_normal((10, 3))

    def prog(lib):
        where = dev if lib is nt else "cpu"
        pin = where != "cpu"  # (torch on the CPU would warn that nothing can pin)
        lib.manual_seed(0)
        ds = lib.utils.data.TensorDataset(lib.tensor(data), lib.tensor(data[:, :1] * 2 + 1))
        loader = lib.utils.data.DataLoader(ds, batch_size=4, pin_memory=pin)
        w = lib.zeros(3, 1, dtype=lib.float64, device=where, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        losses = []
        for xb, yb in loader:
            assert xb.is_pinned() == yb.is_pinned() == pin
            xb, yb = xb.to(where, non_blocking=True), yb.to(where, non_blocking=True)
            opt.zero_grad()
            loss = ((xb @ w - yb) ** 2).mean()
            loss.backward()
            opt.step()
            assert loss.device.type == w.device.type == lib.device(where).type
            losses.append(loss.item())
        return losses, w.detach()

    ours, theirs = run_both(prog)
    assert_close(ours, theirs, rtol=1e-14, atol=0)


def test_default_collate_keeps_device_tensors_there(dev):
    samples = [
        {"x": np.arange(3.0) + i, "pair": (np.full(2, float(i)), np.int64(i))} for i in range(4)
    ]

    def prog(lib):
        where = dev if lib is nt else "cpu"
        batch = [
            {"x": lib.tensor(s["x"], device=where), "pair": (lib.tensor(s["pair"][0]), i)}
            for i, s in enumerate(samples)
        ]
        out = lib.utils.data.default_collate(batch)
        assert out["x"].device.type == lib.device(where).type
        return out

    assert_same(prog)


def test_pinning_needs_a_cpu_tensor(cuda):
    t = nt.ones(2, dtype=nt.float64)
    p = t.pin_memory()
    assert p.is_pinned() and not t.is_pinned() and p.pin_memory() is p
    assert_close(p, t)
    with pytest.raises(RuntimeError) as e:
        p.to(cuda).pin_memory()
    assert (
        str(e.value) == "cannot pin 'torch.cuda.DoubleTensor' only dense CPU tensors can be pinned"
    )
