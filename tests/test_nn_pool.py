"""Pooling beyond the op database: PyTorch's argument checks word for word, the indices of
edge windows (padding, -inf, NaN), the public signatures, unpooling after overlapping
windows, and per-sample gradients through max_pool2d (the tutorial CNN's pool)."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
import torch
from twolibs import (
    arr,
    assert_close,
    assert_same,
    assert_same_error,
    assert_same_outcome,
    lib_arg,
    run_both,
)

import numtorch as nt

X4 = arr(2, 3, 5, 6)


def _pool(name, *a, **kw):
    return lambda lib, x: getattr(lib.nn.functional, name)(x, *a, **kw)


ERRORS = [
    ("max_pool2d", X4, (2,), {"padding": 2}),
    ("max_pool2d", X4, (3,), {"dilation": 2, "padding": 3}),
    ("max_pool2d", X4, (7,), {}),
    ("max_pool2d", X4, (2,), {"stride": 0}),
    ("max_pool2d", X4, ((2, 2, 2),), {}),
    ("max_pool2d", X4, (2,), {"dilation": 0}),
    ("max_pool2d", X4, (2,), {"padding": -1}),
    ("max_pool2d", arr(2, 5), (2,), {}),
    ("max_pool2d", arr(2, 0, 5, 5), (2,), {}),
    ("max_pool3d", arr(2, 2, 2), (2,), {}),
    ("max_pool3d", arr(1, 2, 3, 3, 3), (4,), {}),
    ("max_pool1d", arr(2, 5, 2, 2), (2,), {"return_indices": True}),
    ("max_pool1d", arr(2, 5, 2, 2), (2,), {}),
    ("max_pool1d", arr(1, 2, 6), (3, 1, 2, 2), {}),
    ("max_pool1d", arr(1, 2, 6), (3, 1, 2, 2), {"return_indices": True}),
    ("max_pool1d", arr(1, 2, 6), (2, 0), {}),
    ("max_pool1d", arr(1, 2, 6), (2,), {"dilation": 0}),
    ("max_pool1d", arr(1, 2, 6), (2,), {"padding": -1}),
    ("max_pool1d", arr(1, 2, 6), (7,), {}),
    ("max_pool1d", arr(1, 2, 6), ((2, 2),), {}),
    ("max_pool1d", arr(1, 2, 6), (2, (1, 1)), {}),
    ("max_pool2d", arr(1, 2, 6, 6), ((3, 1), 1, (2, 0), 2), {}),
    ("max_pool3d", arr(1, 2, 6, 6, 6), (3, 1, 2, 2), {}),
    ("avg_pool3d", arr(1, 2, 1, 7, 1), ((1, 3, 2), (1, 2, 2), (0, 1, 1)), {}),
    ("avg_pool2d", X4, (2,), {"padding": 2}),
    ("avg_pool2d", X4, ((2, 2, 2),), {}),
    ("avg_pool2d", X4, (2,), {"divisor_override": 0}),
    ("avg_pool1d", arr(5), (2,), {}),
    ("avg_pool1d", arr(1, 2, 5), ((2, 2),), {}),
    ("avg_pool1d", arr(1, 2, 5), (2,), {"padding": 2}),
    ("avg_pool3d", arr(2, 2, 2), (2,), {}),
    ("adaptive_avg_pool2d", X4, ((3, 4, 5),), {}),
    ("adaptive_avg_pool2d", X4, (-1,), {}),
    ("adaptive_avg_pool2d", arr(5, 5), (2,), {}),
    ("adaptive_avg_pool2d", arr(1, 2, 0, 3), (2,), {}),
    ("adaptive_avg_pool1d", arr(5), (2,), {}),
    ("adaptive_avg_pool1d", arr(2, 5), ((2, 3),), {}),
    ("adaptive_avg_pool1d", arr(2, 5), (None,), {}),
    ("adaptive_avg_pool3d", arr(2, 3, 3), (2,), {}),
    ("adaptive_max_pool2d", X4, ((3, 4, 5),), {}),
    ("adaptive_max_pool2d", arr(5, 5), (2,), {}),
    ("adaptive_max_pool2d", arr(2, 0, 5, 5), (2,), {}),
    ("adaptive_max_pool1d", arr(2, 5), ((2, 3),), {}),
    ("adaptive_max_pool3d", arr(1, 0, 2, 2, 3), (2,), {}),
    ("lp_pool2d", X4, (2, 7), {}),
]


@pytest.mark.parametrize("name,x,a,kw", ERRORS, ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)])
def test_argument_errors_match_torch(name, x, a, kw):
    assert_same_error(_pool(name, *a, **kw), x)


def _pooled(shape, k, s):
    x = arr(*shape)
    v, i = torch.nn.functional.max_pool2d(torch.tensor(x), k, s, return_indices=True)
    return v.numpy(), i.numpy()


UNPOOL_ERRORS = [
    ("float", {}),
    ("short", {}),
    ("rank", {}),
    ("size", {"output_size": (9, 9)}),
    ("size", {"output_size": (5,)}),
    ("size", {"output_size": (-1, 4)}),
]


@pytest.mark.parametrize("case,kw", UNPOOL_ERRORS)
def test_unpool_errors_match_torch(case, kw):
    v, i = _pooled((1, 2, 4, 4), 2, 2)
    if case == "float":
        i = i.astype(np.float32)
    elif case == "short":
        i = i[..., :1]
    elif case == "rank":
        v, i = v[0, 0], i[0, 0]

    def prog(lib, v, i):
        return lib.nn.functional.max_unpool2d(v, i, 2, **kw)

    assert_same_error(prog, v, i)


def test_unpool_index_out_of_range():
    """Which invalid index PyTorch names depends on its threads: the text, not the number."""
    v, i = _pooled((1, 2, 4, 4), 2, 2)
    for lib in (nt, torch):
        with pytest.raises(
            RuntimeError, match=r"invalid max index: 1\d\d \(output volumes are of size 4x4\)"
        ):
            lib.nn.functional.max_unpool2d(lib.tensor(v), lib.tensor(i + 100), 2)


def test_unpool_after_overlapping_windows_writes_once():
    """Stride 1 makes one input the maximum of several windows: unpooling writes it once."""
    x = np.array([[[[0.0, 1, 2], [3, 9, 4], [5, 6, 7]]]])

    def prog(lib, x):
        F = lib.nn.functional
        v, i = F.max_pool2d(x, 2, 1, return_indices=True)
        return F.max_unpool2d(v, i, 2, 1, output_size=(3, 3))

    assert_same(prog, x)
    got = run_both(prog, x)[0].numpy()
    assert got[0, 0, 1, 1] == 9 and got.sum() == 9


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_edge_windows_pick_torchs_indices(nd):
    """Windows in the padding that see only -inf, and windows with NaN, pick PyTorch's index."""
    x = arr(1, 2, *(5,) * nd)
    x[0, 0][(slice(0, 3),) * nd] = -np.inf
    x[0, 1][(2,) * nd] = x[0, 1][(3,) * nd] = np.nan  # two NaNs in a window: the last wins

    def prog(lib, x):
        F = lib.nn.functional
        pool = getattr(F, f"max_pool{nd}d")
        a = pool(x, 3, 2, 1, ceil_mode=True, return_indices=True)
        b = pool(x, 2, 1, 1, dilation=2, return_indices=True)
        c = getattr(F, f"adaptive_max_pool{nd}d")(x, 2, return_indices=True)
        d = getattr(F, f"adaptive_max_pool{nd}d")(x, 1, return_indices=True)  # a wide window
        return a, b, c, d

    assert_same(prog, x)


