"""Margin and embedding losses: the soft margin losses (two-class and multi-label), margin
ranking, hinge and cosine embedding, the triplet margin losses (p-norm or any distance), and
the multi-class and multi-label hinge losses.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._core import dtype as dt
from .._core.inplace import cast_error
from .._core.no_kernel import empty_complex_runs, nonempty
from .._core.op import NoKernel, composite
from .._core.tensor import Tensor
from .._opdb.samples import ErrorInput as E
from .._opdb.samples import S
from ..ops._families import COMPLEX_TOO
from ..ops.comparison import where
from ..ops.creation import arange, full_like, zeros_like
from ._checks import concrete
from ._distance import pairwise_distance
from ._loss_common import _REDUCTIONS, _into, _reduce, _reduction, _softplus_neg, _tsize

_NEG_BOOL = (
    "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
    "invert a mask, use the `~` or `logical_not()` operator instead."
)


def _signs(make, shape):
    """Targets of +1 and -1 in the sample dtype."""
    return np.where(make(shape).real > 0, 1.0, -1.0).astype(make.dtype)


def _reduction_errors(*args):
    """An error sample with an invalid reduction for a loss of ``args``."""
    return [E(S(args, {"reduction": "foo"}), ValueError, "foo is not a valid value for reduction")]


def _soft_margin_samples(make):
    x, y = make((2, 3)), _signs(make, (2, 3))
    yield S((x, y))
    yield S((x, y), {"reduction": "sum"})
    yield S((make((3, 2)).T, y), {"reduction": "none"})
    yield S((make((0, 3)), make((0, 3))), {"reduction": "sum"})


@composite(
    samples=_soft_margin_samples,
    error_samples=lambda make: _reduction_errors(make((2, 3)), make((2, 3))),
    api="nn.functional.soft_margin_loss",
    grad_args=(0,),  # PyTorch's is not differentiable in the target
    test=COMPLEX_TOO,
    complex_grad=False,
    autocast="fp32",
)
def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The two-class logistic loss ``log(1 + exp(-target * input))``."""
    reduction = _reduction(size_average, reduce, reduction)
    # PyTorch's neg(input).mul_(target).exp_().add_(1).log_(): in input's dtype
    if input.dtype == dt.bool_:
        raise RuntimeError(_NEG_BOOL)
    _into(input, target)
    if input.dtype.is_complex:
        return _reduce((1 + (-input * target).exp()).log(), reduction)
    if not input.dtype.is_floating_point:
        raise RuntimeError(cast_error(dt.get_default_dtype(), input.dtype))
    loss = _softplus_neg(input * target)
    return _reduce(loss if loss.dtype == input.dtype else loss.to(input.dtype), reduction)


def _mlsm_samples(make):
    x, y = make((2, 3)), make((2, 3), 0.0, 1.0)
    yield S((x, y))
    yield S((x, y, make((3,), 0.5, 2.0)), {"reduction": "sum"})
    yield S((x, y, make((2, 3), 0.5, 2.0)), {"reduction": "none"})
    yield S((make((3,)), make((3,), 0.0, 1.0)), name="unbatched")
    yield S((make((0, 3)), make((0, 3))), {"reduction": "sum"})


def _mlsm_errors(make):
    return [
        E(S((make((2, 3)), make((2, 3))), {"reduction": "foo"}), ValueError, "foo is not valid")
    ]


@composite(
    samples=_mlsm_samples,
    error_samples=_mlsm_errors,
    api="nn.functional.multilabel_soft_margin_loss",
    no_kernel=NoKernel("bic", "log_sigmoid_cpu", inputs=(0,)),  # logsigmoid(input) first
)
def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The per-class logistic loss averaged over the classes (the last dim)."""
    reduction = _reduction(size_average, reduce, reduction, check=False)
    # -(t log sigmoid(x) + (1 - t) log sigmoid(-x)), with log sigmoid(x) = -softplus(-x)
    loss = (1 - target) * input + _softplus_neg(input)
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(-1) / input.shape[-1]
    return _reduce(loss, reduction, "{} is not valid")


def _mr_samples(make):
    x1, x2, y = make((3,)), make((3,)), _signs(make, (3,))
    yield S((x1, x2, y))
    yield S((x1, x2, y, 0.5), {"reduction": "sum"})
    yield S((make((2, 3)), make((2, 3)), _signs(make, (2, 3)), -0.3), {"reduction": "none"})
    yield S((make((0,)), make((0,)), make((0,))), {"reduction": "sum"})


def _mr_errors(make):
    yield from _reduction_errors(make((3,)), make((3,)), make((3,)))
    yield E(
        S((make((2, 3)), make((2, 3)), make((2,)))),
        RuntimeError,
        r"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
        r"input1: torch.Size\(\[2, 3\]\), input2: torch.Size\(\[2, 3\]\), "
        r"target: torch.Size\(\[2\]\)",
    )


@composite(
    samples=_mr_samples,
    error_samples=_mr_errors,
    api="nn.functional.margin_ranking_loss",
    autocast="fp32",
)
def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``."""
    reduction = _reduction(size_average, reduce, reduction)
    if not input1.dim() == input2.dim() == target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {_tsize(input1)}, input2: {_tsize(input2)}, target: {_tsize(target)} "
        )
    diff = input1 - input2  # before -target, as PyTorch's
    return _reduce((-target * diff + margin).clamp_min(0), reduction)


