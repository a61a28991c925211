"""Likelihood losses: binary cross entropy on probabilities and on logits, ``kl_div``, and the
Poisson and Gaussian negative log likelihoods.

Two small primitives: ``bce_pointwise``, binary_cross_entropy with PyTorch's gradient; and
``clamp_passthrough``, gaussian_nll_loss's clamp of the variance that reverse mode does not
see.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._core import dtype as dt
from .._core.layout import follow_inputs
from .._core.meta import by_kernel
from .._core.no_kernel import CLAMP_COMPLEX
from .._core.op import ELEMENTWISE, NoKernel, composite, defop
from .._core.tensor import Tensor
from .._opdb.samples import ErrorInput as E
from .._opdb.samples import S
from ..ops._batching import elementwise
from ..ops.comparison import where
from ..ops.creation import ones_like
from ._checks import concrete
from ._loss_common import (
    _REDUCTIONS,
    _into,
    _norm_probs,
    _pair,
    _reduce,
    _reduction,
    _softplus_neg,
    _tsize,
)


def _bce_samples(make):
    x, y = make((2, 3), 0.05, 0.95), make((2, 3), 0.0, 1.0)
    yield S((x, y))
    yield S((x, y, make((2, 3), 0.5, 2.0)), {"reduction": "sum"})
    yield S((x, y, make((3,), 0.5, 2.0)), {"reduction": "none"}, name="broadcast weight")
    yield S((make((3, 2), 0.05, 0.95).T, y), {"reduction": "none"})
    yield S((make((0, 3), 0.05, 0.95), make((0, 3), 0.0, 1.0)), {"reduction": "sum"})


def _bce_errors(make):
    x = make((2, 3), 0.1, 0.9)
    yield E(
        S((x, make((3,), 0.1, 0.9))),
        ValueError,
        r"Using a target size \(torch.Size\(\[3\]\)\) that is different to the input size "
        r"\(torch.Size\(\[2, 3\]\)\) is deprecated",
    )
    yield E(S((x, x), {"reduction": "foo"}), ValueError, "foo is not a valid value for reduction")
    yield E(S((x + 1.0, x)), RuntimeError, "all elements of input should be between 0 and 1")


def _bce(xp, input, target):
    with np.errstate(divide="ignore"):
        lx, l1x = xp.maximum(xp.log(input), -100), xp.maximum(xp.log1p(-input), -100)
    return -(target * lx + (1 - target) * l1x)


# A primitive for PyTorch's gradient, finite where an input is exactly 0 or 1 (a saturated
# sigmoid), where the clamped logs' derivative is 0 / 0.
bce_pointwise_p = defop(
    "_bce_pointwise",
    _bce,
    nin=2,
    batch_rule=elementwise(),
    jvp=ELEMENTWISE,
    layout=follow_inputs,
    vjp=(
        lambda g, input, target: g * (input - target) / (input * (1 - input)).clamp_min(1e-12),
        lambda g, input: -g * input.logit(),
    ),
    samples=lambda make: [S((make((2, 3), 0.05, 0.95), make((2, 3), 0.0, 1.0)))],
    api="nn._loss_likelihood.bce_pointwise",
    test={"no_oracle": True},  # binary_cross_entropy's is
    meta=by_kernel,
)
bce_pointwise = bce_pointwise_p.fn


@composite(
    samples=_bce_samples,
    error_samples=_bce_errors,
    api="nn.functional.binary_cross_entropy",
    grad_args=(0, 1),  # PyTorch's binary_cross_entropy is not differentiable in its weight,
    autocast="fp32",
)
def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``-(t log x + (1 - t) log(1 - x))`` for probabilities ``x``, each log clamped at -100."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({_tsize(target)}) that is different to the input size "
            f"({_tsize(input)}) is deprecated. Please ensure they have the same size."
        )
    if target.dtype != input.dtype:
        raise RuntimeError(
            f"Found dtype {target.dtype.scalar_name} but expected {input.dtype.scalar_name}"
        )
    if not input.dtype.is_floating_point:
        raise dt.not_implemented("binary_cross_entropy", input.dtype)
    v = concrete(input)
    if v is not None and ((v < 0) | (v > 1)).any():
        raise RuntimeError("all elements of input should be between 0 and 1")
    loss = bce_pointwise(input, target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _one_minus_into(target: Tensor, input: Tensor) -> None:
    """PyTorch's ``(1 - target).mul_(input)``: refused for a bool target (C++'s ``1 -``
    takes the bool's dtype), and where input's dtype can't be written into target's."""
    if target.dtype == dt.bool_:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
            "`^` or `logical_xor()` operator instead."
        )
    _into(target, input)


def _bcel_samples(make):
    x, y = make((2, 3), -3.0, 3.0), make((2, 3), 0.0, 1.0)
    yield S((x, y))
    yield S((x, y, make((2, 3), 0.5, 2.0)), {"reduction": "sum"})
    yield S((x, y, None, None, None, "none", make((3,), 0.5, 2.0)), name="pos_weight")
    yield S((x, y, make((3,), 0.5, 2.0), None, None, "mean", make((3,), 0.5, 2.0)))
    yield S((make((3, 2), -40.0, 40.0).T, y), {"reduction": "none"}, name="large logits")
    yield S((make((0, 3)), make((0, 3))), {"reduction": "sum"})


def _bcel_errors(make):
    x = make((2, 3))
    yield E(
        S((x, make((3,)))),
        ValueError,
        r"Target size \(torch.Size\(\[3\]\)\) must be the same as input size "
        r"\(torch.Size\(\[2, 3\]\)\)",
    )
    yield E(S((x, x), {"reduction": "foo"}), ValueError, "foo is not a valid value for reduction")


@composite(
    samples=_bcel_samples,
    error_samples=_bcel_errors,
    api="nn.functional.binary_cross_entropy_with_logits",
    grad_args=(0, 1),  # PyTorch's is not differentiable in weight and pos_weight
    no_kernel=NoKernel("bic", "log_sigmoid_cpu", inputs=(0,)),  # log_sigmoid(input) first,
    autocast="fp32",
)
def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Binary cross entropy of ``sigmoid(input)``, computed from the logits stably:
    ``(1 - t) x + (1 + (pos_weight - 1) t) log(1 + exp(-x))``."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Target size ({_tsize(target)}) must be the same as input size ({_tsize(input)})"
        )
    _one_minus_into(target, input)
    sp = _softplus_neg(input)
    if pos_weight is not None:
        sp = sp * ((pos_weight - 1) * target + 1)
    loss = (1 - target) * input + sp
    if loss.dtype != target.dtype:  # PyTorch's result is in target's dtype
        loss = loss.to(target.dtype)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# kl_div refuses a complex input or target, then an integral one, whatever the other is
_KL_INTEGRAL = (
    NoKernel("c", error=(RuntimeError, "kl_div: Complex inputs not supported."), inputs=(0, 1)),
    *(
        NoKernel("bi", error=(RuntimeError, "kl_div: Integral inputs not supported."), inputs=(i,))
        for i in (0, 1)
    ),
)


def _kl_samples(make):
    x, p = make((2, 3), -2.0, 0.0), _norm_probs(make, (2, 3))
    yield S((x, p), {"reduction": "batchmean"})
    yield S((x, p), {"reduction": "sum"})
    yield S((x, p), {"reduction": "none"})
    yield S((x, np.log(p)), {"reduction": "batchmean", "log_target": True})
    yield S((make((3,), -2.0, 0.0), _norm_probs(make, (3,))), {"reduction": "batchmean"})
    yield S((make((0, 3)), make((0, 3), 0.1, 1.0)), {"reduction": "sum"})


def _kl_errors(make):
    return [
        E(
            S((make((2, 3)), make((2, 3), 0.1, 1.0)), {"reduction": "foo"}),
            ValueError,
            "foo is not a valid value for reduction",
        )
    ]


@composite(
    samples=_kl_samples,
    error_samples=_kl_errors,
    api="nn.functional.kl_div",
    grad_args=(0, 1),
    no_kernel=_KL_INTEGRAL,
    autocast="fp32",
)
def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """The pointwise KL divergence ``t (log t - input)`` of log-probabilities ``input``;
    'batchmean' divides the sum by the batch size."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.",
            stacklevel=2,
        )
    elif reduction != "batchmean":
        reduction = _reduction(None, None, reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = target.xlogy(target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    return _reduce(loss, reduction)


def _poisson_samples(make):
    x, y = make((2, 3), -1.0, 1.0), make((2, 3), 0.5, 3.0)
    yield S((x, y))
    yield S((x, y), {"full": True, "reduction": "sum"})
    yield S((make((2, 3), 0.5, 2.0), y), {"log_input": False, "reduction": "none"})
    yield S((make((2, 3), 0.5, 2.0), y, False, True, None, 1e-3), name="full, eps")
    yield S((make((0, 3)), make((0, 3), 0.5, 3.0)), {"reduction": "sum"})


def _poisson_errors(make):
    return [
        E(
            S((make((2, 3)), make((2, 3))), {"reduction": "foo"}),
            ValueError,
            "foo is not a valid value for reduction",
        )
    ]


@composite(
    samples=_poisson_samples,
    error_samples=_poisson_errors,
    api="nn.functional.poisson_nll_loss",
    grad_args=(0, 1),
    autocast="fp32",
)
def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: bool | None = None,
    eps: float = 1e-8,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The Poisson negative log likelihood of ``target`` with rate ``exp(input)``
    (``log_input``) or ``input``; ``full`` adds Stirling's term where the target exceeds 1."""
    reduction = _reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + where(target > 1, stirling, 0.0)
    return _reduce(loss, reduction)


def _gauss_samples(make):
    x, y = _pair(make)
    yield S((x, y, make((2, 3), 0.1, 2.0)))
    yield S((x, y, make((2,), 0.1, 2.0)), {"reduction": "sum"}, name="homoscedastic")
    yield S((x, y, make((2, 1), 0.1, 2.0)), {"full": True, "reduction": "none"})
    yield S((x, y, make((1, 3), 0.1, 2.0)), {"eps": 0.05})
    yield S((x, y, 0.7), name="float var")
    yield S((make((0, 3)), make((0, 3)), make((0, 3), 0.1, 2.0)), {"reduction": "sum"})


def _gauss_errors(make):
    x = make((2, 3))
    v = make((2, 3), 0.1, 1.0)
    yield E(S((x, x, make((3, 2), 0.1, 1.0))), ValueError, "var is of incorrect size")
    yield E(S((x, x, v - 2.0)), ValueError, "var has negative entry/entries")
    yield E(S((x, x, -1.0)), ValueError, "var has negative entry/entries")
    yield E(S((x, x, v), {"reduction": "foo"}), ValueError, "foo is not valid")


# PyTorch clamps var in place under no_grad: reverse mode passes the gradient as if the clamp
# were not there, forward mode (which no_grad does not stop) sees it. A primitive, so that
# every transform follows those rules.
clamp_passthrough_p = defop(
    "_clamp_passthrough",
    lambda xp, input, min: xp.maximum(input, xp.asarray(min, input.dtype)),
    nin=1,
    vjp=lambda g: g,
    jvp=lambda t, input, min: where(input < min, 0.0, t),
    batch_rule=elementwise(),
    samples=lambda make: [S((make((2, 3), 0.5, 2.0), 0.1)), S((make(()), -3.0))],
    api="nn._loss_likelihood.clamp_passthrough",
    test={"no_oracle": True},
    meta=by_kernel,
)
clamp_passthrough = clamp_passthrough_p.fn


def _gauss_complex32(inputs, args):
    """gaussian_nll_loss's refusal of complex32: a tensor var's sign check (``var < 0``), else
    the clamp's complex refusal."""
    if isinstance(args["var"], float):
        raise NotImplementedError(CLAMP_COMPLEX[1])
    return "lt_cpu"


@composite(
    samples=_gauss_samples,
    error_samples=_gauss_errors,
    api="nn.functional.gaussian_nll_loss",
    grad_args=(0, 1, 2),
    complex32=_gauss_complex32,
)
def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """The Gaussian negative log likelihood ``0.5 (log var + (input - target)**2 / var)``;
    ``var`` is clamped at ``eps`` (the clamp passes gradients through, as in PyTorch)."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif (v := concrete(var)) is not None and (v < 0).any():
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (
            input.dim() == var.dim()
            and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1
        ):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    var = clamp_passthrough(var, eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)
