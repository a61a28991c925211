"""torch.optim.RAdam: Adam with the variance of the adaptive learning rate rectified."""

from __future__ import annotations

from .._core.tensor import Tensor
from .adam import _moments_state, _update_moments
from .optimizer import ParamsT, _check, _count, _PerParameter, _weight_decay

__all__ = ["RAdam"]


class RAdam(_PerParameter):
    """RAdam (Liu et al.), as torch.optim.RAdam; ``decoupled_weight_decay`` gives RAdamW."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check(lr, epsilon=eps, betas=betas, weight_decay=weight_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            decoupled_weight_decay=decoupled_weight_decay,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict) -> dict:
        return _moments_state(p, "exp_avg", "exp_avg_sq")

    def _update(self, p, grad, state, group, lr):
        step = _count(state)
        beta1, beta2 = group["betas"]
        grad = _weight_decay(p, grad, group)
        _update_moments(state, grad, beta1, beta2)
        bias_correction2 = 1 - beta2**step
        corrected = state["exp_avg"] / (1 - beta1**step)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * beta2**step / bias_correction2
        if rho_t > 5.0:
            # the variance is tractable: rectified adaptive step
            rect = (
                (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
            ) ** 0.5
            adaptive = bias_correction2**0.5 / (state["exp_avg_sq"].sqrt() + group["eps"])
            p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
        else:
            p.add_(corrected * lr, alpha=-1.0)
