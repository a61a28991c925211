"""Samplers (torch.utils.data.sampler): the order in which a DataLoader visits indices."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Generic, TypeVar

import numpy as np

from ..._core import dtype as dt
from ...ops.creation import Generator, as_tensor, rng
from ...ops.random import randint, randperm

_T_co = TypeVar("_T_co", covariant=True)


class Sampler(Generic[_T_co]):
    """Iterates over indices (or lists of indices) of a dataset; may define ``__len__``."""

    def __iter__(self) -> Iterator:
        raise NotImplementedError


def _check_positive(name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """Indices in a random order: shuffled permutations (repeated to reach ``num_samples``),
    or uniform draws with ``replacement``."""

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Generator | None = None,
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                "num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n, k, g = len(self.data_source), self.num_samples, self.generator
        if self.replacement:
            yield from randint(0, n, (k,), generator=g).tolist()
            return
        for _ in range(k // n):
            yield from randperm(n, generator=g).tolist()
        if k % n:
            yield from randperm(n, generator=g).tolist()[: k % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices of ``weights`` drawn with probabilities proportional to
    the weights (with or without replacement)."""

    def __init__(
        self,
        weights: Sequence[float],
        num_samples: int,
        replacement: bool = True,
        generator: Generator | None = None,
    ) -> None:
        _check_positive("num_samples", num_samples)
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        weights = as_tensor(weights, dtype=dt.float64)
        if weights.dim() != 1:
            raise ValueError(
                "weights should be a 1d sequence but given weights have shape "
                f"{tuple(weights.shape)}"
            )
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        w = self.weights.numpy()
        _check_distribution(w, self.replacement and self.num_samples > 1)
        n, k = w.shape[0], self.num_samples
        if not self.replacement and k > n:
            raise RuntimeError(
                "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
            )
        # numtorch has no multinomial op: draw from the generator's NumPy stream directly.
        g = rng(self.generator)
        nonzero = np.count_nonzero(w)
        if self.replacement or k <= nonzero:
            yield from g.choice(n, size=k, replace=self.replacement, p=w / w.sum()).tolist()
            return
        # More draws than positive weights: every positive index, then zero-weight ones.
        yield from g.choice(n, size=nonzero, replace=False, p=w / w.sum()).tolist()
        yield from g.permutation(np.flatnonzero(w == 0))[: k - nonzero].tolist()

    def __len__(self) -> int:
        return self.num_samples


def _check_distribution(w, many_with_replacement: bool) -> None:
    """PyTorch's multinomial errors; their wording depends on the sampling path."""
    if not (w >= 0).all() or not np.isfinite(w).all():
        if not many_with_replacement:
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if not (w >= 0).all():
            raise RuntimeError(
                "invalid multinomial distribution (encountering probability entry < 0)"
            )
        raise RuntimeError(
            "invalid multinomial distribution (encountering probability entry = infinity or NaN)"
        )
    if w.sum() <= 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices from ``sampler``; a short last list unless
    ``drop_last``."""

    def __init__(self, sampler: Sampler | Iterable[int], batch_size: int, drop_last: bool) -> None:
        _check_positive("batch_size", batch_size)
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        it = iter(self.sampler)
        while batch := list(itertools.islice(it, self.batch_size)):
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
