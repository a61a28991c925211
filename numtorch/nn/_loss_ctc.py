"""The connectionist temporal classification loss, ``ctc_loss``: PyTorch's checks of the
lengths and targets, then the alpha recursion over time run with ops (its gradient, the beta
recursion, is autograd's, to any order).
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtype as dt
from .._core.op import NoKernel, composite
from .._core.tensor import Tensor
from .._opdb.samples import ErrorInput as E
from .._opdb.samples import S
from ..ops.comparison import where
from ..ops.creation import arange, as_tensor, zeros_like
from ..ops.shape import cat as _cat
from ..ops.shape import stack as _stack
from ._checks import concrete
from ._loss_common import _reduction

cat, stack = _cat, _stack


_CTC_FROM = " (while checking arguments for ctc_loss_allocate_outputs)"


def _ctc_lengths(lengths, name: str, n: int, device) -> tuple[Tensor, list | None]:
    """The lengths as an int64 tensor of n entries on ``device``, and their values where
    readable."""
    if isinstance(lengths, (list, tuple)):
        values = [int(v) for v in lengths]
        t = as_tensor(values, dtype=dt.int64, device=device)
    else:
        if lengths.dtype.is_floating_point or lengths.dtype.is_complex or lengths.dtype == dt.bool_:
            raise RuntimeError(f"{name} must be integral")
        t = lengths.reshape(-1).to(dt.int64, device=device)
        v = concrete(t)
        values = None if v is None else v.tolist()
    if t.numel() != n:
        raise RuntimeError(f"{name} must be of size batch_size")
    return t, values


def _check_ctc(targets, n: int, steps: int, il: list | None, tl: list | None) -> None:
    """PyTorch's checks of the lengths against the targets and the time steps."""
    if targets.dim() not in (1, 2):
        raise RuntimeError(
            f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional tensor for "
            f"argument #2 'targets'{_CTC_FROM}"
        )
    if tl is not None:
        for v in tl:
            if v < 0:
                raise RuntimeError(
                    f"Expected target_lengths to have value at least 0, but got value {v}{_CTC_FROM}"
                )
        want, got = (sum(tl), targets.shape[0]) if targets.dim() == 1 else (n, targets.shape[0])
        if got != want:
            raise RuntimeError(
                f"Expected tensor to have size {want} at dimension 0, but got size {got} for "
                f"argument #2 'targets'{_CTC_FROM}"
            )
        if targets.dim() == 2 and tl and targets.shape[1] < max(tl):
            raise RuntimeError(
                f"Expected tensor to have size at least {max(tl)} at dimension 1, but got size "
                f"{targets.shape[1]} for argument #2 'targets'{_CTC_FROM}"
            )
    for v in il or ():
        if v < 0:
            raise RuntimeError(
                f"Expected input_lengths to have value at least 0, but got value {v}{_CTC_FROM}"
            )
        if v > steps:
            raise RuntimeError(
                f"Expected input_lengths to have value at most {steps}, but got value {v}"
                f"{_CTC_FROM}"
            )


def _ctc_padded(targets, tl: Tensor, tl_values, blank: int) -> Tensor:
    """(N, S) labels, padded with the blank: concatenated targets are cut at their offsets
    (S is the longest target where the lengths are known, the whole length otherwise)."""
    if targets.dim() == 2:
        padded, s = targets, targets.shape[1]
    else:
        s = max(tl_values, default=0) if tl_values is not None else targets.shape[0]
        at = (tl.cumsum(0) - tl).unsqueeze(1) + arange(s, device=tl.device)
        padded = targets[at.clamp_max(max(targets.shape[0] - 1, 0))]
    return where(arange(s, device=tl.device) < tl.unsqueeze(1), padded.to(dt.int64), blank)


def _lse(xs) -> Tensor:
    """logsumexp over a sequence of equal-shaped tensors; -inf where all are -inf, with zero
    (not NaN) gradients there."""
    x = stack(xs)
    none = (x == -math.inf).all(0)
    return where(none, -math.inf, where(none, 0.0, x).logsumexp(0))


def _shift(x: Tensor, pad: Tensor, k: int) -> Tensor:
    """x moved k places right along dim 1, -inf coming in."""
    return cat((pad[:, :k], x), 1)[:, : x.shape[1]]


def _ctc_nll(lp, labels, il: Tensor, tl: Tensor, blank: int) -> Tensor:
    """-log p(labels | lp) per batch entry, by the forward (alpha) recursion over time in
    log space over the labels interleaved with blanks; vectorized over the batch."""
    steps, n = lp.shape[0], lp.shape[1]
    blanks = zeros_like(tl).unsqueeze(1) + blank
    ext = cat((stack((zeros_like(labels) + blank, labels), -1).reshape(n, -1), blanks), 1)
    width = ext.shape[1]
    lpe = lp.gather(2, ext.unsqueeze(0).expand(steps, n, width))  # (T, N, 2S + 1)
    # a label may follow the one two places back unless it is a blank or a repeat
    skip = (ext != blank) & (ext != _shift(ext, cat((blanks, blanks), 1), 2))
    pad = zeros_like(lpe[0, :, :2]) - math.inf
    alpha = where(arange(width) == 0, zeros_like(lpe[0]), -math.inf)  # before the first step
    live = il.unsqueeze(1)
    for t in range(steps):
        came = (alpha, _shift(alpha, pad, 1), where(skip, _shift(alpha, pad, 2), -math.inf))
        alpha = where(t < live, _lse(came) + lpe[t], alpha)
    end = (2 * tl).unsqueeze(1)
    last = alpha.gather(1, end).squeeze(1)
    before = where(tl > 0, alpha.gather(1, (end - 1).clamp_min(0)).squeeze(1), -math.inf)
    return -_lse((last, before))


