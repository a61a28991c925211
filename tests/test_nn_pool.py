"""Pooling beyond the op database: PyTorch's argument checks word for word, the indices of
edge windows (padding, -inf, NaN), the public signatures, unpooling after overlapping
windows, and per-sample gradients through max_pool2d (the tutorial CNN's pool)."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
import torch
from twolibs import arr, assert_close, assert_same, assert_same_error, assert_same_outcome, run_both

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
