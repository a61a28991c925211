"""torch.optim.ASGD: averaged stochastic gradient descent (Polyak and Juditsky)."""

from __future__ import annotations

from .._core.tensor import Tensor
from ..ops.creation import full, ones, tensor, zeros_like
from .optimizer import ParamsT, _check, _count, _l2, _new_step, _num, _PerParameter, _scalar_dtype

__all__ = ["ASGD"]


class ASGD(_PerParameter):
    """ASGD, as torch.optim.ASGD: ``eta`` and ``mu`` are scalar tensors of the state, ``ax``
    the running average of the parameter."""

    _capturable_what = "params, mus, etas, and state_steps"

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check(lr, weight_decay=weight_decay)
        defaults = dict(
            lr=lr,
            lambd=lambd,
            alpha=alpha,
            t0=t0,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        scalar = _scalar_dtype()
        for group in self.param_groups:
            for p in group["params"]:
                st = self.state.get(p, {})
                for key in ("eta", "mu"):
                    if key in st and not isinstance(st[key], Tensor):
                        st[key] = full((), float(st[key]), dtype=scalar, device=p.device)

    def _init_state(self, p: Tensor, group: dict) -> dict:
        # unlike the other optimizers' 'step', ASGD's scalars live on the parameter's device
        scalar, device = _scalar_dtype(), p.device
        return {
            "step": _new_step(device=device),
            "eta": full((), _num(group["lr"]), dtype=scalar, device=device),
            "mu": ones((), dtype=scalar, device=device),
            "ax": zeros_like(p),
        }

    def _update(self, p, grad, state, group, lr):
        if group["foreach"]:
            return self._update_foreach(p, grad, state, group, lr)
        step = _count(state)
        grad = _l2(p, grad, group["weight_decay"])
        eta = state["eta"].item()
        lambd = group["lambd"]
        p.mul_(1 - lambd * eta)
        p.add_(grad, alpha=-eta)
        ax, mu = state["ax"], state["mu"]
        if mu.item() != 1:
            ax.add_(p.sub(ax).mul_(mu))
        else:
            ax.copy_(p)
        # PyTorch makes each new value a tensor of the default dtype (or the lr's), then
        # copies it in
        if isinstance(lr, Tensor):
            lr = lr.reshape(())
        eta = lr / (1 + lambd * lr * step) ** group["alpha"]
        state["eta"].copy_(eta if isinstance(eta, Tensor) else tensor(eta))
        state["mu"].copy_(tensor(1 / max(1, step - group["t0"])))

    @staticmethod
    def _update_foreach(p, grad, state, group, lr) -> None:
        """PyTorch's foreach (multi-tensor) step, whose arithmetic differs from the
        single-tensor one: the decay folds into the gradient, and the new eta is computed
        from the float 'step' tensor."""
        if group["differentiable"]:
            raise AssertionError("_foreach ops don't support autograd")
        step_t = state["step"]
        step_t.add_(1)
        lambd, wd = group["lambd"], group["weight_decay"]
        if wd != 0:
            inter = grad.add(p, alpha=wd)
            inter.add_(p, alpha=lambd)
        else:
            inter = grad.add(p, alpha=lambd)
        p.addcmul_(inter, state["eta"], value=-1)
        ax = state["ax"]
        ax.addcmul_(p.sub(ax), state["mu"])
        if isinstance(lr, Tensor):
            lr = lr.reshape(())
        eta = lr / ((1 + lambd * lr * step_t) ** group["alpha"])
        state["eta"].copy_(eta)
        state["mu"].copy_(tensor(1 / max(1, step_t.item() - group["t0"])))
