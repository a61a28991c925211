"""Random ops: shapes and dtypes as torch, seeding, distributions, gradients, errors.

Random values cannot be compared with torch's, so the draws are checked by their
statistics (means and variances within a few standard errors of large samples) and
gradients by finite differences with the noise fixed by the seed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from twolibs import assert_same, assert_same_error, assert_same_outcome, error_of, fd_grad, run_both

import numtorch as nt

N = 200_000
Z = 5.0  # standard errors allowed


def _np(t):
    return t.detach().numpy().astype(np.complex128 if t.is_complex() else np.float64)


def _close_mean(x, mean, var):
    """The sample mean of x is within Z standard errors of mean."""
    x = np.asarray(x, np.float64)
    assert abs(x.mean() - mean) < Z * np.sqrt(var / x.size), (x.mean(), mean)


def _close_var(x, var, mu4):
    """The sample variance of x is within Z standard errors of var (mu4: 4th central moment)."""
    x = np.asarray(x, np.float64)
    assert abs(x.var() - var) < Z * np.sqrt((mu4 - var**2) / x.size), (x.var(), var)


# ------------------------------------------------------------------ shapes, dtypes, devices
CALLS = {
    "rand": lambda T: T.rand(2, 3),
    "rand_tuple": lambda T: T.rand((2, 3)),
    "rand_scalar": lambda T: T.rand(()),
    "rand_f64": lambda T: T.rand(4, dtype=T.float64),
    "rand_f16": lambda T: T.rand(4, dtype=T.float16),
    "rand_c64": lambda T: T.rand(4, dtype=T.complex64),
    "rand_rg": lambda T: T.rand(3, requires_grad=True),
    "randn": lambda T: T.randn(4, 1),
    "randn_c128": lambda T: T.randn(2, dtype=T.complex128),
    "randint": lambda T: T.randint(0, 5, (3,)),
    "randint_high": lambda T: T.randint(3, (2, 2)),
    "randint_size_kw": lambda T: T.randint(3, size=(2,)),
    "randint_f32": lambda T: T.randint(0, 3, (2,), dtype=T.float32),
    "randint_u8": lambda T: T.randint(0, 256, (2,), dtype=T.uint8),
    "randint_bool": lambda T: T.randint(0, 2, (2,), dtype=T.bool),
    "randperm": lambda T: T.randperm(5),
    "randperm_0": lambda T: T.randperm(0),
    "randperm_f32": lambda T: T.randperm(4, dtype=T.float32),
    "normal_floats": lambda T: T.normal(2.0, 3.0, (2, 2)),
    "normal_floats_f64": lambda T: T.normal(0.0, 1.0, size=(2,), dtype=T.float64),
    "normal_tensor_float": lambda T: T.normal(T.zeros(3), 2.0),
    "normal_float_tensor": lambda T: T.normal(1.0, T.ones(2, 1)),
    "normal_broadcast": lambda T: T.normal(T.zeros(3), T.ones(2, 1)),
    "normal_mean_dtype": lambda T: T.normal(T.zeros(3, dtype=T.float64), T.ones(3)),
    "normal_mean_f32": lambda T: T.normal(T.zeros(3), T.ones(3, dtype=T.float64)),
    "normal_mean_kw": lambda T: T.normal(mean=T.zeros(2)),
    "rand_like": lambda T: T.rand_like(T.ones(2, 3)),
    "rand_like_dtype": lambda T: T.rand_like(T.ones(2), dtype=T.float64),
    "randn_like": lambda T: T.randn_like(T.ones(2, dtype=T.float64)),
    "randint_like": lambda T: T.randint_like(T.ones(2), 5),
    "randint_like_low": lambda T: T.randint_like(T.ones(2, dtype=T.int32), 3, 5),
    "bernoulli": lambda T: T.bernoulli(T.full((3,), 0.5)),
    "bernoulli_f64": lambda T: T.bernoulli(T.full((3,), 0.5, dtype=T.float64)),
    "bernoulli_p": lambda T: T.bernoulli(T.ones(2, 2), 0.3),
    "bernoulli_int_p": lambda T: T.bernoulli(T.ones(2, dtype=T.int64), 0.5),
    "method_bernoulli": lambda T: T.full((2,), 0.5).bernoulli(),
    "uniform_": lambda T: T.empty(2, 3).uniform_(-1, 1),
    "normal_": lambda T: T.empty(3, dtype=T.float64).normal_(2, 3),
    "bernoulli_": lambda T: T.empty(3).bernoulli_(0.5),
    "bernoulli_tensor": lambda T: T.empty(2, 3).bernoulli_(T.full((3,), 0.5)),
    "bernoulli_int": lambda T: T.empty(3, dtype=T.int64).bernoulli_(0.5),
    "exponential_": lambda T: T.empty(3).exponential_(2.0),
    "random_": lambda T: T.empty(3).random_(5),
    "random_range": lambda T: T.empty(3, dtype=T.int32).random_(-3, 3),
    "random_kw": lambda T: T.empty(3).random_(**{"from": 2, "to": 5}),
    "random_to_kw": lambda T: T.empty(3, dtype=T.int16).random_(to=5),
    "random_from_none": lambda T: T.empty(3, dtype=T.int32).random_(-5, None),
    "random_i64_top": lambda T: T.empty(3, dtype=T.int64).random_(),
    "random_u8": lambda T: T.empty(3, dtype=T.uint8).random_(),
    "random_f16": lambda T: T.empty(3, dtype=T.float16).random_(),
    "cauchy_": lambda T: T.empty(3).cauchy_(),
    "cauchy_f64": lambda T: T.empty(2, 2, dtype=T.float64).cauchy_(1.0, 0.5),
    "cauchy_f16": lambda T: T.empty(3, dtype=T.float16).cauchy_(median=-1, sigma=2),
    "geometric_": lambda T: T.empty(3).geometric_(0.3),
    "geometric_int": lambda T: T.empty(3, dtype=T.int64).geometric_(0.5),
    "geometric_u8": lambda T: T.empty(3, dtype=T.uint8).geometric_(p=0.9),
    "geometric_tensor_p": lambda T: T.empty(3).geometric_(T.tensor(0.5)),
    "log_normal_": lambda T: T.empty(3).log_normal_(),
    "log_normal_f64": lambda T: T.empty(3, dtype=T.float64).log_normal_(0.0, 0.25),
    "log_normal_f16": lambda T: T.empty(3, dtype=T.float16).log_normal_(std=0.5),
    "exponential_f64": lambda T: T.empty(0, dtype=T.float64).exponential_(),
    "dropout": lambda T: T.nn.functional.dropout(T.ones(2, 3), 0.5),
    "dropout_eval": lambda T: T.nn.functional.dropout(T.ones(2), 0.5, training=False),
    "torch_dropout": lambda T: T.dropout(T.ones(4), 0.2, True),
    "zeros_like": lambda T: T.zeros_like(T.ones(2, 3)),
    "zeros_like_dtype": lambda T: T.zeros_like(T.ones(2), dtype=T.int64),
    "ones_like_int": lambda T: T.ones_like(T.ones(2, dtype=T.int32)),
    "empty_like": lambda T: T.empty_like(T.ones(3, dtype=T.float64)),
    "full_like_trunc": lambda T: T.full_like(T.ones(2, dtype=T.int64), 2.7),
    "full_like_rg": lambda T: T.full_like(T.ones(2), 2.5, requires_grad=True),
    "full_like_device": lambda T: T.full_like(T.ones(2), 1.0, device="cpu"),
}


@pytest.mark.parametrize("name", CALLS)
def test_shape_dtype_device_as_torch(name):
    a, b = run_both(CALLS[name])
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype) == str(b.dtype)
    assert str(a.device) == str(b.device)
    assert a.requires_grad == b.requires_grad


def test_deterministic_like_values_as_torch():
    for name in ["zeros_like", "zeros_like_dtype", "ones_like_int", "full_like_trunc"]:
        assert_same(CALLS[name], rtol=0, atol=0)


def test_dropout_eval_and_p0_return_the_input():
    x = nt.ones(3)
    assert nt.nn.functional.dropout(x, 0.5, training=False) is x
    assert nt.nn.functional.dropout(x, 0.0) is x
    assert nt.dropout(x, 0.7, False) is x
    y = nt.nn.functional.dropout(nt.ones(3), 1.0)
    np.testing.assert_array_equal(y.numpy(), np.zeros(3))


# ------------------------------------------------------------------ seeds and generators
RANDOM = [n for n in CALLS if "like" not in n or n.startswith(("rand", "randn"))]
RANDOM = [n for n in RANDOM if not n.startswith(("zeros", "ones", "empty", "full", "dropout_eval"))]


@pytest.mark.parametrize("name", RANDOM)
def test_same_seed_same_values(name):
    nt.manual_seed(1234)
    a = _np(CALLS[name](nt))
    nt.manual_seed(1234)
    b = _np(CALLS[name](nt))
    np.testing.assert_array_equal(a, b)


def test_different_seeds_and_successive_draws_differ():
    nt.manual_seed(1)
    a, b = nt.rand(100), nt.rand(100)
    nt.manual_seed(2)
    c = nt.rand(100)
    assert not np.array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())


def test_generator_objects():
    g = nt.Generator()
    assert g.manual_seed(7) is g and g.initial_seed() == 7 and str(g.device) == "cpu"
    nt.manual_seed(0)
    before = nt.get_rng_state()
    a = nt.randn(5, generator=g)
    # Drawing from g leaves the default generator alone.
    np.testing.assert_array_equal(before.numpy(), nt.get_rng_state().numpy())
    b = nt.randn(5, generator=nt.Generator().manual_seed(7))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    for call in [
        lambda g: nt.rand(3, generator=g),
        lambda g: nt.randint(0, 9, (3,), generator=g),
        lambda g: nt.randperm(6, generator=g),
        lambda g: nt.normal(nt.zeros(3), 1.0, generator=g),
        lambda g: nt.bernoulli(nt.full((8,), 0.5), generator=g),
        lambda g: nt.rand_like(nt.ones(3), generator=g),
        lambda g: nt.empty(3).uniform_(generator=g),
        lambda g: nt.empty(3).normal_(generator=g),
    ]:
        x, y = call(nt.Generator().manual_seed(3)), call(nt.Generator().manual_seed(3))
        np.testing.assert_array_equal(x.numpy(), y.numpy())


def test_rng_state_round_trip_and_initial_seed():
    g = nt.manual_seed(42)
    assert isinstance(g, nt.Generator) and nt.initial_seed() == 42
    state = nt.get_rng_state()
    assert state.dtype == nt.uint8
    a = nt.rand(4)
    nt.set_rng_state(state)
    np.testing.assert_array_equal(a.numpy(), nt.rand(4).numpy())
    s = nt.seed()
    assert nt.initial_seed() == s


def test_default_seed_is_torch_initial_seed():
    assert nt.Generator().initial_seed() == torch.Generator().initial_seed()


# ------------------------------------------------------------------ distributions
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_rand_uniform(dtype):
    nt.manual_seed(0)
    u = nt.rand(N, dtype=getattr(nt, dtype)).numpy()
    assert u.min() >= 0 and u.max() < 1
    _close_mean(u, 0.5, 1 / 12)
    _close_var(u, 1 / 12, 1 / 80)


def test_rand_complex_parts_uniform():
    nt.manual_seed(0)
    z = nt.rand(N, dtype=nt.complex64).numpy()
    for part in (z.real, z.imag):
        assert part.min() >= 0 and part.max() < 1
        _close_mean(part, 0.5, 1 / 12)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_randn_standard_normal(dtype):
    nt.manual_seed(0)
    z = nt.randn(N, dtype=getattr(nt, dtype)).numpy()
    _close_mean(z, 0.0, 1.0)
    _close_var(z, 1.0, 3.0)


def test_randn_complex_unit_variance():
    nt.manual_seed(0)
    z = nt.randn(N, dtype=nt.complex128).numpy()
    _close_mean(z.real, 0.0, 0.5)
    _close_mean(z.imag, 0.0, 0.5)
    _close_mean(np.abs(z) ** 2, 1.0, 1.0)  # |z|^2 ~ Exp(1): variance 1


@pytest.mark.parametrize(
    "low,high,dtype", [(0, 5, "int64"), (-3, 4, "int32"), (250, 256, "uint8"), (0, 10, "float32")]
)
def test_randint_bounds_and_frequencies(low, high, dtype):
    nt.manual_seed(0)
    x = nt.randint(low, high, (N,), dtype=getattr(nt, dtype)).numpy()
    assert str(x.dtype) == dtype
    values, counts = np.unique(x, return_counts=True)
    np.testing.assert_array_equal(values, np.arange(low, high))
    p = 1 / (high - low)
    assert np.all(np.abs(counts / N - p) < Z * np.sqrt(p * (1 - p) / N))


def test_randperm_is_a_permutation_with_uniform_positions():
    nt.manual_seed(0)
    for n in (0, 1, 7, 100):
        np.testing.assert_array_equal(np.sort(nt.randperm(n).numpy()), np.arange(n))
    firsts = np.array([nt.randperm(4)[0].item() for _ in range(4000)])
    counts = np.bincount(firsts, minlength=4)
    assert np.all(np.abs(counts / 4000 - 0.25) < Z * np.sqrt(0.25 * 0.75 / 4000))


def test_normal_moments_every_overload():
    nt.manual_seed(0)
    draws = {
        "float_float": (nt.normal(3.0, 2.0, (N,)), 3.0, 2.0),
        "tensor_float": (nt.normal(nt.full((N,), -1.0), 0.5), -1.0, 0.5),
        "float_tensor": (nt.normal(2.0, nt.full((N,), 3.0)), 2.0, 3.0),
        "tensor_tensor": (nt.normal(nt.full((N, 1), 1.0), nt.full((2,), 0.25)), 1.0, 0.25),
        "normal_": (nt.empty(N, dtype=nt.float64).normal_(4.0, 1.5), 4.0, 1.5),
    }
    for x, mean, std in draws.values():
        x = x.numpy().ravel()
        _close_mean(x, mean, std**2)
        _close_var(x, std**2, 3 * std**4)
    per_element = nt.normal(nt.tensor([0.0, 10.0]).expand(N, 2), nt.tensor([1.0, 2.0])).numpy()
    _close_mean(per_element[:, 0], 0.0, 1.0)
    _close_mean(per_element[:, 1], 10.0, 4.0)
    _close_var(per_element[:, 1], 4.0, 48.0)


def test_bernoulli_frequencies():
    nt.manual_seed(0)
    p = nt.tensor([0.0, 0.1, 0.5, 0.9, 1.0])
    x = nt.bernoulli(p.expand(N, 5)).numpy()
    assert set(np.unique(x)) <= {0.0, 1.0}
    assert x[:, 0].sum() == 0 and x[:, 4].sum() == N
    for k, q in enumerate([0.0, 0.1, 0.5, 0.9, 1.0]):
        _close_mean(x[:, k], q, max(q * (1 - q), 1e-12))
    _close_mean(nt.bernoulli(nt.zeros(N), 0.3).numpy(), 0.3, 0.21)
    _close_mean(nt.empty(N).bernoulli_(0.7).numpy(), 0.7, 0.21)
    y = nt.empty(N // 4, 4).bernoulli_(nt.tensor([0.2, 0.4, 0.6, 0.8])).numpy()
    for k, q in enumerate([0.2, 0.4, 0.6, 0.8]):
        _close_mean(y[:, k], q, q * (1 - q))


def test_uniform_exponential_and_random_fill():
    nt.manual_seed(0)
    u = nt.empty(N).uniform_(-2.0, 6.0).numpy()
    assert u.min() >= -2 and u.max() < 6
    _close_mean(u, 2.0, 64 / 12)
    e = nt.empty(N, dtype=nt.float64).exponential_(4.0).numpy()
    assert e.min() >= 0
    _close_mean(e, 0.25, 1 / 16)
    _close_var(e, 1 / 16, 9 / 4**4)
    r = nt.empty(N, dtype=nt.int64).random_(-2, 3).numpy()
    np.testing.assert_array_equal(np.unique(r), np.arange(-2, 3))
    r = nt.empty(N).random_(4).numpy()
    np.testing.assert_array_equal(np.unique(r), np.arange(4))
    big = nt.empty(1000, dtype=nt.float32).random_().numpy()
    assert big.min() >= 0 and big.max() <= 2**24 and big.max() > 2**20
    assert set(np.unique(nt.empty(100, dtype=nt.bool).random_().numpy())) == {False, True}


def test_dropout_statistics_and_inplace():
    nt.manual_seed(0)
    x = nt.full((N,), 2.0)
    y = nt.nn.functional.dropout(x, 0.25).numpy()
    np.testing.assert_allclose(np.unique(y), [0.0, 2.0 / 0.75], rtol=1e-7)
    _close_mean(y == 0, 0.25, 0.25 * 0.75)
    _close_mean(y, 2.0, (2.0 / 0.75) ** 2 * 0.25 * 0.75)
    z = nt.ones(1000)
    out = nt.nn.functional.dropout(z, 0.5, inplace=True)
    assert out is z and z._version == 1 and set(np.unique(z.numpy())) == {0.0, 2.0}


def test_cauchy_quantiles():
    # Cauchy has no mean: compare the frequencies below the quartiles and the median.
    nt.manual_seed(0)
    for dtype in (nt.float32, nt.float64):
        c = nt.empty(N, dtype=dtype).cauchy_(2.0, 0.5).numpy().astype(np.float64)
        assert np.isfinite(c).all()
        for q, x in [
            (0.25, 1.5),
            (0.5, 2.0),
            (0.75, 2.5),
            (0.99, 2.0 + 0.5 * np.tan(0.49 * np.pi)),
        ]:
            _close_mean(c < x, q, q * (1 - q))
    h = nt.empty(N, dtype=nt.float16).cauchy_().numpy()
    _close_mean(h < 0, 0.5, 0.25)


def test_cauchy_infinite_sigma_and_nan_median_as_torch():
    for lib in (nt, torch):
        x = lib.empty(1000).cauchy_(0.0, float("inf")).numpy()
        assert np.isinf(x).all() and (x > 0).any() and (x < 0).any()
        assert np.isnan(lib.empty(10).cauchy_(float("nan"), 1.0).numpy()).all()


@pytest.mark.parametrize("p", [1e-6, 0.05, 0.5, 0.999])
def test_geometric_moments(p):
    nt.manual_seed(0)
    g = nt.empty(N, dtype=nt.float64).geometric_(p).numpy()
    assert g.min() >= 1 and np.array_equal(g, np.round(g))
    var = (1 - p) / p**2
    _close_mean(g, 1 / p, var)
    _close_mean(g == 1, p, p * (1 - p))
    k = nt.empty(N, dtype=nt.int64).geometric_(p).numpy()
    assert k.dtype == np.int64 and k.min() >= 1
    _close_mean(k, 1 / p, var)


def test_geometric_tiny_p_is_huge_like_torch():
    for lib in (nt, torch):
        x = lib.empty(100).geometric_(1e-30).numpy()
        assert np.isfinite(x).all() and np.median(x) > 1e29


@pytest.mark.parametrize("mean,std", [(1.0, 2.0), (0.0, 0.25), (-3.0, 1.0)])
def test_log_normal_moments(mean, std):
    nt.manual_seed(0)
    x = nt.empty(N, dtype=nt.float64).log_normal_(mean, std).numpy()
    assert x.min() > 0
    z = np.log(x)  # normal: mean and variance of the log
    _close_mean(z, mean, std**2)
    _close_var(z, std**2, 3 * std**4)
    if std <= 1:
        m, v = np.exp(mean + std**2 / 2), (np.exp(std**2) - 1) * np.exp(2 * mean + std**2)
        _close_mean(x, m, v)
    f = nt.empty(N).log_normal_(mean, std).numpy()
    assert f.dtype == np.float32 and f.min() >= 0
    _close_mean(np.log(f[f > 0]), mean, std**2)


def test_random_default_ranges_per_dtype():
    nt.manual_seed(0)
    tops = {"int8": 127, "uint8": 255, "int16": 2**15 - 1, "float16": 2**11, "float64": 2**53}
    for name, top in tops.items():
        x = nt.empty(N, dtype=getattr(nt, name)).random_().numpy().astype(np.float64)
        assert x.min() >= 0 and x.max() <= top, name
        _close_mean(x, top / 2, (top + 1) ** 2 / 12)
    for name in ("int32", "int64"):
        x = nt.empty(N, dtype=getattr(nt, name)).random_().numpy()
        top = np.iinfo(name).max
        assert x.min() >= 0 and x.max() > top // 2
        _close_mean(x / top, 0.5, 1 / 12)
    r = nt.empty(N, dtype=nt.int32).random_(-5, None).numpy()
    assert r.min() >= -5 and r.max() > 2**30
    r = nt.empty(N).random_(to=3).numpy()
    np.testing.assert_array_equal(np.unique(r), [0, 1, 2])
    r = nt.empty(N, dtype=nt.int8).random_(**{"from": -128, "to": 128}).numpy()
    assert r.min() == -128 and r.max() == 127
    r = nt.empty(N, dtype=nt.bool).random_(0, 2).numpy()
    _close_mean(r, 0.5, 0.25)


def test_random_float_precision_warning_like_torch():
    for lib in (nt, torch):
        with pytest.warns(UserWarning, match=r"to - 1 is out of bounds \[-\(2\^24\), 2\^24\]"):
            x = lib.empty(100).random_(2**30)
        assert x.numpy().max() > 2**24


FILLS = {
    "cauchy_": lambda t, g: t.cauchy_(0.5, 2.0, generator=g),
    "exponential_": lambda t, g: t.exponential_(3.0, generator=g),
    "geometric_": lambda t, g: t.geometric_(0.25, generator=g),
    "log_normal_": lambda t, g: t.log_normal_(0.0, 1.0, generator=g),
    "random_": lambda t, g: t.random_(-4, 9, generator=g),
    "random_to": lambda t, g: t.random_(9, generator=g),
    "random_default": lambda t, g: t.random_(generator=g),
}


@pytest.mark.parametrize("name", FILLS)
def test_fill_generator_reproducible_and_inplace(name):
    t = nt.zeros(50, dtype=nt.float64)
    out = FILLS[name](t, nt.Generator().manual_seed(3))
    assert out is t and t._version == 1
    nt.manual_seed(0)
    before = nt.get_rng_state()
    u = FILLS[name](nt.zeros(50, dtype=nt.float64), nt.Generator().manual_seed(3))
    np.testing.assert_array_equal(before.numpy(), nt.get_rng_state().numpy())
    np.testing.assert_array_equal(t.numpy(), u.numpy())
    v = FILLS[name](nt.zeros(50, dtype=nt.float64), nt.Generator().manual_seed(4))
    assert not np.array_equal(t.numpy(), v.numpy())


@pytest.mark.parametrize("name", FILLS)
def test_fill_zero_gradient_like_torch(name):
    for lib in (nt, torch):
        x = lib.ones(4, dtype=lib.float64, requires_grad=True)
        y = x * 2
        FILLS[name](y, None)
        assert y.requires_grad
        (g,) = lib.autograd.grad((y * 3).sum(), x)
        np.testing.assert_array_equal(g.numpy(), np.zeros(4))


@pytest.mark.parametrize("name", FILLS)
def test_fill_vmap_randomness(name):
    def f(t):
        return FILLS[name](t.clone(), None)

    x = nt.zeros(3, 40, dtype=nt.float64)
    with pytest.raises(RuntimeError, match="randomness"):
        nt.func.vmap(f)(x)
    y = nt.func.vmap(f, randomness="different")(x).numpy()
    assert not np.array_equal(y[0], y[1])
    z = nt.func.vmap(f, randomness="same")(x).numpy()
    np.testing.assert_array_equal(z[0], z[1])


# ------------------------------------------------------------------ gradients
def _check_grads(fn, arrays, seed=5):
    """Gradients of sum(w * fn(*tensors)) against finite differences with the same noise."""
    rng = np.random.default_rng(0)
    nt.manual_seed(seed)
    w = None

    def value(*arrs):
        nonlocal w
        nt.manual_seed(seed)
        with nt.no_grad():
            out = fn(*(nt.tensor(a) for a in arrs)).numpy()
        if w is None:
            w = rng.standard_normal(out.shape)
        return float((out * w).sum())

    value(*arrays)
    nt.manual_seed(seed)
    ts = [nt.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*ts)
    grads = nt.autograd.grad(out, ts, nt.tensor(w))
    for i, (a, g) in enumerate(zip(arrays, grads)):

        def f(x, i=i):
            args = list(arrays)
            args[i] = x
            return value(*args)

        np.testing.assert_allclose(g.numpy(), fd_grad(f, a), rtol=1e-6, atol=1e-8)


def test_normal_gradients_are_zero_like_torch():
    rng = np.random.default_rng(1)
    mean, std = rng.standard_normal((2, 3)), rng.uniform(0.5, 2.0, (3,))
    for lib in (nt, torch):
        m = lib.tensor(mean, requires_grad=True)
        s = lib.tensor(std, requires_grad=True)
        out = lib.normal(m, s)
        assert out.requires_grad
        gm, gs = lib.autograd.grad((out * 3).sum(), (m, s))
        np.testing.assert_array_equal(gm.numpy(), np.zeros((2, 3)))
        np.testing.assert_array_equal(gs.numpy(), np.zeros(3))


def test_dropout_gradient_is_the_scaled_mask():
    x = np.random.default_rng(2).standard_normal((4, 5))
    _check_grads(lambda t: nt.nn.functional.dropout(t, 0.3), [x])
    _check_grads(lambda t: nt.dropout(t * 1.0, 0.6, True), [x])
    nt.manual_seed(9)
    t = nt.tensor(x, requires_grad=True)
    y = nt.nn.functional.dropout(t, 0.4)
    (g,) = nt.autograd.grad(y.sum(), t)
    mask = y.detach().numpy() != 0
    np.testing.assert_allclose(g.numpy(), mask / 0.6)


def test_random_fill_cuts_gradient_history():
    x = nt.ones(3, requires_grad=True)
    y = x * 2
    y.uniform_()
    assert y.requires_grad
    (g,) = nt.autograd.grad(y.sum(), x)
    np.testing.assert_array_equal(g.numpy(), np.zeros(3))


# ------------------------------------------------------------------ errors
# Same exception type and text as torch.
SAME_TEXT = {
    "rand_int": lambda T: T.rand(2, dtype=T.int64),
    "randn_int": lambda T: T.randn(2, dtype=T.int32),
    "rand_negative": lambda T: T.rand(-1),
    "rand_float_size": lambda T: T.rand(2.5),
    "rand_float_in_tuple": lambda T: T.rand((2, 2.5)),
    "rand_str": lambda T: T.rand("a"),
    "randint_from_to": lambda T: T.randint(5, 3, (2,)),
    "randint_empty_range": lambda T: T.randint(0, 0, (2,)),
    "randint_u8_to": lambda T: T.randint(0, 300, (2,), dtype=T.uint8),
    "randint_u8_from": lambda T: T.randint(-1, 3, (3,), dtype=T.uint8),
    "randint_no_size": lambda T: T.randint(3, 5),
    "randint_float_high": lambda T: T.randint(3.5, (2,)),
    "randint_overflow": lambda T: T.randint(0, 2**64, (3,)),
    "randint_rg": lambda T: T.randint(0, 3, (2,), requires_grad=True),
    "randperm_negative": lambda T: T.randperm(-1),
    "randperm_float": lambda T: T.randperm(3.0),
    "randperm_bool": lambda T: T.randperm(3, dtype=T.bool),
    "randperm_u8": lambda T: T.randperm(400, dtype=T.uint8),
    "normal_neg_std": lambda T: T.normal(T.zeros(3), -1.0),
    "normal_neg_std_tensor": lambda T: T.normal(0.0, T.tensor([1.0, -1.0])),
    "normal_neg_std_both": lambda T: T.normal(T.zeros(2), T.tensor([1.0, -1.0])),
    "normal_neg_std_size": lambda T: T.normal(0.0, -1.0, (2,)),
    "normal_int_mean": lambda T: T.normal(T.zeros(3, dtype=T.int64), 1.0),
    "normal_int_std": lambda T: T.normal(0.0, T.ones(3, dtype=T.int64)),
    "normal_shapes": lambda T: T.normal(T.zeros(3), T.ones(2)),
    "rand_like_int": lambda T: T.rand_like(T.ones(2, dtype=T.int64)),
    "randn_like_int": lambda T: T.randn_like(T.ones(2, dtype=T.int64)),
    "randint_like_empty": lambda T: T.randint_like(T.ones(2), 3, 2),
    "randint_like_zero": lambda T: T.randint_like(T.ones(2), 0),
    "bernoulli_p_range": lambda T: T.bernoulli(T.tensor([0.5, 1.5])),
    "bernoulli_float_p_range": lambda T: T.bernoulli(T.ones(2), 1.5),
    "bernoulli_int": lambda T: T.bernoulli(T.tensor([1, 0])),
    "bernoulli_inplace_p": lambda T: T.ones(2).bernoulli_(1.2),
    "bernoulli_inplace_tensor_p": lambda T: T.ones(2).bernoulli_(T.tensor([0.5, 1.2])),
    "uniform_range": lambda T: T.ones(2).uniform_(3, 1),
    "uniform_float_range": lambda T: T.ones(2).uniform_(3.5, 1.25),
    "uniform_int": lambda T: T.ones(2, dtype=T.int64).uniform_(),
    "normal_inplace_std": lambda T: T.ones(2).normal_(0, -1),
    "normal_inplace_int": lambda T: T.ones(2, dtype=T.int64).normal_(),
    "exponential_neg": lambda T: T.ones(2).exponential_(-1),
    "exponential_zero": lambda T: T.ones(2).exponential_(0),
    "exponential_int": lambda T: T.ones(2, dtype=T.int64).exponential_(),
    "random_range": lambda T: T.ones(2).random_(3, 1),
    "random_equal": lambda T: T.ones(2).random_(3, 3),
    "random_to_zero": lambda T: T.ones(2).random_(0),
    "random_to_negative": lambda T: T.ones(2).random_(-1),
    "random_u8_to": lambda T: T.ones(2, dtype=T.uint8).random_(300),
    "random_u8_from": lambda T: T.ones(2, dtype=T.uint8).random_(-1, 3),
    "random_bool_to": lambda T: T.ones(2, dtype=T.bool).random_(5),
    "random_bool_from": lambda T: T.ones(2, dtype=T.bool).random_(-1, 1),
    "random_f16_to": lambda T: T.ones(2, dtype=T.float16).random_(70000),
    "random_f16_from": lambda T: T.ones(2, dtype=T.float16).random_(-70000, 1),
    "random_complex": lambda T: T.ones(2, dtype=T.complex64).random_(),
    "random_complex_to": lambda T: T.ones(2, dtype=T.complex64).random_(5),
    "random_three": lambda T: T.ones(2).random_(1, 2, 3),
    "random_overflow": lambda T: T.ones(2).random_(2**70),
    "random_float": lambda T: T.ones(2).random_(2.5),
    "random_bool_arg": lambda T: T.ones(2).random_(True),
    "random_from_only": lambda T: T.ones(2).random_(**{"from": 2}),
    "random_to_float_kw": lambda T: T.ones(2).random_(to=3.5),
    "random_bad_generator": lambda T: T.ones(2).random_(generator=3),
    "random_leaf": lambda T: T.ones(2, requires_grad=True).random_(),
    "cauchy_sigma_zero": lambda T: T.ones(2).cauchy_(0, 0),
    "cauchy_sigma_negative": lambda T: T.ones(2).cauchy_(0, -1),
    "cauchy_sigma_nan": lambda T: T.ones(2).cauchy_(0, float("nan")),
    "cauchy_int": lambda T: T.ones(2, dtype=T.int64).cauchy_(),
    "cauchy_bool": lambda T: T.ones(2, dtype=T.bool).cauchy_(),
    "cauchy_complex": lambda T: T.ones(2, dtype=T.complex64).cauchy_(),
    "cauchy_int_bad_sigma": lambda T: T.ones(2, dtype=T.int64).cauchy_(1, -1),
    "cauchy_str": lambda T: T.ones(2).cauchy_("a"),
    "cauchy_tensor_median": lambda T: T.ones(2).cauchy_(T.tensor([1.0, 2.0])),
    "cauchy_bad_generator": lambda T: T.ones(2).cauchy_(generator=3),
    "cauchy_leaf": lambda T: T.ones(2, requires_grad=True).cauchy_(),
    "geometric_zero": lambda T: T.ones(2).geometric_(0),
    "geometric_one": lambda T: T.ones(2).geometric_(1),
    "geometric_negative": lambda T: T.ones(2).geometric_(-0.5),
    "geometric_high": lambda T: T.ones(2).geometric_(1.5),
    "geometric_nan": lambda T: T.ones(2).geometric_(float("nan")),
    "geometric_bool": lambda T: T.ones(2, dtype=T.bool).geometric_(0.5),
    "geometric_complex": lambda T: T.ones(2, dtype=T.complex64).geometric_(0.5),
    "geometric_bool_bad_p": lambda T: T.ones(2, dtype=T.bool).geometric_(2),
    "geometric_str": lambda T: T.ones(2).geometric_("a"),
    "geometric_leaf": lambda T: T.ones(2, requires_grad=True).geometric_(0.5),
    "log_normal_std_zero": lambda T: T.ones(2).log_normal_(1, 0),
    "log_normal_std_negative": lambda T: T.ones(2).log_normal_(1, -1),
    "log_normal_std_nan": lambda T: T.ones(2).log_normal_(1, float("nan")),
    "log_normal_int": lambda T: T.ones(2, dtype=T.int64).log_normal_(),
    "log_normal_complex": lambda T: T.ones(2, dtype=T.complex64).log_normal_(),
    "log_normal_int_bad_std": lambda T: T.ones(2, dtype=T.int64).log_normal_(1, -1),
    "log_normal_str": lambda T: T.ones(2).log_normal_(1, "a"),
    "log_normal_leaf": lambda T: T.ones(2, requires_grad=True).log_normal_(),
    "exponential_nan": lambda T: T.ones(2).exponential_(float("nan")),
    "exponential_complex": lambda T: T.ones(2, dtype=T.complex64).exponential_(),
    "exponential_bool": lambda T: T.ones(2, dtype=T.bool).exponential_(),
    "exponential_int_bad_lambda": lambda T: T.ones(2, dtype=T.int64).exponential_(-1),
    "exponential_str": lambda T: T.ones(2).exponential_("a"),
    "exponential_leaf": lambda T: T.ones(2, requires_grad=True).exponential_(),
    "randint_bool_to": lambda T: T.randint(0, 5, (2,), dtype=T.bool),
    "dropout_p_high": lambda T: T.nn.functional.dropout(T.ones(2), 1.5),
    "dropout_p_low": lambda T: T.nn.functional.dropout(T.ones(2), -0.5),
    "dropout_int": lambda T: T.nn.functional.dropout(T.ones(2, dtype=T.int64), 0.5),
    "torch_dropout_p": lambda T: T.dropout(T.ones(2), 1.5, True),
    "inplace_leaf": lambda T: T.ones(2, requires_grad=True).uniform_(),
    "zeros_like_int_rg": lambda T: T.zeros_like(T.ones(2, dtype=T.int64), requires_grad=True),
}
# Same exception type (torch's text lists every overload of the Python binding).
SAME_TYPE = {
    "randint_one_arg": lambda T: T.randint(3),
    "normal_two_floats": lambda T: T.normal(0.0, 1.0),
    "normal_tensors_and_size": lambda T: T.normal(T.zeros(2), T.ones(2), (3,)),
    "rand_bad_generator": lambda T: T.rand(2, generator=3),
    "random_float_to_kw": lambda T: T.ones(2).random_(2.5, to=3),
}


@pytest.mark.parametrize("name", SAME_TEXT)
def test_errors_match_torch_text(name):
    assert_same_error(SAME_TEXT[name])


@pytest.mark.parametrize("name", SAME_TYPE)
def test_errors_match_torch_type(name):
    got, want = error_of(SAME_TYPE[name], nt), error_of(SAME_TYPE[name], torch)
    assert want is not None and got is not None and got.type is want.type, (got, want)
    assert got.text.split(" ")[0] == want.text.split(" ")[0]


# ------------------------------------------------------------------ poisson, binomial, multinomial
# Statistical checks with fixed seeds: sample means within 6 standard errors (from the
# distribution's variance), never a comparison with PyTorch's random stream.
N_DRAWS = 20000


def _within(sample: np.ndarray, mean: np.ndarray, var: np.ndarray) -> None:
    se = np.sqrt(var / sample.shape[0])
    got = sample.mean(0)
    assert np.all(np.abs(got - mean) <= 6 * se + 1e-12), (got, mean, se)


def test_poisson_moments():
    nt.manual_seed(0)
    rates = np.array([0.0, 0.5, 3.0, 50.0, 1e4])
    draws = nt.poisson(nt.tensor(rates).expand(N_DRAWS, 5)).numpy()
    assert np.all(draws == np.round(draws)) and np.all(draws >= 0)
    _within(draws, rates, rates)
    centred = (draws - rates) ** 2  # the variance: mean of squared deviations
    _within(centred, rates, 2 * rates**2 + rates * (1 + 0 * rates))
    assert np.all(draws[:, 0] == 0)


def test_binomial_moments():
    nt.manual_seed(1)
    n = np.array([0.0, 1.0, 10.0, 100.0, 1e5])
    p = np.array([0.3, 0.5, 0.05, 0.9, 0.4])
    draws = nt.binomial(nt.tensor(n).expand(N_DRAWS, 5), nt.tensor(p)).numpy()
    assert np.all((draws >= 0) & (draws <= n)) and np.all(draws == np.round(draws))
    _within(draws, n * p, n * p * (1 - p))
    assert_same(lambda L: L.binomial(L.tensor([5.0, 7.0]), L.tensor([0.0, 1.0])))


def test_multinomial_frequencies():
    nt.manual_seed(2)
    w = np.array([[1.0, 0.0, 3.0, 6.0], [0.25, 0.25, 0.25, 0.25]])
    p = w / w.sum(1, keepdims=True)
    draws = nt.multinomial(nt.tensor(w), N_DRAWS, replacement=True).numpy()
    for r in range(2):
        freq = (draws[r][:, None] == np.arange(4)).astype(float)
        _within(freq, p[r], p[r] * (1 - p[r]))
    first = np.stack([nt.multinomial(nt.tensor(w[0]), 1).numpy() for _ in range(4000)])
    freq = (first == np.arange(4)).astype(float)
    _within(freq, p[0], p[0] * (1 - p[0]))
    rows = nt.multinomial(nt.tensor(w).expand(500, 2, 4).reshape(1000, 4), 4).numpy()
    assert np.all(np.sort(rows, 1) == np.arange(4))  # without replacement: a permutation
    two = nt.multinomial(nt.tensor([0.0, 1.0, 0.0]), 2).numpy()
    assert two[0] == 1 and two[1] in (0, 2)  # zero weights come after


def test_random_counts_generator_and_seed():
    g = nt.Generator().manual_seed(7)
    a = nt.poisson(nt.full((50,), 4.0), generator=g)
    b = nt.multinomial(nt.ones(6), 3, generator=g)
    g.manual_seed(7)
    assert nt.equal(a, nt.poisson(nt.full((50,), 4.0), generator=g))
    assert nt.equal(b, nt.multinomial(nt.ones(6), 3, generator=g))


def test_random_counts_dtypes_shapes_and_grads():
    def shapes(L):
        r = L.tensor([1.0, 5.0], requires_grad=True)
        x = L.poisson(r)
        (g,) = L.autograd.grad(x.sum(), r)
        m = L.multinomial(L.tensor([[0.1, 0.9], [0.5, 0.5]]), 3, True)
        return (
            type(x.grad_fn).__name__,
            g,
            str(L.poisson(L.ones(3, dtype=L.float16)).dtype),
            L.poisson(L.ones(2, 3, dtype=L.float64)).shape,
            L.binomial(L.ones(2, 1) * 4, L.full((3,), 0.5)).shape,
            str(m.dtype),
            m.shape,
            L.multinomial(L.ones(0, 3), 2).shape,
            L.ones(3).multinomial(2).shape,
            L.multinomial(L.ones(3), 2, out=L.empty(0, dtype=L.long)).shape,
        )

    assert_same(shapes)

    def binomial_backward(L):
        c = L.tensor([10.0, 5.0], requires_grad=True)
        x = L.binomial(c, L.tensor([0.5, 0.2]))
        return type(x.grad_fn).__name__, x.sum().backward()

    assert_same_error(binomial_backward)


def test_random_counts_errors():
    for prog in (
        lambda L: L.poisson(L.tensor([1, 2])),
        lambda L: L.poisson(L.tensor([-1.0])),
        lambda L: L.poisson(L.tensor([float("nan")])),
        lambda L: L.poisson(L.tensor([1j])),
        lambda L: L.poisson(1.0),
        lambda L: L.binomial(L.tensor([10, 5]), L.tensor([0.5, 0.2])),
        lambda L: L.binomial(L.tensor([10.0, 5]), L.tensor([0.5, 0.2], dtype=L.float64)),
        lambda L: L.binomial(L.tensor([10.0, 5]).half(), L.tensor([0.5, 0.2]).half()),
        lambda L: L.multinomial(L.tensor([0.1, 0.9]), 3),
        lambda L: L.multinomial(L.tensor([0.1, 0.9]), 0),
        lambda L: L.multinomial(L.tensor([0.1, 0.9]), -1, True),
        lambda L: L.multinomial(L.ones(1, 1, 2), 1),
        lambda L: L.multinomial(L.tensor(1.0), 1),
        lambda L: L.multinomial(L.tensor([-0.1, 1.0]), 1),
        lambda L: L.multinomial(L.tensor([float("inf"), 1.0]), 1),
        lambda L: L.multinomial(L.tensor([float("nan"), 1.0]), 1),
        lambda L: L.multinomial(L.tensor([0.0, 0.0]), 1),
        lambda L: L.multinomial(L.tensor([1, 2]), 1),
        lambda L: L.multinomial(L.tensor([0.5, 0.5]), 2.0),
        lambda L: L.multinomial(L.ones(2), 1, out=L.empty(0, dtype=L.int32)),
        lambda L: L.multinomial(L.ones(2, 0), 1),
    ):
        assert_same_error(prog)


def test_random_counts_under_vmap():
    rates = np.array([[1.0, 2.0], [3.0, 4.0]])

    def modes(L, r):
        return L.func.vmap(L.poisson, randomness="error")(r)

    assert_same_error(modes, rates)
    nt.manual_seed(3)
    r = nt.tensor([3.0]).expand(200, 1)
    d = nt.func.vmap(nt.poisson, randomness="different")(r).numpy()
    assert len(np.unique(d)) > 3
    w = nt.ones(64, 5)
    m = nt.func.vmap(lambda p: nt.multinomial(p, 5), randomness="different")(w).numpy()
    assert np.all(np.sort(m, 1) == np.arange(5)) and len({tuple(x) for x in m}) > 10
    c = nt.func.vmap(lambda n: nt.binomial(n, nt.tensor([0.5])), randomness="different")(
        nt.full((100, 1), 20.0)
    ).numpy()
    assert len(np.unique(c)) > 3 and np.all((c >= 0) & (c <= 20))


# ------------------------------------------------------------------ gamma and dirichlet
# Statistical checks with fixed seeds, as above; the implicit gradients against finite
# differences of scipy's regularized incomplete gamma and beta functions, and (loosely:
# PyTorch's are approximations, off by up to 2% for tiny alpha) against PyTorch's values.
def _gamma_fd(a, x, h=1e-6):
    """-(dP/da) / (dP/dx) at (a, x), by central differences of scipy.special.gammainc."""
    from scipy.special import gammainc, gammaln

    da = (gammainc(a * (1 + h), x) - gammainc(a * (1 - h), x)) / (2 * a * h)
    density = np.exp((a - 1) * np.log(x) - x - gammaln(a))
    return -da / density


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("alpha", [1e-3, 0.5, 3.0, 1e4])
def test_standard_gamma_moments(alpha, dtype):
    nt.manual_seed(11)
    a = nt.full((N_DRAWS, 2), alpha, dtype=getattr(nt, dtype))
    x = nt._standard_gamma(a)
    assert x.dtype == a.dtype and x.shape == a.shape and x.device == a.device
    v = _np(x)
    assert np.all(v > 0)
    _close_mean(v, alpha, alpha)
    _close_var(v, alpha, 3 * alpha**2 + 6 * alpha)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sample_dirichlet_moments(dtype):
    nt.manual_seed(12)
    alpha = np.array([0.5, 2.0, 7.0])
    a0 = alpha.sum()
    x = nt._sample_dirichlet(nt.tensor(alpha, dtype=getattr(nt, dtype)).expand(N_DRAWS, 3))
    assert x.dtype == getattr(nt, dtype) and x.shape == (N_DRAWS, 3)
    v = _np(x)
    np.testing.assert_allclose(v.sum(-1), 1, rtol=1e-5)
    mean = alpha / a0
    _within(v, mean, mean * (1 - mean) / (a0 + 1))


def test_gamma_dirichlet_special_values_as_torch():
    def prog(L):
        a = L.tensor([-1.0, 0.0, float("nan"), float("inf")])
        return (
            L._standard_gamma(a),
            L._sample_dirichlet(L.tensor([[-1.0, 1.0], [float("inf"), 1.0]])),
            L._standard_gamma(L.ones(0, 3)).shape,
            L._sample_dirichlet(L.tensor(2.0, dtype=L.float64)),
            L._standard_gamma_grad(L.tensor([1.0, 1.0, 1.0]), L.tensor([0.0, float("inf"), -1.0])),
        )

    assert_same(prog)


def test_gamma_reproducible_with_seeds_and_generators():
    a = nt.tensor([0.3, 2.0, 50.0])
    nt.manual_seed(5)
    first = nt._standard_gamma(a)
    nt.manual_seed(5)
    assert nt.equal(first, nt._standard_gamma(a))
    g = nt.Generator().manual_seed(7)
    x = nt._sample_dirichlet(a, g)
    assert nt.equal(x, nt._sample_dirichlet(a, generator=nt.Generator().manual_seed(7)))
    assert not nt.equal(x, nt._sample_dirichlet(a, generator=g))


@pytest.mark.parametrize("alpha", [1e-3, 0.5, 3.0, 1e4])
def test_standard_gamma_gradient_is_implicit(alpha):
    nt.manual_seed(13)
    a = nt.full((N_DRAWS,), alpha, dtype=nt.float64, requires_grad=True)
    x = nt._standard_gamma(a)
    assert type(x.grad_fn).__name__ == "StandardGammaBackward0"
    (grad,) = nt.autograd.grad(x.sum(), a)
    g = _np(grad)
    # d E[x] / d alpha = 1 is the mean of the per-sample gradients
    assert abs(g.mean() - 1) < Z * g.std() / np.sqrt(g.size)
    # each per-sample gradient is -(dF/dalpha) / (dF/dx) at its sample
    xs = _np(x)
    pick = (xs > 1e-250) & (xs < 1e300)
    pick[np.nonzero(pick)[0][200:]] = False
    np.testing.assert_allclose(g[pick], _gamma_fd(alpha, xs[pick]), rtol=2e-6)


def test_standard_gamma_grad_against_finite_differences_and_torch():
    from scipy.special import gammaincinv

    a = np.repeat([1e-3, 0.01, 0.5, 1.0, 3.0, 20.0, 1e3, 1e4], 5)
    q = np.tile([0.001, 0.2, 0.5, 0.8, 0.999], 8)
    x = gammaincinv(a, q)
    ok = x > 1e-250
    a, x = a[ok], x[ok]
    ours = nt._standard_gamma_grad(nt.tensor(a), nt.tensor(x)).numpy()
    np.testing.assert_allclose(ours, _gamma_fd(a, x), rtol=2e-6)
    theirs = torch._standard_gamma_grad(torch.tensor(a), torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=3e-2)
    f32 = nt._standard_gamma_grad(nt.tensor(a, dtype=nt.float32), nt.tensor(x, dtype=nt.float32))
    assert f32.dtype == nt.float32
    held = (x > 1e-30) & (ours > 1e-30)  # (float32 holds these)
    np.testing.assert_allclose(f32.numpy()[held], ours[held], rtol=1e-5)


def _beta_fd(x, a, total, h=1e-6):
    """PyTorch's quantity: -(dI/dalpha at fixed beta) / density / (1 - x) for x ~ Beta(alpha,
    beta), beta = total - alpha (so that d_j (delta_ij - x_i) is a Dirichlet draw's
    Jacobian)."""
    from scipy.special import betainc, betaln

    b = total - a
    da = (betainc(a * (1 + h), b, x) - betainc(a * (1 - h), b, x)) / (2 * a * h)
    density = np.exp((a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - betaln(a, b))
    return -da / density / (1 - x)


def test_dirichlet_grad_against_finite_differences_and_torch():
    from scipy.special import betaincinv

    ab = np.array([(0.05, 0.5), (0.5, 0.5), (1.0, 1.0), (2.0, 3.0), (5.0, 0.2), (30.0, 50.0)])
    a = np.repeat(ab[:, 0], 5)
    b = np.repeat(ab[:, 1], 5)
    x = betaincinv(a, b, np.tile([0.01, 0.2, 0.5, 0.8, 0.99], len(ab)))
    ok = (x > 1e-200) & (x < 1 - 1e-12)
    x, a, total = x[ok], a[ok], (a + b)[ok]
    ours = nt._dirichlet_grad(nt.tensor(x), nt.tensor(a), nt.tensor(total)).numpy()
    np.testing.assert_allclose(ours, _beta_fd(x, a, total), rtol=1e-5)
    # PyTorch's approximation is off by up to 1e-3 (relative) near the mean
    assert_same(lambda L, *t: L._dirichlet_grad(*t), x, a, total, rtol=1e-3)
    half = nt._dirichlet_grad(*(nt.tensor(v, dtype=nt.float32) for v in (x, a, total)))
    assert half.dtype == nt.float32


def test_sample_dirichlet_gradient_through_dirichlet_grad_mean():
    """d E[x_0] / d alpha_0 = beta / total^2 (beta = total - alpha_0, held), the mean of the
    implicit gradients d (1 - x_0) of the Beta(alpha_0, beta) marginal."""
    nt.manual_seed(14)
    alpha = nt.tensor([2.0, 3.0, 1.5], dtype=nt.float64)
    x = nt._sample_dirichlet(alpha.expand(N_DRAWS, 3))
    total = alpha.sum().expand(N_DRAWS)
    g = _np(nt._dirichlet_grad(x[:, 0], alpha[0].expand(N_DRAWS), total) * (1 - x[:, 0]))
    total_v = 6.5
    assert abs(g.mean() - (total_v - 2.0) / total_v**2) < Z * g.std() / np.sqrt(g.size)


def test_gamma_dirichlet_errors_as_torch():
    for prog in (
        lambda L: L._standard_gamma(L.tensor([1, 2])),
        lambda L: L._standard_gamma(L.ones(2, dtype=L.float16)),
        lambda L: L._standard_gamma(L.ones(2, dtype=L.complex64)),
        lambda L: L._standard_gamma(1.0),
        lambda L: L._standard_gamma(L.ones(2), generator=3),
        lambda L: L._sample_dirichlet(L.tensor([1, 2])),
        lambda L: L._sample_dirichlet(L.ones(2, dtype=L.bfloat16)),
        lambda L: L._standard_gamma_grad(L.ones(2), L.ones(2, dtype=L.float64)),
        lambda L: L._standard_gamma_grad(L.tensor([1, 2]), L.tensor([1, 2])),
        lambda L: L._standard_gamma_grad(L.ones(2), 1.0),
        lambda L: L._standard_gamma_grad(L.ones(2, 3), L.ones(4, 3)),
        lambda L: L._dirichlet_grad(L.ones(2), L.ones(2, dtype=L.float64), L.ones(2)),
        lambda L: L._dirichlet_grad(L.tensor([1, 2]), L.tensor([1, 2]), L.tensor([1, 2])),
        lambda L: L._dirichlet_grad(L.ones(2), L.ones(2), 1.0),
    ):
        assert_same_error(prog)


def test_gamma_dirichlet_autograd_as_torch():
    def gamma_grad_backward(L):
        a = L.tensor([1.0, 2.0], requires_grad=True)
        L._standard_gamma_grad(a, L.tensor([0.5, 1.0])).sum().backward()

    def dirichlet_backward(L):
        L._sample_dirichlet(L.tensor([1.0, 2.0], requires_grad=True)).sum().backward()

    def dirichlet_grad_backward(L):
        a = L.tensor([1.0, 2.0], requires_grad=True)
        L._dirichlet_grad(L.tensor([0.3, 0.5]), a, L.tensor([3.0, 3.0])).sum().backward()

    def forward_ad(fn):
        def prog(L):
            fwd = L.autograd.forward_ad
            with fwd.dual_level():
                a = fwd.make_dual(L.tensor([1.0, 2.0]), L.ones(2))
                fn(L, a)

        return prog

    for prog in (
        gamma_grad_backward,
        dirichlet_backward,
        dirichlet_grad_backward,
        forward_ad(lambda L, a: L._standard_gamma(a)),
        forward_ad(lambda L, a: L._sample_dirichlet(a)),
        forward_ad(lambda L, a: L._standard_gamma_grad(a, L.ones(2))),
        forward_ad(lambda L, a: L._dirichlet_grad(L.full((2,), 0.3), a, L.full((2,), 3.0))),
    ):
        assert_same_error(prog)
    requires = assert_same(
        lambda L: L._dirichlet_grad(L.ones(2), L.ones(2), L.ones(2).requires_grad_()).requires_grad
    )
    assert requires is True


def test_gamma_dirichlet_under_vmap():
    alpha = np.array([[1.0, 2.0], [3.0, 4.0]])
    for op in ("_standard_gamma", "_sample_dirichlet"):
        assert_same_error(lambda L, a: L.func.vmap(getattr(L, op))(a), alpha)
        assert_same_error(lambda L, a: L.func.vmap(getattr(L, op), randomness="same")(a), alpha)
        fixed = nt.tensor([1.0, 2.0, 3.0])
        same = nt.func.vmap(lambda _: getattr(nt, op)(fixed), randomness="same")(nt.ones(4))
        assert same.shape == (4, 3) and all(nt.equal(same[0], row) for row in same)
        diff = nt.func.vmap(lambda _: getattr(nt, op)(fixed), randomness="different")(nt.ones(4))
        assert diff.shape == (4, 3) and not nt.equal(diff[0], diff[1])
    nt.manual_seed(15)
    big = nt.full((N_DRAWS,), 4.0)
    _close_mean(nt.func.vmap(nt._standard_gamma, randomness="different")(big).numpy(), 4.0, 4.0)
    # a logical 0-d alpha is a Dirichlet of one category: 1 (PyTorch's value below 1)
    ones = nt.func.vmap(nt._sample_dirichlet, randomness="different")(nt.full((3,), 2.0))
    assert nt.equal(ones, nt._sample_dirichlet(nt.tensor([2.0])).expand(3))
    # the gradient batches: grad of the draws under vmap is _standard_gamma_grad at them
    a = nt.tensor([[0.5, 2.0], [3.0, 9.0]], dtype=nt.float64)
    nt.manual_seed(16)
    g = nt.func.vmap(nt.func.grad(lambda v: nt._standard_gamma(v).sum()), randomness="different")(a)
    nt.manual_seed(16)
    x = nt.func.vmap(nt._standard_gamma, randomness="different")(a)
    np.testing.assert_allclose(g.numpy(), nt._standard_gamma_grad(a, x).numpy(), rtol=1e-12)


# ------------------------------------------------------------------ vmap's randomness refusals
# Programs of a batched x (3, 4) and of an unbatched batch-free p; each runs under vmap in
# every randomness mode, on both libraries: the same result shape, or the same error.
_RANDOM_UNDER_VMAP = {
    "bernoulli": lambda L, t: L.bernoulli(t),
    "bernoulli p": lambda L, t: L.bernoulli(t, 0.5),
    "Tensor.bernoulli": lambda L, t: t.bernoulli(),
    "Tensor.bernoulli p": lambda L, t: t.bernoulli(p=0.3),
    "bernoulli bad p": lambda L, t: L.bernoulli(t, 2.0),
    "bernoulli of unbatched": lambda L, t: L.bernoulli(L.full((4,), 0.5)) + t,
    "bernoulli_ float p": lambda L, t: t.clone().bernoulli_(0.5),
    "bernoulli_ batched p": lambda L, t: t.clone().bernoulli_(t),
    "bernoulli_ unbatched p": lambda L, t: t.clone().bernoulli_(L.full((4,), 0.5)),
    "unbatched bernoulli_ batched p": lambda L, t: L.zeros(4).bernoulli_(t),
    "unbatched bernoulli_ unbatched p": lambda L, t: L.zeros(4).bernoulli_(L.full((4,), 0.5)),
    "normal mean": lambda L, t: L.normal(t, 1.0),
    "normal std": lambda L, t: L.normal(0.0, t),
    "normal both": lambda L, t: L.normal(t, t),
    "normal bad std": lambda L, t: L.normal(t, -1.0),
    "normal of unbatched": lambda L, t: L.normal(L.zeros(4), 1.0) + t,
    "multinomial": lambda L, t: L.multinomial(t, 2),
    "multinomial replacement": lambda L, t: L.multinomial(t, 5, replacement=True),
    "multinomial too many": lambda L, t: L.multinomial(t, 9),
    "poisson": lambda L, t: L.poisson(t),
    "poisson int": lambda L, t: L.poisson(t.long()),
    "binomial count": lambda L, t: L.binomial(t * 10, L.full((4,), 0.5)),
    "binomial prob": lambda L, t: L.binomial(L.full((4,), 10.0), t),
    "binomial int": lambda L, t: L.binomial(t.long(), t),
    "_standard_gamma": lambda L, t: L._standard_gamma(t),
    "_sample_dirichlet": lambda L, t: L._sample_dirichlet(t),
    # drawn with no batched input: one draw for the batch under 'same'
    "rand_like": lambda L, t: L.rand_like(t),
    "randn_like": lambda L, t: L.randn_like(t),
    "randint_like": lambda L, t: L.randint_like(t, 1, 5),
    "dropout": lambda L, t: L.nn.functional.dropout(t, 0.5),
    "alpha_dropout": lambda L, t: L.nn.functional.alpha_dropout(t, 0.5, training=True),
    "uniform_": lambda L, t: t.clone().uniform_(),
    "rand": lambda L, t: L.rand(4) + t,
    # out= forms
    "rand out": lambda L, t: L.rand(4, out=L.empty(4)),
    "randn out": lambda L, t: L.randn(4, out=L.empty(4)),
    "randint out": lambda L, t: L.randint(3, (4,), out=L.empty(4, dtype=L.int64)),
    "randperm out": lambda L, t: L.randperm(4, out=L.empty(4, dtype=L.int64)),
    "bernoulli out": lambda L, t: L.bernoulli(L.ones(4), out=L.empty(4)),
    "multinomial out": lambda L, t: L.multinomial(L.ones(4), 2, out=L.empty(2, dtype=L.int64)),
    "normal out": lambda L, t: L.normal(L.ones(4), L.ones(4), out=L.empty(4)),
    "normal float std out": lambda L, t: L.normal(1.0, L.ones(4), out=L.empty(4)),
    "normal sized out": lambda L, t: L.normal(1.0, 1.0, (4,), out=L.empty(4)),
    "normal batched mean out": lambda L, t: L.normal(t, 1.0, out=L.empty(4)),
}


@pytest.mark.parametrize("mode", ["same", "different", "error"])
@pytest.mark.parametrize("name", list(_RANDOM_UNDER_VMAP))
def test_random_ops_under_vmap_refuse_as_torch(name, mode):
    """'same' randomness refuses a random op with a batched tensor input (PyTorch would
    need one draw per sample), before the op's own checks; 'error' refuses every random op;
    out= forms are refused in every mode."""
    f = _RANDOM_UNDER_VMAP[name]

    def prog(L, x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return tuple(L.func.vmap(lambda t: f(L, t), randomness=mode)(x).shape)

    assert_same_outcome(prog, np.random.default_rng(0).uniform(0.1, 0.9, (3, 4)))


_NESTED = {
    "outer same batched, inner different": (
        "same",
        "different",
        lambda L, a, b: L.bernoulli(a) + b,
    ),
    "outer same batched, inner error": ("same", "error", lambda L, a, b: L.bernoulli(a) + b),
    "outer different, inner same batched": ("different", "same", lambda L, a, b: L.poisson(b) + a),
    "both same, batched outside only": ("same", "same", lambda L, a, b: L.normal(a, 1.0) + b),
    "both same, unbatched": ("same", "same", lambda L, a, b: L.rand_like(b) + a),
}


@pytest.mark.parametrize("name", list(_NESTED))
def test_random_ops_under_nested_vmaps_refuse_as_torch(name):
    """Each vmap an op passes checks it, innermost first."""
    outer, inner, f = _NESTED[name]

    def prog(L, x, y):
        def at_a(a):
            return L.func.vmap(lambda b: f(L, a, b), randomness=inner)(y)

        return tuple(L.func.vmap(at_a, randomness=outer)(x).shape)

    rng = np.random.default_rng(1)
    assert_same_outcome(prog, rng.uniform(0.1, 0.9, (3, 4)), rng.uniform(0.1, 0.9, (2, 4)))


def test_same_randomness_refuses_batched_inputs_under_grad():
    def prog(L, x):
        def per_sample(a):
            return L.func.grad(lambda y: L.normal(y, 1.0).sum())(a)

        return L.func.vmap(per_sample, randomness="same")(x)

    assert_same_error(prog, np.ones((3, 4)))


# ------------------------------------------------------------------ random state
# A state saved with get_rng_state (or Generator.get_state) and restored reproduces every
# random function's next draws exactly: on the default generator, across Generator objects,
# inside fork_rng, and after a round trip through numtorch.save/load.
def _p(lib):
    return lib.full((64,), 0.3)


STATE_DRAWS = {
    "rand": lambda lib, g: lib.rand(5, 3, generator=g),
    "rand_float16": lambda lib, g: lib.rand(7, dtype=lib.float16, generator=g),
    "randn": lambda lib, g: lib.randn(4, 4, generator=g),
    "randn_complex": lambda lib, g: lib.randn(5, dtype=lib.complex64, generator=g),
    "randint_int32": lambda lib, g: lib.randint(0, 1000, (9,), dtype=lib.int32, generator=g),
    "randint": lambda lib, g: lib.randint(-5, 2**40, (9,), generator=g),
    "randperm": lambda lib, g: lib.randperm(50, generator=g),
    "normal": lambda lib, g: lib.normal(lib.zeros(6), lib.ones(6), generator=g),
    "normal_floats": lambda lib, g: lib.normal(2.0, 3.0, (6,), generator=g),
    "bernoulli": lambda lib, g: lib.bernoulli(_p(lib), generator=g),
    "bernoulli_p": lambda lib, g: lib.bernoulli(_p(lib), 0.7, generator=g),
    "multinomial": lambda lib, g: lib.multinomial(
        lib.arange(1.0, 19.0).reshape(3, 6), 4, generator=g
    ),
    "multinomial_replacement": lambda lib, g: lib.multinomial(
        lib.ones(2, 5), 20, replacement=True, generator=g
    ),
    "poisson": lambda lib, g: lib.poisson(lib.full((30,), 4.0), generator=g),
    "binomial": lambda lib, g: lib.binomial(lib.full((9,), 10.0), _p(lib)[:9], generator=g),
    "standard_gamma": lambda lib, g: lib._standard_gamma(lib.full((9,), 0.7)),
    "sample_dirichlet": lambda lib, g: lib._sample_dirichlet(lib.full((4, 3), 1.5)),
    "uniform_": lambda lib, g: lib.empty(8).uniform_(-2, 3, generator=g),
    "normal_": lambda lib, g: lib.empty(8).normal_(1, 2, generator=g),
    "exponential_": lambda lib, g: lib.empty(8).exponential_(2.0, generator=g),
    "geometric_": lambda lib, g: lib.empty(8).geometric_(0.3, generator=g),
    "log_normal_": lambda lib, g: lib.empty(8).log_normal_(generator=g),
    "cauchy_": lambda lib, g: lib.empty(8).cauchy_(generator=g),
    "random_": lambda lib, g: lib.empty(8, dtype=lib.int64).random_(generator=g),
    "random_to": lambda lib, g: lib.empty(8).random_(3, 17, generator=g),
    "bernoulli_": lambda lib, g: lib.empty(8).bernoulli_(0.4, generator=g),
    "rand_like": lambda lib, g: lib.rand_like(lib.ones(2, 3), generator=g),
    "randn_like": lambda lib, g: lib.randn_like(lib.ones(2, 3), generator=g),
    "randint_like": lambda lib, g: lib.randint_like(lib.ones(2, 3), 10, generator=g),
}
# Those without a generator argument draw from the default generator only.
DEFAULT_ONLY = {
    "dropout": lambda lib: lib.nn.functional.dropout(lib.ones(40), 0.5),
    "dropout_inplace": lambda lib: lib.nn.functional.dropout(lib.ones(40), 0.3, inplace=True),
    "dropout2d": lambda lib: lib.nn.functional.dropout2d(lib.ones(2, 6, 3, 3), 0.5),
    "alpha_dropout": lambda lib: lib.nn.functional.alpha_dropout(lib.ones(40), 0.5, True),
    "feature_alpha_dropout": lambda lib: lib.nn.functional.feature_alpha_dropout(
        lib.ones(2, 8, 3), 0.5, True
    ),
    "rrelu": lambda lib: lib.nn.functional.rrelu(-lib.ones(20), training=True),
    "standard_gamma": lambda lib: lib._standard_gamma(lib.full((9,), 0.7)),
    "kaiming_uniform_": lambda lib: lib.nn.init.kaiming_uniform_(lib.empty(4, 5)),
    "Linear": lambda lib: lib.nn.Linear(3, 2).weight.detach(),
}
ALL_DEFAULT = {**{n: (lambda f: lambda lib: f(lib, None))(f) for n, f in STATE_DRAWS.items()}}
ALL_DEFAULT.update(DEFAULT_ONLY)


def _draw_twice(fn, lib=nt):
    return np.concatenate([_np(fn(lib)).ravel().astype(np.complex128) for _ in range(2)])


@pytest.mark.parametrize("name", sorted(ALL_DEFAULT))
def test_rng_state_restores_each_draw(name):
    fn = ALL_DEFAULT[name]
    nt.manual_seed(11)
    nt.rand(3)  # a state mid-stream, not a fresh seed
    state = nt.get_rng_state()
    first = _draw_twice(fn)
    nt.manual_seed(99)
    nt.set_rng_state(state)
    np.testing.assert_array_equal(_draw_twice(fn), first)
    nt.random.set_rng_state(state)  # the module's functions are the same ones
    np.testing.assert_array_equal(_draw_twice(fn), first)


@pytest.mark.parametrize(
    "name", sorted(n for n in STATE_DRAWS if "gamma" not in n and "dir" not in n)
)
def test_generator_state_restores_and_moves_across_generators(name):
    fn = STATE_DRAWS[name]
    g = nt.Generator().manual_seed(5)
    fn(nt, g)
    state = g.get_state()
    first = _np(fn(nt, g))
    default_before = nt.get_rng_state()
    h = nt.Generator().manual_seed(123)
    assert h.set_state(state) is h and h.initial_seed() == 5
    np.testing.assert_array_equal(_np(fn(nt, h)), first)
    clone = g.set_state(state).clone_state()
    assert clone is not g and clone.initial_seed() == 5
    np.testing.assert_array_equal(_np(fn(nt, clone)), first)
    np.testing.assert_array_equal(_np(fn(nt, g)), first)
    # The default generator's state went to no one.
    np.testing.assert_array_equal(nt.get_rng_state().numpy(), default_before.numpy())
    nt.set_rng_state(state)  # a Generator's state fits the default generator too
    np.testing.assert_array_equal(_np(fn(nt, None)), first)


def test_rng_state_format_and_initial_seed_restored():
    for lib in (nt, torch):
        lib.manual_seed(5)
        state = lib.get_rng_state()
        lib.manual_seed(7)
        lib.set_rng_state(state)
        assert lib.initial_seed() == 5
        assert state.dtype == lib.uint8 and state.dim() == 1 and state.is_contiguous()
        assert lib.get_rng_state() is not lib.get_rng_state()  # a copy, not a view
        a = lib.rand(3)
        lib.Generator().set_state(state)
        lib.set_rng_state(state.reshape(2, -1))  # only the number of bytes counts
        assert lib.equal(lib.rand(3), a)
    # Negative seeds wrap modulo 2**64, as in PyTorch.
    assert nt.manual_seed(-1).initial_seed() == torch.manual_seed(-1).initial_seed()
    assert nt.Generator().manual_seed(-(2**63)).initial_seed() == 2**63
    nt.manual_seed(0)


def test_rng_state_survives_save_and_load(tmp_path):
    nt.manual_seed(3)
    nt.randn(4)
    g = nt.Generator().manual_seed(8)
    path = tmp_path / "state.pt"
    nt.save({"cpu": nt.get_rng_state(), "g": g.get_state()}, path)
    a, b = nt.randn(10), nt.randint(0, 50, (10,), generator=g)
    loaded = nt.load(path)
    nt.manual_seed(1)
    nt.set_rng_state(loaded["cpu"])
    np.testing.assert_array_equal(nt.randn(10).numpy(), a.numpy())
    h = nt.Generator()
    h.set_state(loaded["g"])
    np.testing.assert_array_equal(nt.randint(0, 50, (10,), generator=h).numpy(), b.numpy())


def test_fork_rng_restores_on_exit_and_on_exception():
    nt.manual_seed(4)
    expected = _np(nt.rand(6))
    nt.manual_seed(4)
    with nt.random.fork_rng() as inside:
        assert inside is None
        nt.manual_seed(100)
        nt.randn(50)
    np.testing.assert_array_equal(_np(nt.rand(6)), expected)
    assert nt.initial_seed() == 4
    nt.manual_seed(4)
    with pytest.raises(KeyError), nt.random.fork_rng(devices=[]):
        nt.rand(9)
        raise KeyError
    np.testing.assert_array_equal(_np(nt.rand(6)), expected)
    nt.manual_seed(4)
    with nt.random.fork_rng(enabled=False):  # not forked: the draw moves the state on
        nt.rand(6)
    assert not np.array_equal(_np(nt.rand(6)), expected)
    nt.manual_seed(4)
    with nt.random.fork_rng(device_type="meta"):
        nt.rand(6)
    assert not np.array_equal(_np(nt.rand(6)), expected)
    nt.manual_seed(4)
    with nt.random.fork_rng(devices=(d for d in [])):  # any iterable, generators too
        with nt.random.fork_rng():  # nested
            nt.rand(3)
        nt.rand(6)
    np.testing.assert_array_equal(_np(nt.rand(6)), expected)


def test_fork_rng_refusals_as_torch():
    def enter(lib, **kw):
        with lib.random.fork_rng(**kw):
            pass

    if not nt.cuda.is_available():
        assert_same_error(lambda lib: enter(lib, devices=[0]))
    assert_same_error(lambda lib: enter(lib, device_type="cpu"))
    # Each library lists its own device types in the text.
    unknown = [error_of(lambda lib: enter(lib, device_type="foo"), lib) for lib in (nt, torch)]
    assert unknown[0].type is unknown[1].type is RuntimeError


def test_random_module_surface_as_torch():
    assert sorted(nt.random.__all__) == sorted(torch.random.__all__)
    for name in torch.random.__all__:
        assert callable(getattr(nt.random, name))
    for name in ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state"]:
        assert getattr(nt.random, name) is getattr(nt, name)
    assert nt.random.default_generator is nt.default_generator
    assert nt.random.Generator is nt.Generator
    assert nt.random.thread_safe_generator() is None  # outside a thread worker
    s = nt.random.seed()
    assert nt.initial_seed() == s and 0 <= s < 2**64
    assert nt.random.manual_seed(6) is nt.default_generator and nt.random.initial_seed() == 6


def _bad_states(lib):
    good = lib.get_rng_state()
    return {
        "list": [1, 2],
        "none": None,
        "float": good.float(),
        "int8": good.to(lib.int8),
        "short": good[:10],
        "scalar": good[0],
        "strided": lib.cat([good, good])[::2],
        "strided_short": lib.cat([good, good])[::3],
    }


@pytest.mark.parametrize("bad", list(_bad_states(torch)))
@pytest.mark.parametrize("setter", ["set_rng_state", "random.set_rng_state", "Generator.set_state"])
def test_bad_rng_state_refused_as_torch(bad, setter):
    def call(lib):
        state = _bad_states(lib)[bad]
        if setter == "Generator.set_state":
            return lib.Generator().set_state(state)
        fn = lib.random.set_rng_state if setter.startswith("random") else lib.set_rng_state
        return fn(state)

    if bad.startswith(("short", "scalar")):  # the size in the text is each library's own
        te, tt = error_of(call, torch), error_of(call, nt)
        assert te.type is tt.type is RuntimeError
        n = 1 if bad == "scalar" else 10
        assert tt.text == (
            f"Expected a CPUGeneratorImplState of size {nt.get_rng_state().numel()} but found "
            f"the input RNG state size to be {n}"
        )
        assert te.text.endswith(f"but found the input RNG state size to be {n}")
    else:
        assert_same_error(call)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.manual_seed(2**64),
        lambda lib: lib.manual_seed(-(2**63) - 1),
        lambda lib: lib.manual_seed("a"),
        lambda lib: lib.Generator().manual_seed(2**64),
        lambda lib: lib.Generator().graphsafe_get_state(),
        lambda lib: lib.Generator().graphsafe_set_state(lib.Generator()),
        lambda lib: lib.Generator().graphsafe_set_state(1),
        lambda lib: lib.Generator().get_offset(),
        lambda lib: lib.Generator().set_offset(3),
    ],
)
def test_generator_refusals_as_torch(call):
    assert_same_error(call)
    nt.manual_seed(0)


# The random factories take PyTorch's keyword names (shapes and dtypes compared; values
# come from different generators).
@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.randn(size=(2, 3)),
        lambda T: T.rand(size=(2, 3), dtype=T.float64),
        lambda T: T.randn(2, 3, generator=T.Generator().manual_seed(0)),
        lambda T: T.rand(size=(2,), generator=T.Generator().manual_seed(0)),
        lambda T: T.randint(high=5, size=(3,)),
        lambda T: T.randint(low=2, high=5, size=(3,)),
        lambda T: T.randint(5, size=(3,)),
        lambda T: T.randperm(n=5),
        lambda T: T.normal(mean=0.0, std=1.0, size=(2,)),
        lambda T: T.normal(mean=T.zeros(2), std=1.0),
    ],
)
def test_random_factory_keywords(call):
    ours, theirs = call(nt), call(torch)
    assert (ours.shape, str(ours.dtype)) == (tuple(theirs.shape), str(theirs.dtype))


def test_random_factory_keyword_errors():
    assert_same_error(lambda T: T.zeros(2).new_zeros(2, size=(2,)))
    assert error_of(lambda T: T.randint(size=(3,)), nt).type is TypeError


@pytest.mark.parametrize(
    "mean, std",
    [(0, "t0"), ("t0", 2.0), ("t0", "t0"), (0, "i0"), (0, "t1"), (0, "tg")],
)
def test_normal_with_size_takes_0_dim_tensors_as_numbers(mean, std):
    """normal(mean, std, size) reads a 0-dim tensor that does not require grad as a number;
    a 1-d or grad-requiring one refuses the overload, as in PyTorch."""

    def make(lib, v):
        kinds = {
            "t0": lambda: lib.tensor(2.0, dtype=lib.float64),
            "i0": lambda: lib.tensor(3),
            "t1": lambda: lib.tensor([2.0]),
            "tg": lambda: lib.tensor(2.0, requires_grad=True),
        }
        return kinds[v]() if isinstance(v, str) else v

    def prog(lib):
        lib.manual_seed(0)
        r = lib.normal(make(lib, mean), make(lib, std), (4000,))
        return tuple(r.shape), str(r.dtype), r.requires_grad, round(float(r.std()), 1)

    assert_same_outcome(prog)
