"""Every in-place Tensor method under vmap, against a loop of the same method on slices.

``self`` is batched (in_dim 0 or -1); each other tensor argument is batched or not. A
batched value written into an unbatched ``self`` must raise PyTorch's error instead.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from opdb import samples
from twolibs import arr, assert_same, assert_same_error, assert_same_outcome, to_nt

import numtorch as nt

INPLACE = sorted(
    (name, m.inplace_of)
    for name, m in vars(nt.Tensor).items()
    if hasattr(m, "inplace_of") and not name.startswith("__")
)


def _usable(op, s):
    """Samples whose result has self's shape and a dtype self can hold."""
    a0 = s.args[0]
    if not isinstance(a0, np.ndarray) or a0.ndim == 0:
        return False
    with nt.no_grad():
        out = op.fn(*to_nt(s.args), **to_nt(s.kwargs))
    out = out[0] if isinstance(out, tuple) else out
    return tuple(out.shape) == a0.shape and np.can_cast(out.dtype.np, a0.dtype, "same_kind")


def _cases(op):
    dts = op.test.dtypes
    dtype = "float64" if "float64" in dts else dts[0]
    groups = zip(*(samples(op, dtype, seed=k) for k in range(3)))
    return [g for g in groups if _usable(op, g[0])][:3]


pytestmark = pytest.mark.usefixtures("no_fallback")


@pytest.mark.parametrize("name,op", [pytest.param(n, op, id=n) for n, op in INPLACE])
def test_inplace_method_under_vmap_matches_loop(name, op):
    B = 3
    for group in _cases(op):
        s0 = group[0]
        tensor_pos = [i for i, a in enumerate(s0.args) if isinstance(a, np.ndarray)]
        kw = to_nt(s0.kwargs)
        for self_dim, *rest in itertools.product((0, -1), *[(0, None)] * (len(tensor_pos) - 1)):
            dims = dict(zip(tensor_pos, (self_dim, *rest)))
            args = [
                np.stack([g.args[i] for g in group], dims[i]) if dims.get(i) is not None else a
                for i, a in enumerate(s0.args)
            ]
            in_dims = tuple(dims.get(i) for i in range(len(args)))
            got_self = to_nt(args[0])
            targs = to_nt(tuple(args[1:]))
            out = nt.vmap(lambda x, *r: getattr(x, name)(*r, **kw), in_dims=in_dims)(
                got_self, *targs
            )
            want = []
            for b in range(B):
                sl = [
                    a if d is None else nt.tensor(np.take(args[i], b, axis=d))
                    for i, (a, d) in enumerate(zip(args, in_dims))
                ]
                sl = [to_nt(a) if isinstance(a, np.ndarray) else a for a in sl]
                want.append(getattr(sl[0], name)(*sl[1:], **kw))
            what = f"{name} in_dims={in_dims} {s0}"
            np.testing.assert_allclose(
                got_self.numpy(), nt.stack(want, in_dims[0]).numpy(), err_msg=what, rtol=1e-12
            )
            np.testing.assert_allclose(
                out.numpy(), nt.stack(want).numpy(), err_msg=what, rtol=1e-12
            )


BINARY = [(n, op) for n, op in INPLACE if len([i for i in op.inputs]) >= 2]


@pytest.mark.parametrize("name,op", [pytest.param(n, op, id=n) for n, op in BINARY])
def test_batched_value_into_unbatched_self_raises(name, op):
    for group in _cases(op):
        s0 = group[0]
        pos = [i for i, a in enumerate(s0.args) if isinstance(a, np.ndarray)][1:]
        if not pos:
            continue
        j = pos[0]
        other = np.stack([g.args[j] for g in group], 0)
        in_dims = tuple(0 if i == j else None for i in range(len(s0.args)))
        args = list(to_nt(s0.args))
        args[j] = nt.tensor(other)
        before = args[0].clone()
        # PyTorch's vmap runs add_/atan2_ on the batched values unchecked: its broadcast error
        want = (
            r"^output with shape \[.*\] doesn't match the broadcast shape \[3"
            if op.name in ("add", "atan2")
            else r"^vmap: .*\(self, \*extra_args\) is not possible"
        )
        with pytest.raises(RuntimeError, match=want):
            nt.vmap(lambda x, *r: getattr(x, name)(*r, **to_nt(s0.kwargs)), in_dims=in_dims)(*args)
        np.testing.assert_array_equal(args[0].numpy(), before.numpy())


# ==================================================================
# Found by issue 14's second fuzz round.


