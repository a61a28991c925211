"""Gamma and Dirichlet draws, and their implicit reparameterization gradients:
``_standard_gamma``, ``_sample_dirichlet``, ``_standard_gamma_grad`` and ``_dirichlet_grad``
(the primitives ``torch.distributions`` builds Gamma, Beta, Dirichlet and friends on).

A draw x of Gamma(alpha, 1) has the gradient dx/dalpha = -(dF/dalpha) / (dF/dx) at the
drawn x (F the cdf, holding the uniform behind the draw fixed). ``_standard_gamma_grad``
computes it in float64: below the upper tail by the series of the lower incomplete gamma
function differentiated term by term,

    dx/da = (x / a) * sum_n c_n * (psi(a + n + 1) - log x),  c_n = x^n / ((a+1)...(a+n)),

whose terms are positive weights of one sign change (no loss of digits there), and in the
upper tail (where that sum cancels) by the upper integral
dx/da = int_0^inf (1 + u/x)^(a-1) e^(-u) (log(x + u) - psi(a)) du, by Gauss-Laguerre nodes
scaled to the integrand's decay rate. ``_dirichlet_grad`` is PyTorch's quantity for a
Beta(alpha, beta) marginal, beta = total - alpha: dx/dalpha at fixed beta, over 1 - x (so
that d_j (delta_ij - x_i) is a Dirichlet draw's Jacobian), from the incomplete beta
function's series at x or (by its symmetry) at 1 - x, whichever lies below the mean.

As in PyTorch: ``_standard_gamma`` differentiates in alpha through ``_standard_gamma_grad``
(whose own backward raises), ``_sample_dirichlet`` and ``_dirichlet_grad`` record a node
whose backward raises (``torch.distributions`` differentiates Dirichlet through its own
Function), and forward mode raises for all four. Under vmap the draws follow the
randomness mode: 'error' raises, 'same' draws one value for an unbatched alpha (and raises
PyTorch's error for a batched one), 'different' draws every batch element at once.
"""

from __future__ import annotations

import numpy as np

from .._core import dtype as dt
from .._core.device import device_of
from .._core.dispatch import dispatch
from .._core.op import ErrorInput, defop
from .._opdb.samples import S
from ._batching import RANDOM_ERROR, SAME_BATCHED, materialize, rule_generator
from ._families import FLOATS, elementwise_op, silent
from ._no_derivative import NOT_IMPLEMENTED
from .generator import Generator, gpu_rng, rng
from .setops import _FORWARD_AD
from .unary import _special

_MAX_TERMS = 1_000_000  # (a series of alpha ~ 1e10 terms: the loop stops there regardless)


# ------------------------------------------------------------------ argument checks
def _checks(name: str, kernel: str, names: tuple):
    """A ``prepare`` with PyTorch's checks: tensors only, one dtype (the first operand's),
    float32 or float64, a torch.Generator."""

    def prepare(arrays, attrs=None):
        for i, (a, n) in enumerate(zip(arrays, names)):
            if not hasattr(a, "dtype"):
                raise TypeError(
                    f"{name}(): argument '{n}' (position {i + 1}) must be Tensor, not "
                    f"{type(a).__name__}"
                )
        g = (attrs or {}).get("generator")
        if g is not None and not isinstance(g, (Generator, np.random.Generator)):
            raise TypeError(
                f"{name}(): argument 'generator' must be torch.Generator, not {type(g).__name__}"
            )
        first = dt.of(arrays[0])
        for a in arrays[1:]:
            if dt.of(a) != first:
                raise RuntimeError(
                    f"Found dtype {dt.of(a).scalar_name} but expected {first.scalar_name}"
                )
        if first not in (dt.float32, dt.float64):
            raise dt.not_implemented(kernel, first)
        return arrays, None

    return prepare


