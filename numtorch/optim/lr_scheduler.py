"""torch.optim.lr_scheduler: learning-rate schedules that rewrite an optimizer's
``param_groups[i]["lr"]`` (and, for the cyclic ones, its momentum or beta1) once per step.

The sequences equal PyTorch's to the last bit: each scheduler steps by PyTorch's chainable
(recursive) formula, and ``step(epoch)`` uses the closed form where PyTorch has one.
``state_dict`` holds the scheduler's attributes except the optimizer, as PyTorch's does (a
user's lambda is stored as None; a callable object as its ``__dict__``).
"""

from __future__ import annotations

import contextlib
import functools
import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Literal, SupportsFloat

from .._core.tensor import Tensor
from .optimizer import Optimizer

__all__ = [
    "LambdaLR",
    "MultiplicativeLR",
    "StepLR",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR",
    "ExponentialLR",
    "SequentialLR",
    "CosineAnnealingLR",
    "ChainedScheduler",
    "ReduceLROnPlateau",
    "CyclicLR",
    "CosineAnnealingWarmRestarts",
    "OneCycleLR",
    "PolynomialLR",
    "LRScheduler",
]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)
_HOW_TO = (
    "See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
)
_STEP_OVERRIDDEN = (
    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
    "initialization. Please, make sure to call `optimizer.step()` before "
    f"`lr_scheduler.step()`. {_HOW_TO}"
)
_STEP_ORDER = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
    "In PyTorch 1.1.0 and later, you should call them in the opposite order: "
    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
    "will result in PyTorch skipping the first value of the learning rate schedule. "
    f"{_HOW_TO}"
)
_NO_MOMENTUM = "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"


# ------------------------------------------------------------------ param-group values
def _copy(value):
    return value.clone() if isinstance(value, Tensor) else value


def _format_param(name: str, optimizer: Optimizer, param) -> list:
    """One value per param group: ``param`` itself when a list/tuple of the right length,
    else ``param`` repeated."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(param)} values, param_groups has {len(optimizer.param_groups)}."
            )
    else:
        param = [param] * len(optimizer.param_groups)
    return [_copy(p) for p in param]


def _values(optimizer: Optimizer, key: str) -> list:
    """``group[key]`` of every param group (tensors copied, so the caller cannot alias them)."""
    return [_copy(group[key]) for group in optimizer.param_groups]


def _assign(group: dict, key: str, value) -> None:
    """``group[key] = value``, filled in place when the group holds a tensor."""
    if isinstance(group[key], Tensor):
        if isinstance(value, Tensor) and value.dim() != 0:
            value = value.squeeze()
        group[key].fill_(value)
    else:
        group[key] = value


def _set_momentum(group: dict, value, use_beta1: bool) -> None:
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


def _init_momentum(
    optimizer: Optimizer, base_momentum, max_momentum, last_epoch: int
) -> tuple[bool, list, list]:
    """Validate momentum cycling; on a fresh start put ``max_momentum`` in every group (and
    record both bounds there). Returns (use_beta1, base_momentums, max_momentums)."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(_NO_MOMENTUM)
    use_beta1 = "betas" in optimizer.defaults
    base = _format_param("base_momentum", optimizer, base_momentum)
    top = _format_param("max_momentum", optimizer, max_momentum)
    if last_epoch == -1:
        for m_max, m_base, group in zip(top, base, optimizer.param_groups, strict=True):
            _set_momentum(group, m_max, use_beta1)
            group["max_momentum"] = m_max
            group["base_momentum"] = m_base
    return use_beta1, base, top


# ------------------------------------------------------------------ state of callables
def _callable_state(fn):
    """What a state dict keeps of a user callable: a callable object's ``__dict__``, nothing
    of a function or lambda."""
    return None if fn is None or isinstance(fn, types.FunctionType) else fn.__dict__.copy()


def _restore_callable(fn, state) -> None:
    if state is not None:
        fn.__dict__.update(state)


def _restore_each(restore: Callable) -> Callable:
    def each(items, states) -> None:
        for item, state in zip(items, states):
            restore(item, state)

    return each


# attribute -> (how state_dict saves it, how load_state_dict restores it into the live one)
_SPECIAL_STATE: dict[str, tuple[Callable, Callable]] = {
    "lr_lambdas": (lambda fns: [_callable_state(f) for f in fns], _restore_each(_restore_callable)),
    "_scale_fn_custom": (_callable_state, _restore_callable),
    "_schedulers": (
        lambda scheds: [s.state_dict() for s in scheds],
        _restore_each(lambda s, state: s.load_state_dict(state)),
    ),
}


