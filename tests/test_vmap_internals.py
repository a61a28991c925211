"""torch._vmap_internals (PyTorch's first vmap, which pytorch-minimize imports) against
torch: results, in_dims/out_dims, None outputs let through, autograd.grad with batched
grad_outputs inside it, and the errors' texts."""

from __future__ import annotations

import warnings

import pytest
import torch
from twolibs import arr, assert_same, assert_same_error

import numtorch as nt


def test_maps_over_the_first_dim():
    assert_same(lambda L, x: L._vmap_internals._vmap(lambda r: r.sin() * r.sum())(x), arr(4, 3))


def test_in_dims_and_out_dims():
    def prog(L, x, y):
        return L._vmap_internals._vmap(lambda a, b: (a * b, a + 1), (1, None), (0, 1))(x, y)

    assert_same(prog, arr(3, 4), arr(3, seed=1))


def test_none_outputs_pass_through_when_allowed():
    def prog(L, x):
        return L._vmap_internals._vmap(lambda a: (a * 2, None), allow_none_pass_through=True)(x)

    assert_same(prog, arr(2, 3))


def test_autograd_grad_with_batched_grad_outputs():
    # pytorch-minimize's Hessian: one vector-Hessian product per row of the identity
    def prog(L, x):
        x = x.detach().requires_grad_(True)
        g = L.autograd.grad((x**3).sum() * x.sum(), x, create_graph=True)[0]
        eye = L.eye(x.numel(), dtype=x.dtype)
        hvp = lambda v: L.autograd.grad(g, x, v, retain_graph=True)[0]  # noqa: E731
        return L._vmap_internals._vmap(hvp)(eye)

    assert_same(prog, arr(4))


@pytest.mark.parametrize("result", ["list", "none", "number in tuple"])
def test_outputs_must_be_tensors(result):
    def prog(L, x):
        def f(a):
            return {"list": [a], "none": None, "number in tuple": (a, 1)}[result]

        return L._vmap_internals._vmap(f)(x)

    assert_same_error(prog, arr(2))


def test_out_dims_must_be_ints():
    assert_same_error(lambda L, x: L._vmap_internals._vmap(L.sin, out_dims="0")(x), arr(2))


@pytest.mark.parametrize("lib", [nt, torch], ids=["numtorch", "torch"])
def test_public_vmap_is_deprecated(lib):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f = lib._vmap_internals.vmap(lib.cos)
    assert [(x.category, str(x.message)) for x in w] == [
        (FutureWarning, "Please use `torch.vmap` instead of `torch._vmap_internals.vmap`.")
    ]
    assert f(lib.zeros(2, 1)).tolist() == [[1.0], [1.0]]
