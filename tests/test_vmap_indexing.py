"""vmap over indexing: advanced-index layouts, setitem and in-place writes, boolean masks,
data-dependent shapes and errors. Each program runs under numtorch's vmap and is compared
with a Python loop over the batch and, where torch supports the call, with torch.func.vmap
(values or error texts)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from twolibs import arr, assert_close, assert_same, assert_same_error, error_of, leaves, lib_arg

import numtorch as nt

B = 3
# Results against the loop, against torch and against each other: float64 throughout.
TOL = {"rtol": 1e-12, "atol": 1e-12}


pytestmark = pytest.mark.usefixtures("no_fallback")


def rng(seed=0):
    return np.random.default_rng(seed)


def _np(t):
    return t.detach().numpy()


def vmapped(lib, fn, in_dims):
    return lib.vmap(lambda *a: fn(lib, *a), in_dims=in_dims)


def batch(shape, in_dim, high=None, seed=0, dtype=None):
    """B random versions of one argument stacked along in_dim (one version when None);
    integer ones (``high``) hold values below high, distinct where there is room."""
    r = rng(seed)
    n = 1 if in_dim is None else B
    if dtype == "bool":
        vs = [r.random(shape) < 0.5 for _ in range(n)]
    elif high is not None and np.prod(shape) <= high:  # distinct: writes do not collide
        vs = [r.permutation(high)[: int(np.prod(shape))].reshape(shape) for _ in range(n)]
    elif high is not None:
        vs = [r.integers(0, high, size=shape) for _ in range(n)]
    else:
        vs = [r.standard_normal(shape) for _ in range(n)]
    return vs[0] if in_dim is None else np.stack(vs, in_dim)


def loop(fn, arrays, in_dims, lib=nt):
    outs = []
    for b in range(B):
        args = [
            lib_arg(lib, a if d is None or not isinstance(a, np.ndarray) else np.take(a, b, d))
            for a, d in zip(arrays, in_dims)
        ]
        outs.append(fn(lib, *args))
    if isinstance(outs[0], tuple):
        return tuple(lib.stack([o[k] for o in outs]) for k in range(len(outs[0])))
    return lib.stack(outs)


def _close(a, b) -> bool:
    xs, ys = leaves(a), leaves(b)
    return len(xs) == len(ys) and all(
        tuple(x.shape) == tuple(y.shape) and np.allclose(_np(x), _np(y), rtol=1e-12, atol=1e-12)
        for x, y in zip(xs, ys)
    )


def check(fn, arrays, in_dims, what="", torch_too=True):
    """numtorch's vmap equals the loop, and torch.func.vmap where torch batches the call
    (and agrees with its own loop: it is wrong for some index_put layouts)."""
    got = vmapped(nt, fn, in_dims)(*(lib_arg(nt, a) for a in arrays))
    assert_close(got, loop(fn, arrays, in_dims), **TOL, where=what + " loop")
    if torch_too:
        try:
            ref = vmapped(torch, fn, in_dims)(*(lib_arg(torch, a) for a in arrays))
        except RuntimeError:
            return got
        if not _close(got, ref):
            assert not _close(ref, loop(fn, arrays, in_dims, torch)), what + " torch"
    return got


def assert_same_vmap_error(fn, arrays, in_dims):
    """numtorch's vmap and torch.func.vmap raise the same exception type and text."""
    assert_same_error(lambda lib, *a: vmapped(lib, fn, in_dims)(*a), *arrays)


def _combos(k):
    return [c for c in itertools.product((0, -1, None), repeat=k) if any(d is not None for d in c)]


# ------------------------------------------------------------------ advanced-index layouts
XSHAPE = (2, 3, 4, 5)
# (name, key from the index tensors, (shape, high) per index tensor)
KEYS = [
    ("i", lambda i: (i,), [((2,), 2)]),
    (":,i", lambda i: (slice(None), i), [((3,), 3)]),
    (
        ":,:,i,j adjacent after a slice",
        lambda i, j: (slice(None), slice(None), i, j),
        [((2,), 4), ((2,), 5)],
    ),
    ("i,:,j apart", lambda i, j: (i, slice(None), j), [((2,), 2), ((2,), 4)]),
    (
        ":,i,:,j apart, broadcast",
        lambda i, j: (slice(None), i, slice(None), j),
        [((2, 1), 3), ((3,), 5)],
    ),
    ("...,i 2-d", lambda i: (Ellipsis, i), [((2, 2), 5)]),
    ("i,j broadcast", lambda i, j: (i, j), [((2, 1), 2), ((3,), 3)]),
    ("None,:,i", lambda i: (None, slice(None), i), [((2,), 3)]),
    ("1,:,i after an int", lambda i: (1, slice(None), i), [((2,), 4)]),
    (":,i 0-d,j", lambda i, j: (slice(None), i, j), [((), 3), ((2,), 4)]),
    ("i 0-d,j 0-d", lambda i, j: (i, slice(None), j), [((), 2), ((), 4)]),
]


