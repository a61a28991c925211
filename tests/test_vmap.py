"""vmap's API: pytrees, in_dims/out_dims, nesting, chunking, errors, in-place writes, the
fallback, BatchedTensor, and vmap over the backward pass. Each program runs on numtorch and
on torch.func and the results (values or error texts) are compared."""

from __future__ import annotations

import warnings
from collections import namedtuple

import numpy as np
import pytest
from twolibs import arr, assert_close, assert_same, assert_same_error

import numtorch as nt
from numtorch._core.op import defop
from numtorch.func import _batched, _set_vmap_fallback_enabled

Point = namedtuple("Point", "x y")


# ------------------------------------------------------------------ the API
def test_in_dims_over_pytrees_and_negative_dims():
    def f(lib, a, b, c):
        def g(t, d, p, s):
            return t[0] * d["k"] + p.x.sum() - p.y + s

        return lib.vmap(g, in_dims=((0, 1), {"k": -1}, Point(None, 0), None))(
            (a, b), {"k": c}, Point(c, a), 2.0
        )

    assert_same(f, arr(3, 4), arr(4, 3), arr(4, 3, seed=1))


def test_out_dims_pytree_and_non_tensor_outputs():
    def f(lib, a):
        return lib.vmap(
            lambda x: {"v": x * 2, "s": (x.sum(), "tag")},
            out_dims={"v": 1, "s": (0, None)},
        )(a)

    out = assert_same(f, arr(3, 4))
    assert out["s"][1] == "tag"


def test_unbatched_output_is_expanded_and_kwargs_are_not_batched():
    def f(lib, a, w):
        return lib.vmap(lambda x, *, scale: (x * scale, scale), out_dims=(1, 0))(a, scale=w)

    assert_same(f, arr(3, 2), arr(2))


@pytest.mark.parametrize("out_dims", [0, 1, -1, 2])
def test_out_dims_positions(out_dims):
    assert_same(lambda lib, a: lib.vmap(lambda x: x.exp(), out_dims=out_dims)(a), arr(3, 4, 5))


def test_nested_vmap_three_levels():
    def f(lib, a, b):
        inner = lib.vmap(lambda x, y: x * y + x.sum(), in_dims=(0, None))
        mid = lib.vmap(inner, in_dims=(1, 0))
        return lib.vmap(mid, in_dims=(-1, None))(a, b)

    assert_same(f, arr(4, 3, 5, 2), arr(3, 5))


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 10])
def test_chunk_size_equals_unchunked(chunk):
    def g(lib, chunk_size):
        def f(a, b):
            return lib.vmap(
                lambda x, y: ((x @ y).tanh(), x.sum()), in_dims=(0, None), chunk_size=chunk_size
            )(a, b)

        return f

    a, b = nt.tensor(arr(7, 3, 4)), nt.tensor(arr(4, 2))
    assert_close(g(nt, chunk)(a, b), g(nt, None)(a, b), rtol=1e-12)
    assert_same(lambda lib, a, b: g(lib, chunk)(a, b), arr(7, 3, 4), arr(4, 2))


def test_batched_tensor_shows_the_logical_tensor():
    seen = {}

    def f(x):
        seen.update(shape=x.shape, dim=x.dim(), size1=x.size(1), numel=x.numel(), len=len(x))
        seen["repr"] = repr(x)
        seen["cls"] = type(x).__name__
        return x

    nt.vmap(f, in_dims=1)(nt.zeros(4, 3, 5))
    assert seen["shape"] == (4, 5) and seen["dim"] == 2 and seen["size1"] == 5
    assert seen["numel"] == 20 and seen["len"] == 4 and seen["cls"] == "BatchedTensor"
    assert seen["repr"].startswith("BatchedTensor(lvl=1, bdim=1, value=\n    tensor(")
    assert isinstance(nt.vmap(lambda x: x)(nt.zeros(2, 3)), nt.Tensor)


