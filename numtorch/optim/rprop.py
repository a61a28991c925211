"""torch.optim.Rprop: resilient backpropagation."""

from __future__ import annotations

from .._core.tensor import Tensor
from ..ops.creation import full_like, zeros_like
from .optimizer import ParamsT, _check_lr, _count, _new_step, _PerParameter, _saved

__all__ = ["Rprop"]


class Rprop(_PerParameter):
    """Rprop (Riedmiller & Braun): per-element step sizes grown or shrunk by the sign
    agreement of successive gradients, as torch.optim.Rprop."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(
            lr=lr,
            etas=etas,
            step_sizes=step_sizes,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict) -> dict:
        return {
            "step": _new_step(),
            "prev": zeros_like(p),
            "step_size": full_like(p.grad, float(group["lr"])),
        }

    def _update(self, p, grad, state, group, lr):
        _count(state)
        etaminus, etaplus = group["etas"]
        lo, hi = group["step_sizes"]
        agree = grad.mul(_saved(state["prev"], group)).sign()
        factor = agree.masked_fill(agree.gt(0), etaplus).masked_fill_(agree.lt(0), etaminus)
        factor = factor.masked_fill_(agree.eq(0), 1)
        step_size = state["step_size"].mul_(factor).clamp_(lo, hi)
        # after a sign change the step is skipped and the gradient forgotten
        grad = grad.masked_fill(factor.eq(etaminus), 0)
        p.addcmul_(grad.sign(), step_size, value=-1)
        state["prev"].copy_(grad)