def _key_args(specs, dims, seed=1):
    return [batch(s, d, high=h, seed=seed + k) for k, ((s, h), d) in enumerate(zip(specs, dims))]


@pytest.mark.parametrize("name,key,specs", KEYS, ids=[k[0] for k in KEYS])
def test_getitem_with_index_tensors_matches_loop_and_torch(name, key, specs):
    def f(lib, x, *idx):
        return x[key(*idx)]

    for dims in _combos(1 + len(specs)):
        x = batch(XSHAPE, dims[0])
        check(f, [x, *_key_args(specs, dims[1:])], dims, f"{name} {dims}")


def _region(key, specs):
    """The logical shape of x[key]."""
    idx = [torch.zeros(s, dtype=torch.int64) for s, _ in specs]
    return tuple(torch.zeros(XSHAPE)[key(*idx)].shape)


@pytest.mark.parametrize("name,key,specs", KEYS, ids=[k[0] for k in KEYS])
def test_setitem_with_index_tensors_matches_loop_and_torch(name, key, specs):
    """index_put_ on the batched tensor: values of the indexed region's shape or broadcast
    from its trailing dim, batched or not; the index tensors batched or not."""

    def f(lib, x, *rest):
        *idx, v = rest
        y = x.clone()
        y[key(*idx)] = v
        return y

    region = _region(key, specs)
    for vshape in (region, region[-1:]):
        for dims in itertools.product((0, -1), *([(0, -1, None)] * len(specs)), (0, None)):
            x = batch(XSHAPE, dims[0])
            v = batch(vshape, dims[-1], seed=7)
            check(f, [x, *_key_args(specs, dims[1:-1]), v], dims, f"{name} {vshape} {dims}")


@pytest.mark.parametrize("name,key,specs", KEYS[:4], ids=[k[0] for k in KEYS[:4]])
def test_setitem_of_batched_values_into_an_unbatched_tensor_raises(name, key, specs):
    def f(lib, x, *rest):
        *idx, v = rest
        x = x.clone()
        x[key(*idx)] = v
        return x

    region = _region(key, specs)
    dims = (None, *([None] * len(specs)), 0)
    assert_same_vmap_error(f, [arr(*XSHAPE), *_key_args(specs, dims[1:-1]), batch(region, 0)], dims)
    dims = (None, 0, *([None] * len(specs)))
    assert_same_vmap_error(f, [arr(*XSHAPE), *_key_args(specs, dims[1:-1]), 1.0], dims)


def test_nested_vmap_over_index_tensors():
    x = nt.tensor(arr(2, 3, 4, 5))
    i = nt.tensor(rng(1).integers(0, 4, size=(2, 2, 2)))
    got = nt.vmap(nt.vmap(lambda a, b: a[:, b]), in_dims=(None, 1))(x, i)
    want = nt.stack([nt.stack([x[r][:, i[r, c]] for r in range(2)]) for c in range(2)])
    assert_close(got, want, **TOL, where="nested")


# ------------------------------------------------------------------ in-place writes
def test_fill_writes_into_the_caller_tensor_at_any_in_dim():
    for in_dim in (0, 1, -1):
        x = nt.tensor(arr(3, 4))
        out = nt.vmap(lambda r: r.fill_(1), in_dims=in_dim)(x)
        np.testing.assert_array_equal(x.numpy(), np.ones((3, 4)))
        np.testing.assert_array_equal(out.movedim(0, in_dim).numpy(), np.ones((3, 4)))
        v = np.arange(x.shape[in_dim], dtype=np.float64)
        nt.vmap(lambda r, s: r.fill_(s), in_dims=(in_dim, 0))(x, nt.tensor(v))
        for b in range(len(v)):
            np.testing.assert_array_equal(x.select(in_dim, b).numpy(), v[b])


def test_nested_vmap_fill_writes_into_the_caller_tensor():
    x = nt.tensor(arr(2, 3, 4))
    nt.vmap(nt.vmap(lambda r: r.fill_(2.0)), in_dims=2)(x)
    np.testing.assert_array_equal(x.numpy(), np.full((2, 3, 4), 2.0))


