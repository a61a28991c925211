"""Views against PyTorch: which ops return views (or copies, or their input itself),
as_strided, unfold, real/imag and the conjugate transposes; and writes into views: which
views refuse in-place writes (the views an op returns several of, views made in no-grad
mode), views regenerated after a write into their base, and the node names their errors
print, eagerly and under torch.func.grad and vmap(grad)."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import torch
from opdb import resolve
from twolibs import (
    arr,
    assert_close,
    assert_same,
    assert_same_error,
    assert_same_outcome,
    lib_of,
    run,
    tensor_leaves,
    to_lib,
)

import numtorch as nt
from numtorch._core.op import REGISTRY
from numtorch._opdb.samples import Maker

# ==================================================================
# Found by issue 14's second fuzz round.


# ------------------------------------------------------------------ CopySlices with an expanded gradient
@pytest.mark.filterwarnings("ignore")
def test_backward_through_a_written_view_with_an_expanded_gradient():
    # the overlap error is the written view's (PyTorch lays the gradient out as the base
    # first): an expanded incoming gradient (sum_to_size's) is none
    def prog(L, x):
        x.requires_grad_(True)
        a = x * 1
        a[:, 0].mul_(2)
        a.sum_to_size(1, 2).sum().backward()
        return x.grad

    assert_same(prog, np.array([[1.0, 2.0], [3.0, 4.0]]))

    def median_values(L, x):
        x.requires_grad_(True)
        y = x.median(1).values
        y.deg2rad_()
        (y.sum_to_size((1,)) * 2).sum().backward()
        return x.grad

    assert_same(median_values, np.array([[-0.08], [-2.65]]))


@pytest.mark.filterwarnings("ignore")
def test_a_view_regenerated_after_a_write_into_its_base_is_as_strided():
    # PyTorch regenerates a view's history as one AsStridedBackward0 node from the base;
    # errors name it, and overlapping views (expand) sum their gradient
    def prog(T, x):
        x = x.requires_grad_()
        a = x * 1
        views = [a.unsqueeze(0), a.expand(2, 4, 3)[1], a.t()[1:], a.view(12)[::5]]
        a.mul_(2)
        names = [v.grad_fn.name() for v in views]
        nexts = [v.grad_fn.next_functions[0][0].name() for v in views]
        loss = sum((v * v).sum() for v in views[1:]) + views[0].expand(5, 4, 3).sum()
        loss.backward()
        return names, nexts, x.grad

    assert_same(prog, np.arange(12.0).reshape(4, 3) / 7)

    def modified(T):
        a = T.ones(3, requires_grad=True) * 1
        v = a.unsqueeze(0)
        y = v * v
        a.mul_(2)
        y.sum().backward()

    assert_same_error(modified)


# ==================================================================
# Found by issue 14's third fuzz round (fresh seeds, 68,000 programs).


def _modified(L, write):
    """A saved output of an in-place op on a view, written again in place (``write``)."""
    x = L.tensor([0.49, 2.0], requires_grad=True)
    a = x * 1
    y = a[1:]
    y.exp_()
    keep = write(L, a, y)
    (y * 2).sum().backward()
    return keep


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(
    "write",
    [
        lambda L, a, y: a.mul_(2),  # through the base: the node the output was saved by
        lambda L, a, y: y.mul_(2),  # the view again: the same
        # a later view keeps the view's node after the first write alive: it is named
        lambda L, a, y: (y[:1] * 2, y.index_add_(0, L.tensor([0]), y[:1] * -2.5)),
    ],
)
def test_errors_name_a_written_views_node_while_it_lives(write):
    assert_same_error(lambda L: _modified(L, write))


@pytest.mark.filterwarnings("ignore")
def test_reshape_of_a_viewable_non_contiguous_tensor_is_an_alias():
    def prog(L, x, z):
        x = (x * 1).requires_grad_()
        s = L.stack([x, x], 0).split(1, -2)[0]
        w = (z * 1).requires_grad_().chunk(3, 1)[0]
        views = [
            x.flatten(),
            x.reshape(-1),
            s.flatten(),
            s.reshape(-1),
            s.view(-1),
            w.flatten(),
            w.reshape(2),
            x.t().flatten(),
        ]
        return [v.grad_fn.name() for v in views]

    assert_same(prog, np.ones((2, 1)), np.ones((2, 3)))
    assert_same_error(
        lambda L: (
            L.stack([L.ones(2, 1, requires_grad=True) * 1] * 2, 0).split(1, -2)[0].flatten().zero_()
        )
    )


@pytest.mark.filterwarnings("ignore")
def test_a_value_cast_into_a_multi_output_view_is_refused_first():
    def prog(L):
        y = L.zeros(1, 2, dtype=L.bool).chunk(2, 1)[-1]
        y[...] = L.tensor(2.0, requires_grad=True)

    assert_same_error(prog)


@pytest.mark.filterwarnings("ignore")
def test_copy_into_an_integer_output_of_a_multi_view_op_takes_no_history():
    # PyTorch's copy_ skips its view checks when self's dtype cannot require grad
    def prog(L):
        x, b = L.tensor([-0.74, 2.0], requires_grad=True), L.tensor(3.41, requires_grad=True)
        y = x.long().unbind(0)[0]
        y.copy_(b)
        return y, y.requires_grad

    assert_same(prog)
    for write in (lambda y, b: y.fill_(b), lambda y, b: y.__setitem__(slice(0, 1), b)):
        assert_same_error(
            lambda L, w=write: w(
                L.tensor([[-0.7, 2.5], [1.0, 2.0]]).long().unbind(0)[0],
                L.tensor(0.41, requires_grad=True),
            )
        )


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("index", ["ellipsis", "int", "slice", "none"])
@pytest.mark.parametrize("dtype", ["bool", "long"])
def test_setitem_into_an_integer_output_of_a_multi_view_op(index, dtype):
    # PyTorch copies into a 0-d target (no checks for an integer self) and fills a larger one
    def prog(L):
        x = L.tensor([[-1.4, 2.0], [1.0, 3.0]], requires_grad=True)
        y = (x.ge(0) if dtype == "bool" else x.long()).unbind(0)[0]
        if index == "ellipsis":
            y = y[0]
        y[{"ellipsis": ..., "int": 0, "slice": slice(0, 1), "none": None}[index]] = L.tensor(
            0.5, requires_grad=True
        )
        return y, y.requires_grad

    assert_same_outcome(prog)


# ==================================================================
# Causes behind the fourth fuzz round's failures (tests/progfuzz.py).


CHAIN_W = arr(4, 3, 2, seed=1)


def _flat_write(L, y, order):
    """A write through a view whose chain needs the base's layout (view(-1)), then a
    permute: the base's gradient arrives non-contiguous."""
    y.permute(order).view(-1)[:3].sin_()
    return y.movedim(2, 0)


