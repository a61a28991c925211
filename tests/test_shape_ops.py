"""Joining, splitting, repeating and tiling against PyTorch (cat/concatenate and their
dim/axis names, the directional splits, repeat_interleave, tile, unflatten): values,
gradients and error texts."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from opdb import float_arg_positions, get_path, resolve, samples, set_path
from twolibs import (
    arr,
    assert_same,
    assert_same_error,
    assert_same_outcome,
    inexact,
    normal,
    op_tol,
    tensor_leaves,
    to_lib,
)

import numtorch as nt
from numtorch._core.op import REGISTRY

# ==================================================================
# Found by issue 14's sweep of crashes where PyTorch succeeds.


@pytest.mark.parametrize("kw", ["dim", "axis"])
@pytest.mark.parametrize("name", ["concatenate", "concat"])
def test_join_takes_dim_and_axis(name, kw):
    assert_same(lambda L, a, b: getattr(L, name)([a, b], **{kw: 1}), arr(2, 3), arr(2, 1))


def test_concatenate_dim_and_axis_together():
    assert_same_error(lambda L, a: L.concatenate([a], 0, dim=0), arr(2))


@pytest.mark.parametrize("dim", [None, 0, 1])
@pytest.mark.parametrize("reps", [0, [0, 0], [0]])
def test_repeat_interleave_zero_backward(dim, reps):
    def prog(L, x):
        x = x.requires_grad_()
        r = reps if isinstance(reps, int) else L.tensor(reps)
        if dim is None and isinstance(reps, list) and len(reps) == 2:
            r = L.tensor([0] * 4)
        y = x.repeat_interleave(r, dim=dim)
        (y.sum() + x.sum()).backward()
        return y, x.grad

    assert_same(prog, arr(2, 2))


# ==================================================================
# Issue 14, "unclear errors": PyTorch's exception type and text; NumPy's errors never leak.


@pytest.mark.parametrize("args", [(2,), (2, 3), ((2,),), ([2, 1],)])
def test_tile_method_sizes(args):
    assert_same(lambda T, x: x.tile(*args), np.arange(6.0).reshape(2, 3))


# ==================================================================
# Found in issue 14's fuzzer bucket "indexing": PyTorch's exception type and text.


@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")
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


# ==================================================================
# The functions added for issue 14, beyond the op database's generic tests.


# ------------------------------------------------------------------ splits, reshape_as
def test_directional_splits():
    def prog(T, x):
        return (
            T.hsplit(x, 2),
            x.vsplit([1, 3]),
            T.dsplit(x, (1,)),
            T.hsplit(x[0, 0], 3),
            x.reshape_as(T.zeros(6, 4)),
        )

    assert_same(prog, arr(4, 2, 3))
    for prog in (
        lambda T: T.hsplit(T.tensor(1.0), 2),
        lambda T: T.hsplit(T.zeros(4, 3), 2),
        lambda T: T.hsplit(T.zeros(4, 3), 0),
        lambda T: T.vsplit(T.zeros(4), 2),
        lambda T: T.dsplit(T.zeros(4, 3), 2),
        lambda T: T.dsplit(T.zeros(4, 3, 4), 3),
    ):
        assert_same_error(prog)


# ==================================================================
# The composites of ops/combine.py at edge values: inf/nan entries, empty and 0-d inputs,
# mixed dtypes, gradients through the blocks, out= and the deprecation warning.
_SPECIAL = np.array([0.0, -1.5, np.inf, -np.inf, np.nan, 1e30])


def test_block_diag_promotes_and_places_special_values():
    ints = np.array([[1, -2]], dtype=np.int64)
    assert_same(lambda L, a, b, c: L.block_diag(a, b, c), _SPECIAL, ints, np.array(np.nan))
    assert_same(lambda L, a, b: L.block_diag(a, b), np.ones(2, np.uint8), np.ones(1, np.int8))
    assert_same(lambda L, a, b: L.block_diag(a, b), np.ones(2, np.float32), np.array(2.0))
    assert_same(lambda L: L.block_diag())
    assert_same(lambda L, a, b: L.block_diag(a, b), np.ones((0, 3)), np.ones((2, 0)))


def test_block_diag_gradients():
    def prog(L, a, b):
        a, b = a.requires_grad_(), b.requires_grad_()
        y = L.block_diag(a, b)
        (y * L.arange(y.numel()).reshape(y.shape)).sum().backward()
        return y, a.grad, b.grad

    assert_same(prog, arr(2, 3), arr(3))


@pytest.mark.parametrize("args", [(3,), (3, 2), (2, 0, 3), (1, 1, 1)])
def test_cartesian_prod_shapes(args):
    xs = [np.linspace(-np.inf, 5, n) if n else np.zeros(0) for n in args]

    def prog(L, *ts):
        ts = [t.requires_grad_() for t in ts]
        y = L.cartesian_prod(*ts)
        if y.numel():
            (y * y.new_ones(y.shape).cumsum(0)).nan_to_num().sum().backward()
        return y, [t.grad for t in ts]

    assert_same(prog, *xs)


def test_cartesian_prod_errors():
    assert_same_error(lambda L: L.cartesian_prod())
    assert_same_error(lambda L, a, b: L.cartesian_prod(a, b), arr(2), arr(2).astype(np.float32))
    assert_same_error(lambda L, a: L.cartesian_prod(a), np.array(1.0))


@pytest.mark.parametrize("r", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("with_replacement", [False, True])
def test_combinations(r, with_replacement):
    assert_same(lambda L, x: L.combinations(x, r, with_replacement), _SPECIAL[:4])
    assert_same(lambda L, x: L.combinations(x, r=r), np.zeros(0))


def test_combinations_gradient_and_errors():
    def prog(L, x):
        x = x.requires_grad_()
        y = L.combinations(x, 2, with_replacement=True)
        (y[:, 0] * y[:, 1]).sum().backward()
        return y, x.grad

    assert_same(prog, arr(4))
    assert_same_error(lambda L, x: L.combinations(x, -1), arr(3))
    assert_same_error(lambda L, x: L.combinations(x), arr(2, 2))
    assert_same_error(lambda L: L.combinations([1.0, 2.0]))


@pytest.mark.parametrize("offset", [-3, -1, 0, 2])
def test_diagflat(offset):
    assert_same(lambda L, x: L.diagflat(x, offset), _SPECIAL.reshape(2, 3))
    assert_same(lambda L, x: x.diagflat(offset=offset), np.array(np.inf))
    assert_same(lambda L, x: L.diagflat(x, offset), np.array([True, False]))


def test_column_stack():
    assert_same(lambda L, a, b: L.column_stack([a, b]), _SPECIAL[:2], np.ones((2, 2), np.int64))
    assert_same(lambda L, a, b: L.column_stack((a, b)), np.array(np.nan), np.array(-0.0))

    def with_out(L, a, b):
        out = L.empty(0, dtype=a.dtype)
        r = L.column_stack([a, b], out=out)
        return r, out

    assert_same(with_out, arr(3), arr(3, 2))
    assert_same_error(lambda L: L.column_stack([]))
    assert_same_error(lambda L, a: L.column_stack(a), arr(3))


def test_chain_matmul_warns_and_matches_multi_dot():
    import warnings

    def prog(L, a, b, c):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = L.chain_matmul(a, b, c)
            one = L.chain_matmul(a)
        text = str(w[0].message).split(" (Triggered")[0]
        return y, one, one is a, w[0].category.__name__, text

    # torch warns once per process unless told to warn always (another test may have
    # called chain_matmul first)
    before = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    try:
        ours = assert_same(prog, arr(2, 3), arr(3, 4), arr(4, 2))
    finally:
        torch.set_warn_always(before)
    assert ours[2] is False
    assert_same_error(lambda L: L.chain_matmul())
    assert_same_error(lambda L, a: L.chain_matmul(a), arr(3))
    assert_same_error(lambda L, a, b: L.chain_matmul(a, b), arr(2, 3), arr(2, 2))
    assert_same_error(lambda L, a, b: L.chain_matmul(a, b), arr(2, 3), arr(3, 2).astype(np.float32))


def test_msort():
    x = np.array([[np.nan, 1.0], [-np.inf, np.nan], [0.0, -0.0], [np.inf, -2.0]])
    assert_same(lambda L, x: (L.msort(x), x.msort()), x)
    assert_same(lambda L, x: L.msort(x), np.array(3.0))
    assert_same(lambda L, x: L.msort(x), np.array([True, False, True]))

    def with_out(L, x):
        out = L.empty(0, dtype=x.dtype)
        return L.msort(x, out=out), out

    assert_same(with_out, x)
    assert_same_error(lambda L, x: L.msort(x, out=L.empty(4, 2, dtype=L.int64)), x)
    assert_same_error(lambda L, x: L.msort(x), np.ones(3, np.complex64))


def test_stack_saves_no_tensor_so_a_second_backward_runs():
    """As PyTorch's StackBackward0, stack's node keeps only its dim: a second backward
    through it (no retain_graph) runs, and the gradients add up."""

    def prog(L, a, b):
        a = a.requires_grad_()
        b = b.requires_grad_()
        y = L.stack([a, b * 2], -1).sum()
        y.backward()
        y2 = L.stack([a, b], 0)
        saved = sorted(n for n in dir(y2.grad_fn) if n.startswith("_saved"))
        return a.grad.clone(), b.grad.clone(), saved

    assert_same(prog, arr(2, 3), arr(2, 3))

    def twice(L, a):
        a = a.requires_grad_()
        y = L.stack([a, a], 1).sum()
        y.backward()
        y.backward()
        return a.grad

    assert_same(twice, arr(3))


# ==================================================================
# split_with_sizes, the unsafe splits and split_copy: pieces, gradients and split's checks.
_SPLITS = [
    ("split_with_sizes", ([1, 3],), {}),
    ("split_with_sizes", ([2, 0, 1],), {"dim": 1}),
    ("unsafe_split", (3,), {}),
    ("unsafe_split", (2, -1), {}),
    ("unsafe_split_with_sizes", ([3, 1],), {}),
    ("unsafe_chunk", (3,), {}),
    ("unsafe_chunk", (5, 1), {}),
    ("split_copy", (3,), {}),
]


@pytest.mark.parametrize("name, args, kwargs", _SPLITS, ids=lambda c: str(c))
@pytest.mark.parametrize("complex_input", [False, True], ids=["real", "complex"])
def test_splits_and_their_gradients(name, args, kwargs, complex_input):
    def prog(L, x):
        if complex_input:
            x = (x + x.flip(0) * 1j).detach()
        x.requires_grad_(True)
        pieces = getattr(L, name)(x, *args, **kwargs)
        names = [type(p.grad_fn).__name__ for p in pieces]
        loss = sum((p * (i + 1 - 2j * complex_input)).real.sum() for i, p in enumerate(pieces))
        return pieces, [p.stride() for p in pieces], names, L.autograd.grad(loss, x)[0]

    assert_same(prog, arr(4, 3))


@pytest.mark.parametrize("method", ["unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes"])
def test_unsafe_split_methods(method):
    arg = [1, 3] if method == "unsafe_split_with_sizes" else 2
    assert_same(lambda L, x: getattr(x, method)(arg), arr(4, 3))


def test_unsafe_split_pieces_are_no_views():
    def prog(L, x):
        pieces = L.unsafe_split(x, 2)
        return [p._base is None for p in pieces], pieces[0].data_ptr() == x.data_ptr()

    assert_same(prog, arr(4, 3))


@pytest.mark.parametrize("name", ["split_copy", "unsafe_split", "split"])
@pytest.mark.parametrize("args", [(-1,), (0,), (2, 2)])
def test_split_checks(name, args):
    assert_same_error(lambda L, x: getattr(L, name)(x, *args), arr(5, 3))


@pytest.mark.parametrize("name", ["split_copy", "unsafe_split", "unsafe_chunk"])
def test_split_of_a_zero_dim_tensor(name):
    assert_same_error(lambda L, x: getattr(L, name)(x, 1), np.array(1.0))


@pytest.mark.parametrize("args", [(0,), (3,)])
def test_unsafe_chunk_checks_and_empty_dims(args):
    assert_same_outcome(lambda L, x: L.unsafe_chunk(x, *args), np.zeros((0, 2)))


# ==================================================================
# Issue 30: the complex samples of the shape, split, view and conversion ops under vmap,
# forward AD and second order, against PyTorch (the generic sweeps run those on float64;
# tests/test_ops.py and tests/test_complex_autograd.py run the complex forward, vjp and jvp).
_COMPLEX_OPS = """
    adjoint as_strided atleast_1d atleast_2d atleast_3d block_diag broadcast_tensors
    cartesian_prod chunk clone column_stack combinations concat concatenate conj diagflat
    dsplit dstack fft_fftshift fft_ifftshift fliplr flipud hsplit hstack meshgrid moveaxis
    positive real repeat_interleave reshape_as swapaxes swapdims tensor_split tril triu
    unsafe_chunk unsafe_split unsafe_split_with_sizes vsplit vstack to_dtype