def _inplace_cases():
    """(name, program writing into its first argument, argument shapes per in_dims)."""
    idx = np.array([2, 0], dtype=np.int64)
    mask = np.array([True, False, True, False])
    return [
        ("fill_", lambda lib, x, v: x.fill_(v), [(3, 4), ()]),
        (
            "setitem slice",
            lambda lib, x, v: x.__setitem__((slice(None), slice(1, 3)), v) or x,
            [(3, 4), (3, 2)],
        ),
        ("setitem int", lambda lib, x, v: x.__setitem__(1, v) or x, [(3, 4), (4,)]),
        ("index_put_", lambda lib, x, v: x.index_put_((lib.tensor(idx),), v), [(3, 4), (2, 4)]),
        (
            "scatter_",
            lambda lib, x, v: x.scatter_(0, lib.tensor(np.array([[2, 0, 1, 1]])), v),
            [(3, 4), (1, 4)],
        ),
        ("masked_fill_", lambda lib, x, v: x.masked_fill_(lib.tensor(mask), v), [(3, 4), ()]),
        ("copy_", lambda lib, x, v: x.copy_(v), [(3, 4), (4,)]),
        ("index_add_", lambda lib, x, v: x.index_add_(0, lib.tensor(idx), v), [(3, 4), (2, 4)]),
        ("index_copy_", lambda lib, x, v: x.index_copy_(0, lib.tensor(idx), v), [(3, 4), (2, 4)]),
        (
            "masked_scatter_",
            lambda lib, x, v: x.masked_scatter_(lib.tensor(mask), v),
            [(3, 4), (8,)],
        ),
        ("put_", lambda lib, x, v: x.put_(lib.tensor(idx), v), [(3, 4), (2,)]),
    ]


INPLACE = _inplace_cases()


@pytest.mark.parametrize("name,prog,shapes", INPLACE, ids=[c[0] for c in INPLACE])
@pytest.mark.parametrize("in_dims", [(0, 0), (0, None), (-1, 0), (1, -1)])
def test_inplace_into_a_batched_tensor_writes_into_the_caller_tensor(name, prog, shapes, in_dims):
    """The written tensor is the caller's: compared with the loop on a copy and with torch."""
    x, v = batch(shapes[0], in_dims[0]), batch(shapes[1], in_dims[1], seed=1)
    want = loop(prog, [x.copy(), v], in_dims)
    xs = {lib: lib_arg(lib, x) for lib in (nt, torch)}
    out = vmapped(nt, prog, in_dims)(xs[nt], lib_arg(nt, v))
    ref = vmapped(torch, prog, in_dims)(xs[torch], lib_arg(torch, v))
    assert_close(out, want, **TOL, where=name)
    assert_close(out, ref, **TOL, where=name + " torch")
    assert_close(xs[nt], xs[torch], **TOL, where=name + " caller's tensor")
    assert_close(xs[nt].movedim(in_dims[0], 0), want, **TOL, where=name + " caller's tensor")


