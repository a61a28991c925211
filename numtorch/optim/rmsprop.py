"""torch.optim.RMSprop."""

from __future__ import annotations

from .._core.tensor import Tensor
from .adam import _moments_state
from .optimizer import ParamsT, _check, _count, _l2, _num, _PerParameter, _saved

__all__ = ["RMSprop"]


class RMSprop(_PerParameter):
    """RMSprop (Hinton), optionally centered and with momentum, as torch.optim.RMSprop."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check(lr, epsilon=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = dict(
            lr=lr,
            momentum=momentum,
            alpha=alpha,
            eps=eps,
            centered=centered,
            weight_decay=weight_decay,
            capturable=capturable,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict) -> dict:
        names = ("square_avg",) + ("momentum_buffer",) * (group["momentum"] > 0)
        return _moments_state(p, *names, *("grad_avg",) * bool(group["centered"]))

    def _update(self, p, grad, state, group, lr):
        _count(state)
        alpha, momentum = group["alpha"], group["momentum"]
        grad = _l2(p, grad, group["weight_decay"])
        square_avg = state["square_avg"].mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if group["centered"]:
            grad_avg = state["grad_avg"].lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg + group["eps"]
        if momentum > 0:
            buf = state["momentum_buffer"].mul_(momentum).addcdiv_(grad, avg)
            p.add_(_saved(buf, group), alpha=_num(-lr))
        else:
            p.addcdiv_(grad, avg, value=_num(-lr))
