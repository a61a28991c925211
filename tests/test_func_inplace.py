"""In-place writes of tracked values into tensors made inside a transform, against torch.func.

PyTorch's functorch wraps a tensor made inside grad, vjp or jvp at that level, so a value the
level tracks can be written into it in place (``out = zeros(3); out[i] = f(x)``), through
views too; a tensor captured from outside the transform is refused with one text. numtorch
lifts the tensor into the level at the write (numtorch/_core/lift.py). Each write form runs
under each transform and their compositions and is compared with torch's values, or its
error where torch raises.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from twolibs import assert_close, assert_same, assert_same_error, assert_same_outcome, fd_grad

import numtorch as nt

X = np.array([0.7, -1.2, 2.0, 0.4])
V = np.array([0.3, -0.5, 1.1, 2.0])  # a tangent


def _idx(T, *v):
    return T.tensor(v)


# ------------------------------------------------------------------ write forms
# f(T, x): a tensor built inside the function by in-place writes of values that depend on x.
def add_into_zeros(T, x):
    out = T.zeros(4, dtype=x.dtype)
    out.add_(x)
    return out * x


def mul_into_zeros_like(T, x):
    return T.zeros_like(x).add_(1.5).mul_(x)


def augmented_assignment(T, x):
    out = T.ones(4, dtype=x.dtype)
    out *= x
    out += x**2
    return out


def copy_into_empty(T, x):
    return T.empty(4, dtype=x.dtype).copy_(x.sin())


def copy_into_tensor_literal(T, x):
    return T.tensor([0.0, 1.0, 2.0, 3.0], dtype=x.dtype).copy_(x * 3)


def rows_by_setitem(T, x):
    out = T.zeros(3, 4, dtype=x.dtype)
    for i in range(3):
        out[i] = x * (i + 1) + x.sin()
    return out


def slice_setitem(T, x):
    out = T.ones(2, 4, dtype=x.dtype)
    out[:, 1:] = x[1:].exp()
    return out


def advanced_setitem(T, x):
    out = T.zeros(6, dtype=x.dtype)
    out[_idx(T, 0, 2, 4, 5)] = x
    return out


def index_add(T, x):
    return T.zeros(5, dtype=x.dtype).index_add_(0, _idx(T, 0, 2, 2, 4), x)


def index_copy(T, x):
    return T.zeros(6, dtype=x.dtype).index_copy_(0, _idx(T, 5, 1, 3, 0), x)


def scatter(T, x):
    return T.zeros(6, dtype=x.dtype).scatter_(0, _idx(T, 5, 1, 3, 0), x)


def masked_fill(T, x):
    return T.zeros(4, dtype=x.dtype).masked_fill_(T.tensor([True, False, True, False]), x.sum())


def clamp_with_a_tensor(T, x):
    return T.full((4,), 0.5, dtype=x.dtype).clamp_(min=x)


def through_a_row_view(T, x):
    buf = T.zeros(3, 4, dtype=x.dtype)
    row = buf[1]
    row.copy_(x)
    row.mul_(x)
    return buf


def the_written_view_itself(T, x):
    buf = T.zeros(3, 4, dtype=x.dtype)
    row = buf[2]
    row.copy_(x * x)
    return row


def through_a_transposed_view(T, x):
    buf = T.zeros(4, 3, dtype=x.dtype)
    buf.t()[1:].add_(x)
    return buf * 2


def view_made_before_the_write(T, x):
    buf = T.zeros(2, 4, dtype=x.dtype)
    col = buf[:, 0]
    first = buf[1, 1:]
    buf[1].copy_(x)
    return T.cat([col * 2, buf.sum(0), first])


def view_made_before_the_write_returned(T, x):
    buf = T.zeros(2, 4, dtype=x.dtype)
    col = buf[:, 1]
    buf[1].copy_(x)
    return col


def view_of_a_like_tensor(T, x):
    buf = T.stack([T.zeros_like(x), T.zeros_like(x)])
    buf[0].copy_(x)
    buf[1][1:] = x[:-1] * x[1:]
    return buf


def shifted_like_tensor(T, x):
    out = T.empty_like(x)
    out[1:] = x[:-1] * 2
    out[0] = x[0]
    return out


def euler_steps(T, x):
    ys = T.zeros(5, 4, dtype=x.dtype)
    y = x
    ys[0] = y
    for k in range(1, 5):
        y = y + 0.1 * T.sin(y) * y
        ys[k] = y
    return ys


def scan(T, x):
    out = T.empty(4, dtype=x.dtype)
    acc = x[0] * 0
    for i in range(4):
        acc = acc * 0.5 + x[i] ** 2
        out[i] = acc
    return out


def relaid_out(T, x):
    buf = T.zeros(4, 2, dtype=x.dtype)
    buf[:, 0] = x
    buf.t_()
    return buf * 2


def into_a_complex_tensor(T, x):
    buf = T.zeros(4, dtype=T.complex128)
    buf.add_(x * 1j)
    buf.add_(x)
    return buf.abs()


def into_an_integer_tensor(T, x):
    buf = T.zeros(4, dtype=T.int64)
    buf.copy_(x * 3)
    return buf * x


def view_returned_after_a_write_through_another(T, x):
    """(The returned view's history is regenerated from its root's after the write.)"""
    buf = T.zeros_like(x)
    buf.copy_(x.exp())
    out = T.broadcast_to(buf, (2, 4))
    out.t()[1:3, 1].mul_(x[2])
    return out


FORMS = [
    add_into_zeros,
    mul_into_zeros_like,
    augmented_assignment,
    copy_into_empty,
    copy_into_tensor_literal,
    rows_by_setitem,
    slice_setitem,
    advanced_setitem,
    index_add,
    index_copy,
    scatter,
    masked_fill,
    clamp_with_a_tensor,
    through_a_row_view,
    the_written_view_itself,
    through_a_transposed_view,
    view_made_before_the_write,
    view_made_before_the_write_returned,
    view_returned_after_a_write_through_another,
    view_of_a_like_tensor,
    shifted_like_tensor,
    euler_steps,
    scan,
    relaid_out,
    into_a_complex_tensor,
    into_an_integer_tensor,
]


# ------------------------------------------------------------------ transforms
def _loss(T, y):
    """A scalar of f's output that is not linear (so second derivatives are not zero)."""
    return (y * T.cos(y)).sum()


