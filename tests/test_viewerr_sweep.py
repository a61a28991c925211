"""Errors about views and in-place writes against PyTorch (issue 14, found by the random
program fuzzer): which views refuse in-place writes, the node names their errors print,
and the same programs under torch.func.grad and vmap(grad)."""

from __future__ import annotations

import numpy as np
import pytest
from twolibs import assert_same, assert_same_error, assert_same_outcome

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
)  # fmt: skip
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
)  # fmt: skip
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
