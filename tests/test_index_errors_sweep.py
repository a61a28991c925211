"""Indexing, vmap in-place and dim errors: each with PyTorch's exception type and text
(issue 14's fuzzer bucket "indexing"). One test per cause, compared with torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from twolibs import assert_same, assert_same_error

warnings.filterwarnings("ignore", message="Using a non-tuple sequence")


def _set(x, idx, v):
    x[idx] = v
    return x


# ------------------------------------------------------------------ cause 1: indexing
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


# ------------------------------------------------------------------ cause 2: vmap in-place
@pytest.mark.parametrize(
    "name",
    ["add_", "mul_", "sub_", "copy_", "fill_", "pow_", "eq_", "logical_and_", "masked_fill_"],
)
@pytest.mark.parametrize("yshape,bshape", [((), ()), ((1,), (2,)), ((2,), ()), ((2,), (3,))])
def test_batched_into_unbatched_inplace(name, yshape, bshape):
    """vmap's error (named as PyTorch names the op) comes before the broadcast check;
    add_ has no such check in PyTorch: its broadcast error shows the batch dim."""

    def prog(L, b):
        y = L.zeros(yshape)
        if name == "masked_fill_":  # a Tensor value: PyTorch's fallback names the level
            return L.func.vmap(lambda t: y.masked_fill_(y > 0, t.sum()))(b)
        return L.func.vmap(lambda t: getattr(y, name)(t))(b)

    assert_same_error(prog, np.ones((2, *bshape), dtype=np.float32))


@pytest.mark.parametrize("name", ["add_", "mul_", "copy_", "atan2_", "clamp_min_"])
@pytest.mark.parametrize("unbatched", [False, True])
def test_inplace_shape_error_under_vmap(name, unbatched):
    """A batched self: the error shows the shapes with the batch dim in front, self padded
    to the result's rank."""

    def prog(L, y, b):
        if unbatched:
            return L.func.vmap(lambda t: getattr(t, name)(b))(y)
        return L.func.vmap(lambda t, u: getattr(t, name)(u))(y, b)

    b = np.ones(2, dtype=np.float32) if unbatched else np.ones((2, 2), dtype=np.float32)
    assert_same_error(prog, np.zeros((2,), dtype=np.float32), b)
    assert_same_error(prog, np.zeros((2, 1), dtype=np.float32), b)


def test_copy_broadcast_error():
    """copy_ from a src that broadcasts to a larger shape: PyTorch's text, not NumPy's."""
    prog = lambda L, x, b: x.copy_(b)  # noqa: E731
    assert_same_error(prog, np.zeros((1, 1)), np.ones((2, 1)))
    assert_same_error(prog, np.zeros((1, 1, 1)), np.ones(2))
    assert_same_error(
        lambda L, x, t, b: L.func.jvp(lambda u: u.copy_(b), (x,), (t,)),
        np.zeros((1, 1)),
        np.ones((1, 1)),
        np.ones((2, 1)),
    )


def _long(L, *v):
    return L.tensor(list(v), dtype=L.int64)


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


@pytest.mark.parametrize("x", [np.array(-2.5), np.array(1.5)])
def test_0d_mask_gradient(x):
    """The backward of x[mask] with a 0-d mask (a new dim of size one or zero)."""

    def prog(L, x):
        return L.func.grad(lambda t: (t[t > 0] * 2.0).sum())(x)

    assert_same(prog, x)


@pytest.mark.parametrize("shape", [(2, 0), (2, 1, 0), (2, 0, 1), (0,), (2, 3)])
@pytest.mark.parametrize("batched_self", [True, False])
def test_batched_mask_under_vmap(shape, batched_self):
    """An empty batched mask: PyTorch's index checks (mask shape, count) fire before
    vmap's refusal of a data-dependent shape."""
    if batched_self:
        prog = lambda L, y: L.func.vmap(lambda t: t[t > 0])(y)  # noqa: E731
    elif len(shape) < 2:
        return
    else:
        prog = lambda L, m: L.func.vmap(lambda u: L.zeros(shape[1:])[u > 0])(m)  # noqa: E731
    assert_same_error(prog, np.zeros(shape))


