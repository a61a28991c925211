"""torch.optim.Adagrad."""

from __future__ import annotations

from .._core.tensor import Tensor
from ..ops.creation import full_like
from .optimizer import ParamsT, _check, _check_fused, _count, _l2, _new_step, _num, _PerParameter

__all__ = ["Adagrad"]


class Adagrad(_PerParameter):
    """Adagrad (Duchi et al.), as torch.optim.Adagrad; its state exists from construction."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        _check(
            lr,
            lr_decay=lr_decay,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            epsilon=eps,
        )
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            eps=eps,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)
        _check_fused(self, fused, foreach, differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p].update(self._init_state(p, group))

    def _init_state(self, p: Tensor, group: dict) -> dict:
        # PyTorch takes the accumulator's start from the defaults, not the group
        init = self.defaults["initial_accumulator_value"]
        step = _new_step(True, p.device) if group["fused"] else _new_step()
        return {"step": step, "sum": full_like(p, init)}

    def share_memory(self) -> None:
        """A no-op: NumPy state needs no sharing between processes here."""

    def _update(self, p, grad, state, group, lr):
        step = _count(state)
        grad = _l2(p, grad, group["weight_decay"])
        clr = lr / (1 + (step - 1) * group["lr_decay"])
        state["sum"].addcmul_(grad, grad, value=1)
        p.addcdiv_(grad, state["sum"].sqrt() + group["eps"], value=_num(-clr))