def test_adaptive_max_indices_past_255_window_offsets():
    """Window offsets are counted in uint8: the index arithmetic widens them first."""
    x = arr(2, 2, 7, 3, 6)
    for size in [(5, 4, 3), (1, 1, 1), (7, 7, 7)]:
        assert_same(lambda lib, x: lib.nn.functional.adaptive_max_pool3d(x, size, True), x)


def test_with_indices_names_return_pairs():
    x = arr(1, 2, 5, 5)

    def prog(lib, x):
        F = lib.nn.functional
        return (
            F.max_pool2d_with_indices(x, 2),
            F.max_pool1d_with_indices(x[0], 2),
            F.max_pool3d_with_indices(x, 2),
            F.adaptive_max_pool2d_with_indices(x, (3, None)),
        )

    assert_same(prog, x)


def test_stride_may_be_an_empty_list():
    assert_same(lambda lib, x: lib.nn.functional.max_pool2d(x, 2, []), X4)


NAMES = [
    "max_pool2d_with_indices",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool2d_with_indices",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
]


@pytest.mark.parametrize("name", NAMES)
def test_signatures_are_torchs(name):
    ours = inspect.signature(getattr(nt.nn.functional, name)).parameters
    theirs = inspect.signature(getattr(torch.nn.functional, name)).parameters
    assert [(p.name, p.default) for p in ours.values()] == [
        (p.name, p.default) for p in theirs.values()
    ]


