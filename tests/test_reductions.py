"""Reductions and scans against PyTorch (sum, mean, std/var and their moments, max/min,
amax/amin, aminmax, median and nanmedian, prod, any/all, cumsum, cumprod, cummax/cummin,
logcumsumexp, sum_to_size): values, gradients and tangents at NaN, infinities, ties and
large magnitudes, duplicate and empty dims, and their error texts."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from twolibs import (
    arr,
    assert_same,
    assert_same_error,
    assert_same_outcome,
    grad_prog,
    jvp_prog,
    lib_of,
    run,
    run_both,
)

import numtorch as nt

# ==================================================================
# Found by issue 14's sweep of silently wrong values and derivatives.


BIG = np.array([-100.0, 50.0, -80.0, 120.0])
COT = np.array([1.0, -2.0, 3.0, 0.5])


# ------------------------------------------------------------------ logcumsumexp
def test_logcumsumexp_grad_at_large_magnitudes():
    grad = grad_prog(lambda L, x: L.logcumsumexp(x, 0).sum())
    assert_same(grad, BIG, rtol=1e-6)
    # float32 against torch's float64 answer: torch's float32 one is 1.4e-6 off it (1.9999971
    # for 2), numtorch's weights exp(x_j - r_i) keep it
    f32 = grad_prog(lambda L, x: L.logcumsumexp(x.float(), 0).sum())
    ours, theirs = run_both(f32, BIG)[0], run_both(grad, BIG)[1]
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-6, atol=1e-30)
    assert_same(grad_prog(lambda L, x, g: (L.logcumsumexp(x, 0) * g).sum()), BIG, COT)


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
        assert_same(jvp_prog(lambda L, x: L.logcumsumexp(x, 0)), np.array(xs))


@pytest.mark.parametrize("shape,dim", [((2, 0), 1), ((0,), 0), ((0, 2), 0)])
def test_logcumsumexp_jvp_over_an_empty_dim_is_empty(shape, dim):
    # torch's forward AD takes a max over the dim and refuses an empty one (a divergence in
    # tests/progfuzz.py); the scan of nothing has the empty tangent, which backward
    # agrees with in both libraries
    x = np.ones(shape)
    t = nt.func.jvp(lambda x: nt.logcumsumexp(x, dim), (nt.tensor(x),), (nt.tensor(x),))[1]
    assert t.shape == shape and t.dtype == nt.float64
    import torch

    with pytest.raises(IndexError, match="Expected reduction dim"):
        torch.func.jvp(lambda x: torch.logcumsumexp(x, dim), (torch.tensor(x),), (torch.tensor(x),))
    assert_same(grad_prog(lambda L, x: L.logcumsumexp(x, dim).sum()), x)


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
    assert_same(grad_prog(f), x)
    assert_same(lambda L, x: L.func.jvp(lambda x: f(L, x), (x,), (L.ones_like(x),))[1], x)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_of_everything_with_nan_send_the_gradient_to_the_nan(name):
    x = np.array([1.0, np.nan, 3.0, np.nan])
    assert_same(grad_prog(lambda L, x: getattr(x, name)()), x)
    assert_same(grad_prog(lambda L, x: getattr(x, name)(0)[0]), x)
    assert_same(grad_prog(lambda L, x: getattr(L, "a" + name)(x)), x)  # AmaxBackward0: NaN


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


@pytest.mark.parametrize("keepdim", [False, True])
def test_median_along_a_dim_is_nan_where_the_slice_has_one(keepdim):
    x = np.array([[1.0, np.nan, 2.0, np.nan], [3.0, 1.0, 2.0, 0.0], [np.nan, 5.0, 4.0, 6.0]])
    assert_same(lambda L, x: tuple(L.median(x, 1, keepdim=keepdim)), x)
    assert_same(grad_prog(lambda L, x: (L.median(x, 1).values * L.tensor([1.0, 2, 3])).nansum()), x)
    assert_same(lambda L, x: tuple(L.median(x, 0)), x)


def test_running_sums_start_from_plus_zero():
    x = np.array([-0.0, 1.0])
    assert_same(lambda L, x: 1 / L.logcumsumexp(x, 0), x)
    assert_same(lambda L, x: 1 / L.cumsum(x, 0), x)
    assert_same(lambda L, x: 1 / L.logcumsumexp(x[:1], 0), x)


# ==================================================================
# Found by issue 14's second fuzz round.


def _grads(f, *which):
    """``f(L, *tensors)``'s gradients with respect to the arguments ``which`` (backward())."""

    def prog(L, *ts):
        for i in which:
            ts[i].requires_grad_(True)
        f(L, *ts).backward()
        return [ts[i].grad for i in which]

    return prog


