"""torch.optim.Adamax: Adam with the infinity norm for the second moment."""

from __future__ import annotations

from .._core.tensor import Tensor
from .adam import _moments_state
from .optimizer import ParamsT, _check, _count, _l2, _num, _PerParameter, _saved

__all__ = ["Adamax"]


class Adamax(_PerParameter):
    """Adamax (Kingma & Ba, section 7), as torch.optim.Adamax."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check(lr, epsilon=eps, betas=betas, weight_decay=weight_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict) -> dict:
        return _moments_state(p, "exp_avg", "exp_inf")

    def _update(self, p, grad, state, group, lr):
        step = _count(state)
        beta1, beta2 = group["betas"]
        grad = _l2(p, grad, group["weight_decay"])
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_inf.copy_(_saved(exp_inf.mul_(beta2), group).maximum(grad.abs().add_(group["eps"])))
        p.addcdiv_(exp_avg, exp_inf, value=_num(-lr / (1 - beta1**step)))