def test_batched_tensor_strides_and_contiguity_match_torch():
    def f(lib, a):
        return lib.vmap(lambda x: (x.stride(), x.is_contiguous()), in_dims=1, out_dims=None)(a)

    assert_same(f, arr(3, 4, 5))


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    "prog",
    [
        lambda lib, a: lib.vmap(lambda x: x, in_dims=2)(a),
        lambda lib, a: lib.vmap(lambda x: x, in_dims=-3)(a),
        lambda lib, a: lib.vmap(lambda x, y: x, in_dims=(0,))(a, a),
        lambda lib, a: lib.vmap(lambda x, y: x, in_dims=(0, 0))(a, 3),
        lambda lib, a: lib.vmap(lambda x: x, in_dims=[0])(a),
        lambda lib, a: lib.vmap(lambda x: x, in_dims=(1.5,))(a),
        lambda lib, a: lib.vmap(lambda x, y: x, in_dims=(0, 0))(a, a[:2]),
        lambda lib, a: lib.vmap(lambda x: x, in_dims=None)(a),
        lambda lib, a: lib.vmap(lambda x: x)(),
        lambda lib, a: lib.vmap(lambda x: 3)(a),
        lambda lib, a: lib.vmap(lambda x: (x, 3))(a),
        lambda lib, a: lib.vmap(lambda x: x.sum(), out_dims=None)(a),
        lambda lib, a: lib.vmap(lambda x: (x, x), out_dims=(0, 0, 0))(a),
        lambda lib, a: lib.vmap(lambda x: x, out_dims="a")(a),
        lambda lib, a: lib.vmap(lambda x: x, randomness="sometimes")(a),
        lambda lib, a: lib.vmap(lambda x: x, chunk_size=0)(a),
        lambda lib, a: lib.vmap(lambda x: x.sum().item())(a),
        lambda lib, a: lib.vmap(lambda x: float(x.sum()))(a),
        lambda lib, a: lib.vmap(lambda x: int(x.sum()))(a),
        lambda lib, a: lib.vmap(lambda x: x if x.sum() > 0 else -x)(a),
        lambda lib, a: lib.vmap(lambda x: bool(x[0]))(a),
        lambda lib, a: lib.vmap(lambda x: x.tolist())(a),
        lambda lib, a: lib.vmap(lambda x: lib.zeros(4).mul_(x))(a),
        lambda lib, a: lib.vmap(lambda x: lib.zeros(4).copy_(x))(a),
        lambda lib, a: lib.vmap(lambda x: lib.zeros(()).fill_(x.sum()))(a),
        lambda lib, a: lib.vmap(lambda x: lib.rand(3))(a),
        lambda lib, a: lib.vmap(lambda x: lib.randn_like(x))(a),
        lambda lib, a: lib.vmap(lambda x: lib.nonzero(x))(a),
        lambda lib, a: lib.vmap(lambda x: lib.masked_select(x, x > 0))(a),
        lambda lib, a: lib.vmap(lambda x: x.reshape(5))(a),
        lambda lib, a: lib.vmap(lambda x: x.sum(2))(a),
    ],
)
def test_errors_match_torch(prog):
    assert_same_error(prog, arr(3, 4))


def test_escaped_batched_tensor_is_an_error():
    leak = []
    nt.vmap(lambda x: leak.append(x) or x)(nt.zeros(2, 3))
    with pytest.raises(RuntimeError, match="escaped the transform"):
        leak[0] + 1


# ------------------------------------------------------------------ in-place
def test_inplace_on_batched_input_writes_into_the_caller_tensor():
    x = nt.tensor(arr(3, 4))
    out = nt.vmap(lambda v: v.fill_(1))(x)
    np.testing.assert_array_equal(x.numpy(), np.ones((3, 4)))
    np.testing.assert_array_equal(out.numpy(), np.ones((3, 4)))


@pytest.mark.parametrize("in_dims", [(0, 0), (1, None), (-1, 0), (0, None)])
def test_inplace_arithmetic_matches_torch(in_dims):
    def f(lib, a, b):
        a = a.clone()

        def g(x, y):
            x.mul_(y).add_(1.0)
            x[0] = 5.0
            return x

        out = lib.vmap(g, in_dims=in_dims)(a, b)
        return out, a

    y = arr(3, 3, seed=1) if in_dims[1] is not None else arr(3, seed=1)
    assert_same(f, arr(3, 3), y)


def test_inplace_into_a_view_of_a_batched_tensor():
    def f(lib, a, b):
        a = a.clone()
        lib.vmap(lambda x, y: x.narrow(0, 1, 2).copy_(y))(a, b)
        return a

    assert_same(f, arr(3, 4), arr(3, 2))


def test_inplace_under_vmap_records_autograd():
    def f(lib, a, b):
        a = a.requires_grad_()
        b = b.requires_grad_()

        def g(x, y):
            z = x * 1.0
            z.mul_(y)
            return z.sin()

        out = lib.vmap(g)(a, b)
        return lib.autograd.grad(out.sum(), (a, b))

    assert_same(f, arr(3, 4), arr(3, 4, seed=2))


