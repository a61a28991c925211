"""Indexing against PyTorch: basic and advanced indices and their layouts, setitem, index_add,
index_put, index_select, index_reduce, scatter_add, scatter_reduce and masked_scatter:
values, accumulation of duplicates, gradients and error texts."""

from __future__ import annotations

import numpy as np
import pytest
from twolibs import (
    arr,
    assert_same,
    assert_same_error,
    assert_same_outcome,
)

import numtorch as nt

# ==================================================================
# Found by issue 14's third fuzz round (fresh seeds, 68,000 programs).


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("dtype", ["int64", "bool", "float32"])
def test_index_add_into_an_expanded_tensor_checks_dtypes_before_overlap(dtype):
    def prog(L):
        y = L.zeros(1, 2, dtype=getattr(L, dtype)).expand(3, 2)
        y.index_add_(0, L.tensor([0]), L.ones(1, 2))

    assert_same_error(prog)


# ==================================================================
# Causes behind the fourth fuzz round's failures (tests/progfuzz.py).


@pytest.mark.parametrize(
    "key",
    ["[:, None]", "[None, ::2]", "[..., None]", "[None, 1, None, ::2]", "[1:, None, 0]"],
)
def test_none_index_gives_the_unsqueezed_dim_pytorchs_stride(key):
    """x[..., None, ...] is unsqueeze in PyTorch: the new dim's stride is size * stride of the
    dim after it, not NumPy's 0. Layout rules read it: exp of x[:, None, :].expand(...)[:, :,
    None] took another dim order and a later view(-1) failed (also under vmap)."""

    def strides(L, x):
        return list(eval(f"x{key}").stride())

    assert_same(strides, arr(4, 3, 2))

    def prog(L, x):
        y = x.movedim(1, 0)[:, None, :].expand(2, 2, 2)[:, :, None].exp()
        return y[0].view(-1)

    assert_same(prog, arr(2, 2))

    def batched(L, x):
        return L.func.vmap(lambda v: v.expand(2, 2)[:, None].exp().view(-1), in_dims=-1)(x)

    assert_same(batched, arr(2, 2))


@pytest.mark.parametrize(
    "key", ["[0:1][:, [1, 0]]", "[None, [1, 0], ..., 1]", "[:, :, 1:2][:, [1, 0]]"]
)
def test_advanced_index_layout_reads_the_index_views_size1_strides(key):
    """PyTorch views each index tensor with size-1 dims around it before its TensorIterator
    orders the result's dims; those dims carry the strides of a view (not 0), and the
    order reads them (x[0:1][:, [1, 0]] of a permuted x was laid out otherwise)."""

    def strides(L, x):
        y = eval(f"x.permute(2, 1, 0){key}")
        return [s for s, n in zip(y.stride(), y.shape) if n != 1]

    assert_same(strides, arr(4, 3, 2))


# ==================================================================
# Causes behind the bad-input sweep's DIFFERS cases (tests/test_bad_inputs.py), fixed.


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, s, m: s.clone().masked_scatter_(m, L.ones(12)),
        lambda L, s, m: s.clone().masked_scatter_(m[None], L.ones(12)),
        lambda L, s, m: s.clone().masked_scatter_(m[0], L.ones(12)),
        lambda L, s, m: s.clone().masked_fill_(m, 1.0),  # broadcasts: the in-place shape text
    ],
)
def test_masked_scatter_expands_the_mask_to_self(prog):
    assert_same_error(prog, np.zeros((3, 1)), np.ones((3, 4), bool))


# ==================================================================
# Core behaviour found wrong by the nn.functional work (issue 10's follow-ups).


# ------------------------------------------------------------------ index_add / scatter_add
ACC_DTYPES = ["float32", "float64", "int64", "complex128", "bool"]