def test_lp_pool_zero_window_has_zero_gradient():
    x = np.zeros((1, 1, 4, 4))
    x[0, 0, 2:, 2:] = arr(2, 2) ** 2 + 0.5

    def prog(lib, x):
        x = x.requires_grad_(True)
        y = lib.nn.functional.lp_pool2d(x, 2, 2)
        (g,) = lib.autograd.grad(y.sum(), x)
        return y, g

    assert_same(prog, x, rtol=1e-12)


def test_per_sample_gradients_through_max_pool(no_fallback):
    """vmap(grad) over max_pool2d and avg_pool2d, as in the per-sample-gradients tutorial."""
    x = arr(4, 2, 6, 6)
    w = arr(2 * 3 * 3, 5, seed=1)

    def loss(lib, w, xi):
        F = lib.nn.functional
        h = F.max_pool2d(xi.unsqueeze(0), 2) + F.avg_pool2d(xi.unsqueeze(0), 2, 1, 1)[..., :3, :3]
        h = F.adaptive_avg_pool2d(h, 3) + F.adaptive_max_pool2d(h, (3, None))
        return (h.flatten(1) @ w).tanh().sum()

    def prog(lib, w, x):
        fn = lib.func.vmap(lib.func.grad(lambda w, xi: loss(lib, w, xi)), in_dims=(None, 0))
        return fn(w, x)

    got, ref = run_both(prog, w, x)
    assert_close(got, ref, rtol=1e-10, atol=1e-12)


def test_vmap_folds_the_batch_for_unbatched_input(no_fallback):
    """A (C, H, W) input under vmap runs as (B, C, H, W): the indices stay per plane."""
    x = arr(3, 2, 5, 5)

    def prog(lib, x):
        F = lib.nn.functional
        v, i = lib.vmap(lambda t: F.max_pool2d(t, 3, 2, 1, return_indices=True))(x)
        return v, i, lib.vmap(lambda a, b: F.max_unpool2d(a, b, 3, 2, 1, output_size=(5, 5)))(v, i)

    assert_same(prog, x)


def test_lp_pool_inf_is_max_of_abs():
    assert_same(lambda lib, x: lib.nn.functional.lp_pool2d(x, math.inf, 2), X4)


def test_integer_pools_truncate_like_torch():
    x = np.array([[[[1, -2, 7], [3, -5, 4]]]])

    def prog(lib, x):
        F = lib.nn.functional
        return (
            F.avg_pool2d(x, 2),
            F.avg_pool2d(x, 2, divisor_override=3),
            F.avg_pool2d(x, (1, 2), 1, (0, 1), count_include_pad=False),
            F.max_pool2d(x, 2, return_indices=True),
            F.max_pool2d(x.to(lib.uint8), 2, return_indices=True),
        )

    assert_same(prog, x)


