"""torch.special's orthogonal polynomials: Chebyshev (T, U, V, W, and shifted to [0, 1]),
Hermite (physicists' H, probabilists' He), Laguerre L and Legendre P.

Each is ``f(x, n)`` of two broadcasting operands (either may be a Python number, not
both), computed in the promoted floating dtype. PyTorch reads the degree ``n`` in that
dtype and truncates it towards zero; a NaN, infinite or out-of-range degree counts as
negative, and a negative degree gives 0. Otherwise the value is the three-term
recurrence run to degree ``n``, except where PyTorch takes a shortcut: the closed form at
the interval's ends, the trigonometric form inside it for higher degrees (Chebyshev
kinds), NaN beyond a dtype's degree limit (Hermite). A NaN ``x`` gives NaN from degree 1
on (where PyTorch's CPU kernel may return an uninitialized value).

PyTorch defines no derivative for these: results never require grad, and a forward-mode
tangent is absent. No Tensor methods or in-place forms, as in PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._core import dtype as dt
from .._core.no_kernel import NoKernel
from .._core.op import ErrorInput, Op
from .._opdb.samples import S
from ._families import FLOATS_INT, Promotion, binary, silent

_NUMBER = (bool, int, float, complex)


# ------------------------------------------------------------------ the shared kernel
def _degree(xp, n):
    """The degree PyTorch's kernel uses: ``n`` (in the computing dtype) truncated to int64;
    NaN, infinities and values past int64's range give -1 (a negative degree)."""
    ok = xp.isfinite(n) & (xp.abs(n) < 2.0**63)
    return xp.trunc(xp.where(ok, n, -1)).astype(xp.int64)


def _fms(a, q, c):
    """a * q - c rounded once, as PyTorch's compiled kernel contracts it (a fused
    multiply-add): exact in float64 for float32 operands, then rounded; plain in float64."""
    if a.dtype == np.float32:
        return (a.astype(np.float64) * q - c).astype(np.float32)
    return a * q - c


def _recurrence(xp, x, n, first: Callable, step: Callable):
    """P_n(x) by P_0 = 1, P_1 = first(x) and P_{j+1} = (a P_j - c) / d where
    (a, c, d) = step(x, j, t, P_{j-1}) (d None: no division), for n >= 0. Each element
    stops at its own degree, or at a NaN (which the rest of the recurrence would keep)."""
    out = xp.ones(x.shape, x.dtype)
    out = xp.where(n == 1, first(x), out).ravel()
    if xp is not np:
        return _recurrence_everywhere(xp, x, n, out.reshape(x.shape), first, step)
    idx = xp.nonzero((n >= 2).ravel())[0]
    if idx.size == 0:
        return out.reshape(x.shape)
    xs, ns = x.ravel()[idx], n.ravel()[idx]
    p, q = xp.ones(xs.shape, x.dtype), first(xs)
    j, t = 1, x.dtype.type
    while idx.size:
        a, c, d = step(xs, j, t, p)
        r = _fms(a, q, c)
        p, q = q, r if d is None else r / d
        j += 1
        done = (ns == j) | xp.isnan(q)
        if bool(done.any()):
            out[idx[done]] = q[done]
            keep = ~done
            idx, xs, ns, p, q = idx[keep], xs[keep], ns[keep], p[keep], q[keep]
    return out.reshape(x.shape)


def _recurrence_everywhere(xp, x, n, out, first: Callable, step: Callable):
    """``_recurrence`` on a GPU: every element runs up to the largest degree (read back once,
    not once a step), taking its value at its own degree; a NaN stays NaN to the end."""
    top = int(n.max()) if n.size else 0
    p, q = xp.ones(x.shape, x.dtype), first(x)
    t = x.dtype.type
    for j in range(1, top):
        a, c, d = step(x, j, t, p)
        r = _fms(a, q, c)
        p, q = q, r if d is None else r / d
        out = xp.where(n == j + 1, q, out)
    return out


@dataclass(frozen=True)
class _Poly:
    """One polynomial family: ``first(x)`` is P_1, ``step(x, j, t, p)`` the terms of
    P_{j+1} = (a P_j - c) / d from p = P_{j-1} (``t``: the dtype's scalar type, for j's
    constants; see ``_recurrence``), and
    ``cases(xp, x, n)`` the (mask, value) pairs PyTorch returns before any recurrence, in
    its order (the first mask that holds wins)."""

    first: Callable
    step: Callable
    cases: Callable

    def __call__(self, xp, x, n):
        if not hasattr(n, "dtype"):
            n = xp.full((), n, dtype=x.dtype)  # (filled on the device: no copy)
        x, n = xp.broadcast_arrays(x, n.astype(x.dtype, copy=False))
        n = _degree(xp, n)
        cases = [(n < 0, 0)] + self.cases(xp, x, n)
        taken = cases[0][0]
        for mask, _ in cases[1:]:
            taken = taken | mask
        out = _recurrence(xp, x, xp.where(taken, 0, n), self.first, self.step)
        for mask, value in reversed(cases):
            out = xp.where(mask, value, out)
        return out.astype(x.dtype, copy=False)


