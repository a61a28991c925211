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


# ------------------------------------------------------------------ torch.signal.windows
SIGNAL_WINDOWS = {
    "bartlett": {},
    "blackman": {},
    "cosine": {},
    "exponential": {"tau": 2.5},
    "gaussian": {"std": 0.7},
    "general_cosine": {"a": [0.46, 0.23, 0.31]},
    "general_hamming": {"alpha": 0.6},
    "hamming": {},
    "hann": {},
    "kaiser": {"beta": 5.0},
    "nuttall": {},
}


@pytest.mark.parametrize("name", list(SIGNAL_WINDOWS))
@pytest.mark.parametrize("sym", [True, False])
def test_signal_windows_match_torch(name, sym):
    kw = SIGNAL_WINDOWS[name]
    for m in (0, 1, 2, 5, 8):

        def prog(L):
            fn = getattr(L.signal.windows, name)
            return fn(m, sym=sym, dtype=L.float64, **kw), fn(m, sym=sym, **kw)

        assert_same(prog, rtol=1e-6, atol=1e-7)
    w = getattr(nt.signal.windows, name)(4, sym=sym, requires_grad=True, **kw)
    assert w.requires_grad and w.is_leaf and w.dtype == nt.float32


@pytest.mark.parametrize(
    "prog",
    [
        lambda L: L.signal.windows.hann(-1),
        lambda L: L.signal.windows.bartlett(-1),
        lambda L: L.signal.windows.kaiser(5, dtype=L.int64),
        lambda L: L.signal.windows.cosine(5, dtype=L.float16),
        lambda L: L.signal.windows.gaussian(5, std=0),
        lambda L: L.signal.windows.exponential(5, tau=0),
        lambda L: L.signal.windows.exponential(5, center=1.0),
        lambda L: L.signal.windows.kaiser(5, beta=-1),
        lambda L: L.signal.windows.general_cosine(5, a=3),
        lambda L: L.signal.windows.general_cosine(5, a=[]),
    ],
)
def test_signal_window_errors_match_torch(prog):
    assert_same_error(prog)


def test_exponential_center_of_a_periodic_window():
    assert_same(
        lambda L: L.signal.windows.exponential(6, sym=False, center=2.0, tau=1.5), rtol=1e-6
    )
