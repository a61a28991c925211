"""torch.optim.NAdam: Adam with Nesterov momentum and a momentum-decay schedule."""

from __future__ import annotations

from .._core.tensor import Tensor
from ..ops.creation import ones
from .adam import _moments_state, _update_moments
from .optimizer import (
    ParamsT,
    _check,
    _count,
    _num,
    _PerParameter,
    _scalar_dtype,
    _weight_decay,
)

__all__ = ["NAdam"]


class NAdam(_PerParameter):
    """NAdam (Dozat), as torch.optim.NAdam; ``decoupled_weight_decay`` gives NAdamW."""

    _capturable_what = "params, mu_products and state_steps"

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check(
            lr, epsilon=eps, betas=betas, weight_decay=weight_decay, momentum_decay=momentum_decay
        )
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            momentum_decay=momentum_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict) -> dict:
        state = _moments_state(p, "exp_avg", "exp_avg_sq")
        # the product of the momentum schedule, kept in the scalar dtype as PyTorch keeps it
        state["mu_product"] = ones((), dtype=_scalar_dtype())
        return {k: state[k] for k in ("step", "mu_product", "exp_avg", "exp_avg_sq")}

    def _update(self, p, grad, state, group, lr):
        step = _count(state)
        # PyTorch's tensor form (capturable or differentiable) keeps mu_product a tensor; a
        # capturable step also computes the schedule from the 'step' tensor, in its dtype
        tensor_form = group["capturable"] or group["differentiable"]
        if group["capturable"]:
            step = state["step"]
        beta1, beta2 = group["betas"]
        grad = _weight_decay(p, grad, group)
        decay = group["momentum_decay"]
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * decay))
        mu_product = state["mu_product"].mul_(mu)
        _update_moments(state, grad, beta1, beta2)
        denom = state["exp_avg_sq"].div(1 - beta2**step).sqrt() + group["eps"]
        if tensor_form:
            p.addcdiv_(grad * (-lr * (1.0 - mu) / (1.0 - mu_product)), denom)
            coef = -lr * mu_next / (1.0 - mu_product * mu_next)
            p.addcdiv_(state["exp_avg"] * coef, denom)
        else:
            mu_product = mu_product.item()
            p.addcdiv_(grad, denom, value=_num(-lr * (1.0 - mu) / (1.0 - mu_product)))
            coef = _num(-lr * mu_next / (1.0 - mu_product * mu_next))
            p.addcdiv_(state["exp_avg"], denom, value=coef)
