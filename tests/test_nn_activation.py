"""Activations of nn.functional beyond what the op database sees: the in-place forms (values,
identity, version bumps, autograd through them), exact error texts, numerical stability at
large inputs, hardsigmoid's forward (its op is checked by finite differences only), float32
results against PyTorch's kernels (bit for bit, or to the rounding of transcendentals), and the
random ones (rrelu in training, gumbel_softmax): shapes, statistics, gradients with the
noise fixed by the seed, and vmap's randomness modes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from twolibs import (
    arr,
    assert_close,
    assert_same,
    assert_same_error,
    fd_grad,
    grad_prog,
    run_both,
    tangent_prog,
)

import numtorch as nt
from numtorch.func import _set_vmap_fallback_enabled

N = 200_000
Z = 5.0  # standard errors allowed


def _away_from_kinks(x):
    """Shift values near 0, +-0.5, +-1, +-3, 6 (the kinks of the activations below)."""
    for k in (0.0, 0.5, -0.5, 1.0, -1.0, 3.0, -3.0, 6.0):
        x = np.where(np.abs(x - k) < 0.05, x + 0.15, x)
    return x


X = _away_from_kinks(arr(3, 4) * 2)

# ------------------------------------------------------------------ in-place forms
# (name, call(F, x) writing into x); torch must agree on values, identity and versions.
INPLACE = {
    "relu": lambda F, x: F.relu(x, inplace=True),
    "relu_": lambda F, x: F.relu_(x),
    "relu6": lambda F, x: F.relu6(x, inplace=True),
    "elu": lambda F, x: F.elu(x, 0.7, inplace=True),
    "elu_": lambda F, x: F.elu_(x, 1.3),
    "selu": lambda F, x: F.selu(x, inplace=True),
    "selu_": lambda F, x: F.selu_(x),
    "celu": lambda F, x: F.celu(x, 0.5, inplace=True),
    "celu_": lambda F, x: F.celu_(x, 2.0),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2, inplace=True),
    "leaky_relu_": lambda F, x: F.leaky_relu_(x, 0.1),
    "hardtanh": lambda F, x: F.hardtanh(x, -0.5, 1.5, inplace=True),
    "hardtanh_": lambda F, x: F.hardtanh_(x),
    "threshold": lambda F, x: F.threshold(x, 0.3, -2.0, inplace=True),
    "threshold_": lambda F, x: F.threshold_(x, 0.3, -2.0),
    "rrelu_eval": lambda F, x: F.rrelu(x, 0.1, 0.3, inplace=True),
    "rrelu_": lambda F, x: F.rrelu_(x),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x, inplace=True),
    "hardswish": lambda F, x: F.hardswish(x, inplace=True),
    "silu": lambda F, x: F.silu(x, inplace=True),
    "mish": lambda F, x: F.mish(x, inplace=True),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_writes_the_input_and_bumps_its_version(name):
    def prog(lib, x):
        y = x.clone()
        out = INPLACE[name](lib.nn.functional, y)
        return out, out is y, y._version

    assert_same(prog, X)


@pytest.mark.parametrize("name", list(INPLACE))
def test_gradient_flows_through_inplace_forms(name):
    def prog(lib, x):
        x.requires_grad_(True)
        y = x * 1.5
        INPLACE[name](lib.nn.functional, y)
        (g,) = lib.autograd.grad((y * y).sum(), x)
        return y, g

    # torch's float64 hardsigmoid backward rounds its 1/6 to float32.
    assert_same(prog, X, rtol=1e-7 if name == "hardsigmoid" else 1e-10)


def test_inplace_on_a_leaf_that_requires_grad_raises():
    def prog(lib, x):
        return lib.nn.functional.elu(x.requires_grad_(True), inplace=True)

    assert_same_error(prog, X)


def test_inplace_bad_input_modifies_nothing():
    x = nt.tensor(X)
    with pytest.raises(RuntimeError, match="Lower bound"):
        nt.nn.functional.rrelu_(x, 0.5, 0.1)
    with pytest.raises(ValueError, match="min_val cannot be greater"):
        nt.nn.functional.hardtanh(x, 1.0, -1.0, inplace=True)
    np.testing.assert_array_equal(x.numpy(), X)
    assert x._version == 0


def test_integer_inputs_where_torch_accepts_them():
    ints = np.array([[0, -1, 1], [3, -3, 9]])

    def prog(lib, x):
        F = lib.nn.functional
        y = x.clone()
        F.hardtanh_(y, -1.9, 2.5)
        return (
            F.relu(x),
            F.relu6(x),
            F.hardtanh(x, -1.5, 2.5),
            F.threshold(x, -0.5, 7.9),
            F.threshold(x, 1.5, -7.9),
            F.threshold(x, x[0, 2], x[1, 1]),
            y,
            F.softsign(x),
            F.tanhshrink(x),
        )

    assert_same(prog, ints, rtol=1e-6)


# ------------------------------------------------------------------ values
def test_hardsigmoid_forward_matches_torch_and_its_gradient_is_one_sixth():
    for dtype in (np.float32, np.float64):
        x = np.linspace(-4, 4, 41).astype(dtype)
        assert_same(lambda lib, t: lib.nn.functional.hardsigmoid(t), x, rtol=1e-6, atol=1e-7)
    t = nt.tensor(np.array([-3.5, -1.0, 0.2, 2.9, 3.5]), requires_grad=True)
    (g,) = nt.autograd.grad(nt.nn.functional.hardsigmoid(t).sum(), t)
    # Exactly 1/6 inside (-3, 3): torch rounds it to float32 (0.1666666716...).
    np.testing.assert_array_equal(g.numpy(), [0.0, 1 / 6, 1 / 6, 1 / 6, 0.0])


def test_tensor_methods():
    w = np.array([0.1, 0.2, 0.3, 0.4])

    def prog(lib, x, w):
        return x.hardshrink(), x.hardshrink(0.9), x.prelu(w)

    assert_same(prog, X, w)


def test_grad_fn_names_match_torch():
    def prog(lib, x):
        F = lib.nn.functional
        x.requires_grad_(True)
        outs = (
            F.elu(x),
            F.selu(x),
            F.gelu(x),
            F.silu(x),
            F.mish(x),
            F.hardtanh(x),
            F.relu6(x),
            F.hardswish(x),
            F.hardshrink(x),
            F.softshrink(x),
            F.leaky_relu(x),
            F.softplus(x),
            F.logsigmoid(x),
            F.threshold(x, 0.1, 2.0),
        )
        return [o.grad_fn.name() for o in outs]

    assert_same(prog, X)


STABLE = {
    "softplus": lambda F, x: F.softplus(x),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "elu": lambda F, x: F.elu(x),
    "selu": lambda F, x: F.selu(x),
    "celu": lambda F, x: F.celu(x, 0.5),
    "silu": lambda F, x: F.silu(x),
    "mish": lambda F, x: F.mish(x),
    "gelu": lambda F, x: F.gelu(x),
    "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"),
}


@pytest.mark.parametrize("name", list(STABLE))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_inputs_are_finite_and_match_torch(name, dtype):
    x = np.array([-1e4, -300.0, -90.0, -30.0, 30.0, 90.0, 300.0, 1e4], dtype=dtype)

    def prog(lib, t):
        t.requires_grad_(True)
        y = STABLE[name](lib.nn.functional, t)
        (g,) = lib.autograd.grad(y.sum(), t)
        return y, g

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warnings from the kernels
        ours = assert_same(prog, x, rtol=1e-6, atol=1e-30)
    assert all(np.isfinite(o.detach().numpy()).all() for o in ours)


def test_softplus_is_stable_below_a_large_threshold():
    x = np.array([-1e4, -50.0, 50.0, 1e4])
    y = nt.nn.functional.softplus(nt.tensor(x), beta=0.01, threshold=1e6)  # torch: inf at 1e4
    np.testing.assert_allclose(y.numpy(), 100 * np.logaddexp(0, 0.01 * x), rtol=1e-12)


# ------------------------------------------------------------------ errors: PyTorch's texts
ERRORS = {
    "hardtanh_bounds": lambda F, x: F.hardtanh(x, 1.0, -1.0),
    "hardtanh_bool": lambda F, x: F.hardtanh(x > 0),
    "relu6_bool": lambda F, x: F.relu6(x > 0),
    "threshold_str": lambda F, x: F.threshold(x, "a", 1.0),
    "threshold_none_value": lambda F, x: F.threshold(x, 0.5, None),
    "threshold_missing": lambda F, x: F.threshold(x, 0.5),
    "threshold__str": lambda F, x: F.threshold_(x, "a", 1.0),
    "threshold_vector": lambda F, x: F.threshold(x, x[0], 1.0),
    "threshold_bool": lambda F, x: F.threshold(x > 0, 0.5, 1.0),
    "rrelu_bounds": lambda F, x: F.rrelu(x, 0.5, 0.1),
    "rrelu_bounds_training": lambda F, x: F.rrelu(x, 0.5, 0.1, True),
    "rrelu_int_training": lambda F, x: F.rrelu(x.long(), training=True),
    "rrelu_int": lambda F, x: F.rrelu(x.long()),
    "celu_zero": lambda F, x: F.celu(x, 0.0),
    "elu_int": lambda F, x: F.elu(x.long()),
    "gelu_approximate": lambda F, x: F.gelu(x, approximate="erf"),
    "gelu_int": lambda F, x: F.gelu(x.long()),
    "softshrink_negative": lambda F, x: F.softshrink(x, -0.5),
    "softshrink_negative_f64": lambda F, x: F.softshrink(x.double(), -1),
    "softshrink_int": lambda F, x: F.softshrink(x.long(), 0.5),
    "hardshrink_int": lambda F, x: F.hardshrink(x.long()),
    "softplus_int": lambda F, x: F.softplus(x.long()),
    "logsigmoid_int": lambda F, x: F.logsigmoid(x.long()),
    "silu_bool": lambda F, x: F.silu(x > 0),
    "mish_int": lambda F, x: F.mish(x.long()),
    "hardswish_int": lambda F, x: F.hardswish(x.long()),
    "hardsigmoid_int": lambda F, x: F.hardsigmoid(x.long()),
    "leaky_relu_int": lambda F, x: F.leaky_relu(x.long()),
    "glu_scalar": lambda F, x: F.glu(x[0, 0]),
    "glu_odd": lambda F, x: F.glu(x, 0),
    "glu_odd_negative_dim": lambda F, x: F.glu(x[:, :3], -1),
    "glu_dim": lambda F, x: F.glu(x, 2),
    "glu_int": lambda F, x: F.glu(x.long()),
    "prelu_dtype": lambda F, x: F.prelu(x, x[0].double()),
    "prelu_count": lambda F, x: F.prelu(x, x[0, :3]),
    "prelu_ndim": lambda F, x: F.prelu(x, x[:, :1]),
    "prelu_scalar_input": lambda F, x: F.prelu(x[0, 0], x[0, :2]),
    "prelu_1d_input": lambda F, x: F.prelu(x[0], x[0, :4]),
    "prelu_int": lambda F, x: F.prelu(x.long(), x[0].long()),
    "gumbel_int": lambda F, x: F.gumbel_softmax(x.long()),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    assert_same_error(lambda lib, x: ERRORS[name](lib.nn.functional, x), X.astype(np.float32))


def test_softmin_without_dim_warns_and_picks_torchs_dim():
    for shape in ((4,), (2, 3), (2, 3, 4)):
        x = arr(*shape)
        for lib in (nt, torch):
            with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
                lib.nn.functional.softmin(lib.tensor(x))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert_same(lambda lib, t: lib.nn.functional.softmin(t), x)


# ------------------------------------------------------------------ rrelu in training
def _check_grads(fn, x, seed=5):
    """The gradient of sum(w * fn(x)) against finite differences with the same noise."""
    w = np.random.default_rng(0).standard_normal(fn(nt.tensor(x)).shape)

    def value(a):
        nt.manual_seed(seed)
        with nt.no_grad():
            return float((fn(nt.tensor(a)).numpy() * w).sum())

    nt.manual_seed(seed)
    t = nt.tensor(x, requires_grad=True)
    (g,) = nt.autograd.grad(fn(t), t, nt.tensor(w))
    np.testing.assert_allclose(g.numpy(), fd_grad(value, x), rtol=1e-6, atol=1e-8)
    return g


def test_rrelu_training_slopes_are_uniform_per_element():
    nt.manual_seed(0)
    lower, upper = 0.1, 0.4
    x = nt.full((N,), -2.0)
    y = nt.nn.functional.rrelu(x, lower, upper, training=True)
    assert y.shape == x.shape and y.dtype == x.dtype
    slope = (y / x).numpy().astype(np.float64)
    assert slope.min() >= lower and slope.max() < upper
    mean, var = (lower + upper) / 2, (upper - lower) ** 2 / 12
    assert abs(slope.mean() - mean) < Z * np.sqrt(var / N)
    assert abs(slope.var() - var) < Z * np.sqrt(var**2 * 0.8 / N)  # uniform: mu4 = 1.8 var^2
    pos = nt.full((5,), 3.0, dtype=nt.float64)
    np.testing.assert_array_equal(nt.nn.functional.rrelu(pos, training=True).numpy(), pos.numpy())


def test_rrelu_training_gradient_is_the_drawn_slope():
    x = _away_from_kinks(arr(4, 5))
    _check_grads(lambda t: nt.nn.functional.rrelu(t, 0.2, 0.6, training=True), x)
    # Unit cotangent: the gradient is the slope itself.
    nt.manual_seed(5)
    t = nt.tensor(x, requires_grad=True)
    out = nt.nn.functional.rrelu(t, 0.2, 0.6, training=True)
    (g1,) = nt.autograd.grad(out.sum(), t)
    np.testing.assert_allclose(g1.numpy(), np.where(x > 0, 1.0, out.detach().numpy() / x))


def test_rrelu_inplace_training():
    nt.manual_seed(3)
    x = nt.tensor(_away_from_kinks(arr(3, 4)))
    ref = x.clone()
    out = nt.nn.functional.rrelu_(x, 0.1, 0.3, True)
    assert out is x and x._version == 1
    slope = x.numpy() / ref.numpy()
    neg = ref.numpy() < 0
    assert ((slope[neg] >= 0.1) & (slope[neg] < 0.3)).all()
    np.testing.assert_array_equal(slope[~neg], 1.0)
    # Through a non-leaf, the gradient is the slope.
    leaf = nt.tensor(arr(3, 4), requires_grad=True)
    y = leaf * 1.0
    nt.nn.functional.rrelu(y, training=True, inplace=True)
    (g,) = nt.autograd.grad(y.sum(), leaf)
    np.testing.assert_allclose(g.numpy(), y.detach().numpy() / leaf.detach().numpy())


@pytest.fixture
def no_fallback():
    _set_vmap_fallback_enabled(False)
    yield
    _set_vmap_fallback_enabled(True)


def _distinct_rows(out):
    rows = [out[b].numpy() for b in range(out.shape[0])]
    assert all(not np.array_equal(rows[i], rows[j]) for i in range(len(rows)) for j in range(i))


def test_rrelu_under_vmap_randomness_modes(no_fallback):
    x = nt.full((3, 6), -1.0)

    def f(r):
        return nt.nn.functional.rrelu(r, training=True)

    with pytest.raises(RuntimeError, match="vmap: called random operation while in randomness"):
        nt.vmap(f)(x)
    same = nt.vmap(f, randomness="same")(x)
    np.testing.assert_array_equal(same[0].numpy(), same[1].numpy())
    _distinct_rows(nt.vmap(f, randomness="different")(x))
    # Unbatched input, 'different': a draw per batch element all the same.
    diff = nt.vmap(lambda r: f(x[0]) + r, randomness="different")(nt.zeros(3, 1))
    _distinct_rows(diff)
    # Evaluation mode draws nothing: fine under randomness='error'.
    ev = nt.vmap(lambda r: nt.nn.functional.rrelu(r, 0.1, 0.3))(x)
    np.testing.assert_allclose(ev.numpy(), -0.2 * np.ones((3, 6)), rtol=1e-6)


def test_rrelu_per_sample_gradients(no_fallback):
    x = nt.tensor(_away_from_kinks(arr(3, 4)))

    def loss(r):
        return (nt.nn.functional.rrelu(r, training=True) * r).sum()

    g = nt.vmap(nt.func.grad(loss), randomness="different")(x)
    assert g.shape == x.shape
    slopes = g.numpy() / (2 * x.numpy())  # d/dx (a x * x) = 2 a x
    neg = x.numpy() < 0
    assert ((slopes[neg] >= 1 / 8) & (slopes[neg] < 1 / 3)).all()
    np.testing.assert_allclose(slopes[~neg], 1.0)


# ------------------------------------------------------------------ gumbel_softmax
def test_gumbel_softmax_soft_and_hard_samples():
    nt.manual_seed(0)
    logits = nt.tensor(arr(4, 5))
    for dim in (-1, 0):
        y = nt.nn.functional.gumbel_softmax(logits, tau=0.5, dim=dim)
        assert y.shape == logits.shape and y.dtype == logits.dtype
        np.testing.assert_allclose(y.sum(dim).numpy(), 1.0, rtol=1e-12)
        h = nt.nn.functional.gumbel_softmax(logits, hard=True, dim=dim).numpy()
        assert set(np.unique(h)) == {0.0, 1.0}
        np.testing.assert_array_equal(h.sum(dim), 1.0)


def test_gumbel_max_frequencies_are_the_softmax():
    nt.manual_seed(1)
    p = np.array([0.5, 0.3, 0.15, 0.05])
    logits = nt.tensor(np.log(np.broadcast_to(p, (N // 4, 4))).copy(), dtype=nt.float32)
    h = nt.nn.functional.gumbel_softmax(logits, tau=1.0, hard=True).numpy()
    freq = h.mean(0)
    assert (np.abs(freq - p) < Z * np.sqrt(p * (1 - p) / h.shape[0])).all(), freq


def test_gumbel_softmax_gradients():
    x = arr(3, 4)
    for tau in (1.0, 0.3):
        _check_grads(lambda t, tau=tau: nt.nn.functional.gumbel_softmax(t, tau), x)
    # hard: the value is one-hot, the gradient the soft sample's (straight-through).
    w = nt.tensor(arr(3, 4, seed=1))
    grads = []
    for hard in (False, True):
        nt.manual_seed(7)
        t = nt.tensor(x, requires_grad=True)
        (g,) = nt.autograd.grad((nt.nn.functional.gumbel_softmax(t, hard=hard) * w).sum(), t)
        grads.append(g.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_gumbel_softmax_warns_on_eps_like_torch():
    for lib in (nt, torch):
        with pytest.warns(UserWarning, match="`eps` parameter is deprecated and has no effect."):
            lib.nn.functional.gumbel_softmax(lib.ones(2, 3), eps=1e-5)


def test_gumbel_softmax_under_vmap(no_fallback):
    logits = nt.tensor(arr(4))
    with pytest.raises(RuntimeError, match="vmap: called random operation"):
        nt.vmap(nt.nn.functional.gumbel_softmax)(logits.expand(3, 4))
    out = nt.vmap(
        lambda r: nt.nn.functional.gumbel_softmax(logits + r, hard=True), randomness="different"
    )(nt.zeros(64, 1))
    assert out.shape == (64, 4)
    np.testing.assert_array_equal(out.numpy().sum(-1), 1.0)
    assert len({int(i) for i in out.numpy().argmax(-1)}) > 1  # different draws per element
    same = nt.vmap(lambda r: nt.nn.functional.gumbel_softmax(r, tau=0.7), randomness="same")(
        logits.expand(3, 4)
    )
    np.testing.assert_array_equal(same[0].numpy(), same[2].numpy())
    assert_close(same.sum(-1), nt.ones(3, dtype=nt.float64), rtol=1e-12)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_implicit_softmax_dim_warns_at_the_caller(name):
    def prog(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = getattr(lib.nn.functional, name)(lib.tensor(arr(2, 3)))
        return out, [(str(w.message), w.category.__name__, w.filename) for w in caught]

    ours, theirs = run_both(prog)
    assert ours[1] == theirs[1] and len(ours[1]) == 1
    assert ours[1][0][2] == __file__
    assert_close(ours[0], theirs[0])


# ==================================================================
# Found by issue 14's sweep of silently wrong values and derivatives.


# ------------------------------------------------------------------ NaN conventions (fuzz)
NAN_IN = np.array([np.nan, -0.5, 0.7, 1.5])


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
    assert_same(grad_prog(lambda L, x: (f(L, x) * L.tensor([1.0, 2.0, 3.0, 4.0])).sum()), NAN_IN)
    assert_same(tangent_prog(f), NAN_IN)


# ==================================================================
# Found by issue 14's third fuzz round (fresh seeds, 68,000 programs).


@pytest.mark.filterwarnings("ignore")
def test_relu_keeps_a_negative_zero():
    # (x > 0.5) * b is -0.0 for a negative b; relu keeps it, so 2 / y is -inf
    def prog(L, x, b):
        y = ((x > 0.5) * b).relu()
        return y.signbit(), 2 / y, L.func.vmap(lambda r: r.relu().signbit())(y)

    assert_same(prog, np.array([[-0.62, 0.8]]), np.array([[-1.18, 2.0]]))


# ==================================================================
# Core behaviour found wrong by the nn.functional work (issue 10's follow-ups).


# ------------------------------------------------------------------ softmax on integers
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape, dim", [((2, 3), 1), ((2, 3), -1), ((2, 3), 0), ((), 0)])
def test_softmax_of_an_integer_tensor_raises(fn, shape, dim):
    ints = np.arange(int(np.prod(shape))).reshape(shape)
    assert_same_error(lambda lib, x: getattr(lib, fn)(x, dim), ints)
    assert_same_error(lambda lib, x: getattr(lib.nn.functional, fn)(x, dim), ints)


def _many_short_rows(shape, dtype, order):
    """Seeded rows with the values a row maximum must handle: NaN, infinities of both signs,
    zeros of both signs, and a maximum in the first and the last column."""
    x = np.random.default_rng(7).standard_normal(shape).astype(dtype) * 3
    flat = x.reshape(-1, shape[-1])
    flat[0, 1], flat[1, :] = np.nan, -np.inf
    flat[2, -1], flat[3, 0] = np.inf, np.inf
    flat[4, :2], flat[5, :] = (-0.0, 0.0), -0.0
    flat[6, 0], flat[7, -1] = 50.0, 50.0
    return np.asarray(x, order=order) if order == "F" else x


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape, order", [((256, 32, 32), "C"), ((600, 4), "C"), ((80, 13, 8), "F"), ((8, 8), "C")]
)
def test_softmax_of_many_short_rows(fn, dtype, shape, order):
    # (many short rows take a column-by-column maximum; a few rows NumPy's row maximum)
    from numtorch.ops.softmax import _row_maxima

    x = _many_short_rows(shape, dtype, order)
    np.testing.assert_array_equal(_row_maxima(np, x, x.ndim - 1), x.max(-1, keepdims=True))
    # exp's rounding differs by a few ulps; sums over up to 32 rows and a norm add one each;
    # log_softmax's x - max - log(sum) rounds at the magnitude of its terms
    rtol = 50 * np.finfo(dtype).eps
    atol = rtol * (1 + np.abs(x[np.isfinite(x)]).max()) if fn == "log_softmax" else 0.0
    assert_same(lambda lib, v: getattr(lib, fn)(v, -1), x, rtol=rtol, atol=atol)
    if fn == "softmax":  # the reduction benchmark's program, batched
        prog = lambda lib, v: lib.func.vmap(lambda r: r.softmax(-1).sum(0) / r.norm())(v)  # noqa: E731
        assert_same(prog, x, rtol=rtol)


def test_softmax_of_an_integer_tensor_with_a_float_dtype():
    ints = np.arange(6).reshape(2, 3)
    assert_same(lambda lib, x: lib.softmax(x, 0, dtype=lib.float64), ints)
    assert_same_error(lambda lib, x: lib.softmax(x, 0, dtype=lib.int64), arr(2, 3))


# ==================================================================
# Issue 35: float32 results agree with PyTorch's kernels, bit for bit where no transcendental
# function is involved, and otherwise to the rounding of exp, expm1, log1p, tanh and erf
# (NumPy's and PyTorch's vectorized ones differ by 1-3 ulps).


def _float32_points() -> np.ndarray:
    """Seeded values over several scales, every breakpoint below (+-0.5, +-1, +-2, +-3, 6)
    with its float32 neighbours, zeros of both signs, infinities and NaN."""
    rng = np.random.default_rng(35)
    spread = [
        rng.standard_normal(600) * 4,
        rng.uniform(-10, 10, 600),
        rng.standard_normal(200) * 40,
    ]
    kinks = np.array([0.0, 0.3, 0.5, 1.0, 2.0, 3.0, 6.0, 20.0, 1e-8, 1e-30], np.float32)
    kinks = np.concatenate([kinks, -kinks])
    near = [
        kinks,
        np.nextafter(kinks, np.float32(np.inf)),
        np.nextafter(kinks, np.float32(-np.inf)),
    ]
    special = np.array([np.inf, -np.inf, np.nan], np.float32)
    return np.concatenate([*spread, *near, special]).astype(np.float32)


F32 = _float32_points()
G32 = np.random.default_rng(36).standard_normal(F32.shape).astype(np.float32)

EXACT = {
    "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "hardswish": lambda F, x: F.hardswish(x),
    "hardtanh": lambda F, x: F.hardtanh(x),
    "hardtanh(-2, 3)": lambda F, x: F.hardtanh(x, -2.0, 3.0),
    "relu6": lambda F, x: F.relu6(x),
    "relu": lambda F, x: F.relu(x),
    "leaky_relu": lambda F, x: F.leaky_relu(x),
    "leaky_relu(0.2)": lambda F, x: F.leaky_relu(x, 0.2),
    "softshrink": lambda F, x: F.softshrink(x),
    "softshrink(0.3)": lambda F, x: F.softshrink(x, 0.3),
    "hardshrink": lambda F, x: F.hardshrink(x),
    "threshold": lambda F, x: F.threshold(x, 0.5, -1.0),
}


def _value_grad_tangent(f):
    def prog(L, x, g):
        F = L.nn.functional
        tangent = L.func.jvp(lambda x: f(F, x), (x,), (g,))[1]
        x.requires_grad_(True)
        y = f(F, x)
        y.backward(g)
        return y.detach(), x.grad, tangent

    return prog


@pytest.mark.parametrize("name", EXACT)
def test_piecewise_activations_match_torch_bit_for_bit_at_float32(name):
    # hardsigmoid's gradient is g times 1/6 rounded to float32 (g / 6 rounds otherwise);
    # hardswish's is 0 from -3 down and g from 3 up
    assert_same(_value_grad_tangent(EXACT[name]), F32, G32, rtol=0)


@pytest.mark.parametrize("name", ["sigmoid", "tanh"])
def test_sigmoid_and_tanh_gradients_are_pytorchs_formula_on_the_same_result(name):
    # The results differ by the rounding of exp and tanh, so PyTorch's backward kernel is
    # given numtorch's result: the gradient must then agree bit for bit (g * (1 - y) * y)
    x = nt.tensor(F32, requires_grad=True)
    y = getattr(nt, name)(x)
    y.backward(nt.tensor(G32))
    backward = getattr(torch.ops.aten, f"{name}_backward")
    ref = backward(torch.tensor(G32), torch.tensor(y.detach().numpy()))
    np.testing.assert_array_equal(x.grad.numpy(), ref.numpy())


def _ulps(got: np.ndarray, ref: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """|got - ref| in float32 ulps of ``scale`` (0 where both are equal or both NaN)."""
    diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    ulp = np.spacing(np.abs(scale).astype(np.float32)).astype(np.float64)
    same = (got == ref) | (np.isnan(got) & np.isnan(ref))
    return np.where(same, 0.0, diff / ulp)


# Where the result is not a difference of nearly equal terms, it is compared in ulps of
# itself; gelu, silu, mish and tanhshrink (whose derivatives cross 0, and gelu's
# 1 + erf(x / sqrt 2) for x < -3) in ulps of the size of their terms, |g| max(1, |x|).
TRANSCENDENTAL = {
    "elu": (lambda F, x: F.elu(x), True),
    "elu(0.7)": (lambda F, x: F.elu(x, 0.7), True),
    "selu": (lambda F, x: F.selu(x), True),
    "celu(1.3)": (lambda F, x: F.celu(x, 1.3), True),
    "softplus": (lambda F, x: F.softplus(x), True),
    "softplus(2, 10)": (lambda F, x: F.softplus(x, 2.0, 10.0), True),
    "logsigmoid": (lambda F, x: F.logsigmoid(x), True),
    "silu": (lambda F, x: F.silu(x), False),
    "mish": (lambda F, x: F.mish(x), False),
    "gelu": (lambda F, x: F.gelu(x), False),
    "gelu tanh": (lambda F, x: F.gelu(x, approximate="tanh"), False),
    "tanhshrink": (lambda F, x: F.tanhshrink(x), False),
}
ULPS = 8  # observed at most 4: the rounding of two or three transcendental calls


@pytest.mark.parametrize("name", TRANSCENDENTAL)
def test_transcendental_activations_agree_with_torch_to_a_few_ulps_at_float32(name):
    f, relative = TRANSCENDENTAL[name]
    keep = F32 != np.inf if name == "gelu" else slice(None)  # (see the test below)
    x, g = F32[keep], G32[keep]
    got = _value_grad_tangent(f)(nt, nt.tensor(x), nt.tensor(g))
    ref = _value_grad_tangent(f)(torch, torch.tensor(x), torch.tensor(g))
    terms = np.abs(g) * np.maximum(1.0, np.abs(x))
    for what, a, b, size in zip(("value", "gradient", "tangent"), got, ref, (x, terms, terms)):
        a, b = a.numpy(), b.numpy()
        scale = np.maximum(np.abs(a), np.abs(b)) if relative else np.maximum(size, 1.0)
        worst = _ulps(a, b, scale).max()
        assert worst <= ULPS, f"{name} {what}: {worst} ulps"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softsign_matches_torch_bit_for_bit(dtype):
    # PyTorch's softsign is x / (|x| + 1): its tangent is div's formula,
    # (t - t * sgn(x) * result) / (|x| + 1)
    x, g = F32.astype(dtype), G32.astype(dtype)
    assert_same(_value_grad_tangent(lambda F, x: F.softsign(x)), x, g, rtol=0, atol=0)


def _glu_points(dtype, shape, seed=7):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 4
    x.reshape(-1)[:8] = [0.0, -0.0, 30.0, -30.0, 1e-8, -100.0, 100.0, 0.5]
    return x.astype(dtype), rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_glu_gradient_is_pytorchs_formula_bit_for_bit(dtype):
    # glu_backward: sigmoid(b) * g for a, (1 - sigmoid(b)) * sigmoid(b) * a * g for b;
    # halves of 4 along the last dim take PyTorch's scalar loop, whose exp is libm's
    x, g = _glu_points(dtype, (3000, 8))
    f = lambda L, x, g: (L.nn.functional.glu(x) * g).sum()  # noqa: E731
    assert_same(grad_prog(f), x, g[:, :4], rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,dim", [((3000, 8), -1), ((3000, 8), 0), ((16, 1024), -1)])
def test_glu_tangent_is_pytorchs_formula(dtype, shape, dim):
    # da * sigmoid(b) + result * (db - sigmoid(b) * db); PyTorch's compiler fuses its
    # multiply-adds (differently in its vectorized loop, whose exp rounds otherwise too),
    # so the tangent agrees to the rounding of its terms, not bit for bit
    x, t = _glu_points(dtype, shape)
    f = lambda L, x: L.nn.functional.glu(x, dim)  # noqa: E731
    got = nt.func.jvp(lambda a: f(nt, a), (nt.tensor(x),), (nt.tensor(t),))
    ref = torch.func.jvp(lambda a: f(torch, a), (torch.tensor(x),), (torch.tensor(t),))
    r = ref[0].numpy()
    da, db = np.split(t, 2, axis=dim)
    terms = np.abs(da * (1 / (1 + np.exp(-np.split(x, 2, axis=dim)[1])))) + np.abs(r * db)
    ulps = np.abs(got[1].numpy().astype(np.float64) - ref[1].numpy()) / np.spacing(terms)
    assert ulps.max() <= 4, ulps.max()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_glu_tangent_of_a_reduced_float_is_refused(dtype):
    def prog(L, x):
        x = x.to(getattr(L, dtype))
        value = L.nn.functional.glu(x)
        return value, L.func.jvp(L.nn.functional.glu, (x,), (x,))

    assert_same_error(prog, arr(2, 4))
    assert_same(lambda L, x: L.nn.functional.glu(x.to(getattr(L, dtype))).float(), arr(40, 8))


def test_gelu_of_infinity_is_infinity():
    # gelu(x) is x Phi(x) -> x: PyTorch 2.13's float32 kernel gives NaN at +inf (its
    # vectorized erf is NaN there, though torch.erf(inf) is 1); numtorch keeps inf.
    x = np.array([np.inf, -np.inf, 1e30], np.float32)
    for approximate in ("none", "tanh"):
        y = nt.nn.functional.gelu(nt.tensor(x), approximate=approximate).numpy()
        np.testing.assert_array_equal(y, np.array([np.inf, np.nan, 1e30], np.float32))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relu_backward_on_a_large_array_gives_torchs_bits(dtype):
    """A large relu gradient takes where's branch-free select: NaN, inf and signed zeros in
    the incoming gradient and in the input land as PyTorch's threshold_backward puts them."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(50_000).astype(dtype)
    g = rng.standard_normal(50_000).astype(dtype)
    x[:6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, 1.0]
    g[:6] = [1.0, 2.0, np.nan, -0.0, np.inf, -np.nan]
    g[6:10] = [np.nan, -0.0, np.inf, -np.inf]

    def bits(L):
        t = L.tensor(x, requires_grad=True)
        L.nn.functional.relu(t).backward(L.tensor(g))
        return t.grad.numpy().tobytes()

    assert bits(nt) == bits(torch)
