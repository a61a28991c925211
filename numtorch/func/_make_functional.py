"""functorch's modules as functions of their state: make_functional,
make_functional_with_buffers, combine_state_for_ensemble, and the FunctionalModule(WithBuffers)
they return.

These need nn (a FunctionalModule is an nn.Module), so this module sits above the rest of
numtorch.func, at the package face's layer.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .. import nn
from .._core.tensor import Tensor
from ..ops.creation import empty_like
from ..ops.shape import stack
from ._module import _swap


def _extract(
    model: nn.Module, named: Callable[..., Iterable[tuple[str, Tensor]]], placeholder
) -> tuple[tuple[Tensor, ...], tuple[str, ...], dict[str, list[str]]]:
    """(unique tensors, their first names, first name -> every name of that tensor); each
    name in the model is left holding an empty placeholder of the tensor's shape."""
    every = list(named(remove_duplicate=False))
    unique = list(named(remove_duplicate=True))
    names_map: dict[str, list[str]] = {name: [] for name, _ in unique}
    first = {id(t): name for name, t in unique}
    stand_in: dict[int, Tensor] = {}
    for name, t in every:
        names_map[first[id(t)]].append(name)
        if id(t) not in stand_in:
            stand_in[id(t)] = placeholder(empty_like(t))
        _swap(model, name, stand_in[id(t)])
    names = tuple(name for name, _ in unique)
    return tuple(t for _, t in unique), names, names_map


def _swap_state(model: nn.Module, names_map: dict[str, list[str]], elems) -> list[Tensor]:
    """Put each tensor at every name of its group; returns the tensors that were there."""
    old = []
    for group, elem in zip(names_map.values(), elems):
        for i, name in enumerate(group):
            previous = _swap(model, name, elem)
            if i == 0:
                old.append(previous)
    return old


class FunctionalModule(nn.Module):
    """The callable :func:`make_functional` returns: ``func(params, *args, **kwargs)``."""

    def __init__(
        self,
        stateless_model: nn.Module,
        param_names: tuple[str, ...],
        names_map: dict[str, list[str]],
    ) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.names_map = names_map

    @staticmethod
    def _create_from(
        model: nn.Module, disable_autograd_tracking: bool = False
    ) -> tuple[FunctionalModule, tuple[Tensor, ...]]:
        model_copy = copy.deepcopy(model)
        params, names, names_map = _extract(model_copy, model_copy.named_parameters, nn.Parameter)
        if disable_autograd_tracking:
            for p in params:
                p.requires_grad_(False)
        return FunctionalModule(model_copy, names, names_map), params

    def forward(self, params: Iterable[Tensor], *args: Any, **kwargs: Any) -> Any:
        old = _swap_state(self.stateless_model, self.names_map, params)
        try:
            return self.stateless_model(*args, **kwargs)
        finally:
            _swap_state(self.stateless_model, self.names_map, old)


class FunctionalModuleWithBuffers(nn.Module):
    """The callable :func:`make_functional_with_buffers` returns:
    ``func(params, buffers, *args, **kwargs)``."""

    def __init__(
        self,
        stateless_model: nn.Module,
        param_names: tuple[str, ...],
        buffer_names: tuple[str, ...],
        param_names_map: dict[str, list[str]],
        buffer_names_map: dict[str, list[str]],
    ) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.buffer_names = buffer_names
        self.all_names_map = {**param_names_map, **buffer_names_map}

    @staticmethod
    def _create_from(
        model: nn.Module, disable_autograd_tracking: bool = False
    ) -> tuple[FunctionalModuleWithBuffers, tuple[Tensor, ...], tuple[Tensor, ...]]:
        model_copy = copy.deepcopy(model)
        params, pnames, pmap = _extract(model_copy, model_copy.named_parameters, nn.Parameter)
        buffers, bnames, bmap = _extract(model_copy, model_copy.named_buffers, lambda t: t)
        if disable_autograd_tracking:
            for p in params:
                p.requires_grad_(False)
        func = FunctionalModuleWithBuffers(model_copy, pnames, bnames, pmap, bmap)
        return func, params, buffers

    def forward(
        self, params: Iterable[Tensor], buffers: Iterable[Tensor], *args: Any, **kwargs: Any
    ) -> Any:
        old = _swap_state(self.stateless_model, self.all_names_map, tuple(params) + tuple(buffers))
        try:
            return self.stateless_model(*args, **kwargs)
        finally:
            _swap_state(self.stateless_model, self.all_names_map, old)


def make_functional(
    model: nn.Module, disable_autograd_tracking: bool = False
) -> tuple[FunctionalModule, tuple[Tensor, ...]]:
    """(func, params): a stateless copy of model called as ``func(params, *args)``, and
    model's parameters."""
    if list(model.buffers()):
        raise RuntimeError(
            "make_functional(model): `model` has buffers. Please use "
            "make_functional_with_buffers(model) instead."
        )
    return FunctionalModule._create_from(model, disable_autograd_tracking)


def make_functional_with_buffers(
    model: nn.Module, disable_autograd_tracking: bool = False
) -> tuple[FunctionalModuleWithBuffers, tuple[Tensor, ...], tuple[Tensor, ...]]:
    """(func, params, buffers): a stateless copy of model called as
    ``func(params, buffers, *args)``, and model's parameters and buffers."""
    return FunctionalModuleWithBuffers._create_from(model, disable_autograd_tracking)


def combine_state_for_ensemble(
    models: Sequence[nn.Module],
) -> tuple[FunctionalModuleWithBuffers, tuple[Tensor, ...], tuple[Tensor, ...]]:
    """(func, params, buffers) for an ensemble of same-class models: each parameter and
    buffer stacked along a new leading dimension (detached), to run with vmap."""
    if len(models) == 0:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if len({m.training for m in models}) > 1:
        raise RuntimeError(
            "combine_state_for_ensemble: Expected all models to have the same training/eval mode."
        )
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError(
            "combine_state_for_ensemble: Expected all models to be of the same class."
        )
    funcs, params, buffers = zip(*[make_functional_with_buffers(m) for m in models])

    def stacked(per_model):
        return tuple(stack(shards).detach() for shards in zip(*per_model))

    return funcs[0], stacked(params), stacked(buffers)
