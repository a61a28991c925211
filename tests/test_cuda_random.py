"""Random numbers on the GPU: every draw is made on the device by the GPU's own generator
(a seed and a Philox offset, as PyTorch's), reproducible after seeding and after restoring a
state, with the statistics of its distribution and PyTorch's errors.

The ``cuda`` fixture runs each test on a real GPU when there is one, else on the CPU
stand-in for CuPy in strict mode (a NumPy call on device data fails the test)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from twolibs import assert_same_error

import numtorch as nt
from numtorch._core.device import _cupy
from numtorch.func import vmap


def _host(t) -> np.ndarray:
    return t.cpu().numpy()


def _need_two_gpus() -> None:
    """A real machine with one GPU has no cuda:1 (the stand-in has two)."""
    if nt.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")


def _on_gpu(t, index: int = 0) -> None:
    """t's data is a device array of the GPU ``index``."""
    assert t.device == nt.device("cuda", index)
    assert not isinstance(t._data, np.ndarray) and t._data.device.id == index


def _offset(index: int = 0) -> int:
    return int(np.frombuffer(_host(nt.cuda.get_rng_state(index)).tobytes(), "<i8")[1])


# Every way of drawing, each on a fresh GPU tensor (name -> draw).
DRAWS = {
    "rand": lambda: nt.rand(5, 3, device="cuda"),
    "randn": lambda: nt.randn(7, device="cuda", dtype=nt.float64),
    "randint": lambda: nt.randint(-3, 9, (6,), device="cuda"),
    "randperm": lambda: nt.randperm(9, device="cuda"),
    "rand_like": lambda: nt.rand_like(nt.zeros(4, device="cuda")),
    "randn_like": lambda: nt.randn_like(nt.zeros(4, device="cuda", dtype=nt.complex64)),
    "randint_like": lambda: nt.randint_like(nt.zeros(4, device="cuda"), 5),
    "normal": lambda: nt.normal(0.0, 2.0, (5,), device="cuda"),
    "normal_tensor": lambda: nt.normal(nt.zeros(3, device="cuda"), nt.ones(3, device="cuda")),
    "uniform_": lambda: nt.empty(5, device="cuda").uniform_(-1, 1),
    "normal_": lambda: nt.empty(5, device="cuda").normal_(2, 3),
    "bernoulli": lambda: nt.bernoulli(nt.full((6,), 0.3, device="cuda")),
    "bernoulli_": lambda: nt.empty(6, device="cuda").bernoulli_(0.5),
    "multinomial": lambda: nt.multinomial(nt.tensor([0.2, 0.5, 0.3], device="cuda"), 2),
    "multinomial_replacement": lambda: nt.multinomial(
        nt.tensor([[0.2, 0.8], [1.0, 1.0]], device="cuda"), 5, True
    ),
    "poisson": lambda: nt.poisson(nt.tensor([0.0, 0.5, 4.0, 200.0], device="cuda")),
    "binomial": lambda: nt.binomial(
        nt.tensor([3.0, 10.0], device="cuda"), nt.tensor([0.5, 0.2], device="cuda")
    ),
    "exponential_": lambda: nt.empty(5, device="cuda").exponential_(2.0),
    "geometric_": lambda: nt.empty(5, device="cuda").geometric_(0.4),
    "cauchy_": lambda: nt.empty(5, device="cuda").cauchy_(),
    "log_normal_": lambda: nt.empty(5, device="cuda").log_normal_(),
    "random_": lambda: nt.empty(5, device="cuda", dtype=nt.int32).random_(0, 7),
    "dropout": lambda: nt.nn.functional.dropout(nt.ones(8, device="cuda"), 0.5),
    "dropout_module": lambda: nt.nn.Dropout(0.2)(nt.ones(8, device="cuda")),
    "alpha_dropout": lambda: nt.nn.functional.alpha_dropout(nt.ones(8, device="cuda"), 0.3, True),
    "dropout2d": lambda: nt.nn.functional.dropout2d(nt.ones(2, 3, 4, 4, device="cuda"), 0.5),
    "standard_gamma": lambda: nt._standard_gamma(nt.tensor([0.5, 2.0, 9.0], device="cuda")),
    "dirichlet": lambda: nt._sample_dirichlet(nt.ones(2, 3, device="cuda")),
    "gamma_dist": lambda: nt.distributions.Gamma(
        nt.full((4,), 2.0, device="cuda"), nt.ones(4, device="cuda")
    ).rsample(),
    "vmap_randn": lambda: vmap(lambda x: nt.randn(3, device="cuda") + x, randomness="different")(
        nt.zeros(4, 1, device="cuda")
    ),
}


