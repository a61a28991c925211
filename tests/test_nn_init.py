"""nn.init against PyTorch: deterministic fills exactly, random ones by their statistics
(the two generators differ), signatures and error texts."""

from __future__ import annotations

import inspect
import math
import warnings

import numpy as np
import pytest
import torch
from twolibs import assert_same, assert_same_error, run_both

import numtorch as nt

PUBLIC = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "sparse_",
    "_calculate_fan_in_and_fan_out",
    "_calculate_correct_fan",
]
NONLINEARITIES = [
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "sigmoid",
    "tanh",
    "relu",
    "leaky_relu",
    "selu",
]


def _params(f):
    return [(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()]


@pytest.mark.parametrize("name", PUBLIC)
def test_signature(name):
    assert _params(getattr(nt.nn.init, name)) == _params(getattr(torch.nn.init, name))


def test_public_names():
    assert set(nt.nn.init.__all__) == set(torch.nn.init.__all__)


# ------------------------------------------------------------------ deterministic
@pytest.mark.parametrize("nonlinearity", NONLINEARITIES)
def test_calculate_gain(nonlinearity):
    assert_same(lambda lib: lib.nn.init.calculate_gain(nonlinearity))


@pytest.mark.parametrize("param", [None, 0.2, 3, -1.5])
def test_calculate_gain_leaky_relu_slope(param):
    assert_same(lambda lib: lib.nn.init.calculate_gain("leaky_relu", param))


@pytest.mark.parametrize(
    "args", [("leaky_relu", True), ("leaky_relu", "0.1"), ("softmax",), ("Relu",)]
)
def test_calculate_gain_errors(args):
    assert_same_error(lambda lib: lib.nn.init.calculate_gain(*args))


@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3), (4, 3, 2, 5), (2, 3, 1, 2, 2), (3, 0)])
def test_fans(shape):
    def prog(lib):
        t = lib.empty(shape)
        i = lib.nn.init
        return (
            i._calculate_fan_in_and_fan_out(t),
            i._calculate_correct_fan(t, "fan_in"),
            i._calculate_correct_fan(t, "FAN_OUT"),
        )

    assert_same(prog)


@pytest.mark.parametrize(
    "prog",
    [
        lambda lib: lib.nn.init._calculate_fan_in_and_fan_out(lib.empty(3)),
        lambda lib: lib.nn.init._calculate_correct_fan(lib.empty(3, 4), "fan_avg"),
        lambda lib: lib.nn.init.kaiming_uniform_(lib.empty(3, 4), mode="in"),
        lambda lib: lib.nn.init.kaiming_normal_(lib.empty(3, 4), nonlinearity="gelu"),
        lambda lib: lib.nn.init.xavier_uniform_(lib.empty(4)),
        lambda lib: lib.nn.init.eye_(lib.empty(2, 3, 4)),
        lambda lib: lib.nn.init.dirac_(lib.empty(3, 4)),
        lambda lib: lib.nn.init.dirac_(lib.empty(5, 2, 3), groups=2),
        lambda lib: lib.nn.init.orthogonal_(lib.empty(5)),
        lambda lib: lib.nn.init.sparse_(lib.empty(2, 3, 4), 0.5),
        lambda lib: lib.nn.init.normal_(lib.empty(3), std=-1.0),
        lambda lib: lib.nn.init.uniform_(lib.empty(3), 2.0, 1.0),
    ],
)
def test_errors(prog):
    assert_same_error(prog)


def test_bad_input_is_not_modified():
    t = nt.ones(3, 4)
    with pytest.raises(ValueError):
        nt.nn.init.kaiming_uniform_(t, mode="in")
    assert bool((t == 1).all())


@pytest.mark.parametrize(
    "fill",
    [
        lambda lib, t: lib.nn.init.constant_(t, -2.5),
        lambda lib, t: lib.nn.init.ones_(t),
        lambda lib, t: lib.nn.init.zeros_(t),
    ],
)
def test_constant_fills(fill):
    def prog(lib):
        t = lib.empty(3, 4, dtype=lib.float64, requires_grad=True)
        out = fill(lib, t)
        return out is t, t, t.requires_grad, t.grad_fn

    assert_same(prog)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4)])
def test_eye(shape):
    def prog(lib):
        t = lib.full(shape, 7.0)
        return lib.nn.init.eye_(t) is t, t

    assert_same(prog)


