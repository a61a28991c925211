"""Distances: ``torch.cdist`` (a primitive: the p=2 path is one GEMM, and its gradient is
zero where a distance is zero, as PyTorch's), and the composites ``pdist``,
``pairwise_distance`` and ``cosine_similarity``."""

from __future__ import annotations

import math

import numpy as np

from .._core.dispatch import dispatch
from .._core.messages import broadcast_mismatch
from .._core.meta import by_kernel
from .._core.op import composite, defop
from .._core.tensor import Tensor
from .._opdb.samples import ErrorInput as E
from .._opdb.samples import S
from ..ops._batching import front, lrank, pad_to
from ..ops._families import COMPLEX_TOO
from ..ops.comparison import where
from ..ops.creation import tensor
from ..ops.reduction import vector_norm
from ..ops.views import broadcast_tensors

_MODES = {
    "use_mm_for_euclid_dist_if_necessary": 0,
    "use_mm_for_euclid_dist": 1,
    "donot_use_mm_for_euclid_dist": 2,
}


# ------------------------------------------------------------------ cdist (primitive)
def _use_mm(p: float, mode: int, rows1: int, rows2: int) -> bool:
    return p == 2 and (mode == 1 or (mode == 0 and (rows1 > 25 or rows2 > 25)))


def _cdist(xp, x1, x2, p=2.0, compute_mode=0):
    if _use_mm(p, compute_mode, x1.shape[-2], x2.shape[-2]):
        n1 = (x1 * x1).sum(-1)[..., :, None]
        n2 = (x2 * x2).sum(-1)[..., None, :]
        d2 = n1 + n2 - 2 * (x1 @ xp.swapaxes(x2, -1, -2))
        return xp.sqrt(xp.maximum(d2, 0))
    diff = xp.abs(x1[..., :, None, :] - x2[..., None, :, :])
    if p == 0:
        return (diff != 0).sum(-1).astype(x1.dtype)
    if p == math.inf:
        return diff.max(-1) if diff.shape[-1] else xp.zeros(diff.shape[:-1], diff.dtype)
    if p == 1:
        return diff.sum(-1)
    if p == 2:
        return xp.sqrt((diff * diff).sum(-1))
    return (diff**p).sum(-1) ** (1 / p)


def _safe(r):
    """(r with zeros replaced by ones, the zero mask): divisions by a distance that is 0."""
    zero = r == 0
    return where(zero, 1.0, r), zero


def _diff_weight(diff, result, p):
    """d result / d diff for the elementwise path (0 where the distance or, for p < 1, the
    coordinate difference is 0)."""
    if p == 1:
        return diff.sgn()
    r = result.unsqueeze(-1)
    if p == math.inf:
        return diff.sgn() * (diff.abs() == r)
    rs, zero = _safe(r)
    dz = diff == 0
    ad = where(dz, 1.0, diff.abs())
    w = diff.sgn() * (ad / rs) ** (p - 1)
    return where(zero | dz, 0.0, w)


def _cdist_vjp(which):
    def vjp(g, x1, x2, result, p):
        mine, other = (x1, x2) if which == 0 else (x2, x1)
        if p == 0:
            return mine * 0
        if p == 2:
            rs, zero = _safe(result)
            ratio = where(zero, 0.0, g / rs)
            if which == 1:
                ratio = ratio.mT
            return mine * ratio.sum(-1, keepdim=True) - ratio @ other
        diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
        gd = g.unsqueeze(-1) * _diff_weight(diff, result, p)
        return gd.sum(-2) if which == 0 else -gd.sum(-3)

    return vjp


def _cdist_jvp(tx1, tx2, x1, x2, result, p):
    if p == 0:
        return result * 0
    if p == 2:
        rs, zero = _safe(result)
        num = (x1 * tx1).sum(-1).unsqueeze(-1) + (x2 * tx2).sum(-1).unsqueeze(-2)
        num = num - tx1 @ x2.mT - x1 @ tx2.mT
        return where(zero, 0.0, num / rs)
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    dt = tx1.unsqueeze(-2) - tx2.unsqueeze(-3)
    return (_diff_weight(diff, result, p) * dt).sum(-1)