def _base(L, x, order):
    return x.permute(order).contiguous().permute(np.argsort(order).tolist()) * 2


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 0, 1)], ids=["contiguous", "permuted"])
@pytest.mark.parametrize("mode", ["backward", "grad", "vmap_grad", "double"])
def test_view_chain_replays_on_a_gradient_laid_out_like_the_base(mode, order):
    """CopySlices (and view_scatter under transforms) replays the view chain of an in-place
    write on the base's gradient: PyTorch first copies that gradient into a buffer laid out
    like the base, so a view(-1) in the chain holds however the gradient arrives."""

    def loss(L, x):
        return (_flat_write(L, _base(L, x, order), order) * L.tensor(CHAIN_W)).sum()

    def prog(L, x):
        if mode == "backward":
            x.requires_grad_()
            loss(L, x).backward()
            return x.grad
        if mode == "grad":
            return L.func.grad(lambda x: loss(L, x))(x)
        if mode == "vmap_grad":
            return L.func.vmap(L.func.grad(lambda x: loss(L, x)))(L.stack([x, x * 0.5]))
        x.requires_grad_()
        (g,) = L.autograd.grad(loss(L, x), x, create_graph=True)
        return L.autograd.grad((g * g).sum(), x)

    assert_same(prog, arr(3, 2, 4))


@pytest.mark.parametrize("dtype", ["bool", "float32", "complex64", "int64", "uint8", "float16"])
def test_expand_error_names_the_type_as_pytorch(dtype):
    assert_same_error(lambda lib: lib.zeros(2, 3, dtype=getattr(lib, dtype)).expand(3))


# ==================================================================
# Causes behind the bad-input sweep's DIFFERS cases (tests/test_bad_inputs.py), fixed.


W = np.arange(15.0).reshape(5, 3) / 10


def test_conjugate_transposes():
    c = W[:3] * (1 + 0.5j) + 0.25j
    assert_same(lambda L, c: (c.mH, c.adjoint(), L.adjoint(c)), c)
    assert_same(lambda L, c: (L.linalg.pinv(c), L.pinverse(L.stack([c, c.mT]))), c, atol=1e-12)


# ==================================================================
# Found by issue 14's sweep of crashes where PyTorch succeeds.


def _write_through_view_of_second_output(L, a):
    logabs = L.linalg.slogdet(a)[1]  # output 1 of a two-output node
    logabs.view(-1).mul_(3.0)
    return (logabs * logabs).sum()


def test_backward_after_writing_a_view_of_a_second_output():
    def prog(L, a):
        a = a.requires_grad_()
        _write_through_view_of_second_output(L, a).backward()
        return a.grad

    assert_same(prog, arr(2, 3, 3) + 3 * np.eye(3))


def test_grad_after_writing_a_view_of_a_second_output():
    prog = lambda L, a: L.func.grad(lambda a: _write_through_view_of_second_output(L, a))(a)  # noqa: E731
    assert_same(prog, arr(2, 3, 3) + 3 * np.eye(3))
    mean = lambda L, x: L.var_mean(x, dim=0)[1].unflatten(0, (2, 3)).deg2rad_().sum()  # noqa: E731
    assert_same(lambda L, x: L.func.grad(lambda x: mean(L, x))(x), arr(2, 6))
    assert_same(lambda L, x: L.func.vmap(L.func.grad(lambda x: mean(L, x)))(x), arr(3, 2, 6))


# ==================================================================
# Issue 14, "lenient where PyTorch refuses": PyTorch's refusals, before any input is modified.


# ------------------------------------------------------------------ 1. views an op returned several of
def _rg(lib, shape=(4, 6, 6)):
    return lib.tensor(arr(*shape), requires_grad=True).clone()


PIECES = {
    "split": lambda x: x.split(2)[1],
    "split_fn": lambda x: lib_of(x).split(x, 3)[0],
    "split_list": lambda x: x.split([1, 3])[0],
    "split_with_sizes": lambda x: x.split_with_sizes([3, 1])[1],
    "chunk": lambda x: x.chunk(3)[1],
    "unbind": lambda x: x.unbind(0)[2],
    "unbind_dim": lambda x: x.unbind(-1)[5],
    "unbind_of_unbind": lambda x: x.unbind(0)[1].unbind(0)[2],
    "select": lambda x: x.split(2)[0][0],
    "slice": lambda x: x.split(2)[0][1:],
    "narrow": lambda x: x.split(2)[1].narrow(0, 0, 1),
    "transpose": lambda x: x.unbind(1)[0].mT,
    "swapaxes": lambda x: x.split(2)[0].swapaxes(0, 1),
    "permute": lambda x: x.split(2)[0].permute(2, 1, 0),
    "movedim": lambda x: x.split(2)[0].movedim(0, 1),
    "view": lambda x: x.split(2)[0].view(2, 36),
    "flatten": lambda x: x.split(2)[0].flatten(),
    "reshape": lambda x: x.unbind(0)[1].reshape(-1),
    "unflatten": lambda x: x.split(2)[0].unflatten(0, (1, 2)),
    "squeeze": lambda x: x.split(1)[0].squeeze(),
    "diagonal": lambda x: x.unbind(0)[1].diagonal(),
    "expand": lambda x: x.unbind(0)[1].unsqueeze(0).expand(2, 6, 6),
}


WRITES = {
    "mul_": lambda p: p.mul_(2),
    "add_tensor": lambda p: p.add_(p.detach() * 0 + 1),
    "iadd": lambda p: p.__iadd__(1),
    "copy_": lambda p: p.copy_(p.detach() * 3),
    "zero_": lambda p: p.zero_(),
    "fill_": lambda p: p.fill_(2.0),
    "relu_inplace": lambda p: lib_of(p).nn.functional.relu(p, inplace=True),
}


@pytest.mark.parametrize("piece", list(PIECES))
def test_write_into_a_piece_is_refused(piece):
    def prog(lib):
        x = _rg(lib)
        before = x.detach().clone()
        try:
            PIECES[piece](x).mul_(2)
        finally:
            assert (x.detach() == before).all()  # nothing written

    assert_same_error(prog)


@pytest.mark.parametrize("write", list(WRITES))
def test_every_inplace_write_is_refused(write):
    assert_same_error(lambda lib: WRITES[write](_rg(lib).split(2)[0]))


@pytest.mark.parametrize(
    "index",
    [0, (slice(1, None),), Ellipsis, (slice(None), 1), "tensor"],
    ids=["int", "slice", "ellipsis", "column", "tensor"],
)
def test_setitem_into_a_piece_is_refused(index):
    def prog(lib):
        p = _rg(lib).unbind(0)[1]
        p[lib.tensor([0, 1]) if index == "tensor" else index] = 3.0

    assert_same_error(prog)