DTYPE_CASES = [
    ("max_pool1d", (2,), {}),
    ("max_pool1d", (2,), {"return_indices": True}),
    ("max_pool2d", (2,), {}),
    ("max_pool3d", (1,), {}),
    ("avg_pool1d", (2,), {}),
    ("avg_pool2d", (2,), {}),
    ("avg_pool3d", (1,), {}),
    ("adaptive_max_pool1d", (2,), {}),
    ("adaptive_max_pool2d", (2,), {}),
    ("adaptive_avg_pool1d", (2,), {}),
    ("adaptive_avg_pool3d", (2,), {}),  # (1, 1, 1) is a mean in torch, with its own error
]


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("name,a,kw", DTYPE_CASES, ids=[c[0] for c in DTYPE_CASES])
def test_dtypes_without_a_kernel_raise_like_torch(name, a, kw, dtype):
    x = (
        (arr(2, 3, 4, 4) > 0).astype(dtype)
        if dtype == "bool"
        else (arr(2, 3, 4, 4) * 3).astype(dtype)
    )
    if name.endswith("1d"):
        x = x[0, 0]
    elif not name.endswith("3d"):
        x = x[0]
    assert_same_outcome(_pool(name, *a, **kw), x)


def test_a_window_of_padding_only_feeds_no_gradient():
    """Dilation can step a window over the whole input: its value is -inf and PyTorch's index
    points past the plane (its backward writes there; not run here). No input gets a
    gradient from it, and its tangent is 0."""
    x = arr(1, 2, 1, 4, 2)
    args = ([2, 4, 1], [1, 2, 1], [1, 1, 0], [2, 2, 1], True)
    got, ref = run_both(lambda lib, x: lib.nn.functional.max_pool3d(x, *args, True), x)
    assert_close(got, ref)
    t = nt.tensor(x).requires_grad_(True)
    (g,) = nt.autograd.grad(nt.nn.functional.max_pool3d(t, *args).sum(), t)
    assert not g.numpy().any()
    tangent = nt.func.jvp(
        lambda v: nt.nn.functional.max_pool3d(v, *args), (t.detach(),), (t.detach(),)
    )[1]
    assert not tangent.numpy().any()


# ------------------------------------------------------------------ fractional max pool
def _u(n, c, nd, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).random((n, c, nd)).astype(dtype)


FRACTIONAL_ERRORS = [
    (2, arr(1, 2, 7, 7), (2,), {"output_ratio": 0.5}),  # PyTorch takes len() of the ratio
    (2, arr(1, 2, 7, 7), (2,), {"output_ratio": (0.5,)}),
    (2, arr(1, 2, 7, 7), (2,), {"output_ratio": (0.5,) * 3}),
    (3, arr(1, 2, 5, 5, 5), (2,), {"output_ratio": (0.5, 0.5)}),
    (2, arr(1, 2, 7, 7), (2,), {}),
    (2, arr(1, 2, 7, 7), (2.0, 3), {"_random_samples": _u(1, 2, 2)}),
    (2, arr(1, 2, 7, 7), (2, 3.0), {"_random_samples": _u(1, 2, 2)}),
    (2, arr(1, 2, 7, 7), ((2.0, 2), 3), {"_random_samples": _u(1, 2, 2)}),
    (2, arr(1, 2, 7, 7), (2, (3, 3.0)), {"_random_samples": _u(1, 2, 2)}),
    (3, arr(1, 2, 5, 5, 5), (2, (3, 3, "a")), {"_random_samples": _u(1, 2, 3)}),
    (3, arr(1, 2, 5, 5, 5), (2, "ab"), {"_random_samples": _u(1, 2, 3)}),
    (2, arr(1, 2, 7, 7), ((2, 2, 2), 3), {"_random_samples": _u(1, 2, 2)}),
    (2, arr(1, 2, 7, 7), (2, (3,)), {"_random_samples": _u(1, 2, 2)}),
    (3, arr(1, 2, 5, 5, 5), ((2, 2), 3), {"_random_samples": _u(1, 2, 3)}),
    (2, arr(7, 7), (2, 3), {}),  # the draw reads size(-3)
    (2, arr(7, 7), (2, 3), {"_random_samples": _u(1, 2, 2)}),
    (3, arr(1, 1, 2, 5, 5, 5), (2, 3), {"_random_samples": _u(1, 2, 3)}),
    (2, arr(1, 2, 0, 7), (2, 3), {"_random_samples": _u(1, 2, 2)}),
    (3, arr(2, 0, 5, 5), (2, 3), {"_random_samples": _u(1, 2, 3)}),
    (2, arr(1, 2, 7, 9), ((2, 3), (3, 8)), {"_random_samples": _u(1, 2, 2)}),
    (3, arr(1, 2, 5, 5, 5), (2, (3, 4, 3)), {"_random_samples": _u(1, 2, 3)}),  # strict in 3-d
    (3, arr(1, 2, 5, 5, 5), (2, (3, 3, 4)), {"_random_samples": _u(1, 2, 3)}),
    (2, arr(1, 2, 7, 7), (2, (-1, 3)), {"_random_samples": _u(1, 3, 2)}),
    (2, arr(1, 2, 7, 7), (2, 3), {"_random_samples": _u(1, 2, 2, dtype=np.float32)}),
    (2, arr(2, 2, 7, 7), (2, 3), {"_random_samples": _u(1, 3, 3)}),
    (2, arr(1, 2, 7, 7), (2, 3), {"_random_samples": _u(1, 3, 3)}),
    (2, arr(1, 2, 7, 7), (2, 3), {"_random_samples": _u(1, 2, 3)}),
    (2, arr(1, 2, 7, 7), (2, 3), {"_random_samples": _u(1, 2, 2)[None]}),
    (2, arr(2, 7, 7), (2, 3), {"_random_samples": _u(0, 2, 2)}),
    (
        3,
        arr(1, 2, 5, 5, 5).astype(np.int64),
        (2, 3),
        {"_random_samples": _u(1, 2, 3).astype(np.int64)},
    ),
    (2, arr(1, 2, 7, 7).astype(np.int64), (2, 3), {}),
]