# ------------------------------------------------------------------ missing output gradients
@pytest.mark.filterwarnings("ignore")
def test_moments_skip_the_output_without_gradient():
    # PyTorch passes an undefined gradient for the unused output, whose term is skipped:
    # var_mean(x)[1] of one element has gradient 1 (not 0 * the NaN of var's 1 / dof)
    one = np.array([[-1.6]])
    for fn in ("var_mean", "std_mean"):
        for k in (0, 1):
            assert_same(_grads(lambda L, x: (getattr(L, fn)(x, 1)[k] * 1.5).sum(), 0), one)
            prog = _grads(lambda L, x: getattr(L, fn)(x, 1, correction=0)[k].sum(), 0)
            assert_same(prog, np.array([[1.5, 1.5, -2.0]]))
    assert_same(lambda L, x: L.func.grad(lambda x: L.var_mean(x, 1)[1].sum())(x), one)


# ------------------------------------------------------------------ std at zero spread
@pytest.mark.filterwarnings("ignore")
def test_std_gradient_is_zero_where_the_spread_is_zero_even_for_an_infinite_cotangent():
    # rsqrt(std) of equal values: an infinite cotangent meets std's zero partial; PyTorch
    # masks the product (std is constant in x there, so 0 is its derivative)
    def f(L, x):
        return (x.expand(2, 3).std(-2, keepdim=True).rsqrt() * L.tensor([1.0, -1.0, 2.0])).sum()

    assert_same(_grads(f, 0), np.array([[-1.01]]))
    assert_same(lambda L, x: L.func.grad(f, argnums=1)(L, x), np.array([[-1.01]]))

    def g(L, x, t):
        return L.func.jvp(lambda x: L.std_mean(x.expand(2, 3), 0)[0], (x,), (t,))

    assert_same(g, np.array([[-1.01, 2.0, 0.5]]), np.array([[float("inf"), 1.0, 2.0]]))


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("op", ["std", "var", "std_mean", "var_mean"])
def test_spread_tangents_over_an_empty_or_single_element_dim(op):
    # PyTorch's std tangent is var's over twice the result: NaN where the result is NaN
    for shape in [(0, 3), (1, 3)]:
        x, t = np.zeros(shape), np.full(shape, 0.5)
        assert_same(lambda L, x, t: L.func.jvp(lambda x: getattr(L, op)(x, 0), (x,), (t,)), x, t)


@pytest.mark.filterwarnings("ignore")
def test_variance_of_equal_values_is_exactly_zero():
    # NumPy's mean of equal float32 values can round away from them (var 1.5e-14 for ten
    # copies of 1.0663246); PyTorch's dim reductions give exactly 0
    for v in (np.float32(1.0663246), np.float32(-0.038835037), 1.5744083):
        x = np.full((2, 10), v)
        assert_same(lambda L, x: (x.var(1), x.std(1), L.var_mean(x, 1)[0]), x)
        assert_same(lambda L, x: x[:1].expand(3, 10).std(0), x)


# ------------------------------------------------------------------ cumsum's transpose
@pytest.mark.filterwarnings("ignore")
def test_cumsum_gradient_is_a_reversed_scan():
    # sum_{k >= i} g_k: a NaN cotangent reaches the elements before it only (a total
    # minus the running sums spread it to all)
    x, w = np.array([[1.39, -2.27, -0.08, 1.59]]), np.array([[0.49, 3.56, -1.82, 0.56]])
    assert_same(_grads(lambda L, x, w: (x.cumsum(-1).rsqrt() * w).sum(), 0), x, w)
    big = np.array([1e20, 1.0, -1e20, 3.0])
    assert_same(_grads(lambda L, x, w: (x.cumsum(0) * w).sum(), 0), big, np.array([1e20, 1, 1, 2]))


# ------------------------------------------------------------------ extrema and products
@pytest.mark.filterwarnings("ignore")
def test_max_of_everything_gives_zero_to_the_other_elements_whatever_the_cotangent():
    # max()/min() (MaxBackward1) fill a zero tensor at the extremum; amax keeps g * 0
    x = np.array([[1.7, -2.2, 1.7]])
    for fn in ("max", "amax"):
        assert_same(_grads(lambda L, x: getattr(x, fn)().logit(), 0), x)
    assert_same(_grads(lambda L, x: x.min().mul(3), 0), np.array([[0.7, float("nan"), 0.7]]))