""".split()
_TOL = op_tol("complex128")


def _complex_cases():
    for name in _COMPLEX_OPS:
        for k, s in enumerate(samples(REGISTRY[name], "complex128")):
            if float_arg_positions(s.args, "c"):
                yield pytest.param(REGISTRY[name], k, id=f"{name}-{k}")


def _call(L, op, args, kwargs):
    fn = resolve(L, (op.oracle or op.api) if L is torch else op.api)
    return fn(*to_lib(L, args), **to_lib(L, kwargs))


def _outputs(out) -> list:
    return [o for o in tensor_leaves(out) if inexact(o)]


@pytest.mark.parametrize(("op", "k"), list(_complex_cases()))
def test_complex_sample_under_vmap(op, k, no_fallback):
    group = [samples(op, "complex128", seed=seed)[k] for seed in range(3)]
    paths = float_arg_positions(group[0].args, "c")
    batched = [np.stack([get_path(s.args, p) for s in group]) for p in paths]

    def prog(L, *xs):
        def f(*ys):
            args = group[0].args
            for p, y in zip(paths, ys):
                args = set_path(args, p, y)
            return _call(L, op, args, group[0].kwargs)

        if L is torch:  # (torch.func.vmap has no rule for some: its loop is the reference)
            return _stack_tree(L, [f(*(x[b] for x in xs)) for b in range(len(group))])
        return L.func.vmap(f)(*xs)

    assert_same(prog, *batched, **_TOL)


def _stack_tree(L, outs):
    if isinstance(outs[0], (tuple, list)):
        return tuple(_stack_tree(L, [o[i] for o in outs]) for i in range(len(outs[0])))
    return L.stack(outs)


@pytest.mark.parametrize(("op", "k"), list(_complex_cases()))
def test_complex_sample_forward_ad(op, k):
    s = samples(op, "complex128")[k]
    paths = float_arg_positions(s.args, "c")
    rng = np.random.default_rng(1)
    tangents = [np.asarray(normal(rng, get_path(s.args, p).shape, np.complex128)) for p in paths]

    def prog(L, *ts):
        fwd = L.autograd.forward_ad
        with fwd.dual_level():
            args = to_lib(L, s.args)
            for p, t in zip(paths, ts):
                args = set_path(args, p, fwd.make_dual(get_path(args, p), t))
            out = _call(L, op, args, s.kwargs)
            return [fwd.unpack_dual(o).tangent for o in _outputs(out)]

    assert_same(prog, *tangents, **_TOL)


@pytest.mark.parametrize(("op", "k"), list(_complex_cases()))
def test_complex_sample_second_order(op, k):
    """The gradient of a function of the vjp, with respect to the inputs and the cotangents."""
    s = samples(op, "complex128")[k]
    paths = float_arg_positions(s.args, "c")

    def prog(L):
        rng = np.random.default_rng(2)
        args = to_lib(L, s.args)
        ins = [get_path(args, p).requires_grad_() for p in paths]
        for p, x in zip(paths, ins):
            args = set_path(args, p, x)
        outs = _outputs(_call(L, op, args, s.kwargs))
        if not outs:
            return []
        vs = [L.tensor(normal(rng, o.shape, _np_dtype(o))).requires_grad_() for o in outs]
        gs = L.autograd.grad(outs, ins, vs, create_graph=True, materialize_grads=True)
        ws = [L.tensor(normal(rng, g.shape, _np_dtype(g))) for g in gs]
        loss = sum((w.conj() * g).real.sum() for w, g in zip(ws, gs))
        return L.autograd.grad(loss, ins + vs, allow_unused=True, materialize_grads=True)

    assert_same_outcome(prog, **_TOL)  # (an empty window's gradient is off the graph)


def _np_dtype(t):
    return np.dtype(str(t.dtype).rsplit(".", 1)[-1])


def _cast_warnings(L, x, dtypes) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for d in dtypes:
            x.to(getattr(L, d))
            L.zeros(2, dtype=getattr(L, d)).copy_(x)
    return [(w.category, str(w.message).split(" (Triggered")[0]) for w in caught]


def test_complex_to_real_cast_warns_once_as_torch():
    from numtorch._core import dtype as conversion

    z = np.array([1 + 2j, -0.5j])
    conversion._warned_discard.clear()  # (once per process, as PyTorch's TORCH_WARN_ONCE)
    ours = _cast_warnings(nt, nt.tensor(z), ["bool", "float64", "int64", "complex64"])
    torch.set_warn_always(True)  # (torch has warned already in this process)
    try:
        theirs = _cast_warnings(torch, torch.tensor(z), ["bool", "float64"])
    finally:
        torch.set_warn_always(False)
    # (torch warns at .to and at copy_ once told to warn always; once per process otherwise)
    assert ours == [(UserWarning, conversion._DISCARDS_IMAG)] and theirs == ours * 2


@pytest.mark.parametrize("how", ["to", "type", "float", "double"])
def test_complex_to_real_cast_backward(how):
    def prog(L, z):
        z.requires_grad_()
        cast = {
            "to": lambda: z.to(L.float64),
            "type": lambda: z.type(L.float32),
            "float": z.float,
            "double": z.double,
        }[how]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = cast()
        (y * L.arange(2.0, dtype=y.dtype)).sum().backward()
        return y, z.grad

    assert_same(prog, np.array([1 + 2j, -0.5j]))