def _grad(T, f, x, v):
    return T.func.grad(lambda x: _loss(T, f(T, x)))(x)


def _vjp(T, f, x, v):
    out, fn = T.func.vjp(lambda x: f(T, x), x)
    return out, fn(T.cos(out.detach()) + 1)


def _jvp(T, f, x, v):
    return T.func.jvp(lambda x: f(T, x), (x,), (v,))


def _jacrev(T, f, x, v):
    return T.func.jacrev(lambda x: f(T, x))(x)


def _jacfwd(T, f, x, v):
    return T.func.jacfwd(lambda x: f(T, x))(x)


def _hessian(T, f, x, v):
    return T.func.hessian(lambda x: _loss(T, f(T, x)))(x)


def _grad_of_grad(T, f, x, v):
    inner = T.func.grad(lambda y: _loss(T, f(T, y)))
    return T.func.grad(lambda x: inner(x).sin().sum())(x)


def _jvp_of_grad(T, f, x, v):
    return T.func.jvp(T.func.grad(lambda y: _loss(T, f(T, y))), (x,), (v,))


def _vmap_of_grad_unbatched_write(T, f, x, v):
    """Per-sample gradients where the written values are not batched (only a later factor)."""
    return T.func.vmap(lambda w: T.func.grad(lambda x: _loss(T, f(T, x) * w.sum()))(x))(
        T.stack([v, 2 * v])
    )


def _forward_ad(T, f, x, v):
    fwad = T.autograd.forward_ad
    with fwad.dual_level():
        return fwad.unpack_dual(f(T, fwad.make_dual(x, v))).tangent


TRANSFORMS = [
    _grad,
    _vjp,
    _jvp,
    _jacrev,
    _jacfwd,
    _hessian,
    _grad_of_grad,
    _jvp_of_grad,
    _vmap_of_grad_unbatched_write,
    _forward_ad,
]