def _data(dtype, *shape, seed=0):
    x = arr(*shape, seed=seed) * 3
    if dtype == "complex128":
        return x + 1j * arr(*shape, seed=seed + 1)
    if dtype == "bool":
        return x > 0
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", ACC_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1, 2])
def test_index_add_accumulates_duplicates(dtype, dim):
    x, src = _data(dtype, 4, 5, 3), _data(dtype, 4, 5, 3, seed=2)
    size = x.shape[dim]
    index = np.array([1, 0, 1, size - 1, 1, 0, size - 1])
    src_shape = list(x.shape)
    src_shape[dim] = index.size
    src = np.resize(src, src_shape)
    alpha = True if dtype == "bool" else 2
    tol = 1e-6 if dtype == "float32" else 1e-12
    assert_same(lambda lib, x, i, s: x.index_add(dim, i, s), x, index, src, rtol=tol)
    assert_same(lambda lib, x, i, s: x.index_add(dim, i, s, alpha=alpha), x, index, src, rtol=tol)
    assert_same(lambda lib, x, i, s: x.clone().index_add_(dim, i, s), x, index, src, rtol=tol)


def test_index_add_edge_shapes():
    assert_same(lambda lib, x, i, s: x.index_add(0, i, s), arr(3, 0), np.array([0, 0]), arr(2, 0))
    assert_same(lambda lib, x, i, s: x.index_add(0, i, s), arr(3, 2), np.zeros(0, int), arr(0, 2))
    assert_same(lambda lib, x, i, s: x.index_add(0, i, s), arr(5), np.array([4, 4]), arr(2))
    assert_same(lambda lib, x, i, s: x.index_add(0, i, s), arr(), np.array([0]), arr())


# A 0-d source is one row of a 0-d self only: with self of dims (or a second index) PyTorch
# refuses it, and a 0-d self takes no source of dims.
@pytest.mark.parametrize(
    "shape, sshape, index",
    [((3,), (), [0]), ((1,), (), [0]), ((2, 2), (), [0]), ((), (1,), [0]), ((), (), [0, 0])]
    + [((3,), (), [0, 1]), ((), (), [0])],
)
def test_index_add_of_0d_tensors(shape, sshape, index):
    def prog(lib, x, s):
        return x.index_add(0, lib.tensor(index), s, alpha=2)

    assert_same_outcome(prog, arr(*shape), arr(*sshape, seed=1))