def test_index_fill_into_a_piece_is_refused():
    assert_same_error(lambda lib: _rg(lib).unbind(0)[1].index_fill_(0, lib.tensor([0]), 1.0))


@pytest.mark.parametrize(
    "prog",
    [
        lambda lib: lib.tensor(arr(4, 2)).unbind(0)[0].mul_(2),  # no autograd involved
        lambda lib: _rg(lib).tensor_split(2)[0].mul_(2),
        lambda lib: _rg(lib).tensor_split([1, 3])[1].mul_(2),
        lambda lib: _rg(lib).split(2)[0].detach().mul_(2),
        lambda lib: _rg(lib).split(2)[0].data.mul_(2),
    ],
    ids=["no_grad_base", "tensor_split", "tensor_split_idx", "detach", "data"],
)
def test_writes_pytorch_allows(prog):
    def full(lib):
        x = prog(lib)
        return x.detach() if x is not None else None

    assert_same(full)


def test_pieces_written_in_no_grad_mode():
    def prog(lib):
        x = _rg(lib, (4, 3))
        with lib.no_grad():
            p = x.split(2)
            p[0].mul_(2)
        q = x.unbind(0)
        with lib.no_grad():
            q[3].add_(1)
        return x.detach()

    assert_same(prog)


def _no_grad_view(lib, base, make=lambda v: v.view(-1)):
    with lib.no_grad():
        return make(base)


@pytest.mark.parametrize(
    "prog",
    [
        lambda lib: _no_grad_view(lib, _rg(lib)).mul_(2),
        lambda lib: _no_grad_view(lib, lib.tensor(arr(3), requires_grad=True)).mul_(2),
        lambda lib: _no_grad_view(lib, lib.tensor(arr(3))).mul_(lib.ones(3, requires_grad=True)),
        lambda lib: _no_grad_view(lib, _rg(lib), lambda v: v.split(2)[0]).mul_(2),
        lambda lib: _no_grad_view(lib, _rg(lib).split(2)[0], lambda v: v[1:]).mul_(2),
        lambda lib: lib.tensor(arr(4, 2)).split(2)[0].mul_(lib.ones(2, 2, requires_grad=True)),
    ],
    ids=["view", "leaf", "other_requires_grad", "split", "view_of_piece", "piece_other_rg"],
)
def test_view_made_in_no_grad_mode_is_refused(prog):
    assert_same_error(prog)


def _modify_base(lib, use, how=lambda x: x.mul_(2), no_grad=False):
    x = _rg(lib, (4, 3))
    p = x.unbind(0)
    if no_grad:
        with lib.no_grad():
            how(x)
    else:
        how(x)
    return use(p)


@pytest.mark.parametrize(
    "prog",
    [
        lambda lib: _modify_base(lib, lambda p: p[0].sum()),
        lambda lib: _modify_base(lib, lambda p: p[0].grad_fn),
        lambda lib: _modify_base(lib, lambda p: p[1].is_leaf),
        lambda lib: _modify_base(lib, lambda p: lib.stack(p)),
        lambda lib: _modify_base(lib, lambda p: p[2].view(-1)),
        lambda lib: _modify_base(lib, lambda p: p[0] * 2, how=lambda x: x[1].mul_(2)),
        lambda lib: _modify_base(lib, lambda p: p[0] * 2, no_grad=True),
        lambda lib: _modify_base(lib, lambda p: p[0] * 2, how=lambda x: x.detach().mul_(2)),
        lambda lib: _modify_base(
            lib, lambda p: p[0] * 2, how=lambda x: x.unbind(0)[0].detach().mul_(2)
        ),
    ],
    ids=[
        "sum",
        "grad_fn",
        "is_leaf",
        "stack",
        "view",
        "other_view",
        "no_grad",
        "detach",
        "piece_detach",
    ],
)
def test_piece_used_after_its_base_was_written_is_refused(prog):
    assert_same_error(prog)


def test_piece_after_its_base_was_written_allowed_uses():
    def prog(lib):
        out = [_modify_base(lib, lambda p: p[0].requires_grad)]
        out.append(_modify_base(lib, lambda p: p[0].detach()))
        a = lib.tensor(arr(4, 3))
        p = a.split(2)
        a.mul_(2)
        out.append(p[0] * 2)
        return out

    assert_same(prog)


def _h(lib, piece, make=lambda v: v * 1):
    def h(v):
        y = make(v)
        piece(y).mul_(2)
        return (y * y).sum()

    return h


@pytest.mark.parametrize(
    "piece",
    [lambda y: y.split(2)[0], lambda y: y.unbind(0)[1], lambda y: y.split(2)[0][0]],
    ids=["split", "unbind", "select"],
)
@pytest.mark.parametrize("transform", ["grad", "vmap_grad", "vjp"])
def test_write_into_a_piece_under_transforms(piece, transform):
    def prog(lib):
        h = _h(lib, piece)
        x = lib.tensor(arr(4, 3))
        if transform == "grad":
            return lib.func.grad(h)(x)
        if transform == "vmap_grad":
            return lib.func.vmap(lib.func.grad(h))(lib.tensor(arr(2, 4, 3)))
        return lib.func.vjp(h, x)[0]

    assert_same_error(prog)


def test_write_into_a_piece_of_a_grad_input_and_of_a_constant():
    assert_same_error(
        lambda lib: lib.func.grad(_h(lib, lambda y: y.unbind(0)[1], lambda v: v))(
            lib.tensor(arr(4, 3))
        )
    )

    def const(lib):
        def h(v):
            y = lib.zeros(4, 3)
            y.unbind(0)[1].mul_(v.sum())
            return y.sum()

        return lib.func.grad(h)(lib.tensor(arr(4, 3)))

    assert_same_error(const)


def test_write_into_a_piece_under_vmap_and_jvp_is_allowed():
    def prog(lib):
        h = _h(lib, lambda y: y.split(2)[0])
        x = lib.tensor(arr(4, 3))
        return lib.func.vmap(h)(lib.tensor(arr(2, 4, 3))), lib.func.jvp(h, (x,), (x,))

    assert_same(prog)


# ==================================================================
# Errors about views and in-place writes, found by issue 14's random-program fuzzer.


X = np.array([[1.5, -0.5, 2.0], [0.25, -1.0, 3.0]])


def _plain(f):
    """``f(T, x)`` under plain autograd: the gradient of its sum."""

    def prog(T, x):
        x.requires_grad_()
        y = f(T, x)
        (y * 1.5).sum().backward()
        return y.detach(), x.grad

    return prog


def _grad(f):
    """The gradient of ``f(T, x)``'s sum under torch.func.grad."""

    def prog(T, x):
        return T.func.grad(lambda x: (f(T, x) * 1.5).sum())(x)

    return prog