@pytest.mark.filterwarnings("ignore")
def test_prod_over_one_element_is_the_identity():
    # d prod / d x = 1 for one element (not result / x = inf / inf)
    # (torch.func.grad and forward mode agree; PyTorch's eager backward divides, NaN: the
    # derivative of the identity decides)
    for x in (np.array([[-np.inf]]), np.array([[np.nan]])):
        for dim in (-1, 0, None):
            f = lambda L, x: (x.prod() if dim is None else x.prod(dim)).sum() * 2  # noqa: E731
            assert_same(lambda L, x: L.func.grad(lambda x: f(L, x))(x), x)
            t = nt.tensor(x, requires_grad=True)
            f(nt, t).backward()
            assert t.grad.tolist() == [[2.0]]
            vjp = nt.func.vjp(lambda x: f(nt, x), nt.tensor(x))[1](nt.tensor(1.0).double())
            assert vjp[0].tolist() == [[2.0]]
    jvp = lambda L, x: L.func.jvp(lambda x: x.prod(-2), (x,), (L.ones_like(x) * 2.25,))  # noqa: E731
    assert_same(jvp, np.full((1, 1, 1), -np.inf))


# ==================================================================
# Found by issue 14's third fuzz round (fresh seeds, 68,000 programs).


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", ["amax", "amin"])
def test_amax_and_amin_keep_the_first_of_equal_zeros(name):
    # NumPy's reduction may keep either signed zero; PyTorch's amax/amin keep the first
    def prog(L, a):
        f = getattr(L, name)
        cols = a.reshape(-1, 1).expand(-1, 3)
        outs = [f(a), f(a.flip(0)), f(cols, 0), f(cols, (1, 0), keepdim=True), f(cols.mT, -1)]
        batched = L.func.vmap(lambda r: f(r, 0))(L.stack([a, a.flip(0)]))
        return [o.signbit() for o in outs + [batched]]

    assert_same(prog, np.array([0.0, -0.0] * 3 + [-1.0] * 20))
    assert_same(prog, np.array([-1.0, -0.0, 0.0, -0.0]))


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("fn", ["var", "std", "var_mean", "std_mean"])
def test_moments_of_low_precision_floats_accumulate_in_double(fn, dtype):
    # PyTorch's CPU var/std accumulate float32 and half in double: the std of [1e30, -2.8]
    # is finite (its variance overflows float32), and ordinary values round as double's do
    rng = np.random.default_rng(3)
    values = [[6e4, -6e4], *(rng.standard_normal((4, 37)) * 1e3).tolist()]
    if dtype == "float32":  # (1e30 is no half)
        values.append([1e30, -2.77])

    def prog(L):
        xs = [L.tensor(v, dtype=getattr(L, dtype)) for v in values]
        return [(getattr(L, fn)(x), getattr(L, fn)(x, 0, keepdim=True)) for x in xs]

    assert_same(prog, rtol=0, atol=0)


# ==================================================================
# Causes behind the fourth fuzz round's failures (tests/progfuzz.py).


LCSE_POINTS = {
    "huge": [1e30],
    "huge_tie": [1e30, 1e30, -1e30],
    "absorbing": [1e8, 1e8 + 16, 3.0],
    "spread": [-100.0, 50.0, -80.0, 120.0],
    "plain": [0.3, -1.2, 2.0, 0.1],
}


def _lcse_weights_by_hand(x: np.ndarray) -> np.ndarray:
    """w[i, j] = exp(x_j - r_i) for j <= i, each row shifted by its own running max (float64)."""
    w = np.zeros((x.size, x.size))
    for i in range(x.size):
        z = np.exp(x[: i + 1] - x[: i + 1].max())
        w[i, : i + 1] = z / z.sum()
    return w


@pytest.mark.parametrize("name", sorted(LCSE_POINTS))
def test_logcumsumexp_derivatives_keep_the_tangents_digits_at_large_magnitudes(name):
    """logcumsumexp's jvp and vjp weigh by exp(x_j - r_i) computed from x's running max, not
    as exp(log|t| + x - r): at |x| = 1e30 in float32 the tangent's log vanished against x.
    The oracle is the weights by hand in float64: torch's vjp adds log|g| to -r the same way
    (wrong at 1e30 in float64 too), its jvp underflows exp(x - max) at [-100, 50, -80, 120]."""
    import numtorch as nt

    x32 = np.array(LCSE_POINTS[name], dtype=np.float32)
    t32 = np.array([1.93, -0.5, 2.0, 1.0][: x32.size], dtype=np.float32)
    x, t = nt.tensor(x32), nt.tensor(t32)
    _, jvp = nt.func.jvp(lambda x: x.logcumsumexp(0), (x,), (t,))
    _, pull = nt.func.vjp(lambda x: x.logcumsumexp(0), x)
    w = _lcse_weights_by_hand(x32.astype(np.float64))
    t64 = t32.astype(np.float64)
    np.testing.assert_allclose(np.asarray(jvp.tolist()), w @ t64, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(pull(t)[0].tolist()), w.T @ t64, rtol=1e-5, atol=1e-6)


