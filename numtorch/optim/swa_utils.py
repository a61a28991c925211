"""torch.optim.swa_utils: stochastic weight averaging and exponential moving averages of a
model's parameters (AveragedModel), BatchNorm statistics refreshed over a loader
(update_bn), and the SWALR schedule."""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any

from .._core import dtype as dt
from .._core.tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from ..ops.creation import tensor
from .lr_scheduler import LRScheduler, _format_param
from .optimizer import Optimizer

__all__ = [
    "AveragedModel",
    "update_bn",
    "SWALR",
    "get_ema_multi_avg_fn",
    "get_swa_multi_avg_fn",
    "get_ema_avg_fn",
    "get_swa_avg_fn",
]

PARAM_LIST = tuple[Tensor, ...] | list[Tensor]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )


def _floating(t: Tensor) -> bool:
    return t.is_floating_point() or t.is_complex()


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """The in-place EMA update of lists of parameters:
    ``ema <- decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list: PARAM_LIST, current_param_list: PARAM_LIST, _) -> None:
        if _floating(ema_param_list[0]):
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """The in-place equal-weight (SWA) update of lists of parameters."""

    @no_grad()
    def swa_update(
        averaged_param_list: PARAM_LIST,
        current_param_list: PARAM_LIST,
        num_averaged: Tensor | int,
    ) -> None:
        pairs = list(zip(averaged_param_list, current_param_list, strict=True))
        if _floating(averaged_param_list[0]):
            weight = 1 / (num_averaged + 1)
            for p_avg, p_model in pairs:
                p_avg.lerp_(p_model, weight)
        elif isinstance(num_averaged, Tensor):
            for p_avg, p_model in pairs:
                p_avg.addcdiv_(p_model - p_avg, num_averaged + 1)
        else:
            for p_avg, p_model in pairs:
                p_avg.add_(p_model - p_avg, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """The EMA of one parameter: ``decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable:
    """The equal-weight (SWA) average of one parameter."""

    @no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Tensor | int):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and, with ``use_buffers``, buffers) hold a
    running average of ``model``'s, updated by ``update_parameters``; ``avg_fn`` (one
    tensor at a time) or ``multi_avg_fn`` (lists, in place) chooses the average (equal
    weights by default)."""

    n_averaged: Tensor

    def __init__(
        self,
        model: Module,
        device=None,
        avg_fn: Callable | None = None,
        multi_avg_fn: Callable | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=dt.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """The averaged model's forward."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s current parameters into this model's (copy them the first
        time)."""
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        averaged: list[Tensor] = []
        current: list[Tensor] = []
        copy_param = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(mine, theirs, strict=False):
            p_model_ = p_model.detach().to(p_averaged.device)
            averaged.append(p_averaged.detach())
            current.append(p_model_)
            if copy_param:
                p_averaged.detach().copy_(p_model_)
        if self.n_averaged > 0:
            self._average(averaged, current)
        if not self.use_buffers:
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1

    def _average(self, averaged: list[Tensor], current: list[Tensor]) -> None:
        if self.multi_avg_fn is not None or self.avg_fn is None:
            groups: dict[tuple, tuple[list, list]] = {}
            for a, c in zip(averaged, current, strict=True):
                mine, theirs = groups.setdefault((a.device, a.dtype), ([], []))
                mine.append(a)
                theirs.append(c)
            for (device, _), (mine, theirs) in groups.items():
                n_averaged = self.n_averaged.to(device)
                if self.multi_avg_fn:
                    self.multi_avg_fn(mine, theirs, n_averaged)
                elif device.type == "cuda":
                    get_swa_multi_avg_fn()(mine, theirs, n_averaged)
                else:
                    avg_fn = get_swa_avg_fn()
                    for a, c in zip(mine, theirs, strict=True):
                        a.copy_(avg_fn(a, c, n_averaged))
        else:
            for a, c in zip(averaged, current, strict=True):
                n_averaged = self.n_averaged.to(a.device)
                a.detach().copy_(self.avg_fn(a.detach(), c, n_averaged))


@no_grad()
def update_bn(loader: Iterable[Any], model: Module, device=None) -> None:
    """Recompute the running statistics of ``model``'s BatchNorm layers over one pass of
    ``loader`` (each item a tensor, or a list/tuple whose first element is the input)."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)
    for bn_module, momentum in momenta.items():
        bn_module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to its ``swa_lr`` over ``anneal_epochs`` epochs,
    by a cosine or a linear schedule, then keep it there."""

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float,
        anneal_epochs: int = 10,
        anneal_strategy: str = "cos",
        last_epoch: int = -1,
    ) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        """The next learning rates: between each group's ``lr`` and ``swa_lr``."""
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use "
                "`get_last_lr()`.",
                UserWarning,
                stacklevel=2,
            )
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        groups = self.optimizer.param_groups
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [
            g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev_lrs, strict=True)
        ]

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's attributes, but the optimizer and the anneal function."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the state returned by ``state_dict``."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
