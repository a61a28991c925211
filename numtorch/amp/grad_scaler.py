"""torch.amp.GradScaler: loss scaling for mixed precision training. The loss is multiplied by
a scale before backward; ``step`` unscales the gradients and skips the optimizer's step
where any is inf or NaN; ``update`` backs the scale off after such a step and grows it after
``growth_interval`` clean ones."""

from __future__ import annotations

import inspect
import warnings
from collections import abc, defaultdict
from enum import Enum
from typing import Any

from .._core import dtype as dt
from .._core.device import device as _device
from .._core.device import is_cuda_available
from .._core.tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..ops.creation import full

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class _PerDevice:
    """A 0-d tensor and its copies on the other devices it is asked for."""

    def __init__(self, master: Tensor) -> None:
        self.master = master
        self.copies: dict[_device, Tensor] = {}

    def get(self, device: _device) -> Tensor:
        t = self.copies.get(device)
        if t is None:
            t = self.copies[device] = self.master.to(device=device, copy=True)
        return t


def _non_finite_check_and_unscale_(grads: list, found_inf: Tensor, inv_scale: Tensor) -> None:
    """Multiply each gradient by ``inv_scale``; set ``found_inf`` to 1 where one holds an
    inf or NaN (torch._amp_foreach_non_finite_check_and_unscale_)."""
    for g in grads:
        if not bool(g.isfinite().all()):
            found_inf.fill_(1.0)
        g.mul_(inv_scale)


def _update_scale_(
    scale: Tensor,
    growth_tracker: Tensor,
    found_inf: Tensor,
    growth_factor: float,
    backoff_factor: float,
    growth_interval: int,
) -> None:
    """Back the scale off after an overflow, grow it (if it stays finite) after
    ``growth_interval`` clean steps in a row (torch._amp_update_scale_)."""
    if found_inf.item():
        scale.mul_(backoff_factor)
        growth_tracker.fill_(0)
        return
    successful = growth_tracker.item() + 1
    if successful == growth_interval:
        grown = scale * growth_factor
        if bool(grown.isfinite()):
            scale.copy_(grown)
        growth_tracker.fill_(0)
    else:
        growth_tracker.fill_(successful)