# ------------------------------------------------------------------ draws
def _gammas(xp, g, alpha):
    """Gamma(alpha, 1) draws in float64 (0 for alpha <= 0 or NaN, inf for alpha = inf)."""
    a = alpha.astype(np.float64)
    ok = (a > 0) & (a < np.inf)
    s = g.standard_gamma(xp.where(ok, a, 1.0))
    return xp.where(ok, s, xp.where(a == np.inf, np.inf, 0.0))


def _at_least_tiny(xp, x, npd):
    """x clamped below at the dtype's smallest normal number (NaN too), as PyTorch's draws."""
    tiny = np.finfo(npd).tiny
    return xp.where(x > tiny, x, tiny).astype(npd)


def _to_device(xp, arr):
    return arr if xp is np else xp.asarray(arr)


def _drawn_like(xp, input, generator, draw):
    """``draw(g)`` with the generator of input's device: on a GPU a CuPy generator from the
    GPU's, with that GPU current (the numbers are made there)."""
    if xp is np:
        return draw(rng(generator))
    with input.device:
        return draw(gpu_rng(generator, device_of(input)))


def _standard_gamma_kernel(xp, input, generator=None):
    def draw(g):
        s = _gammas(xp, g, input).astype(input.dtype)
        return _at_least_tiny(xp, s, input.dtype)

    return _drawn_like(xp, input, generator, draw)


def _sample_dirichlet_kernel(xp, input, generator=None):
    def draw(g):
        gam = xp.maximum(_gammas(xp, g, input), np.finfo(np.float64).tiny)
        with np.errstate(invalid="ignore"):
            r = (gam / gam.sum(axis=-1, keepdims=True)).astype(input.dtype)
        below_one = np.nextafter(np.array(1, input.dtype), 0)
        r = _at_least_tiny(xp, r, input.dtype)
        return xp.where(r < below_one, r, below_one)

    return _drawn_like(xp, input, generator, draw)


# ------------------------------------------------------------------ d sample / d alpha
def _series(x, terms, on):
    """sum_n of ``terms(n, state)`` over the elements ``on``, stopping each element when its
    term no longer moves its sum. ``terms`` returns (term, state) from the last state."""
    total = np.zeros(x.shape)
    idx = np.nonzero(on)[0]
    state = None
    n = 0
    while idx.size and n < _MAX_TERMS:
        term, state = terms(n, idx, state)
        total[idx] += term
        keep = np.abs(term) > 1e-17 * np.abs(total[idx])
        if n > 0 and not keep.all():
            idx = idx[keep]
            state = tuple(s[keep] for s in state)
        n += 1
    return total


def _gamma_lower(a, x, on):
    """(x / a) * sum_n c_n (psi(a+n+1) - log x) over the elements ``on``."""
    sp = _special(np)
    d0 = sp.digamma(a + 1) - np.log(x)

    def terms(n, idx, state):
        if n == 0:
            c, d = np.ones(idx.size), d0[idx]
        else:
            c0, d0_ = state
            c = c0 * x[idx] / (a[idx] + n)
            d = d0_ + 1.0 / (a[idx] + n)
        return c * d, (c, d)

    return x / a * _series(x, terms, on)


_LAGUERRE = None


def _laguerre():
    global _LAGUERRE
    if _LAGUERRE is None:
        _LAGUERRE = _special(np).roots_laguerre(80)
    return _LAGUERRE


def _gamma_upper(a, x):
    """int_0^inf (1 + u/x)^(a-1) e^(-u) (log(x + u) - psi(a)) du, with u = v / r for r the
    integrand's decay rate at u = 0."""
    v, w = _laguerre()
    r = (1 - (a - 1) / x)[..., None]
    u = v / r
    xs, am1 = x[..., None], (a - 1)[..., None]
    f = np.exp(am1 * np.log1p(u / xs) - u + v) * (
        np.log(xs + u) - _special(np).digamma(a)[..., None]
    )
    return (f * w).sum(-1) / r[..., 0]