@pytest.mark.parametrize("transform", TRANSFORMS, ids=lambda t: t.__name__[1:])
@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.__name__)
def test_write_into_a_tensor_made_inside(transform, form):
    assert_same(lambda T, x, v: transform(T, form, x, v), X.copy(), V.copy())


# Where torch.func refuses what eager PyTorch does (its fill_ jvp writes a batched tangent
# into an unbatched zero under jacfwd; a view made before its base took a tracked value
# counts as a leaf under grad, as in eager mode), numtorch gives the derivatives of the same
# function written out of place, or finite differences.
def fill_with_a_tensor(T, x):
    return T.empty(4, dtype=x.dtype).fill_(x[1])


def fill_out_of_place(T, x):
    return x[1] * T.ones(4, dtype=x.dtype)


@pytest.mark.parametrize("transform", [_jacfwd, _hessian], ids=lambda t: t.__name__[1:])
def test_fill_with_a_tracked_value_under_forward_over_vmap(transform):
    ours = transform(nt, fill_with_a_tensor, nt.tensor(X), nt.tensor(V))
    theirs = transform(torch, fill_out_of_place, torch.tensor(X), torch.tensor(V))
    assert_close(ours, theirs)
    with pytest.raises(RuntimeError, match=r"vmap: fill_\(self"):
        transform(torch, fill_with_a_tensor, torch.tensor(X), torch.tensor(V))


def view_written_after_its_base(T, x):
    buf = T.zeros(2, 4, dtype=x.dtype)
    first = buf[0]
    buf[1].copy_(x)
    first.add_(x.cos())
    return buf


def test_write_into_a_view_made_before_its_base_took_a_tracked_value():
    """PyTorch refuses this write as one into a leaf (eager too, unless the view's grad_fn
    was read first, which regenerates it): finite differences decide under grad."""

    def loss(x: np.ndarray) -> float:
        return float(_loss(nt, view_written_after_its_base(nt, nt.tensor(x))))

    ours = _grad(nt, view_written_after_its_base, nt.tensor(X), None)
    np.testing.assert_allclose(ours.numpy(), fd_grad(loss, X.copy()), rtol=1e-6, atol=1e-8)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        _grad(torch, view_written_after_its_base, torch.tensor(X), None)
    assert_same(lambda T, x, v: _jvp(T, view_written_after_its_base, x, v), X.copy(), V.copy())


# Under vmap, a tensor made by a factory is not batched, and PyTorch refuses a batched write
# into it (with vmap's texts); one made like a batched tensor takes the write.
def _vmap_of_grad(T, f, x, v):
    return T.func.vmap(T.func.grad(lambda x: _loss(T, f(T, x))))(T.stack([x, v]))


def _vmap_of_jacfwd(T, f, x, v):
    return T.func.vmap(T.func.jacfwd(lambda x: f(T, x)))(T.stack([x, v]))


def _vmap_of_hessian(T, f, x, v):
    return T.func.vmap(T.func.hessian(lambda x: _loss(T, f(T, x))))(T.stack([x, v]))


@pytest.mark.parametrize(
    "transform", [_vmap_of_grad, _vmap_of_jacfwd, _vmap_of_hessian], ids=lambda t: t.__name__[1:]
)
@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.__name__)
def test_batched_write_into_a_tensor_made_inside(transform, form):
    assert_same_outcome(lambda T, x, v: transform(T, form, x, v), X.copy(), V.copy())


