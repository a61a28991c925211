"""Scans along a dim: cumsum, cumprod, logcumsumexp, cummax and cummin."""

from __future__ import annotations

import math

import numpy as np

from .._core.meta import by_kernel
from .._core.methods import tensor_methods
from .._core.no_kernel import NoKernel, dimensioned_nonempty, unless_empty
from .._core.op import LINEAR
from .._opdb.samples import S
from ._families import COMPLEX, FLOATS, FLOATS_INT, FLOATS_INT_BOOL, silent
from ._reduce_common import _DIMS, _acc, _err_dim, _has_zero, _wider, _wrap, defop, dim1, distinct
from .binary import _logaddexp
from .comparison import where
from .creation import arange, zeros_like
from .extrema import _indexed_op
from .shape import cat


def _revcumsum(g, dim):
    """sum_{k >= i} g_k along dim: the transpose of cumsum (a reversed scan: a total minus
    the running sums would spread one NaN or inf to every element, and cancel)."""
    if g.dim() == 0:
        return g
    return g.flip(dim).cumsum(dim).flip(dim)


def _scan(name: str, fn: str):
    def kernel(xp, x, dim, *, dtype=None):
        d = dim1(dim, x.ndim)
        x, acc = _acc(xp, x, dtype)
        if x.ndim == 0:
            return x.astype(acc or x.dtype)
        if dtype is not None and dtype.name == "bool":
            raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for 'Bool'")
        out = getattr(xp, fn)(x, axis=d, dtype=acc)
        return _plus_zero(out) if fn == "cumsum" else out

    return kernel


def _plus_zero(out):
    """A running sum starts from +0, as PyTorch's does: a leading -0.0 becomes +0.0."""
    if out.dtype.kind in "fc":
        out += 0.0
    return out


_cumsum = _scan("cumsum", "cumsum")
_cumprod = _scan("cumprod", "cumprod")


def _accumulate(xp, ufunc: str, x, axis: int):
    """``ufunc.accumulate`` along ``axis``; CuPy has no ``accumulate`` for most ufuncs, so
    there it is a scan in log2(n) whole-array steps."""
    f = getattr(xp, ufunc)
    if xp is np:
        return f.accumulate(x, axis=axis)
    return _doubling_scan(xp, f, x, axis)


def _doubling_scan(xp, f, x, axis: int):
    """The inclusive scan of an associative f along ``axis`` in log2(n) whole-array steps."""
    y = xp.moveaxis(x, axis, -1).copy()
    k = 1
    while k < y.shape[-1]:
        y[..., k:] = f(y[..., k:], y[..., :-k])
        k *= 2
    return xp.moveaxis(y, -1, axis)


def _logcumsumexp(xp, x, dim):
    d = dim1(dim, x.ndim)
    if x.ndim == 0:
        return x.copy()
    if x.dtype.kind == "c":
        # NumPy's logaddexp has no complex loop: binary's, step by step in PyTorch's order
        # (the imaginary part's branch depends on the order of the steps)
        y = xp.moveaxis(x, d, -1).copy()
        for i in range(1, y.shape[-1]):
            y[..., i] = _logaddexp(xp, y[..., i - 1], y[..., i])
        return xp.moveaxis(y, -1, d)
    return _plus_zero(_accumulate(xp, "logaddexp", x, d))


def _scan_samples(low=-2.0, high=2.0):
    def samples(make):
        yield S((make((2, 3), low, high), 1))
        yield S((make((2, 3, 4), low, high), -1))
        yield S((make((2, 3, 4), low, high), 0))
        yield S((np.asarray(make((), low, high)), 0))
        yield S((make((0, 3), low, high), 0))
        yield S((make((3, 4), low, high), 1), {"dtype": _wider(make)})

    return samples


def _scan_op(name, kernel, vjp, jvp, samples, dtypes=FLOATS, **kw):
    return defop(
        name,
        silent(kernel),
        nin=1,
        vjp=vjp,
        jvp=jvp,
        samples=samples,
        error_samples=_err_dim(),
        test={"dtypes": dtypes},
        out=True,
        batch_rule=_DIMS,
        methods=True,
        **kw,
        meta=by_kernel,
    )


