"""torch.optim.Optimizer: parameter groups, per-parameter state, state dicts and hooks."""

from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from copy import deepcopy
from itertools import chain
from typing import Any

import numpy as np

from .._core import dtype as dt
from .._core.interpreter import side_effect
from .._core.state import state
from .._core.tensor import Tensor
from ..autograd.grad_mode import set_grad_enabled
from ..nn.modules.module import RemovableHandle, reset_grads, typename
from ..ops.creation import tensor, zeros

__all__ = ["Optimizer", "register_optimizer_step_post_hook", "register_optimizer_step_pre_hook"]

StateDict = dict[str, Any]
ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]] | Iterable[tuple[str, Tensor]]

_global_optimizer_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
_global_optimizer_post_hooks: OrderedDict[int, Callable] = OrderedDict()


class _RequiredParameter:
    """Marks a hyperparameter every parameter group must give (torch.optim.optimizer.required)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """Register ``hook(optimizer, args, kwargs) -> None | (args, kwargs)`` to run before the
    step of every optimizer."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """Register ``hook(optimizer, args, kwargs)`` to run after the step of every optimizer."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _hooked_step(step: Callable) -> Callable:
    """``step`` wrapped to run the global and the optimizer's step hooks around it."""

    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        self = args[0]
        # (its state, step counts and buffers made on first use, lives outside the tensors a
        # compiled function's program replays: a tracer at work stops)
        side_effect("an optimizer's step")
        for pre_hook in chain(
            _global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()
        ):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(
                        f"{step} must return None or a tuple of (new_args, new_kwargs), "
                        f"but got {result}."
                    )
        out = step(*args, **kwargs)
        for post_hook in chain(
            self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()
        ):
            post_hook(self, args, kwargs)
        return out

    wrapper.hooked = True
    return wrapper