# ------------------------------------------------------------------ captured tensors
CAPTURED_WRITES = {
    "add_": lambda T, c, x: c.add_(x),
    "mul_": lambda T, c, x: c.mul_(x),
    "copy_": lambda T, c, x: c.copy_(x * 2),
    "setitem": lambda T, c, x: c.__setitem__(slice(1, None), x[1:]),
    "advanced setitem": lambda T, c, x: c.__setitem__(_idx(T, 0, 3), x[:2]),
    "index_add_": lambda T, c, x: c.index_add_(0, _idx(T, 0, 3), x[:2]),
    "masked_fill_": lambda T, c, x: c.masked_fill_(T.tensor([True, False, True, False]), x[0]),
    "through a view": lambda T, c, x: c[1:].add_(x[1:]),
    "through an alias": lambda T, c, x: c.detach().add_(x),
    # values no level tracks: refused all the same (PyTorch checks the written tensor alone)
    "untracked add_": lambda T, c, x: c.add_(1.5),
    "untracked copy_": lambda T, c, x: c.copy_(x.detach()),
    "untracked fill_": lambda T, c, x: c.fill_(2.0),
    "untracked setitem": lambda T, c, x: c.__setitem__(0, 2.0),
    "under no_grad": lambda T, c, x: _under_no_grad(T, lambda: c.mul_(x)),
}


def _under_no_grad(T, write):
    with T.no_grad():
        write()


def _captured(write):
    def prog(T, x, v, transform):
        c = T.zeros(4, dtype=x.dtype)

        def f(T, x):
            write(T, c, x)
            return c * 1

        return transform(T, f, x, v)

    return prog


@pytest.mark.parametrize(
    "transform",
    [_grad, _vjp, _jvp, _jacrev, _jacfwd, _hessian, _vmap_of_grad],
    ids=lambda t: t.__name__[1:],
)
@pytest.mark.parametrize("write", CAPTURED_WRITES.values(), ids=CAPTURED_WRITES.keys())
def test_write_into_a_captured_tensor_is_refused(transform, write):
    prog = _captured(write)
    assert_same_error(lambda T, x, v: prog(T, x, v, transform), X.copy(), V.copy())


@pytest.mark.parametrize(
    "write",
    [w for k, w in CAPTURED_WRITES.items() if not k.startswith("untracked")],
    ids=[k for k in CAPTURED_WRITES if not k.startswith("untracked")],
)
def test_vmap_refuses_a_batched_write_into_a_captured_tensor(write):
    def prog(T, x, v):
        c = T.zeros(4, dtype=x.dtype)

        def f(x):
            write(T, c, x)
            return c * 1

        return T.func.vmap(f)(T.stack([x, v]))

    assert_same_error(prog, X.copy(), V.copy())


def test_forward_ad_writes_into_a_captured_tensor():
    def prog(T, x, v):
        fwad = T.autograd.forward_ad
        c = T.zeros(2, 4, dtype=x.dtype)
        with fwad.dual_level():
            d = fwad.make_dual(x, v)
            c[1].add_(d * 2)
            tangent = fwad.unpack_dual(c).tangent
        return tangent, c, fwad.unpack_dual(c).tangent is None

    assert_same(prog, X.copy(), V.copy())


def test_a_tensor_made_inside_an_outer_transform_is_captured_by_an_inner_one():
    def prog(T, x):
        def outer(x):
            buf = T.zeros(4, dtype=x.dtype)
            buf.add_(x)  # lifted into the outer level

            def inner(y):
                buf.mul_(y)  # captured by the inner level
                return buf.sum()

            return T.func.grad(inner)(x).sum()

        return T.func.grad(outer)(x)

    assert_same_error(prog, X.copy())


def test_a_tensor_made_inside_a_finished_transform_is_captured_by_the_next():
    def prog(T, x):
        kept = []

        def first(x):
            kept.append(T.zeros(4, dtype=x.dtype))
            return (x * x).sum()

        def second(x):
            kept[0].add_(x)
            return kept[0].sum()

        T.func.grad(first)(x)
        return T.func.grad(second)(x)

    assert_same_error(prog, X.copy())


def _nested(last_write):
    """A tensor made inside an inner grad takes a value tracked only by the outer one, then
    one tracked by both (it is lifted into the outer level first, then the inner), then
    ``last_write``."""

    def prog(T, x):
        def outer(x):
            def inner(y):
                buf = T.zeros(4, dtype=x.dtype)
                buf.add_(x)
                buf.mul_(y)
                last_write(buf, x)
                return (buf * buf).sum()

            return T.func.grad(inner)(x * 2).sin().sum()

        return T.func.grad(outer)(x)

    return prog