@pytest.mark.parametrize("name", DRAWS)
def test_every_draw_is_made_by_the_gpu_generator(cuda, name):
    """The result is device data, the GPU generator moved on and the CPU's did not (nothing
    was drawn on the host), and seeding the GPU alone reproduces the result."""
    nt.manual_seed(11)
    cpu_state = _host(nt.get_rng_state())
    first = DRAWS[name]()
    _on_gpu(first)
    assert _offset() > 0
    np.testing.assert_array_equal(_host(nt.get_rng_state()), cpu_state)
    nt.cuda.manual_seed(11)
    np.testing.assert_array_equal(_host(DRAWS[name]()), _host(first))


def test_draws_are_the_device_generators_numbers(cuda):
    """rand's data is what cupy.random's Philox gives for the GPU generator's (seed, offset)."""
    cp = _cupy()
    nt.cuda.manual_seed(5)
    got = [nt.rand(6, device="cuda"), nt.rand(2, 3, device="cuda", dtype=nt.float64)]
    for offset, t in enumerate(got):
        g = cp.random.default_rng(cp.random.Philox4x3210([5, 4 * offset]))
        want = g.random(t.shape, dtype=t.dtype.np)
        assert bool((t._data == want).all())
    assert _offset() == 8


@pytest.mark.parametrize("dtype", [nt.float16, nt.float32, nt.float64, nt.complex64, nt.complex128])
def test_float_dtypes_on_the_gpu(cuda, dtype):
    u, z = nt.rand(4000, device="cuda", dtype=dtype), nt.randn(4000, device="cuda", dtype=dtype)
    assert u.dtype == z.dtype == dtype
    _on_gpu(u), _on_gpu(z)
    parts = (u.real, u.imag) if dtype.is_complex else (u,)
    for p in parts:
        h = _host(p).astype(np.float64)
        assert h.min() >= 0 and h.max() < 1
        assert abs(h.mean() - 0.5) < 5 * math.sqrt(1 / 12 / h.size)
    # a complex normal has unit variance split between its parts
    assert abs(float(_host((z * z.conj()).real.double()).mean()) - 1) < 0.1


@pytest.mark.parametrize("dtype", [nt.uint8, nt.int8, nt.int16, nt.int32, nt.int64, nt.float32])
def test_integer_draws_on_the_gpu(cuda, dtype):
    r = nt.randint(2, 9, (3000,), device="cuda", dtype=dtype)
    assert r.dtype == dtype
    _on_gpu(r)
    assert set(np.unique(_host(r)).tolist()) == set(range(2, 9))
    p = nt.randperm(50, device="cuda", dtype=dtype)
    assert p.dtype == dtype
    assert sorted(_host(p).tolist()) == list(range(50))


def _close(sample: np.ndarray, mean: float, var: float, k: float = 5.0) -> None:
    """Sample mean within k standard errors of ``mean``; sample variance within k of its
    standard error, from the fourth moment estimated on the sample."""
    n = sample.size
    assert abs(sample.mean() - mean) < k * math.sqrt(var / n), (sample.mean(), mean)
    m4 = ((sample - sample.mean()) ** 4).mean()
    assert abs(sample.var() - var) < k * math.sqrt(max(m4 - var**2, 1e-12) / n), (
        sample.var(),
        var,
    )