@pytest.mark.parametrize("name,prog,shapes", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_of_batched_values_into_an_unbatched_tensor_raises(name, prog, shapes):
    with pytest.raises(RuntimeError, match=r"^vmap: .*\(self, \*extra_args\) is not possible"):
        vmapped(nt, prog, (None, 0))(nt.tensor(arr(*shapes[0])), nt.tensor(batch(shapes[1], 0)))


def test_setitem_with_a_batched_index_writes_per_element():
    def f(lib, x, i, v):
        x[i] = v
        return x

    x, i, v = arr(B, 4, 5), rng(1).integers(0, 4, size=(B, 2)), arr(B, 2, 5, seed=2)
    check(f, [x, i, v], (0, 0, 0))
    check(f, [x, i, 0.5], (0, 0, None))
    x_nt = nt.tensor(x)
    vmapped(nt, f, (0, 0, None))(x_nt, nt.tensor(i), -1.0)
    want = x.copy()
    for b in range(B):
        want[b, i[b]] = -1.0
    np.testing.assert_array_equal(x_nt.numpy(), want)


# ------------------------------------------------------------------ boolean masks
def test_batched_mask_index_raises_torchs_error():
    assert_same_vmap_error(
        lambda lib, x, m: x[m], [arr(B, 3, 4), batch((3, 4), 0, dtype="bool")], (0, 0)
    )
    assert_same_vmap_error(
        lambda lib, x, m: x[:, m], [arr(3, 4), batch((4,), 0, dtype="bool")], (None, 0)
    )


def test_unbatched_mask_selects_from_every_batch_element():
    m = rng(3).random((3, 4)) < 0.5
    for dims in ((0, None), (-1, None)):
        check(lambda lib, x, m: x[m], [batch((3, 4), dims[0]), m], dims)
        check(lambda lib, x, m: x[..., m[0]], [batch((3, 4), dims[0]), m], dims)
        check(lambda lib, x, m: lib.masked_select(x, m), [batch((3, 4), dims[0]), m], dims)


def test_two_dim_mask_index_matches_torch_with_gradient():
    """x[mask] with a 2-d mask eagerly (forward and gradient), and vmap over its backward."""
    x, m = arr(3, 4), arr(3, 4, seed=1) > 0
    g = arr(int(m.sum()), seed=2)

    def prog(lib, xt, mt, gt):
        xt.requires_grad_()
        out = xt[mt]
        return (out, *lib.autograd.grad(out, xt, gt))

    assert_same(prog, x, m, g, **TOL)
    xt = nt.tensor(x).requires_grad_()
    out = xt[nt.tensor(m)]
    vs = nt.tensor(arr(B, *out.shape, seed=4))
    (gb,) = nt.autograd.grad(out, xt, vs, retain_graph=True, is_grads_batched=True)
    for b in range(B):
        (gw,) = nt.autograd.grad(out, xt, vs[b], retain_graph=True)
        assert_close(gb[b], gw, **TOL, where="batched backward")


def test_batched_mask_setitem_with_count_free_values_matches_loop():
    """Beyond torch.func.vmap (which refuses any batched mask): the values do not depend on
    how many elements each mask selects, so the result has a static shape."""

    def relu_(lib, x):
        x[x < 0] = 0.0
        return x

    def rows(lib, x, m, v):
        y = x.clone()
        y[m] = v
        return y

    def cols_add(lib, x, m, v):
        return lib.index_put(x, (None, m), v, accumulate=True)

    x = batch((3, 4), 0)
    out = check(relu_, [x], (0,), torch_too=False)
    np.testing.assert_array_equal(out.numpy(), np.maximum(x, 0))
    for dims in ((0, 0, 0), (0, -1, None), (None, 0, 0), (0, 0, None)):
        if dims[0] is not None:
            check(
                rows,
                [batch((3, 4), dims[0]), batch((3,), dims[1], dtype="bool"), batch((4,), dims[2])],
                dims,
                torch_too=False,
            )
        check(
            cols_add,
            [batch((3, 4), dims[0]), batch((4,), dims[1], dtype="bool"), batch((3, 1), dims[2])],
            dims,
            torch_too=False,
        )
    with pytest.raises(IndexError, match="does not match the shape of the indexed tensor"):
        nt.vmap(lambda x, m: x.__setitem__(m, 1.0))(
            nt.tensor(x), nt.tensor(batch((2,), 0, dtype="bool"))
        )


def test_batched_mask_setitem_with_per_element_values_raises_torchs_error():
    def f(lib, x, m, v):
        x = x.clone()
        x[m] = v
        return x

    m = np.zeros((B, 4), dtype=bool)
    m[:, :2] = True
    assert_same_vmap_error(f, [arr(B, 4), m, arr(B, 2)], (0, 0, 0))


def test_masked_select_batched_mask_raises_torchs_error():
    assert_same_vmap_error(
        lambda lib, x, m: lib.masked_select(x, m), [arr(B, 4), batch((4,), 0, dtype="bool")], (0, 0)
    )
    assert_same_vmap_error(
        lambda lib, x, m: lib.masked_select(x, m), [arr(4), batch((4,), 0, dtype="bool")], (None, 0)
    )


def test_masked_scatter_batched_mask_takes_each_elements_source_in_order():
    f = lambda lib, x, m, s: lib.masked_scatter(x, m, s)  # noqa: E731
    for dims in ((0, 0, 0), (None, 0, None), (0, -1, 1), (None, 0, 0)):
        check(
            f,
            [batch((3, 4), dims[0]), batch((3, 4), dims[1], dtype="bool"), batch((2, 7), dims[2])],
            dims,
        )
    # a source too short for one element's mask
    m = np.zeros((B, 4), dtype=bool)
    m[1] = True
    assert_same_vmap_error(f, [arr(B, 4), m, arr(B, 3)], (0, 0, 0))


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, y: L.func.vmap(lambda y: y.clone().masked_scatter_(y > 0, y * 0.5))(y),
        lambda L, y: L.func.vmap(lambda y: y.masked_scatter(y > 0, y * 0.5))(y),
        lambda L, y: L.func.vmap(lambda y: y.masked_scatter((y > 0).float(), y * 0.5))(y),
        lambda L, y: L.func.vmap(lambda m: y[0].masked_scatter(m, y[0] * 0.5))(y > 0),
        lambda L, y: L.func.vmap(lambda y: y.masked_scatter(y > 0, y[:1] * 0.5))(y),
        lambda L, y: L.func.vmap(
            L.func.grad(lambda y: y.masked_scatter(y > 0, (y * 0.5).double()).sum())
        )(y.float()),
    ],
)
def test_masked_scatter_batched_mask_checks_the_dtypes_first(prog):
    # the kernel's first check, before the mask's dtype and the source's length
    assert_same_error(prog, np.array([[0, 1, 2], [3, 0, 1]]))