def test_logcumsumexp_derivatives_at_infinities_follow_pytorch():
    """-inf prefixes (jvp 0, vjp NaN into them) and +inf (vjp NaN at it, 0 before) as
    PyTorch gives. (Its jvp with a +inf is 0 before it, from exp(x - inf); r_0 = x_0 there,
    so numtorch keeps t_0.)"""
    inf = float("inf")

    def jvp(L, x, t):
        return L.func.jvp(lambda x: x.logcumsumexp(0), (x,), (t,))[1]

    def vjp(L, x, t):
        return L.func.vjp(lambda x: x.logcumsumexp(0), x)[1](t)[0]

    t = np.array([1.93, -0.5, 2.0, 1.0])
    assert_same(jvp, np.array([-inf, -inf, 1.0, -inf]), t)
    for x in ([-inf, -inf, 1.0, -inf], [inf, 1.0, 2.0, -1.0], [1.0, -inf, inf, 2.0]):
        assert_same(vjp, np.array(x), t)


def test_cumprod_gradient_at_an_infinity_is_the_product_of_the_others():
    """Not torch's (it divides by x: inf / inf): d c_k / d x_i = prod_{j <= k, j != i} x_j."""

    import numtorch as nt

    x = nt.tensor([float("inf"), 2.0, 3.0], dtype=nt.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.cumprod(0).backward(nt.tensor([1.0, 1.0, 0.5], dtype=nt.float64))
        single = nt.tensor([float("inf")], requires_grad=True)
        single.cumprod(0).backward(nt.tensor([1.5]))
    assert x.grad.tolist() == [1 + 2 + 0.5 * 6, float("inf"), float("inf")]
    assert single.grad.tolist() == [1.5]


def test_nansum_jvp_drops_the_tangents_of_nan_elements_as_pytorch():
    def f(lib):
        x = lib.tensor([-0.22, 0.5], dtype=lib.float64)
        t = lib.tensor([2.23, 1.0], dtype=lib.float64)
        return lib.func.jvp(lambda x: x.logit().nansum(-1), (x,), (t,))

    assert_same(f)


# ==================================================================
# Causes behind the bad-input sweep's DIFFERS cases (tests/test_bad_inputs.py), fixed.


W = np.arange(15.0).reshape(5, 3) / 10


def test_inplace_scans_run_in_selfs_dtype():
    assert_same(lambda L, x: (x.int().cumsum_(0), x.float().cumprod_(1), x.cumsum_(dim=1)), W)


# ==================================================================
# Found by issue 14's sweep of crashes where PyTorch succeeds.


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8", "float32"])
def test_median_of_nothing(dtype):
    assert_same(lambda L, x: L.median(x), np.zeros(0, dtype))


# ==================================================================
# Issue 14, "lenient where PyTorch refuses": PyTorch's refusals, before any input is modified.


# ------------------------------------------------------------------ 2. a dim listed twice
_DUP_DIMS = [(0, 0), (0, -3), (1, 1, 2), (2, -1)]


@pytest.mark.parametrize(
    "call",
    [
        lambda x, d: x.sum(d),
        lambda x, d: x.sum(d, keepdim=True),
        lambda x, d: x.mean(list(d)),
        lambda x, d: x.mean(d, dtype=lib_of(x).float64),
        lambda x, d: x.nansum(d),
        lambda x, d: x.nanmean(d),
        lambda x, d: x.amax(d),
        lambda x, d: x.amin(d),
        lambda x, d: x.std(d),
        lambda x, d: x.var(d, correction=0),
        lambda x, d: x.logsumexp(d),
        lambda x, d: lib_of(x).special.logsumexp(x, d),
        lambda x, d: x.norm(dim=d[:2]),
        lambda x, d: x.norm(dim=d),
        lambda x, d: lib_of(x).linalg.vector_norm(x, dim=d),
        lambda x, d: lib_of(x).linalg.norm(x, dim=d[:2]),
        lambda x, d: (x > 0).any(d),
        lambda x, d: (x > 0).all(d),
        lambda x, d: x.count_nonzero(d),
        lambda x, d: x.squeeze(d),
        lambda x, d: x.flip(d),
    ],
)
@pytest.mark.parametrize("dims", _DUP_DIMS, ids=str)
def test_duplicate_dims_are_refused(call, dims):
    assert_same_error(lambda lib: call(lib.tensor(arr(2, 3, 4), requires_grad=True), dims))


@pytest.mark.parametrize(
    "prog",
    [
        lambda lib: lib.tensor(1.0).sum((0, -1)),
        lambda lib: lib.tensor(1.0).squeeze((0, 0)),
        lambda lib: lib.zeros(0, 3).sum((0, 0)),
    ],
    ids=["0d", "squeeze_0d", "empty"],
)
def test_duplicate_dims_of_odd_shapes_are_refused(prog):
    assert_same_error(prog)


def test_norm_without_order_over_two_dims_is_the_elements_2_norm():
    assert_same(lambda lib, x: (lib.linalg.norm(x, dim=(0, 2)), x.norm(dim=(1, 0))), arr(2, 3, 4))


def test_prod_over_several_dims_is_refused():
    """prod takes one dim: a tuple reduced only its first dim (a silent wrong answer)."""
    assert_same_error(lambda lib: lib.prod(lib.ones(2, 3), (0, 1)))


# ==================================================================
# Found in issue 14's fuzzer bucket "indexing": PyTorch's exception type and text.


# ------------------------------------------------------------------ cause 3: dim errors
@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")
@pytest.mark.parametrize(
    "prog",
    [
        lambda L, x: x.amax(-1),  # amax/amin name the dim as given
        lambda L, x: x.amin((-1,)),
        lambda L, x: L.zeros(0, 0).amax((1, 0)),
        lambda L, x: x.kthvalue(1, -1),  # the empty dim before k's range
        lambda L, x: x.median(-1),
        lambda L, x: L.func.vmap(lambda t: t.median(-1))(x.unsqueeze(0).expand(2, 2, 0)),
        lambda L, x: L.func.vmap(lambda t: t.amax(-1))(x.unsqueeze(0).expand(2, 2, 0)),
        lambda L, x: L.func.vmap(lambda t: t.kthvalue(1, -1))(x.unsqueeze(0).expand(2, 2, 0)),
    ],
)
def test_empty_reduction_dim(prog):
    assert_same_error(prog, np.zeros((2, 0)))


# ==================================================================
# Issue 14's sweep of aliasing and saved values.


# ------------------------------------------------------------------ sum_to_size
def test_sum_to_size_of_the_same_size_is_the_tensor_itself():
    def prog(lib, a):
        a = a.clone().requires_grad_()
        d = lib.diag(a)
        v = d.sum_to_size((3,))
        v.tanh_()
        (d * 2).sum().backward()
        return v is d, d, a.grad

    assert_same(prog, arr(3, 3))


def test_sum_to_size_forms_and_error():
    from twolibs import assert_same_error

    assert_same(
        lambda L, x: (x.sum_to_size(1, 3), x.sum_to_size([3]), x.sum_to_size(2, 1)), arr(2, 3)
    )
    assert_same_error(lambda L, x: x.sum_to_size(4), arr(2, 3))


# ==================================================================
# The functions added for issue 14, beyond the op database's generic tests.


NAN = math.nan


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


@pytest.mark.parametrize("name", ["median", "nanmedian"])
@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3), (), (2,)], ids=str)
@pytest.mark.parametrize("dim", [None, 0, -1, 1])
def test_median_of_bools(name, shape, dim):
    """No bool kernel, but an empty tensor runs none: median() of nothing is NaN cast to
    bool (True); with a dim, the dim's checks (out of range, empty) come before the dtype's."""

    def prog(T, x):
        f = getattr(x, name)
        return f() if dim is None else f(dim)

    assert_same_outcome(prog, np.arange(int(np.prod(shape))).reshape(shape) % 2 > 0)