cumsum_p = _scan_op(
    "cumsum",
    _cumsum,
    lambda g, dim: _revcumsum(g, dim),
    LINEAR,
    _scan_samples(),
    dtypes=(*FLOATS_INT_BOOL, *COMPLEX),
    inplace=True,
    complex32=unless_empty("cumsum_out_cpu", scalar=True),  # (PyTorch's refusing kernel)
)


def _cumprod_others(x, d: int):
    """m[..., i, k] = prod_{j <= k, j != i} x_j for k >= i, else 0 (x's dim d moved last)."""
    n = x.shape[d]
    k = arange(n, device=x.device)
    i = k.reshape(n, 1)
    c = where(i == k, 1.0, x.movedim(d, -1).unsqueeze(-2)).cumprod(-1)
    return where(k >= i, c, 0.0)


def _cumprod_vjp(g, x, result, dim):
    """Through result / x without zeros; exact O(n^2) products of the others with zeros."""
    if not _has_zero(x):
        return _revcumsum(g * result.conj(), dim) / x.conj()
    d = dim1(dim, x.dim())
    others = _cumprod_others(x, d).conj()
    return (others * g.movedim(d, -1).unsqueeze(-2)).sum(-1).movedim(-1, d)


def _cumprod_jvp(t, x, result, dim):
    if not _has_zero(x):
        return result * (t / x).cumsum(dim)
    d = dim1(dim, x.dim())
    return (_cumprod_others(x, d) * t.movedim(d, -1).unsqueeze(-1)).sum(-2).movedim(-1, d)


def _cumprod_samples(make):
    yield from _scan_samples(0.5, 1.5)(make)
    if make.is_float:
        z = make((3, 4), 0.5, 1.5)
        z[0, 1] = z[1, 0] = z[1, 2] = z[2, 3] = 0  # one zero and two zeros in a row
        yield S((z, 1))
        yield S((z, 0))


cumprod_p = _scan_op(
    "cumprod",
    _cumprod,
    _cumprod_vjp,
    _cumprod_jvp,
    _cumprod_samples,
    dtypes=(*FLOATS_INT, *COMPLEX),
    inplace=True,
    complex32=unless_empty("cumprod_out_cpu", scalar=True),  # (else no kernel)
)


def _linear_scan(a, b, d: int):
    """s_i = a_i s_{i-1} + b_i along dim d (s_{-1} = 0), in log2(n) whole-tensor steps."""
    n, k = b.shape[d], 1
    while k < n:
        m = n - k
        b = cat([b.narrow(d, 0, k), b.narrow(d, k, m) + a.narrow(d, k, m) * b.narrow(d, 0, m)], d)
        if 2 * k < n:
            a = cat([a.narrow(d, 0, k), a.narrow(d, k, m) * a.narrow(d, 0, m)], d)
        k *= 2
    return b


def _lcse_weights(x, d: int):
    """The weights exp(x_j - r_i) of r = logcumsumexp(x) without r (x_j - r_i loses x_j's
    low digits when |x| is large): with M the running max, e_j = exp(x_j - M_j), the decay
    a_i = exp(M_{i-1} - M_i) and D_i = sum_{j <= i} exp(x_j - M_i), the weight is
    e_j a_{j+1} ... a_i / D_i. Also: where r_i = -inf (every x_j = -inf, D_i = 0) and where
    r_i = +inf (from the first +inf on: the scan stops, e = 0, a = 1)."""
    m = (x.real if x.is_complex() else x).cummax(d).values  # complex: the real parts' max
    top = m == math.inf
    low = m == -math.inf
    mg = where(low | top, 0.0, m)
    e = where(top, 0.0, (where(top, 0.0, x) - mg).exp())
    n = x.shape[d]
    prev = cat([mg.narrow(d, 0, 1), mg.narrow(d, 0, n - 1)], d)
    was_low = cat([low.narrow(d, 0, 1), low.narrow(d, 0, n - 1)], d)
    a = where(top, 1.0, where(was_low, 0.0, (prev - mg).exp()))
    return e, a, _linear_scan(a, e, d), low, top


