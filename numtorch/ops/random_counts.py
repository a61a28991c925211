"""Random counts: ``poisson``, ``binomial`` and ``multinomial``.

Each is a uniform draw (``rand``, so vmap's randomness modes and the generators behave as
for every draw) turned into counts by deterministic ops: the Poisson and binomial quantile
functions (elementwise primitives over scipy.special), and for ``multinomial`` PyTorch's
own algorithms: a search of the cumulative distribution with replacement, the top k of
p / Exp(1) without. As in PyTorch, poisson's result requires grad with zero gradients, and
binomial's backward raises.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._core import dtype as dt
from .._core.interpreter import WrapperTensor
from .._core.methods import tensor_methods
from .._core.out import write_out
from .._core.tensor import Tensor
from ._batching import check_random_inputs, check_random_out
from ._families import elementwise_op, silent
from .bins import searchsorted
from .creation import zeros_like
from .random import _check_generator, _uniform_draw
from .sorting import topk
from .unary import _special

# ------------------------------------------------------------------ quantile functions
_INT64_MIN = float(np.iinfo(np.int64).min)


def _whole(xp, a):
    """Whole numbers as int64 for scipy's integer arguments (non-finite ones as 0: their
    results are replaced)."""
    return xp.nan_to_num(a, nan=0, posinf=0, neginf=0).astype(np.int64)


def _smallest_count(xp, reaches, top):
    """The smallest whole k in [0, top] where ``reaches(k)`` (monotone in k) holds: a
    bisection of elementwise steps on the device, where CuPy has no inverse of the Poisson
    or binomial distribution function (and no pass over the data on the host)."""
    lo = xp.full(top.shape, -1.0)
    hi = top.astype(np.float64)
    for _ in range(55):  # top <= 2**53: the interval shrinks to one step
        mid = xp.floor((lo + hi) / 2)
        ok = reaches(mid)
        hi, lo = xp.where(ok, mid, hi), xp.where(ok, lo, mid)
    return hi


@silent
def _poisson_icdf(xp, u, rate):
    """The smallest k with P(X <= k) >= u for X ~ Poisson(rate), in rate's dtype; PyTorch's
    error for a negative or NaN rate, and its value (int64's minimum) for an infinite one."""
    if bool((~(rate >= 0)).any()):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    sp = _special(xp)
    r = rate.astype(np.float64)
    if xp is np:
        k = xp.ceil(sp.pdtrik(u, r))
        below = xp.maximum(k - 1, 0)
        k = xp.where(sp.pdtr(_whole(xp, below), r) >= u, below, k)
    else:
        top = xp.full(np.broadcast_shapes(u.shape, r.shape), 2.0**53)
        k = _smallest_count(xp, lambda k: sp.pdtr(k, r) >= u, top)
    k = xp.where(r == 0, 0, xp.where(xp.isinf(r), _INT64_MIN, k))
    return k.astype(rate.dtype)


@silent
def _binomial_icdf(xp, u, count, prob):
    """The smallest k with P(X <= k) >= u for X ~ Binomial(count, prob), in count's dtype
    (NaN for a NaN probability or an infinite count)."""
    sp = _special(xp)
    n = xp.floor(xp.maximum(count.astype(np.float64), 0))  # (scipy takes whole counts)
    p = xp.clip(prob.astype(np.float64), 0, 1)
    if xp is np:
        k = xp.ceil(sp.bdtrik(u, n, p))
        below = xp.maximum(k - 1, 0)
        k = xp.where(sp.bdtr(_whole(xp, below), _whole(xp, n), p) >= u, below, k)
    else:
        top = xp.broadcast_to(
            xp.minimum(n, 2.0**53), np.broadcast_shapes(u.shape, n.shape, p.shape)
        )
        whole = _whole(xp, n)
        k = _smallest_count(xp, lambda k: (k >= top) | (sp.bdtr(k, whole, p) >= u), top)
    k = xp.where((p == 0) | (n == 0), 0, xp.where(p == 1, n, xp.clip(k, 0, n)))
    k = xp.where(xp.isnan(prob) | xp.isinf(count), xp.nan, k)
    return k.astype(count.dtype)


def _zero_rate_grad(g, rate):
    return zeros_like(rate)


def _zero_rate_tangent(tu, trate):
    return zeros_like(trate)


_poisson_icdf_p = elementwise_op(
    "_poisson_icdf",
    _poisson_icdf,
    (None, _zero_rate_grad),
    _zero_rate_tangent,
    methods=False,
    prepare=None,
    # internal: tests/test_random.py checks poisson's draws, zero gradients and batching
    samples=None,
    node_name="PoissonBackward0",
)


def _binomial_raise(g):
    raise RuntimeError("derivative for aten::binomial is not implemented")


def _binomial_jvp(tu, tcount, tprob):
    raise NotImplementedError(
        "Trying to use forward AD with aten::binomial that does not support it."
    )


_binomial_icdf_p = elementwise_op(
    "_binomial_icdf",
    _binomial_icdf,
    (None, _binomial_raise, _binomial_raise),
    _binomial_jvp,
    methods=False,
    prepare=None,
    # internal: tests/test_random.py checks binomial's draws, raising backward and batching
    samples=None,
    node_name="NotImplemented",
)


# ------------------------------------------------------------------ poisson, binomial
def _tensor_arg(name: str, arg: str, pos: int, v) -> None:
    if not isinstance(v, Tensor):
        raise TypeError(
            f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not {type(v).__name__}"
        )


def poisson(input, generator=None):
    """A Poisson count for each rate of ``input``, in its dtype."""
    _tensor_arg("poisson", "input", 1, input)
    _check_generator("poisson", generator)
    check_random_inputs(input)
    if not input.is_floating_point():
        raise dt.not_implemented("poisson_cpu", input.dtype)
    u = _uniform_draw(tuple(input.shape), dt.float64, generator, input.device)
    return _poisson_icdf_p.fn(u, input)


def binomial(count, prob, generator=None):
    """A binomial count of ``count`` trials with success probability ``prob`` each."""
    _tensor_arg("binomial", "count", 1, count)
    _tensor_arg("binomial", "prob", 2, prob)
    _check_generator("binomial", generator)
    check_random_inputs(count, prob)
    if not count.is_floating_point():
        raise ValueError(
            f"binomial only supports floating-point dtypes for count, got: "
            f"{count.dtype.scalar_name}"
        )
    if prob.dtype != count.dtype:
        raise RuntimeError(
            f"Found dtype {prob.dtype.scalar_name} but expected {count.dtype.scalar_name}"
        )
    if count.dtype == dt.float16:
        raise dt.not_implemented("binomial_cpu", count.dtype)
    shape = tuple(np.broadcast_shapes(tuple(count.shape), tuple(prob.shape)))
    u = _uniform_draw(shape, dt.float64, generator, count.device)
    return _binomial_icdf_p.fn(u, count, prob)


# ------------------------------------------------------------------ multinomial
def _values(t: Tensor) -> Tensor:
    """The values of t under any transforms (every sample's, as a loop would check)."""
    while isinstance(t, WrapperTensor):
        t = t._inner
    return t


def _multinomial_checks(input, num_samples, replacement) -> None:
    if isinstance(num_samples, bool) or not isinstance(num_samples, numbers.Integral):
        raise TypeError(
            "multinomial(): argument 'num_samples' (position 2) must be int, not "
            f"{type(num_samples).__name__}"
        )
    if not input.is_floating_point():
        raise RuntimeError(
            f"multinomial only supports floating-point dtypes for input, got: "
            f"{input.dtype.scalar_name}"
        )
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = input.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    if n > 2**24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    v = _values(input)
    if v.numel() == 0:
        return
    if not bool(((v >= 0) & v.isfinite()).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if not bool((v.sum(-1) > 0).all()):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """``num_samples`` category indices per row of ``input`` (weights, not necessarily
    normalized), drawn with or without ``replacement``."""
    _tensor_arg("multinomial", "input", 1, input)
    _check_generator("multinomial", generator)
    check_random_out(out)
    check_random_inputs(input)
    _multinomial_checks(input, num_samples, replacement)
    if out is not None and out.dtype != dt.int64:
        raise RuntimeError(f"multinomial expects Long tensor out, got: {out.dtype.scalar_name}")
    rows = tuple(input.shape[:-1])
    if input.numel() == 0:
        res = zeros_like(input, dtype=dt.int64).new_zeros((*rows, num_samples))
    elif replacement:
        p = input.to(dt.float64) if input.dtype != dt.float64 else input
        cdf = (p / p.sum(-1, keepdim=True)).cumsum(-1)
        u = _uniform_draw((*rows, num_samples), dt.float64, generator, input.device)
        res = searchsorted(cdf.detach(), u).clamp_max(input.shape[-1] - 1)
    else:
        u = _uniform_draw(tuple(input.shape), input.dtype, generator, input.device)
        keys = input.detach() / -(-u).log1p()  # p / Exp(1)
        if num_samples == 1:
            res = keys.argmax(-1, keepdim=True)
        else:
            res = topk(keys, num_samples).indices
    return res if out is None else write_out(out, res)


def _multinomial_method(self, num_samples, replacement=False, *, generator=None):
    return multinomial(self, num_samples, replacement, generator=generator)


tensor_methods({"multinomial": _multinomial_method})

__all__ = ["binomial", "multinomial", "poisson"]
