"""Joining, splitting, repeating and tiling against PyTorch (cat/concatenate and their
dim/axis names, the directional splits, repeat_interleave, tile, unflatten): values,
gradients and error texts."""

from __future__ import annotations

import numpy as np
import pytest
from twolibs import arr, assert_same, assert_same_error

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
