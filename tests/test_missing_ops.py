"""The functions added for issue 14 (sinc, the gamma and Bessel families, aminmax, nanmedian,
renorm, dist, addr, hsplit/vsplit/dsplit, reshape_as, linalg.inv_ex/cholesky_ex): what the
op database's generic tests do not see (in-place forms, out=, edge values, info codes,
error texts), against PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from twolibs import arr, assert_same, assert_same_error

import numtorch as nt

POS = np.abs(arr(2, 3)) + 0.5
NAN = math.nan


# ------------------------------------------------------------------ elementwise special functions
@pytest.mark.parametrize(
    "name,args", [("sinc", ()), ("i0", ()), ("digamma", ()), ("lgamma", ()), ("polygamma", (2,)),
                  ("mvlgamma", (2,))],
)  # fmt: skip
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
            T.sinc_(x.clone()), T.i0_(x.clone()), T.polygamma(1, x, out=o), o,
            T.special.psi(x), T.special.gammaln(x), T.special.multigammaln(x + 1, 3),
            T.special.polygamma(0, x), T.special.i0(x), T.special.sinc(x),
        )  # fmt: skip

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


# ------------------------------------------------------------------ reductions
def test_nanmedian_skips_nan_and_all_nan_gives_nan():
    x = np.array([[1.0, NAN, 3.0, 2.0], [NAN, NAN, NAN, NAN], [4.0, 1.0, NAN, 0.5]])

    def prog(T, x):
        r = T.nanmedian(x, 1)
        return r.values, T.nanmedian(x), T.nanmedian(x[1]), T.nanmedian(x[2:], 1, keepdim=True)

    assert_same(prog, x)


def test_nanmedian_gradient_splits_ties_and_nans():
    def prog(T, x):
        x = x.requires_grad_()
        return T.autograd.grad(T.nanmedian(x), x)

    assert_same(prog, np.array([1.0, 2.0, 2.0, NAN, 5.0]))
    assert_same(prog, np.array([NAN, NAN, NAN]))


def test_nanmedian_out_and_errors():
    def prog(T, x):
        v, i = T.empty(0, dtype=x.dtype), T.empty(0, dtype=T.long)
        r = T.nanmedian(x, 0, out=(v, i))
        return r.values, r.indices, v, i, T.tensor(3.0).nanmedian(0)

    assert_same(prog, arr(5, 2))
    assert_same_error(lambda T: T.nanmedian(T.zeros(0, 3), 0))


def test_aminmax_forms():
    def prog(T, x):
        mn, mx = T.empty(0, dtype=x.dtype), T.empty(0, dtype=x.dtype)
        r = T.aminmax(x, dim=0, out=(mn, mx))
        n = x.clone()
        n[0, 1] = NAN
        return (r.min, r.max, mn, mx, x.aminmax(keepdim=True), T.aminmax(n), T.aminmax(n, dim=1),
                T.aminmax(T.tensor([True, False])))  # fmt: skip

    assert_same(prog, arr(3, 4))
    assert_same_error(lambda T: T.aminmax(T.zeros(0, 3)))
    assert_same_error(lambda T: T.aminmax(T.zeros(0, 3), dim=0))


def test_aminmax_gradient_with_ties():
    def prog(T, x):
        x = x.requires_grad_()
        r = T.aminmax(x, dim=1)
        return T.autograd.grad((r.min * 2 + r.max).sum(), x)

    assert_same(prog, np.array([[1.0, 3.0, 3.0, 1.0], [2.0, 2.0, 2.0, 0.0]]))


def test_renorm_inplace_out_and_errors():
    def prog(T, x):
        x = x.clone().requires_grad_()
        y = x * 1.0
        y.renorm_(2, 1, 0.5)
        (g,) = T.autograd.grad((y * y * y).sum(), x)
        o = T.empty(0, dtype=x.dtype)
        T.renorm(x.detach(), 1, 0, 0.7, out=o)
        return y, g, o

    assert_same(prog, arr(3, 4))
    for bad in ((0, 0, 1.0), (2, 0, -1.5), (2, 5, 1.0)):
        assert_same_error(lambda T, bad=bad: T.renorm(T.ones(2, 3), *bad))
    assert_same_error(lambda T: T.renorm(T.ones(3), 2, 0, 1.0))
    assert_same_error(lambda T: T.renorm(T.ones(2, 3, dtype=T.long), 2, 0, 1.0))


# ------------------------------------------------------------------ dist, addr
def test_dist_forms_and_errors():
    def prog(T, x, y):
        return (T.dist(x, y), x.dist(y, 0), x.dist(y, 1.5), T.dist(x.float(), y),
                T.dist(x, x), T.dist(T.tensor([1, 2]), T.tensor([1.0, 4.0])))  # fmt: skip

    assert_same(prog, arr(2, 3), arr(3, seed=1))
    assert_same_error(lambda T: T.dist(T.ones(3), 2.0))
    assert_same_error(lambda T: T.dist(T.ones(2, dtype=T.long), T.ones(2, dtype=T.long)))


def test_addr_inplace_promotion_and_errors():
    def prog(T, m, a, b):
        m = m.clone().requires_grad_()
        y = m * 1.0
        y.addr_(a, b, beta=0.5, alpha=2.0)
        (g,) = T.autograd.grad(y.sum(), m)
        n = m.detach().clone()
        n[0, 0] = NAN
        return (y, g, T.addr(m.detach(), a.long(), b), T.addr(n, a, b, beta=0),
                T.addr(T.zeros(2, 3, dtype=T.long), a.long(), b.long(), beta=2, alpha=3))  # fmt: skip

    assert_same(prog, arr(2, 3), arr(2, seed=1), arr(3, seed=2))
    assert_same_error(lambda T: T.addr(T.zeros(2, 3), T.ones(2, 1), T.ones(3)))
    assert_same_error(lambda T: T.addr(T.zeros(2, 3), T.ones(2), T.ones(4)))
    assert_same_error(lambda T: T.addr(T.zeros(2, 3, 1), T.ones(2), T.ones(3)))


# ------------------------------------------------------------------ splits, reshape_as
def test_directional_splits():
    def prog(T, x):
        return (T.hsplit(x, 2), x.vsplit([1, 3]), T.dsplit(x, (1,)), T.hsplit(x[0, 0], 3),
                x.reshape_as(T.zeros(6, 4)))  # fmt: skip

    assert_same(prog, arr(4, 2, 3))
    for prog in (
        lambda T: T.hsplit(T.tensor(1.0), 2),
        lambda T: T.hsplit(T.zeros(4, 3), 2),
        lambda T: T.hsplit(T.zeros(4, 3), 0),
        lambda T: T.vsplit(T.zeros(4), 2),
        lambda T: T.dsplit(T.zeros(4, 3), 2),
        lambda T: T.dsplit(T.zeros(4, 3, 4), 3),
    ):
        assert_same_error(prog)


# ------------------------------------------------------------------ inv_ex, cholesky_ex
def test_inv_ex_reports_singular_matrices_instead_of_raising():
    a = np.stack([np.eye(3) * 2, np.zeros((3, 3)), np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]])])

    def prog(T, a):
        r = T.linalg.inv_ex(a)
        return r.info, r.inverse[0], type(r).__name__

    assert_same(prog, a)
    assert_same_error(lambda T: T.linalg.inv_ex(T.tensor(a), check_errors=True))
    assert_same_error(lambda T: T.linalg.inv_ex(T.zeros(3, 3), check_errors=True))
    assert_same_error(lambda T: T.linalg.inv_ex(T.eye(2, dtype=T.long)))


def test_cholesky_ex_reports_the_failing_minor_instead_of_raising():
    a = np.stack([np.eye(3), np.diag([4.0, -1, 1]), np.diag([1.0, 1, 0]),
                  np.array([[1.0, 2, 0], [2, 1, 0], [0, 0, 1]])])  # fmt: skip

    def prog(T, a):
        r = T.linalg.cholesky_ex(a)
        u = T.linalg.cholesky_ex(a[:1], upper=True)
        return r.info, r.L[0], u.L, u.info, type(r).__name__

    assert_same(prog, a)
    assert_same_error(lambda T: T.linalg.cholesky_ex(T.tensor(a), check_errors=True))
    assert_same_error(lambda T: T.linalg.cholesky_ex(T.zeros(3, 2)))


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_ex_gradient_matches_torch(upper):
    b = arr(2, 3, 3)
    spd = b @ np.swapaxes(b, -1, -2) + 3 * np.eye(3)

    def prog(T, a, w):
        a = a.requires_grad_()
        L = T.linalg.cholesky_ex(a, upper=upper).L
        return T.autograd.grad((L * w).sum(), a)

    assert_same(prog, spd, arr(2, 3, 3, seed=3), rtol=1e-9)


def test_ex_functions_under_vmap_report_per_matrix():
    a = nt.tensor(np.stack([np.eye(2), np.zeros((2, 2))]))
    inv, info = nt.vmap(nt.linalg.inv_ex)(a)
    assert info.tolist() == [0, 1] and info.dtype == nt.int32
    L, info = nt.vmap(nt.linalg.cholesky_ex)(a)
    assert info.tolist() == [0, 1] and np.isnan(L[1].numpy()).all()
    X, info = nt.vmap(nt.linalg.solve_ex)(a, nt.ones(2, 2, dtype=nt.float64))
    assert info.tolist() == [0, 1] and X[0].tolist() == [1.0, 1.0] and np.isnan(X[1].numpy()).all()


def test_solve_ex_reports_singular_matrices_instead_of_raising():
    a = np.stack([np.eye(3) * 2, np.zeros((3, 3))])

    def prog(T, a, b, m):
        r = T.linalg.solve_ex(a, b)
        s = T.linalg.solve_ex(a, m)
        return r.info, r.result[0], s.result[0], s.info, type(r).__name__

    assert_same(prog, a, arr(2, 3), arr(2, 3, 2))
    assert_same_error(lambda T: T.linalg.solve_ex(T.tensor(a), T.ones(3), check_errors=True))
    assert_same_error(lambda T: T.linalg.solve_ex(T.zeros(3, 3), T.ones(3), check_errors=True))
    assert_same_error(lambda T: T.linalg.solve_ex(T.eye(3), T.ones(2, 3, 2), left=False))
    assert_same_error(lambda T: T.linalg.solve(T.eye(3), T.ones(2, 3, 2), left=False))


def test_no_tensor_method_that_torch_lacks():
    extra = [n for n in dir(nt.Tensor) if not n.startswith("_") and not hasattr(torch.Tensor, n)]
    assert extra == []


def test_median_family_refuses_bool():
    for prog in (
        lambda T: T.median(T.tensor([True, False])),
        lambda T: T.median(T.tensor([True, False]), 0),
        lambda T: T.nanmedian(T.tensor([True, False])),
        lambda T: T.nanmedian(T.tensor([True, False]), 0),
    ):
        assert_same_error(prog)


def test_addr_integral_scalars_and_inplace_shape():
    i = lambda T: T.ones(2, dtype=T.long)  # noqa: E731
    assert_same_error(lambda T: T.addr(T.zeros(2, 2, dtype=T.long), i(T), i(T), beta=2.5))
    assert_same_error(
        lambda T: T.addr(T.zeros(2, 2, dtype=T.bool), i(T).bool(), i(T).bool(), alpha=0.5)
    )
    assert_same_error(lambda T: T.zeros(1, 3).addr_(T.ones(2), T.ones(3)))