def _libm(name: str):
    """NumPy's ``name`` rounded as the C library's float functions round: a float32
    argument is computed in float64 and rounded (NumPy's own float32 loops are less
    accurate than the C library's, which PyTorch calls)."""

    def fn(xp, y):
        if y.dtype == np.float32:
            return getattr(xp, name)(y.astype(np.float64)).astype(np.float32)
        return getattr(xp, name)(y)

    fn.__name__ = name
    return fn


_acos, _cos, _sin = _libm("arccos"), _libm("cos"), _libm("sin")


def _f(x, v):
    """A value made of the (int64) degree, in x's dtype."""
    return v.astype(x.dtype, copy=False)


def _sign(xp, n, v):
    """v for an even degree, -v for an odd one."""
    return xp.where(n % 2 == 0, v, -v)


# ------------------------------------------------------------------ Chebyshev
def _cheb_step(x, j, t, p):
    return x + x, p, None


def _ends(xp, x, n, at_one, at_minus_one):
    """The closed forms PyTorch returns at |x| == 1."""
    return [(xp.abs(x) == 1, xp.where(x > 0, at_one, at_minus_one))]


def _t_cases(xp, x, n):
    one = xp.ones(x.shape, x.dtype)
    inside = (n > 6) & (xp.abs(x) < 1)
    return _ends(xp, x, n, one, _sign(xp, n, one)) + [(inside, _cos(xp, _f(x, n) * _acos(xp, x)))]


def _u_trig(xp, y, n):
    """U_n(y) = sin((n+1) acos y) / sin(acos y); (n+1) cos((n+1) acos y) / y where the
    sine is 0."""
    a = _acos(xp, y)
    m = _f(y, n + 1)
    s = _sin(xp, a)
    return xp.where(s != 0, _sin(xp, m * a) / s, m * _cos(xp, m * a) / y)


def _u_cases(xp, x, n):
    m = _f(x, n + 1)
    inside = (n > 8) & (xp.abs(x) < 1)
    return _ends(xp, x, n, m, _sign(xp, n, m)) + [(inside, _u_trig(xp, x, n))]


def _v_trig(xp, y, n, big):
    """V_n(y) = cos((n+1/2) acos y) / cos(acos(y)/2), or ``big`` where sin(acos(y)/2)
    rounds to 1."""
    a = _acos(xp, y)
    h = a / 2
    v = _cos(xp, (_f(y, n) + y.dtype.type(0.5)) * a) / _cos(xp, h)
    return xp.where(_sin(xp, h) != 1, v, big)


def _w_trig(xp, y, n, small):
    """W_n(y) = sin((n+1/2) acos y) / sin(acos(y)/2), or ``small`` where cos(acos(y)/2)
    rounds to 1."""
    a = _acos(xp, y)
    h = a / 2
    w = _sin(xp, (_f(y, n) + y.dtype.type(0.5)) * a) / _sin(xp, h)
    return xp.where(_cos(xp, h) != 1, w, small)


def _v_cases(xp, x, n):
    big = _sign(xp, n, _f(x, 2 * n + 1))
    inside = (n > 8) & (xp.abs(x) < 1)
    return _ends(xp, x, n, xp.ones(x.shape, x.dtype), big) + [(inside, _v_trig(xp, x, n, big))]


def _w_cases(xp, x, n):
    big = _f(x, 2 * n + 1)
    small = _sign(xp, n, xp.ones(x.shape, x.dtype))
    inside = (n > 8) & (xp.abs(x) < 1)
    return _ends(xp, x, n, big, small) + [(inside, _w_trig(xp, x, n, xp.where(x > 0, big, small)))]


# ------------------------------------------------------------------ shifted Chebyshev
def _y(x):
    """The shift of [0, 1] onto [-1, 1]: 2x - 1, as PyTorch rounds it."""
    return x + x - 1


def _shifted_step(x, j, t, p):
    y = _y(x)
    return y + y, p, None


def _shifted_ends(xp, x, n, at_one, at_zero):
    """The closed forms PyTorch returns at x == 1 and x == 0."""
    return [(x == 1, at_one), (x == 0, at_zero)]


def _inside(xp, x, n, degree):
    return (n > degree) & (xp.abs(_y(x)) < 1)