# ------------------------------------------------------------------ the fallback
def _user_op():
    return defop(
        "user_cube",
        lambda xp, x: x**3,
        vjp=lambda g, x: g * 3 * x * x,
        jvp=lambda t, x: t * 3 * x * x,
        register=False,
    )


def test_fallback_runs_an_op_without_a_rule_and_warns_once():
    op = _user_op()
    x = nt.tensor(arr(3, 4))
    _batched._warned.discard("user_cube")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = nt.vmap(op.fn, in_dims=1)(x)
        nt.vmap(op.fn)(x)
    msgs = [str(m.message) for m in w if "performance drop" in str(m.message)]
    assert msgs == [
        "There is a performance drop because we have not yet implemented the batching rule "
        "for user_cube. Please file us an issue on GitHub so that we can prioritize its "
        "implementation."
    ]
    np.testing.assert_allclose(out.numpy(), (x.numpy() ** 3).T)


def test_fallback_records_autograd_and_can_be_disabled():
    op = _user_op()
    x = nt.tensor(arr(3, 4)).requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (g,) = nt.autograd.grad(nt.vmap(op.fn)(x).sum(), x)
    np.testing.assert_allclose(g.numpy(), 3 * x.detach().numpy() ** 2)
    _set_vmap_fallback_enabled(False)
    try:
        with pytest.raises(
            RuntimeError, match="^user_cube hit the vmap fallback which is currently disabled$"
        ):
            nt.vmap(op.fn)(x)
    finally:
        _set_vmap_fallback_enabled(True)


# ------------------------------------------------------------------ the tutorial's cases
def test_batched_dot_products(no_fallback):
    assert_same(lambda lib, a, b: lib.vmap(lib.dot)(a, b), arr(2, 5), arr(2, 5, seed=1))


def test_model_applied_to_a_batch(no_fallback):
    def f(lib, w, batch):
        def model(feature_vec):
            return feature_vec.dot(w).relu()

        return lib.vmap(model)(batch)

    assert_same(f, arr(5), arr(4, 5))


@pytest.mark.parametrize("n", [1, 5])
def test_jacobian_rows_via_vmap_over_autograd_grad(no_fallback, n):
    def f(lib, x0, w):
        x = x0.requires_grad_()
        y = (w @ x).tanh() * x.sin()

        def vjp(v):
            return lib.autograd.grad(y, x, v, retain_graph=True)[0]

        jac = lib.vmap(vjp)(lib.eye(n, dtype=lib.float64))
        batched = lib.autograd.grad(
            y, x, lib.eye(n, dtype=lib.float64), retain_graph=True, is_grads_batched=True
        )[0]
        return jac, batched

    jac, batched = assert_same(f, arr(n), arr(n, n, seed=3))
    np.testing.assert_allclose(jac.numpy(), batched.numpy())


def test_vmap_over_grad_with_create_graph_gives_second_derivatives(no_fallback):
    def f(lib, x0):
        x = x0.requires_grad_()
        y = (x**3).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)

        def row(v):
            return lib.autograd.grad(g, x, v, retain_graph=True)[0]

        return lib.vmap(row)(lib.eye(4, dtype=lib.float64))

    h = assert_same(f, arr(4))
    np.testing.assert_allclose(h.numpy(), np.diag(6 * arr(4)))


def test_is_grads_batched_errors_and_unused_inputs():
    def f(lib, a):
        x = a.requires_grad_()
        y = x * 2
        return lib.autograd.grad(y, x, lib.ones(2, 3, dtype=lib.float64), is_grads_batched=True)

    assert_same_error(f, arr(4))

    def g(lib, a):
        x = a.requires_grad_()
        u = a.detach().clone().requires_grad_()
        y = x.exp()
        out = lib.autograd.grad(
            y, (x, u), lib.eye(3, dtype=lib.float64), allow_unused=True, is_grads_batched=True
        )
        return out[0], out[1] is None

    assert_same(g, arr(3))


def test_batched_backward_frees_the_graph_unless_retained():
    x = nt.tensor(arr(3)).requires_grad_()
    y = x.exp()
    nt.autograd.grad(y, x, nt.eye(3, dtype=nt.float64), is_grads_batched=True)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        nt.autograd.grad(y, x, nt.eye(3, dtype=nt.float64), is_grads_batched=True)