N = 20000
STATS = {
    # name: (draw of N samples, mean, variance)
    "rand": (lambda: nt.rand(N, device="cuda", dtype=nt.float64), 0.5, 1 / 12),
    "randn": (lambda: nt.randn(N, device="cuda", dtype=nt.float64), 0.0, 1.0),
    "normal_": (lambda: nt.empty(N, device="cuda").normal_(3.0, 2.0), 3.0, 4.0),
    "uniform_": (lambda: nt.empty(N, device="cuda").uniform_(-2.0, 4.0), 1.0, 3.0),
    "randint": (lambda: nt.randint(0, 10, (N,), device="cuda"), 4.5, 99 / 12),
    "bernoulli": (lambda: nt.empty(N, device="cuda").bernoulli_(0.3), 0.3, 0.21),
    "exponential_": (lambda: nt.empty(N, device="cuda").exponential_(2.0), 0.5, 0.25),
    "geometric_": (lambda: nt.empty(N, device="cuda").geometric_(0.25), 4.0, 12.0),
    "poisson": (lambda: nt.poisson(nt.full((N,), 3.5, device="cuda")), 3.5, 3.5),
    "binomial": (
        lambda: nt.binomial(nt.full((N,), 20.0, device="cuda"), nt.full((N,), 0.3, device="cuda")),
        6.0,
        4.2,
    ),
    "log_normal_": (
        lambda: nt.empty(N, device="cuda", dtype=nt.float64).log_normal_(0.0, 0.25),
        math.exp(0.25**2 / 2),
        (math.exp(0.25**2) - 1) * math.exp(0.25**2),
    ),
    "standard_gamma": (lambda: nt._standard_gamma(nt.full((N,), 3.0, device="cuda")), 3.0, 3.0),
    "dropout": (lambda: nt.nn.functional.dropout(nt.ones(N, device="cuda"), 0.2), 1.0, 0.25),
    "multinomial": (
        lambda: nt.multinomial(nt.tensor([1.0, 2.0, 7.0], device="cuda"), N, True),
        0.2 + 1.4,
        0.2 + 0.7 * 4 - 1.6**2,
    ),
}


@pytest.mark.parametrize("name", STATS)
def test_statistics_on_the_gpu(cuda, name):
    draw, mean, var = STATS[name]
    nt.manual_seed(2024)
    sample = draw()
    _on_gpu(sample)
    _close(_host(sample).astype(np.float64), mean, var)


def test_cauchy_and_randperm_statistics_on_the_gpu(cuda):
    nt.manual_seed(3)
    c = _host(nt.empty(N, device="cuda", dtype=nt.float64).cauchy_(1.0, 2.0))
    quartiles = np.quantile(c, [0.25, 0.5, 0.75])  # median 1, quartiles 1 -+ 2
    np.testing.assert_allclose(quartiles, [-1.0, 1.0, 3.0], atol=0.15)
    perms = _host(nt.stack([nt.randperm(4, device="cuda") for _ in range(2400)]))
    first = np.bincount(perms[:, 0], minlength=4) / 2400  # each value first a quarter of the time
    assert np.abs(first - 0.25).max() < 5 * math.sqrt(0.25 * 0.75 / 2400)


def test_multinomial_without_replacement_on_the_gpu(cuda):
    nt.manual_seed(8)
    w = nt.tensor([[0.0, 1.0, 3.0, 0.0], [5.0, 0.0, 0.0, 5.0]], device="cuda")
    draws = _host(nt.stack([nt.multinomial(w, 2) for _ in range(500)]))
    assert {tuple(sorted(r)) for r in draws[:, 0]} == {(1, 2)}
    assert {tuple(sorted(r)) for r in draws[:, 1]} == {(0, 3)}
    first2 = (draws[:, 0, 0] == 2).mean()  # the heavier category first 3/4 of the time
    assert abs(first2 - 0.75) < 5 * math.sqrt(0.75 * 0.25 / 500)


# ------------------------------------------------------------------ seeds and states
def test_states_restore_the_draws(cuda):
    nt.manual_seed(1)
    state = nt.cuda.get_rng_state()
    assert state.dtype == nt.uint8 and state.shape == (16,) and state.device.type == "cpu"
    a = nt.randn(5, device="cuda")
    assert _offset() == 4  # one draw moves the Philox offset by 4, as PyTorch's do
    nt.cuda.set_rng_state(state)
    np.testing.assert_array_equal(_host(nt.randn(5, device="cuda")), _host(a))
    # a seed alone (8 bytes) is a state with offset 0, as PyTorch takes it
    nt.cuda.set_rng_state(state[:8].clone())
    np.testing.assert_array_equal(_host(nt.randn(5, device="cuda")), _host(a))
    b = nt.rand(3, device="cuda")
    with nt.random.fork_rng(devices=[0], device_type="cuda"):
        inside = nt.rand(3, device="cuda")
    np.testing.assert_array_equal(_host(nt.rand(3, device="cuda")), _host(inside))
    assert not np.array_equal(_host(b), _host(inside))