# ------------------------------------------------------------------ cause 3: dim errors
@pytest.mark.parametrize(
    "prog",
    [
        lambda L, x: x.amax(-1),  # amax/amin name the dim as given
        lambda L, x: x.amin((-1,)),
        lambda L, x: L.zeros(0, 0).amax((1, 0)),
        lambda L, x: x.kthvalue(1, -1),  # the empty dim before k's range
        lambda L, x: x.median(-1),
        lambda L, x: L.func.vmap(lambda t: t.median(-1))(x.unsqueeze(0).expand(2, 2, 0)),
        lambda L, x: L.func.vmap(lambda t: t.amax(-1))(x.unsqueeze(0).expand(2, 2, 0)),
        lambda L, x: L.func.vmap(lambda t: t.kthvalue(1, -1))(x.unsqueeze(0).expand(2, 2, 0)),
    ],
)
def test_empty_reduction_dim(prog):
    assert_same_error(prog, np.zeros((2, 0)))


@pytest.mark.parametrize(
    "ys,bs,in_dims",
    [
        ((1,), (2,), (None, 0)),
        ((2,), (3,), (0, 0)),
        ((1,), (2,), (0, None)),
        ((), (2,), (0, None)),  # an unbatched value: the eager expand text
        ((), (2,), (0, 0)),
        ((1, 1), (1, 2), (0, 0)),
        ((1, 1), (1, 2), (0, None)),  # the value is viewed without its leading ones
        ((1,), (), (None, 0)),  # a 0-d value fills
    ],
)
def test_setitem_value_under_vmap(ys, bs, in_dims):
    def prog(L, y, b):
        def f(t, u):
            t[...] = u
            return t

        return L.func.vmap(f, in_dims=in_dims)(y, b)

    y = np.zeros(((2,) if in_dims[0] == 0 else ()) + ys, dtype=np.float32)
    b = np.ones(((2,) if in_dims[1] == 0 else ()) + bs, dtype=np.float32)
    assert_same_error(prog, y, b)


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, x: x.prod(5),
        lambda L, x: x.transpose(1, 0),
        lambda L, x: x.gather(5, L.zeros((), dtype=L.int64)),
        lambda L, x: x.roll(1, 0),
        lambda L, x: x.roll(1, -1),
        lambda L, x: x.unflatten(0, (1,)).sum() if L.__name__ == "numtorch" else _unflatten(L, x),
    ],
)
def test_dims_of_a_0d_tensor(prog):
    """A dim on a 0-d tensor is checked as on one dim (roll and unflatten: 'no dimensions')."""
    assert_same_error(prog, np.array(1.5))


def _unflatten(L, x):
    """torch's text goes on with its C++ stack trace: compare its first two lines."""
    try:
        return x.unflatten(0, (1,))
    except RuntimeError as e:
        raise RuntimeError("\n".join(str(e).splitlines()[:2])) from None


@pytest.mark.parametrize(
    "f",
    [
        lambda L, t: (t[t > 0] * 2.0).sum(),  # a 0-d mask is read as a bool
        lambda L, t: t * t.item(),
        lambda L, t: t * (1.0 if t > 0 else 2.0),
    ],
)
def test_value_read_through_grad_under_vmap(f):
    """A value read through grad's wrapper of a batched tensor: vmap's combined error."""
    assert_same_error(lambda L, x: L.func.vmap(L.func.grad(lambda t: f(L, t)))(x), np.ones(2))


@pytest.mark.parametrize("name", ["pow_", "lerp_", "eq_", "hypot_", "add_", "mul_"])
@pytest.mark.parametrize("unbatched", [False, True])
def test_inplace_broadcast_error_under_vmap(name, unbatched):
    """Ops PyTorch runs in place through its fallback name each sample's dim; the ones
    with batch rules name the dim with the batch in front."""
    args = (0.5,) if name == "lerp_" else ()

    def prog(L, y, b):
        if unbatched:
            return L.func.vmap(lambda t: getattr(t, name)(b, *args))(y)
        return L.func.vmap(lambda t, u: getattr(t, name)(u, *args))(y, b)

    b = np.ones(3) if unbatched else np.ones((2, 3))
    assert_same_error(prog, np.zeros((2, 2)), b)
