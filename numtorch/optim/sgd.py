"""torch.optim.SGD: stochastic gradient descent with momentum, dampening and Nesterov."""

from __future__ import annotations

from collections.abc import Callable

from .._core.tensor import Tensor
from .optimizer import (
    Optimizer,
    ParamsT,
    _check,
    _check_fused,
    _l2,
    _run_closure,
    _use_grad_for_differentiable,
)

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum), as torch.optim.SGD."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float | Tensor = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        _check(lr, momentum=momentum, weight_decay=weight_decay)
        defaults = dict(
            lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
            nesterov=nesterov, maximize=maximize, foreach=foreach,
            differentiable=differentiable, fused=fused,
        )  # fmt: skip
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], float] | None = None) -> float | None:
        """Perform one optimization step; returns the closure's loss."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            lr, mu, wd = float(group["lr"]), group["momentum"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = _l2(p, -p.grad if group["maximize"] else p.grad, wd)
                if mu != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = grad.detach().clone()
                    else:
                        buf.mul_(mu).add_(grad, alpha=1 - group["dampening"])
                    grad = grad.add(buf, alpha=mu) if group["nesterov"] else buf
                p.add_(grad, alpha=-lr)
        return loss