@pytest.mark.parametrize("nd,x,a,kw", FRACTIONAL_ERRORS, ids=lambda v: "")
def test_fractional_errors_match_torch(nd, x, a, kw):
    def prog(lib, x):
        kw2 = {k: lib_arg(lib, v) for k, v in kw.items()}
        return getattr(lib.nn.functional, f"fractional_max_pool{nd}d")(x, *a, **kw2)

    assert_same_error(prog, x)


def test_fractional_random_samples_may_not_require_grad():
    def prog(lib, x, u):
        return lib.nn.functional.fractional_max_pool2d(x, 2, 3, _random_samples=u.requires_grad_())

    assert_same_error(prog, arr(1, 2, 7, 7), _u(1, 2, 2))


@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fractional_windows_and_indices_are_torchs(nd, dtype):
    """Random sizes, kernels and samples (ties, NaN and -inf included): the same values and
    the same flat indices as PyTorch, the interval rounding of float32 samples included."""
    rng = np.random.default_rng(nd)
    for trial in range(60):
        sp = tuple(int(v) for v in rng.integers(2, 9 if nd == 2 else 6, nd))
        k = tuple(int(rng.integers(1, s + (1 if nd == 2 else 0))) for s in sp)
        out = tuple(int(rng.integers(0, s - kk + (2 if nd == 2 else 1))) for s, kk in zip(sp, k))
        x = rng.standard_normal((2, 2, *sp)).astype(dtype)
        if trial % 3 == 0:
            x = np.round(x)
        if trial % 5 == 0:
            x.flat[rng.integers(0, x.size, 3)] = [np.nan, -np.inf, np.inf]
        u = rng.random((3, 2, nd)).astype(dtype)

        def prog(lib, x, u):
            fn = getattr(lib.nn.functional, f"fractional_max_pool{nd}d_with_indices")
            return fn(x, k, out, _random_samples=u)

        got, ref = run_both(prog, x, u)
        np.testing.assert_array_equal(got[0].numpy(), ref[0].numpy())
        np.testing.assert_array_equal(got[1].numpy(), ref[1].numpy())


