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
