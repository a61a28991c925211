"""Elementwise ops against PyTorch: broadcasting and its errors, arithmetic and division
of numbers and integers, extrema (maximum/minimum) at NaN and ties, where, lerp, logit,
atan2, shifts, the special functions, and IEEE results that stay silent."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from twolibs import (
    arr,
    assert_close,
    assert_same,
    assert_same_error,
    assert_same_outcome,
    grad_prog,
    ints,
    run,
    run_both,
    tangent_prog,
)

import numtorch as nt

# ==================================================================
# Found by issue 14's sweep of silently wrong values and derivatives.


@pytest.mark.parametrize("value", [0.5, -1.5, 2, 2.0])
def test_integral_addcmul_truncates_a_float_value(value):
    a, b, c = ints(3), ints(3) + 1, ints(3) - 2
    assert_same(lambda L, a, b, c: L.addcmul(a, b, c, value=value), a, b, c)
    assert_same(lambda L, a, b, c: a.clone().addcmul_(b, c, value=value), a, b, c)
    assert_same(lambda L, a, b, c: L.addcmul(a.double(), b, c, value=value), a, b, c)


def test_logit_gradient_is_nan_outside_the_unit_interval():
    x = np.array([3.52, -0.61, 0.3, 1.0, 0.0])
    assert_same(grad_prog(lambda L, x: L.logit(x).sum()), x)
    assert_same(tangent_prog(lambda L, x: L.logit(x)), x)
    assert_same(grad_prog(lambda L, x: L.logit(x, eps=0.1).sum()), x)


@pytest.mark.parametrize("name", ["maximum", "minimum", "max", "min"])
def test_elementwise_extrema_with_a_nan_give_both_operands_the_gradient(name):
    a = np.array([np.nan, 1.0, np.nan, 2.0, 1.0])
    b = np.array([0.0, np.nan, np.nan, 2.0, 3.0])

    def grads(L, a, b):
        a.requires_grad_(True), b.requires_grad_(True)
        (getattr(L, name)(a, b) * L.arange(1.0, 6.0, dtype=a.dtype)).sum().backward()
        return a.grad, b.grad

    def tangent(L, a, b):
        with L.autograd.forward_ad.dual_level():
            fa = L.autograd.forward_ad.make_dual(a, L.ones_like(a))
            fb = L.autograd.forward_ad.make_dual(b, 2 * L.ones_like(b))
            return L.autograd.forward_ad.unpack_dual(getattr(L, name)(fa, fb)).tangent

    assert_same(grads, a, b)
    assert_same(tangent, a, b)


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_extrema_tangent_shows_a_nan_tangent_through(name):
    """maximum(rsqrt(-0.19), 0.5): the tangent of the NaN operand is NaN, and PyTorch's masked
    sum lets it through although the other operand is picked."""
    x, b = np.array([-0.19, 4.0]), np.array([0.5, 0.5])

    def prog(L, x, b):
        f = lambda v: getattr(L, name)(v.rsqrt(), b)  # noqa: E731
        return L.func.jvp(f, (x,), (L.ones_like(x),))[1]

    assert_same(prog, x, b)


# ==================================================================
# Found by issue 14's third fuzz round (fresh seeds, 68,000 programs).


@pytest.mark.filterwarnings("ignore")
def test_remainder_zero_takes_the_dividends_sign():
    def prog(L, a, b):
        r = L.remainder(a, b)
        return r.signbit(), L.remainder(a, -2.0).signbit(), L.remainder(-0.0, b).signbit()

    assert_same(prog, np.array([0.0, -0.0, 4.0, -4.0, 3.0]), np.array([-2.18, 2.0, -2.0, 2.0, 2.0]))


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("fn", ["remainder", "fmod", "floor_divide"])
def test_integer_division_checks_shapes_before_zeros(fn):
    assert_same_error(lambda L: getattr(L, fn)(L.tensor([1, 2]), L.tensor([0, 1, 2])))


@pytest.mark.filterwarnings("ignore")
def test_maximum_and_minimum_keep_the_first_operand_on_a_tie():
    # maximum(-0.0, 0.0) is -0.0 in PyTorch (NumPy's ufunc returns the second operand)
    def prog(L, a, b):
        return [f(a, b).signbit() for f in (L.maximum, L.minimum, L.fmax, L.fmin)]

    assert_same(prog, np.array([-0.0, 0.0, 1.0]), np.array([0.0, -0.0, 1.0]))


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("weight", [0.25, "tensor"])
def test_lerp_of_integers_checks_shapes_before_its_kernel(weight):
    def prog(L):
        w = L.ones(1, dtype=L.long) if weight == "tensor" else weight
        return L.lerp(L.ones(1, 1, 2, dtype=L.long), L.ones(3, dtype=L.long), w)

    assert_same_error(prog)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "int64", "uint8"])
@pytest.mark.parametrize("values", ["both", "zero_input", "zero_other"])
def test_where_on_large_arrays_selects_the_exact_bits(dtype, values):
    # large arrays take a branch-free select of bit patterns: NaN payloads, signed zeros and
    # broadcast operands come out as PyTorch's where gives them
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 1, 40000)) * 100).astype(dtype)
    b = (rng.standard_normal(40000) * 100).astype(dtype)
    if a.dtype.kind == "f":
        a[0, 0, :4] = [np.nan, -0.0, np.inf, -np.nan]
        b[:4] = [-0.0, np.nan, -np.inf, 0.0]
    c = rng.random((4, 40000)) < 0.5

    def bits(L):
        x, y = L.tensor(a), L.tensor(b)
        x, y = {"both": (x, y), "zero_input": (0, y), "zero_other": (x, 0)}[values]
        out = L.where(L.tensor(c), x, y).numpy()
        return out.dtype, out.shape, out.tobytes()

    assert bits(nt) == bits(torch)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "bool"])
@pytest.mark.parametrize("number", [100, 1000, -1, -300, 2**40, 2**70, True])
@pytest.mark.parametrize("side", ["input", "other"])
def test_where_converts_a_python_int_with_pytorchs_overflow_check(dtype, number, side):
    def prog(L):
        x = L.tensor([1, 0, 1], dtype=getattr(L, dtype))
        c = L.tensor([True, False, True])
        return L.where(c, x, number) if side == "other" else L.where(c, number, x)

    assert_same_outcome(prog)


@pytest.mark.parametrize(
    "condition, input, other",
    [(True, "x", 0.0), (1, "x", "x"), (None, 0.5, 1), ([1], "x", 0), ((1, 2.0), "x", "x")],
)
def test_where_with_a_condition_that_is_no_tensor_raises_the_parsers_error(condition, input, other):
    def prog(L):
        x = L.tensor([1.0, 2.0])
        return L.where(condition, *(x if v == "x" else v for v in (input, other)))

    assert_same_error(prog)


# ==================================================================
# Causes behind the fourth fuzz round's failures (tests/progfuzz.py).


def test_atan2_gradient_at_the_origin_is_pytorchs_zero():
    def f(lib):
        y = lib.tensor([[0.0, 1.0]], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([[0.0, 2.0]], dtype=lib.float64, requires_grad=True)
        lib.atan2(y, x).backward(lib.ones(1, 2, dtype=lib.float64))
        return y.grad, x.grad.abs()  # (torch's x gradient at the origin is -0.)

    assert_same(f)


# ==================================================================
# Causes behind the bad-input sweep's DIFFERS cases (tests/test_bad_inputs.py), fixed.


def test_complex_sigmoid_silu_logaddexp():
    """PyTorch's complex kernels: 1 / (1 + exp(-z)), z sigmoid(z), and logaddexp as
    max + log1p(exp(min - max)) with the operands ordered by real part (ties: the first is
    the larger; NaN and -inf handled as PyTorch's)."""
    rng = np.random.default_rng(0)
    a = np.array([0.5 + 0.3j, 800 + 1j, -800 - 2j, 3 - 4j, 1 + np.nan * 1j, -np.inf + 1j, 0j])
    b = np.array([1.5 - 0.3j, 1 + 1j, 2 + 0j, 3 + 4j, 2, -np.inf + 2j, 1j])
    a = np.concatenate([a, rng.normal(size=8) * 3 + 4j * rng.normal(size=8)])
    b = np.concatenate([b, rng.normal(size=8) * 3 + 4j * rng.normal(size=8)])
    assert_same(
        lambda L, a, b: (
            L.sigmoid(a),
            L.nn.functional.silu(a),
            L.logaddexp(a, b),
            L.logaddexp(b, a),
            L.logaddexp(a, b.real),
            L.angle(a),  # real, and its tangent Im(t / z)
            L.func.jvp(L.angle, (a,), (b,)),
        ),
        a,
        b,
        rtol=1e-12,
    )


# ==================================================================
# Core behaviour found wrong by the nn.functional work (issue 10's follow-ups).


# ------------------------------------------------------------------ broadcasting errors
@pytest.mark.parametrize(
    "prog",
    [
        lambda lib, a, b: a + b,
        lambda lib, a, b: a * b.unsqueeze(0),
        lambda lib, a, b: lib.where(a > 0, b, 0.0),
        lambda lib, a, b: lib.lerp(a, b, 0.5),
        lambda lib, a, b: lib.addcmul(a, b, a),
        lambda lib, a, b: b.eq(a),
        lambda lib, a, b: a.add_(b),  # fails before a is written
    ],
    ids=["add", "mul-3d", "where", "lerp", "addcmul", "eq", "add_"],
)
def test_shapes_that_do_not_broadcast_raise_torchs_error(prog):
    assert_same_error(prog, arr(2, 3), arr(4))


@pytest.mark.parametrize("sa, sb", [((2, 3, 5), (4, 1)), ((5, 2, 3), (2, 4)), ((2, 0), (3,))])
def test_broadcast_error_names_the_rightmost_mismatch(sa, sb):
    assert_same_error(lambda lib, a, b: a - b, arr(*sa), arr(*sb))


def test_inplace_into_a_smaller_shape_raises_torchs_error():
    assert_same_error(lambda lib, a, b: a.add_(b), arr(2, 3), arr(5, 2, 3))


# ------------------------------------------------------------------ silent IEEE results
SPECIAL = np.array([0.0, -1.0, 1.0, 0.5, 1000.0, -1000.0])


@pytest.mark.parametrize(
    "prog",
    [
        lambda lib, x: x / 0,
        lambda lib, x: x / x,
        lambda lib, x: lib.floor_divide(x, lib.zeros_like(x)),
        lambda lib, x: lib.remainder(x, 0.0),
        lambda lib, x: lib.fmod(x, 0.0),
        lambda lib, x: x.reciprocal(),
        lambda lib, x: x.rsqrt(),
        lambda lib, x: (x.log(), x.log2(), x.log10(), (x - 1).log1p()),
        lambda lib, x: x.sqrt(),
        lambda lib, x: (x.exp(), x.exp2(), x.expm1(), x.sinh(), x.cosh()),
        lambda lib, x: ((x * 2).asin(), (x * 2).acos(), x.acosh(), x.atanh()),
        lambda lib, x: x.logit(),
        lambda lib, x: (x.pow(-1), x.pow(0.5)),
        lambda lib, x: lib.xlogy(x, x - 1),
        lambda lib, x: lib.addcdiv(x, x, x * 0),
        lambda lib, x: lib.softmax(lib.full((2, 3), -float("inf")), 1),
    ],
)
def test_ieee_results_are_silent_whatever_numpys_error_state(prog):
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        ours = run(prog, nt, SPECIAL)
    assert_close(ours, run(prog, torch, SPECIAL), rtol=1e-12, atol=0)


def test_number_divided_by_tensor_rounds_as_torch():
    """``number / t`` is ``t.reciprocal() * number`` in PyTorch: the same float32 rounding
    and node (MulBackward0), and int tensors give floats."""

    def prog(lib, x):
        x = x.float().requires_grad_()
        y = 0.001 / x
        (g,) = lib.autograd.grad(y.sum(), x)
        return y, g, y.grad_fn.name(), 2 / lib.tensor([3, 0]), True / lib.tensor([2.0])

    ours, theirs = run_both(prog, np.array([3.0, 7.0, 0.1, -2.5]))
    assert ours[2] == theirs[2] == "MulBackward0"
    assert_close(ours[:2] + ours[3:], theirs[:2] + theirs[3:], rtol=0, atol=0)


# ==================================================================
# Issue 14, "unclear errors": PyTorch's exception type and text; NumPy's errors never leak.


def test_rsub_broadcast_error_names_the_operands_of_other_minus_input():
    assert_same_error(lambda T: T.rsub(T.ones(3), T.ones(4)))
    assert_same_error(lambda T: T.rsub(T.ones(2, 3), T.ones(4, 1), alpha=2))


# ==================================================================
# The in-place sweep: internal overlap, saved outputs, errors under torch.func.


@pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")
def test_an_int_division_of_nothing_by_zero_is_empty():
    assert_same(lambda T, x, b: T.remainder(x, b), np.zeros(0, bool), np.array(0))
    assert_same(lambda T, x, b: x // b, np.zeros((2, 0), np.int64), np.array(0))


# ==================================================================
# The functions added for issue 14, beyond the op database's generic tests.


POS = np.abs(arr(2, 3)) + 0.5


# ------------------------------------------------------------------ elementwise special functions
@pytest.mark.parametrize(
    "name,args",
    [
        ("sinc", ()),
        ("i0", ()),
        ("digamma", ()),
        ("lgamma", ()),
        ("polygamma", (2,)),
        ("mvlgamma", (2,)),
    ],
)
def test_inplace_methods_and_their_gradient(name, args):
    def prog(T, x):
        x = x.clone().requires_grad_()
        y = x * 1.0
        r = getattr(y, name + "_")(*args)
        (g,) = T.autograd.grad(r.sum(), x)
        return r, g, r is y, y._version

    # PyTorch's float64 trigamma (digamma's derivative) is off by ~4e-10 relative to mpmath;
    # scipy's (ours) agrees with mpmath to 1e-16.
    assert_same(prog, POS + 0.6, rtol=1e-8)


def test_function_forms_and_out():
    def prog(T, x):
        o = T.empty(0)
        return (
            T.sinc_(x.clone()),
            T.i0_(x.clone()),
            T.polygamma(1, x, out=o),
            o,
            T.special.psi(x),
            T.special.gammaln(x),
            T.special.multigammaln(x + 1, 3),
            T.special.polygamma(0, x),
            T.special.i0(x),
            T.special.sinc(x),
        )

    assert_same(prog, POS)


def test_integer_inputs_compute_in_the_default_float():
    def prog(T):
        i = T.tensor([1, 2, 3])
        return T.sinc(i), T.i0(i), T.digamma(i), T.lgamma(i), T.polygamma(1, i), T.mvlgamma(i, 1)

    assert_same(prog, rtol=1e-6)


def test_poles_and_infinities():
    def prog(T, x):
        # (not polygamma(n >= 1): PyTorch gives a finite value at its poles, e.g. 6.6e32 at -1)
        return T.lgamma(x), T.digamma(x), T.special.i0e(x), T.special.i1e(x)

    assert_same(prog, np.array([0.0, -1.0, 1.0, np.inf, -np.inf, np.nan]))


def test_bessel_i1_gradients_at_zero_are_one_half():
    def prog(T, x):
        x = x.requires_grad_()
        return T.autograd.grad((T.special.i1(x) + T.special.i1e(x)).sum(), x)

    assert_same(prog, np.array([0.0, 1e-20, 0.5]))


def test_sinc_second_derivative_at_zero_is_finite():
    """-pi^2/3, sinc''(0) (finite differences decide: PyTorch's double backward is NaN there)."""
    x = nt.tensor([0.0, 0.7], dtype=nt.float64, requires_grad=True)
    (g,) = nt.autograd.grad(nt.sinc(x).sum(), x, create_graph=True)
    (gg,) = nt.autograd.grad(g.sum(), x)
    assert g[0].item() == 0.0
    np.testing.assert_allclose(gg[0].item(), -(math.pi**2) / 3, rtol=1e-12)
    h = 1e-4
    fd = (np.sinc(0.7 + h) - 2 * np.sinc(0.7) + np.sinc(0.7 - h)) / h**2
    np.testing.assert_allclose(gg[1].item(), fd, rtol=1e-6)


def test_special_errors():
    assert_same_error(lambda T: T.polygamma(-1, T.ones(2)))
    assert_same_error(lambda T: T.mvlgamma(T.ones(2), 0))


# ==================================================================
# The view ops and tensor functions added for issue 14.


def test_shift_errors_name_torch_kernels():
    for fn in ("bitwise_left_shift", "bitwise_right_shift"):
        assert_same_error(lambda T, fn=fn: getattr(T, fn)(T.ones(2), T.ones(2)))
        assert_same_error(lambda T, fn=fn: getattr(T, fn)(T.ones(2, dtype=T.int64), 1.5))
        assert_same_error(
            lambda T, fn=fn: getattr(T, fn)(T.ones(2, dtype=T.bool), T.ones(2, dtype=T.bool))
        )


# ==================================================================
# gcd, lcm, heaviside, nextafter, ldexp, frexp at their edges.
_INF, _NAN = math.inf, math.nan
_SPECIALS = np.array([0.0, -0.0, 1.0, -1.5, 3e38, 1e-40, _INF, -_INF, _NAN], np.float32)


def test_gcd_lcm_of_zeros_negatives_and_extremes():
    a = np.array([12, -18, 0, 0, 7, -(2**63), 2**62, -4], np.int64)
    b = np.array([8, 12, 5, 0, 0, 0, 3, 6], np.int64)
    for name in ("gcd", "lcm"):
        assert_same(lambda L, a, b: getattr(L, name)(a, b), a, b)
        assert_same(lambda L, a, b: getattr(a.clone(), name + "_")(b), a, b)
        assert_same(lambda L, a, b: getattr(L, name + "_")(a.clone(), b), a, b)
        assert_same(lambda L, a, b: getattr(L, name)(a.to(L.int8), b.to(L.uint8)), a, b)
        assert_same(lambda L, a, b: getattr(L, name)(a.to(L.uint8), b.to(L.uint8)), a, b)
        assert_same(lambda L, a, b: getattr(L, name)(a, b, out=L.empty(8, dtype=L.int32)), a, b)
        assert_same(lambda L, a, b: getattr(a.to(L.int32), name + "_")(b), a, b)


@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_lcm_refuse_what_pytorch_refuses(name):
    i, f = ints(3), arr(3)
    fn = lambda L: getattr(L, name)  # noqa: E731
    assert_same_error(lambda L, a, b: fn(L)(a, b), f, f)
    assert_same_error(lambda L, a, b: fn(L)(a, b), i, f)
    assert_same_error(lambda L, a: fn(L)(a.bool(), a.bool()), i)
    assert_same_error(lambda L, a: fn(L)(a.half(), a.half()), f)
    assert_same_error(lambda L, a: fn(L)(a + 0j, a), f)
    assert_same_error(lambda L, a: fn(L)(a, 3), i)
    assert_same_error(lambda L, a: getattr(a, name)(3), i)
    assert_same_error(lambda L, a: fn(L)(3, a), i)
    assert_same_error(lambda L, a, b: fn(L)(a, b), i, arr(2))
    assert_same_error(lambda L, a, b: getattr(a.float(), name + "_")(b), i, i)


def test_heaviside_at_zero_nan_and_inf():
    x = _SPECIALS.copy()
    v = np.linspace(-1, 1, x.size).astype(np.float32)
    assert_same(lambda L, x, v: L.heaviside(x, v), x, v)
    assert_same(lambda L, x, v: x.heaviside(v[:1].reshape(())), x, v)
    assert_same(lambda L, x, v: x.clone().heaviside_(v), x, v)
    assert_same(lambda L, x, v: L.heaviside(x.long(), v.long()), x[:6], v[:6])
    assert_same(lambda L, x, v: L.heaviside(x.bool(), v.bool()), x, v)
    assert_same(lambda L, x, v: L.heaviside(x.half(), v.half()), x, v)


def test_heaviside_errors():
    x, v = arr(4).astype(np.float32), arr(4, seed=1).astype(np.float32)
    assert_same_error(lambda L, x, v: L.heaviside(x, v.double()), x, v)
    assert_same_error(lambda L, x, v: L.heaviside(x, v.double()[0]), x, v)
    assert_same_error(lambda L, x, v: L.heaviside(x.long(), v), x, v)
    assert_same_error(lambda L, x, v: L.heaviside(x + 0j, v), x, v)
    assert_same_error(lambda L, x, v: L.heaviside(x + 0j, v + 0j), x, v)
    assert_same_error(lambda L, x, v: L.heaviside(x, v[:2]), x, v)
    assert_same_error(lambda L, x, v: L.heaviside(x, v[:2].double()), x, v)
    assert_same_error(lambda L, x, v: L.heaviside(x, v, out=L.empty(4, dtype=L.double)), x, v)
    assert_same_error(lambda L, x, v: L.heaviside(x, v, out=L.empty(4, dtype=L.long)), x, v)
    assert_same_error(lambda L, x: L.heaviside(x, 0.5), x)
    assert_same_error(lambda L, x: x.heaviside(0.5), x)
    assert_same_error(lambda L, x, v: x.clone().heaviside_(v.double()), x, v)
    assert_same_error(lambda L, x, v: x.long().heaviside_(v), x, v)


def test_heaviside_has_no_derivative():
    """A node whose backward raises; forward mode refuses it (as in PyTorch)."""
    x, v = arr(4), arr(4)

    def backward(L, x, v):
        x.requires_grad_(True)
        r = L.heaviside(x, v)
        assert r.requires_grad and type(r.grad_fn).__name__ == "NotImplemented"
        r.sum().backward()

    assert_same_error(backward, x, v)
    assert_same_error(lambda L, x, v: L.func.vjp(lambda t: L.heaviside(t, v), x)[1](x), x, v)
    assert_same_error(
        lambda L, x, v: L.func.jvp(lambda t: L.heaviside(t, v), (x,), (L.ones_like(x),)), x, v
    )
    assert_same(lambda L, x, v: L.vmap(L.heaviside)(x.reshape(2, 2), v.reshape(2, 2)), x, v)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_div_tangent_is_pytorchs_formula_bit_for_bit(dtype):
    # (t_input - t_other * result) / other; an operand without a tangent drops out
    rng = np.random.default_rng(3)
    x, y, tx, ty = (rng.standard_normal(20000).astype(dtype) for _ in range(4))
    x[:4], tx[4:8], ty[8:12] = 0.0, -0.0, 0.0

    def prog(L, x, y, tx, ty):
        both = L.func.jvp(L.div, (x, y), (tx, ty))[1]
        own = L.func.jvp(lambda a: a / y, (x,), (tx,))[1]
        other = L.func.jvp(lambda b: x / b, (y,), (ty,))[1]
        number = L.func.jvp(lambda a: a / 3.0, (x,), (tx,))[1]
        return both, own, other, number, [t.signbit() for t in (both, own, other, number)]

    assert_same(prog, x, y, tx, ty, rtol=0, atol=0)


def _backward_of(call):
    def prog(L, x, y):
        x.requires_grad_(True)
        r = call(L, x, y)
        assert r.requires_grad
        assert r.grad_fn.name().split("::")[-1] in ("NotImplemented", "CopySlices")
        r.sum().backward()

    return prog


# PyTorch records a node for floor_divide whose backward raises (and forward mode refuses),
# naming the in-place overload for an in-place write
_NO_DERIVATIVE = [
    lambda L, x, y: x // 2,
    lambda L, x, y: L.floor_divide(x, y),
    lambda L, x, y: y // x,
    lambda L, x, y: 3 // x,
    lambda L, x, y: x.floor_divide(y.long()),
    lambda L, x, y: L.tensor([3, 4, 5, 6]) // x,
    lambda L, x, y: (x * 1).floor_divide_(y),
    lambda L, x, y: (lambda a: a.__ifloordiv__(2))(x * 1),
    lambda L, x, y: (lambda a: (a[:2].floor_divide_(y[:2]), a)[1])(x * 1),
    lambda L, x, y: (x * 1).heaviside_(y),
    lambda L, x, y: (lambda a: (a[1:].heaviside_(y[1:]), a)[1])(x * 1),
]


@pytest.mark.parametrize("call", _NO_DERIVATIVE)
def test_floor_divide_has_no_derivative(call):
    x, y = arr(4) + 3, arr(4, seed=1) + 0.5
    assert_same_error(_backward_of(call), x, y)
    assert_same_error(lambda L, x, y: L.autograd.grad(call(L, x, y).sum(), x), x, y)
    assert_same_error(lambda L, x, y: L.func.grad(lambda a: call(L, a, y).sum())(x), x, y)
    assert_same_error(lambda L, x, y: L.func.vjp(lambda a: call(L, a, y), x)[1](x), x, y)
    assert_same_error(lambda L, x, y: L.func.jvp(lambda a: call(L, a, y), (x,), (y,)), x, y)

    def dual(L, x, y):
        fwAD = L.autograd.forward_ad
        with fwAD.dual_level():
            return fwAD.unpack_dual(call(L, fwAD.make_dual(x, y), y)).tangent

    assert_same_error(dual, x, y)


def test_floor_divide_without_a_gradient_asked():
    x, y = arr(4) + 3, arr(4, seed=1) + 0.5

    def prog(L, x, y):
        x.requires_grad_(True)
        y.requires_grad_(True)
        out = (x // 2) * y  # the floor_divide node is not run for y's gradient
        with L.no_grad():
            quiet = x // 2
        ints = L.tensor([7, 8]) // L.tensor([2, 3])
        flags = (quiet.requires_grad, ints.requires_grad, x.detach().floor_divide(y).requires_grad)
        return L.autograd.grad(out.sum(), y), flags

    assert_same(prog, x, y)
    assert_same(lambda L, x: L.vmap(lambda a: a // 2)(x.reshape(2, 2)), x)
    assert_same(lambda L, x: L.div(x.requires_grad_(), 2, rounding_mode="floor").grad_fn.name(), x)


def test_nextafter_at_signed_zeros_infinities_and_nan():
    x = np.array([0.0, -0.0, 0.0, 1.0, -_INF, _INF, _NAN, 1.0, 3.4e38], np.float32)
    y = np.array([1.0, -1.0, -0.0, _INF, 0.0, _INF, 0.0, _NAN, _INF], np.float32)
    assert_same(lambda L, x, y: L.nextafter(x, y), x, y)
    assert_same(lambda L, x, y: L.nextafter(x.double(), y.double()), x, y)
    assert_same(lambda L, x, y: L.nextafter(x, y.double()), x, y)
    assert_same(lambda L, x, y: L.nextafter(x, y.double()[0]), x, y)
    assert_same(lambda L, x, y: L.nextafter(x.long(), y), x[:4], y[:4])
    assert_same(lambda L, x, y: L.nextafter(x.half(), y.half()), x, y)
    assert_same(lambda L, x, y: x.clone().nextafter_(y.double()), x, y)
    assert_same_error(lambda L, x, y: x.long().nextafter_(y), x[:4], y[:4])
    assert_same_error(lambda L, x, y: L.nextafter(x.long(), y.long()), x[:4], y[:4])
    assert_same_error(lambda L, x: L.nextafter(x, 1.0), x)


def test_nextafter_gradient_is_masked_at_ties():
    """PyTorch's input gradient is 0 where the operands tie, other's is 0 everywhere."""
    x = np.array([1.0, 2.0, _NAN, _INF, 0.0, 5.0])
    y = np.array([1.0, 3.0, _NAN, _INF, -0.0, 4.0])
    g = np.array([_INF, 0.4, 0.5, 1.0, _NAN, 2.0])

    def grads(L, x, y, g):
        x.requires_grad_(True)
        y.requires_grad_(True)
        L.nextafter(x, y).backward(g)
        return x.grad, y.grad

    assert_same(grads, x, y, g)
    assert_same(lambda L, x, y: L.func.jvp(lambda t: L.nextafter(t, y), (x,), (y,)), x, y)
    assert_same(lambda L, x, y: L.func.jvp(lambda t: L.nextafter(y, t), (x,), (y,)), x, y)


def test_ldexp_promotes_and_scales_exactly_by_an_integer():
    x = np.array([1e-30, 1.0, 3.0, -1.5, 0.0, -0.0, _INF, _NAN, 3e38], np.float32)
    e = np.array([200, 128, -150, 1, 2, -2, 1, 1, 5])
    assert_same(lambda L, x, e: L.ldexp(x, e), x, e)
    assert_same(lambda L, x, e: L.ldexp(x, e.to(L.int32)), x, e)
    assert_same(lambda L, x, e: L.ldexp(x, e.float()), x, e)  # 2**200 overflows in float
    assert_same(lambda L, x, e: L.ldexp(x.double(), e.float()), x, e)
    assert_same(lambda L, x, e: L.ldexp(x, e.double()), x, e)
    assert_same(lambda L, x, e: L.ldexp(x.half(), e), x, e)
    assert_same(lambda L, e: L.ldexp(e, e), e)  # both promote: 2**-150 underflows
    assert_same(lambda L, e: L.ldexp(e.to(L.int16), e.to(L.int8)), e)
    assert_same(lambda L, e: L.ldexp(e.bool(), e.bool()), e)
    assert_same(lambda L, x, e: L.ldexp(x, e.float() / 3), x, e)
    assert_same(lambda L, x, e: L.ldexp(x + 1j, e), x[3:], e[3:])  # (not subnormal)
    assert_same(lambda L, x, e: x.clone().ldexp_(e), x, e)
    assert_same(lambda L, x, e: L.ldexp_(x.clone(), e.double()), x, e)
    assert_same(lambda L, x, e: L.ldexp(x, e, out=L.empty(9, dtype=L.float)), x, e)


def test_ldexp_errors():
    x, e = arr(3), ints(3)
    assert_same_error(lambda L, x, e: L.ldexp(x, e, out=L.empty(3, dtype=L.long)), x, e)
    assert_same_error(lambda L, e: L.ldexp(e, e, out=L.empty(3, dtype=L.long)), e)
    assert_same_error(lambda L, e: e.clone().ldexp_(e), e)
    assert_same_error(lambda L, x: L.ldexp(x, 2), x)
    assert_same_error(lambda L, x: x.ldexp(2), x)
    assert_same_error(lambda L, e: L.ldexp(2, e), e)
    assert_same_error(lambda L, x, e: L.ldexp(x, e[:2]), x, e)


def test_ldexp_gradients_as_pytorch_computes_them():
    """d/dinput is 2**other, an integer power for an integer exponent (0 when negative,
    wrapping past 62); d/dother is input * 2**other * ln 2."""
    x = np.array([1.5, 2.0, 3.0, -1.0, 0.5])
    e = np.array([-2, 63, 64, 3, 0])
    assert_same(grad_prog(lambda L, x, e: L.ldexp(x, e).sum()), x, e)
    assert_same(grad_prog(lambda L, x, e: L.ldexp(x.float(), e).sum()), x, e)
    f = np.array([-2.5, 1.0, 40.0, 0.3, 0.0])
    assert_same(grad_prog(lambda L, x, f: L.ldexp(x, f).sum()), x, f)
    assert_same(grad_prog(lambda L, f, x: L.ldexp(x, f).sum()), f, x)
    assert_same(grad_prog(lambda L, f, x: L.ldexp(x, f.float()).sum()), f, x)
    assert_same(lambda L, x, f: L.func.jvp(lambda a, b: L.ldexp(a, b), (x, f), (f, x)), x, f)


def test_frexp_parts_dtypes_and_return_type():
    x = _SPECIALS
    for prog in (
        lambda L, x: L.frexp(x),
        lambda L, x: x.frexp(),
        lambda L, x: L.frexp(x.double()),
        lambda L, x: L.frexp(x.half()),
        lambda L, x: L.frexp(x[0]),
        lambda L, x: L.frexp(x, out=(L.empty(0), L.empty(0, dtype=L.int32))),
        lambda L, x: L.frexp(x, out=[L.empty(9), L.empty(9, dtype=L.int32)]),
    ):
        ours, theirs = run_both(prog, x)
        assert repr(type(ours)) == repr(type(theirs))
        assert ours._fields if hasattr(ours, "_fields") else True
        assert_close(tuple(ours), tuple(theirs))
        assert_close(ours.mantissa, theirs.mantissa)
        assert_close(ours.exponent, theirs.exponent)
    assert repr(nt.frexp(nt.tensor(3.0))) == repr(torch.frexp(torch.tensor(3.0)))


def test_frexp_errors():
    x = arr(3).astype(np.float32)
    for prog in (
        lambda L, x: L.frexp(x.long()),
        lambda L, x: L.frexp(x.bool()),
        lambda L, x: L.frexp(x + 0j),
        lambda L, x: L.frexp(x.long(), out=(L.empty(3), L.empty(3, dtype=L.int32))),
        lambda L, x: L.frexp(x, out=(L.empty(3, dtype=L.double), L.empty(3, dtype=L.int32))),
        lambda L, x: L.frexp(x, out=(L.empty(3), L.empty(3, dtype=L.long))),
        lambda L, x: L.frexp(x, out=(L.empty(3),)),
        lambda L, x: L.frexp(x, out=L.empty(3)),
    ):
        assert_same_error(prog, x)


def test_frexp_gradient_divides_by_a_float_power_of_two():
    """g / exp2(exponent), exp2 in the default float: 0 or inf where that overflows."""
    for x in (
        np.array([3e38, 1e-40, 0.0, 5.0, -0.75], np.float32),
        np.array([1e300, 1e-300, 1e-320, 3.0, -7.0]),
    ):
        assert_same(grad_prog(lambda L, x: L.frexp(x).mantissa.sum()), x)
        assert_same(lambda L, x: L.func.jvp(lambda t: L.frexp(t)[0], (x,), (L.ones_like(x),)), x)
        assert_same(lambda L, x: L.vmap(L.frexp)(x.reshape(1, -1)), x)
    assert_same_error(grad_prog(lambda L, x: L.frexp(x).exponent.sum()), arr(3))


@pytest.mark.parametrize("name", ["erf", "sin", "exp", "abs", "neg", "sqrt", "floor", "lgamma"])
@pytest.mark.parametrize("number", [2.0, 3, True])
def test_unary_ops_refuse_a_python_number_as_pytorchs_parser(name, number):
    assert_same_error(lambda L: getattr(L, name)(number))


# ==================================================================
# Stacks of outer products, (..., m, 1) * (..., 1, n): the kernel mul and matmul share takes
# a BLAS matmul, einsum (in slabs when large) or the plain multiply by shape.

OUTER_STACKS = {
    "small (multiply)": ((4, 3, 1), (4, 1, 5)),
    "BLAS matmul": ((64, 32, 1), (64, 1, 32)),
    "einsum": ((64, 128, 1), (64, 1, 784)),
    "einsum, two leading dims": ((4, 8, 300, 1), (4, 8, 1, 500)),
    "long rows (multiply)": ((8, 64, 1), (8, 1, 4096)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", OUTER_STACKS)
def test_stacked_outer_products_match_torch(name, dtype):
    sa, sb = OUTER_STACKS[name]
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal(sa).astype(dtype), rng.standard_normal(sb).astype(dtype)
    a.reshape(-1)[:3] = [np.nan, np.inf, 0.0]
    b.reshape(-1)[:3] = [-np.inf, 0.0, np.nan]
    for f in (lambda T, x, y: x * y, lambda T, x, y: T.matmul(x, y)):
        got = f(nt, nt.tensor(a), nt.tensor(b))
        assert_close(got, f(torch, torch.tensor(a), torch.tensor(b)))


def test_stacked_outer_products_of_strided_operands_match_torch():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((64, 128, 2))
    b = rng.standard_normal((784, 64))

    def f(T):
        x = T.tensor(a)[..., :1]  # (a slice: not contiguous)
        y = T.tensor(b).T.unsqueeze(1)  # (transposed)
        return x * y, T.matmul(x.float(), y.float())

    for got, want in zip(f(nt), f(torch)):
        assert_close(got, want)
