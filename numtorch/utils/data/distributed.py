"""torch.utils.data.distributed: DistributedSampler, each replica's share of a dataset."""

from __future__ import annotations

import importlib
import math
from collections.abc import Iterator

from ...ops.creation import Generator
from ...ops.random import randperm
from .dataset import Dataset
from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _default_group(what: str) -> int:
    """The default process group's world size or rank, as PyTorch asks torch.distributed."""
    try:  # (by name: the package is built on MPI and may be missing from an install)
        dist = importlib.import_module("numtorch.distributed")
    except ImportError:
        dist = None
    if dist is None or not dist.is_available():
        raise RuntimeError("Requires distributed package to be available")
    return dist.get_world_size() if what == "world_size" else dist.get_rank()


class DistributedSampler(Sampler):
    """The indices of a dataset one replica visits: all indices (shuffled by ``seed`` plus
    the epoch set with ``set_epoch``, or in order), padded by repeating the first ones to a
    multiple of ``num_replicas`` (or cut to one with ``drop_last``), then every
    ``num_replicas``-th from ``rank``."""

    def __init__(
        self,
        dataset: Dataset,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None:
            num_replicas = _default_group("world_size")
        if rank is None:
            rank = _default_group("rank")
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            # the tail that would need padding is dropped: every replica gets the same count
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def _all_indices(self) -> list:
        n = len(self.dataset)
        if not self.shuffle:
            return list(range(n))
        g = Generator()
        g.manual_seed(self.seed + self.epoch)
        return randperm(n, generator=g).tolist()

    def __iter__(self) -> Iterator:
        indices = self._all_indices()
        if self.drop_last:
            indices = indices[: self.total_size]
        else:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:  # more padding than indices: repeat the whole list
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        if len(indices) != self.total_size:
            raise AssertionError(f"{len(indices)} indices for a total size of {self.total_size}")
        mine = indices[self.rank : self.total_size : self.num_replicas]
        if len(mine) != self.num_samples:
            raise AssertionError(f"{len(mine)} indices for {self.num_samples} samples")
        return iter(mine)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose shuffle the next ``__iter__`` uses (call it before each epoch)."""
        self.epoch = epoch
