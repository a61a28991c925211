"""Creation ops against PyTorch: the window functions (hann, hamming, blackman, bartlett,
kaiser) at every small length, both periodicities and the float dtypes, and their errors."""

import pytest
import torch
from twolibs import assert_same, assert_same_error, to_torch

import numtorch as nt

WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]
TOL = {"float32": 1e-6, "float64": 1e-12, "float16": 2e-3}


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("length", [0, 1, 2, 3, 4, 7, 64])
def test_window_values(name, dtype, periodic, length):
    def prog(L):
        return getattr(L, name)(length, periodic, dtype=getattr(L, dtype))

    assert_same(prog, rtol=0, atol=TOL[dtype])


@pytest.mark.parametrize("name", WINDOWS)
def test_window_default_dtype_and_grad(name):
    def prog(L):
        w = getattr(L, name)(6, requires_grad=True)
        (w * w).sum().backward()
        return w.dtype is L.float32, w.requires_grad, w.is_leaf, w.grad

    assert_same(prog, rtol=1e-6, atol=1e-6)


def test_window_follows_default_dtype():
    def prog(L):
        old = L.get_default_dtype()
        L.set_default_dtype(L.float64)
        try:
            return L.hann_window(5)
        finally:
            L.set_default_dtype(old)

    assert_same(prog)


@pytest.mark.parametrize(
    "call",
    [
        lambda L: L.hamming_window(7, False, 0.5, 0.3),
        lambda L: L.hamming_window(7, True, 0.6),
        lambda L: L.hamming_window(1, False, 0.1, 0.9),
        lambda L: L.kaiser_window(7, False, 3.0),
        lambda L: L.kaiser_window(8, True, 0.0),
        lambda L: L.kaiser_window(9, False, 40.0, dtype=L.float64),
        lambda L: L.hann_window(L.tensor(5)),
        lambda L: L.bartlett_window(5, periodic=False),
    ],
)
def test_window_parameters(call):
    assert_same(call, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize(
    "call",
    [
        lambda f, L: f(-1),
        lambda f, L: f(-5, False),
        lambda f, L: f(5, dtype=L.int64),
        lambda f, L: f(5, dtype=L.int32, requires_grad=True),
        lambda f, L: f(5, dtype=L.bool),
        lambda f, L: f(5, dtype=L.complex64),
        lambda f, L: f(5.0),
    ],
)
def test_window_errors(name, call):
    assert_same_error(lambda L: call(getattr(L, name), L))


def test_window_result_is_fresh_and_writable():
    w = nt.hann_window(4)
    w.add_(1)
    assert to_torch(w.numpy()).tolist() == (torch.hann_window(4) + 1).tolist()
