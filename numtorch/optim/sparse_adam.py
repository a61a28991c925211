"""torch.optim.SparseAdam. numtorch has no sparse tensors, so a step with a gradient fails
as PyTorch's does for a dense one."""

from __future__ import annotations

from collections.abc import Callable

from .._core.tensor import Tensor
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, ParamsT, _run_closure

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam, as torch.optim.SparseAdam: the constructor's checks and defaults; a step
    refuses every (dense) gradient with PyTorch's error."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        maximize: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        complex_params = [
            [i, j]
            for i, group in enumerate(self.param_groups)
            for j, p in enumerate(group["params"])
            if p.is_complex()
        ]
        if complex_params:
            raise ValueError(
                f"Complex params at indices {complex_params}: SparseAdam does not support "
                "complex parameters"
            )

    @no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:
        """Perform one optimization step: every gradient numtorch makes is dense, which
        SparseAdam refuses."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    raise RuntimeError(
                        "SparseAdam does not support dense gradients, please consider Adam instead"
                    )
        return loss