def _hinge_samples(make):
    x, y = make((2, 3)), _signs(make, (2, 3))
    yield S((x, y))
    yield S((x, y, 0.5), {"reduction": "sum"})
    yield S((x, _signs(make, (3,)), 2.0), {"reduction": "none"}, name="broadcast target")
    yield S((make((0, 3)), make((0, 3))), {"reduction": "sum"})


@composite(
    samples=_hinge_samples,
    error_samples=lambda make: _reduction_errors(make((2, 3)), make((2, 3))),
    api="nn.functional.hinge_embedding_loss",
    grad_args=(0,),  # the target (+1 or -1) only selects a branch,
    autocast="fp32",
)
def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``input`` where the target is 1, ``max(0, margin - input)`` where it is -1."""
    reduction = _reduction(size_average, reduce, reduction)
    zeros = zeros_like(input)
    # PyTorch's ``margin - input`` runs in input's dtype (an integral input stays integral)
    margin_ = margin if input.dtype.is_floating_point else full_like(input, margin)
    loss = where(target != 1, (margin_ - input).clamp_min(0), zeros)
    return _reduce(loss + where(target != -1, input, zeros), reduction)


def _cos_samples(make):
    y = np.array([1, -1, 1])
    yield S((make((3, 4)), make((3, 4)), y))
    yield S((make((3, 4)), make((3, 4)), _signs(make, (3,)), 0.2), {"reduction": "sum"})
    yield S((make((3, 4)), make((3, 4)), y, -0.5), {"reduction": "none"})
    yield S((make((4,)), make((4,)), np.array(-1)), name="unbatched")
    yield S((make((0, 4)), make((0, 4)), np.zeros(0, np.int64)), {"reduction": "sum"})


def _cos_errors(make):
    x = make((3, 4))
    yield from _reduction_errors(x, x, np.array([1, -1, 1]))
    yield E(
        S((x, x, np.ones((3, 1)))),
        RuntimeError,
        "0D or 1D target tensor expected, multi-target not supported",
    )
    yield E(
        S((x[0], x[0], np.ones(1))),
        RuntimeError,
        r"1D target tensor expects 2D input tensors, but found inputs with sizes \[4\] and \[4\].",
    )
    yield E(
        S((x, x, np.array(1.0))),
        RuntimeError,
        r"0D target tensor expects 1D input tensors, "
        r"but found inputs with sizes \[3, 4\] and \[3, 4\].",
    )


@composite(
    samples=_cos_samples,
    error_samples=_cos_errors,
    api="nn.functional.cosine_embedding_loss",
    grad_args=(0, 1),  # the target (+1 or -1) only selects a branch,
    autocast="fp32",
)
def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``1 - cos(input1, input2)`` where the target is 1, ``max(0, cos - margin)`` where -1."""
    reduction = _reduction(size_average, reduce, reduction)
    d = target.dim()
    if d > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != d + 1 or input2.dim() != d + 1:
        raise RuntimeError(
            f"{d}D target tensor expects {d + 1}D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    eps = 1e-12  # PyTorch's EPSILON, added to each squared magnitude
    den = (((input1 * input1).sum(d) + eps) * ((input2 * input2).sum(d) + eps)).sqrt()
    cos = (input1 * input2).sum(d) / den
    loss = where(target == 1, 1 - cos, 0.0) + where(target == -1, (cos - margin).clamp_min(0), 0.0)
    return _reduce(loss, reduction)


def _triplets(make, shape=(3, 4)):
    return make(shape), make(shape), make(shape)


def _triplet_samples(make):
    a, p, n = _triplets(make)
    yield S((a, p, n))
    yield S((a, p, n, 0.5, 1), {"swap": True, "reduction": "sum"})
    yield S((a, p, n, 2.0, 3, 1e-3), {"reduction": "none"})
    yield S(_triplets(make, (4,)), {"swap": True}, name="unbatched")
    yield S(_triplets(make, (0, 4)), {"reduction": "sum"})


def _triplet_errors(make):
    a, p, n = _triplets(make)
    yield from _reduction_errors(a, p, n)
    yield E(S((a, p, n, 0.0)), ValueError, "margin must be greater than 0, got 0.0")
    yield E(
        S((a, p, n[0])),
        RuntimeError,
        "The anchor, positive, and negative tensors are expected to have the same number of "
        "dimensions, but got: anchor 2D, positive 2D, and negative 1D inputs",
    )


def _triplet_loss(anchor, positive, negative, dist: Callable, margin, swap, reduction):
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not a == p == n:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs"
        )
    d_pos, d_neg = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