def test_masked_scatter_gradient_through_the_batched_mask_rule():
    x, s = arr(B, 3, 4), arr(B, 12, seed=1)
    m = batch((3, 4), 0, dtype="bool")
    grads = []
    for mode in ("vmap", "loop"):
        xt, st = nt.tensor(x, requires_grad=True), nt.tensor(s, requires_grad=True)
        if mode == "vmap":
            out = nt.vmap(nt.masked_scatter)(xt, nt.tensor(m), st)
        else:
            out = nt.stack([nt.masked_scatter(xt[b], nt.tensor(m[b]), st[b]) for b in range(B)])
        grads.append(nt.autograd.grad((out * nt.tensor(arr(B, 3, 4, seed=5))).sum(), (xt, st)))
    assert_close(grads[0], grads[1], **TOL, where="masked_scatter gradients")


# ------------------------------------------------------------------ data-dependent shapes
NONZERO = (
    "vmap: We do not support batching operators that can output dynamic shape. Attempted to "
    "vmap over aten::nonzero. Please file an issue at https://github.com/pytorch/pytorch/issues "
    "if you need this feature."
)


def test_nonzero_raises_torchs_dynamic_shape_error():
    assert_same_vmap_error(lambda lib, x: lib.nonzero(x), [arr(B, 4)], (0,))
    for prog in (lambda x: nt.nonzero(x, as_tuple=True), lambda x: x.nonzero(), nt.where):
        with pytest.raises(RuntimeError) as e:
            nt.vmap(prog)(nt.tensor(arr(B, 4)))
        assert str(e.value) == NONZERO


def test_argwhere_raises_the_dynamic_shape_error():
    with pytest.raises(RuntimeError, match=r"^vmap: .* Attempted to vmap over aten::argwhere\."):
        nt.vmap(nt.argwhere)(nt.tensor(arr(B, 4)))


def test_one_hot_needs_an_explicit_class_count_under_vmap():
    i = rng(1).integers(0, 4, size=(B, 5))
    for n in (-1, 0):
        assert_same_vmap_error(lambda lib, t: lib.nn.functional.one_hot(t, n), [i], (0,))
    check(lambda lib, t: lib.nn.functional.one_hot(t, 6), [i], (0,))
    check(lambda lib, t: lib.nn.functional.one_hot(t, 6), [batch((5,), -1, high=4)], (-1,))


@pytest.mark.parametrize("idx", [np.array([0, 3, 1]), np.array(2), np.array([[1], [0]])])
def test_one_hot_infers_the_class_count_eagerly(idx):
    assert_same(lambda lib, t: lib.nn.functional.one_hot(t), idx, **TOL)


# ------------------------------------------------------------------ flat indices and errors
def test_take_and_put_out_of_range_errors_match_torch():
    i = np.array([[1], [5], [0]])
    assert_same_vmap_error(lambda lib, x, i: lib.take(x, i), [arr(B, 3), i], (0, 0))
    assert_same_vmap_error(
        lambda lib, x, i, s: lib.put(x, i, s), [arr(B, 3), i, arr(B, 1)], (0, 0, 0)
    )
    assert_same_vmap_error(lambda lib, x, i: lib.take(x, i), [arr(B, 3), np.array([-4])], (0, None))


def test_take_and_put_on_flattened_batch_elements():
    for dims in _combos(2):
        check(
            lambda lib, x, i: lib.take(x, i),
            [batch((3, 4), dims[0]), batch((2, 2), dims[1], high=12) - 6],
            dims,
        )
    for dims in _combos(3):
        args = [batch((3, 4), dims[0]), batch((5,), dims[1], high=12), batch((5,), dims[2], seed=3)]
        check(lambda lib, x, i, s: lib.put(x, i, s, accumulate=True), args, dims)