def test_values_of_two_levels_written_inside_nested_levels():
    assert_same(_nested(lambda buf, x: buf[1:].mul_(x[:-1])), X.copy())


def test_a_saved_view_written_inside_nested_levels_is_refused_in_backward():
    def write(buf, x):
        buf[1:] = buf[1:] * x[:-1]  # the product saved buf[1:], which the write changes

    assert_same_error(_nested(write), X.copy())


def test_a_lifted_tensor_kept_past_the_transform_holds_the_written_values():
    def prog(T, x):
        kept = []

        def f(x):
            buf = T.zeros(4, dtype=x.dtype)
            buf.add_(x)
            kept.append(buf)
            return (buf * buf).sum()

        g = T.func.grad(f)(x)
        return g, kept[0] + 1

    assert_same(prog, X.copy())


def test_an_untracked_write_leaves_the_tensor_out_of_the_level():
    def prog(T, x):
        def f(x):
            buf = T.zeros(4, dtype=x.dtype)
            with T.no_grad():
                buf.add_(x)
            return (buf * x).sum()

        return T.func.grad(f)(x)

    assert_same(prog, X.copy())


def _split_then_write(T, x):
    buf = T.zeros(4, dtype=x.dtype)
    _, second = buf.split(2)
    second.copy_(x[:2])
    return buf


def _view_made_in_no_grad_then_write(T, x):
    buf = T.zeros(4, dtype=x.dtype)
    with T.no_grad():
        tail = buf[1:]
    tail.copy_(x[1:])
    return buf


@pytest.mark.parametrize("form", [_split_then_write, _view_made_in_no_grad_then_write])
def test_writes_into_views_that_autograd_refuses_are_refused_after_the_lift(form):
    assert_same_error(lambda T, x, v: _grad(T, form, x, v), X.copy(), V.copy())


# ------------------------------------------------------------------ arguments not differentiated
HELD_WRITES = {
    "untracked": lambda T, b, x: b.add_(1.5),
    "tracked": lambda T, b, x: b.add_(x * 2),
    "through a view": lambda T, b, x: b[1:].mul_(x[1:]),
}


def _held(transform, write):
    def prog(T, x, b):
        def f(x, b, *, k=None):
            write(T, b, x)
            if k is not None:
                k.mul_(x)
                b = b + k
            return (b * x).sum() if transform == "grad" else b * x

        if transform == "grad":
            out = T.func.grad(f)(x, b, k=T.ones(4, dtype=x.dtype))
        elif transform == "jacrev":
            out = T.func.jacrev(f)(x, b)
        else:
            out = T.func.jacfwd(f)(x, b)
        return out, b

    return prog


@pytest.mark.parametrize("transform", ["grad", "jacrev", "jacfwd"])
@pytest.mark.parametrize("write", HELD_WRITES.values(), ids=HELD_WRITES.keys())
def test_arguments_not_differentiated_take_writes(transform, write):
    """PyTorch wraps the arguments it does not differentiate at the level too (grad also its
    keyword arguments): writes into them are not writes into captured tensors."""
    assert_same_outcome(_held(transform, write), X.copy(), X.copy() + 1)


def test_module_buffers_under_grad_of_functional_call():
    """BatchNorm's running statistics, passed in as buffers, update under grad."""

    def prog(T, x):
        T.manual_seed(0)
        m = T.nn.BatchNorm1d(4).to(x.dtype)
        params, buffers = dict(m.named_parameters()), dict(m.named_buffers())

        def loss(p, b, x):
            return T.func.functional_call(m, (p, b), (x,)).exp().sum()

        g = T.func.grad(loss)(
            params, buffers, x.reshape(1, 4).expand(3, 4) * T.arange(3.0, dtype=x.dtype)[:, None]
        )
        return g, buffers

    assert_same(prog, X.copy())


def test_a_module_buffer_captured_by_grad_is_refused():
    def prog(T, x):
        m = T.nn.BatchNorm1d(4).to(x.dtype)
        return T.func.grad(
            lambda x: m(x.expand(3, 4) * T.arange(3.0, dtype=x.dtype)[:, None]).sum()
        )(x)

    assert_same_error(prog, X.copy())