def _use_grad_for_differentiable(step: Callable) -> Callable:
    """Run ``step`` with autograd on only when the optimizer is ``differentiable``."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        with set_grad_enabled(self.defaults["differentiable"]):
            return step(self, *args, **kwargs)

    return wrapper


def _add_hook(hooks: OrderedDict, hook: Callable, prepend: bool = False) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


_HOOK_DICTS = (
    "_optimizer_step_pre_hooks",
    "_optimizer_step_post_hooks",
    "_optimizer_state_dict_pre_hooks",
    "_optimizer_state_dict_post_hooks",
    "_optimizer_load_state_dict_pre_hooks",
    "_optimizer_load_state_dict_post_hooks",
)


class Optimizer:
    """Base class for all optimizers.

    ``params`` is an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts (parameter
    groups, each with a ``"params"`` entry and optional per-group hyperparameters);
    ``defaults`` holds the hyperparameters of groups that do not set them.

    The first instance of a class wraps its class's ``step`` to run the step hooks around
    it (as PyTorch does). ``step`` stays an ordinary method looked up on the class, so
    ``lr_scheduler`` may wrap ``optimizer.step`` on the instance to record
    ``optimizer._opt_called`` as PyTorch's does.
    """

    def _patch_step_function(self) -> None:
        cls = type(self)
        if not getattr(cls.step, "hooked", False):
            cls.step = _hooked_step(cls.step)

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        for name in _HOOK_DICTS:
            setattr(self, name, OrderedDict())
        self._patch_step_function()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                "dicts, but got " + typename(params)
            )
        self.state: defaultdict[Tensor, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)
        self._warned_capturable_if_run_uncaptured = True

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in _HOOK_DICTS:
            self.__dict__.setdefault(name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    def __repr__(self) -> str:
        out = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            out += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    out += f"    {key}: {group[key]}\n"
        return out + ")"

    # ------------------------------------------------------------------ groups
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a parameter group (a dict with ``"params"`` and optional hyperparameters)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        param_group["params"] = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(params):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are "
                    "missing"
                )
            param_group["param_names"] = names
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    + typename(param)
                )
            if not self.defaults.get("differentiable", None) and not (
                param.is_leaf or param.retains_grad
            ):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this "
                "will cause an error; see github.com/pytorch/pytorch/issues/40967 for more "
                "information",
                stacklevel=3,
            )
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} to the optimizer"
                )
        if not seen.isdisjoint(id(p) for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every optimized tensor: to None, or to zeros."""
        reset_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure: Callable[[], float] | None = None) -> float | None:
        """Perform one optimization step; ``closure`` re-evaluates the model, returns the loss."""
        raise NotImplementedError

    # ------------------------------------------------------------------ hooks
    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs) -> None | (args, kwargs)`` runs before each step."""
        return _add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` runs after each step."""
        return _add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(
        self, hook: Callable[[Optimizer], None], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(optimizer)`` runs before ``state_dict``."""
        return _add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(
        self, hook: Callable[[Optimizer, StateDict], StateDict | None], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(optimizer, state_dict) -> None | state_dict`` runs after ``state_dict``."""
        return _add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(
        self, hook: Callable[[Optimizer, StateDict], StateDict | None], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(optimizer, state_dict) -> None | state_dict`` runs before
        ``load_state_dict``."""
        return _add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(
        self, hook: Callable[[Optimizer], None], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(optimizer)`` runs after ``load_state_dict``."""
        return _add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ------------------------------------------------------------------ state dicts
    def state_dict(self) -> StateDict:
        """``{"state": {param id: state}, "param_groups": [group with "params": [ids]]}``;
        ids number the parameters in group order."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        index: dict[int, int] = {}
        for group in self.param_groups:
            for p in group["params"]:
                index.setdefault(id(p), len(index))
        param_groups = [
            {
                **{k: v for k, v in g.items() if k != "params"},
                "params": [index[id(p)] for p in g["params"]],
            }
            for g in self.param_groups
        ]
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(
        param: Tensor, value: Tensor, param_id: int, param_groups: list[dict], key=None
    ) -> Tensor:
        """A loaded state tensor in the parameter's dtype and device ('step' kept as is
        unless the group is capturable or fused)."""
        group = next((g for g in param_groups if param_id in g["params"]), {})
        if key == "step":
            if group.get("capturable", False) or group.get("fused", False):
                return value.to(dtype=dt.float32, device=param.device)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Load a state dict made by ``state_dict`` (of an optimizer with the same groups)."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )
        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
            )
        )
        saved_param_groups = state_dict["param_groups"]

        def cast(param, value, param_id, key=None):
            if isinstance(value, Tensor):
                return self._process_value_according_to_param_policy(
                    param, value, param_id, saved_param_groups, key
                )
            if isinstance(value, dict):
                return {k: cast(param, v, param_id, k) for k, v in value.items()}
            if isinstance(value, Iterable) and not isinstance(value, str):
                return type(value)(cast(param, v, param_id) for v in value)
            return value

        state: defaultdict[Tensor, dict] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v, k)
            else:
                state[k] = v
        for group, new_group in zip(groups, saved_groups):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
        self.__setstate__({"state": state, "param_groups": saved_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)


# ---------------------------------------------------------------------- shared by optimizers
def _scalar_dtype(is_fused: bool | None = None) -> dt.dtype:
    """The dtype of scalar state ('step'): float64 under a float64 default dtype, else
    float32 (always float32 when fused)."""
    if is_fused:
        return dt.float32
    return dt.float64 if dt.get_default_dtype() == dt.float64 else dt.float32


def _new_step(is_fused: bool | None = None, device=None) -> Tensor:
    return zeros((), dtype=_scalar_dtype(is_fused), device=device)


def _count(state: dict) -> float:
    """Add one to the parameter's 'step' tensor; return the new count."""
    state["step"].add_(1)
    return state["step"].item()


def _check_lr(lr) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check(lr, **values) -> None:
    """PyTorch's constructor checks, in the order given: lr >= 0, betas in [0, 1), and every
    other value >= 0 (named as in the message: ``epsilon=eps``)."""
    _check_lr(lr)
    for name, value in values.items():
        if name == "betas":
            for i, beta in enumerate(value):
                if not 0.0 <= beta < 1.0:
                    raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        elif not 0.0 <= value:
            raise ValueError(f"Invalid {name} value: {value}")


def _check_fused(opt: Optimizer, fused, foreach, differentiable) -> None:
    """Refuse ``fused`` with ``differentiable`` or ``foreach``; a fused optimizer tells
    GradScaler that its step unscales the gradients itself (``_step_supports_amp_scaling``)."""
    if fused:
        opt._step_supports_amp_scaling = True
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _amp_skip(opt: Optimizer, group: dict) -> bool:
    """For a fused group under GradScaler (which sets ``opt.grad_scale`` and
    ``opt.found_inf`` around the step): True where the step must be skipped (an inf or
    NaN was found); otherwise the group's gradients are divided by the scale, in place."""
    if not group.get("fused"):
        return False
    found_inf = getattr(opt, "found_inf", None)
    if found_inf is not None and bool(found_inf.item()):
        return True
    grad_scale = getattr(opt, "grad_scale", None)
    if grad_scale is not None:
        for p in group["params"]:
            if p.grad is not None:
                p.grad.div_(grad_scale.to(device=p.grad.device))
    return False


def _run_closure(closure: Callable | None):
    """The closure's loss, computed with autograd on (None without a closure)."""
    if closure is None:
        return None
    with set_grad_enabled(True):
        return closure()


def _saved(t: Tensor, group: dict) -> Tensor:
    """``t``, copied when the step is differentiable: autograd keeps the tensors an update
    reads, and the state buffers change in place on the next step."""
    return t.clone() if group["differentiable"] else t


def _num(x) -> float:
    """A Python number from a hyperparameter that may be a one-element tensor."""
    return x.item() if isinstance(x, Tensor) else x


def _direct(group: dict) -> bool:
    """Whether a step may update the group's tensors' arrays directly (as PyTorch's foreach
    path does, unless ``foreach=False``): outside transforms, dispatch modes and
    ``differentiable``. The update is then the ops' own arithmetic on the arrays, in place,
    each tensor's version bumped as the ops would."""
    return group["foreach"] is not False and not (state.stack or state.modes or state.grad_enabled)


def _arrays(p: Tensor, grad: Tensor) -> tuple | None:
    """p's and grad's arrays for a direct update: p a writable CPU tensor that is no view,
    grad of its dtype and shape; else None."""
    pd = _writable(p)
    if pd is None or grad._level or type(grad._data) is not np.ndarray:
        return None
    gd = grad._data
    if gd.dtype != pd.dtype or gd.shape != pd.shape:
        return None
    return pd, gd


def _writable(t: Tensor):
    """t's array, when an in-place update may write it directly (a level-0 CPU tensor that
    is no view and shares no memory within itself), else None."""
    if t._level or t._base is not None:
        return None
    d = t._data
    if type(d) is not np.ndarray or not d.flags.writeable or 0 in d.strides:
        return None
    return d


def _l2(p: Tensor, grad: Tensor, weight_decay: float) -> Tensor:
    """The gradient with the L2 penalty's gradient added."""
    return grad.add(p, alpha=weight_decay) if weight_decay != 0 else grad


def _weight_decay(p: Tensor, grad: Tensor, group: dict) -> Tensor:
    """Apply the group's weight decay: decoupled (shrink p in place) or L2 (into the
    gradient). Returns the gradient to use."""
    wd = group["weight_decay"]
    if wd != 0 and group.get("decoupled_weight_decay", False):
        p.mul_(1 - group["lr"] * wd)
        return grad
    return _l2(p, grad, wd)


class _PerParameter(Optimizer):
    """An optimizer whose step updates each parameter that has a gradient on its own:
    subclasses give the fresh state of a parameter and the in-place update."""

    # where PyTorch lets a capturable optimizer run, and what its refusal names
    _capturable_devices = ["cuda", "xpu", "hpu", "privateuseone", "xla"]
    _capturable_what = "params and state_steps"

    def _init_state(self, p: Tensor, group: dict) -> dict:
        raise NotImplementedError

    def _update(self, p: Tensor, grad: Tensor, state: dict, group: dict, lr) -> None:
        """Update ``p`` in place; ``grad`` is already negated when maximizing. ``lr`` is the
        group's, a number or a one-element tensor (whose dtype the arithmetic keeps, as in
        PyTorch)."""
        raise NotImplementedError

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            for name, default in self.defaults.items():
                group.setdefault(name, default)
            for p in group["params"]:
                st = self.state.get(p, {})
                if "step" in st and not isinstance(st["step"], Tensor):
                    st["step"] = tensor(float(st["step"]), dtype=_scalar_dtype(group.get("fused")))

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], float] | None = None) -> float | None:
        """Perform one optimization step; returns the closure's loss (None without one)."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            lr = group["lr"]
            skip = _amp_skip(self, group)
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state.update(self._init_state(p, group))
                if skip:
                    continue
                if group.get("capturable") and p.device.type not in self._capturable_devices:
                    raise AssertionError(
                        f"If capturable=True, {self._capturable_what} must be on supported "
                        f"devices: {self._capturable_devices}."
                    )
                grad = -p.grad if group.get("maximize", False) else p.grad
                self._update(p, grad, state, group, lr)
        return loss