def test_dim_errors_are_about_the_logical_tensor():
    assert_same_vmap_error(
        lambda lib, x, i: lib.gather(x, 2, i),
        [arr(B, 3, 4), np.zeros((B, 3, 4), dtype=np.int64)],
        (0, 0),
    )
    assert_same_vmap_error(
        lambda lib, x, i: lib.index_select(x, -3, i),
        [arr(B, 3, 4), np.zeros((B, 2), dtype=np.int64)],
        (0, 0),
    )
    # torch.func.vmap accepts a 2-d index here; a loop of index_select does not
    with pytest.raises(IndexError, match=r"^index_select\(\): Index is supposed to be a vector$"):
        nt.vmap(lambda x, i: x.index_select(0, i))(
            nt.zeros(B, 3), nt.zeros(B, 2, 2, dtype=nt.int64)
        )


def test_empty_index_tensor_batched_at_the_last_dim():
    """torch.func.vmap raises IndexError here; the loop is the reference."""
    i = np.zeros((0, B), dtype=np.int64)
    check(lambda lib, x, i: x[i], [arr(B, 3, 4), i], (0, -1), torch_too=False)
    check(lambda lib, x, i: x[:, i], [arr(3, 4), i], (None, -1), torch_too=False)


def test_vmap_of_getitem_records_autograd():
    x = nt.tensor(arr(B, 4, 5), requires_grad=True)
    i = nt.tensor(rng(1).integers(0, 5, size=(B, 3)))
    w = nt.tensor(arr(B, 4, 3, seed=2))
    (g,) = nt.autograd.grad((nt.vmap(lambda r, j: r[:, j])(x, i) * w).sum(), x)
    xs = x.detach().clone().requires_grad_()
    (gl,) = nt.autograd.grad(sum((xs[b][:, i[b]] * w[b]).sum() for b in range(B)), xs)
    assert_close(g, gl, **TOL, where="gradient")


# ==================================================================
# Found by issue 14's second fuzz round.


# ------------------------------------------------------------------ 0-d masks under vmap(grad)
@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("in_dims", [(None, 0), (0, 0)])
def test_a_batched_0d_mask_under_vmap_of_grad_is_read(in_dims):
    # PyTorch reads a 0-d bool index (.item()) unless vmap is the innermost transform
    def prog(L, x, b):
        loss = lambda x, b: x[b > 0].sum()  # noqa: E731
        return L.func.vmap(L.func.grad(loss), in_dims=in_dims)(x, b)

    assert_same_error(prog, np.ones(3) if in_dims[0] is None else np.ones((2, 3)), np.ones(2))
    prog = lambda L, x, b: L.func.vmap(lambda x, b: x[b > 0], in_dims=in_dims)(x, b)  # noqa: E731
    assert_same_error(prog, np.ones(3) if in_dims[0] is None else np.ones((2, 3)), np.ones(2))
    own = lambda L, x: L.func.vmap(L.func.grad(lambda x: x[x.sum() > 0].sum()))(x)  # noqa: E731
    assert_same_error(own, np.ones((2, 3)))


# ==================================================================
# Causes behind the fourth fuzz round's failures (tests/progfuzz.py).


def test_vmap_index_add_checks_the_dtypes_before_the_sizes():
    def f(lib):
        x = lib.tensor([[[[True, False]]]])

        def one(x):
            y = x.expand(0, 1, 2)
            return y.index_add_(0, lib.tensor([0]), y[:1] * 3)

        return lib.func.vmap(one, in_dims=-1)(x)

    assert_same_error(f)


# ==================================================================
# Issue 14, "unclear errors": PyTorch's exception type and text; NumPy's errors never leak.


def test_vmap_index_add_source_shape():
    """Under vmap the same check, with PyTorch's text (its batch rule shows the shapes with
    the batch dim first)."""

    def prog(T):
        f = lambda x: x.index_add(0, T.tensor([0, 1]), T.ones(2, 3))  # noqa: E731
        return T.func.vmap(f)(T.ones(2, 3, 4))

    got, want = error_of(prog, nt), error_of(prog, torch)
    assert got == want


# ==================================================================
# Found in issue 14's fuzzer bucket "indexing": PyTorch's exception type and text.


@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")
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


@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")
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