def _cdist_rule(vmap, args, bdims, attrs):
    """Batched operands go first, padded to the larger logical rank; an unbatched one
    broadcasts against them without a copy."""
    rank = max(lrank(a, b) for a, b in zip(args, bdims))
    new = [a if b is None else pad_to(front(a, b), rank) for a, b in zip(args, bdims)]
    return dispatch(cdist_p, tuple(new), attrs), 0


def _cdist_samples(make):
    yield S((make((2, 3)), make((4, 3))))
    yield S((make((2, 3)), make((4, 3)), 1.0))
    yield S((make((3, 2)), make((2, 2)), math.inf))
    yield S((make((2, 2, 3)), make((3, 3)), 0.5))
    yield S((make((2, 1, 2, 3)), make((3, 2, 3)), 3.0), name="broadcast batch")
    yield S((make((2, 3)), make((2, 3)).T.copy().T, 0.0), name="p=0")
    yield S((make((27, 2)), make((2, 2))), name="mm path")
    yield S((make((2, 3)), make((2, 3))), {"compute_mode": "use_mm_for_euclid_dist"})
    yield S((make((0, 3)), make((2, 3))), name="empty")


def _cdist_errors(make):
    yield E(S((make(3), make((4, 3)))), RuntimeError, "at least 2D tensors, X1 got: 1D")
    yield E(
        S((make((2, 3)), make((4, 4)))),
        RuntimeError,
        "X1 and X2 must have the same number of columns. X1: 3 X2: 4",
    )
    yield E(S((make((2, 3)), make((4, 3)), -1.0)), RuntimeError, "only supports non-negative p")
    yield E(
        S((make((2, 3), dtype="int64"), make((4, 3), dtype="int64"))),
        RuntimeError,
        "cdist only supports floating-point dtypes, X1 got: Long",
    )
    yield E(
        S((make((2, 3)), make((4, 3))), {"compute_mode": "x"}),
        ValueError,
        "x is not a valid value for compute_mode",
    )
    yield E(
        S((make((2, 2, 3)), make((3, 4, 3)))),
        RuntimeError,
        r"The size of tensor a \(2\) must match the size of tensor b \(3\) at non-singleton "
        "dimension 0",
    )


cdist_p = defop(
    "cdist",
    _cdist,
    nin=2,
    vjp=(_cdist_vjp(0), _cdist_vjp(1)),
    jvp=_cdist_jvp,
    batch_rule=_cdist_rule,
    samples=_cdist_samples,
    error_samples=_cdist_errors,
    # torch has no derivative for _cdist_backward: finite differences check our second order
    # (test_func_ops' grad-of-grad and jvp-of-vjp run the formulas).
    test={"no_gradgrad": True},
    autocast="fp32",
    meta=by_kernel,
)
_raw_cdist = cdist_p.fn


def _broadcast_error(a: tuple, b: tuple) -> None:
    """PyTorch's error for shapes that do not broadcast, before any work."""
    text = broadcast_mismatch((a, b))
    if text is not None:
        raise RuntimeError(text)