@silent
def _gamma_grad_kernel(xp, input, output):
    a = np.asarray(input.get() if xp is not np else input, dtype=np.float64)
    x = np.asarray(output.get() if xp is not np else output, dtype=np.float64)
    a, x = np.broadcast_arrays(a, x)
    shape = a.shape
    a, x = a.ravel(), x.ravel()
    ok = (a > 0) & (a < np.inf) & (x > 0) & (x < np.inf)
    upper = ok & (x > a + 2 * np.sqrt(a) + 3)
    res = np.zeros(a.shape)
    lower = ok & ~upper
    if lower.any():
        res[lower] = _gamma_lower(a[lower], x[lower], np.ones(lower.sum(), bool))
    if upper.any():
        res[upper] = _gamma_upper(a[upper], x[upper])
    res = np.where(ok, res, np.where((x <= 0) & (a > 0), 0.0, np.nan))  # (PyTorch's 0, NaN)
    return _to_device(xp, res.reshape(shape).astype(input.dtype))


def _beta_lower(x, a, b):
    """PyTorch's d / (1 - x), d = dx/da at fixed b for x ~ Beta(a, b), below the mean:
    x / a * sum_n t_n (H_n - K_n - L), with t_n = (a+b)_n / (a+1)_n x^n, H_n = sum_{j=1..n}
    1/(a+j), K_n = sum_{j<n} 1/(a+b+j), L = log x - psi(a+1) + psi(a+b) (the incomplete beta
    function's series I = x^a (1-x)^b / (a B(a, b)) sum_n t_n differentiated term by term)."""
    sp = _special(np)
    big_l = np.log(x) - sp.digamma(a + 1) + sp.digamma(a + b)

    def terms(n, idx, state):
        if n == 0:
            t, hk = np.ones(idx.size), np.zeros(idx.size)
        else:
            t0, hk0 = state
            ab = a[idx] + b[idx] + n - 1
            t = t0 * x[idx] * ab / (a[idx] + n)
            hk = hk0 + 1.0 / (a[idx] + n) - 1.0 / ab
        return t * (hk - big_l[idx]), (t, hk)

    return x / a * _series(x, terms, np.ones(x.shape, bool))


def _beta_upper(y, a, b):
    """The same above the mean, from y = 1 - x by I_x(a, b) = 1 - I_y(b, a): d / (1 - x) =
    x / b * sum_n s_n (K_n + C), with s_n = (a+b)_n / (b+1)_n y^n and C = log x - psi(a) +
    psi(a+b) (the derivative of I_y(b, a) in its second parameter)."""
    sp = _special(np)
    x = 1 - y
    c = np.log1p(-y) - sp.digamma(a) + sp.digamma(a + b)

    def terms(n, idx, state):
        if n == 0:
            s_, k = np.ones(idx.size), np.zeros(idx.size)
        else:
            s0, k0 = state
            ab = a[idx] + b[idx] + n - 1
            s_ = s0 * y[idx] * ab / (b[idx] + n)
            k = k0 + 1.0 / ab
        return s_ * (k + c[idx]), (s_, k)

    return x / b * _series(y, terms, np.ones(y.shape, bool))


@silent
def _dirichlet_grad_kernel(xp, x, alpha, total):
    out_dtype = x.dtype
    x, alpha, total = (
        np.asarray(v.get() if xp is not np else v, dtype=np.float64) for v in (x, alpha, total)
    )
    x, a, t = np.broadcast_arrays(x, alpha, total)
    shape = x.shape
    x, a, b = x.ravel(), a.ravel(), (t - a).ravel()
    ok = (x > 0) & (x < 1) & (a > 0) & (b > 0) & np.isfinite(a) & np.isfinite(b)
    res = np.zeros(x.shape)
    # below the mean at x, above it (by I_x(a, b) = 1 - I_{1-x}(b, a)) at 1 - x
    flip = ok & (x > a / (a + b))
    keep = ok & ~flip
    if keep.any():
        res[keep] = _beta_lower(x[keep], a[keep], b[keep])
    if flip.any():
        res[flip] = _beta_upper(1 - x[flip], a[flip], b[flip])
    res = np.where(ok | (x <= 0) | (a <= 0), res, np.nan)
    return _to_device(xp, res.reshape(shape).astype(out_dtype))