@pytest.mark.parametrize(
    "shape, groups",
    [((4, 3, 5), 1), ((6, 2, 3, 3), 2), ((6, 4, 3, 2), 3), ((4, 2, 3, 3, 3), 1), ((2, 5, 4), 1)],
)
def test_dirac(shape, groups):
    def prog(lib):
        t = lib.full(shape, 7.0)
        return lib.nn.init.dirac_(t, groups) is t, t

    assert_same(prog)


def test_dirac_preserves_the_input_through_a_convolution():
    w = nt.nn.init.dirac_(nt.empty(3, 3, 5, 5))
    x = nt.randn(2, 3, 7, 7)
    assert nt.allclose(nt.nn.functional.conv2d(x, w, padding=2), x)


def test_no_grad_and_in_place():
    """A leaf that requires grad is written in place with no graph and a bumped version."""
    for fill in (nt.nn.init.normal_, nt.nn.init.xavier_uniform_, nt.nn.init.orthogonal_):
        t = nt.empty(4, 5, requires_grad=True)
        v = t._version
        assert fill(t) is t
        assert t.requires_grad and t.grad_fn is None and t.is_leaf and t._version > v


# ------------------------------------------------------------------ random: statistics
N = 200_000


def _moments(t) -> tuple[float, float, float, float]:
    a = t.detach().numpy().astype(np.float64).ravel()
    return a.min(), a.max(), a.mean(), a.std()


def _check_normal(t, mean, std):
    _, _, m, s = _moments(t)
    n = t.numel()
    assert abs(m - mean) < 5 * std / math.sqrt(n)
    assert abs(s - std) < 5 * std / math.sqrt(2 * n)


def _check_uniform(t, lo, hi):
    mn, mx, m, s = _moments(t)
    width, n = hi - lo, t.numel()
    assert lo <= mn and mx <= hi and mn - lo < 1e-3 * width and hi - mx < 1e-3 * width
    assert abs(m - (lo + hi) / 2) < 5 * width / math.sqrt(12 * n)
    assert abs(s - width / math.sqrt(12)) < 5 * width / math.sqrt(12 * n)


def test_uniform_and_normal():
    _check_uniform(nt.nn.init.uniform_(nt.empty(N), -3.0, 0.5), -3.0, 0.5)
    _check_normal(nt.nn.init.normal_(nt.empty(N), 1.5, 0.3), 1.5, 0.3)


@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
@pytest.mark.parametrize("nonlinearity, a", [("leaky_relu", 0), ("relu", 0), ("leaky_relu", 0.3)])
def test_kaiming(mode, nonlinearity, a):
    shape = (500, 40, 3, 3)
    fan = torch.nn.init._calculate_correct_fan(torch.empty(shape), mode)
    std = torch.nn.init.calculate_gain(nonlinearity, a) / math.sqrt(fan)
    init = nt.nn.init
    t = init.kaiming_uniform_(nt.empty(shape), a, mode, nonlinearity)
    _check_uniform(t, -math.sqrt(3) * std, math.sqrt(3) * std)
    _check_normal(init.kaiming_normal_(nt.empty(shape), a, mode, nonlinearity), 0.0, std)


@pytest.mark.parametrize("gain", [1.0, 2.5])
def test_xavier(gain):
    shape = (300, 200, 3)
    fan_in, fan_out = 200 * 3, 300 * 3
    std = gain * math.sqrt(2.0 / (fan_in + fan_out))
    t = nt.nn.init.xavier_uniform_(nt.empty(shape), gain)
    _check_uniform(t, -math.sqrt(3) * std, math.sqrt(3) * std)
    _check_normal(nt.nn.init.xavier_normal_(nt.empty(shape), gain), 0.0, std)


def _truncated_moments(mean, std, a, b):
    """Mean and std of N(mean, std**2) truncated to [a, b] (the closed form)."""
    al, be = (a - mean) / std, (b - mean) / std
    pdf = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2  # noqa: E731
    z = cdf(be) - cdf(al)
    m = (pdf(al) - pdf(be)) / z
    var = 1 + (al * pdf(al) - be * pdf(be)) / z - m * m
    return mean + std * m, std * math.sqrt(var)