@contextlib.contextmanager
def _flag(sched: LRScheduler, name: str) -> Iterator[None]:
    setattr(sched, name, True)
    try:
        yield
    finally:
        setattr(sched, name, False)


def _track_step_calls(optimizer: Optimizer) -> None:
    """Wrap ``optimizer.step`` (once) so that it records ``optimizer._opt_called``."""
    step = optimizer.step
    if hasattr(step, "_wrapped_by_lr_sched"):
        return
    func, opt_ref = step.__func__, weakref.ref(optimizer)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        opt = opt_ref()
        opt._opt_called = True
        return func.__get__(opt, type(opt))(*args, **kwargs)

    wrapper._wrapped_by_lr_sched = True
    optimizer.step = wrapper


# ------------------------------------------------------------------ the base
class LRScheduler:
    """Base class of the schedulers: ``step()`` advances ``last_epoch`` and writes the new
    learning rates into the optimizer's param groups; ``get_last_lr()`` returns them.

    A subclass defines ``get_lr()`` (the new rates from the current ones) and, optionally,
    ``_get_closed_form_lr()`` (the rates at ``last_epoch`` from ``base_lrs``).
    """

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming scheduler with last_epoch >= 0.\n"
                        "This typically happens when:\n"
                        "1. You're trying to resume training from a checkpoint but haven't "
                        "properly loaded the optimizer state\n"
                        "2. You're using last_epoch >= 0 for a fresh training run (not recommended)"
                    )
        self.base_lrs: list = _values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _track_step_calls(optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        """The step a scheduler takes when it is built (it leaves a resumed rate as it is)."""
        self._step_count = 0
        with _flag(self, "_is_initial"):
            self.step()

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state: every attribute except the optimizer."""
        return {
            key: _SPECIAL_STATE[key][0](value) if key in _SPECIAL_STATE else value
            for key, value in self.__dict__.items()
            if key != "optimizer"
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the state returned by ``state_dict``."""
        self.__dict__.update({k: v for k, v in state_dict.items() if k not in _SPECIAL_STATE})
        for key in _SPECIAL_STATE.keys() & state_dict.keys():
            _SPECIAL_STATE[key][1](getattr(self, key), state_dict[key])
        self._after_load()

    def _after_load(self) -> None:
        pass

    def get_last_lr(self) -> list[float | Tensor]:
        """The learning rates the last ``step`` set, one per param group."""
        return self._last_lr

    def get_lr(self) -> list[float | Tensor]:
        """The learning rates of the current step (called by ``step``)."""
        if type(self)._chained_lr is LRScheduler._chained_lr:
            raise NotImplementedError
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, "
                "please use `get_last_lr()`.",
                UserWarning,
                stacklevel=2,
            )
        return self._chained_lr()

    def _chained_lr(self) -> list:
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Advance the schedule one step (or, deprecated, to ``epoch``)."""
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(_STEP_OVERRIDDEN, UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(_STEP_ORDER, UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        with _flag(self, "_get_lr_called_within_step"):
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        self._write_lrs(values)

    def _write_lrs(self, values: Iterable) -> None:
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            _assign(group, "lr", lr)
        self._last_lr: list = _values(self.optimizer, "lr")

    def _keep(self) -> list:
        return _values(self.optimizer, "lr")


class _LRScheduler(LRScheduler):
    """The old name of ``LRScheduler``."""


# ------------------------------------------------------------------ lambdas
def _lambdas(optimizer: Optimizer, lr_lambda) -> list:
    if not isinstance(lr_lambda, (list, tuple)):
        return [lr_lambda] * len(optimizer.param_groups)
    if len(lr_lambda) != len(optimizer.param_groups):
        raise ValueError(
            f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}"
        )
    return list(lr_lambda)


class LambdaLR(LRScheduler):
    """Each group's rate is its initial rate times ``lr_lambda(epoch)``."""

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        self.optimizer = optimizer
        self.lr_lambdas: list[Callable[[int], float]] = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def _chained_lr(self) -> list:
        return [b * f(self.last_epoch) for f, b in zip(self.lr_lambdas, self.base_lrs, strict=True)]


