"""torch.optim.SGD: stochastic gradient descent with momentum, dampening and Nesterov."""

from __future__ import annotations

from collections.abc import Callable

from .._core.tensor import Tensor, _make, bump_version
from .optimizer import (
    Optimizer,
    ParamsT,
    _amp_skip,
    _arrays,
    _check,
    _check_fused,
    _direct,
    _l2,
    _run_closure,
    _use_grad_for_differentiable,
    _writable,
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
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            foreach=foreach,
            differentiable=differentiable,
            fused=fused,
        )
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused(self, fused, foreach, differentiable)

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
            if _amp_skip(self, group):
                continue
            direct = _direct(group)
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                arrays = _arrays(p, grad) if direct else None
                if arrays is not None:
                    self._step_arrays(p, *arrays, group, lr, mu, wd)
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

    def _step_arrays(self, p: Tensor, pd, gd, group: dict, lr: float, mu, wd) -> None:
        """The step above on p's and its gradient's arrays, op for op (see ``_arrays``)."""
        g = -gd if group["maximize"] else gd
        if wd != 0:
            g = g + wd * pd
        if mu != 0:
            state = self.state[p]
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = _make(g.copy(order="K"))
            else:
                bd = _writable(buf)
                if bd is None:  # a buffer the ops must update
                    buf.mul_(mu).add_(_make(g), alpha=1 - group["dampening"])
                else:
                    bd *= mu
                    a = 1 - group["dampening"]
                    bd += g if a == 1 else a * g
                    bump_version(buf, 2)
            g = g + mu * buf._data if group["nesterov"] else buf._data
        pd += -lr * g
        bump_version(p)