def _st_cases(xp, x, n):
    one = xp.ones(x.shape, x.dtype)
    trig = _cos(xp, _f(x, n) * _acos(xp, _y(x)))
    return _shifted_ends(xp, x, n, one, _sign(xp, n, one)) + [(_inside(xp, x, n, 6), trig)]


def _su_cases(xp, x, n):
    m = _f(x, n + 1)
    trig = _u_trig(xp, _y(x), n)
    return _shifted_ends(xp, x, n, m, _sign(xp, n, m)) + [(_inside(xp, x, n, 6), trig)]


def _sv_cases(xp, x, n):
    big = _sign(xp, n, _f(x, 2 * n + 1))
    trig = _v_trig(xp, _y(x), n, big)
    one = xp.ones(x.shape, x.dtype)
    return _shifted_ends(xp, x, n, one, big) + [(_inside(xp, x, n, 6), trig)]


def _sw_cases(xp, x, n):
    small = _sign(xp, n, xp.ones(x.shape, x.dtype))
    trig = _w_trig(xp, _y(x), n, small)
    return _shifted_ends(xp, x, n, _f(x, 2 * n + 1), small) + [(_inside(xp, x, n, 4), trig)]


# ------------------------------------------------------------------ Hermite, Laguerre, Legendre
def _hermite_cases(xp, x, n):
    """NaN past PyTorch's degree limit: 128 in float32, 512 in float64."""
    limit = 128 if x.dtype == np.float32 else 512
    return [(n > limit, x.dtype.type(np.nan))]


# (a NumPy scalar t(...) goes after the array: before it, NumPy's operator would run)
def _h_step(x, j, t, p):
    return x + x, p * t(2 * j), None


def _he_step(x, j, t, p):
    return x, p * t(j), None


def _l_cases(xp, x, n):
    return [(x == 0, 1)]


def _l_step(x, j, t, p):
    return (1 - x) + t(2 * j), p * t(j), t(j + 1)


def _p_cases(xp, x, n):
    one = xp.ones(x.shape, x.dtype)
    return _ends(xp, x, n, one, _sign(xp, n, one))


def _p_step(x, j, t, p):
    return x * t(2 * j + 1), p * t(j), t(j + 1)


# ------------------------------------------------------------------ the generator
def _both_numbers(name: str) -> str:
    overloads = "".join(
        f" * ({a} x, {b} n, *, Tensor out = None)\n"
        for a, b in (("Tensor", "Tensor"), ("Number", "Tensor"), ("Tensor", "Number"))
    )
    return (
        f"{name}() received an invalid combination of arguments - got ({{}}, {{}}), but "
        f"expected one of:\n{overloads}"
    )


def _numbers_and_half(op: Op, kernel: str) -> Callable:
    """``op.prepare`` after PyTorch's TypeError for two Python numbers, then the refusal of a
    float16 result (no Half kernel on the CPU)."""
    prepare, text = op.prepare, _both_numbers(op.name)

    def check(arrays, attrs=None):
        x, n = arrays[0], arrays[1]
        if isinstance(x, _NUMBER) and isinstance(n, _NUMBER):
            raise TypeError(text.format(type(x).__name__, type(n).__name__))
        arrays, odt = prepare(arrays, attrs)
        if arrays[0].dtype == np.float16:
            raise dt.not_implemented(kernel, dt.float16)
        return arrays, odt

    return check


def _samples(low: float, high: float, degrees: tuple[int, ...]):
    """Tensor x with each degree as a Python number; a tensor of degrees with a number x;
    broadcasting tensors of both (degrees in the sample's dtype, non-integer ones among
    them for float dtypes); a negative degree; the interval's ends."""

    def samples(make):
        for d in degrees:
            yield S((make((2, 3), low, high), d), name=f"n={d}")
        top = max(degrees)
        yield S((0.5, make((4,), -1, top)), name="number x")
        yield S((make((3, 1), low, high), make((4,), -1, top)), name="broadcast")
        yield S((make((), low, high), make((2, 2), 0, top)), name="0-d x")
        yield S((make((0, 3), low, high), 3), name="empty")
        yield S((make((3,), low, high), -2), name="negative n")
        if make.is_float:
            ends = np.array([-1.0, 0.0, 1.0, 0.5], dtype=make.dtype)
            yield S((ends, make((3, 1), 0, top)), name="ends")

    return samples