def cdist(
    x1: Tensor,
    x2: Tensor,
    p: float = 2.0,
    compute_mode: str = "use_mm_for_euclid_dist_if_necessary",
) -> Tensor:
    """The p-norm distance between each pair of rows of x1 and x2 (batched over leading
    dims)."""
    if compute_mode not in _MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for n, x in (("X1", x1), ("X2", x2)):
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {n} got: {x.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    for n, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_floating_point:
            raise RuntimeError(
                f"cdist only supports floating-point dtypes, {n} got: {x.dtype.scalar_name}"
            )
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.dtype != x2.dtype:
        raise RuntimeError(
            f"expected scalar type {x1.dtype.scalar_name} but found {x2.dtype.scalar_name}"
        )
    _broadcast_error(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    return _raw_cdist(x1, x2, float(p), _MODES[compute_mode])


cdist_p.api = "cdist"


# ------------------------------------------------------------------ composites
def _pdist_errors(make):
    yield E(S((make((2, 3, 4)),)), RuntimeError, "pdist only supports 2D tensors, got: 3D")
    yield E(S((make((3, 4)), -1.0)), RuntimeError, "pdist only supports non-negative p values")
    yield E(
        S((make((3, 4), dtype="int64"),)),
        RuntimeError,
        "pdist only supports floating-point dtypes",
    )


@composite(
    api="nn.functional.pdist",
    samples=lambda make: [
        S((make((4, 3)),)),
        S((make((3, 2)), 1.0)),
        S((make((3, 2)), math.inf)),
        S((make((3, 2)), 0.5)),
        S((make((3, 4)).T, 0.0), name="p=0, transposed"),
        S((make((1, 3)),), name="one row"),
    ],
    error_samples=_pdist_errors,
    test={"no_gradgrad": True},  # torch's _pdist_backward has no derivative
    autocast=lambda inputs, args: (
        "fp32" if inputs[0].shape[0] > 1 else "keep"
    ),  # (_pdist_forward's)
)
def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The distances between rows i < j of a 2-D input, in row-major order."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    d = _raw_cdist(input, input, float(p), _MODES["donot_use_mm_for_euclid_dist"])
    i, j = np.triu_indices(n, 1)
    return d.reshape(-1).index_select(0, tensor(i * n + j, device=input.device))


@composite(
    api="nn.functional.pairwise_distance",
    test=COMPLEX_TOO,
    samples=lambda make: [
        S((make((2, 3)), make((2, 3)))),
        S((make((3,)), make((2, 3))), {"p": 1.0, "keepdim": True}),
        S((make((2, 3)), make((2, 3)), math.inf)),
        S((make((2, 3)), make((1, 3)), 0.5, 1e-3)),
        S((make(()), make(())), name="0-d"),
        S((make((0, 3)), make((0, 3))), name="empty"),
    ],
    error_samples=lambda make: [
        E(
            S((make((2, 3)), make((2, 4)))),
            RuntimeError,
            r"The size of tensor a \(3\) must match the size of tensor b \(4\)",
        )
    ],
)
def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """The p-norm of x1 - x2 + eps over the last dim."""
    _broadcast_error(tuple(x1.shape), tuple(x2.shape))
    dim = max(x1.dim(), x2.dim()) - 1
    return vector_norm(x1 - x2 + eps, p, dim=dim if dim >= 0 else None, keepdim=keepdim)


@composite(
    api="nn.functional.cosine_similarity",
    samples=lambda make: [
        S((make((2, 3)), make((2, 3)))),
        S((make((2, 3)), make((3,))), {"dim": -1}),
        S((make((3, 2)), make((1, 2)), 0, 1e-3)),
        S((make((2, 1, 3)), make((4, 3))), {"dim": 2}),
        S((make((0, 3)), make((0, 3))), name="empty"),
    ],
    error_samples=lambda make: [
        E(
            S((make((2, 3)), make((2, 4)))),
            RuntimeError,
            r"The size of tensor a \(3\) must match the size of tensor b \(4\) at non-singleton "
            "dimension 1",
        ),
        E(S((make((2, 3)), make((2, 3))), {"dim": 2}), IndexError, "Dimension out of range"),
    ],
)
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1 * x2) / (max(|x1|, eps) * max(|x2|, eps)) along dim (broadcasting first)."""
    _broadcast_error(tuple(x1.shape), tuple(x2.shape))
    x1, x2 = broadcast_tensors(x1, x2)
    if x1.dtype != x2.dtype or not x1.dtype.is_floating_point:
        from .._core import dtype as dt

        d = dt.promote_types(x1.dtype, x2.dtype)
        if not d.is_floating_point:
            raise RuntimeError(
                f"expected common dtype to be floating point, yet common dtype is {d.scalar_name}"
            )
        x1, x2 = x1.to(d), x2.to(d)

    def unit(x):
        return x / vector_norm(x, 2, dim=dim, keepdim=True).clamp_min(eps)

    return (unit(x1) * unit(x2)).sum(dim)