@pytest.mark.parametrize("name", ["median", "nanmedian"])
@pytest.mark.parametrize("dtype", ["bool", "complex64"])
def test_median_of_bools_under_vmap(name, dtype):
    """torch.func.vmap's rule runs median along a dim: the refusal names median_out."""

    def prog(T, x):
        return T.func.vmap(lambda a: getattr(a, name)())(x.to(getattr(T, dtype)))

    assert_same_error(prog, np.ones((2, 3)))


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
        return (
            r.min,
            r.max,
            mn,
            mx,
            x.aminmax(keepdim=True),
            T.aminmax(n),
            T.aminmax(n, dim=1),
            T.aminmax(T.tensor([True, False])),
        )

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


def test_median_family_refuses_bool():
    for prog in (
        lambda T: T.median(T.tensor([True, False])),
        lambda T: T.median(T.tensor([True, False]), 0),
        lambda T: T.nanmedian(T.tensor([True, False])),
        lambda T: T.nanmedian(T.tensor([True, False]), 0),
    ):
        assert_same_error(prog)


# ------------------------------------------------------------------ bincount, histc, isin
def test_bincount_weights_dtypes_and_minlength():
    idx = np.array([0, 3, 3, 1])
    for wd in (np.float32, np.float64, np.float16, np.int64, np.int32):
        w = np.array([0.5, 1.0, 2.0, -1.0]).astype(wd)
        assert_same(lambda L, i, w: L.bincount(i, w, minlength=6), idx, w)
    assert_same(lambda L, i: L.bincount(i.to(L.uint8)), idx)
    assert_same(lambda L: L.bincount(L.tensor([], dtype=L.int64), minlength=2))
    assert_same_error(lambda L, i: L.bincount(i, minlength=1.5), idx)
    assert_same_error(lambda L, i: L.bincount(i - 1), idx)


