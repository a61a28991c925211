"""torch.optim.Adadelta."""

from __future__ import annotations

from .._core.tensor import Tensor
from .adam import _moments_state
from .optimizer import ParamsT, _check, _count, _l2, _num, _PerParameter, _saved

__all__ = ["Adadelta"]


class Adadelta(_PerParameter):
    """Adadelta (Zeiler), as torch.optim.Adadelta."""

    _capturable_devices = ["cuda", "xpu", "hpu", "privateuseone"]

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check(lr, epsilon=eps, weight_decay=weight_decay)
        defaults = dict(
            lr=lr,
            rho=rho,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            capturable=capturable,
            foreach=foreach,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict) -> dict:
        return _moments_state(p, "square_avg", "acc_delta")

    def _update(self, p, grad, state, group, lr):
        _count(state)
        rho, eps = group["rho"], group["eps"]
        grad = _l2(p, grad, group["weight_decay"])
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = _saved(acc_delta.add(eps).sqrt_(), group).div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        p.add_(delta, alpha=_num(-lr))
