"""torch.optim.Adam, and the moment updates the Adam family shares."""

from __future__ import annotations

from .._core.tensor import Tensor
from ..ops.creation import zeros_like
from .optimizer import (
    ParamsT,
    _check,
    _check_fused,
    _count,
    _new_step,
    _num,
    _PerParameter,
    _saved,
    _weight_decay,
)

__all__ = ["Adam"]


def _check_betas_kind(betas, foreach: bool | None, capturable: bool) -> None:
    if not (
        (isinstance(betas[0], float) and isinstance(betas[1], float))
        or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))
    ):
        raise ValueError("betas must be either both floats or both Tensors")
    for i, beta in enumerate(betas):
        if isinstance(beta, Tensor):
            if not capturable and foreach:
                raise ValueError(
                    f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True"
                )
            if beta.numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")


def _moments_state(p: Tensor, *names: str) -> dict:
    """A fresh 'step' counter and zero buffers shaped like ``p``."""
    return {"step": _new_step(), **{name: zeros_like(p) for name in names}}


def _update_moments(state: dict, grad: Tensor, beta1: float, beta2: float) -> None:
    """exp_avg <- lerp toward grad by 1 - beta1; exp_avg_sq <- beta2 * it + (1 - beta2) g^2."""
    state["exp_avg"].lerp_(grad, 1 - beta1)
    state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)


class Adam(_PerParameter):
    """Adam (Kingma & Ba), optionally AMSGrad and decoupled weight decay, as torch.optim.Adam."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError(
                "lr as a Tensor is not supported for capturable=False and foreach=True"
            )
        _check(lr, epsilon=eps, betas=betas, weight_decay=weight_decay)
        _check_betas_kind(betas, foreach, capturable)
        defaults = dict(
            lr=lr,
            betas=tuple(betas),
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        super().__init__(params, defaults)
        _check_fused(self, fused, foreach, differentiable)

    def _init_state(self, p: Tensor, group: dict) -> dict:
        names = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if group["amsgrad"] else ())
        state = _moments_state(p, *names)
        if group["capturable"] or group["fused"]:
            state["step"] = _new_step(group["fused"], p.device)
        return state

    def _update(self, p, grad, state, group, lr):
        step = _count(state)
        beta1, beta2 = (float(b) for b in group["betas"])
        grad = _weight_decay(p, grad, group)
        _update_moments(state, grad, beta1, beta2)
        second = state["exp_avg_sq"]
        if group["amsgrad"]:
            peak = state["max_exp_avg_sq"]
            second = peak.copy_(_saved(peak, group).maximum(second))
        exp_avg = _saved(state["exp_avg"], group)
        if group["capturable"] or group["differentiable"]:
            # PyTorch's tensor form: bias corrections computed from the 'step' tensor, in
            # its dtype
            step = state["step"]
            neg_size = (lr / (1 - beta1**step)).neg()
            denom = (second.sqrt() / ((1 - beta2**step).sqrt() * neg_size)).add_(
                group["eps"] / neg_size
            )
            p.addcdiv_(exp_avg, denom)
        else:
            denom = (second.sqrt() / (1 - beta2**step) ** 0.5).add_(group["eps"])
            p.addcdiv_(exp_avg, denom, value=_num(-lr / (1 - beta1**step)))