def _log_probs(make, shape):
    x = make(shape)
    if not make.is_float:
        return x
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _ctc_samples(make):
    lp = _log_probs(make, (6, 2, 4))
    tg = make.index((2, 3), 3) + 1
    yield S((lp, tg, [6, 5], [3, 2]))
    yield S(
        (lp, make.index((2, 3), 3), np.array([5, 6]), np.array([2, 3]), 3), {"reduction": "none"}
    )
    yield S((lp, make.index(5, 3) + 1, [6, 4], [3, 2]), {"reduction": "sum"}, name="concatenated")
    yield S(
        (_log_probs(make, (5, 4)), make.index(3, 3) + 1, np.array(5), np.array(3)),
        {"reduction": "none"},
        name="unbatched",
    )
    # the first needs 4 steps (a repeat takes a blank between), has 3: an infinite loss
    yield S(
        (lp, np.array([[2, 2, 1], [1, 3, 0]]), [3, 6], [3, 0]),
        {"zero_infinity": True, "reduction": "none"},
    )
    yield S((lp, tg, [0, 4], [0, 1]), {"reduction": "mean", "zero_infinity": True}, name="empty")


def _ctc_errors(make):
    lp, tg = _log_probs(make, (5, 2, 4)), np.array([[1, 2, 2], [3, 1, 0]])
    yield E(
        S((lp, tg, [5, 4], [3, 2]), {"reduction": "foo"}),
        ValueError,
        "foo is not a valid value for reduction",
    )
    yield E(S((lp, tg, [5, 4], [3, 2], 4)), RuntimeError, "blank must be in label range")
    yield E(
        S((lp, tg, [5, 4, 3], [3, 2])), RuntimeError, "input_lengths must be of size batch_size"
    )
    yield E(S((lp, tg, [5, 4], [3])), RuntimeError, "target_lengths must be of size batch_size")
    yield E(
        S((lp, tg, [6, 4], [3, 2])),
        RuntimeError,
        r"Expected input_lengths to have value at most 5, but got value 6 "
        r"\(while checking arguments for ctc_loss_allocate_outputs\)",
    )
    yield E(
        S((lp, tg, [5, 4], [4, 2])),
        RuntimeError,
        "Expected tensor to have size at least 4 at dimension 1, "
        "but got size 3 for argument #2 'targets'",
    )
    yield E(
        S((lp, tg, [5, 4], [-1, 2])),
        RuntimeError,
        "Expected target_lengths to have value at least 0, but got value -1",
    )
    yield E(
        S((lp, np.array([1, 2, 3, 1]), [5, 4], [3, 2])),
        RuntimeError,
        "Expected tensor to have size 5 at dimension 0, but got size 4 for argument #2 'targets'",
    )
    yield E(
        S((lp, tg[:, :, None], [5, 4], [3, 2])),
        RuntimeError,
        "Expected 1 to 2 dimensions, but got 3-dimensional tensor for argument #2 'targets'",
    )
    yield E(
        S((lp, tg, np.array([5.0, 4.0]), np.array([3, 2]))),
        RuntimeError,
        "input_lengths must be integral",
    )


@composite(
    samples=_ctc_samples,
    error_samples=_ctc_errors,
    api="nn.functional.ctc_loss",
    # PyTorch's gradient is not the derivative: it adds exp(log_probs) (what the gradient
    # becomes after a log_softmax, where the term cancels). Ours is the derivative, so finite
    # differences decide; tests/test_nn_loss.py compares values, and gradients through a
    # log_softmax, with PyTorch.
    test={"no_oracle": True},
    no_kernel=NoKernel("bi", "ctc_loss_cpu", inputs=(0,)),
)
def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Tensor | list[int] | tuple[int, ...],
    target_lengths: Tensor | list[int] | tuple[int, ...],
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """The connectionist temporal classification loss: -log of the total probability of the
    alignments of ``targets`` to ``log_probs`` ((T, N, C) or unbatched (T, C)); 'mean'
    divides each loss by its target length before averaging over the batch."""
    reduction = _reduction(None, None, reduction)
    lp = log_probs if log_probs.dim() == 3 else log_probs.unsqueeze(1)
    steps, n, c = lp.shape
    if lp.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    il, il_values = _ctc_lengths(input_lengths, "input_lengths", n, lp.device)
    tl, tl_values = _ctc_lengths(target_lengths, "target_lengths", n, lp.device)
    _check_ctc(targets, n, steps, il_values, tl_values)
    nll = _ctc_nll(lp, _ctc_padded(targets, tl, tl_values, blank), il, tl, blank)
    if zero_infinity:
        nll = where(nll == math.inf, 0.0, nll)
    if reduction == "mean":
        return (nll / tl.clamp_min(1).to(nll.dtype)).mean()
    if reduction == "sum":
        return nll.sum()
    return nll if log_probs.dim() == 3 else nll.squeeze(0)