class MultiplicativeLR(LRScheduler):
    """Each step multiplies each group's rate by ``lr_lambda(epoch)``."""

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        self.optimizer = optimizer
        self.lr_lambdas: list[Callable[[int], float]] = _lambdas(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def _chained_lr(self) -> list:
        if self._is_initial:
            return self._keep()
        groups = self.optimizer.param_groups
        return [g["lr"] * f(self.last_epoch) for f, g in zip(self.lr_lambdas, groups, strict=True)]


# ------------------------------------------------------------------ multiplicative schedules
class _FactorScheduler(LRScheduler):
    """A schedule whose step multiplies every rate by ``_factor()`` (None: keep the rates)
    and whose closed form is ``base_lr * _closed_factor()``."""

    def _factor(self) -> float | None:
        raise NotImplementedError

    def _closed_factor(self) -> float:
        raise NotImplementedError

    def _chained_lr(self) -> list:
        factor = self._factor()
        if factor is None:
            return self._keep()
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        factor = self._closed_factor()
        return [base_lr * factor for base_lr in self.base_lrs]


class StepLR(_FactorScheduler):
    """Decay the rates by ``gamma`` every ``step_size`` epochs."""

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _factor(self) -> float | None:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return None
        return self.gamma

    def _closed_factor(self) -> float:
        return self.gamma ** (self.last_epoch // self.step_size)


class MultiStepLR(_FactorScheduler):
    """Decay the rates by ``gamma`` at each milestone (twice at a milestone given twice)."""

    def __init__(
        self,
        optimizer: Optimizer,
        milestones: Iterable[int],
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _factor(self) -> float | None:
        if self.last_epoch not in self.milestones:
            return None
        return self.gamma ** self.milestones[self.last_epoch]

    def _closed_factor(self) -> float:
        return self.gamma ** bisect_right(sorted(self.milestones.elements()), self.last_epoch)


class ConstantLR(_FactorScheduler):
    """The rates times ``factor`` until epoch ``total_iters``, then the initial rates."""

    def __init__(
        self,
        optimizer: Optimizer,
        factor: float = 1.0 / 3,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def _factor(self) -> float | None:
        if self.last_epoch == 0:
            return self.factor
        if self.last_epoch != self.total_iters:
            return None
        return 1.0 / self.factor

    def _closed_factor(self) -> float:
        return self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor)


class LinearLR(_FactorScheduler):
    """The rates' factor moves linearly from ``start_factor`` to ``end_factor`` over
    ``total_iters`` epochs."""

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and less or "
                "equal to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def _factor(self) -> float | None:
        if self.last_epoch == 0:
            return self.start_factor
        if self._is_initial or self.last_epoch > self.total_iters:
            return None
        delta = self.end_factor - self.start_factor
        return 1.0 + delta / (self.total_iters * self.start_factor + (self.last_epoch - 1) * delta)

    def _closed_factor(self) -> float:
        delta = self.end_factor - self.start_factor
        return self.start_factor + delta * min(self.total_iters, self.last_epoch) / self.total_iters


class ExponentialLR(_FactorScheduler):
    """Decay the rates by ``gamma`` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _factor(self) -> float | None:
        return None if self._is_initial else self.gamma

    def _closed_factor(self) -> float:
        return self.gamma**self.last_epoch


class PolynomialLR(_FactorScheduler):
    """Decay the rates by ``(1 - epoch / total_iters) ** power`` until ``total_iters``."""

    def __init__(
        self,
        optimizer: Optimizer,
        total_iters: int = 5,
        power: float = 1.0,
        last_epoch: int = -1,
    ) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def _factor(self) -> float | None:
        if self._is_initial or self.last_epoch > self.total_iters:
            return None
        left, before = (
            1.0 - self.last_epoch / self.total_iters,
            1.0 - (self.last_epoch - 1) / self.total_iters,
        )
        return (left / before) ** self.power

    def _closed_factor(self) -> float:
        return (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power


# ------------------------------------------------------------------ cosine
class CosineAnnealingLR(LRScheduler):
    """Anneal the rates along a cosine from the initial rates to ``eta_min`` over ``T_max``
    epochs (and back up again after it, as PyTorch's recursion does)."""

    def __init__(
        self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def _cosine(self, epoch, base_lr):
        return (
            self.eta_min
            + (base_lr - self.eta_min) * (1 + math.cos(epoch * math.pi / self.T_max)) / 2
        )

    def _chained_lr(self) -> list:
        if self._is_initial:
            return self._keep()
        epoch, eta, groups = self.last_epoch, self.eta_min, self.optimizer.param_groups
        if self._step_count == 1 and epoch > 0:
            return [self._cosine(epoch, b) for b in self.base_lrs]
        if (epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            c = math.cos(math.pi / self.T_max)
            return [
                g["lr"] + (b - eta) * (1 - c) / 2
                for b, g in zip(self.base_lrs, groups, strict=True)
            ]
        ratio = (1 + math.cos(math.pi * epoch / self.T_max)) / (
            1 + math.cos(math.pi * (epoch - 1) / self.T_max)
        )
        return [ratio * (g["lr"] - eta) + eta for g in groups]

    def _get_closed_form_lr(self) -> list:
        return [self._cosine(self.last_epoch, b) for b in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from the initial rates to ``eta_min``, restarted every ``T_i``
    epochs, with ``T_i`` growing by ``T_mult`` after each restart; ``step`` takes
    fractional epochs."""

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,
        T_mult: int = 1,
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(
                f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}"
            )
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def _chained_lr(self) -> list:
        c = math.cos(math.pi * self.T_cur / self.T_i)
        return [self.eta_min + (b - self.eta_min) * (1 + c) / 2 for b in self.base_lrs]

    def step(self, epoch=None) -> None:
        """Advance one epoch, or go to ``epoch`` (which may be fractional)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch < self.T_0:
            self.T_i, self.T_cur = self.T_0, epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:
            # restarts so far: the n with T_0 (T_mult^n - 1) / (T_mult - 1) <= epoch
            n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult**n
        self.last_epoch = math.floor(epoch)
        with _flag(self, "_get_lr_called_within_step"):
            self._write_lrs(self.get_lr())


# ------------------------------------------------------------------ composed schedules
def _check_members(owner: str, schedulers: Sequence, optimizer: Optimizer) -> None:
    for i, sched in enumerate(schedulers):
        if not hasattr(sched, "optimizer"):
            raise TypeError(f"{owner} at index {i} should have `optimizer` as its attribute.")
        if isinstance(sched, ReduceLROnPlateau):
            raise ValueError(
                f"{owner} does not support `ReduceLROnPlateau` scheduler as it "
                "requires additional kwargs to be specified when calling `step`, "
                f"but got one at index {i} in the given schedulers sequence."
            )
        if optimizer != sched.optimizer:
            raise ValueError(
                f"{owner} expects all schedulers to belong to the same optimizer, but "
                f"got scheduler {type(sched).__name__} at index {i} has {sched.optimizer}, "
                f"which is different from {type(optimizer).__name__}."
            )


class SequentialLR(LRScheduler):
    """Run ``schedulers`` one after another, switching at each of ``milestones``."""

    def __init__(
        self,
        optimizer: Optimizer,
        schedulers: list[LRScheduler],
        milestones: list[int],
        last_epoch: int = -1,
    ) -> None:
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
        _check_members(name, schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                f"than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to {len(milestones)}"
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            _assign(group, "lr", group["initial_lr"])
        # the member schedulers each took their initial step when built: take it back
        self.recursive_undo()
        first = schedulers[bisect_right(milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def recursive_undo(self, sched=None) -> None:
        """Step every (nested) member scheduler's ``last_epoch`` back by one."""
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self) -> None:
        """Step the scheduler of the current phase (restarting it at its milestone)."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        sched = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            sched._update_lr(0)
        else:
            sched.step()
        self._last_lr = sched.get_last_lr()


class ChainedScheduler(LRScheduler):
    """Step all ``schedulers`` at once, each on the rates the previous one left."""

    def __init__(
        self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None
    ) -> None:
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(
                f"{name} expects at least one scheduler to be chained, but got no scheduler."
            )
        optimizer = optimizer or schedulers[0].optimizer
        _check_members(name, schedulers, optimizer)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _values(schedulers[-1].optimizer, "lr")

    def step(self) -> None:
        """Step every scheduler in order."""
        for sched in self._schedulers:
            sched.step()
        self._last_lr = _values(self._schedulers[-1].optimizer, "lr")


# ------------------------------------------------------------------ plateau
class ReduceLROnPlateau(LRScheduler):
    """Multiply the rates by ``factor`` once a metric has stopped improving for
    ``patience`` steps; ``step(metric)`` takes the metric."""

    def __init__(
        self,
        optimizer: Optimizer,
        mode: Literal["min", "max"] = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: Literal["rel", "abs"] = "rel",
        cooldown: int = 0,
        min_lr: list[float] | float = 0,
        eps: float = 1e-8,
    ) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(
                    f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}"
                )
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _values(optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics: SupportsFloat, epoch=None) -> None:
        """Record this step's metric; reduce the rates if it has plateaued."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _values(self.optimizer, "lr")

    def _reduce_lr(self, epoch) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    "The number of param groups in the `optimizer` "
                    f"({len(groups)}) differs "
                    f"from when `ReduceLROnPlateau` was initialized "
                    f"({len(self.min_lrs)}), usually due to a new "
                    "param group being added to the optimizer. Please "
                    "modify the `min_lrs` field to match the length "
                    "of the `optimizer` param groups."
                )
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, min_lr)
            if old - new > self.eps:
                _assign(group, "lr", new)

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        rel = self.threshold_mode == "rel"
        if self.mode == "min":
            return a < best * (1.0 - self.threshold) if rel else a < best - self.threshold
        return a > best * (self.threshold + 1.0) if rel else a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def _after_load(self) -> None:
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)


# ------------------------------------------------------------------ cyclic
_SCALE_MODES = {"triangular": "cycle", "triangular2": "cycle", "exp_range": "iterations"}


class CyclicLR(LRScheduler):
    """Cycle the rates between ``base_lr`` and ``max_lr`` (and the momentum, inversely,
    between ``max_momentum`` and ``base_momentum``) with a triangular wave."""

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr: float | list[float],
        max_lr: float | list[float],
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: Literal["triangular", "triangular2", "exp_range"] = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: Literal["cycle", "iterations"] = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float = 0.8,
        max_momentum: float = 0.9,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                _assign(group, "lr", lr)
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in _SCALE_MODES and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_mode()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1, self.base_momentums, self.max_momentums = _init_momentum(
                optimizer, base_momentum, max_momentum, last_epoch
            )
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_mode(self) -> None:
        """A built-in mode fixes whether its scale follows cycles or iterations."""
        if self._scale_fn_custom is None:
            self.scale_mode = _SCALE_MODES[self.mode]

    _after_load = _init_scale_mode

    def scale_fn(self, x) -> float:
        """The amplitude's scale at cycle (or iteration) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def _chained_lr(self) -> list:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            rise = x / self.step_ratio
        else:
            rise = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [
            lo + (hi - lo) * rise * scale
            for lo, hi in zip(self.base_lrs, self.max_lrs, strict=True)
        ]
        if self.cycle_momentum:
            bounds = zip(
                self.base_momentums, self.max_momentums, self.optimizer.param_groups, strict=True
            )
            for lo, hi, group in bounds:
                _set_momentum(group, hi - (hi - lo) * rise * scale, self.use_beta1)
        return lrs


# ------------------------------------------------------------------ one cycle
def _annealing_cos(start, end, pct):
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


def _annealing_linear(start, end, pct):
    return (end - start) * pct + start


def _phase(end_step, start_lr: str, end_lr: str, start_momentum: str, end_momentum: str) -> dict:
    return {
        "end_step": end_step,
        "start_lr": start_lr,
        "end_lr": end_lr,
        "start_momentum": start_momentum,
        "end_momentum": end_momentum,
    }


def _check_positive_int(name: str, value) -> None:
    if not isinstance(value, int) or value <= 0:
        raise ValueError(f"Expected positive integer {name}, but got {value}")


class OneCycleLR(LRScheduler):
    """The 1cycle policy: the rates rise from ``max_lr / div_factor`` to ``max_lr``, then
    anneal to ``initial_lr / final_div_factor`` (momentum moves the other way), over
    ``total_steps`` (or ``epochs * steps_per_epoch``) steps."""

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | list[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: Literal["cos", "linear"] = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            _check_positive_int("total_steps", total_steps)
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            _check_positive_int("epochs", epochs)
            _check_positive_int("steps_per_epoch", steps_per_epoch)
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        rise_end = float(pct_start * self.total_steps) - 1
        last = self.total_steps - 1
        if three_phase:
            self._schedule_phases = [
                _phase(rise_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(
                    float(2 * pct_start * self.total_steps) - 2,
                    "max_lr",
                    "initial_lr",
                    "base_momentum",
                    "max_momentum",
                ),
                _phase(last, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._schedule_phases = [
                _phase(rise_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(last, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy
        max_lrs = _format_param("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for top, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1, _, _ = _init_momentum(
                optimizer, base_momentum, max_momentum, last_epoch
            )
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, start, end, pct):
        anneal = _annealing_cos if self._anneal_func_type == "cos" else _annealing_linear
        return anneal(start, end, pct)

    def _chained_lr(self) -> list:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"Tried to step {step} times. The specified number of total steps is "
                f"{self.total_steps}"
            )
        # the phase holding this step, and the step where it starts
        start, phases = 0.0, self._schedule_phases
        for i, phase in enumerate(phases):
            if step <= phase["end_step"] or i == len(phases) - 1:
                break
            start = phase["end_step"]
        pct = (step - start) / (phase["end_step"] - start)
        lrs = []
        for group in self.optimizer.param_groups:
            lrs.append(self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct))
            if self.cycle_momentum:
                momentum = self._anneal_func(
                    group[phase["start_momentum"]], group[phase["end_momentum"]], pct
                )
                _set_momentum(group, momentum, self.use_beta1)
        return lrs
