"""unique and unique_consecutive against PyTorch: values over dtypes, dims and flags, empty
inputs, errors, and what autograd, forward mode and vmap do with them."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.functional
from twolibs import assert_same, assert_same_error

import numtorch as nt

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
FLAGS = [
    {},
    {"return_inverse": True},
    {"return_counts": True},
    {"return_inverse": True, "return_counts": True},
]


def _data(shape, dtype, seed=0):
    a = np.random.default_rng(seed).integers(0, 3, size=shape)
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: "-".join(f) or "plain")
def test_unique_flattened(dtype, flags):
    x = _data((3, 5), dtype)
    assert_same(lambda T, a: T.unique(a, **flags), x)
    assert_same(lambda T, a: T.unique(a, sorted=False, **flags), x)
    assert_same(lambda T, a: T.unique_consecutive(a, **flags), x)
    assert_same(lambda T, a: a.unique(**flags), x)
    assert_same(lambda T, a: a.unique_consecutive(**flags), x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1, 2])
def test_unique_along_a_dim(dtype, dim):
    rows = _data((2, 4), dtype)
    x = np.stack([rows[[0, 1, 0, 0]], rows[[1, 1, 0, 1]], rows[[0, 1, 0, 0]]])  # (3, 4, 4)
    kw = {"return_inverse": True, "return_counts": True, "dim": dim}
    assert_same(lambda T, a: T.unique(a, **kw), x)
    assert_same(lambda T, a: T.unique(a, sorted=False, **kw), x)
    assert_same(lambda T, a: T.unique_consecutive(a, **kw), x)
    assert_same(lambda T, a: a.unique(dim=dim), x)
    assert_same(lambda T, a: a.unique_consecutive(dim=dim), x)


def test_positional_arguments_and_plain_tuples():
    x = np.array([3, 1, 1, 2, 2, 2])
    ours = assert_same(lambda T, a: T.unique(a, True, True, True), x)
    assert type(ours) is tuple and len(ours) == 3
    assert_same(lambda T, a: T.unique(a, False, True, False, 0), x)
    assert_same(lambda T, a: T.unique_consecutive(a, True, True, 0), x)
    assert_same(lambda T, a: a.unique(True, False, True), x)
    assert_same(lambda T, a: a.unique_consecutive(True, True, None), x)
    assert_same(lambda T, a: T.unique(a, dim=T.tensor(0)), x)


def test_signatures_are_pytorchs():
    def params(fn):
        return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]

    assert params(nt.unique) == params(torch.functional._unique_impl)
    assert params(nt.unique_consecutive) == params(torch.functional._unique_consecutive_impl)
    assert params(nt.Tensor.unique)[1:] == params(torch.Tensor.unique)[1:]
    assert params(nt.Tensor.unique_consecutive)[1:] == params(torch.Tensor.unique_consecutive)[1:]


def test_nan_and_signed_zero():
    x = np.array([3.0, np.nan, 1.0, np.nan, 3.0, -0.0, 0.0, np.nan, np.nan])
    kw = {"return_inverse": True, "return_counts": True}
    assert_same(lambda T, a: T.unique(a, **kw), x)
    assert_same(lambda T, a: T.unique_consecutive(a, **kw), x)
    assert_same(lambda T, a: T.unique(a), np.array([0.0, -0.0, 0.0]))
    assert_same(lambda T, a: T.unique(a), np.array([-0.0, 0.0]))
    rows = np.array([[1.0, np.nan], [1.0, np.nan], [0.0, 2.0]])
    assert_same(lambda T, a: T.unique(a, dim=0, **kw), rows)
    assert_same(lambda T, a: T.unique_consecutive(a, dim=0, **kw), rows)


@pytest.mark.parametrize(
    "shape,dim", [((), None), ((0,), None), ((0, 3), None), ((0, 3), 0), ((2, 0), 1), ((1,), 0)]
)
def test_scalars_and_empty_inputs(shape, dim):
    x = _data(shape, "float32")
    kw = {"return_inverse": True, "return_counts": True, "dim": dim}
    assert_same(lambda T, a: T.unique(a, **kw), x)
    assert_same(lambda T, a: T.unique_consecutive(a, **kw), x)


@pytest.mark.parametrize(
    "prog",
    [
        lambda T, a: T.unique(a, dim=2),
        lambda T, a: T.unique(a, dim=-3),
        lambda T, a: T.unique_consecutive(a, dim=2),
        lambda T, a: T.unique(a[0, 0], dim=0),
        lambda T, a: T.unique_consecutive(a[0, 0], dim=0),
        lambda T, a: T.unique(a[:0], dim=1),
        lambda T, a: T.unique(a[:, :0], dim=0),
        lambda T, a: T.unique_consecutive(a[:0], dim=1),
        lambda T, a: T.unique(a.to(T.complex64)),
        lambda T, a: T.unique_consecutive(a.to(T.complex64)),
        lambda T, a: T.unique(a.to(T.complex64), dim=0),
        lambda T, a: T.unique_consecutive(a.to(T.complex128), dim=1),
        lambda T, a: T.unique(a, dim=1.5),
        lambda T, a: T.unique(a, dim=True),
        lambda T, a: T.unique_consecutive(a, dim=1.5),
        lambda T, a: a.unique(dim=0.0),
        lambda T, a: T.unique([1, 2]),
        lambda T, a: T.unique([1, 2], dim=0),
        lambda T, a: T.unique_consecutive([1, 2]),
    ],
)
def test_errors_are_pytorchs(prog):
    assert_same_error(prog, _data((2, 3), "float32"))


@pytest.mark.parametrize(
    "call,aten,node",
    [
        (
            lambda T, a: T.unique(a, return_inverse=True, return_counts=True),
            "_unique2",
            "Unique2Backward0",
        ),
        (
            lambda T, a: T.unique(a, dim=0, return_inverse=True, return_counts=True),
            "unique_dim",
            "UniqueDimBackward0",
        ),
        (
            lambda T, a: T.unique_consecutive(a, return_inverse=True, return_counts=True),
            "unique_consecutive",
            "UniqueConsecutiveBackward0",
        ),
        (
            lambda T, a: T.unique_consecutive(a, dim=1, return_inverse=True, return_counts=True),
            "unique_consecutive",
            "UniqueConsecutiveBackward0",
        ),
    ],
)
def test_autograd_records_a_node_whose_backward_raises(call, aten, node):
    """As in PyTorch: the values require grad (the inverse and counts do not), and the
    error comes when the backward pass reaches the node, not before."""
    x = np.array([[3.0, 1.0, 3.0], [3.0, 1.0, 3.0]])
    for T in (nt, torch):
        a = T.tensor(x, requires_grad=True)
        values, inverse, counts = call(T, a)
        assert values.requires_grad and not inverse.requires_grad and not counts.requires_grad
        assert type(values.grad_fn).__name__ == node or values.grad_fn.name() == node
        loss = (values * 2).sum()  # recording past the node is fine
        with pytest.raises(NotImplementedError) as e:
            loss.backward()
        assert str(e.value) == f"the derivative for '{aten}' is not implemented."
        assert a.grad is None
        with T.no_grad():
            assert not call(T, a)[0].requires_grad
        out = call(T, a)[0].sum() * 0 + a.sum()  # a zero factor still reaches the node
        with pytest.raises(NotImplementedError):
            out.backward()
        b = T.tensor(x, requires_grad=True)  # detached input: no node, the rest runs
        n = call(T, b.detach())[0].numel()
        (b.sum() * n).backward()
        np.testing.assert_array_equal(b.grad.numpy(), np.full(x.shape, float(n)))


def test_integer_inputs_have_no_graph():
    a = nt.tensor([3, 1, 3])
    assert not nt.unique(a).requires_grad and nt.unique(a).grad_fn is None


@pytest.mark.parametrize(
    "f",
    [
        lambda T, a: T.unique(a),
        lambda T, a: T.unique(a, dim=0),
        lambda T, a: T.unique_consecutive(a),
        lambda T, a: T.unique_consecutive(a, dim=1),
    ],
)
def test_the_transforms_raise_pytorchs_errors(f):
    x = np.array([[3.0, 1.0, 3.0], [3.0, 1.0, 3.0]])

    def run(T, transform):
        a = T.tensor(x)
        if transform == "vmap":
            return T.func.vmap(lambda v: f(T, v))(a)
        if transform == "grad":
            return T.func.grad(lambda v: f(T, v).sum())(a)
        if transform == "jvp":
            return T.func.jvp(lambda v: f(T, v), (a,), (T.ones_like(a),))
        return T.func.vjp(lambda v: f(T, v), a)[0]  # the forward alone is fine

    for transform in ("vmap", "grad", "jvp"):
        assert_same_error(lambda T: run(T, transform))
    assert_same(lambda T: run(T, "vjp"))


def test_vmap_error_text():
    with pytest.raises(RuntimeError) as e:
        nt.vmap(nt.unique)(nt.zeros(2, 3))
    assert str(e.value) == (
        "vmap: We do not support batching operators that can output dynamic shape. Attempted "
        "to vmap over aten::_unique2. Please file an issue at "
        "https://github.com/pytorch/pytorch/issues if you need this feature."
    )
