"""A 0-d tensor given for a Number argument (``alpha=``, ``beta=``, ``value=``) against
torch: read as its value, in functions, methods and in-place forms, with gradients through
the tensor operands; a tensor with dims or one that requires grad is refused."""

from __future__ import annotations

import numpy as np
import pytest
from twolibs import arr, assert_same, assert_same_error, assert_same_outcome, grad_prog

CASES = {
    "add": lambda L, a, b, s: L.add(a, b, alpha=s),
    "sub": lambda L, a, b, s: L.sub(a, b, alpha=s),
    "add_": lambda L, a, b, s: a.clone().add_(b, alpha=s),
    "addcmul": lambda L, a, b, s: L.addcmul(a, a, b, value=s),
    "addcdiv_": lambda L, a, b, s: a.clone().addcdiv_(a, b.exp(), value=s),
    "addr": lambda L, a, b, s: L.addr(L.outer(a, b), a, b, alpha=s, beta=s),
    "addmm": lambda L, a, b, s: L.addmm(L.outer(a, b), L.outer(a, b), L.outer(b, a), alpha=s),
    "addmv_": lambda L, a, b, s: a.clone().addmv_(L.outer(a, b), b, beta=s),
}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("scalar", [-2.5, 3])
def test_zero_dim_tensor_as_number(name, scalar):
    def prog(L, a, b):
        return CASES[name](L, a, b, L.tensor(scalar))

    assert_same(prog, arr(3), arr(3, seed=1))


@pytest.mark.parametrize("name", ["add", "addr", "addcmul"])
def test_gradient_through_the_tensor_operands(name):
    def f(L, a):
        return CASES[name](L, a, a.cos(), L.tensor(-1.5)).sum()

    assert_same(grad_prog(f), arr(3))


@pytest.mark.parametrize("bad", ["dims", "requires_grad"])
def test_refused_tensors(bad):
    def prog(L, a):
        s = L.tensor([2.0]) if bad == "dims" else L.tensor(2.0, requires_grad=True)
        return L.add(a, a, alpha=s)

    assert_same_error(prog, arr(3))


_BOOLS = np.array([True, False, True, False]), np.array([True, True, False, False])


@pytest.mark.parametrize("alpha", [2, -1, 0, True, False, 0.5])
@pytest.mark.parametrize("form", ["add", "add_", "scalar"])
def test_alpha_of_a_bool_result(form, alpha):
    """A bool result reads an int alpha as a bool (True + True is True); a float one is
    refused as for any integral result."""

    def prog(L, a, b):
        if form == "scalar":
            return L.add(a, True, alpha=alpha)
        return a.clone().add_(b, alpha=alpha) if form == "add_" else L.add(a, b, alpha=alpha)

    assert_same_outcome(prog, *_BOOLS)


@pytest.mark.parametrize("alpha", [-2.5, 2, True])
@pytest.mark.parametrize("dtype", ["int64", "uint8", "float32"])
@pytest.mark.parametrize("tensor", [False, True])
def test_alpha_checked_against_the_result_dtype(dtype, alpha, tensor):
    """alpha's checks (no float for an integral result, no bool for a non-bool one) read a 0-d
    tensor alpha as its number."""

    def prog(L, a):
        s = L.tensor(alpha) if tensor else alpha
        return a.clone().add_(a, alpha=s), L.sub(a, a, alpha=s)

    assert_same_outcome(prog, np.arange(1, 4).astype(dtype))


@pytest.mark.parametrize("name", ["add", "sub", "add_", "addcmul", "addcdiv_"])
def test_a_batched_number_under_vmap_is_refused_as_an_item(name):
    """vmap over the tensor given for a number: PyTorch's parser calls .item() on it, which
    vmap refuses with its own text."""

    def prog(L, a, s):
        return L.func.vmap(lambda a, s: CASES[name](L, a, a, s))(a, s)

    assert_same_error(prog, arr(2, 3), arr(2, seed=1))
