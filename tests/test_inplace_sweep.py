"""In-place writes against PyTorch: internal overlap (expanded tensors), the version counter
of what an in-place op saves, and the errors under torch.func transforms."""

from __future__ import annotations

import numpy as np
import pytest
from twolibs import arr, assert_same, assert_same_error

pytestmark = pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")

X = np.array([1.5, -2.0])


# ------------------------------------------------------------------ internal overlap
@pytest.mark.parametrize(
    "write",
    [
        # no element of the written tensor repeats: the write goes through
        lambda T, x: x.expand(3, 2)[0].mul_(2),
        lambda T, x: x.expand(3, 2).select(0, 1).add_(1),
        lambda T, x: x.expand(3, 2)[:1].mul_(2),
        lambda T, x: x.expand(3, 2).diagonal().mul_(2),
        lambda T, x: x.expand(3, 2).unsqueeze(0)[0, 0].sin_(),
        lambda T, x: x.expand(0, 2).mul_(2),
        lambda T, x: T.broadcast_to(x, (2,)).mul_(2),
        lambda T, x: T.broadcast_to(x.reshape(2, 1), (2, 1)).triu_(),
        lambda T, x: T.broadcast_to(x.sum(), (2,)).view(-1)[:1].sin_(),
        # PyTorch's fill_, zero_, masked_fill_, index_fill_, index_put_, tril_, triu_ write
        # into repeated elements (the ones they change)
        lambda T, x: x.expand(3, 2).zero_(),
        lambda T, x: x.expand(3, 2).fill_(4.0),
        lambda T, x: x.expand(3, 2).masked_fill_(T.tensor([[True, False], [False, False], [False, False]]), 7.0),
        lambda T, x: x.expand(3, 2).index_fill_(1, T.tensor([1]), 7.0),
        lambda T, x: x.expand(3, 2).index_put_((T.tensor([1]),), T.tensor(7.0, dtype=x.dtype), accumulate=True),
        lambda T, x: x.expand(3, 2).tril_(),
        lambda T, x: x.expand(3, 2).triu_(1),
        lambda T, x: x.expand(3, 2).__setitem__(T.tensor([[True, False], [False, False], [False, True]]), 7.0),
        lambda T, x: x.expand(3, 2).__setitem__(0, T.tensor([5.0, 6.0])),
    ],
)  # fmt: skip
def test_writes_without_internal_overlap_or_allowed_go_through(write):
    def prog(T, x):
        write(T, x)
        return x

    assert_same(prog, X.copy())


@pytest.mark.parametrize(
    "write",
    [
        lambda T, x: x.expand(3, 2).mul_(2),
        lambda T, x: x[:1].expand(3).sin_(),
        lambda T, x: x.expand(3, 2).copy_(T.ones(3, 2)),
        lambda T, x: x.expand(3, 2).__setitem__(..., 1.0),
        lambda T, x: T.add(x, x, out=x.expand(3, 2)),
        # the overlap check comes before the cast, broadcast and kernel checks ...
        lambda T, x: x.ge(0).expand(3, 2).sin_(),
        lambda T, x: x.expand(3, 2).add_(T.ones(4, 2)),
        lambda T, x: x.ge(0).expand(3, 2).abs_(),
        lambda T, x: x.long().expand(3, 2).div_(0, rounding_mode="floor"),
        lambda T, x: x.expand(3, 2).mul_(T.ones(3, 2, dtype=T.complex64)),
        # ... and after the argument checks of sub and addcdiv
        lambda T, x: x.bool().expand(3, 2).sub_(True),
        lambda T, x: x.expand(3, 2).addcdiv_(T.ones(3, 2, dtype=T.long), T.ones(3, 2, dtype=T.long)),
    ],
)  # fmt: skip
def test_writes_into_repeated_elements_raise(write):
    assert_same_error(lambda T, x: write(T, x), X.copy())


def test_expand_strides_are_pytorchs():
    def prog(T, x):
        return [
            x.expand(3, 2).stride(),
            x.reshape(2, 1).expand(1, 2, 1).stride(),
            x[0].expand(2).stride(),
            x.reshape(2, 1).expand(2, 3).stride(),
        ]

    assert_same(prog, X.copy())


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


# ------------------------------------------------------------------ saved results
def _exp_then_write_through_expand(T, x):
    y = x.cos()
    y.exp_()  # saves its output: y at version 1
    T.broadcast_to(y, (2,)).view(-1)[:1].sin_()
    return y.sum()


def test_an_inplace_ops_saved_output_is_the_written_tensor():
    def prog(T, x):
        _exp_then_write_through_expand(T, x).backward()
        return x.grad

    assert_same_error(prog, np.array(-1.94).astype(np.float32))


@pytest.mark.parametrize("vmapped", [False, True])
def test_version_error_under_grad_names_the_node(vmapped):
    def prog(T, x):
        g = T.func.grad(lambda x: _exp_then_write_through_expand(T, x))
        return (T.func.vmap(g) if vmapped else g)(x)

    assert_same_error(prog, np.array([-1.94, 0.5] if vmapped else -1.94).astype(np.float32))


# ------------------------------------------------------------------ what ops save
@pytest.mark.parametrize(
    "make",
    [
        lambda T, x, b: T.logaddexp(x, b),  # saves its inputs, not its result
        lambda T, x, b: T.logaddexp2(x, b),
        lambda T, x, b: (x * 0.5).erfinv(),
        lambda T, x, b: T.var_mean(x, 0)[0],
    ],
)  # fmt: skip
def test_writing_an_output_the_node_does_not_save_is_fine(make):
    def prog(T, x, b):
        x.requires_grad_()
        b.requires_grad_()
        y = make(T, x, b)
        y.mul_(2)
        y.sum().backward()
        return x.grad

    assert_same(prog, arr(3, 2) * 0.5, arr(2, seed=1))


def test_an_int_division_of_nothing_by_zero_is_empty():
    assert_same(lambda T, x, b: T.remainder(x, b), np.zeros(0, bool), np.array(0))
    assert_same(lambda T, x, b: x // b, np.zeros((2, 0), np.int64), np.array(0))


def test_an_empty_tensors_repr_names_its_dtype():
    def prog(T):
        return [repr(T.zeros(0, dtype=d)) for d in (T.int64, T.bool, T.float64, T.float32)]

    assert_same(prog)


def test_backward_through_a_write_into_an_expanded_view_raises_pytorchs_overlap_error():
    """PyTorch copies the gradient into the written view's region (CopySlices): overlap."""

    def prog(T, x):
        x.requires_grad_()
        y = (x * 1).sigmoid()
        y.expand(2, 2).masked_fill_(y.expand(2, 2) > 0.6, 0.0)
        y.sum().backward()
        return x.grad

    assert_same_error(prog, np.array([0.3, 0.7]))


def test_version_error_under_grad_names_the_latest_writer():
    def prog(T, x):
        def f(x):
            y = x * 1
            z = y**2
            y.mul_(2)
            return z.sum()

        return T.func.grad(f)(x)

    assert_same_error(prog, np.array([0.3, 0.7]))