# ==================================================================
# Found by issue 14's second fuzz round.


# ------------------------------------------------------------------ max() of nothing under vmap
@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("fn", ["max", "min"])
def test_extremum_of_an_empty_sample_under_vmap(fn):
    # torch.func's rule reduces the flattened sample (dim 1): its IndexError, not eager's
    empty = np.zeros((2, 0))
    assert_same_error(lambda L, x: L.func.vmap(lambda x: getattr(x, fn)())(x), empty)
    prog = lambda L, x: L.func.vmap(L.func.grad(lambda x: getattr(L, fn)(x * 2)))(x)  # noqa: E731
    assert_same_error(prog, empty)
    # an unbatched empty tensor inside vmap: eager's RuntimeError
    prog = lambda L, x: L.func.vmap(lambda x: x + L.zeros(0).max())(x)  # noqa: E731
    assert_same_error(prog, empty)


# ==================================================================
# Found by issue 14's third fuzz round (fresh seeds, 68,000 programs).


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("fn", ["hypot", "add", "lt", "remainder"])
def test_vmap_checks_shapes_before_dtypes(fn):
    def prog(L):
        f = getattr(L, fn)
        return L.func.vmap(f)(L.ones(2, 5, dtype=L.long), L.ones(2, 3, dtype=L.bool))

    assert_same_error(prog)


# ==================================================================
# Found in issue 14's fuzzer bucket "indexing": PyTorch's exception type and text.


@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")
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


# A batched tensor read by a transform other than its vmap, or given where a number goes:
# PyTorch's parser reads a tensor given for a Number (.item()), which the innermost vmap
# refuses by its .item() text, a grad or jvp level innermost by vmap's combined text, and a
# tensor a grad level tracks is refused by the parser first (TypeError).
NUMBER_FROM_A_BATCH = {
    "vmap: alpha": lambda L, y, b: L.func.vmap(lambda b: y.add(b, alpha=b))(b),
    "vmap: alpha of an int tensor": lambda L, y, b: L.func.vmap(lambda b: y.long().sub(b, alpha=b))(
        b
    ),
    "vmap: add_'s alpha": lambda L, y, b: L.func.vmap(lambda b: y.clone().add_(b, alpha=b))(b),
    "vmap: addcmul's value": lambda L, y, b: L.func.vmap(lambda b: y.addcmul(y, y, value=b))(b),
    "grad(vmap): an unbatched alpha": lambda L, y, b: L.func.grad(
        lambda z: L.func.vmap(lambda b: b.add(b, alpha=z.sum().detach()))(b).sum()
    )(y),
    "vmap(grad): a tracked alpha": lambda L, y, b: L.func.vmap(
        L.func.grad(lambda b: y.add(b, alpha=b).sum())
    )(b),
    "vmap(grad): an untracked alpha": lambda L, y, b: L.func.vmap(
        lambda b: L.func.grad(lambda z: z.add(b, alpha=b).sum())(y)
    )(b),
    "grad(vmap): alpha": lambda L, y, b: L.func.grad(
        lambda z: L.func.vmap(lambda b: z.add(b, alpha=b))(b).sum()
    )(y),
    "vmap(jvp): alpha": lambda L, y, b: L.func.vmap(
        lambda b: L.func.jvp(lambda z: z.add(b, alpha=b), (y,), (y,))
    )(b),
    "vmap(grad): item": lambda L, y, b: L.func.vmap(
        lambda b: L.func.grad(lambda z: (z * b.item()).sum())(y)
    )(b),
    "vmap(jvp): float": lambda L, y, b: L.func.vmap(
        lambda b: L.func.jvp(lambda z: z * float(b), (y,), (y,))
    )(b),
    "vmap(grad): bool": lambda L, y, b: L.func.vmap(
        lambda b: L.func.grad(lambda z: (z * bool(b)).sum())(y)
    )(b),
}


@pytest.mark.parametrize("case", list(NUMBER_FROM_A_BATCH))
def test_a_batched_tensor_where_a_number_goes(case):
    prog = NUMBER_FROM_A_BATCH[case]
    y, b = np.array([3.0, 1.0]), np.array([2.5, -0.5])
    if case == "grad(vmap): an unbatched alpha":
        assert_same(prog, y, b)
    else:
        assert_same_error(prog, y, b)
