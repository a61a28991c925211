"""Issue 14, silently wrong values and derivatives: reductions, linalg and jvp, against
PyTorch (and finite differences where PyTorch is wrong)."""

import numpy as np
import pytest
from twolibs import assert_same, assert_same_error, run, run_both

import numtorch as nt

BIG = np.array([-100.0, 50.0, -80.0, 120.0])
COT = np.array([1.0, -2.0, 3.0, 0.5])


def _grad(f):
    def prog(L, x, *rest):
        x.requires_grad_(True)
        f(L, x, *rest).backward()
        return x.grad

    return prog


# ------------------------------------------------------------------ logcumsumexp
def test_logcumsumexp_grad_at_large_magnitudes():
    grad = _grad(lambda L, x: L.logcumsumexp(x, 0).sum())
    assert_same(grad, BIG, rtol=1e-6)
    # float32 against torch's float64 answer: torch's float32 one is 1.4e-6 off it (1.9999971
    # for 2), numtorch's weights exp(x_j - r_i) keep it
    f32 = _grad(lambda L, x: L.logcumsumexp(x.float(), 0).sum())
    ours, theirs = run_both(f32, BIG)[0], run_both(grad, BIG)[1]
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-6, atol=1e-30)
    assert_same(_grad(lambda L, x, g: (L.logcumsumexp(x, 0) * g).sum()), BIG, COT)


