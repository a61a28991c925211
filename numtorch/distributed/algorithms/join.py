"""``Join``: training with uneven inputs across ranks.

Each iteration of a ``Joinable`` (DDP's forward) all-reduces a one on its process group
through ``Join.notify_join_context``; a rank that has run out of inputs leaves the ``with``
block and, in ``__exit__``, all-reduces zeros instead, so the sum counts the ranks still
training. While that count is positive the joined rank runs each joinable's ``main_hook``,
which shadows the collectives one iteration makes; when it reaches zero every rank runs the
``post_hook``s, told whether it was the last to join.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import NamedTuple

import numtorch as torch
import numtorch.distributed as dist

__all__ = ["JoinHook", "Joinable", "Join"]

_EARLY = "Detected at least one rank that exhausted inputs. Throwing across all ranks."


class JoinHook:
    """What a joined rank does for one joinable: ``main_hook`` once per iteration the
    others still run, ``post_hook`` once all have joined."""

    def main_hook(self) -> None:
        """Shadow the collectives of one training iteration."""

    def post_hook(self, is_last_joiner: bool) -> None:
        """Clean up once every rank has joined."""


class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(enable=False, throw_on_early_termination=False, is_first_joinable=False)


class Joinable(ABC):
    """A class whose iterations ``Join`` can shadow (DistributedDataParallel is one)."""

    @abstractmethod
    def __init__(self) -> None:
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs) -> JoinHook:
        """The JoinHook for this joinable (``kwargs`` come from ``Join``)."""

    @property
    @abstractmethod
    def join_device(self):
        """The device the join all-reduces run on."""

    @property
    @abstractmethod
    def join_process_group(self):
        """The process group the join all-reduces run on."""


class Join:
    """The context manager: ``with Join([ddp_model, ...]): for batch in my_batches: ...``."""

    def __init__(
        self, joinables, enable: bool = True, throw_on_early_termination: bool = False, **kwargs
    ) -> None:
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [j.join_hook(**kwargs) for j in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        self._set_joinable_configs()
        self._extract_dist_info()

    def _set_joinable_configs(self) -> None:
        for i, joinable in enumerate(self._joinables):
            joinable._join_config = _JoinConfig(
                self._enable, self._throw_on_early_termination, is_first_joinable=i == 0
            )

    def _extract_dist_info(self) -> None:
        groups = {id(j.join_process_group) for j in self._joinables}
        if len(groups) > 1:
            raise ValueError("Using join context manager with multiple process groups")
        self._process_group = self._joinables[0].join_process_group
        self._device = self._joinables[0].join_device
        self._rank = dist.get_rank(self._process_group)

    def __enter__(self):
        return self

    def __exit__(self, type, value, traceback) -> None:
        if not self._enable or type is not None:
            return
        is_last_joiner = True
        while True:
            count = self._count_nonjoined()
            if count == 0:
                break
            if self._throw_on_early_termination:
                self._disable_joinables()
                raise RuntimeError(_EARLY)
            is_last_joiner = False
            for hook in self._join_hooks:
                hook.main_hook()
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)
        self._disable_joinables()

    def _disable_joinables(self) -> None:
        for joinable in self._joinables:
            joinable._join_config = _JoinConfig.construct_disabled_join_config()

    def _count_nonjoined(self) -> int:
        zero = torch.zeros(1, dtype=torch.int64)
        dist.all_reduce(zero, group=self._process_group)
        return int(zero.item())

    @staticmethod
    def notify_join_context(joinable: Joinable):
        """Called by a joinable at the start of each iteration: all-reduces a one with the
        joined ranks' zeros. Returns the async Work for the first joinable, else None."""
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        one = torch.ones(1, dtype=torch.int64)
        work = dist.all_reduce(one, group=joinable.join_process_group, async_op=True)
        if config.throw_on_early_termination:
            work.wait()
            if int(one.item()) < dist.get_world_size(joinable.join_process_group):
                raise RuntimeError(_EARLY)
        return work
