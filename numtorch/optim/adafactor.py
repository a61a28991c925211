"""torch.optim.Adafactor (Shazeer and Stern): second moments factored over the last two
dimensions."""

from __future__ import annotations

from collections.abc import Callable

from .._core import dtype as dt
from .._core.tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..ops.creation import tensor, zeros, zeros_like
from .optimizer import Optimizer, ParamsT, _num, _run_closure, _scalar_dtype

__all__ = ["Adafactor"]


def _check_args(lr, beta2_decay, eps, d, weight_decay) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
    if not 0.0 >= beta2_decay:
        raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
    if eps[0] is not None and not 0.0 <= eps[0]:
        raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
    if not 0.0 <= eps[1]:
        raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
    if not 1.0 <= d:
        raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")


class Adafactor(Optimizer):
    """Adafactor, as torch.optim.Adafactor: a matrix (or batch of matrices) keeps a row and a
    column variance, a vector its own variance."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        _check_args(lr, beta2_decay, eps, d, weight_decay)
        defaults = dict(
            lr=lr,
            beta2_decay=beta2_decay,
            eps=eps,
            d=d,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            for p in group["params"]:
                st = self.state.get(p, {})
                if "step" in st and not isinstance(st["step"], Tensor):
                    st["step"] = tensor(float(st["step"]), dtype=_scalar_dtype())

    @staticmethod
    def _init_state(grad: Tensor) -> dict:
        state = {"step": tensor(0.0, dtype=_scalar_dtype())}
        if grad.dim() > 1:
            row, col = list(grad.shape), list(grad.shape)
            row[-1] = 1
            col[-2] = 1
            state["row_var"] = zeros(row, dtype=grad.dtype, device=grad.device)
            state["col_var"] = zeros(col, dtype=grad.dtype, device=grad.device)
        else:
            state["variance"] = zeros_like(grad)
        return state

    @no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:
        """Perform one optimization step; returns the closure's loss (None without one)."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.is_complex():
                    raise RuntimeError("Adafactor does not support complex parameters")
                state = self.state[p]
                if len(state) == 0:
                    state.update(self._init_state(p.grad))
                grad = -p.grad if group["maximize"] else p.grad
                _update(p, grad, state, group)
        return loss


def _update(p: Tensor, grad: Tensor, state: dict, group: dict) -> None:
    lr = group["lr"]  # a one-element tensor lr keeps its dtype in the arithmetic, as in PyTorch
    if isinstance(lr, Tensor):
        lr = lr.reshape(())
    eps1, eps2 = group["eps"]
    if eps1 is None:
        eps1 = dt.finfo(p.dtype).eps
    state["step"].add_(1)
    step = state["step"].item()
    one_minus_beta2 = step ** group["beta2_decay"]
    rho = min(lr, 1 / (step**0.5))
    alpha = max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * rho
    if group["weight_decay"] != 0:
        p.mul_(1 - lr * group["weight_decay"])
    if grad.dim() > 1:
        row_var, col_var = state["row_var"], state["col_var"]
        row_var.lerp_(
            grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1)), one_minus_beta2
        )
        col_var.lerp_(
            grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2)), one_minus_beta2
        )
        estimate = row_var @ col_var
        estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
    else:
        variance = state["variance"]
        variance.lerp_(grad * grad, one_minus_beta2)
        estimate = variance.clone()
    update = estimate.clamp_(min=eps1 * eps1).rsqrt_()
    update.mul_(grad)
    denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * group["d"]))
    p.add_(update, alpha=_num(-alpha / denom))
