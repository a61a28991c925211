"""Views and writes through views under vmap: views of batched tensors stay views, in-place
writes into them (setitem, narrow().mul_(), chains of views) match a loop and torch.func,
their gradients (CopySlices) match, and view_scatter itself runs batched without the
fallback, whether base, src or both carry the batch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from twolibs import arr, assert_close, assert_same, run_both

import numtorch as nt
from numtorch.func import _set_vmap_fallback_enabled
from numtorch.ops.views import narrow_p, select_p, transpose_p, view_scatter

# vmap against a loop of the same library: float64, near exact.
TOL = {"rtol": 1e-12, "atol": 1e-12}


def _np(x):
    return x.detach().numpy()


@pytest.fixture(autouse=True)
def no_fallback():
    _set_vmap_fallback_enabled(False)
    yield
    _set_vmap_fallback_enabled(True)


# ------------------------------------------------------------------ programs (lib: nt or torch)
def setitem_slice(lib, b, y):
    x = b * 1.0
    x[1:3] = y
    return (x * x).sum(0)


def narrow_mul(lib, b, y):
    x = b.clone()
    x.narrow(0, 1, 2).mul_(y)
    return x.sin()


def chain_of_views(lib, b, y):
    x = b * 2.0
    x.t()[1].narrow(0, 0, 2).add_(y[0] * y[1])  # t -> select -> narrow
    x.diagonal().mul_(3.0)
    return x.exp()


def squeeze_unflatten_write(lib, b, y):
    x = b.clone().unsqueeze(0)
    v = x.squeeze(0).flatten().unflatten(0, (2, -1))
    v[1].mul_(y.flatten()[0])
    return x.squeeze(0) * 1.5


PROGRAMS = [setitem_slice, narrow_mul, chain_of_views, squeeze_unflatten_write]
# (base shape, y shape) per program, logical (one batch element)
SHAPES = {
    setitem_slice: ((4, 3), (2, 3)),
    narrow_mul: ((4, 3), (2, 3)),
    chain_of_views: ((3, 4), (2, 2)),
    squeeze_unflatten_write: ((4, 3), (2, 3)),
}
DIMS = [(0, 0), (1, 0), (-1, 2), (0, None)]


def _batched(shape, d, B, seed):
    if d is None:
        return arr(*shape, seed=seed)
    return np.moveaxis(arr(B, *shape, seed=seed), 0, d)


def _inputs(prog, dims, B=3):
    sb, sy = SHAPES[prog]
    return _batched(sb, dims[0], B, 1), _batched(sy, dims[1], B, 2)


def _loop(lib, prog, b, y, dims, B):
    def take(t, d, i):
        return t if d is None else t.select(d, i)

    return lib.stack([prog(lib, take(b, dims[0], i), take(y, dims[1], i)) for i in range(B)])


@pytest.mark.parametrize("dims", DIMS, ids=str)
@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.__name__)
def test_write_through_views_values_and_grads(prog, dims):
    """vmap of a program that writes into views of a batched tensor: values and gradients
    (backward outside vmap through the CopySlices nodes) against a loop and torch.func."""
    B = 3
    bn, yn = _inputs(prog, dims, B)

    def run(lib, vmapped):
        b = lib.tensor(bn, requires_grad=True)
        y = lib.tensor(yn, requires_grad=True)
        if vmapped:
            out = lib.vmap(lambda p, q: prog(lib, p, q), in_dims=dims)(b, y)
        else:
            out = _loop(lib, prog, b, y, dims, B)
        (out * lib.tensor(arr(*out.shape, seed=7))).sum().backward()
        return out, b.grad, y.grad

    got, ref = run_both(run, True)
    assert_close(got, run(nt, False), **TOL)
    assert_close(got, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.__name__)
def test_batched_backward_through_copyslices(prog):
    """autograd.grad(is_grads_batched=True) over a graph with CopySlices: view_scatter's
    vjp formulas run on a batch of cotangents (view_scatter with a batched grad)."""
    bn, yn = (arr(*s, seed=k) for k, s in enumerate(SHAPES[prog]))
    b0, y0 = torch.tensor(bn), torch.tensor(yn)
    vn = arr(4, *prog(torch, b0, y0).shape, seed=5)

    def run(lib):
        b = lib.tensor(bn, requires_grad=True)
        y = lib.tensor(yn, requires_grad=True)
        out = prog(lib, b, y)
        return lib.autograd.grad(out, (b, y), lib.tensor(vn), is_grads_batched=True)

    got = assert_same(run, rtol=1e-10, atol=1e-12)
    b = nt.tensor(bn, requires_grad=True)
    y = nt.tensor(yn, requires_grad=True)
    out = prog(nt, b, y)
    for k in range(vn.shape[0]):
        want = nt.autograd.grad(out, (b, y), nt.tensor(vn[k]), retain_graph=True)
        assert_close(tuple(g[k] for g in got), want, **TOL)


# ------------------------------------------------------------------ view_scatter directly
CHAINS = {
    "narrow": ((4, 3), (2, 3), ((narrow_p, {"dim": 0, "start": 1, "length": 2}),)),
    "t_select": (
        (3, 4),
        (3,),
        ((transpose_p, {"dim0": 0, "dim1": 1}), (select_p, {"dim": 0, "index": 2})),
    ),
}


@pytest.mark.parametrize("dims", [(0, 0), (0, None), (None, 0), (1, -1)], ids=str)
@pytest.mark.parametrize("name", list(CHAINS))
def test_view_scatter_batched_base_and_src(name, dims):
    sb, ss, chain = CHAINS[name]
    B = 3
    base = nt.tensor(_batched(sb, dims[0], B, 1))
    src = nt.tensor(_batched(ss, dims[1], B, 2))
    got = nt.vmap(lambda b, s: view_scatter(b, s, chain), in_dims=dims)(base, src)

    def take(t, d, i):
        return t if d is None else t.select(d, i)

    want = nt.stack(
        [view_scatter(take(base, dims[0], i), take(src, dims[1], i), chain) for i in range(B)]
    )
    assert_close(got, want, **TOL)
    assert not np.array_equal(_np(got[0]), _np(got[1]))  # each element got its own write


NESTED = [
    (bo, bi, so, si)
    for bo in (None, 0)
    for bi in (None, 0)
    for so in (None, 0)
    for si in (None, 0)
    if (bo, so) != (None, None) and (bi, si) != (None, None)
]


@pytest.mark.parametrize("bo,bi,so,si", NESTED)
def test_view_scatter_nested_vmap(bo, bi, so, si):
    """Two vmap levels, base and src each batched at any of them (src batched at the
    inner level where base is not: the copy of base must gain that level)."""
    sb, ss, chain = CHAINS["narrow"]
    B1, B2 = 2, 3

    def make(shape, o, i, seed):
        shape = ((B2,) if i is not None else ()) + shape
        return nt.tensor(arr(*(((B1,) if o is not None else ()) + shape), seed=seed))

    base, src = make(sb, bo, bi, 1), make(ss, so, si, 2)

    def f(b, s):
        return view_scatter(b, s, chain)

    got = nt.vmap(nt.vmap(f, in_dims=(bi, si)), in_dims=(bo, so))(base, src)

    def take(t, d, i):
        return t if d is None else t.select(d, i)

    want = nt.stack(
        [
            nt.stack(
                [
                    f(take(take(base, bo, r), bi, c), take(take(src, so, r), si, c))
                    for c in range(B2)
                ]
            )
            for r in range(B1)
        ]
    )
    assert_close(got, want, **TOL)


def test_view_scatter_under_vmap_does_not_write_into_its_inputs():
    sb, ss, chain = CHAINS["narrow"]
    base, src = nt.tensor(arr(3, *sb)), nt.tensor(arr(*ss, seed=1))
    before = base.numpy().copy()
    nt.vmap(lambda b, s: view_scatter(b, s, chain), in_dims=(0, None))(base, src)
    np.testing.assert_array_equal(base.numpy(), before)


# ------------------------------------------------------------------ views stay views
VIEWS = {
    "transpose": lambda x: x.transpose(0, 1),
    "t": lambda x: x.t(),
    "permute": lambda x: x.permute(1, 0),
    "squeeze": lambda x: x.unsqueeze(1).squeeze(),
    "narrow": lambda x: x.narrow(1, 1, 2),
    "select": lambda x: x.select(1, 2),
    "diagonal": lambda x: x.diagonal(1),
    "flatten": lambda x: x.flatten(),
    "unflatten": lambda x: x.unflatten(1, (2, 2)),
    "movedim": lambda x: x.movedim(0, 1),
    "reshape": lambda x: x.reshape(-1),
}


@pytest.mark.parametrize("in_dim", [0, 1, -1])
@pytest.mark.parametrize("name", list(VIEWS))
def test_views_of_batched_tensors_share_memory(name, in_dim):
    """An in-place write into the view reaches the batched tensor it was taken from."""
    view = VIEWS[name]

    def f(lib, a):
        a = a.clone()

        def g(x):
            view(x).mul_(-2.0)
            return x

        return lib.vmap(g, in_dims=in_dim)(a), a

    an = np.ascontiguousarray(np.moveaxis(arr(2, 3, 4), 0, in_dim))
    got = assert_same(f, an, rtol=1e-12, atol=0)
    # Merging dims is a view unless the batch sits between them in memory (then a copy).
    copies = name in ("flatten", "reshape") and in_dim == 1
    assert np.allclose(_np(got[1]), an) == copies  # the write reached the caller's tensor


# ------------------------------------------------------------------ rule edge cases
def test_squeeze_keeps_a_batch_of_one():
    x = np.ones((1, 2, 1, 3, 1))
    for fn in (lambda t: t.squeeze(), lambda t: t.squeeze((0, 1)), lambda t: t.squeeze(-1)):
        got = nt.vmap(fn)(nt.tensor(x))
        ref = torch.func.vmap(fn)(torch.tensor(x))
        assert tuple(got.shape) == tuple(ref.shape)
    assert tuple(nt.vmap(lambda t: t.squeeze(), in_dims=2)(nt.tensor(x)).shape) == (1, 2, 3)


def test_cat_mixed_batched_unbatched_and_legacy_empty():
    def f(lib, a, b, e):
        return lib.vmap(lambda x, y, z: lib.cat([x, y, z, x], 1), in_dims=(0, None, 0))(a, b, e)

    a, b = arr(3, 2, 2), arr(2, 1).astype(np.float32)
    e = np.zeros((3, 0), dtype=np.int64)
    assert_same(f, a, b, e, rtol=1e-12, atol=0)


@pytest.mark.filterwarnings("ignore:There is a performance drop")
def test_cat_of_legacy_empties_alone_is_not_batched():
    """PyTorch's rule finds no batch size when every operand is a (0,): it cats their
    first samples, so the result takes writes into a fresh unbatched tensor."""

    def f(lib, x):
        def body(y):
            y = lib.cat([y, y.long()], -1)
            o = lib.zeros(0, dtype=y.dtype)
            o.index_copy_(0, lib.tensor([], dtype=lib.long), y)
            return o, lib.cat([y, lib.zeros(0, dtype=lib.int32)], 3) + 1

        return lib.vmap(body)(x)

    assert_same(f, np.zeros((2, 0)))


def test_logical_shape_errors_for_list_ops():
    a = nt.tensor(arr(3, 2, 2))
    with pytest.raises(RuntimeError, match=r"zero-dimensional tensor \(at position 1\)"):
        nt.vmap(lambda x, s: nt.cat([x, s]))(a, nt.tensor(arr(3)))
    with pytest.raises(RuntimeError, match=r"but got \[2, 2\] at entry 0 and \[2\] at entry 1"):
        nt.vmap(lambda x, y: nt.stack([x, y]))(a, nt.tensor(arr(3, 2)))
    with pytest.raises(
        RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions, but self is 3D"
    ):
        nt.vmap(lambda x: x.t())(nt.tensor(arr(2, 2, 3, 4)))
    with pytest.raises(RuntimeError, match="tril: input tensor must have at least 2 dimensions"):
        nt.vmap(lambda x: x.tril())(nt.tensor(arr(2, 3)))


def test_repeat_interleave_with_batched_repeats():
    x = nt.tensor(arr(2, 3))
    r = nt.tensor(np.array([[1, 0, 2], [2, 1, 0]]))
    got = nt.vmap(lambda a, k: nt.repeat_interleave(a, k, dim=0))(x, r)
    want = nt.stack([nt.repeat_interleave(x[i], r[i], dim=0) for i in range(2)])
    assert_close(got, want, **TOL)
    bad = nt.tensor(np.array([[1, 0, 2], [1, 1, 2]]))
    with pytest.raises(RuntimeError, match="vmap: repeat_interleave"):
        nt.vmap(lambda a, k: nt.repeat_interleave(a, k, dim=0))(x, bad)
    got = nt.vmap(lambda k: nt.repeat_interleave(k))(r)
    want = nt.stack([nt.repeat_interleave(r[i]) for i in range(2)])
    np.testing.assert_array_equal(got.numpy(), want.numpy())


# ==================================================================
# The view ops and tensor functions added for issue 14.


def test_as_strided_under_vmap_is_functorchs():
    def prog(T, x):
        f = T.func.vmap
        y = x.T.contiguous()
        return (
            f(lambda t: t.as_strided((2, 2), (1, 2)))(x),
            f(lambda t: t.as_strided((2, 2), (1, 2), 1))(x),
            f(lambda t: t.as_strided((2, 2), (1, 2)))(x[:, 3:]),
            f(lambda t: t.as_strided((2, 2), (1, 2)), in_dims=1)(y),
        )

    assert_same(prog, arr(2, 15))