def _vmap_grad(f):
    """The same gradient under vmap(grad), over a leading batch of 2."""

    def prog(T, x):
        return T.func.vmap(T.func.grad(lambda x: (f(T, x) * 1.5).sum()))(T.stack([x, 2 * x]))

    return prog


MODES = [_grad, _vmap_grad]


# ------------------------------------------------------------------ grad levels
# Under func.grad an op none of whose inputs requires grad at the level is not recorded:
# its result is no view of a tensor that requires grad, so writes into its pieces go through.
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "f",
    [
        lambda T, x: _write(T.fmin(x > 1, x.detach()).unbind(-1)[0], "mul_", 2),
        lambda T, x: _write((x > 0.5) * -2.5, "chunk_setitem") + x,
        lambda T, x: _write(T.logical_xor(x, x.detach()) + -2.5, "split_neg") * x,
    ],
)
def test_grad_level_ops_on_untracked_inputs_are_not_recorded(mode, f):
    assert_same(mode(f), X.copy())


def _write(y, how, *args):
    if how == "setitem0":
        y[0] = -1
    elif how == "chunk_setitem":
        y.chunk(2, -1)[-1][0] = -2.5
    elif how == "split_neg":
        y.split(1, -1)[0].neg_()
    else:
        getattr(y, how)(*args)
    return y


# A view op whose inner op copies (flatten of an expanded tensor) gives no view at the
# grad level either: an in-place write into it is no write into a view of the input.
@pytest.mark.parametrize("mode", [*MODES, _plain])
@pytest.mark.parametrize(
    "f",
    [
        lambda T, x: x.expand(3, 2, 3).flatten().clamp_(max=-2.5),
        lambda T, x: x.expand(3, 2, 3).reshape(-1).mul_(2),
    ],
)
def test_view_ops_that_copy_give_no_view_under_grad(mode, f):
    assert_same(mode(f), X.copy())


@pytest.mark.parametrize("mode", [*MODES, _plain])
def test_view_ops_that_copy_version_error_matches(mode):
    def f(T, x):
        y = x.expand(3, 2, 3).flatten()
        y.exp_()
        y.add_(1)
        return y

    assert_same_error(mode(f), X.copy())


# ------------------------------------------------------------------ node names in errors
# PyTorch's errors name a node without "Backward0", but keep another overload's number.
def _modified_saved(make):
    def f(T, x):
        y = make(T, x)
        z = y.sin()  # saves y
        with T.no_grad():
            y.add_(1)
        return z

    return f


@pytest.mark.parametrize("mode", [*MODES, _plain])
@pytest.mark.parametrize(
    "make",
    [
        lambda T, x: 3**x,  # PowBackward2
        lambda T, x: x.max(),  # MaxBackward1
        lambda T, x: x.prod(1),  # ProdBackward1
        lambda T, x: x * 2,  # MulBackward0
        lambda T, x: (x * 2).unsqueeze(0).squeeze(0).clone(),
    ],
)
def test_version_error_names_the_node_with_its_overload(mode, make):
    assert_same_error(mode(_modified_saved(make)), X.copy())


@pytest.mark.parametrize("mode", [*MODES, _plain])
def test_multi_output_view_error_names_the_node_with_its_overload(mode):
    def f(T, x):
        y = (x * 1).unsqueeze(1).unbind(0)[0].squeeze(0)  # SqueezeBackward1
        y.mul_(2)
        return y

    assert_same_error(mode(f), X.copy())


# ------------------------------------------------------------------ indexing's node
# PyTorch's indexing skips each slice of a tuple that keeps its whole dim (from 0, stop past
# the end, step 1); an index that does nothing else gives an alias (a lone x[:] slices).
@pytest.mark.parametrize(
    "index",
    [
        (Ellipsis, slice(None, 3)),
        (Ellipsis,),
        Ellipsis,
        (slice(None),),
        slice(None),
        (slice(0, 5), slice(0, 3)),
        (slice(0, 2), 1),
        (1, slice(None)),
        (slice(None), slice(1, 3)),
        (slice(-2, None),),
        (slice(None), None),
        (slice(None), slice(None), None),
        (slice(None), None, slice(None)),
        (),
    ],
)
@pytest.mark.parametrize("shape", [(2, 3), (3,), (1,)])
def test_indexing_node_is_the_last_component_that_does_something(index, shape):
    def prog(T, x):
        y = (x * 1)[index]
        return type(y.grad_fn).__name__, y.detach()

    def ok(i):  # the index fits the shape
        items = i if isinstance(i, tuple) else (i,)
        return sum(1 for c in items if c is not None and c is not Ellipsis) <= len(shape)

    if ok(index):
        x = np.arange(np.prod(shape), dtype=float).reshape(shape)
        assert_same(lambda T, x: prog(T, x.requires_grad_()), x)


@pytest.mark.parametrize("mode", [*MODES, _plain])
def test_write_into_an_alias_of_a_piece_names_alias(mode):
    def f(T, x):
        y = (x * 1).unbind(0)[0]
        y[..., :3].mul_(3)
        return y

    assert_same_error(mode(f), X.copy())


# ------------------------------------------------------------------ flatten of one dim
# PyTorch's flatten returns its input itself where start_dim and end_dim are one dim: an
# in-place write into it is one into a leaf, not into a view of one.
@pytest.mark.parametrize("mode", [*MODES, _plain])
@pytest.mark.parametrize(
    "f",
    [
        lambda T, x: x[0].flatten().neg_(),
        lambda T, x: x.flatten(1, -1).neg_(),
        lambda T, x: T.flatten(x, 0, 0).neg_(),
    ],
)
def test_flatten_of_one_dim_is_its_input(mode, f):
    assert_same_error(mode(f), X.copy())


def test_flatten_and_ravel_name_their_nodes_as_pytorch():
    def prog(T, x):
        y = x * 1
        outs = (y.flatten(), y.flatten(1), y[0].flatten(), y.ravel(), y.sum().flatten())
        return [type(o.grad_fn).__name__ for o in outs]

    assert_same(lambda T, x: prog(T, x.requires_grad_()), X.copy())


# ------------------------------------------------------------------ empty pieces
# chunk of an empty dim is split_with_sizes into empty pieces in PyTorch: several views,
# which refuse in-place writes.
@pytest.mark.parametrize("mode", [*MODES, _plain])
@pytest.mark.parametrize(
    "f",
    [
        lambda T, x: _write((x[:0] * 1).chunk(2, 0)[-1].mT, "setitem0"),
        lambda T, x: (x[:, :0] * 1).chunk(2, 1)[-1].view(-1)[:1].sin_(),
    ],
)
def test_chunk_of_an_empty_dim_gives_multi_output_views(mode, f):
    assert_same_error(mode(f), X.copy())