# index_add's node saves its source where the source needs a gradient, as PyTorch's does: a
# later write into it (or the op's own write, where the source is a view of self that the
# overlap check lets through) fails the backward pass.
@pytest.mark.parametrize(
    "prog",
    [
        lambda lib, x: (lambda s: (x.clone().index_add_(0, lib.tensor([0]), s), s.mul_(2)))(
            x[:1] * 1
        )[0],
        # not dense (size 2 at stride 2): no overlap check, and the op writes its saved source
        lambda lib, x: (lambda y: y.index_add_(0, lib.tensor([0]), y[:1]))(
            x.view(1, 2, 2).transpose(0, 2).clone()
        ),
        # empty: no overlap check either
        lambda lib, x: (lambda y: y.index_add_(0, lib.tensor([0]), y[:1]))(x.view(2, 2)[:, :0] * 1),
    ],
)
def test_index_add_saves_its_source(prog):
    def run(lib, x):
        x.requires_grad_(True)
        y = prog(lib, x)
        (y * lib.arange(1.0, 1 + y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
        return x.grad

    assert_same_outcome(run, arr(2, 2))


def test_index_add_source_needs_no_grad_saves_nothing():
    def run(lib, x):
        x.requires_grad_(True)
        s = lib.ones(1, 2, dtype=x.dtype)
        y = (x * 2).index_add(0, lib.tensor([1]), s, alpha=3)
        s.add_(1)  # unsaved: the backward pass runs
        y.sum().backward()
        return y, x.grad

    assert_same(run, arr(2, 2))


@pytest.mark.parametrize("dtype", ACC_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter_add_accumulates_duplicates(dtype, dim):
    x, src = _data(dtype, 3, 4, 2), _data(dtype, 5, 5, 5, seed=3)
    ishape = [2, 3, 2]
    ishape[dim] = 5
    index = np.random.default_rng(1).integers(0, x.shape[dim], ishape)
    tol = 1e-6 if dtype == "float32" else 1e-12
    assert_same(lambda lib, x, i, s: x.scatter_add(dim, i, s), x, index, src, rtol=tol)
    assert_same(lambda lib, x, i, s: lib.scatter_add(x, dim, i, s), x, index, src, rtol=tol)
    if dtype in ("float32", "float64"):
        for reduce in ("sum", "prod", "mean", "amax"):
            assert_same(
                lambda lib, x, i, s: x.scatter_reduce(dim, i, s, reduce),
                x,
                index,
                src,
                rtol=tol,
            )


@pytest.mark.parametrize("dtype", ACC_DTYPES)
def test_index_put_accumulate_rows(dtype):
    x = _data(dtype, 4, 4)
    idx = np.array([[1, -1], [1, 0], [-4, 3]])
    vals = _data(dtype, 3, 2, 4, seed=4)
    tol = 1e-6 if dtype == "float32" else 1e-12
    put = lambda lib, x, i, v: x.index_put((i,), v, accumulate=True)  # noqa: E731
    assert_same(put, x, idx, vals, rtol=tol)
    assert_same(put, x, idx, vals[0, 0], rtol=tol)  # one row broadcast to every index
    assert_same(put, x, np.zeros(0, int), vals[0, :0], rtol=tol)
    assert_same(lambda lib, x, i, v: x.index_put((i, i), v, accumulate=True), x, idx, vals[..., 0])
    assert_same(put, x, np.array([True, False, True, True]), vals[:, 0], rtol=tol)


def test_indexing_backward_accumulates_duplicate_rows():
    def prog(lib, w, i):
        w = w.requires_grad_()
        (w[i] * lib.arange(3.0)).sum().backward()
        return w.grad

    assert_same(prog, arr(5, 3), np.array([0, 4, 0, -1, 2]))


# ==================================================================
# Found by issue 14's sweep of crashes where PyTorch succeeds.


@pytest.mark.parametrize("reduce", ["amax", "amin", "sum", "prod", "mean"])
@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_scatter_reduce_empty_index(reduce, dtype):
    def prog(L, x, src):
        idx = L.zeros(3, 0, dtype=L.long)
        return [x.scatter_reduce(1, idx, src, reduce, include_self=inc) for inc in (True, False)]

    assert_same(prog, np.arange(6, dtype=dtype).reshape(3, 2), np.zeros((3, 0), dtype))


@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_scatter_reduce_extremes_without_self(reduce):
    def prog(L, x, src):
        idx = L.tensor([[0, 0, 1], [1, 1, 1]])
        return x.scatter_reduce(1, idx, src, reduce, include_self=False)

    assert_same(prog, arr(2, 3), arr(2, 3, seed=1))
    assert_same(prog, np.arange(6).reshape(2, 3), -np.arange(6).reshape(2, 3))


MASKS = np.array([[True, False, True, False], [False, True, True, True], [False] * 4])


@pytest.mark.parametrize("in_dims", [(0, None, 0), (None, None, 0), (None, 0, 0), (0, 0, 0)])
def test_vmap_grad_masked_scatter_batched_mask(in_dims):
    def prog(L, s, x, m):
        f = lambda s, x, m: (x.masked_scatter(m, s) ** 2).sum()  # noqa: E731
        return L.func.vmap(L.func.grad(f, argnums=(0, 1)), in_dims=in_dims)(s, x, m)

    s = arr(3, 5) if in_dims[0] == 0 else arr(5)
    x = arr(3, 4, seed=1) if in_dims[1] == 0 else arr(4, seed=1)
    assert_same(prog, s, x, MASKS)


def test_masked_scatter_backward_broadcast_mask():
    def prog(L, s, x, m):
        s, x = s.requires_grad_(), x.requires_grad_()
        (x.masked_scatter(m, s) ** 2).sum().backward()
        return s.grad, x.grad

    assert_same(prog, arr(2, 5), arr(3, 4, seed=1), MASKS[1])


def test_scatter_reduce_prod_gradient_at_a_zero_of_input():
    def prog(L, x, src):
        x = x.requires_grad_()
        y = x.scatter_reduce(0, L.tensor([0, 0, 1]), src, "prod")
        y.backward(L.tensor([1.0, 2.0, 3.0, 4.0], dtype=y.dtype))
        return y, x.grad

    assert_same(prog, np.array([0.0, 2.0, 0.0, 1.5]), np.array([3.0, -2.0, 5.0]))
    empty = (
        lambda L, x: L.func.grad(  # noqa: E731
            lambda x: x.scatter_reduce(0, L.zeros(0, dtype=L.long), x[:0], "prod").sum()
        )(x)
    )
    assert_same(empty, np.array([0.0, 2.0]))
    # PyTorch's jvp of scatter_reduce "prod" is 0 everywhere: finite differences decide.
    x, t = np.array([0.0, 2.0, 0.0, 1.5]), np.array([1.0, -1.0, 2.0, 0.5])
    src = np.array([3.0, -2.0, 5.0])

    def f(x):
        return x.scatter_reduce(0, nt.tensor([0, 0, 1]), nt.tensor(src), "prod")

    _, got = nt.func.jvp(f, (nt.tensor(x),), (nt.tensor(t),))
    eps = 1e-6
    want = (f(nt.tensor(x + eps * t)) - f(nt.tensor(x - eps * t))).numpy() / (2 * eps)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-8)


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_prod_gradient_at_zeros_of_src(include_self):
    def prog(L, x, s):
        x, s = x.requires_grad_(), s.requires_grad_()
        y = x.scatter_reduce(0, L.tensor([0, 0, 1, 2, 2]), s, "prod", include_self=include_self)
        y.backward(L.tensor([1.0, 2.0, 3.0, 4.0], dtype=y.dtype))
        return y, x.grad, s.grad

    x, src = np.array([0.0, 2.0, 0.0, 1.5]), np.array([0.0, -2.0, 5.0, 0.0, 0.0])
    assert_same(prog, x, src)
    # the jvp in src (PyTorch's is 0 everywhere): finite differences decide
    t = np.array([1.0, -1.0, 2.0, 0.5, 3.0])

    def f(s):
        idx = nt.tensor([0, 0, 1, 2, 2])
        return nt.tensor(x).scatter_reduce(0, idx, s, "prod", include_self=include_self)

    _, got = nt.func.jvp(f, (nt.tensor(src),), (nt.tensor(t),))
    eps = 1e-6
    want = (f(nt.tensor(src + eps * t)) - f(nt.tensor(src - eps * t))).numpy() / (2 * eps)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-8)


# ==================================================================
# Found in issue 14's fuzzer bucket "indexing": PyTorch's exception type and text.


def _set(x, idx, v):
    x[idx] = v
    return x


# ------------------------------------------------------------------ cause 1: indexing
@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")
@pytest.mark.parametrize(
    "prog",
    [
        lambda L, x: x[0],  # a lone int on a 0-d
        lambda L, x: x[:],  # a lone slice on a 0-d
        lambda L, x: _set(x, 0, 1.0),
        lambda L, x: _set(x, slice(None), 1.0),
        lambda L, x: x[(0,)],
        lambda L, x: L.func.vmap(lambda t: t[0])(x.expand(2)),
        lambda L, x: L.func.vmap(lambda t: t[::2])(x.expand(2)),
        lambda L, x: L.func.vmap(lambda t: t.select(0, 0))(x.expand(2)),
        lambda L, x: L.func.vmap(lambda t: t.unbind(-1))(x.expand(2)),
        lambda L, x: L.func.vmap(lambda t: t.split(1))(x.expand(2)),
        lambda L, x: L.func.vmap(lambda t: t.tril())(x.expand(2)),
    ],
)
def test_index_of_a_0d_tensor(prog):
    assert_same_error(prog, np.array(1.5))


@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")
@pytest.mark.parametrize(
    "shape,idx",
    [
        ((0, 1), ([0, 0],)),  # a size-0 dim: no position, no value
        ((0, 3), ([0], [5])),
        ((3, 0), ([5], [0])),
        ((2, 3, 4), (slice(None), [0], [9])),  # the position among the index tensors
        ((2, 3, 4), (slice(None), slice(None), [9])),
        ((2, 3, 4), ([0, 5], [9, 0])),  # element by element, then index by index
        ((2, 3, 4), ([[True] * 3] * 2, [9])),  # a k-dim mask counts as k
        ((2, 3, 4), ([0, 1], [0, 1, 2])),  # the index tensors do not broadcast
    ],
)
def test_advanced_index_errors(shape, idx):
    def key(L):
        return tuple(i if isinstance(i, slice) else L.tensor(i) for i in idx)

    assert_same_error(lambda L, x: x[key(L)], np.zeros(shape))
    assert_same_error(lambda L, x: _set(x, key(L), 1.0), np.zeros(shape))


@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")
def test_advanced_index_quirks():
    """An empty result visits no entry; a list of floats indexes as long; the values'
    shape is checked before the bounds."""
    assert_same(lambda L, x: x[:, [5]], np.zeros((0, 3)))
    assert_same(lambda L, x: x[[5], []], np.zeros((3, 0)))
    assert_same(lambda L, x: x[[1.7]], np.arange(3.0))
    assert_same(lambda L, x: x[[[]]], np.arange(3.0))
    assert_same_error(
        lambda L, x: _set(x, ([0, 1], [0, 5]), L.zeros(3, dtype=L.float64)), np.zeros((2, 3, 4))
    )
    assert_same_error(lambda L, x: L.func.vmap(lambda t: t[[5]])(x), np.zeros((2, 3)))
    assert_same_error(lambda L, x: L.func.vmap(lambda t: t[[0, 0]])(x), np.zeros((2, 0)))
    assert_same_error(lambda L, x: x.take(L.tensor([0])), np.zeros(0))
    assert_same_error(
        lambda L, x: x.put(L.tensor([0]), L.tensor([1.0], dtype=L.float64)), np.zeros(0)
    )
    assert_same_error(
        lambda L, x: L.func.vmap(lambda t: t.take(L.tensor([0])))(x), np.zeros((2, 0))
    )


def _long(L, *v):
    return L.tensor(list(v), dtype=L.int64)


@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")
@pytest.mark.parametrize(
    "prog,shape",
    [
        (lambda L, x: x.index_select(0, _long(L, 0)), (0, 2)),  # an empty dim (not 1-d)
        (lambda L, x: x.index_select(0, _long(L, 5)), (0,)),
        (lambda L, x: L.func.vmap(lambda t: t.index_select(1, _long(L, 0)))(x), (2, 1, 0)),
        (lambda L, x: L.func.vmap(lambda t: t.index_select(0, _long(L, 5)))(x), (2, 3)),
        # index_add_: the index's dtype, then the sizes, then the bounds
        (lambda L, x: x.index_add_(0, _long(L, 0), x[:1] * 3), (0, 1, 1)),
        (lambda L, x: x.index_add_(0, _long(L, 5), L.zeros(2, 2, dtype=x.dtype)), (3, 2)),
        (lambda L, x: x.index_add_(0, _long(L, 5), L.zeros(1, 3, dtype=x.dtype)), (3, 2)),
        (lambda L, x: x.index_add_(0, L.tensor([5.0]), L.zeros(2, 2, dtype=x.dtype)), (3, 2)),
        (lambda L, x: x.index_copy_(0, _long(L, 5), L.zeros(2, 2, dtype=x.dtype)), (3, 2)),
        (lambda L, x: x.index_copy_(0, _long(L, 5), L.zeros(1, 3, dtype=x.dtype)), (3, 2)),
        # under vmap: index_add_ checks with the batch first and dim shifted
        (lambda L, x: L.func.vmap(lambda t: t.index_add_(0, _long(L, 0), t[:1] * 3))(x), (2, 0, 1)),
        (lambda L, x: L.func.vmap(lambda t: t.index_add_(0, _long(L, 5), t[:1]))(x), (2, 3, 1)),
        (
            lambda L, x: L.func.vmap(lambda t: t.index_add_(-1, _long(L, 0, 1), t[:, :1]))(x),
            (2, 3, 2),
        ),
    ],
)
def test_index_select_and_index_add_checks(prog, shape):
    assert_same_error(prog, np.zeros(shape))


@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")
@pytest.mark.parametrize("x", [np.array(-2.5), np.array(1.5)])
def test_0d_mask_gradient(x):
    """The backward of x[mask] with a 0-d mask (a new dim of size one or zero)."""

    def prog(L, x):
        return L.func.grad(lambda t: (t[t > 0] * 2.0).sum())(x)

    assert_same(prog, x)


# ==================================================================
# The view ops and tensor functions added for issue 14.


def test_index_reduce_forward_inplace_and_errors():
    def prog(T, x, s):
        i = T.tensor([2, 0, 2], dtype=T.int32)
        y = x.clone()
        y.index_reduce_(0, i, s, "amin", include_self=False)
        return x.index_reduce(0, i, s, "mean"), T.index_reduce(x, 0, i, s, "prod"), y

    assert_same(prog, arr(3, 2), arr(3, 2, seed=1))
    x, s, i = "T.ones(3, 4)", "T.ones(2, 4)", "T.tensor([0, 2])"
    for call in (
        f"{x}.index_reduce_(0, {i}, {s}, 'sum')",
        f"{x}.index_reduce_(0, {i}.float(), {s}, 'mean')",
        f"{x}.index_reduce_(0, {i}, {s}, 'mean', include_self=3)",
        f"T.index_reduce({x}, 0, {i}, {s}, 'mean', include_self=3)",
        f"{x}.index_reduce(0, {i}, {s}.double(), 'amax')",
        f"{x}.index_reduce(0, {i}, T.ones(2), 'amax')",
    ):
        assert_same_error(lambda T, call=call: eval(call))


# ==================================================================
# Issue 30: the view copies, view scatters and index ops on complex (the generic sweeps
# cover forward values and the vjps; these cover what they leave out).


def _cplx(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


_NO_COMPLEX_GRAD = [  # PyTorch refuses autograd of the complex result, not forward AD
    lambda L, x: L.select_copy(x, 1, -1),
    lambda L, x: L.slice_copy(x, 0, 1, None, 2),
    lambda L, x: L.select_scatter(x, x[0] * 2, 0, 2),
    lambda L, x: L.slice_scatter(x, x[:2] * 1j, 0, 1, 3),
    lambda L, x: L.scatter_reduce(x, 0, L.tensor([[0, 1, 0, 2], [3, 0, 0, 1]]), x[1:3], "sum"),
    lambda L, x: x.scatter_reduce(
        1, L.tensor([[0, 0], [1, 3]]), x[:2, :2], "mean", include_self=False
    ),
]


@pytest.mark.parametrize("f", _NO_COMPLEX_GRAD)
def test_complex_results_without_a_derivative_still_have_forward_ad(f):
    def prog(L, x, t):
        with L.autograd.forward_ad.dual_level():
            out = f(L, L.autograd.forward_ad.make_dual(x, t))
            return L.autograd.forward_ad.unpack_dual(out)

    assert_same(prog, _cplx(4, 4), _cplx(4, 4, seed=1))
    assert_same_error(lambda L, x: f(L, x.requires_grad_()), _cplx(4, 4))


@pytest.mark.parametrize(
    "f",
    [
        lambda L, x: L.diagonal_copy(x, 1),
        lambda L, x: L.unfold_copy(x, 1, 2, 1),
        lambda L, x: L.select_scatter(x, x[:, 0], 1, 1),
        lambda L, x: L.diagonal_scatter(x, x[:, 0] * 1j),
        lambda L, x: L.scatter_reduce(x, 1, L.tensor([[1, 0], [1, 1], [2, 0]]), x[:, :2], "prod"),
        lambda L, x: L.masked_select(x, L.tensor([True, False, True])),
        lambda L, x: L.nonzero_static(x * (x.imag > 0), size=3),
        lambda L, x: L.full_like(x, 2 - 1j),
    ],
)
def test_complex_ops_batch_as_pytorchs(f, no_fallback):
    assert_same(lambda L, x: L.vmap(lambda y: f(L, y))(x), _cplx(2, 3, 3))


def test_complex_copies_second_order_and_detach_copy():
    def prog(L, x):
        x.requires_grad_()
        y = L.permute_copy(L.unbind_copy(L.view_copy(x, (2, 3, 2)), 0)[1], (1, 0)) * x[0]
        (g,) = L.autograd.grad((y * y.conj()).real.sum(), x, create_graph=True)
        return L.autograd.grad((g * g.conj()).real.sum(), x)

    assert_same(prog, _cplx(4, 3))
    assert_same_error(
        lambda L, x: L.detach_copy(x.requires_grad_()).abs().sum().backward(), _cplx(3)
    )


@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_complex_scatter_reduce_amax_amin_have_no_kernel(reduce):
    def prog(L, x):
        return L.scatter_reduce(x.requires_grad_(), 0, L.tensor([[0, 1]]), x[:1] * 2, reduce)

    assert_same_error(prog, _cplx(2, 2).astype(np.complex64))


def test_complex_scatter_reduce_prod_jvp_is_its_derivative():
    """PyTorch's forward AD leaves scatter_reduce(prod)'s tangent undefined (zero), on real
    and complex inputs alike; numtorch's is the derivative (finite differences decide)."""
    idx = nt.tensor([[0, 1, 0, 2], [0, 0, 3, 2]])

    def f(x, s):
        return x.scatter_reduce(0, idx, s, "prod", include_self=True)

    x, s = nt.tensor(_cplx(4, 4)), nt.tensor(_cplx(2, 4, seed=1))
    tx, ts = nt.tensor(_cplx(4, 4, seed=2)), nt.tensor(_cplx(2, 4, seed=3))
    _, tangent = nt.func.jvp(f, (x, s), (tx, ts))
    eps = 1e-6
    fd = (f(x + eps * tx, s + eps * ts) - f(x - eps * tx, s - eps * ts)) / (2 * eps)
    np.testing.assert_allclose(tangent.numpy(), fd.numpy(), rtol=1e-6, atol=1e-8)
    with pytest.raises(RuntimeError, match="scatter_reduce does not support automatic diff"):
        f(x.requires_grad_(), s)


# Errors and results of the indexing batch rules where PyTorch's rule, not the op, decides.
VMAP_RULES = {
    "fill_batched_value_broadcast": lambda T, x: T.func.vmap(lambda a, v: a.clone().fill_(v))(x, x),
    "fill_batched_value_shape": lambda T, x: T.func.vmap(lambda a, v: a.clone().fill_(v))(
        x[:, :2], x[:, :3]
    ),
    "fill_batched_value_rank": lambda T, x: T.func.vmap(lambda a, v: a.clone().fill_(v))(
        x[:, :2], x[:, None, :2].expand(3, 3, 2)
    ),
    "index_select_scalar_two_values": lambda T, x: T.func.vmap(
        lambda a: a.index_select(0, T.tensor([0, 0]))
    )(x[:, 0]),
    "index_select_scalar_out_of_bounds": lambda T, x: T.func.vmap(
        lambda a: a.index_select(0, T.tensor([0, 1]))
    )(x[:, 0]),
    "index_select_float_index": lambda T, x: T.func.vmap(
        lambda a: a.index_select(0, T.tensor([0.0]))
    )(x),
    "index_select_int16_index": lambda T, x: T.func.vmap(
        lambda a: a.index_select(0, T.tensor([0], dtype=T.int16))
    )(x),
    "index_add_out_of_bounds": lambda T, x: T.func.vmap(
        lambda a: a.index_add(0, T.tensor([1, -7, 9]), T.ones(3, dtype=a.dtype))
    )(x),
    "index_copy_out_of_bounds": lambda T, x: T.func.vmap(
        lambda a: a.index_copy(0, T.tensor([1, 9, -7]), T.ones(3, dtype=a.dtype))
    )(x),
    "index_fill_out_of_bounds": lambda T, x: T.func.vmap(
        lambda a: a.index_fill(0, T.tensor([-9]), 1.0)
    )(x),
    "masked_fill_int_mask": lambda T, x: T.func.vmap(lambda a, m, v: a.masked_fill(m, v))(
        x, (x > 3).int(), x[:, 0]
    ),
    "masked_fill_long_mask": lambda T, x: T.func.vmap(lambda a, m, v: a.masked_fill(m, v))(
        x, (x > 3).long(), x[:, 0]
    ),
}


@pytest.mark.parametrize("prog", list(VMAP_RULES.values()), ids=list(VMAP_RULES))
def test_indexing_batch_rules_as_pytorchs(prog):
    assert_same_outcome(prog, np.arange(12.0).reshape(3, 4))


INDEX_ADD_BOUNDS = {  # PyTorch's index_add rule: a scatter's error at the last dim only
    "last_dim": lambda T, x: T.func.vmap(lambda t: t.index_add(1, T.tensor([5]), t[:, :1]))(x),
    "inner_dim": lambda T, x: T.func.vmap(lambda t: t.index_add(0, T.tensor([5]), t[:1]))(x),
    "negative_inner": lambda T, x: T.func.vmap(lambda t: t.index_add(0, T.tensor([-5]), t[:1]))(x),
    "one_dim": lambda T, x: T.func.vmap(lambda t: t.index_add(0, T.tensor([5]), t[0, :1]))(
        x[:, :, 0]
    ),
    "copy_inner_dim": lambda T, x: T.func.vmap(lambda t: t.index_copy(0, T.tensor([5]), t[:1]))(x),
}


@pytest.mark.parametrize("prog", list(INDEX_ADD_BOUNDS.values()), ids=list(INDEX_ADD_BOUNDS))
def test_index_add_bounds_under_vmap(prog):
    assert_same_outcome(prog, np.zeros((2, 3, 1)))


# Tuples inside an index are index sequences, as lists are.
@pytest.mark.parametrize(
    "key",
    [
        (slice(None), (0, 2), (1, 3)),
        ((0, 1),),
        ([0, 1], (1, 2)),
        ((0, 1), Ellipsis),
        (0, ((0, 1), (1, 2))),
        ((1,), (2, 0), slice(1, None)),
    ],
)
def test_tuple_inside_index(key):
    assert_same(lambda T, x: x[key], np.arange(24.0).reshape(2, 3, 4))

    def put(T, x):
        x[key] = -1.0
        return x

    assert_same(put, np.arange(24.0).reshape(2, 3, 4))