def test_logcumsumexp_jvp_at_large_magnitudes():
    # PyTorch's tangent is wrong here (2.9e-83 for d r_0 / d x_0 = 1): finite differences decide.
    def f(x):
        return run(lambda L, x: L.logcumsumexp(x, 0), nt, x).numpy()

    eps = 1e-6
    fd = (f(BIG + eps * COT) - f(BIG - eps * COT)) / (2 * eps)
    t = nt.func.jvp(lambda x: nt.logcumsumexp(x, 0), (nt.tensor(BIG),), (nt.tensor(COT),))[1]
    np.testing.assert_allclose(t.numpy(), fd, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(t.numpy(), [1.0, -2.0, -2.0, 0.5], rtol=1e-12)


def test_logcumsumexp_jvp_at_minus_inf():
    for xs in ([-np.inf, 0.0, 1.0], [-np.inf, -np.inf, 2.0]):
        assert_same(_jvp(lambda L, x: L.logcumsumexp(x, 0)), np.array(xs))


# ------------------------------------------------------------------ reductions
def test_any_all_over_no_dims_reduce_nothing():
    x = np.array([[1.0, 0.0], [2.0, 3.0]])
    for name in ("any", "all"):
        assert_same(lambda L, x: getattr(L, name)(x, dim=()), x)
        assert_same(lambda L, x: getattr(x, name)([]), x)
        assert_same(lambda L, x: getattr(L, name)(x.to(L.uint8), dim=(), keepdim=True), x)
        # PyTorch's vmap reduces every dim here, unlike its own eager call: vmap is per sample.
        got = nt.func.vmap(lambda r: getattr(nt, name)(r, dim=()))(nt.tensor(x))
        assert got.dtype == nt.bool and np.array_equal(got.numpy(), x != 0)


SPREADS = [
    lambda L, x: x.std(),
    lambda L, x: x.std(correction=0),
    lambda L, x: x.reshape(1, 3).std(1).sum(),
    lambda L, x: L.std_mean(x)[0],
    lambda L, x: x.var(),
]


@pytest.mark.parametrize("f", SPREADS)
def test_std_var_of_equal_values_have_zero_gradient(f):
    x = np.ones(3)
    assert_same(_grad(f), x)
    assert_same(lambda L, x: L.func.jvp(lambda x: f(L, x), (x,), (L.ones_like(x),))[1], x)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_of_everything_with_nan_send_the_gradient_to_the_nan(name):
    x = np.array([1.0, np.nan, 3.0, np.nan])
    assert_same(_grad(lambda L, x: getattr(x, name)()), x)
    assert_same(_grad(lambda L, x: getattr(x, name)(0)[0]), x)
    assert_same(_grad(lambda L, x: getattr(L, "a" + name)(x)), x)  # AmaxBackward0: NaN


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize(
    "xs",
    [
        [1.0, 3.0, 3.0, 2.0, 3.0],
        [np.nan, 1.0, np.nan, 2.0],
        [1.0, np.nan, 5.0, np.nan, 0.0],
        [3.0, 1.0, 1.0, np.nan, 0.0],
        [-0.0, 0.0, -0.0],
    ],
)
def test_cummax_cummin_indices_with_ties_and_nan(name, xs):
    x = np.array(xs)
    assert_same(lambda L, x: tuple(getattr(L, name)(x, 0)), x)
    assert_same(lambda L, x: tuple(getattr(L, name)(x.reshape(-1, 1).T.contiguous(), 1)), x)


# ------------------------------------------------------------------ integral addmm family
def _ints(*shape):
    return np.arange(1, 1 + int(np.prod(shape)), dtype=np.int64).reshape(shape)


ADDPROD = {
    "addmm": ((2, 2), (2, 2), (2, 2)),
    "addmv": ((2,), (2, 2), (2,)),
    "addbmm": ((2, 2), (3, 2, 2), (3, 2, 2)),
    "baddbmm": ((3, 2, 2), (3, 2, 2), (3, 2, 2)),
}
SCALARS = [
    {"alpha": 0.5},
    {"beta": 0.5},
    {"beta": 2.0, "alpha": -1.7},
    {"alpha": True},
    {"beta": 0.0},
]


@pytest.mark.parametrize("name", sorted(ADDPROD))
@pytest.mark.parametrize("kw", SCALARS)
def test_integral_addprod_truncates_float_scalars(name, kw):
    args = [_ints(*s) for s in ADDPROD[name]]
    assert_same(lambda L, *a: getattr(L, name)(*a, **kw), *args)
    assert_same(lambda L, a, *r: getattr(a.clone(), name + "_")(*r, **kw), *args)
    # vmap over a stack of the first operand (the rule recomposes the op from its parts)
    stack = np.stack([args[0], 2 * args[0]])
    got = nt.func.vmap(lambda i: getattr(nt, name)(i, *map(nt.tensor, args[1:]), **kw))(
        nt.tensor(stack)
    )
    ref = [run(lambda L, *a: getattr(L, name)(*a, **kw), nt, s, *args[1:]) for s in stack]
    assert got.dtype == nt.int64 and np.array_equal(got.numpy(), np.stack([r.numpy() for r in ref]))


@pytest.mark.parametrize("value", [0.5, -1.5, 2, 2.0])
def test_integral_addcmul_truncates_a_float_value(value):
    a, b, c = _ints(3), _ints(3) + 1, _ints(3) - 2
    assert_same(lambda L, a, b, c: L.addcmul(a, b, c, value=value), a, b, c)
    assert_same(lambda L, a, b, c: a.clone().addcmul_(b, c, value=value), a, b, c)
    assert_same(lambda L, a, b, c: L.addcmul(a.double(), b, c, value=value), a, b, c)


# ------------------------------------------------------------------ jvp tangent dtypes
def _jvp(f):
    def prog(L, x):
        return L.func.jvp(lambda x: f(L, x), (x,), (L.ones_like(x),))

    return prog


DTYPED = [
    lambda L, x: L.softmax(x, 0, dtype=L.float32),
    lambda L, x: L.log_softmax(x, 0, dtype=L.float32),
    lambda L, x: L.cumprod(x, 0, dtype=L.float32),
    lambda L, x: L.nansum(x, dtype=L.float32),
    lambda L, x: L.nansum(x, 0, dtype=L.float32),
    lambda L, x: L.nanmean(x, dtype=L.float32),
    lambda L, x: x.clone().add_(L.ones(3, dtype=L.float64)),  # in-place: no promotion
    lambda L, x: x.float().clone().mul_(x),
    lambda L, x: x.float().clone().copy_(x),
]


@pytest.mark.parametrize("f", DTYPED)
def test_jvp_tangent_has_the_output_dtype(f):
    assert_same(_jvp(f), np.array([1.0, 2.0, 3.0]), rtol=1e-6, atol=1e-6)
    assert_same(_jvp(f), np.array([1.0, 2.0, 3.0], np.float32), rtol=1e-6, atol=1e-6)


def test_jvp_tangent_dtype_where_pytorch_differs():
    # PyTorch leaves prod(dtype=float32)'s tangent of a float64 input in float64; a tangent
    # has its primal's dtype everywhere else (forward_ad.make_dual insists on it).
    p, t = _jvp(lambda L, x: L.prod(x, dtype=L.float32))(nt, nt.tensor([1.0, 2.0, 3.0]).double())
    assert p.dtype == t.dtype == nt.float32
    np.testing.assert_allclose(t.numpy(), [11.0], rtol=1e-6)


# ------------------------------------------------------------------ eigh, svd at repeated values
DEGENERATE = [np.eye(3), np.diag([2.0, 2.0, 5.0])]
SPECTRAL = [
    lambda L, x: L.linalg.eigh(x)[0].sum(),
    lambda L, x: (L.linalg.eigh(x)[0] * L.arange(1.0, 4.0, dtype=L.float64)).sum(),
    lambda L, x: L.linalg.eigh(x).eigenvalues.pow(2).sum(),
    lambda L, x: L.linalg.svd(x)[1].sum(),
    lambda L, x: L.linalg.svd(x, full_matrices=False)[1].pow(2).sum(),
    lambda L, x: L.svd(x)[1].sum(),
]


@pytest.mark.parametrize("a", DEGENERATE, ids=["eye", "diag"])
@pytest.mark.parametrize("f", SPECTRAL)
def test_values_of_eigh_svd_at_repeated_values_have_finite_gradients(a, f):
    assert_same(_grad(f), a, rtol=1e-12, atol=1e-12)
    assert_same(_jvp(f), a, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("a", DEGENERATE, ids=["eye", "diag"])
def test_vectors_of_eigh_svd_along_the_identity(a):
    # PyTorch's tangents of the vectors here are NaN (0 * inf); A + eps*I keeps A's vectors
    # exactly, so finite differences give 0, and so do we.
    t = nt.eye(3, dtype=nt.float64)
    for f in (lambda x: nt.linalg.eigh(x).eigenvectors, lambda x: nt.linalg.svd(x).U):
        tan = nt.func.jvp(f, (nt.tensor(a),), (t,))[1]
        fd = (f(nt.tensor(a + 1e-6 * np.eye(3))) - f(nt.tensor(a - 1e-6 * np.eye(3)))) / 2e-6
        np.testing.assert_allclose(tan.numpy(), fd.numpy(), atol=1e-9)
        np.testing.assert_array_equal(tan.numpy(), 0.0)


@pytest.mark.parametrize(
    "src, dst",
    [
        ("float64", "float32"),
        ("float32", "complex64"),
        ("complex64", "float64"),
        ("float32", "float64"),
    ],
)
def test_vector_norm_dtype_never_narrows(src, dst):
    prog = lambda L, x: L.linalg.vector_norm(x.to(getattr(L, src)), dtype=getattr(L, dst))  # noqa: E731
    if src == "float32" and dst == "float64":
        assert_same(prog, np.array([3.0, 4.0]))
    else:
        assert_same_error(prog, np.array([3.0, 4.0]))


# ------------------------------------------------------------------ NaN conventions (fuzz)
NAN_IN = np.array([np.nan, -0.5, 0.7, 1.5])


def _fwd_tangent(f):
    def prog(L, x):
        with L.autograd.forward_ad.dual_level():
            d = L.autograd.forward_ad.make_dual(x, L.ones_like(x))
            return L.autograd.forward_ad.unpack_dual(f(L, d)).tangent

    return prog


@pytest.mark.parametrize(
    "f",
    [
        lambda L, x: L.relu(x),
        lambda L, x: L.nn.functional.relu6(x),
        lambda L, x: L.nn.functional.hardtanh(x),
        lambda L, x: L.nn.functional.threshold(x, 0.5, 2.0),
        lambda L, x: L.nn.functional.elu(x),
        lambda L, x: L.nn.functional.celu(x, 0.5),
        lambda L, x: L.nn.functional.selu(x),
    ],
)
def test_kinked_activations_pass_the_gradient_at_nan(f):
    """PyTorch zeroes the gradient where x <= threshold, so a NaN takes the other branch."""
    assert_same(_grad(lambda L, x: (f(L, x) * L.tensor([1.0, 2.0, 3.0, 4.0])).sum()), NAN_IN)
    assert_same(_fwd_tangent(f), NAN_IN)


def test_logit_gradient_is_nan_outside_the_unit_interval():
    x = np.array([3.52, -0.61, 0.3, 1.0, 0.0])
    assert_same(_grad(lambda L, x: L.logit(x).sum()), x)
    assert_same(_fwd_tangent(lambda L, x: L.logit(x)), x)
    assert_same(_grad(lambda L, x: L.logit(x, eps=0.1).sum()), x)


@pytest.mark.parametrize("keepdim", [False, True])
def test_median_along_a_dim_is_nan_where_the_slice_has_one(keepdim):
    x = np.array([[1.0, np.nan, 2.0, np.nan], [3.0, 1.0, 2.0, 0.0], [np.nan, 5.0, 4.0, 6.0]])
    assert_same(lambda L, x: tuple(L.median(x, 1, keepdim=keepdim)), x)
    assert_same(_grad(lambda L, x: (L.median(x, 1).values * L.tensor([1.0, 2, 3])).nansum()), x)
    assert_same(lambda L, x: tuple(L.median(x, 0)), x)


def test_running_sums_start_from_plus_zero():
    x = np.array([-0.0, 1.0])
    assert_same(lambda L, x: 1 / L.logcumsumexp(x, 0), x)
    assert_same(lambda L, x: 1 / L.cumsum(x, 0), x)
    assert_same(lambda L, x: 1 / L.logcumsumexp(x[:1], 0), x)


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