@composite(
    samples=_triplet_samples,
    error_samples=_triplet_errors,
    api="nn.functional.triplet_margin_loss",
    test=COMPLEX_TOO,
    autocast="fp32",
)
def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` for the p-norm distance
    (``swap``: the smaller of d(a, n) and d(p, n))."""
    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dist = lambda x1, x2: pairwise_distance(x1, x2, p, eps)  # noqa: E731
    return _triplet_loss(anchor, positive, negative, dist, margin, swap, reduction)


def _l1_distance(x1, x2):
    return (x1 - x2).abs().sum(-1)


def _twd_samples(make):
    a, p, n = _triplets(make)
    yield S((a, p, n))
    yield S((a, p, n), {"margin": 0.5, "swap": True, "reduction": "sum"})
    yield S((a, p, n), {"distance_function": _l1_distance, "margin": 2.0, "reduction": "none"})
    yield S(_triplets(make, (4,)), {"distance_function": _l1_distance, "swap": True})
    yield S(_triplets(make, (0, 4)), {"reduction": "sum"})


def _twd_errors(make):
    a, p, n = _triplets(make)
    yield from _reduction_errors(a, p, n)
    yield E(S((a, p, n), {"margin": -1.0}), ValueError, "margin must be greater than 0, got -1.0")
    yield E(S((a, p, n[0])), RuntimeError, "anchor 2D, positive 2D, and negative 1D inputs")


@composite(
    samples=_twd_samples,
    error_samples=_twd_errors,
    api="nn.functional.triplet_margin_with_distance_loss",
    test=COMPLEX_TOO,
)
def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """The triplet margin loss for any ``distance_function`` (default: the 2-norm)."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dist = distance_function or pairwise_distance
    return _triplet_loss(anchor, positive, negative, dist, margin, swap, reduction)


def _long_target(target: Tensor) -> None:
    """The margin losses' kernels read int64 class indices only."""
    if target.dtype != dt.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype.scalar_name}")


def _check_margin_input(input: Tensor) -> None:
    n = input.dim()
    if not ((n == 2 and input.shape[1]) or (n == 1 and input.shape[0]) or n == 0):
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{list(input.shape)}"
        )


def _mm_samples(make):
    x = make((3, 4))
    yield S((x, np.array([0, 3, 1])))
    yield S((x, make.index(3, 4), 2, 0.5), {"reduction": "sum"})
    yield S((x, make.index(3, 4), 1, 1.5, make((4,), 0.5, 2.0)), {"reduction": "none"})
    yield S((x, make.index(3, 4), 2), {"weight": make((4,), 0.5, 2.0)})
    yield S((make((4,)), make.index((), 4)), {"reduction": "none"}, name="unbatched")
    # not 'sum': PyTorch (2.13, CPU) returns uninitialized memory for an empty float32 batch
    yield S((make((0, 4)), make.index(0, 4)), {"reduction": "none"})


def _mm_errors(make):
    x = make((3, 4))
    t = np.array([0, 3, 1])
    yield from _reduction_errors(x, t)
    yield E(S((x, t, 3)), ValueError, "only p == 1 and p == 2 supported")
    yield E(S((x, t), {"weight": make((2, 2))}), ValueError, "weight must be one-dimensional")
    yield E(
        S((x, t), {"weight": make((3,))}),
        RuntimeError,
        r"inconsistent weight size, expected 4 but got \[3\]",
    )
    yield E(S((x, np.array([0, 4, 1]))), RuntimeError, "target out of range")
    yield E(
        S((x, t[:2])),
        RuntimeError,
        r"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
        r"samples \(batch size\). Expected target size \[3\], but got \[2\]. "
        r"Input has shape \[3, 4\].",
    )
    yield E(
        S((make((3, 2, 2)), t)),
        RuntimeError,
        r"Expected non-empty vector or matrix with optional 0-dim batch size, but got: \[3, 2, 2\]",
    )


@composite(
    samples=_mm_samples,
    error_samples=_mm_errors,
    api="nn.functional.multi_margin_loss",
    grad_args=(0,),  # PyTorch's is not differentiable in its weight
    # PyTorch has no second derivative (multi_margin_loss_backward is not differentiable);
    # ours is the composite's, checked against finite differences in test_func_ops.
    test={"no_gradgrad": True},
    no_kernel=NoKernel("bic", "multi_margin_loss_cpu_kernel", inputs=(0,), when=nonempty),
    autocast="fp32",
)
@empty_complex_runs
def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-class hinge loss: ``max(0, margin - x[y] + x[i])**p`` over the classes
    ``i != y``, times ``weight[y]``, averaged over the classes."""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _check_margin_input(input)
    n, c = (input.shape[0], input.shape[1]) if input.dim() == 2 else (1, input.numel())
    if target.dim() > 1 or target.numel() != n:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{n}], but got "
            f"{list(target.shape)}. Input has shape {list(input.shape)}."
        )
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    _long_target(target)
    v = concrete(target)
    if v is not None and ((v < 0) | (v >= c)).any():
        raise RuntimeError("target out of range")
    x, t = input.reshape(n, c), target.reshape(n, 1)
    z = _positive_part(margin - x.gather(1, t) + x)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[t]
    loss = where(arange(c, device=t.device) != t, z, 0.0).sum(1) / c
    if input.dim() < 2 and reduction == "none":
        return loss.reshape(())
    return _reduce(loss, reduction)


def _positive_part(z: Tensor) -> Tensor:
    """z where z > 0, else 0: the margin kernels' test, which skips a NaN term."""
    return where(z > 0, z, 0.0)


def _mlm_target(make, n, c):
    """Label lists: each row's labels (distinct, some repeated after a -1) end at a -1."""
    t = np.stack([make.perm(c) for _ in range(n)])
    for row, k in zip(t, range(1, n + 1)):
        row[min(k, c - 1)] = -1
    return t


def _mlm_samples(make):
    x = make((3, 4))
    yield S((x, _mlm_target(make, 3, 4)))
    yield S((x, _mlm_target(make, 3, 4)), {"reduction": "sum"})
    yield S((x, _mlm_target(make, 3, 4)), {"reduction": "none"})
    yield S((x, np.array([[0, 0, 2, 1], [3, 2, 1, 0], [-1, 1, 2, 3]])), name="repeats, full, none")
    yield S((make((4,)), _mlm_target(make, 1, 4)[0]), {"reduction": "none"}, name="unbatched")
    # not 'sum': PyTorch (2.13, CPU) returns uninitialized memory for an empty float32 batch
    yield S((make((0, 4)), np.zeros((0, 4), np.int64)), {"reduction": "none"})


def _mlm_errors(make):
    x = make((3, 4))
    t = np.array([[0, 1, -1, 0]] * 3)
    yield from _reduction_errors(x, t)
    yield E(S((x, t + 4)), RuntimeError, "argument #2 'target' is out of range")
    yield E(S((x, t - 2)), RuntimeError, "argument #2 'target' is out of range")
    yield E(
        S((x, t[:, :3])),
        RuntimeError,
        r"inconsistent target size: \[3, 3\] for input of size: \[3, 4\]",
    )
    yield E(S((make((3, 2, 2)), t)), RuntimeError, "Expected non-empty vector or matrix")


@composite(
    samples=_mlm_samples,
    error_samples=_mlm_errors,
    api="nn.functional.multilabel_margin_loss",
    # PyTorch has no second derivative (multilabel_margin_loss_backward is not differentiable);
    # ours is the composite's, checked against finite differences in test_func_ops.
    test={"no_gradgrad": True},
    no_kernel=NoKernel(
        "bic", "multilabel_margin_loss_forward_out_frame", inputs=(0,), when=nonempty
    ),
    autocast="fp32",
)
@empty_complex_runs
def multilabel_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-label hinge loss: ``max(0, 1 - (x[y_j] - x[i]))`` for each label ``y_j``
    (a row's labels end at its first -1) and each class ``i`` not among the labels, averaged
    over the classes."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_margin_input(input)
    n, c = (input.shape[0], input.shape[1]) if input.dim() == 2 else (1, input.numel())
    if input.dim() == 2:
        fits = tuple(target.shape) == (n, c)
    else:
        fits = target.dim() <= 1 and target.numel() == c
    if not fits:
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}"
        )
    _long_target(target)
    v = concrete(target)
    if v is not None and ((v < -1) | (v >= c)).any():
        raise RuntimeError("argument #2 'target' is out of range")
    x, t = input.reshape(n, c), target.reshape(n, c)
    labels = (t == -1).cumsum(-1) == 0  # the entries before the first -1
    safe = where(labels, t, 0)
    is_label = ((safe.unsqueeze(-1) == arange(c, device=safe.device)) & labels.unsqueeze(-1)).any(
        -2
    )
    z = _positive_part(1 - x.gather(1, safe).unsqueeze(-1) + x.unsqueeze(-2))
    pairs = labels.unsqueeze(-1) & is_label.logical_not().unsqueeze(-2)
    loss = where(pairs, z, 0.0).sum((-2, -1)) / c
    if input.dim() < 2 and reduction == "none":
        return loss.reshape(())
    return _reduce(loss, reduction)
