"""Random ops under vmap: the randomness modes ('error', 'same', 'different'), nesting,
chunking, batched tensor arguments, in-place draws, and the *_like factories.

Every case returns its draw (the random part of its output, e.g. ``normal(x, 1) - x``) so
that 'same' means equal slices and 'different' means distinct slices whatever the inputs.
The fallback is off: every op involved must have a batch rule.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from twolibs import assert_same

import numtorch as nt
from numtorch.func import _set_vmap_fallback_enabled
from numtorch.func._batched import BatchedTensor

F = nt.nn.functional
RANDOM_ERROR = (
    "vmap: called random operation while in randomness error mode. Please either use the "
    "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
    "of vmap"
)
INPLACE_DIFFERENT = "vmap: Cannot ask for different inplace randomness on an unbatched tensor"
SAME_BATCHED = (
    "Vmap does not currently support same randomness with a batched tensor input. Please file "
    "an issue with functorch"
)

CASES = {
    "rand": lambda x: nt.rand(4, 3),
    "randn": lambda x: nt.randn(4, 3, dtype=nt.float64),
    "randint": lambda x: nt.randint(0, 10**6, (4, 3)),
    "randperm": lambda x: nt.randperm(12),
    "normal_floats": lambda x: nt.normal(0.0, 1.0, (4, 3)),
    "rand_like": lambda x: nt.rand_like(x),
    "randn_like": lambda x: nt.randn_like(x),
    "randint_like": lambda x: nt.randint_like(x, 10**6),
    "normal_mean": lambda x: nt.normal(x, 1.0) - x,
    "normal_std": lambda x: nt.normal(0.0, x.abs() + 1) / (x.abs() + 1),
    "normal_both": lambda x: (nt.normal(x, x.abs() + 1) - x) / (x.abs() + 1),
    "bernoulli": lambda x: nt.bernoulli(nt.full_like(x, 0.5)),
    "bernoulli_p": lambda x: nt.bernoulli(x, 0.5),
    "bernoulli_method": lambda x: nt.zeros_like(x).add(0.5).bernoulli(),
    "uniform_": lambda x: x.clone().uniform_(-1, 1),
    "normal_": lambda x: x.clone().normal_(),
    "bernoulli_": lambda x: x.clone().bernoulli_(0.5),
    "bernoulli_tensor_": lambda x: x.clone().bernoulli_(nt.full((3,), 0.5)),
    "exponential_": lambda x: x.clone().exponential_(),
    "random_": lambda x: x.clone().random_(0, 10**6),
    "dropout": lambda x: F.dropout(x, 0.5) / x,
    "dropout_inplace": lambda x: F.dropout(x.clone(), 0.5, inplace=True) / x,
    "torch_dropout": lambda x: nt.dropout(x, 0.5, True) / x,
}
IDS = list(CASES)
# The cases whose random op takes a batched tensor (a mean, a std, a probability or the
# tensor bernoulli draws from), which PyTorch refuses under 'same'.
SAME_REFUSED = {
    "normal_mean",
    "normal_std",
    "normal_both",
    "bernoulli",
    "bernoulli_p",
    "bernoulli_method",
}
B = 3


def _same(name, *args, **kw):
    """vmap(CASES[name], randomness='same') at args, or None where PyTorch refuses it (after
    checking the refusal is PyTorch's)."""
    f = nt.vmap(CASES[name], randomness="same", **kw)
    if name not in SAME_REFUSED:
        return f(*args)
    with pytest.raises(RuntimeError, match=re.escape(SAME_BATCHED)):
        f(*args)
    return None


@pytest.fixture(autouse=True)
def no_fallback():
    _set_vmap_fallback_enabled(False)
    nt.manual_seed(0)
    yield
    _set_vmap_fallback_enabled(True)


def _x(*batch, seed=0):
    return nt.tensor(np.random.default_rng(seed).standard_normal((*batch, 4, 3)))


def _slices(out, n):
    return [out[b].numpy() for b in range(n)]


def _all_distinct(slices):
    for i in range(len(slices)):
        for j in range(i):
            assert not np.array_equal(slices[i], slices[j]), (i, j)


def _all_equal(slices):
    # Up to rounding: a case's draw may be computed back from its output (normal(x, 1) - x).
    for s in slices[1:]:
        np.testing.assert_allclose(s, slices[0], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", IDS)
def test_error_mode_raises_torch_text(name):
    with pytest.raises(RuntimeError, match=re.escape(RANDOM_ERROR)):
        nt.vmap(CASES[name])(_x(B))


def test_error_text_is_torchs():
    with pytest.raises(RuntimeError) as want:
        torch.func.vmap(lambda x: torch.rand_like(x))(torch.zeros(2, 3))
    assert str(want.value) == RANDOM_ERROR


@pytest.mark.parametrize("name", IDS)
def test_different_draws_differ_per_element(name):
    out = nt.vmap(CASES[name], randomness="different")(_x(B))
    assert out.shape[0] == B
    _all_distinct(_slices(out, B))


@pytest.mark.parametrize("name", IDS)
def test_same_draws_are_equal_per_element(name):
    out = _same(name, _x(B))
    if out is not None:
        assert out.shape[0] == B
        _all_equal(_slices(out, B))


@pytest.mark.parametrize("name", IDS)
def test_in_dim_last(name):
    x = _x(B).movedim(0, -1)
    same = _same(name, x, in_dims=-1)
    if same is not None:
        _all_equal(_slices(same, B))
    diff = nt.vmap(CASES[name], in_dims=-1, randomness="different")(x)
    _all_distinct(_slices(diff, B))


@pytest.mark.parametrize("name", IDS)
@pytest.mark.parametrize("outer", ["same", "different"])
@pytest.mark.parametrize("inner", ["same", "different"])
def test_nested(name, outer, inner):
    """Inner 'same' draws once per outer element; outer 'same' repeats the inner draws for
    every outer element (as torch.func.vmap)."""
    b1, b2 = 2, 3
    f = nt.vmap(nt.vmap(CASES[name], randomness=inner), randomness=outer)
    if name in SAME_REFUSED and "same" in (outer, inner):  # (batched at both levels)
        with pytest.raises(RuntimeError, match=re.escape(SAME_BATCHED)):
            f(_x(b1, b2))
        return
    out = f(_x(b1, b2))
    assert tuple(out.shape[:2]) == (b1, b2)
    grid = [[out[i, j].numpy() for j in range(b2)] for i in range(b1)]
    for i in range(b1):
        (_all_equal if inner == "same" else _all_distinct)(grid[i])
    for j in range(b2):
        column = [grid[i][j] for i in range(b1)]
        (_all_equal if outer == "same" else _all_distinct)(column)


@pytest.mark.parametrize(
    "outer,inner",
    [("error", "same"), ("error", "different"), ("same", "error"), ("different", "error")],
)
def test_nested_error_mode_anywhere_raises(outer, inner):
    f = nt.vmap(nt.vmap(CASES["randn_like"], randomness=inner), randomness=outer)
    with pytest.raises(RuntimeError, match=re.escape(RANDOM_ERROR)):
        f(_x(2, 3))


@pytest.mark.parametrize("name", IDS)
def test_chunks(name):
    n = 5
    same = _same(name, _x(n), chunk_size=2)
    if same is not None:
        _all_equal(_slices(same, n))
    diff = nt.vmap(CASES[name], randomness="different", chunk_size=2)(_x(n))
    _all_distinct(_slices(diff, n))


def test_different_values_are_valid_draws():
    n = 2000
    z = nt.vmap(lambda x: nt.randn(50, dtype=nt.float64), randomness="different")(nt.zeros(n))
    z = z.numpy()
    assert z.shape == (n, 50)
    assert abs(z.mean()) < 5 / np.sqrt(z.size) and abs(z.var() - 1) < 5 * np.sqrt(2 / z.size)
    # Independent elements: the correlation of neighbouring rows is about zero.
    r = np.corrcoef(z[:-1].ravel(), z[1:].ravel())[0, 1]
    assert abs(r) < 5 / np.sqrt(z[1:].size)
    perms = nt.vmap(lambda x: nt.randperm(7), randomness="different")(nt.zeros(50)).numpy()
    for p in perms:
        np.testing.assert_array_equal(np.sort(p), np.arange(7))
    assert len({tuple(p) for p in perms}) > 40
    k = nt.vmap(lambda x: nt.randint(3, 7, (40,)), randomness="different")(nt.zeros(50)).numpy()
    assert k.min() == 3 and k.max() == 6


def test_batched_probabilities_draw_with_their_own_frequencies():
    """bernoulli(p) with p batched: 'different' draws follow each element's p; 'same' is
    PyTorch's refusal (a batched tensor input)."""
    p = nt.tensor(np.random.default_rng(1).uniform(size=(3, 1000)))
    with pytest.raises(RuntimeError, match=re.escape(SAME_BATCHED)):
        nt.vmap(nt.bernoulli, randomness="same")(p)
    diff = nt.vmap(nt.bernoulli, randomness="different")(p).numpy()
    assert not np.array_equal(diff[0], diff[2])
    many = nt.tensor(np.full((4000, 3), [0.1, 0.5, 0.9]))
    freq = nt.vmap(nt.bernoulli, randomness="different")(many).numpy().mean(0)
    np.testing.assert_allclose(freq, [0.1, 0.5, 0.9], atol=5 * np.sqrt(0.25 / 4000))


def test_normal_with_batched_mean_and_std():
    mean = nt.tensor(np.arange(4.0) * 100)
    std = nt.tensor([0.5, 1.0, 2.0, 4.0])
    big = nt.vmap(lambda m, s: nt.normal(m.expand(5000), s), randomness="different")(mean, std)
    big = big.numpy()
    np.testing.assert_allclose(big.mean(1), mean.numpy(), atol=5 * 4 / np.sqrt(5000))
    np.testing.assert_allclose(big.std(1), std.numpy(), rtol=0.1)
    with pytest.raises(RuntimeError, match=re.escape(SAME_BATCHED)):
        nt.vmap(lambda m: nt.normal(m, 1.0), randomness="same")(mean)
    # in_dims=(0, None): a batched mean with an unbatched std tensor.
    m2 = nt.tensor(np.zeros((3, 2)))
    s2 = nt.tensor([1.0, 3.0])
    d = nt.vmap(nt.normal, in_dims=(0, None), randomness="different")(m2, s2)
    assert d.shape == (3, 2)
    _all_distinct(_slices(d, 3))


def test_inplace_different_on_unbatched_tensor_raises_torch_text():
    y, ty = nt.zeros(3), torch.zeros(3)
    with pytest.raises(RuntimeError) as want:
        torch.func.vmap(lambda x: ty.uniform_() + x, randomness="different")(torch.zeros(2, 3))
    with pytest.raises(RuntimeError) as got:
        nt.vmap(lambda x: y.uniform_() + x, randomness="different")(nt.zeros(2, 3))
    assert str(got.value) == str(want.value)
    assert str(got.value).startswith(INPLACE_DIFFERENT)
    # Batched only by the inner vmap: the outer 'different' level cannot batch the write.
    with pytest.raises(RuntimeError, match=INPLACE_DIFFERENT):
        nt.vmap(
            nt.vmap(lambda x, z: z.normal_() + x, in_dims=(0, 0), randomness="different"),
            in_dims=(0, None),
            randomness="different",
        )(nt.zeros(2, 3, 4), nt.zeros(3, 4))
    # 'same' writes one draw into the unbatched tensor.
    out = nt.vmap(lambda x: y.uniform_() + x, randomness="same")(nt.zeros(2, 3))
    np.testing.assert_array_equal(out.numpy()[0], y.numpy())
    np.testing.assert_array_equal(out.numpy()[1], y.numpy())


def test_inplace_draw_writes_into_the_batched_input():
    x = nt.zeros(3, 5)
    nt.vmap(lambda r: r.uniform_(2.0, 3.0), randomness="different")(x)
    v = x.numpy()
    assert v.min() >= 2 and v.max() < 3
    _all_distinct(list(v))


def test_dropout_per_sample_gradients():
    x = nt.tensor(np.random.default_rng(3).standard_normal((4, 6)), requires_grad=True)
    out = nt.vmap(lambda r: F.dropout(r, 0.5), randomness="different")(x)
    out.sum().backward()
    mask = out.detach().numpy() != 0
    np.testing.assert_array_equal(x.grad.numpy(), mask * 2.0)
    _all_distinct(list(mask))


def test_normal_backward_is_batchable():
    m = nt.tensor(np.zeros(3), requires_grad=True)
    s = nt.tensor(np.ones(3), requires_grad=True)
    out = nt.normal(m, s)
    v = nt.tensor(np.random.default_rng(0).standard_normal((5, 3)))
    gm, gs = nt.autograd.grad(out, (m, s), v, is_grads_batched=True)
    np.testing.assert_array_equal(gm.numpy(), np.zeros((5, 3)))
    np.testing.assert_array_equal(gs.numpy(), np.zeros((5, 3)))


def test_random_ops_without_a_batched_input_under_vmap():
    # Nothing batched reaches the op: the draw is still lifted to the vmap level.
    out = nt.vmap(lambda x: nt.rand(2) + 0 * x.sum(), randomness="different")(nt.zeros(4, 3))
    _all_distinct(_slices(out, 4))
    out = nt.vmap(lambda x: nt.rand(2), randomness="same", out_dims=0)(nt.zeros(4, 3))
    _all_equal(_slices(out, 4))


# ------------------------------------------------------------------ *_like factories
LIKE = {
    "zeros_like": lambda T, x: T.zeros_like(x),
    "ones_like": lambda T, x: T.ones_like(x),
    "empty_like_shape": lambda T, x: T.empty_like(x).fill_(1.0),  # values are unspecified
    "full_like": lambda T, x: T.full_like(x, 2.5),
    "full_like_int": lambda T, x: T.full_like(x, 7, dtype=T.int64),
    "zeros_like_dtype": lambda T, x: T.zeros_like(x, dtype=T.float32),
    "ones_like_plus": lambda T, x: T.ones_like(x) + x,
}


@pytest.mark.parametrize("name", LIKE)
@pytest.mark.parametrize("in_dim", [0, -1, 1])
def test_like_factories_match_torch(name, in_dim):
    a = np.random.default_rng(0).standard_normal((2, 3, 4))

    def prog(lib, t):
        return lib.func.vmap(lambda x: LIKE[name](lib, x), in_dims=in_dim)(t)

    assert_same(prog, a, rtol=0, atol=0)


def test_like_factories_are_batched_inside_vmap():
    seen = {}

    def f(x):
        z = nt.zeros_like(x)
        seen["z"] = (type(z), z.shape, z._bdim if isinstance(z, BatchedTensor) else None)
        return z

    nt.vmap(f, in_dims=1)(nt.ones(4, 3, 2))
    assert seen["z"][0] is BatchedTensor and tuple(seen["z"][1]) == (4, 2)
    nested = nt.vmap(nt.vmap(lambda x: nt.full_like(x, 3.0)))(nt.ones(2, 3, 5))
    np.testing.assert_array_equal(nested.numpy(), np.full((2, 3, 5), 3.0, np.float32))