# ------------------------------------------------------------------ in-place writes under vmap
@pytest.mark.filterwarnings("ignore")
def test_inplace_broadcast_into_a_batched_self_under_vmap():
    # torch.func pads self to the result's rank: when that fits it checks the cast (its
    # error) and otherwise writes into the padded view, where each sample refuses; numtorch
    # gives each sample's error then (not the padded shapes, which are equal)
    bools, floats = np.zeros((2, 1), bool), np.ones((2, 1, 1))
    assert_same_error(lambda L, y, b: L.func.vmap(lambda y, b: y.add_(b))(y, b), bools, floats)
    prog = lambda L, y: L.func.vmap(lambda y: y.add_(L.ones(1, 1, dtype=L.float64)))(y)  # noqa: E731
    assert_same_error(prog, bools)
    wide = np.ones((2, 1, 3))
    assert_same_error(lambda L, y, b: L.func.vmap(lambda y, b: y.mul_(b))(y, b), floats[:, 0], wide)

    def each(L, y, b):  # what torch.func's per-sample meaning is
        return [y[i].mul_(b[i]) for i in range(2)]

    assert_same_error(each, floats[:, 0], floats)
    err = pytest.raises(
        RuntimeError, match=r"output with shape \[1\] doesn't match the broadcast shape \[1, 1\]"
    )
    with err:
        nt.func.vmap(lambda y, b: y.mul_(b))(nt.zeros(2, 1), nt.ones(2, 1, 1))


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("write", ["setitem", "mul_"])
def test_inplace_checks_follow_the_transform_levels(write):
    # the innermost transform checks first: grad's leaf check inside vmap(grad), vmap's
    # batched-into-unbatched check inside grad(vmap)
    def inner(L, x, b):
        if write == "setitem":
            x[...] = b
        else:
            x.mul_(b)
        return x

    def vmap_of_grad(L, x, b):
        loss = lambda x, b: inner(L, x, b).sum()  # noqa: E731
        return L.func.vmap(L.func.grad(loss), in_dims=(None, 0))(x, b)

    def grad_of_vmap(L, x, b):
        loss = lambda x, b: L.func.vmap(lambda x, b: inner(L, x, b), in_dims=(None, 0))(x, b).sum()  # noqa: E731
        return L.func.grad(loss)(x, b)

    def view_of_leaf(L, x, b):
        loss = lambda x, b: inner(L, x.mT, b).sum()  # noqa: E731
        return L.func.vmap(L.func.grad(loss), in_dims=(None, 0))(x, b)

    for prog in (vmap_of_grad, grad_of_vmap, view_of_leaf):
        assert_same_error(prog, np.zeros((1, 1)), np.ones(2))


# ==================================================================
# Found in issue 14's fuzzer bucket "indexing": PyTorch's exception type and text.


# ------------------------------------------------------------------ cause 2: vmap in-place
@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")
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


@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")
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


@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")
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


@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")
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


# ==================================================================
# The in-place sweep: internal overlap, saved outputs, errors under torch.func.


@pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")
def test_vmap_writes_into_an_unbatched_expanded_tensor():
    """The row write goes through; the batched write into unbatched self is vmap's error."""

    def prog(T, x, b):
        def f(b):
            y = x.expand(2, 4)
            y.unbind(0)[0].mul_(2)
            y.mul_(b)
            return y

        return T.func.vmap(f)(b)

    assert_same_error(prog, arr(1, 4), arr(2, 1, 1))


@pytest.mark.parametrize(
    "make",
    [
        "r.new_zeros(3)",
        "r.new_ones((2, 3), dtype=T.float64)",
        "r.new_empty(3).fill_(1.5)",
        "r.new_full((3,), 2.0)",
        "r.new_empty_strided((3,), (1,)).zero_()",
    ],
)
def test_new_tensors_of_a_batched_self_are_batched(make):
    """Tensor.new_* of a batched tensor is batched (PyTorch's rule), so a batched value can
    be written into it in place."""

    def prog(T, x):
        def f(r):
            z = eval(make, {"r": r, "T": T})
            z.add_(r)
            return z

        return T.func.vmap(f)(x)

    assert_same(prog, arr(4, 3))


# PyTorch's fill_ batch rule copies a batched value whatever its dims (no 0-d check), so a
# write into an expanded tensor is refused as the copy's, and a value of the sample's shape
# is taken where the tensor is not expanded.
@pytest.mark.parametrize(
    "write",
    [
        lambda x, b: x.expand(2, 3).fill_(b),
        lambda x, b: x.expand(2, 3).fill_(b[0]),
        lambda x, b: x.clone().fill_(b),
        lambda x, b: x.expand(2, 3).clone().fill_(b),
    ],
)
def test_fill_with_a_batched_value(write):
    x, b = np.array([[2.32, -0.02, 1.5]]), np.array([[-0.53, 1.28, 0.5]])
    assert_same_outcome(lambda L, x, b: L.func.vmap(write, in_dims=(-1, -1))(x, b), x, b)