@pytest.mark.parametrize("nd", [2, 3])
def test_fractional_output_ratio_and_unbatched(nd):
    x, u = (arr(2, 7, 6) if nd == 2 else arr(2, 6, 5, 5)), _u(1, 2, nd)

    def prog(lib, x, u):
        fn = getattr(lib.nn.functional, f"fractional_max_pool{nd}d")
        return fn(x, 2, output_ratio=(0.5, 0.7, 0.6)[:nd], return_indices=True, _random_samples=u)

    assert_same(prog, x, u)


def test_fractional_draws_are_windows_of_the_input():
    """Without samples: a seeded draw per (batch, channel), each result a window's maximum."""
    x = nt.tensor(arr(2, 3, 7, 7))
    nt.manual_seed(0)
    v, i = nt.nn.functional.fractional_max_pool2d(x, 2, 4, return_indices=True)
    nt.manual_seed(0)
    v2 = nt.nn.functional.fractional_max_pool2d(x, 2, 4)
    np.testing.assert_array_equal(v.numpy(), v2.numpy())
    flat = x.numpy().reshape(2, 3, 49)
    np.testing.assert_array_equal(
        np.take_along_axis(flat, i.numpy().reshape(2, 3, 16), -1), v.numpy().reshape(2, 3, 16)
    )
    assert len({tuple(p.ravel()) for p in i.numpy().reshape(6, 16)}) > 1  # planes differ


def test_fractional_under_vmap_randomness(no_fallback):
    x = nt.tensor(np.broadcast_to(arr(1, 2, 7, 7), (4, 1, 2, 7, 7)).copy())
    F = nt.nn.functional
    with pytest.raises(RuntimeError, match="randomness error mode"):
        nt.vmap(lambda t: F.fractional_max_pool2d(t, 2, 3))(x)
    same = nt.vmap(lambda t: F.fractional_max_pool2d(t, 2, 3), randomness="same")(x).numpy()
    assert (same == same[:1]).all()
    nt.manual_seed(1)
    diff = nt.vmap(lambda t: F.fractional_max_pool2d(t, 2, 3), randomness="different")(x)
    assert not (diff.numpy() == diff.numpy()[:1]).all()


def test_fractional_per_sample_gradients(no_fallback):
    """vmap(grad) with per-sample random samples against torch.func."""
    x, u = arr(3, 2, 6, 6), _u(3, 2, 2)[:, None]

    def prog(lib, x, u):
        F = lib.nn.functional

        def loss(xi, ui):
            return F.fractional_max_pool2d(xi[None], 2, 3, _random_samples=ui).pow(2).sum()

        return lib.func.vmap(lib.func.grad(loss))(x, u)

    assert_same(prog, x, u)


# ------------------------------------------------------------------ channel shuffle
@pytest.mark.parametrize("name", ["channel_shuffle", "native_channel_shuffle"])
def test_channel_shuffle_is_torchs(name):
    for shape, g in [((2, 6, 2, 2), 3), ((6, 2, 2), 2), ((2, 4, 3), 4), ((2, 0, 2), 2)]:
        assert_same(lambda lib, x: getattr(lib, name)(x, g), arr(*shape))
        assert_same(lambda lib, x: getattr(lib.nn.functional, name)(x, g), arr(*shape))
    for shape, g in [((6, 2), 2), ((6,), 0), ((1, 6, 2), 0), ((1, 6, 2), -2), ((1, 6, 2), 4)]:
        assert_same_error(lambda lib, x: getattr(lib, name)(x, g), arr(*shape))


@pytest.mark.parametrize(
    "call",
    [
        lambda F, x: F.max_pool2d(x, 2),
        lambda F, x: F.max_pool3d(x.unsqueeze(2), (1, 2, 2)),
        lambda F, x: F.avg_pool2d(x, 2),
        lambda F, x: F.avg_pool3d(x.unsqueeze(2), (1, 2, 2)),
        lambda F, x: F.adaptive_max_pool2d(x, 3),
        lambda F, x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2),
    ],
)
def test_grad_fn_names_match_torch(call):
    """The nodes a program walking the graph meets are named as PyTorch's."""

    def prog(lib, x):
        return call(lib.nn.functional, x.requires_grad_()).grad_fn.name()

    ours, theirs = run_both(prog, arr(2, 3, 6, 6))
    assert ours == theirs
