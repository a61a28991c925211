"""Modules as functions of their state: functional_call, stack_module_state,
replace_all_batch_norm_modules_.

The func layer sits below nn, so these walk a module through its public methods
(``named_parameters``, ``named_buffers``, ``modules``) and its ``_parameters`` /
``_buffers`` dicts, never importing nn.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from .._core.tensor import Tensor
from ..ops.shape import stack

_MISSING = object()


def _owner(module, name: str):
    """(submodule, attribute) for a dotted name."""
    path, _, attr = name.rpartition(".")
    mod = module
    for item in path.split(".") if path else ():
        if not hasattr(mod, item):
            raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
        mod = getattr(mod, item)
    return mod, attr


def _swap(module, name: str, value):
    """Put value at a dotted name, bypassing the Parameter checks of __setattr__; returns
    what was there (_MISSING if nothing)."""
    mod, attr = _owner(module, name)
    for place in (mod._parameters, mod._buffers):
        if attr in place:
            old = place[attr]
            place[attr] = value
            return old
    old = mod.__dict__.get(attr, _MISSING)
    if value is _MISSING:
        mod.__dict__.pop(attr, None)
    else:
        mod.__dict__[attr] = value
    return old


def _named_tensors(module) -> dict:
    out = dict(module.named_parameters(remove_duplicate=False))
    out.update(module.named_buffers(remove_duplicate=False))
    return out


def _untie(module, given: dict) -> dict:
    """The given values extended to every name tied (the same tensor) to a given name."""
    names_of: dict[int, list[str]] = {}
    for name, t in _named_tensors(module).items():
        names_of.setdefault(id(t), []).append(name)
    tied = {n: names for names in names_of.values() if len(names) > 1 for n in names}
    out = dict(given)
    for name in [n for n in given if n in tied]:
        group = tied[name]
        values = {id(given[n]) for n in group if n in given}
        if len(values) > 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(group)}, which are "
                "tied. Consider using tie_weights=False"
            )
        for other in group:
            out[other] = given[name]
    return out


@contextlib.contextmanager
def _reparametrize_module(module, values: dict, tie_weights: bool = False, strict: bool = False):
    """The module with values swapped in for its parameters and buffers, restored on exit."""
    if tie_weights:
        values = _untie(module, values)
    if strict:
        known = set(_named_tensors(module))
        errors = []
        unexpected = sorted(set(values) - known)
        missing = sorted(known - set(values))
        if unexpected:
            errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if errors:
            raise RuntimeError(
                "Error(s) in reparametrizing for {}:\n\t{}".format(
                    module._get_name(), "\n\t".join(errors)
                )
            )
    originals: dict = {}
    try:
        for name, value in values.items():
            originals[name] = _swap(module, name, value)
        yield
    finally:
        for name, old in reversed(list(originals.items())):
            _swap(module, name, old)


def functional_call(
    module,
    parameter_and_buffer_dicts: dict[str, Tensor] | Sequence[dict[str, Tensor]],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """Call module with the given tensors in place of its parameters and buffers (one dict,
    or several with disjoint keys); the module's own state is restored afterwards."""
    if isinstance(parameter_and_buffer_dicts, dict):
        values = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError(
                "Expected all elements of parameter_and_buffer_dicts to be dictionaries"
            )
        counts: dict[str, int] = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(
                f"{repeated} appeared in multiple dictionaries; behavior of functional call "
                "is ambiguous"
            )
        values = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but "
            f"got {type(parameter_and_buffer_dicts)}"
        )
    kwargs = {} if kwargs is None else kwargs
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    with _reparametrize_module(module, values, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def _stacked(tensors: tuple, name: str) -> Tensor:
    needs = {t.requires_grad for t in tensors}
    if len(needs) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    out = stack(tensors)
    return out.detach().requires_grad_() if needs == {True} else out


def stack_module_state(models) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """(params, buffers) of same-class models, each entry stacked along a new leading dim
    (parameters become new leaves that require grad)."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) > 1:
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    if len({type(m) for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(members):
        all_ = [dict(members(m)) for m in models]
        return {k: _stacked(tuple(d[k] for d in all_), k) for k in all_[0]}

    return stacked(lambda m: m.named_parameters()), stacked(lambda m: m.named_buffers())


def replace_all_batch_norm_modules_(root):
    """Make every batch norm in root stop tracking running statistics (in place), so that
    vmap over it needs no in-place update of shared buffers; returns root."""
    for mod in root.modules():
        if getattr(type(mod), "_is_batch_norm", False) and mod.track_running_stats:
            mod.running_mean = None
            mod.running_var = None
            mod.num_batches_tracked = None
            mod.track_running_stats = False
    return root