def test_bincount_weights_require_grad_and_backward_raises():
    def prog(L):
        w = L.tensor([1.0, 2.0], requires_grad=True)
        r = L.bincount(L.tensor([1, 3]), w)
        assert r.requires_grad and type(r.grad_fn).__name__ == "NotImplemented"
        r.sum().backward()

    assert_same_error(prog)


def test_histc_edges_nan_inf_and_degenerate_range():
    x = np.array([1.0, 2.0, 1.0, np.nan, np.inf, -1.0, 3.0])
    assert_same(lambda L, x: L.histc(x, bins=4, min=0, max=3), x)
    assert_same(lambda L, x: L.histc(x.float(), bins=3, min=2.0, max=2.5), x)
    assert_same(lambda L: L.histc(L.tensor([2.0, 2.0]), bins=4))
    assert_same(lambda L: L.histc(L.tensor([1.0, 2.0]), bins=3, min=5, max=5))
    assert_same(lambda L: L.histc(L.tensor([]), bins=4))
    assert_same(lambda L: L.histc(L.tensor([-1e30, 1e30]), bins=5))
    assert_same_error(lambda L: L.histc(L.tensor([1.0, np.nan]), bins=4))
    assert_same_error(lambda L: L.histc(L.tensor([1.0, 2.0]), bins=4, min=np.nan))
    assert_same_error(lambda L: L.histc(L.tensor([1.0]), bins=4.5))


def test_histc_result_never_requires_grad():
    def prog(L):
        h = L.histc(L.tensor([1.0, 2.0], requires_grad=True), bins=3)
        assert not h.requires_grad and h.grad_fn is None
        h.sum().backward()

    assert_same_error(prog)


def test_histc_under_vmap_per_sample_ranges():
    x = np.array([[0.0, 1.0, 5.0], [-2.0, -2.0, -2.0]])
    assert_same(lambda L, x: L.vmap(lambda r: L.histc(r, bins=3))(x), x)


def test_isin_numbers_nan_zeros_and_bool_refusals():
    e = np.array([1.0, np.nan, -0.0, np.inf, 2.0])
    t = np.array([np.nan, 0.0, np.inf])
    assert_same(lambda L, e, t: L.isin(e, t), e, t)
    assert_same(lambda L, e, t: L.isin(e, t, invert=True), e, t)
    assert_same(lambda L: L.isin(L.tensor([1, 2, 3]), 2.5))
    assert_same(lambda L: L.isin(2, L.tensor([1, 2, 3])))
    assert_same(lambda L: L.isin(L.tensor([1, 2], dtype=L.uint8), L.tensor([-1, 2], dtype=L.int8)))
    assert_same_error(lambda L: L.isin(True, L.tensor([1, 2])))
    assert_same_error(lambda L: L.isin(L.tensor([1, 2]), 1j))
    assert_same_error(lambda L: L.isin(2, 3))


def test_isin_vmap_with_batched_test_elements():
    e = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, np.nan]])
    t = np.array([[2.0, 9.0], [np.nan, 4.0]])
    assert_same(lambda L, e, t: L.vmap(L.isin)(e, t), e, t)
    assert_same(lambda L, t: L.vmap(lambda s: L.isin(3, s))(t), t)