# ------------------------------------------------------------------ batch rule of the draws
@rule_generator
def _random_pointwise(op, along_last: bool = False):
    """A draw per element of its one input (``along_last``: normalized along the last dim,
    so a logical 0-d input gets a dim of its own)."""

    def rule(vmap, args, bdims, attrs):
        if vmap.randomness == "error":
            raise RuntimeError(RANDOM_ERROR)
        (x,), (bd,) = args, bdims
        if vmap.randomness == "same":
            if bd is not None:
                raise RuntimeError(SAME_BATCHED)
            return dispatch(op, (x,), attrs), None
        x = materialize(vmap, x, bd)
        if along_last and x.dim() == 1:
            return dispatch(op, (x.unsqueeze(-1),), attrs).squeeze(-1), 0
        return dispatch(op, (x,), attrs), 0

    return rule


# ------------------------------------------------------------------ derivatives
def _forward_error(aten: str, *, prefixed: bool) -> NotImplementedError:
    """Forward mode's error: PyTorch's text for an op with a derivative but no forward
    formula (``prefixed=False``), or for one without any (``aten::`` names)."""
    if prefixed:
        return NotImplementedError(
            f"Trying to use forward AD with aten::{aten} that does not support it."
        )
    return NotImplementedError(_FORWARD_AD.format(aten))


def _standard_gamma_jvp(t):
    raise _forward_error("_standard_gamma", prefixed=False)


def _sample_dirichlet_jvp(t):
    raise _forward_error("_sample_dirichlet", prefixed=True)


def _standard_gamma_grad_jvp(tinput, toutput):
    raise _forward_error("_standard_gamma_grad", prefixed=False)


def _dirichlet_grad_jvp(tx, talpha, ttotal):
    raise _forward_error("_dirichlet_grad", prefixed=True)


def _no_backward(aten: str):
    def vjp(g):
        raise RuntimeError(f"derivative for aten::{aten} is not implemented")

    vjp.__name__ = f"_{aten}_vjp"
    return vjp


def _standard_gamma_vjp(g, input, result):
    """The implicit reparameterization gradient: g * dx/dalpha at the drawn x."""
    return g * _standard_gamma_grad(input, result)


def _standard_gamma_grad_vjp(g):
    raise NotImplementedError("the derivative for '_standard_gamma_grad' is not implemented.")


# ------------------------------------------------------------------ samples
def _grad_samples(make):
    yield S((make((5,), 0.2, 5.0), make((5,), 0.1, 8.0)))
    yield S((make((2, 3), 0.5, 3.0), make((3,), 0.1, 4.0)), name="broadcast")
    yield S((make((), 1e3, 2e3), make((), 9e2, 2e3)), name="large alpha")
    yield S((make((4,), 1e-3, 1e-2), make((4,), 1e-6, 1.0)), name="small alpha")
    yield S((make((0, 2), 1.0, 2.0), make((0, 2), 1.0, 2.0)), name="empty")


def _dtype_errors(name: str, kernel: str, nin: int):
    def errors(make):
        f = make((3,), 0.5, 2.0)
        ints = f.astype(np.int64)
        yield ErrorInput(S((ints,) * nin), NotImplementedError, f'"{kernel}" not implemented')
        yield ErrorInput(S((f, *(f.astype(np.float16),) * (nin - 1))), RuntimeError, "Found dtype")
        yield ErrorInput(
            S((f, *(f,) * (nin - 2), 1.0)),
            TypeError,
            rf"{name}\(\): argument '\w+' \(position {nin}\) must be Tensor, not float",
        )

    return errors


