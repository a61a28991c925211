"""torch.optim.LBFGS: limited-memory BFGS, with an optional strong-Wolfe line search."""

from __future__ import annotations

from collections.abc import Callable

from .._core.tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..ops.creation import zeros
from ..ops.shape import cat as _cat
from .optimizer import Optimizer, ParamsT, _check_lr, _num, _run_closure

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimizer of the cubic through (x1, f1, g1) and (x2, f2, g2), clipped to
    ``bounds`` (default: the interval); the midpoint when the cubic has no minimum.
    Scalars are numbers or 0-d tensors, as they come (PyTorch keeps the slopes tensors)."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1**2 - g1 * g2
    if not disc >= 0:
        return (lo + hi) / 2.0
    d2 = disc.sqrt()
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, lo), hi)


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step ``t`` along ``d`` from ``x`` meeting the strong Wolfe conditions (Nocedal &
    Wright, algorithms 3.5 and 3.6): bracket, then zoom by cubic interpolation.
    ``obj_func(x, t, d)`` is (loss, flat gradient) at the step; PyTorch's signature, which
    libraries call. Returns (loss, gradient, t, evaluations)."""

    def evaluate(step):
        return obj_func(x, step, d)

    d_norm = d.abs().max()
    f_new, g_new = evaluate(t)
    evals, it = 1, 0
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g.clone(), gtd
    done = False
    # bracketing phase
    while it < max_ls:
        if f_new > f + c1 * t * gtd or (it > 1 and f_new >= f_prev):
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new.clone(), gtd_new]]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, done = [[t, f_new, g_new, gtd_new]], True
            break
        if gtd_new >= 0:
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new.clone(), gtd_new]]
            break
        lo, hi = t + 0.01 * (t - t_prev), t * 10
        t_next = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(lo, hi))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new.clone(), gtd_new
        t = t_next
        f_new, g_new = evaluate(t)
        evals, it = evals + 1, it + 1
        gtd_new = g_new.dot(d)
    if it == max_ls:
        bracket = [[0, f, g, None], [t, f_new, g_new, None]]
    # zoom phase: shrink the bracket [low, high] around a point meeting the conditions
    low = 0 if bracket[0][1] <= bracket[-1][1] else 1
    insufficient = False
    while not done and it < max_ls:
        (t0, f0, _, gtd0), (t1, f1, _, gtd1) = bracket
        if abs(t1 - t0) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(t0, f0, gtd0, t1, f1, gtd1)
        top, bottom = max(t0, t1), min(t0, t1)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:
            # too close to an end: move away from it unless the last step made progress
            if insufficient or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(t)
        evals, it = evals + 1, it + 1
        gtd_new = g_new.dot(d)
        high = 1 - low
        if f_new > f + c1 * t * gtd or f_new >= bracket[low][1]:
            bracket[high] = [t, f_new, g_new.clone(), gtd_new]
            low = 0 if bracket[0][1] <= bracket[1][1] else 1
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = [t, f_new, g_new.clone(), gtd_new]
    t, f_new, g_new, _ = bracket[low]
    return f_new, g_new, t, evals


class LBFGS(Optimizer):
    """L-BFGS (after minFunc), as torch.optim.LBFGS: one parameter group; ``step`` needs a
    closure that re-evaluates the loss and its gradients."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        _check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(
            lr=lr,
            max_iter=max_iter,
            max_eval=max_eval,
            tolerance_grad=tolerance_grad,
            tolerance_change=tolerance_change,
            history_size=history_size,
            line_search_fn=line_search_fn,
        )
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self) -> Tensor:
        return _cat(
            [
                zeros(p.numel(), dtype=p.dtype) if p.grad is None else p.grad.reshape(-1)
                for p in self._params
            ]
        )

    def _add_grad(self, step_size, update: Tensor) -> None:
        """params += step_size * update (update flat, in parameter order)."""
        offset, step_size = 0, _num(step_size)
        for p in self._params:
            p.add_(update[offset : offset + p.numel()].view_as(p), alpha=step_size)
            offset += p.numel()

    def _evaluate(self, closure: Callable) -> tuple[float, Tensor]:
        return float(_run_closure(closure)), self._flat_grad()

    def _directional_evaluate(self, closure, x, t, d) -> tuple[float, Tensor]:
        """Loss and gradient at x + t d; the parameters are put back to x."""
        self._add_grad(t, d)
        out = self._evaluate(closure)
        for p, value in zip(self._params, x):
            p.copy_(value)
        return out

    @no_grad()
    def step(self, closure: Callable[[], float]) -> float:  # type: ignore[override]
        """Run up to ``max_iter`` L-BFGS iterations; returns the closure's first loss."""
        group = self.param_groups[0]
        lr = group["lr"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = _run_closure(closure)
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag, prev_flat_grad = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")
        n_iter, opt_cond = 0, False
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_dirs, old_stps, ro, H_diag = flat_grad.neg(), [], [], [], 1
            else:
                y, s = flat_grad.sub(prev_flat_grad), d.mul(t)
                ys = y.dot(s)
                if ys > 1e-10:  # keep the curvature pair only when it is positive
                    if len(old_dirs) == group["history_size"]:
                        old_dirs.pop(0), old_stps.pop(0), ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                # two-loop recursion: d = -H g
                al = state.setdefault("al", [None] * group["history_size"])
                q = flat_grad.neg()
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q.add_(old_dirs[i], alpha=_num(-al[i]))
                d = q.mul(H_diag)
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(d) * ro[i]
                    d.add_(old_stps[i], alpha=_num(al[i] - be_i))
            prev_flat_grad = flat_grad.clone()
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # not a descent direction
                break

            ls_evals = 0
            if group["line_search_fn"] is not None:
                if group["line_search_fn"] != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x0 = [p.clone() for p in self._params]
                loss, flat_grad, t, ls_evals = _strong_wolfe(
                    lambda x, step, d: self._directional_evaluate(closure, x, step, d),
                    x0,
                    t,
                    d,
                    loss,
                    flat_grad,
                    gtd,
                    max_ls=max_eval - evals,
                )
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    loss, flat_grad = self._evaluate(closure)
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals
            if (
                n_iter == max_iter
                or evals >= max_eval
                or opt_cond
                or d.mul(t).abs().max() <= tolerance_change
                or abs(loss - prev_loss) < tolerance_change
            ):
                break

        state.update(
            d=d,
            t=t,
            old_dirs=old_dirs,
            old_stps=old_stps,
            ro=ro,
            H_diag=H_diag,
            prev_flat_grad=prev_flat_grad,
            prev_loss=prev_loss,
        )
        return orig_loss