# ------------------------------------------------------------------ cov, corrcoef
def test_cov_weights_and_degrees_of_freedom():
    x = arr(3, 5)
    fw, aw = np.array([1, 2, 0, 3, 1]), np.array([0.5, 1.0, 2.0, 0.0, 1.5])
    assert_same(lambda L, x, f, a: L.cov(x, fweights=f, aweights=a), x, fw, aw)
    assert_same(lambda L, x, f, a: L.cov(x, correction=3, fweights=f, aweights=a), x, fw, aw)
    assert_same(lambda L, x, a: L.cov(x.float(), aweights=a), x, aw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(lambda L, x: L.cov(x, correction=5), x)
        assert_same(lambda L, x: L.cov(x[:, :1]), x)
        assert_same(lambda L: L.cov(L.tensor(1.0)))
    assert_same_error(lambda L, x: L.cov(x, correction=1.5), x)
    assert_same_error(lambda L, x: L.cov(x, correction=True), x)


def test_cov_grad_through_aweights():
    x, aw = arr(2, 4), np.array([0.5, 1.0, 2.0, 1.5])
    assert_same(
        grad_prog(
            lambda L, a: L.cov(L.tensor([[1.0, 2, 4, 7], [0, 1, 1, 3]]).double(), aweights=a).sum()
        ),
        aw,
    )
    assert_same(grad_prog(lambda L, x: L.corrcoef(x).pow(2).sum()), x)


def test_corrcoef_constant_rows_complex_and_integers():
    assert_same(lambda L: L.corrcoef(L.ones(2, 3)))
    assert_same(lambda L: L.corrcoef(L.tensor([[1.0, 2, 3], [3, 2, 1.0]])))
    assert_same(lambda L: L.corrcoef(L.tensor([[1, 2, 3], [2, 5, 1]])))
    assert_same(lambda L: L.corrcoef(L.tensor([[1j, 2], [1, 3]])))
    assert_same(lambda L: L.corrcoef(L.tensor([1.0, 2.0])))


# ------------------------------------------------------------------ quantile, nanquantile
QUANTILE_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("mode", QUANTILE_MODES)
def test_quantile_modes_ties_and_edges(name, mode):
    """Ranks that fall on .5 (nearest rounds half to even), q at 0 and 1, ties, inf."""
    x = np.array([[3.0, 1.0, 2.0, 2.0, -np.inf], [0.0, -0.0, 5.0, np.inf, 1.0]])
    q = np.array([0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.875, 1.0])

    def prog(L, x, q):
        f = getattr(L, name)
        return (
            f(x, q, dim=1, interpolation=mode),
            f(x, q, interpolation=mode),
            f(x, 0.375, dim=0, keepdim=True, interpolation=mode),
            getattr(x, name)(q[:2], 1, True, interpolation=mode),
        )

    assert_same(prog, x, q)
    assert_same(prog, x.astype(np.float32), q.astype(np.float32))


@pytest.mark.parametrize("mode", QUANTILE_MODES)
def test_quantile_and_nanquantile_with_nan(mode):
    x = np.array([[np.nan, 1.0, 2.0, 4.0], [np.nan] * 4, [1.0, 3.0, 2.0, 0.0]])
    q = np.array([0.1, 0.5, 0.9])
    for name in ("quantile", "nanquantile"):
        assert_same(lambda L, x, q: getattr(L, name)(x, q, dim=1, interpolation=mode), x, q)
        assert_same(lambda L, x: getattr(L, name)(x, 0.5, interpolation=mode), x)


def test_quantile_gradients_and_out():
    x = np.array([[0.3, -1.2, 2.5, 0.7], [1.1, 0.2, -0.4, 3.0]])
    q = np.array([0.2, 0.5, 0.9])

    def grads(L, x, q):
        x.requires_grad_(True)
        q.requires_grad_(True)
        out = L.quantile(x, q, dim=1, keepdim=True)
        w = L.arange(out.numel(), dtype=out.dtype).reshape(out.shape)
        return L.autograd.grad((out * w).sum(), (x, q))

    assert_same(grads, x, q)
    for mode in QUANTILE_MODES:
        assert_same(
            grad_prog(lambda L, x: (L.nanquantile(x, 0.4, interpolation=mode) * 3).sum()), x
        )

    def out(L, x):
        o = L.empty(3, dtype=L.float64)
        return L.quantile(x, L.tensor([0.2, 0.5, 0.9], dtype=L.float64), out=o) is o, o

    assert_same(out, x)


def test_quantile_errors():
    x = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    for name in ("quantile", "nanquantile"):
        for prog in (
            lambda L, x: getattr(L, name)(x, 1.5),
            lambda L, x: getattr(L, name)(x, -1e-9),
            lambda L, x: getattr(L, name)(x, 2),
            lambda L, x: getattr(L, name)(x, L.tensor([0.1, 1.5])),
            lambda L, x: getattr(L, name)(x, L.tensor([[0.1]])),
            lambda L, x: getattr(L, name)(x, L.tensor([0.1], dtype=L.float64)),
            lambda L, x: getattr(L, name)(x.long(), 0.5),
            lambda L, x: getattr(L, name)(x.half(), 0.5),
            lambda L, x: getattr(L, name)(x[:0], 0.5),
            lambda L, x: getattr(L, name)(x, 0.5, interpolation="foo"),
            lambda L, x: getattr(L, name)(x, 0.5, dim=2),
        ):
            assert_same_error(prog, x)


def test_complex_logcumsumexp_follows_pytorchs_branch_and_gradient():
    # the imaginary part of a step's log is on the principal branch: the running value
    # wraps as PyTorch's sequential scan does
    rng = np.random.default_rng(4)
    z = rng.standard_normal((3, 12)) * 2 + 1j * rng.uniform(-6, 6, (3, 12))
    assert_same(lambda L, z: L.logcumsumexp(z, 1), z)
    assert_same(grad_prog(lambda L, z: L.logcumsumexp(z, 0).abs().sum()), z)


# ==================================================================
# sum over axes before a short kept trailing block: einsum's path gives NumPy's sums.


def _special(shape, dtype, seed):
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype) * 10
    flat = x.reshape(-1)
    flat[:: max(1, flat.size // 7)] = -0.0
    flat[3], flat[11], flat[-5] = np.nan, np.inf, -np.inf
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape, dim",
    [
        ((256, 32, 32), 1),
        ((256, 32, 32), (0, 1)),
        ((1024, 64, 2), 1),
        ((8, 4096, 4), (0, 1)),
        ((64, 64, 8, 1), 1),
        ((4096, 16), 0),
        ((256, 32, 32), 0),  # (a long kept block: NumPy's own path)
        ((256, 32, 32), 2),  # (the last axis summed: NumPy's pairwise sums)
        ((2048, 1), 0),  # (a kept block of one element: NumPy's own path)
    ],
)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_over_many_short_rows_is_numpys_sum(dtype, shape, dim, keepdim):
    x = _special(shape, dtype, seed=len(shape))
    got = nt.tensor(x).sum(dim, keepdim).numpy()
    want = x.sum(axis=dim, keepdims=keepdim)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)  # bit for bit: the same additions in order
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    # against torch, which adds in its own order: a rounding per term, of the largest term
    terms = x.size // want.size
    tol = terms * np.finfo(dtype).eps
    atol = tol * np.abs(x[np.isfinite(x)]).max()
    assert_same(lambda L, v: v.sum(dim, keepdim), x, rtol=tol, atol=atol)