class GradScaler:
    """Scales losses and unscales gradients for mixed precision training (see module doc).
    With ``enabled=False`` every method passes through."""

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled and not is_cuda_available():
            warnings.warn(
                "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                stacklevel=2,
            )
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale: Tensor | None = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker: Tensor | None = None
            self._per_optimizer_states: dict[int, dict[str, Any]] = defaultdict(_fresh_state)

    def _check_scale_growth_tracker(self, funcname: str) -> tuple[Tensor, Tensor]:
        fix = (
            "This may indicate your script did not use scaler.scale(loss or outputs) earlier "
            "in the iteration."
        )
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev: _device) -> None:
        self._scale = full((), self._init_scale, dtype=dt.float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=dt.int32, device=dev)

    def scale(self, outputs):
        """``outputs`` (a tensor, or tensors in nested lists and tuples) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device)
        stash: list[_PerDevice] = []

        def apply_scale(val):
            if isinstance(val, Tensor):
                if not stash:
                    if self._scale is None:
                        self._lazy_init_scale_growth_tracker(val.device)
                    stash.append(_PerDevice(self._scale))
                return val * stash[0].get(val.device)
            if isinstance(val, abc.Iterable):
                scaled = map(apply_scale, val)
                return type(val)(scaled) if isinstance(val, (list, tuple)) else scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale: Tensor, found_inf: Tensor, allow_fp16: bool):
        inv_scales, found_infs = _PerDevice(inv_scale), _PerDevice(found_inf)
        grads: dict = defaultdict(lambda: defaultdict(list))
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, Tensor):
                        raise AssertionError(
                            f"expected param to be torch.Tensor, got {type(param).__name__}"
                        )
                    if param.grad is None:
                        continue
                    if not allow_fp16 and param.grad.dtype is dt.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    grads[param.grad.device][param.grad.dtype].append(param.grad)
            for device, per_dtype in grads.items():
                for group_grads in per_dtype.values():
                    _non_finite_check_and_unscale_(
                        group_grads, found_infs.get(device), inv_scales.get(device)
                    )
        return found_infs.copies

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale, in place (once per step)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = full((), 0.0, dtype=dt.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args: Any, **kwargs: Any):
        """Unscale the gradients (unless ``unscale_`` did) and run ``optimizer.step`` unless
        one of them holds an inf or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if getattr(optimizer, "_step_supports_amp_scaling", False):
            return self._step_self_scaling(optimizer, state, args, kwargs)
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def _step_self_scaling(self, optimizer, state: dict, args: tuple, kwargs: dict):
        """Step an optimizer that unscales its gradients itself: one whose ``step`` takes a
        ``grad_scaler`` gets this scaler; any other finds the scale and the inf flag in its
        ``grad_scale`` and ``found_inf`` attributes for the length of the step."""
        has_grad_scaler_kwarg = "grad_scaler" in inspect.signature(optimizer.step).parameters
        if has_grad_scaler_kwarg:
            warnings.warn(
                "GradScaler is going to stop passing itself as a keyword argument to the passed "
                "optimizer. In the near future GradScaler registers `grad_scale: Tensor` and "
                "`found_inf: Tensor` to the passed optimizer and let the optimizer use them "
                "directly.",
                FutureWarning,
                stacklevel=3,
            )
            kwargs["grad_scaler"] = self
        else:
            if state["stage"] is OptState.READY:
                self._check_inf_per_device(optimizer)
            scale = self._get_scale_async()
            found_inf = sum(
                t.to(device=scale.device) for t in state["found_inf_per_device"].values()
            )
            # an earlier unscale_ leaves the gradients unscaled: the step must not divide again
            optimizer.grad_scale = (
                getattr(optimizer, "grad_scale", None)
                if state["stage"] is OptState.UNSCALED
                else scale * getattr(optimizer, "grad_scale", 1)
            )
            optimizer.found_inf = found_inf
        retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        if not has_grad_scaler_kwarg:
            del optimizer.grad_scale
            del optimizer.found_inf
        return retval

    def _check_inf_per_device(self, optimizer) -> dict:
        """Record (without unscaling) whether ``optimizer``'s gradients hold an inf or NaN."""
        _scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")
        dummy_inv_scale = full((), 1.0, dtype=dt.float32, device=_scale.device)
        found_inf = full((), 0.0, dtype=dt.float32, device=_scale.device)
        state = self._per_optimizer_states[id(optimizer)]
        state["found_inf_per_device"] = self._unscale_grads_(
            optimizer, dummy_inv_scale, found_inf, True
        )
        return state["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer) -> dict:
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def _get_scale_async(self) -> Tensor | None:
        return self._scale

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Set the scale for the next iteration: ``new_scale``, or backed off or grown by
        what the steps since the last update found."""
        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                _scale.fill_(new_scale)
            else:
                reason = (
                    "new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                    "torch.FloatTensor with requires_grad=False."
                )
                if new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad is True:
                    raise AssertionError(reason)
                _scale.copy_(new_scale)
        else:
            found_infs = [
                found_inf.to(device=_scale.device)
                for state in self._per_optimizer_states.values()
                for found_inf in state["found_inf_per_device"].values()
            ]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            combined = found_infs[0]
            for other in found_infs[1:]:
                combined += other
            _update_scale_(
                _scale,
                _growth_tracker,
                combined,
                self._growth_factor,
                self._backoff_factor,
                self._growth_interval,
            )
        self._per_optimizer_states = defaultdict(_fresh_state)

    def get_scale(self) -> float:
        """The current scale (1.0 where disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        if self._growth_tracker is None:
            return self._init_growth_tracker
        return int(self._growth_tracker.item())

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """The scale, the factors, the interval and the growth tracker (empty if disabled)."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._get_growth_tracker(),
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError(
                    "A GradScaler instance may only be pickled at the beginning "
                    "of an iteration, or at the end after scaler.update()."
                )
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
