"""Issue 14, aliasing and saved values: which results are views and which copies, and
that ops save only what their formulas name (so in-place writes to their outputs or
inputs do not raise false version-counter errors), against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from twolibs import arr, assert_same, fd_grad, run

import numtorch as nt


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


def test_clone_keeps_dense_strides():
    def prog(lib, x):
        return [
            list(x.t().clone().stride()),
            list(x.permute(1, 0).contiguous().stride()),
            list(x[:, ::2].t().clone().stride()),
            list(x.clone().stride()),
        ]

    assert_same(prog, arr(3, 4))


def test_broadcast_to_same_shape_triu_():
    assert_same(lambda L, x: L.broadcast_to(x.clone(), x.shape).triu_(), arr(3, 3))


# ------------------------------------------------------------------ what an op saves
def _write_output_then_backward(op):
    """An in-place write into the op's output, then backward: PyTorch succeeds where the
    formulas do not read the output."""

    def prog(lib, x):
        x = x.clone().requires_grad_()
        y = op(lib, x * 1)
        y.mul_(2)
        y.sum().backward()
        return x.grad

    return prog


@pytest.mark.parametrize(
    "op",
    [
        pytest.param(lambda L, x: x.min(1)[0], id="min-dim"),
        pytest.param(lambda L, x: x.max(1, keepdim=True)[0], id="max-dim"),
        pytest.param(lambda L, x: x.cummin(1)[0], id="cummin"),
        pytest.param(lambda L, x: x.cummax(0)[0], id="cummax"),
        pytest.param(lambda L, x: x.topk(2)[0], id="topk"),
        pytest.param(lambda L, x: x.sort(1)[0], id="sort"),
        pytest.param(lambda L, x: x.var(1), id="var"),
        pytest.param(lambda L, x: x.nansum(1), id="nansum"),
        pytest.param(lambda L, x: x.nanmean(1), id="nanmean"),
        pytest.param(lambda L, x: x / (x.detach() + 5), id="div"),
        pytest.param(lambda L, x: (x + 5) / x, id="div-other"),
    ],
)
def test_writing_an_unsaved_output_is_no_error(op):
    assert_same(_write_output_then_backward(op), arr(2, 3))


def test_writing_the_saved_output_still_raises():
    from twolibs import assert_same_error

    def prog(lib, x):
        x = x.clone().requires_grad_()
        v, i = (x * 1).max(1)
        i.add_(0)
        v.sum().backward()

    assert_same_error(prog, arr(2, 3))
    assert_same_error(_write_output_then_backward(lambda L, x: x.std(1)), arr(2, 3))


# ------------------------------------------------------------------ contiguous results
@pytest.mark.parametrize(
    "op",
    [
        pytest.param(lambda x: x.sum(1), id="sum"),
        pytest.param(lambda x: x.sum(1, keepdim=True), id="sum-keepdim"),
        pytest.param(lambda x: x.mean(1), id="mean"),
        pytest.param(lambda x: x.amax(0), id="amax"),
        pytest.param(lambda x: x.max(1)[0], id="max-dim"),
        pytest.param(lambda x: x.var(1), id="var"),
        pytest.param(lambda x: x.logsumexp(1), id="logsumexp"),
        pytest.param(lambda x: x.norm(dim=1), id="norm"),
        pytest.param(lambda x: x.softmax(1), id="softmax"),
        pytest.param(lambda x: x.cumsum(1), id="cumsum"),
        pytest.param(lambda x: x.cummax(1)[0], id="cummax"),
        pytest.param(lambda x: (x > 0).any(1), id="any"),
    ],
)
def test_reduction_of_a_permuted_input_is_contiguous(op):
    def prog(lib, x):
        y = op(x.permute(2, 0, 1))
        return y.is_contiguous(), list(y.stride()), y.reshape(-1).view(-1)

    assert_same(prog, arr(2, 3, 4))


# ------------------------------------------------------------------ in-place predicates
def _predicate_prog(name, arg):
    def prog(lib, x, y):
        x = x.clone().requires_grad_()
        z = x * 1
        args = () if arg is None else (y if arg == "t" else arg,)
        getattr(z, name)(*args)
        (z * x).sum().backward()
        return z, z.requires_grad, x.grad

    return prog


@pytest.mark.parametrize("name,arg", [("lt_", 0.0), ("eq_", 0.5), ("ge_", "t")])
def test_inplace_predicate_has_no_gradient(name, arg):
    assert_same(_predicate_prog(name, arg), arr(2, 3), arr(2, 3, seed=1))


@pytest.mark.parametrize("name,arg", [("logical_or_", "t"), ("logical_not_", None)])
def test_inplace_logical_op_gradient_by_finite_differences(name, arg):
    """PyTorch divergence: its logical_*_ keep self's old history, so the gradient flows
    through values that no longer depend on x. (z * x).sum() with z piecewise constant in x
    has the gradient z, as finite differences show."""
    x, y = arr(2, 3), arr(2, 3, seed=1)
    z, _, grad = run(_predicate_prog(name, arg), nt, x, y)

    def f(v):
        return float(
            run(lambda L, a, b: (getattr(a * 1, name)(*((b,) if arg else ())) * a).sum(), nt, v, y)
        )

    np.testing.assert_allclose(grad.numpy(), fd_grad(f, x), atol=1e-6)
    np.testing.assert_allclose(grad.numpy(), z.detach().numpy())


def test_inplace_predicate_tangent_is_zero_in_self_dtype():
    def prog(lib, x):
        return lib.func.jvp(lambda a: (a * 1).lt_(0), (x,), (lib.ones_like(x),))

    assert_same(prog, arr(2, 3))


# ------------------------------------------------------------------ sum_to_size
def test_sum_to_size_of_the_same_size_is_the_tensor_itself():
    def prog(lib, a):
        a = a.clone().requires_grad_()
        d = lib.diag(a)
        v = d.sum_to_size((3,))
        v.tanh_()
        (d * 2).sum().backward()
        return v is d, d, a.grad

    assert_same(prog, arr(3, 3))


def test_sum_to_size_forms_and_error():
    from twolibs import assert_same_error

    assert_same(
        lambda L, x: (x.sum_to_size(1, 3), x.sum_to_size([3]), x.sum_to_size(2, 1)), arr(2, 3)
    )
    assert_same_error(lambda L, x: x.sum_to_size(4), arr(2, 3))


# ------------------------------------------------------------------ absent tangents
@pytest.mark.parametrize(
    "f",
    [
        pytest.param(lambda L, a, c: a * 0.5, id="mul-number"),
        pytest.param(lambda L, a, c: c * a, id="mul-constant"),
        pytest.param(lambda L, a, c: a / c, id="div-constant"),
        pytest.param(lambda L, a, c: c / (a + 5), id="div-by-dual"),
        pytest.param(lambda L, a, c: L.atan2(a, c), id="atan2-constant"),
        pytest.param(lambda L, a, c: a + c.expand(2, 3), id="add-broadcast-constant"),
        pytest.param(lambda L, a, c: L.maximum(a, c), id="maximum-constant"),
    ],
)
def test_jvp_skips_the_term_of_an_operand_without_tangent(f):
    a = arr(3)
    a[0] = -np.inf
    c = np.array([0.5, 2.0, -1.5])

    def prog(lib, a, c):
        return lib.func.jvp(lambda x: f(lib, x, c), (a,), (lib.ones_like(a),))

    assert_same(prog, a, c)