def test_sum_over_short_rows_of_a_transposed_tensor_and_in_vmap_and_grad():
    x = _special((32, 64, 32), np.float64, seed=5)
    tol = 64 * np.finfo(np.float64).eps  # (64 terms, each rounded once: torch's order differs)
    atol = tol * np.abs(x[np.isfinite(x)]).max()
    assert_same(lambda L, v: v.transpose(0, 2).sum(1), x, rtol=tol, atol=atol)
    assert_same(lambda L, v: L.func.vmap(lambda r: r.sum(0))(v), x, rtol=tol, atol=atol)
    g = _special((32, 32), np.float64, seed=6)
    prog = grad_prog(lambda L, v, w: ((v * v).sum(1) * w).sum())
    assert_same(prog, np.nan_to_num(x), g, rtol=tol, atol=atol)


def test_logsumexp_of_log_softmax_is_zero_to_rounding():
    # log(1) up to rounding in both (torch -6.9e-18 here, numtorch 0.0): neither is wrong, so
    # a program dividing it by itself differs (recorded in tests/progfuzz.py)
    x = np.array([[1.31, -1.69], [2.42, -1.05]])
    got, want = run_both(lambda L, x: x.log_softmax(-1).logsumexp(1), x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=0, atol=1e-15)
    assert np.abs(got.numpy()).max() < 1e-15


def test_logcumsumexp_of_log_softmax_ends_at_zero_to_rounding():
    # log(1) up to rounding (torch below zero here, numtorch +0.0): atan2 of it against a
    # negative number is -pi or pi by that sign, so such a program differs (tests/progfuzz.py)
    x = np.array([[-0.17, 0.30]], dtype=np.float32)
    got, want = run_both(lambda L, x: x.log_softmax(-1).logcumsumexp(1), x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=0, atol=1e-7)
    assert abs(float(got.numpy()[0, -1])) < 1e-7