def test_chunk_of_an_empty_dim_names_split_with_sizes():
    def prog(T, x):
        return [type(p.grad_fn).__name__ for p in (x[:0] * 1).chunk(3, 0)]

    assert_same(lambda T, x: prog(T, x.requires_grad_()), X.copy())


# Under vmap, a tensor with no elements is contiguous (contiguous() gives it back itself).
@pytest.mark.parametrize(
    "f",
    [
        lambda T, x: x[:, :0].mT.contiguous().floor_(),
        lambda T, x: x[:0].contiguous().tanh_(),
    ],
)
def test_contiguous_of_an_empty_batched_tensor_is_itself(f):
    assert_same_error(_vmap_grad(f), X.copy())


# ------------------------------------------------------------------ shared elements
# Under func.grad, PyTorch writes into a tensor that requires grad at the level by a copy,
# which refuses shared elements whatever the op (fill_, zero_, triu_ in its backward); a
# tensor the level does not track takes the write as in eager mode.
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "f",
    [
        lambda T, x: T.broadcast_to(x * 1, (2, 2, 3)).fill_(3),
        lambda T, x: T.broadcast_to(x.sum_to_size((1, 1)), (2, 1, 1)).fill_(-1),
        lambda T, x: T.broadcast_to(T.hypot(x, x.detach()), (2, 2, 3)).zero_(),
        lambda T, x: (x[0] * 1).expand(3, 3).triu_(),
        lambda T, x: (x * 1).expand(2, 2, 3).masked_fill_(T.tensor(True), 2.0),
        lambda T, x: (x * 1).expand(2, 2, 3).mul_(2),
    ],
)
def test_grad_refuses_writes_into_shared_elements_of_tracked_tensors(mode, f):
    assert_same_error(mode(f), X.copy())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "f",
    [
        lambda T, x: T.broadcast_to(x.detach() * 1, (2, 2, 3)).fill_(3) + x,
        lambda T, x: (x.detach() * 1).expand(2, 2, 3).masked_fill_(T.tensor(True), x.sum()) + x,
        lambda T, x: (x * 1).expand(2, 2, 3)[0].mul_(2),
    ],
)
def test_grad_takes_writes_into_untracked_or_unshared_tensors(mode, f):
    assert_same(mode(f), X.copy())


# fill_ with a tensor value refuses shared elements (after its value's dims), eager too.
@pytest.mark.parametrize(
    "value",
    [np.array(4.0), np.array(4), np.array([4.0, 5.0])],
)
def test_fill_with_a_tensor_value_refuses_shared_elements(value):
    assert_same_error(lambda T, x, v: x.expand(2, 2, 3).fill_(v), X.copy(), value)


# ------------------------------------------------------------------ overload numbers
# The node of an op's other overload has its number (the view and version errors print it).
@pytest.mark.parametrize(
    "make",
    [
        lambda T, x: x.round(decimals=1),  # round.decimals
        lambda T, x: T.copysign(x, 2.0),  # copysign.Scalar
        lambda T, x: x.clamp_min(T.tensor(0.0)),  # clamp_min.Tensor
        lambda T, x: x.clamp_max(T.tensor(0.0)),
        lambda T, x: x.index_fill(0, T.tensor([0]), T.tensor(1.0)),  # index_fill.int_Tensor
        lambda T, x: T.outer(x[0], x[1]),  # a broadcast product in PyTorch
    ],
)
def test_nodes_of_other_overloads_have_their_number(make):
    def prog(T, x):
        return type(make(T, x * 1).grad_fn).__name__

    assert_same(lambda T, x: prog(T, x.requires_grad_()), X.copy())


@pytest.mark.parametrize("mode", [*MODES, _plain])
def test_version_error_after_outer_names_mul(mode):
    assert_same_error(mode(_modified_saved(lambda T, x: T.outer(x[0], x[1]))), X.copy())


@pytest.mark.parametrize("mode", [*MODES, _plain])
def test_write_after_unsqueeze_by_index_of_a_short_tensor(mode):
    def f(T, x):
        y = x[0, :1][:, None].exp2()
        y.diagonal().mul_(2)
        return y

    assert_same_error(mode(f), X.copy())


# (plain autograd only: under grad numtorch refuses a tracked copy_ into untracked zeros)
@pytest.mark.parametrize("mode", [_plain])
def test_version_error_after_copy_names_copy_backwards_whole(mode):
    def f(T, x):
        y = T.zeros(2, 3, dtype=x.dtype)
        y.copy_(x)  # torch::autograd::CopyBackwards
        z = y.sin()
        with T.no_grad():
            y.add_(1)
        return z

    assert_same_error(mode(f), X.copy())


# ------------------------------------------------------------------ order of the checks
# clamp_ with numbers checks their type before the write's overlap check; add_ under vmap
# writes through the batched values, so an expanded self is refused before the shapes.
@pytest.mark.parametrize(
    "wrap",
    [
        lambda T, f: f,
        lambda T, f: lambda x: T.func.vmap(f)(T.stack([x, x])),
        lambda T, f: lambda x: T.func.jvp(f, (x,), (x,)),
        lambda T, f: lambda x: T.func.grad(lambda x: f(x * 1).double().sum())(x),
    ],
)
def test_clamp_with_numbers_checks_the_cast_before_the_overlap(wrap):
    assert_same_error(
        lambda T, x: wrap(T, lambda x: x.long().expand(2, 2, 3).clamp_(max=1.5))(x), X.copy()
    )


@pytest.mark.parametrize(
    "f",
    [
        lambda T, x, b: x.expand(2, 3).add_(b),
        lambda T, x, b: x.long().expand(2, 3).add_(b),
        lambda T, x, b: x.expand(2, 3).add_(b.expand(4, 3)),
    ],
)
def test_vmap_add_into_expanded_unbatched_self_refuses_the_overlap_first(f):
    def prog(T, x, b):
        return T.func.vmap(lambda b: f(T, x, b))(b)

    assert_same_error(prog, X[0].copy(), X.copy())


# copy_ of a tensor that requires grad into an integer tensor just leaves autograd.
@pytest.mark.parametrize("mode", [*MODES, _plain])
@pytest.mark.parametrize(
    "f",
    [
        lambda T, x: x.long().copy_(x * 2).double() * x,
        lambda T, x: T.zeros(2, 3, dtype=T.int64).copy_(x * 2).double() * x,
    ],
)
def test_copy_into_an_integer_tensor_leaves_autograd(mode, f):
    assert_same_outcome(mode(f), X.copy())  # (vmap: copy_ of a batched value into zeros)


# ==================================================================
# Issue 14's sweep of aliasing and saved values.