def _logcumsumexp_vjp(g, x, result, dim):
    """sum_{i >= j} g_i exp(x_j - r_i): a reversed scan of g_i / D_i with the decays (NaN
    into every x_j = -inf where r_i = -inf, and at x_j = +inf, like PyTorch)."""
    if x.dim() == 0 or not x.numel():
        return g
    d = dim1(dim, x.dim())
    e, a, den, low, top = _lcse_weights(x, d)
    cx = x.is_complex()  # holomorphic: the weights conjugated, i.e. conj(formula(conj(g)))
    c = where(top, 0.0, where(low, math.nan, (g.conj() if cx else g) / where(low, 1.0, den)))
    nxt = cat([a.narrow(d, 1, x.shape[d] - 1), zeros_like(a.narrow(d, 0, 1))], d)
    out = e * _linear_scan(nxt.flip(d), c.flip(d), d).flip(d)
    out = where(x == math.inf, math.nan, out)
    return out.conj() if cx else out


def _logcumsumexp_jvp(t, x, result, dim):
    """sum_{j <= i} t_j exp(x_j - r_i): a scan of t_j e_j with the decays, over D_i; 0 where
    r_i = -inf, NaN where r_i = +inf, like PyTorch."""
    if x.dim() == 0 or not x.numel():
        return t
    d = dim1(dim, x.dim())
    e, a, den, low, top = _lcse_weights(x, d)
    out = _linear_scan(a, t * e, d) / where(low, 1.0, den)
    return where(top, math.nan, where(low, 0.0, out))


logcumsumexp_p = _scan_op(
    "logcumsumexp",
    _logcumsumexp,
    _logcumsumexp_vjp,
    _logcumsumexp_jvp,
    lambda make: (s for s in _scan_samples()(make) if "dtype" not in s.kwargs),
    dtypes=(*FLOATS, *COMPLEX),
    no_kernel=NoKernel(
        "bi",
        "logcumsumexp_out_cpu",
        first=lambda arrays, attrs: dim1(attrs["dim"], arrays[0].ndim),
    ),
    complex32="logcumsumexp_out_cpu",  # (PyTorch's kernel that refuses it)
)


def _cumext(name: str, ufunc: str, **kw):
    def kernel(xp, x, dim):
        if x.ndim == 0:
            if dim not in (-1, 0):  # PyTorch's own check for a scalar, not the dim wrap's
                raise IndexError(
                    f"{name}(): Expected reduction dim -1 or 0 for scalar but got {dim}"
                )
            return x.copy(), xp.zeros((), xp.int64)
        d = dim1(dim, x.ndim)
        vals = _accumulate(xp, ufunc, x, d)
        pos = xp.arange(x.shape[d]).reshape([-1 if i == d else 1 for i in range(x.ndim)])
        idx = (
            # ties take the latest position, and every NaN takes over, like PyTorch
            _accumulate(xp, "maximum", xp.where((x == vals) | (x != x), pos, 0), d)
            if x.size
            else xp.zeros(x.shape, xp.int64)
        )
        return vals, idx.astype(xp.int64)

    kernel.__name__ = name

    def samples(make):
        for s, d in (((2, 3), 1), ((2, 3, 4), -1), ((2, 3, 4), 0), ((), 0)):
            yield S((distinct(make, s), d))

    return _indexed_op(
        name,
        kernel,
        error_samples=_err_dim(),
        samples=samples,
        test={"dtypes": FLOATS_INT},
        **kw,
    )


cummax_p = _cumext(
    "cummax", "maximum", no_kernel=NoKernel("c", "cummax_cpu", when=dimensioned_nonempty)
)
cummin_p = _cumext(
    "cummin", "minimum", no_kernel=NoKernel("c", "cummin_cpu", when=dimensioned_nonempty)
)


cummax = _wrap("cummax", cummax_p)
cummin = _wrap("cummin", cummin_p)

tensor_methods({"cummax": cummax, "cummin": cummin})