def test_one_generator_per_gpu(cuda):
    _need_two_gpus()
    nt.manual_seed(4)
    assert nt.cuda.initial_seed() == 4
    states = nt.cuda.get_rng_state_all()
    assert len(states) == nt.cuda.device_count() >= 2
    a0, a1 = nt.rand(4, device="cuda:0"), nt.rand(4, device="cuda:1")
    _on_gpu(a0, 0), _on_gpu(a1, 1)
    assert _offset(0) == _offset(1) == 4  # each GPU's draw moved its own generator only
    np.testing.assert_array_equal(_host(a0), _host(a1))  # both seeded 4 by manual_seed
    nt.cuda.manual_seed(9)  # the current GPU (0) only
    assert nt.cuda.initial_seed() == 9 and _offset(0) == 0 and _offset(1) == 4
    nt.cuda.manual_seed_all(9)
    assert _offset(1) == 0
    np.testing.assert_array_equal(
        _host(nt.rand(4, device="cuda:0")), _host(nt.rand(4, device="cuda:1"))
    )
    nt.cuda.set_rng_state_all(states)
    np.testing.assert_array_equal(_host(nt.rand(4, device="cuda:1")), _host(a1))
    nt.cuda.seed_all()
    s = nt.cuda.initial_seed()
    assert [
        int(np.frombuffer(_host(t).tobytes(), "<u8")[0]) for t in nt.cuda.get_rng_state_all()
    ] == [
        s,
        s,
    ]
    nt.cuda.seed()
    assert nt.cuda.initial_seed() != s  # (a 63-bit random seed)
    with pytest.raises(IndexError):
        nt.cuda.get_rng_state(nt.cuda.device_count())