# ------------------------------------------------------------------ view or copy
def _writes_through(make):
    """(the fresh result after an in-place write, the input it came from)."""

    def prog(lib, x):
        x = x.clone()
        y = make(lib, x)
        y.mul_(2)
        return y, x

    return prog


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda L, x: x[True], id="getitem-True"),
        pytest.param(lambda L, x: x[True, 0], id="getitem-True-int"),
        pytest.param(lambda L, x: x[None], id="getitem-None"),
        pytest.param(lambda L, x: L.linalg.matrix_power(x, 1), id="matrix_power-1"),
        pytest.param(lambda L, x: L.linalg.matrix_power(x[None], 1), id="matrix_power-1-batch"),
        pytest.param(lambda L, x: x.t().clone().flatten(), id="clone-transposed-flatten"),
        pytest.param(lambda L, x: x.expand(x.shape), id="expand-same-shape"),
        pytest.param(lambda L, x: x.expand(-1, -1), id="expand-minus-one"),
        pytest.param(lambda L, x: L.broadcast_to(x, x.shape), id="broadcast_to-same-shape"),
    ],
)
def test_view_or_copy_as_torch(make):
    assert_same(_writes_through(make), arr(3, 3))


def test_broadcast_to_same_shape_triu_():
    assert_same(lambda L, x: L.broadcast_to(x.clone(), x.shape).triu_(), arr(3, 3))


# ==================================================================
# The view ops and tensor functions added for issue 14.


def test_unfold_is_a_view_written_through_with_autograd():
    def prog(T, a):
        a = a.requires_grad_()
        b = a * 1
        u = b.unfold(1, 2, 2)  # non-overlapping windows: a write reaches every element once
        u.mul_(3)
        w = b.unfold(1, 3, 1)  # overlapping windows: their gradients add up
        (w * w).sum().backward()
        return b, a.grad, u._base is b, w.grad_fn.name()

    assert_same(prog, arr(2, 6))


def test_real_and_imag():
    def prog(T):
        x = T.tensor([1 + 2j, 3 - 1j])
        x.real.mul_(2)
        x.imag = T.zeros(2)
        y = T.ones(2)
        y.real = T.tensor([3.0, 4.0])
        return x, y, y.real is y, x.real._base is x, x.imag.stride()

    assert_same(prog)
    assert_same_error(lambda T: T.ones(2).imag)
    assert_same_error(lambda T: T.imag(T.ones(2)))


def test_as_strided_views_the_storage():
    def prog(T, a):
        a = a.requires_grad_()
        b = a * 1
        v = b[1:].as_strided((2, 2), (1, 3))  # default offset: the view's own
        w = T.as_strided(b, (3, 3), (1, 1), 2)  # overlapping windows
        v.mul_(10)
        (w * w).sum().backward()
        return b, v, w, a.grad, v._base is b, w.grad_fn.name()

    assert_same(prog, arr(8))
    for call in ("(3, 3), (1, 1), 5", "(3, 3), (1, 1), -1", "(3, 3), (-1, 1)", "(3,), (1, 1)"):
        assert_same_error(lambda T, call=call: eval(f"T.ones(8).as_strided({call})"))


# ------------------------------------------------------------------ view scatters
@pytest.mark.filterwarnings("ignore")
def test_view_scatters_write_special_values_and_keep_input_dtype():
    # src's inf/nan/large values land in the view; an integer input keeps its dtype
    def prog(L, x, s):
        xs = x * 1
        i = L.tensor([[1, 2, 3], [4, 5, 6]])
        return (
            L.diagonal_scatter(xs, s[:2]),
            L.select_scatter(xs, s[1:], 1, -1),
            L.slice_scatter(xs, s[None], 0, -1),
            L.slice_scatter(xs, s.reshape(1, 3), start=1),
            i.diagonal_scatter(L.tensor([0.5, -7.9]), 1),
            i.slice_scatter(L.tensor([[9], [-9]]), 1, 2, step=5),
        )

    s = np.array([0.0, -np.inf, np.nan])
    assert_same(prog, np.array([[1.0, 2.0, 3.0], [-0.0, 1e308, -1e308]]), s)


@pytest.mark.filterwarnings("ignore")
def test_view_scatter_gradients_and_layouts():
    # input's gradient is g with the view zeroed, src's the view of g; the result keeps
    # a stepped input's strides
    def prog(L, x, s):
        x = x.requires_grad_()
        s = s.requires_grad_()
        w = L.arange(12.0).reshape(3, 4)
        ys = [
            L.diagonal_scatter(x, s, -1),
            x.select_scatter(s.new_zeros(3).requires_grad_() + s.sum(), 1, 2),
            x.slice_scatter(s.sum() * L.ones(1, 4), 0, 2, 3),
        ]
        gx, gs = L.autograd.grad(sum((y * w).sum() for y in ys), (x, s))
        stepped = L.zeros(3, 8)[:, ::2].diagonal_scatter(L.ones(3))
        return gx, gs, [y.stride() for y in ys], stepped.stride(), stepped

    assert_same(prog, arr(3, 4), arr(2))


def test_view_scatter_errors():
    def wrong_src(L, x):
        return L.select_scatter(x, L.zeros(3), 0, 0)

    def bad_step(L, x):
        return L.slice_scatter(x, x, 0, step=0)

    def same_dims(L, x):
        return L.diagonal_scatter(x, L.zeros(3), 0, 1, -1)

    for prog in (wrong_src, bad_step, same_dims):
        assert_same_error(prog, arr(3, 4))


# ------------------------------------------------------------------ fill_diagonal_
@pytest.mark.filterwarnings("ignore")
def test_fill_diagonal_shapes_wrap_and_values():
    def prog(L):
        out = []
        for shape, wrap in (((3, 4), False), ((7, 3), True), ((7, 3), False), ((8, 3), True)):
            out.append(L.zeros(*shape).fill_diagonal_(2.5, wrap=wrap))
        out.append(L.zeros(3, 3, 3).fill_diagonal_(float("nan")))
        out.append(L.zeros(4, 4).t().fill_diagonal_(-float("inf")))
        out.append(L.zeros(3, 3, dtype=L.int64).fill_diagonal_(7))
        out.append(L.zeros(2, 3, dtype=L.bool).fill_diagonal_(True))
        out.append(L.zeros(0, 0).fill_diagonal_(1))
        out.append(L.zeros(3, 3).fill_diagonal_(L.tensor(4.0)))
        return out

    assert_same(prog)


def test_fill_diagonal_errors_and_gradient():
    def one_dim(L):
        return L.zeros(3).fill_diagonal_(1)

    def unequal(L):
        return L.zeros(3, 3, 4).fill_diagonal_(1)

    for prog in (one_dim, unequal):
        assert_same_error(prog)

    def grad(L, x):
        x = x.requires_grad_()
        y = x * 1
        y.fill_diagonal_(3.0, wrap=True)
        (y * y).sum().backward()
        return y, x.grad

    assert_same(grad, arr(5, 2))


