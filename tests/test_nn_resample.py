"""Padding and resampling (F.pad, interpolate, upsample*, grid_sample, affine_grid,
pixel_shuffle/unshuffle) against PyTorch: sweeps over modes, sizes and scale factors
that the small op-database samples cannot cover, gradients, and error texts."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from twolibs import arr, assert_close, assert_same, assert_same_error

import numtorch as nt

F32 = {"rtol": 1e-5, "atol": 1e-5}


def _grad_prog(fn, n_grad=1):
    """``fn``'s value and its gradients (against a fixed cotangent) in the first n inputs."""

    def prog(lib, *args, **kw):
        ins = [a.requires_grad_(True) for a in args[:n_grad]]
        out = fn(lib)(*args, **kw)
        v = lib.tensor(arr(*out.shape, seed=7))
        grads = lib.autograd.grad(out, ins, v)
        return out.detach(), grads

    return prog


def _F(lib):
    return lib.nn.functional


# ------------------------------------------------------------------ pad
PADS = [
    ((2, 4), (2, 1)),
    ((2, 4), (-1, 3)),
    ((2, 3, 4), (1, 2, 2, 0)),
    ((2, 3, 4), (3, -1, 0, 2)),
    ((1, 2, 3, 3, 4), (1, 1, 2, -1, 0, 2)),
    ((2, 3, 3, 4), (1, 0, 0, 2, 2, 1)),
]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pad", PADS)
def test_pad_modes_and_gradient_fold(mode, shape, pad):
    if mode == "reflect" and any(p >= shape[-1 - i // 2] for i, p in enumerate(pad)):
        pytest.skip("reflect pads must be smaller than the dim")
    prog = _grad_prog(lambda lib: lambda x: _F(lib).pad(x, pad, mode=mode))
    assert_same(prog, arr(*shape))


def test_pad_constant_value_crop_dtypes():
    assert_same(lambda lib, x: _F(lib).pad(x, (1, -2, 2, 1), value=3.5), arr(2, 3, 4))
    assert_same(
        lambda lib, x: _F(lib).pad(x.to(lib.int64), (1, 1), value=2), np.round(arr(2, 3) * 5)
    )
    assert_same(_grad_prog(lambda lib: lambda x: _F(lib).pad(x, (-1, 2, 1, -1))), arr(3, 4))
    assert_same(lambda lib, x: _F(lib).pad(x.transpose(0, 1), (1, 1, 1, 1)), arr(3, 4))


@pytest.mark.parametrize(
    "shape,pad,kw",
    [
        ((1, 2, 3), (3, 3), {"mode": "reflect"}),
        ((1, 2, 3, 4), (1, 1, 3, 1), {"mode": "reflect"}),
        ((1, 2, 3, 4, 4), (1, 1, 1, 1, 1, 4), {"mode": "reflect"}),
        ((1, 2, 3), (1, 1), {"mode": "reflect", "value": 1.0}),
        ((1, 2, 3), (1, 1), {"mode": "foo"}),
        ((3,), (1, 1), {"mode": "replicate"}),
        ((2, 3), (1, 1, 1, 1), {"mode": "circular"}),
        ((2, 3, 3, 3, 3, 3), (1, 1), {"mode": "reflect"}),
        ((2, 3, 3), (4, 1), {"mode": "circular"}),
        ((2, 3, 0), (1, 1), {"mode": "replicate"}),
        ((2, 0, 4), (1, 1, 1, 1), {"mode": "reflect"}),
        ((1, 4), (-3, -1), {"mode": "reflect"}),
        ((2, 3, 4), (-3, -1, -2, -1), {"mode": "reflect"}),
        ((2, 3, 4), (-3, -1, -2, -1), {"mode": "replicate"}),
        ((2, 3), (-3, -1), {}),
        ((2, 3), (1,), {}),
        ((2, 3), (1, 1, 1, 1, 1, 1), {}),
    ],
)
def test_pad_errors(shape, pad, kw):
    assert_same_error(lambda lib, x: _F(lib).pad(x, pad, **kw), arr(*shape))


# ------------------------------------------------------------------ interpolate
def _interp_cases():
    rng = np.random.default_rng(0)
    ranks = {"nearest": (3, 4, 5), "nearest-exact": (3, 4, 5), "area": (3, 4, 5)}
    ranks.update(linear=(3,), bilinear=(4,), bicubic=(4,), trilinear=(5,))
    for mode, rs in ranks.items():
        for r in rs:
            for trial in range(4):
                spatial = tuple(int(s) for s in rng.integers(1, 7, size=r - 2))
                kw = {"mode": mode}
                if trial % 2:
                    kw["size"] = tuple(int(s) for s in rng.integers(1, 9, size=r - 2))
                else:
                    factors = rng.uniform(0.6, 2.6, size=r - 2) if trial else [1.1] * (r - 2)
                    kw["scale_factor"] = tuple(round(float(f), 2) for f in factors)
                    spatial = tuple(max(s, 2) for s in spatial)
                    if trial == 2 and mode != "area":
                        kw["recompute_scale_factor"] = True
                if mode not in ("nearest", "nearest-exact", "area"):
                    kw["align_corners"] = bool(trial >= 2)
                yield pytest.param((2, 2, *spatial), kw, id=f"{mode}-{r}d-{trial}")


def _torch_grad_bug(shape, kw) -> bool:
    """Where PyTorch's backward is not its forward's gradient (its gradcheck fails): the 1-D
    and 3-D nearest backward copies equal sizes and halves indices of doubled sizes, and the
    bicubic backward copies equal sizes, even where the forward used the given scale factor
    (test_gradient_is_the_forwards checks ours)."""
    if "scale_factor" not in kw or kw.get("recompute_scale_factor"):
        return False
    outs = [int(s * f) for s, f in zip(shape[2:], kw["scale_factor"])]
    if kw["mode"] == "bicubic":
        return any(o == s for o, s in zip(outs, shape[2:]))
    if kw["mode"] != "nearest" or len(shape) == 4:
        return False
    return any(o in (s, 2 * s) for o, s in zip(outs, shape[2:]))


def test_gradient_is_the_forwards():
    x = nt.arange(6.0, dtype=nt.float64).reshape(1, 1, 6).requires_grad_(True)
    y = nt.nn.functional.interpolate(x, scale_factor=1.1)
    np.testing.assert_array_equal(y.detach().numpy().ravel(), [0, 0, 1, 2, 3, 4])
    (g,) = nt.autograd.grad(y.sum(), x)
    np.testing.assert_array_equal(g.numpy().ravel(), [2, 1, 1, 1, 1, 0])  # PyTorch: all ones
    # bicubic at an equal size with a scale factor: central finite differences decide
    x0 = arr(1, 1, 3, 4)
    v = arr(1, 1, 3, 4, seed=1)

    def f(a):
        out = nt.nn.functional.interpolate(nt.tensor(a), scale_factor=1.1, mode="bicubic")
        return float((out.numpy() * v).sum())

    x = nt.tensor(x0, requires_grad=True)
    out = nt.nn.functional.interpolate(x, scale_factor=1.1, mode="bicubic")
    (g,) = nt.autograd.grad(out, x, nt.tensor(v))
    fd = np.zeros_like(x0)
    for i in np.ndindex(x0.shape):
        e = np.zeros_like(x0)
        e[i] = 1e-6
        fd[i] = (f(x0 + e) - f(x0 - e)) / 2e-6
    np.testing.assert_allclose(g.numpy(), fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("shape,kw", list(_interp_cases()))
def test_interpolate_sweep(shape, kw):
    if "scale_factor" in kw and any(int(s * f) == 0 for s, f in zip(shape[2:], kw["scale_factor"])):
        pytest.skip("empty output")
    if _torch_grad_bug(shape, kw):
        assert_same(lambda lib, x: _F(lib).interpolate(x, **kw), arr(*shape))
    else:
        assert_same(_grad_prog(lambda lib: lambda x: _F(lib).interpolate(x, **kw)), arr(*shape))
    x32 = arr(*shape).astype(np.float32)
    assert_same(lambda lib, x: _F(lib).interpolate(x, **kw), x32, **F32)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(3, 2), (7, 9), (2, 5), (4, 4)])
def test_interpolate_antialias(mode, align_corners, size):
    kw = {"size": size, "mode": mode, "align_corners": align_corners, "antialias": True}
    assert_same(_grad_prog(lambda lib: lambda x: _F(lib).interpolate(x, **kw)), arr(1, 2, 6, 5))


def test_interpolate_noncontiguous_empty_and_identity():
    x = arr(3, 4, 2).transpose(2, 1, 0)
    assert_same(lambda lib, x: _F(lib).interpolate(x, scale_factor=1.5, mode="linear"), x)
    assert_same(
        lambda lib, x: _F(lib).interpolate(x, size=(3, 2), mode="bilinear"), arr(0, 2, 4, 3)
    )
    x = nt.tensor(arr(1, 1, 3))
    out = nt.nn.functional.interpolate(x, size=3, mode="linear")
    assert out is not x  # a copy, as in PyTorch


@pytest.mark.parametrize(
    "shape,kw",
    [
        ((1, 2, 3), {"size": 2, "scale_factor": 2.0}),
        ((1, 2, 3), {}),
        ((1, 2, 3), {"size": 4, "mode": "bilinear"}),
        ((1, 2, 3, 3), {"size": 4, "mode": "linear"}),
        ((1, 2, 3, 3, 3), {"size": 4, "mode": "bicubic"}),
        ((1, 2, 3, 3), {"size": 4, "align_corners": True}),
        ((1, 2, 3, 3), {"size": (4,)}),
        ((1, 2, 3, 3), {"scale_factor": (2.0, 2.0, 2.0)}),
        ((1, 2, 3), {"size": 0, "mode": "linear"}),
        ((1, 2, 3, 3), {"size": (0, 2), "mode": "nearest"}),
        ((1, 2, 0), {"size": 3}),
        ((1, 0, 3), {"size": 4}),
        ((1, 2, 3), {"size": 4, "mode": "linear", "antialias": True}),
        ((1, 2, 3), {"size": 4, "mode": "foo"}),
        ((2, 3), {"size": 4}),
        ((1, 2, 3), {"size": 4, "recompute_scale_factor": True}),
    ],
)
def test_interpolate_errors(shape, kw):
    assert_same_error(lambda lib, x: _F(lib).interpolate(x, **kw), arr(*shape))


def test_upsample_aliases_warn_and_match():
    x = arr(1, 2, 3, 4)
    for name, kw in [
        ("upsample", {"size": (5, 3), "mode": "bilinear"}),
        ("upsample_nearest", {"scale_factor": 2}),
        ("upsample_bilinear", {"size": (2, 5)}),
    ]:
        with pytest.warns(UserWarning, match=f"nn.functional.{name}` is deprecated"):
            got = getattr(nt.nn.functional, name)(nt.tensor(x), **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = getattr(torch.nn.functional, name)(torch.tensor(x), **kw)
        assert_close(got, ref)


# ------------------------------------------------------------------ grid_sample
def _grid(shape, span, seed):
    # a lattice offset from pixel centres and borders: the sampler is smooth there
    g = np.random.default_rng(seed).uniform(-span, span, shape)
    return np.round(g * 24) / 24 + 1 / 96


def _grid_cases():
    for k in (2, 3):
        for mode in ("bilinear", "nearest", "bicubic"):
            if k == 3 and mode == "bicubic":
                continue
            for padding_mode in ("zeros", "border", "reflection"):
                for align_corners in (False, True):
                    yield pytest.param(
                        k,
                        mode,
                        padding_mode,
                        align_corners,
                        id=f"{k}d-{mode}-{padding_mode}-{align_corners}",
                    )


@pytest.mark.parametrize("k,mode,padding_mode,align_corners", list(_grid_cases()))
def test_grid_sample_sweep(k, mode, padding_mode, align_corners):
    spatial = (3, 4, 2)[:k] if k == 3 else (3, 4)
    out = (2, 3, 2)[:k]
    x, g = arr(2, 2, *spatial), _grid((2, *out, k), 2.4, k)
    kw = {"mode": mode, "padding_mode": padding_mode, "align_corners": align_corners}
    prog = _grad_prog(lambda lib: lambda x, g: _F(lib).grid_sample(x, g, **kw), n_grad=2)
    assert_same(prog, x, g, rtol=1e-9, atol=1e-12)
    x32, g32 = x.astype(np.float32), g.astype(np.float32)
    assert_same(lambda lib, x, g: _F(lib).grid_sample(x, g, **kw), x32, g32, **F32)


def test_grid_sample_second_order():
    def prog(lib, x, g):
        x.requires_grad_(True)
        g.requires_grad_(True)
        out = _F(lib).grid_sample(x, g, mode="bicubic", align_corners=False)
        gx, gg = lib.autograd.grad((out * out).sum(), (x, g), create_graph=True)
        return lib.autograd.grad((gx * gx).sum() + (gg * gg).sum(), (x, g))

    assert_same(prog, arr(1, 2, 3, 3), _grid((1, 2, 2, 2), 1.1, 0), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize(
    "xs,gs,kw",
    [
        ((1, 2, 3, 3), (2, 3, 3, 2), {}),
        ((1, 2, 3, 3), (1, 3, 3, 3), {}),
        ((1, 2, 3, 3, 3), (1, 3, 3, 3, 3), {"mode": "bicubic"}),
        ((1, 2, 3, 3), (1, 3, 3, 2), {"mode": "linear"}),
        ((1, 2, 3, 3), (1, 3, 3, 2), {"padding_mode": "wrap"}),
        ((1, 2, 0, 3), (1, 3, 3, 2), {}),
    ],
)
def test_grid_sample_errors(xs, gs, kw):
    assert_same_error(
        lambda lib, x, g: _F(lib).grid_sample(x, g, align_corners=False, **kw), arr(*xs), arr(*gs)
    )


# ------------------------------------------------------------------ affine_grid, pixel shuffle
@pytest.mark.parametrize(
    "tshape,size,ac",
    [
        ((2, 2, 3), (2, 3, 4, 5), False),
        ((2, 2, 3), (2, 1, 1, 3), True),
        ((1, 3, 4), (1, 2, 2, 3, 4), False),
        ((1, 3, 4), (1, 1, 3, 1, 2), True),
    ],
)
def test_affine_grid_and_sampling(tshape, size, ac):
    prog = _grad_prog(lambda lib: lambda t: _F(lib).affine_grid(t, size, align_corners=ac))
    assert_same(prog, arr(*tshape), rtol=1e-9, atol=1e-12)


def test_affine_grid_errors():
    for tshape, size in [
        ((2, 2, 3), (2, 3, 4, 5, 5)),
        ((2, 2, 3), (2, 3, 5)),
        ((2, 2, 3), (2, 3, 0, 5)),
        ((2, 3, 4), (2, 3, 4, 5)),
    ]:
        assert_same_error(
            lambda lib, t, size=size: _F(lib).affine_grid(t, size, align_corners=False),
            arr(*tshape),
        )


def test_pixel_shuffle_roundtrip_and_errors():
    x = arr(2, 3, 8, 4, 6)
    assert_same(lambda lib, x: _F(lib).pixel_unshuffle(_F(lib).pixel_shuffle(x, 2), 2), x)
    assert_same(lambda lib, x: _F(lib).pixel_shuffle(x, 2), x)
    assert_same(lambda lib, x: _F(lib).pixel_unshuffle(x, 2), x)
    for fn, shape, r in [
        ("pixel_shuffle", (5, 2, 3), 2),
        ("pixel_shuffle", (2, 3), 2),
        ("pixel_shuffle", (4, 2, 3), 0),
        ("pixel_unshuffle", (4, 3, 4), 2),
        ("pixel_unshuffle", (4, 4, 3), 2),
        ("pixel_unshuffle", (4, 2), 2),
    ]:
        assert_same_error(lambda lib, x, fn=fn, r=r: getattr(_F(lib), fn)(x, r), arr(*shape))


# ------------------------------------------------------------------ under transforms
def test_per_sample_gradients_through_resampling():
    x, g = arr(3, 2, 4, 4), _grid((3, 2, 3, 2), 1.1, 5)

    def loss(lib):
        def f(x, g):
            y = _F(lib).interpolate(x[None], scale_factor=1.5, mode="bicubic")
            y = _F(lib).pad(y, (1, 2, 2, 1), mode="reflect")
            return _F(lib).grid_sample(y, g[None], align_corners=True).square().sum()

        return f

    def prog(lib, x, g):
        return lib.func.vmap(lib.func.grad(loss(lib), argnums=(0, 1)))(x, g)

    assert_same(prog, x, g, rtol=1e-9, atol=1e-11)


def test_integer_inputs():
    x = np.arange(2 * 3 * 4).reshape(1, 2, 3, 4)
    for mode in ("nearest", "nearest-exact"):
        assert_same(lambda lib, x: _F(lib).interpolate(x.to(lib.uint8), size=(5, 2), mode=mode), x)
    for mode, shape in [
        ("bilinear", (1, 2, 3, 4)),
        ("linear", (1, 2, 3)),
        ("area", (1, 2, 3)),
        ("nearest", (1, 2, 3)),
        ("nearest", (1, 2, 3, 4)),
    ]:
        assert_same_error(
            lambda lib, x, mode=mode: _F(lib).interpolate(x.to(lib.int64), size=2, mode=mode),
            np.zeros(shape),
        )
    for mode in ("reflect", "replicate"):
        assert_same_error(
            lambda lib, x, mode=mode: _F(lib).pad(x.to(lib.bool), (1, 1), mode=mode),
            np.ones((2, 3)),
        )
    assert_same(lambda lib, x: _F(lib).pad(x[0].to(lib.int64), (2, 1), mode="reflect"), x)


# ==================================================================
# Causes behind the bad-input sweep's DIFFERS cases (tests/test_bad_inputs.py), fixed.


@pytest.mark.parametrize("dtype", ["bool", "int64", "complex128"])
@pytest.mark.parametrize(
    "shape, modes",
    [
        ((1, 2, 3), ("nearest", "linear", "area", "nearest-exact")),
        ((1, 2, 3, 3), ("nearest", "bilinear", "bicubic", "area")),
        ((1, 1, 2, 3, 3), ("nearest", "trilinear", "area")),
    ],
)
def test_resampling_refusals(dtype, shape, modes):
    """PyTorch's kernel names for inputs it cannot resample, complex ones too."""
    x = np.ones(shape, dtype)
    for mode in modes:
        assert_same_error(
            lambda L, x, m=mode: L.nn.functional.interpolate(x, scale_factor=2, mode=m), x
        )
    if len(shape) > 3:  # the shapes are checked first
        for g in (np.zeros((1, *(2,) * (len(shape) - 2), len(shape) - 2)), np.zeros((1, 2, 2))):
            assert_same_error(
                lambda L, x, g: L.nn.functional.grid_sample(x, g.to(x.dtype), align_corners=False),
                x,
                g,
            )


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, x: L.nn.functional.grid_sample(x, x.new_zeros(1, 2, 2, 3).float()),  # shapes
        lambda L, x: L.nn.functional.grid_sample(x.bool(), x.new_zeros(1, 2, 2, 2)),  # kernel
        lambda L, x: L.nn.functional.grid_sample(x.float(), x.new_zeros(1, 2, 2, 2).bool()),
        lambda L, x: L.nn.functional.grid_sample(x, x.new_zeros(1, 2, 2, 2).float()),
    ],
)
def test_grid_sample_check_order(prog):
    assert_same_error(prog, np.ones((1, 1, 3, 3)))


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize(
    "shape, mode", [((1, 2, 5), "linear"), ((1, 2, 4, 5), "bilinear"), ((1, 2, 4, 5), "bicubic")]
)
def test_interpolation_reads_every_tap(shape, mode, align_corners):
    """PyTorch's interpolation reads each tap, one of weight 0 too: NaN and inf spread to
    exactly the outputs whose taps hold them. (Not trilinear: PyTorch's kernel there
    interpolates as x0 + t (x1 - x0), which turns an inf at weight 0 into NaN.)"""
    x = np.random.default_rng(0).normal(size=shape)
    x.flat[[0, x.size // 2]] = [np.nan, np.inf]
    for scale in (2.0, 0.5, 1.3):
        assert_same(
            lambda L, x, s=scale: L.nn.functional.interpolate(
                x, scale_factor=s, mode=mode, align_corners=align_corners
            ),
            x,
            rtol=1e-10,
            atol=1e-12,
        )


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_does_not_read_outside_taps(mode):
    """With zeros padding, a tap outside the input is not read: an inf at the border gives
    no NaN where the sample point lies past it."""
    x = np.random.default_rng(0).normal(size=(1, 2, 3, 4))
    x[0, 1, 2, 3], x[0, 0, 0, 0] = np.inf, np.nan
    g = np.array(
        [[[[0.9, 0.8], [1.05, 1.1], [-1.1, -1.05]], [[0.2, -0.3], [0.99, 0.95], [1.3, 0.2]]]]
    )
    assert_same(
        lambda L, x, g: L.nn.functional.grid_sample(x, g, mode=mode, align_corners=False), x, g
    )
