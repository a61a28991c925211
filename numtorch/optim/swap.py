"""torch.optim.swap_in_optimizer_params_and_state: run an optimizer on other parameters and
state for the duration of a ``with`` block, then restore it."""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from .._core.tensor import Tensor

_NAME = "swap_in_optimizer_params_and_state"


def _fail(text: str):
    raise RuntimeError(text)


def _checked_state(state: Any) -> dict:
    """The state_dict's ``state``: per-parameter dicts keyed by packed ids."""
    if not isinstance(state, dict):
        _fail(
            f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping packed "
            f"parameter ids to per-param state dicts, got {type(state).__name__}."
        )
    if any(isinstance(k, Tensor) for k in state):
        _fail(f"{_NAME} requires optimizer.state_dict()-style state keyed by packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        _fail(f"{_NAME} requires per-parameter optimizer state entries to be dictionaries.")
    return state


def _checked_group(i: int, live: dict, group: Any) -> list:
    """A swap-in param group against the live one: its packed parameter ids."""
    if not isinstance(group, dict):
        _fail(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = group.get("params")
    if not isinstance(ids, list) or not all(isinstance(p, int) for p in ids):
        _fail(
            f"{_NAME} requires optimizer.state_dict()-style param_groups[*]['params'] "
            "entries keyed by packed parameter ids."
        )
    if len(live["params"]) != len(ids):
        _fail(
            f"swapin_optim_state param group {i} has a different number of params than the "
            "live optimizer param group."
        )
    only_new = [k for k in group if k not in live]
    only_live = [k for k in live if k not in group]
    if only_new or only_live:
        _fail(
            f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly "
            f"match the live optimizer group keys for group {i}. Keys only in swap-in: "
            f"{only_new}. Keys only in live: {only_live}."
        )
    return ids


def _plan(optimizer, parameters: dict, optim_state: Any) -> tuple[dict, list]:
    """(state by packed id, [(live group, swap-in group, swap-in params)]) after the
    checks: parameters are matched to the groups' packed ids in order."""
    if not optimizer.state:
        _fail(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(optim_state, dict):
        _fail(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _checked_state(optim_state.get("state"))
    groups = optim_state.get("param_groups")
    if not isinstance(groups, list):
        _fail(
            f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of "
            f"param-group dicts, got {type(groups).__name__}."
        )
    if len(groups) != len(optimizer.param_groups):
        _fail(
            "swapin_optim_state has a different number of parameter groups than the live optimizer."
        )
    flat, start, seen, plan = list(parameters.values()), 0, set(), []
    for i, (live, group) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _checked_group(i, live, group)
        seen.update(ids)
        if start + len(ids) > len(flat):
            _fail(
                f"{_NAME} requires the explicit parameter state to match "
                "optimizer.param_groups ordering."
            )
        plan.append((live, group, flat[start : start + len(ids)]))
        start += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        _fail(
            f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed "
            f"parameter ids from param_groups[*]['params']; got extra keys {extra!r}."
        )
    return state, plan


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(
    optimizer, swapin_parameters: dict[str, Tensor], swapin_optim_state: dict[str, Any]
) -> Iterator[None]:
    """Within the block, ``optimizer`` steps ``swapin_parameters`` (in the order of its
    param groups) with the state and hyperparameters of ``swapin_optim_state`` (an
    ``optimizer.state_dict()``); on exit its own parameters, groups and state come back.
    In-place updates of the swap-in state's tensors are kept; new entries are not."""
    state, plan = _plan(optimizer, swapin_parameters, swapin_optim_state)
    live_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        swapped: defaultdict = defaultdict(dict)
        for live, group, params in plan:
            live["params"] = params
            live.update((k, v) for k, v in group.items() if k != "params")
            for p, pid in zip(params, group["params"]):
                swapped[p] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = live_state