def test_fill_diagonal_under_vmap():
    def prog(L, x):
        def f(v):
            return (v * 1).fill_diagonal_(0.5)

        return L.func.vmap(f)(x)

    assert_same(prog, arr(2, 3, 3))


# ==================================================================
# The *_copy functions: the view op, then a copy into a new contiguous tensor.
_COPIES = [
    ("alias_copy", (), {}),
    ("as_strided_copy", ((2, 2), (1, 2)), {}),
    ("detach_copy", (), {}),
    ("diagonal_copy", (0, 1, 2), {}),
    ("expand_copy", ((2, 2, 3, 4),), {"implicit": True}),
    ("narrow_copy", (2, 1, 2), {}),
    ("permute_copy", ((2, 0, 1),), {}),
    ("select_copy", (1, -1), {}),
    ("slice_copy", (2, -3, 100, 2), {}),
    ("split_copy", (2, 1), {}),
    ("split_with_sizes_copy", ([1, 2], 1), {}),
    ("squeeze_copy", (), {}),
    ("t_copy", (), {}),
    ("transpose_copy", (0, 2), {}),
    ("unbind_copy", (1,), {}),
    ("unfold_copy", (2, 2, 1), {}),
    ("unsqueeze_copy", (1,), {}),
    ("view_copy", ((-1,),), {}),
]


@pytest.mark.parametrize("name, args, kwargs", _COPIES, ids=[c[0] for c in _COPIES])
def test_copy_is_a_new_contiguous_tensor(name, args, kwargs):
    def prog(L, x):
        if name == "t_copy":
            x = x[0]
        elif name == "squeeze_copy":
            x = x[:1]
        if name != "as_strided_copy":  # (as_strided reads the storage of x's base)
            x = x.transpose(-1, -2).contiguous().transpose(-1, -2)  # a strided input
        x.requires_grad_(name != "detach_copy")
        out = getattr(L, name)(x, *args, **kwargs)
        pieces = out if isinstance(out, tuple) else (out,)
        facts = [(p.stride(), p.is_contiguous(), p._base is None) for p in pieces]
        # (as_strided_copy is a composite: its node is the copy's, CloneBackward0)
        names = [type(p.grad_fn).__name__ for p in pieces if name != "as_strided_copy"]
        with L.no_grad():
            x.add_(100)  # the copies keep their values
        return pieces, facts, names

    assert_same(prog, arr(2, 3, 4))