def _errors(kernel: str):
    """Error samples: a complex operand, a float16 result, two Python numbers."""
    text = f'"{kernel}" not implemented for '

    def errors(make):
        x = make((3,), dtype=np.float32)
        yield ErrorInput(
            S((x.astype(np.complex64), 2)), NotImplementedError, text + "'ComplexFloat'"
        )
        yield ErrorInput(S((x, 2 + 1j)), NotImplementedError, text + "'ComplexFloat'")
        yield ErrorInput(S((x.astype(np.float16), 2)), NotImplementedError, text + "'Half'")
        yield ErrorInput(S((x.astype(np.float16), 2.5)), NotImplementedError, text + "'Half'")
        bf16 = x.astype(dt.bfloat16.np)
        yield ErrorInput(S((bf16, 2)), NotImplementedError, text + "'BFloat16'")
        yield ErrorInput(
            S((2.0, 3)),
            TypeError,
            r"received an invalid combination of arguments - got \(float, int\)",
        )

    return errors


def polynomial(
    name: str,
    poly: _Poly,
    *,
    low: float = -1.5,
    high: float = 1.5,
    degrees: tuple[int, ...] = (0, 1, 2, 3, 5, 10),
) -> Op:
    """``special.<name>(x, n, *, out=None)``: an elementwise op of x and the degree n, with
    PyTorch's promotion to a floating dtype, ``out=``, no gradient and no Tensor method.
    Samples: x in [low, high], at each of ``degrees``."""
    kernel = f"{name}_cpu"
    op = binary(
        f"special_{name}",
        silent(poly),
        None,
        None,
        promotion=Promotion.FLOAT,
        api=f"special.{name}",
        methods=False,
        dtypes=FLOATS_INT,
        samples=_samples(low, high, degrees),
        error_samples=_errors(kernel),
        no_kernel=NoKernel("c", kernel),
        no_bfloat16=kernel,
    )
    op.prepare = _numbers_and_half(op, kernel)
    return op


# ------------------------------------------------------------------ the ops
special_chebyshev_polynomial_t_p = polynomial(
    "chebyshev_polynomial_t",
    _Poly(lambda x: x, _cheb_step, _t_cases),
)
special_chebyshev_polynomial_u_p = polynomial(
    "chebyshev_polynomial_u",
    _Poly(lambda x: x + x, _cheb_step, _u_cases),
)
special_chebyshev_polynomial_v_p = polynomial(
    "chebyshev_polynomial_v",
    _Poly(lambda x: x + x - 1, _cheb_step, _v_cases),
)
special_chebyshev_polynomial_w_p = polynomial(
    "chebyshev_polynomial_w",
    _Poly(lambda x: x + x + 1, _cheb_step, _w_cases),
)
special_shifted_chebyshev_polynomial_t_p = polynomial(
    "shifted_chebyshev_polynomial_t",
    _Poly(_y, _shifted_step, _st_cases),
    low=-0.25,
    high=1.25,
)
special_shifted_chebyshev_polynomial_u_p = polynomial(
    "shifted_chebyshev_polynomial_u",
    _Poly(lambda x: _y(x) + _y(x), _shifted_step, _su_cases),
    low=-0.25,
    high=1.25,
)
special_shifted_chebyshev_polynomial_v_p = polynomial(
    "shifted_chebyshev_polynomial_v",
    _Poly(lambda x: _y(x) + _y(x) - 1, _shifted_step, _sv_cases),
    low=-0.25,
    high=1.25,
)
special_shifted_chebyshev_polynomial_w_p = polynomial(
    "shifted_chebyshev_polynomial_w",
    _Poly(lambda x: _y(x) + _y(x) + 1, _shifted_step, _sw_cases),
    low=-0.25,
    high=1.25,
)
special_hermite_polynomial_h_p = polynomial(
    "hermite_polynomial_h",
    _Poly(lambda x: x + x, _h_step, _hermite_cases),
    low=-2.0,
    high=2.0,
)
special_hermite_polynomial_he_p = polynomial(
    "hermite_polynomial_he",
    _Poly(lambda x: x, _he_step, _hermite_cases),
    low=-2.0,
    high=2.0,
)
special_laguerre_polynomial_l_p = polynomial(
    "laguerre_polynomial_l",
    _Poly(lambda x: 1 - x, _l_step, _l_cases),
    low=-1.0,
    high=4.0,
)
special_legendre_polynomial_p_p = polynomial(
    "legendre_polynomial_p",
    _Poly(lambda x: x, _p_step, _p_cases),
)

__all__ = [
    "polynomial",
    "special_chebyshev_polynomial_t_p",
    "special_chebyshev_polynomial_u_p",
    "special_chebyshev_polynomial_v_p",
    "special_chebyshev_polynomial_w_p",
    "special_hermite_polynomial_h_p",
    "special_hermite_polynomial_he_p",
    "special_laguerre_polynomial_l_p",
    "special_legendre_polynomial_p_p",
    "special_shifted_chebyshev_polynomial_t_p",
    "special_shifted_chebyshev_polynomial_u_p",
    "special_shifted_chebyshev_polynomial_v_p",
    "special_shifted_chebyshev_polynomial_w_p",
]
