"""torch.special's orthogonal polynomials against PyTorch: the interval's ends and outside
it, infinities, NaN degrees and x, negative, non-integer and huge degrees, the branches
PyTorch switches to (trigonometric forms, Hermite's degree limit), dtypes, Python-number
operands, out=, and the absent derivative (under autograd, forward AD and the
transforms)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from twolibs import arr, assert_same, assert_same_error, assert_same_outcome, run_both

import numtorch as nt

NAMES = (
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
)

# x: the Chebyshev ends (+-1), the shifted ends (0, 1), Laguerre's 0, points inside and
# outside [-1, 1], huge values and infinities (NaN x: see test_nan_x)
X = np.array(
    [0.0, 1.0, -1.0, 0.5, -0.5, 0.25, 0.75, 1e-8, 0.999, -0.999, 1.5, -1.5, 2.0, -3.0, 1e10]
    + [-1e10, np.inf, -np.inf, *np.linspace(-1.2, 1.2, 13)]
)
# n: below and above every branch's threshold (4, 6, 8) and Hermite's limits (128, 512);
# negative, non-integer (truncated), NaN, infinite and past int64's range
N = np.array(
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 17, 60, 128, 129, 512, 513, -1, -4, 2.7, -0.6, 9.99]
    + [np.nan, np.inf, -np.inf, 1e19, -1e19, 1e30]
)


def _grid():
    x, n = np.meshgrid(X, N)
    return x, n


@pytest.mark.parametrize("name", NAMES)
def test_float64_grid_of_edge_values(name):
    x, n = _grid()

    def prog(T, x, n):
        return getattr(T.special, name)(x, n)

    assert_same(prog, x, n, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_float32_grid_of_moderate_degrees(name):
    """float32: the recurrences round as PyTorch's fused multiply-add; degrees up to 17,
    where the trigonometric branch's acos (correctly rounded) and glibc's acosf (PyTorch's)
    differ by one ulp at most, an error the degree multiplies. Hermite's float32 limit
    (128): test_hermite_degree_limits."""
    x, n = _grid()
    keep = (n <= 17) | np.isnan(n) | (np.abs(n) > 1e18)
    x, n = x[keep].astype(np.float32), n[keep].astype(np.float32)

    def prog(T, x, n):
        return getattr(T.special, name)(x, n)

    assert_same(prog, x, n, rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("name", NAMES)
def test_nan_x(name):
    """NaN x: 1 at degree 0, 0 for a negative degree, NaN at degree 1 (where PyTorch's
    value is defined; for higher degrees some of its kernels return an uninitialized one)."""

    def prog(T, x):
        f = getattr(T.special, name)
        return f(x, 0), f(x, -2), f(x, 1)

    assert_same(prog, np.array([np.nan, 0.5]))


@pytest.mark.parametrize("name", ("chebyshev_polynomial_t", "hermite_polynomial_h"))
def test_nan_x_at_higher_degrees_for_initialised_kernels(name):
    def prog(T, x):
        return getattr(T.special, name)(x, T.tensor([2.0, 3.0, 10.0]))

    assert_same(prog, np.array([np.nan, np.nan, np.nan]))


def test_large_degrees_inside_the_interval_use_the_trigonometric_forms():
    x = np.linspace(-0.99, 0.99, 23)

    def prog(T, x):
        s = T.special
        return [
            f(x, n)
            for n in (50, 1000, 100000)
            for f in (
                s.chebyshev_polynomial_t,
                s.chebyshev_polynomial_u,
                s.chebyshev_polynomial_v,
                s.chebyshev_polynomial_w,
            )
        ]

    assert_same(prog, x, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", ("legendre_polynomial_p", "laguerre_polynomial_l"))
def test_long_recurrences(name):
    def prog(T, x):
        return getattr(T.special, name)(x, T.tensor([[200.0], [1000.0]]))

    assert_same(prog, np.linspace(-0.95, 3.0, 9), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_hermite_degree_limits(dtype):
    def prog(T, x):
        x = x.to(getattr(T, dtype))
        s = T.special
        return [
            f(x, n)
            for n in (127, 128, 129, 512, 513)
            for f in (s.hermite_polynomial_h, s.hermite_polynomial_he)
        ]

    assert_same(prog, np.array([0.0, 0.1, -0.3, 1.0]), rtol=1e-4, atol=0)


@pytest.mark.parametrize("name", NAMES)
def test_python_numbers_and_integer_operands(name):
    def prog(T):
        f = getattr(T.special, name)
        i = T.tensor([0, 1, 2, 3])
        return (
            f(0.25, i),
            f(T.tensor([0.25, 2.0]), 3),
            f(T.tensor([0.25, 2.0]), 3.9),
            f(i, i),
            f(i, 2),
            f(2, i),
            f(T.tensor([True, False]), i[:2]),
            f(T.tensor([0.5], dtype=T.float64), T.tensor([3.0])),
            f(T.tensor(0.5, dtype=T.float64), T.tensor([3.0])),
            f(T.tensor([0.5]), T.tensor([3], dtype=T.int8)),
        )

    assert_same(prog, rtol=1e-6)


def test_out_and_keyword_names():
    def prog(T):
        o = T.empty(0, dtype=T.float64)
        r = T.special.legendre_polynomial_p(x=T.tensor([0.3, 0.6]), n=T.tensor(4), out=o)
        return r, o, r is o

    assert_same(prog)


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.special.chebyshev_polynomial_t(0.5, 3),
        lambda T: T.special.hermite_polynomial_h(2, 3.0),
        lambda T: T.special.laguerre_polynomial_l(T.tensor([0.5], dtype=T.complex64), 2),
        lambda T: T.special.legendre_polynomial_p(T.tensor([0.5]), 1j),
        lambda T: T.special.shifted_chebyshev_polynomial_w(T.tensor([0.5], dtype=T.float16), 2),
        lambda T: T.special.chebyshev_polynomial_u(T.tensor([0.5], dtype=T.float16), 2.5),
        lambda T: T.special.chebyshev_polynomial_v(
            T.tensor([0.5]), 2, out=T.empty(1, dtype=T.int64)
        ),
        lambda T: T.special.chebyshev_polynomial_t(T.ones(2, 3), T.ones(4)),
    ],
)
def test_errors(call):
    assert_same_error(call)


def test_float16_degree_with_a_float32_x_computes_in_float32():
    def prog(T):
        return T.special.chebyshev_polynomial_t(T.tensor([0.5]), T.tensor([3.0], dtype=T.float16))

    assert_same(prog, rtol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_no_derivative(name):
    """PyTorch declares x and n non-differentiable: the result does not require grad, so
    backward raises; forward AD gives no tangent; the transforms see a constant."""

    def prog(T, x):
        f = getattr(T.special, name)
        xg = x.clone().requires_grad_()
        r = f(xg, 3)
        fa = T.autograd.forward_ad
        with fa.dual_level():
            tangent = fa.unpack_dual(f(fa.make_dual(x, T.ones_like(x)), 3)).tangent
        return (
            r.requires_grad,
            r.grad_fn is None,
            tangent is None,
            T.func.grad(lambda x: f(x, 3).sum())(x),
            T.func.jvp(lambda x: f(x, 3), (x,), (T.ones_like(x),)),
            T.func.jacrev(lambda n: f(x, n))(T.tensor([2.0, 3.0, 4.0], dtype=x.dtype)),
        )

    assert_same(prog, arr(3) * 0.4, rtol=1e-10)

    def backward(T, x):
        getattr(T.special, name)(x.clone().requires_grad_(), 3).sum().backward()

    assert_same_outcome(backward, arr(3))


def test_no_methods_or_inplace_forms():
    for name in NAMES:
        for m in (name, name + "_"):
            assert hasattr(nt.Tensor, m) == hasattr(torch.Tensor, m) is False


def test_vmap_over_either_operand():
    def prog(T, x, n):
        f = T.special.chebyshev_polynomial_u
        v = T.func.vmap
        return (
            v(f)(x, n),
            v(f, in_dims=(0, None))(x, 9),
            v(f, in_dims=(None, 0))(0.3, n),
            v(v(f), in_dims=(1, None))(x, n[0]),
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's fallback warns; ours has a rule
        ours, theirs = run_both(prog, arr(3, 3) * 0.6, np.array([[2.0, 7.0, 12.0]] * 3))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10)