def _dirichlet_grad_samples(make):
    alpha = make((2, 3), 0.5, 3.0)
    total = alpha + make((2, 3), 0.5, 3.0)
    yield S((make((2, 3), 0.05, 0.95), alpha, total))
    yield S((make((3,), 0.05, 0.95), make((3,), 1.0, 2.0), make((2, 1), 3.0, 4.0)), name="bcast")
    yield S((make((0,), 0.1, 0.9), make((0,), 1.0, 2.0), make((0,), 3.0, 4.0)), name="empty")


def _approximated_grad_op(name, kernel, vjps, jvp, arg_names, node_name, samples):
    """A reparameterisation gradient: a float-only elementwise function (no method, no
    ``out=``) whose values PyTorch only approximates and whose backward and forward mode
    PyTorch refuses, so tests/test_random.py checks it against scipy instead of torch."""
    cpu_kernel = f"{name}_cpu"
    return elementwise_op(
        name,
        kernel,
        vjps,
        jvp,
        prepare=_checks(name, cpu_kernel, arg_names),
        dtypes=FLOATS,
        complex=False,
        methods=False,
        out=False,
        node_name=node_name,
        no_bfloat16=cpu_kernel,
        samples=samples,
        error_samples=_dtype_errors(name, cpu_kernel, len(arg_names)),
        test={"no_oracle": True, "no_grad_test": True},
    )


# ------------------------------------------------------------------ the ops
# PyTorch's values are a rough approximation (errors up to 2% for alpha near 1e-3):
# tests/test_random.py compares them with finite differences of scipy's gammainc, and
# loosely with PyTorch's
_standard_gamma_grad_p = _approximated_grad_op(
    "_standard_gamma_grad",
    _gamma_grad_kernel,
    (_standard_gamma_grad_vjp, None),
    _standard_gamma_grad_jvp,
    ("input", "output"),
    node_name="StandardGammaGradBackward0",
    samples=_grad_samples,
)
_standard_gamma_grad = _standard_gamma_grad_p.fn

# PyTorch's values are an approximation (off by up to 1e-3 relative near the mean):
# tests/test_random.py compares them with finite differences of scipy's betainc, and with
# PyTorch's to 1e-3
_dirichlet_grad_p = _approximated_grad_op(
    "_dirichlet_grad",
    _dirichlet_grad_kernel,
    (_no_backward("_dirichlet_grad"),) * 3,
    _dirichlet_grad_jvp,
    ("x", "alpha", "total"),
    node_name=NOT_IMPLEMENTED,
    samples=_dirichlet_grad_samples,
)
_dirichlet_grad = _dirichlet_grad_p.fn

_standard_gamma_p = defop(
    "_standard_gamma",
    _standard_gamma_kernel,
    nin=1,
    random=True,
    vjp=_standard_gamma_vjp,
    jvp=_standard_gamma_jvp,
    prepare=_checks("_standard_gamma", "gamma_cpu", ("input",)),
    batch_rule=_random_pointwise(),
    node_name="StandardGammaBackward0",
    no_bfloat16="gamma_cpu",
    # random: tests/test_random.py checks the draws' moments, gradients, errors and batching
    samples=None,
)
_standard_gamma = _standard_gamma_p.fn

_sample_dirichlet_p = defop(
    "_sample_dirichlet",
    _sample_dirichlet_kernel,
    nin=1,
    random=True,
    vjp=_no_backward("_sample_dirichlet"),
    jvp=_sample_dirichlet_jvp,
    prepare=_checks("_sample_dirichlet", "dirichlet", ("input",)),
    batch_rule=_random_pointwise(along_last=True),
    node_name=NOT_IMPLEMENTED,
    no_bfloat16="dirichlet",
    # random: tests/test_random.py checks the draws' moments, errors and batching
    samples=None,
)
_sample_dirichlet = _sample_dirichlet_p.fn

__all__ = ["_dirichlet_grad", "_sample_dirichlet", "_standard_gamma", "_standard_gamma_grad"]
