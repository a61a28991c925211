"""Issue 14, aliasing and saved values: which results are views and which copies, and
that ops save only what their formulas name (so in-place writes to their outputs or
inputs do not raise false version-counter errors), against PyTorch."""

from __future__ import annotations

import pytest
from twolibs import arr, assert_same


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
