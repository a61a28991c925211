"""Max pooling's fast paths against PyTorch, bit for bit: values only where nothing can see
the indices (no gradient recorded, no transform but vmap), tiling windows (kernel = stride,
no padding, no dilation) reduced from strided slices, and their backward written without
accumulation. Ties, NaN, -inf, signed zeros, ceil mode, padding, dilation, strided and
channels-last inputs, integer inputs, 1 to 3 dims; eager, autograd, vmap, grad and jvp."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from twolibs import as_numpy

import numtorch as nt
from numtorch.nn import _pool_max

# (spatial dims, input shape, positional arguments, keywords)
CASES = [
    (2, (2, 3, 8, 8), (2,), {}),
    (2, (2, 3, 7, 9), (2,), {}),
    (2, (2, 3, 7, 9), (2,), {"ceil_mode": True}),
    (2, (1, 2, 9, 8), ((3, 2),), {}),
    (2, (1, 2, 9, 8), ((3, 2),), {"ceil_mode": True}),
    (2, (3, 8, 8), (2,), {}),
    (2, (2, 4, 48, 48), (2,), {}),  # (past _pool_max._FEW: the scan of fewer passes)
    (2, (2, 4, 47, 49), (2,), {"ceil_mode": True}),
    (2, (2, 3, 4, 4), (1,), {}),
    (2, (1, 2, 17, 17), (17,), {}),  # (289 window offsets: past uint8's codes)
    (2, (2, 3, 8, 8), (3, 2, 1), {}),
    (2, (2, 3, 8, 8), (2, 2, 1), {}),
    (2, (2, 3, 9, 9), (2, 2, 0, 2), {}),
    (2, (2, 3, 8, 8), (3, 2, 1, 2), {"ceil_mode": True}),
    (1, (2, 3, 9), (2,), {}),
    (1, (2, 3, 9), (3,), {"ceil_mode": True}),
    (1, (2, 3, 9), (3, 1, 1), {}),
    (3, (1, 2, 4, 5, 6), (2,), {}),
    (3, (1, 2, 4, 5, 6), (2,), {"ceil_mode": True}),
    (3, (1, 2, 5, 5, 5), (3, 2, 1), {}),
]
IDS = [f"{nd}d{shape}{a}{kw.get('ceil_mode', '') and 'ceil'}" for nd, shape, a, kw in CASES]
KINDS = ["distinct", "ties", "nan", "-inf", "both inf", "zeros", "int64"]


def _data(kind: str, shape, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = math.prod(shape)
    if kind == "distinct":
        return (rng.permutation(n).reshape(shape) / 7).astype(np.float32)
    if kind in ("ties", "int64"):
        return rng.integers(0, 3, shape).astype(np.float32 if kind == "ties" else np.int64)
    x = rng.standard_normal(shape).astype(np.float32)
    if kind == "nan":
        x[rng.random(shape) < 0.2] = np.nan
    elif kind == "-inf":
        x[rng.random(shape) < 0.6] = -np.inf
    elif kind == "both inf":
        x[rng.random(shape) < 0.3] = -np.inf
        x[rng.random(shape) < 0.1] = np.inf
    elif kind == "zeros":
        x = np.where(rng.random(shape) < 0.5, np.float32(-0.0), np.float32(0.0))
    return x


def _laid(lib, x: np.ndarray, layout: str):
    """x as a tensor of lib: contiguous, channels-last (a permuted view of a contiguous
    (N, *spatial, C) array) or stepped (every other element of the last dim)."""
    if layout == "channels_last":
        order = (0, *range(2, x.ndim), 1)
        base = np.ascontiguousarray(x.transpose(order))
        t = torch.tensor(base) if lib is torch else nt.tensor(base)
        return t.permute(0, x.ndim - 1, *range(1, x.ndim - 1))
    if layout == "stepped":
        wide = np.repeat(x, 2, axis=-1)
        t = torch.tensor(wide) if lib is torch else nt.tensor(wide)
        return t[..., ::2]
    return torch.tensor(x) if lib is torch else nt.tensor(x)


def _exact(got, want, where: str = "") -> None:
    g, w = as_numpy(got), as_numpy(want)
    assert g.shape == w.shape and g.dtype == w.dtype, where
    np.testing.assert_array_equal(g, w, err_msg=where)
    if g.dtype.kind == "f":  # (signed zeros: the first of equal values)
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w), err_msg=where)


def _pool(lib, nd: int):
    return getattr(lib.nn.functional, f"max_pool{nd}d")


LAID = [
    pytest.param(case, layout, id=f"{i}-{layout}")
    for case, i in zip(CASES, IDS)
    for layout in ("contiguous", "channels_last", "stepped")
    if layout != "channels_last" or len(case[1]) == case[0] + 2  # (it needs a batch dim)
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case,layout", LAID)
def test_values_and_indices_match_torch(case, layout, kind):
    nd, shape, a, kw = case
    x = _data(kind, shape)
    out = {}
    for lib in (nt, torch):
        # (torch's own layout for torch: its channels-last 3-d kernel gives a window of -inf
        # only, at the edge of ceil mode, another index than its contiguous one)
        t = _laid(lib, x, layout if lib is nt or nd < 3 else "contiguous")
        try:  # (PyTorch's 1-d pool without indices has no integer kernel)
            values = _pool(lib, nd)(t, *a, **kw)
        except NotImplementedError as e:
            values = str(e)
        out[lib] = (values, *_pool(lib, nd)(t, *a, **kw, return_indices=True))
    for name, g, w in zip(("values", "values with indices", "indices"), out[nt], out[torch]):
        if isinstance(w, str):
            assert g == w
        else:
            _exact(g, w, name)


@pytest.mark.parametrize("kind", ["distinct", "ties", "nan", "-inf", "zeros"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradient_matches_torch(case, kind):
    nd, shape, a, kw = case
    x = _data(kind, shape)
    rng = np.random.default_rng(1)
    grads = []
    for lib in (nt, torch):
        t = _laid(lib, x, "stepped").requires_grad_()
        out = _pool(lib, nd)(t, *a, **kw)
        g = rng.standard_normal(tuple(out.shape)).astype(np.float32)
        rng = np.random.default_rng(1)
        out.backward(torch.tensor(g) if lib is torch else nt.tensor(g))
        grads.append(t.grad)
    _exact(*grads, "input gradient")


def _per_sample(lib, nd, a, kw):
    """vmap(grad), vmap, jvp and grad of a pool over samples of a batch."""
    f = _pool(lib, nd)
    func = lib.func

    def loss(x, w):
        return (f(x, *a, **kw) * w).sum()

    def run(x, w, t):
        return (
            func.vmap(func.grad(loss))(x, w),
            func.vmap(lambda s: f(s, *a, **kw))(x),
            func.vmap(lambda s: f(s, *a, **kw, return_indices=True)[1])(x),
            func.jvp(lambda s: f(s, *a, **kw), (x,), (t,))[1],
            func.grad(loss)(x, w),
        )

    return run


@pytest.mark.parametrize("kind", ["distinct", "ties", "nan"])
@pytest.mark.parametrize(
    "case", [pytest.param(c, id=i) for c, i in zip(CASES, IDS) if len(c[1]) == c[0] + 2]
)
def test_transforms_match_torch(case, kind):
    nd, shape, a, kw = case
    x, t = _data(kind, shape), _data("distinct", shape, seed=2)
    osh = _pool(torch, nd)(torch.tensor(x), *a, **kw).shape
    w = np.random.default_rng(3).standard_normal(tuple(osh)).astype(np.float32)
    ours = _per_sample(nt, nd, a, kw)(nt.tensor(x), nt.tensor(w), nt.tensor(t))
    theirs = _per_sample(torch, nd, a, kw)(torch.tensor(x), torch.tensor(w), torch.tensor(t))
    for name, g, r in zip(("vmap(grad)", "vmap", "vmap indices", "jvp", "grad"), ours, theirs):
        _exact(g, r, name)


def _counting(monkeypatch, nd: int) -> list:
    """Calls of the values-only kernel, counted."""
    op, calls = _pool_max._VALUES[nd], []
    kernel = op.kernel

    def counted(*args, **kw):
        calls.append(1)
        return kernel(*args, **kw)

    monkeypatch.setattr(op, "kernel", counted)
    return calls


def test_values_only_where_nothing_sees_the_indices(monkeypatch):
    calls = _counting(monkeypatch, 2)
    F = nt.nn.functional
    x = nt.tensor(_data("distinct", (2, 2, 4, 4)))
    xg = x.clone().requires_grad_()

    def ran(f) -> bool:
        calls.clear()
        f()
        return bool(calls)

    assert ran(lambda: F.max_pool2d(x, 2))
    assert ran(lambda: nt.func.vmap(lambda s: F.max_pool2d(s, 2))(x))
    with nt.no_grad():
        assert ran(lambda: F.max_pool2d(xg, 2))
    assert not ran(lambda: F.max_pool2d(xg, 2))
    assert not ran(lambda: F.max_pool2d(x, 2, return_indices=True))
    assert not ran(lambda: nt.func.grad(lambda s: F.max_pool2d(s, 2).sum())(x))
    assert not ran(lambda: nt.func.vmap(nt.func.grad(lambda s: F.max_pool2d(s, 2).sum()))(x))
    assert not ran(lambda: nt.func.jvp(lambda s: F.max_pool2d(s, 2), (x,), (x,)))
    assert not ran(lambda: nt.func.vmap(lambda s: F.max_pool2d(s, 2))(xg))  # (the eager tape)
    assert F.max_pool2d(xg, 2).grad_fn.name() == "MaxPool2DWithIndicesBackward0"


def test_vmap_on_the_eager_tape_records_torchs_node():
    x = _data("ties", (3, 2, 6, 6))
    grads, names = [], []
    for lib in (nt, torch):
        t = (torch.tensor(x) if lib is torch else nt.tensor(x)).requires_grad_()
        y = lib.func.vmap(lambda s: lib.nn.functional.max_pool2d(s, 2))(t)
        names.append(y.grad_fn.name())
        (y * lib.arange(y.numel()).reshape(y.shape)).sum().backward()
        grads.append(t.grad)
    assert names[0] == names[1]
    _exact(*grads, "input gradient")


@pytest.mark.parametrize("size,k", [((6, 8), 2), ((7, 9), 3), ((9,), 2)])
def test_tiles_backward_writes_what_accumulation_adds(size, k):
    """Indices of tiling windows are distinct: the write equals the scatter-add, with the
    leading dims of gradient and indices broadcast (as under vmap)."""
    nd = len(size)
    x = nt.tensor(_data("ties", (2, 3, *size)))
    _, idx = _pool_max._MAX[nd].fn(x, (k,) * nd, (k,) * nd, (0,) * nd, (1,) * nd, True)
    g = nt.tensor(_data("distinct", (4, 1, 3, *idx.shape[2:])))
    idx = idx.unsqueeze(0)
    written = _pool_max.max_pool_backward(g, idx, size, True)
    added = _pool_max.max_pool_backward(g, idx, size)
    _exact(written, added)
    assert as_numpy(written).shape == (4, 2, 3, *size)