def test_fork_rng_forks_every_gpu(cuda):
    _need_two_gpus()
    nt.manual_seed(0)
    before = [_host(s) for s in nt.cuda.get_rng_state_all()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "CUDA reports that you have 2 available devices"
        with nt.random.fork_rng(device_type="cuda"):
            nt.rand(3, device="cuda:0"), nt.rand(3, device="cuda:1"), nt.rand(3)
    after = [_host(s) for s in nt.cuda.get_rng_state_all()]
    for b, a in zip(before, after):
        np.testing.assert_array_equal(a, b)


def test_cuda_generator_objects(cuda):
    _need_two_gpus()
    g = nt.Generator(device="cuda")
    assert isinstance(g, nt.Generator) and g.device == nt.device("cuda", 0)
    assert nt.Generator(device="cuda:1").device == nt.device("cuda", 1)
    g.manual_seed(21)
    assert g.initial_seed() == 21 and g.get_offset() == 0
    default_offset = _offset()
    a = nt.randn(6, device="cuda", generator=g)
    assert g.get_offset() == 4 and _offset() == default_offset  # the default one is untouched
    g.set_offset(0)
    np.testing.assert_array_equal(_host(nt.randn(6, device="cuda", generator=g)), _host(a))
    clone = g.clone_state()
    np.testing.assert_array_equal(
        _host(nt.rand(3, device="cuda", generator=clone)),
        _host(nt.rand(3, device="cuda", generator=g)),
    )
    # a generator drawing on another GPU than its own: its numbers, on the tensor's GPU
    g.manual_seed(21)
    b = nt.randn(6, device="cuda:1", generator=g)
    _on_gpu(b, 1)
    np.testing.assert_array_equal(_host(b), _host(a))
    # in-place and tensor-argument draws take the generator too
    g.manual_seed(2)
    x = nt.empty(5, device="cuda").uniform_(generator=g)
    g.manual_seed(2)
    np.testing.assert_array_equal(_host(nt.rand(5, device="cuda", generator=g)), _host(x))


def _raises(fn, kind, text: str) -> None:
    with pytest.raises(kind) as info:
        fn()
    assert str(info.value) == text


def test_errors_as_pytorch(cuda):
    cpu_gen, gpu_gen = nt.Generator(), nt.Generator(device="cuda")
    want_cuda = "Expected a 'cuda' device type for generator but found 'cpu'"
    want_cpu = "Expected a 'cpu' device type for generator but found 'cuda'"
    _raises(lambda: nt.rand(2, device="cuda", generator=cpu_gen), RuntimeError, want_cuda)
    _raises(lambda: nt.randperm(4, device="cuda", generator=cpu_gen), RuntimeError, want_cuda)
    _raises(lambda: nt.zeros(2, device="cuda").normal_(generator=cpu_gen), RuntimeError, want_cuda)
    _raises(lambda: nt.rand(2, generator=gpu_gen), RuntimeError, want_cpu)
    _raises(lambda: nt.zeros(2).exponential_(generator=gpu_gen), RuntimeError, want_cpu)
    _raises(
        lambda: gpu_gen.set_state(nt.zeros(12, dtype=nt.uint8)),
        RuntimeError,
        "RNG state is wrong size",
    )
    _raises(lambda: gpu_gen.set_offset(6), RuntimeError, "offset must be a multiple of 4")
    bad = nt.zeros(16, dtype=nt.uint8)
    bad[8] = 2  # offset 2
    _raises(lambda: nt.cuda.set_rng_state(bad), RuntimeError, "offset must be a multiple of 4")
    _raises(
        lambda: gpu_gen.set_state(nt.zeros(16)), TypeError, "RNG state must be a torch.ByteTensor"
    )
    on_gpu = nt.zeros(16, dtype=nt.uint8, device="cuda")
    _raises(lambda: gpu_gen.set_state(on_gpu), TypeError, "RNG state must be a torch.ByteTensor")
    _raises(lambda: cpu_gen.get_offset(), RuntimeError, "CPU Generator does not use offset")


def test_vmap_randomness_on_the_gpu(cuda):
    x = nt.zeros(4, 3, device="cuda")
    different = vmap(lambda r: r + nt.randn(3, device="cuda"), randomness="different")(x)
    same = vmap(lambda r: r + nt.randn(3, device="cuda"), randomness="same")(x)
    _on_gpu(different), _on_gpu(same)
    assert len({tuple(row) for row in _host(different).tolist()}) == 4
    assert len({tuple(row) for row in _host(same).tolist()}) == 1
    perms = vmap(lambda r: nt.randperm(5, device="cuda") + r, randomness="different")(
        nt.zeros(6, 1, device="cuda", dtype=nt.int64)
    )
    assert all(sorted(p) == list(range(5)) for p in _host(perms).tolist())
    # chunks of a 'same' vmap draw what the first chunk drew
    chunked = vmap(lambda r: r + nt.rand(2, device="cuda"), randomness="same", chunk_size=2)(
        nt.zeros(5, 2, device="cuda")
    )
    assert len({tuple(row) for row in _host(chunked).tolist()}) == 1
    with pytest.raises(RuntimeError, match="randomness"):
        vmap(lambda r: r + nt.rand(3, device="cuda"))(x)


# ------------------------------------------------------------------ without a GPU
@pytest.mark.skipif(nt.cuda.is_available(), reason="PyTorch's CPU-only behaviour")
def test_cuda_random_without_a_gpu_as_torch():
    for lib in (nt, torch):
        assert lib.cuda.get_rng_state_all() == []
        assert lib.cuda.set_rng_state_all([]) is None
        assert lib.cuda.seed() is None and lib.cuda.seed_all() is None
        assert lib.cuda.manual_seed(3) is None and lib.cuda.manual_seed_all(3) is None
        assert lib.cuda.set_rng_state(lib.zeros(16, dtype=lib.uint8)) is None
    assert_same_error(lambda T: T.cuda.get_rng_state())
    assert_same_error(lambda T: T.cuda.get_rng_state(0))
    assert_same_error(lambda T: T.cuda.initial_seed())
