"""Regression losses: ``mse_loss``, ``l1_loss``, ``smooth_l1_loss`` and ``huber_loss``, each an
elementwise function of the broadcast ``input - target``, optionally weighted, then reduced.
"""

from __future__ import annotations

from collections.abc import Callable

from .._core import dtype as dt
from .._core.op import NoKernel, composite
from .._core.tensor import Tensor
from .._opdb.samples import ErrorInput as E
from .._opdb.samples import S
from ..ops._families import COMPLEX_TOO
from ..ops.comparison import where
from ..ops.views import broadcast_tensors
from ._loss_common import _pair, _reduce, _reduction, _size_warning

_INVALID_MODE = "Invalid reduction mode: {}. Expected one of 'none', 'mean', 'sum'."


def _regression(
    elem: Callable, input, target, reduction, weight=None, weighted_mean=True, promote=False
):
    """``elem(input - target)`` broadcast, optionally weighted, then reduced. With a weight,
    'mean' divides by the weight's sum (``weighted_mean``) or by the element count.
    ``promote``: a bool operand takes the common dtype first (PyTorch's kernel computes in
    it, where ``input - target`` would refuse the bool)."""
    _size_warning(input, target)
    x, y = broadcast_tensors(input, target)
    if promote and x.dtype != y.dtype and dt.bool_ in (x.dtype, y.dtype):
        common = dt.result_type((x.dtype, x.dim()), (y.dtype, y.dim()))
        x, y = x.to(common), y.to(common)
    loss = elem(x - y)
    if weight is None:
        return _reduce(loss, reduction)
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "mean" and weighted_mean:
        return loss.sum() / weight.sum()
    return _reduce(loss, reduction, _INVALID_MODE)


def _regression_samples(weighted: bool = False, **kw):
    """Samples of a loss of (input, target): every reduction, a broadcast target, an empty
    batch, a transposed input, and ``kw`` (option -> values) one at a time."""

    def samples(make):
        x, y = _pair(make)
        yield S((x, y))
        yield S((x, y), {"reduction": "sum"})
        yield S((make((3, 2)).T, y), {"reduction": "none"})
        yield S((make((0, 3)), make((0, 3))), {"reduction": "sum"}, name="empty batch")
        yield S((x, make((3,))), {"reduction": "none"}, name="broadcast target")  # warns
        for k, vals in kw.items():
            for v in vals:
                yield S((x, y), {k: v, "reduction": "none"})
        if weighted:
            w = make((2, 3), 0.5, 2.0)
            yield S((x, y), {"weight": w})
            yield S((x, y), {"weight": w, "reduction": "none"})

    return samples


def _regression_errors(weighted: bool = False, **kw):
    def errors(make):
        x = make((2, 3))
        yield E(
            S((x, make((3,))), {"reduction": "foo"}),
            ValueError,
            "foo is not a valid value for reduction",
        )
        if weighted:
            yield E(
                S((x, x), {"weight": make((3,))}),
                ValueError,
                "Weights and input must have the same size.",
            )
            yield E(
                S((x, x), {"weight": x, "reduction": "foo"}),
                ValueError,
                "Invalid reduction mode: foo. Expected one of 'none', 'mean', 'sum'.",
            )
        for k, (v, msg) in kw.items():
            yield E(S((x, x), {k: v}), RuntimeError, msg)

    return errors


def _unweighted(inputs, args) -> bool:
    """A ``NoKernel.when``: PyTorch's loss kernel runs only without a weight (a weighted
    loss is computed with public ops, which take complex)."""
    return args.get("weight") is None


def _mse_complex32(inputs, args) -> str:
    """mse_loss's kernel refusing complex32: a weighted loss squares with ``pow``."""
    return "mse_cpu" if _unweighted(inputs, args) else "pow"


@composite(
    samples=_regression_samples(weighted=True),
    error_samples=_regression_errors(True),
    api="nn.functional.mse_loss",
    grad_args=(0, 1),
    no_kernel=(
        NoKernel("bi", "mse_cpu", inputs=(0, 1)),
        NoKernel("c", "mse_cpu", inputs=(0, 1), when=_unweighted),
    ),
    complex32=_mse_complex32,
    autocast=lambda inputs, args: "fp32" if _unweighted(inputs, args) else None,
)
def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """The squared error ``(input - target) ** 2``."""
    reduction = _reduction(size_average, reduce, reduction, check=weight is None)
    return _regression(lambda d: d * d, input, target, reduction, weight, promote=True)


@composite(
    samples=_regression_samples(weighted=True),
    error_samples=_regression_errors(True),
    api="nn.functional.l1_loss",
    grad_args=(0, 1),
    test=COMPLEX_TOO,
    autocast=lambda inputs, args: "fp32" if _unweighted(inputs, args) else None,
)
def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """The absolute error ``|input - target|``."""
    reduction = _reduction(size_average, reduce, reduction, check=weight is None)
    return _regression(lambda d: d.abs(), input, target, reduction, weight)


def _smooth(z, beta: float, scale_linear: bool):
    """Quadratic below ``beta``, linear above (Huber: the quadratic unscaled, the linear
    part times beta; smooth L1: the quadratic divided by beta)."""
    if scale_linear:
        return where(z < beta, 0.5 * z * z, beta * (z - 0.5 * beta))
    return where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta)


@composite(
    samples=_regression_samples(beta=(0.5, 0.0)),
    error_samples=_regression_errors(
        beta=(-1.0, "smooth_l1_loss does not support negative values for beta.")
    ),
    api="nn.functional.smooth_l1_loss",
    grad_args=(0, 1),
    no_kernel=(
        NoKernel("bi", "smooth_l1_cpu", inputs=(0, 1)),
        # a complex one with beta 0 is l1_loss (PyTorch's kernel is not reached)
        NoKernel("c", "smooth_l1_cpu", inputs=(0, 1), when=lambda ins, attrs: attrs["beta"]),
    ),
    autocast="fp32",
)
def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """``0.5 d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (L1 for beta=0)."""
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:
        return _regression(lambda d: d.abs(), input, target, reduction, promote=True)
    elem = lambda d: _smooth(d.abs(), beta, False)  # noqa: E731
    return _regression(elem, input, target, reduction, promote=True)


@composite(
    samples=_regression_samples(weighted=True, delta=(0.5, 2.0)),
    error_samples=_regression_errors(
        True, delta=(0.0, "huber_loss does not support non-positive values for delta.")
    ),
    api="nn.functional.huber_loss",
    grad_args=(0, 1),
    no_kernel=NoKernel("bic", "huber_cpu", inputs=(0, 1), out=0),  # into input's dtype,
    autocast="fp32",
)
def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """``0.5 d**2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``."""
    reduction = _reduction(None, None, reduction, check=weight is None)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    elem = lambda d: _smooth(d.abs(), delta, True)  # noqa: E731
    out = _regression(elem, input, target, reduction, weight, weighted_mean=False, promote=True)
    return out if out.dtype == input.dtype else out.to(input.dtype)