@pytest.mark.parametrize(
    "mean, std, a, b",
    [(0.0, 1.0, -2.0, 2.0), (0.5, 2.0, -1.0, 1.5), (0.0, 1.0, 1.0, 1.2), (0.0, 1.0, 3.0, 4.0)],
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_trunc_normal(mean, std, a, b, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = nt.nn.init.trunc_normal_(nt.empty(N, dtype=getattr(nt, dtype)), mean, std, a, b)
    assert t.dtype == getattr(nt, dtype)
    mn, mx, m, s = _moments(t)
    want_m, want_s = _truncated_moments(mean, std, a, b)
    assert a <= mn and mx <= b
    assert abs(m - want_m) < 5 * want_s / math.sqrt(N)
    assert abs(s - want_s) < 5 * want_s / math.sqrt(N / 2)


def test_trunc_normal_warns_like_torch():
    def warned(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.nn.init.trunc_normal_(lib.empty(10), mean=5.0, std=1.0, a=0.0, b=2.0)
        return [(x.category, str(x.message)) for x in w]

    ours, theirs = run_both(warned)
    assert ours == theirs and len(ours) == 1


@pytest.mark.parametrize("shape", [(6, 6), (4, 9), (9, 4), (5, 2, 3, 2)])
@pytest.mark.parametrize("gain", [1.0, 3.0])
def test_orthogonal(shape, gain):
    t = nt.nn.init.orthogonal_(nt.empty(shape, dtype=nt.float64), gain)
    q = t.reshape(shape[0], -1).numpy() / gain
    small = q @ q.T if q.shape[0] <= q.shape[1] else q.T @ q
    np.testing.assert_allclose(small, np.eye(min(q.shape)), atol=1e-12)


def test_orthogonal_is_haar():
    """The sign fix makes Q uniform: the mean of many 3x3 draws is the zero matrix (without
    it, the diagonal of R is positive and Q's diagonal has a positive mean)."""
    g = nt.Generator().manual_seed(0)
    qs = np.stack([nt.nn.init.orthogonal_(nt.empty(3, 3), generator=g).numpy() for _ in range(400)])
    assert np.abs(qs.mean(0)).max() < 0.15


@pytest.mark.parametrize("sparsity", [0.0, 0.1, 0.45, 1.0])
def test_sparse_zero_counts(sparsity):
    rows, cols, std = 20, 300, 0.5
    t = nt.nn.init.sparse_(nt.empty(rows, cols, dtype=nt.float64), sparsity, std)
    zeros = (t.numpy() == 0).sum(0)
    assert (zeros == math.ceil(sparsity * rows)).all()
    nonzero = t.numpy()[t.numpy() != 0]
    if nonzero.size > 1000:
        assert abs(nonzero.std() - std) < 5 * std / math.sqrt(nonzero.size / 2)
    # the zeros land on different rows in different columns
    if 0 < sparsity < 1:
        assert len({tuple(np.flatnonzero(c == 0)) for c in t.numpy().T}) > 1


# ------------------------------------------------------------------ generator, edge cases
DRAWS = [
    lambda t, g: nt.nn.init.uniform_(t, generator=g),
    lambda t, g: nt.nn.init.normal_(t, generator=g),
    lambda t, g: nt.nn.init.trunc_normal_(t, generator=g),
    lambda t, g: nt.nn.init.xavier_uniform_(t, generator=g),
    lambda t, g: nt.nn.init.xavier_normal_(t, generator=g),
    lambda t, g: nt.nn.init.kaiming_uniform_(t, generator=g),
    lambda t, g: nt.nn.init.kaiming_normal_(t, generator=g),
    lambda t, g: nt.nn.init.orthogonal_(t, generator=g),
    lambda t, g: nt.nn.init.sparse_(t, 0.3, generator=g),
]


@pytest.mark.parametrize("draw", DRAWS)
def test_generator_makes_draws_reproducible(draw):
    a = draw(nt.empty(5, 4), nt.Generator().manual_seed(3)).numpy()
    b = draw(nt.empty(5, 4), nt.Generator().manual_seed(3)).numpy()
    c = draw(nt.empty(5, 4), nt.Generator().manual_seed(4)).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("name", ["kaiming_uniform_", "kaiming_normal_"])
def test_zero_element_kaiming_warns(name):
    def prog(lib):
        t = lib.empty(0, 3)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = getattr(lib.nn.init, name)(t)
        return out is t, [str(x.message) for x in w]

    assert_same(prog)


def test_orthogonal_of_an_empty_tensor_is_a_no_op():
    assert_same(lambda lib: lib.nn.init.orthogonal_(lib.empty(0, 3)).shape)


def test_deprecated_aliases_warn():
    def prog(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = lib.nn.init.constant(lib.empty(2), 3.0)
        return out, [(x.category, str(x.message)) for x in w]

    assert_same(prog)