@pytest.mark.parametrize("complex_input", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("name, args, kwargs", _COPIES[:2] + _COPIES[3:], ids=lambda c: str(c))
def test_copy_gradient(name, args, kwargs, complex_input):
    def prog(L, x):
        if complex_input:
            x = (x + x.flip(0) * 1j).detach()
        x.requires_grad_(True)
        y = x[0] if name == "t_copy" else x[:1] if name == "squeeze_copy" else x
        out = getattr(L, name)(y, *args, **kwargs)
        pieces = out if isinstance(out, tuple) else (out,)
        w = L.arange(1.0, 200.0) * (1 - 0.5j if complex_input else 1)
        loss = sum((p * w[: p.numel()].reshape(p.shape)).real.sum() for p in pieces)
        return L.autograd.grad(loss, x)[0]

    # (PyTorch refuses complex autograd through select_copy and slice_copy)
    assert_same_outcome(prog, arr(2, 3, 4))


def test_copy_out():
    def prog(L, x):
        out = x.new_empty(0)
        r = L.permute_copy(x, (1, 0), out=out)
        return r is out, out, out.stride()

    assert_same(prog, arr(2, 3))


def test_detach_copy_has_no_derivative():
    def backward(L, x):
        L.detach_copy(x.requires_grad_()).sum().backward()

    assert_same_error(backward, arr(3))
    assert_same(lambda L, x: L.detach_copy(x.requires_grad_()).requires_grad, arr(3))


@pytest.mark.parametrize(
    "args",
    [(0, 1, 5), (1, 0, -1), (2, 0, 1), (-3, 0, 1), (0, 3, 0), (0, -3, 1), (0, -1, 1), (1, 3, 0)],
)
def test_narrow_copy_checks(args):
    assert_same_outcome(lambda L, x: (L.narrow_copy(x, *args), x.narrow_copy(*args)), arr(2, 3))


@pytest.mark.parametrize(
    "args",
    [
        (),
        (0, None, None, 3),
        (1, -100, 100),
        (1, 2, 1),
        (1, -1, None),
        (0, 0, 2, 0),
        (2,),
        (-1, 1, -1, 2),
    ],
)
def test_slice_copy_bounds(args):
    assert_same_outcome(lambda L, x: L.slice_copy(x, *args), arr(4, 5))


def test_view_copy_of_a_non_viewable_input():
    # view would refuse it; view_copy's kernel copies, so any layout works
    assert_same(lambda L, x: L.view_copy(x.t(), (6,)), arr(2, 3))
    assert_same_error(lambda L, x: L.view_copy(x, (4,)), arr(2, 3))


def test_as_strided_scatter_writes_the_window_as_pytorch_and_differentiates_truly():
    # forward and the src gradient as PyTorch's; the input gradient is the true one, 0 at the
    # overwritten elements (PyTorch's formula gives the complement there: a known bug)
    x0 = np.arange(9.0).reshape(3, 3)
    w = np.random.default_rng(0).standard_normal((3, 3))

    def prog(L):
        x = L.tensor(x0, requires_grad=True)
        s = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = L.as_strided_scatter(x, s * 2, (3,), (4,))
        (gs,) = L.autograd.grad((y * L.tensor(w)).sum(), s)
        return y, gs

    assert_close(run(prog, nt), run(prog, torch))
    x = nt.tensor(x0, requires_grad=True)
    (gx,) = nt.autograd.grad(
        (nt.as_strided_scatter(x, nt.ones(3), (3,), (4,)) * nt.tensor(w)).sum(), x
    )
    np.testing.assert_array_equal(gx.numpy(), np.where(np.eye(3) == 1, 0.0, w))
    with pytest.raises(NotImplementedError, match="non-contiguous input"):
        nt.zeros(3, 3).t().as_strided_scatter(nt.ones(3), (3,), (1,))


def test_view_as_real_and_complex_copies_match_pytorch():
    z0 = np.array([1 + 2j, 3 - 1j])

    def prog(L):
        z = L.tensor(z0, requires_grad=True)
        r = L.view_as_real_copy(z)
        (g,) = L.autograd.grad((r * L.tensor([[1.0, 2.0], [3.0, 4.0]])).sum(), z)
        c = L.view_as_complex_copy(r.detach())
        return r, g, c, r.grad_fn.name()

    assert_close(run(prog, nt), run(prog, torch))
    for lib in (nt, torch):
        with pytest.raises(RuntimeError, match="does not support automatic differentiation"):
            lib.view_as_complex_copy(lib.zeros(2, 2, requires_grad=True))


# A detached tensor keeps its source's storage: as_strided windows on it, offsets counted
# from the storage's start, and writes through the window reach the source.
@pytest.mark.parametrize(
    "make, size, stride, offset",
    [
        (lambda x: x.t().detach(), (2, 2), (1, 4), None),
        (lambda x: x.t().detach(), (2, 2), (1, 4), 1),
        (lambda x: x.t().detach(), (3,), (5,), 2),
        (lambda x: x[1:].t().detach(), (2, 2), (1, 4), 3),
        (lambda x: x[1:].t().detach(), (2, 2), (1, 4), None),
        (lambda x: x.reshape(-1)[4:].detach(), (2,), (1,), 0),
        (lambda x: x.t().data, (2, 3), (4, 1), 1),
    ],
)
def test_as_strided_on_detached_views(make, size, stride, offset):
    def prog(T, x):
        y = make(x)
        w = y.as_strided(size, stride) if offset is None else y.as_strided(size, stride, offset)
        got = w.clone()
        w.mul_(10)
        return got, x

    assert_same(prog, np.arange(16.0).reshape(4, 4))


# ==================================================================
# Issue 33 item 10: a view is a plain Tensor (``type(x[0]) is torch.Tensor``), as are
# the results of ops on and views of a Parameter; a library may test the exact type.
def _public_types(out) -> list:
    """The classes of a result's tensors under names both libraries share."""
    names = {
        nt.Tensor: "Tensor",
        torch.Tensor: "Tensor",
        nt.nn.Parameter: "Parameter",
        torch.nn.Parameter: "Parameter",
    }
    return [
        names.get(type(t), repr(type(t))) for t in tensor_leaves(out, (nt.Tensor, torch.Tensor))
    ]


# How the tensor an op is applied to is made: a plain tensor, one that requires grad, a
# Parameter, and a view of each (so that the op's result is a view of a view).
_SOURCES = {
    "plain": lambda L, x: x,
    "requires_grad": lambda L, x: x.requires_grad_(),
    "parameter": lambda L, x: L.nn.Parameter(x),
    "view_of_plain": lambda L, x: x.view(x.shape),
    "view_of_parameter": lambda L, x: L.nn.Parameter(x).view(x.shape),
}
_MODES = {
    "grad": lambda L: contextlib.nullcontext(),
    "no_grad": lambda L: L.no_grad(),
    "inference_mode": lambda L: L.inference_mode(),
}
_VIEW_OPS = [op for op in REGISTRY.values() if op.view and op.samples and not op.test.no_oracle]


def _view_sample_dtype(op) -> str:
    floats = [d for d in op.test.dtypes if "float" in d or "complex" in d]
    return "float32" if "float32" in floats else floats[0]


@pytest.mark.parametrize("op", _VIEW_OPS, ids=lambda op: op.name)
def test_every_view_op_gives_the_type_pytorch_gives(op):
    assert len(_VIEW_OPS) >= 20  # (the sweep found the registry's view ops)
    fn = {nt: resolve(nt, op.api), torch: resolve(torch, op.oracle or op.api)}
    for s in list(op.samples(Maker(_view_sample_dtype(op), 0)))[:3]:
        for source, make in _SOURCES.items():
            for mode, enter in _MODES.items():

                def prog(L, x, *rest, make=make, enter=enter):
                    x = make(L, x)
                    with enter(L):
                        out = fn[L](x, *rest, **to_lib(L, s.kwargs))
                    return _public_types(out), type(out) is L.Tensor

                got = run(prog, nt, *s.args)
                want = run(prog, torch, *s.args)
                assert got == want, (s.name, source, mode, got, want)
                assert got[0], (s.name, source, mode)  # (the program saw a tensor)


_TYPE_PROGRAMS = {
    "x[0]": lambda L, x, p: x[0],
    "x[0][1:]": lambda L, x, p: x[0][1:],
    "x.T": lambda L, x, p: x.T,
    "x.mT": lambda L, x, p: x.mT,
    "x.detach()": lambda L, x, p: x.detach(),
    "x.real": lambda L, x, p: x.real,
    "x.view_as(x)": lambda L, x, p: x.view_as(x),
    "x.as_strided": lambda L, x, p: x.as_strided((2, 2), (1, 2)),
    "x.chunk(2)": lambda L, x, p: x.chunk(2),
    "x.unfold": lambda L, x, p: x.unfold(1, 2, 1),
    "x.swapaxes": lambda L, x, p: x.swapaxes(0, 1),
    "x[None, ..., 1]": lambda L, x, p: x[None, ..., 1],
    "p * 2": lambda L, x, p: p * 2,
    "p[0]": lambda L, x, p: p[0],
    "p.t()": lambda L, x, p: p.t(),
    "p.view(-1)": lambda L, x, p: p.view(-1),
    "p.detach()": lambda L, x, p: p.detach(),
    "p.data": lambda L, x, p: p.data,
    "p.unbind()": lambda L, x, p: p.unbind(),
    "p.t()[0].unsqueeze(0)": lambda L, x, p: p.t()[0].unsqueeze(0),
}


@pytest.mark.parametrize("name", list(_TYPE_PROGRAMS))
def test_views_and_results_of_parameters_are_plain_tensors(name):
    def prog(L, x):
        p = L.nn.Parameter(x.clone())
        out = _TYPE_PROGRAMS[name](L, x, p)
        return _public_types(out), type(out) is L.Tensor

    assert_same_outcome(prog, arr(3, 4))
    assert run(prog, nt, arr(3, 4))[0]


def test_a_stale_view_and_a_root_laid_out_anew_keep_their_types():
    # an in-place write into the base regenerates a view's history, never its class; an
    # in-place view op (t_) keeps a tensor's class (a Parameter stays one)
    def prog(L, x):
        b = x.requires_grad_() * 1
        v, w = b[0], b.t()
        b.mul_(2)
        v.add_(1)
        p = L.nn.Parameter(x.detach().clone())
        with L.no_grad():
            p.t_()
            p.unsqueeze_(0)
        r = x * 1
        r.t_()
        out = [v, w, b, p, r, w[0]]
        return _public_types(out), [t.grad_fn.name() for t in out if t.grad_fn is not None]

    got = assert_same_outcome(prog, arr(3, 4))
    assert got[0] == ["Tensor"] * 3 + ["Parameter"] + ["Tensor"] * 2
