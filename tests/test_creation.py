"""Creation ops against PyTorch: the window functions (hann, hamming, blackman, bartlett,
kaiser) at every small length, both periodicities and the float dtypes, and their errors."""

import array

import numpy as np
import pytest
import torch
from twolibs import assert_same, assert_same_error, assert_same_outcome, grad_prog, run, to_torch

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


# ------------------------------------------------------------------ grids and index factories
def _warnings_of(prog, lib, *args):
    import warnings

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        run(prog, lib, *args)
    return [(x.category, str(x.message).split(" (Triggered internally")[0]) for x in w]


def test_meshgrid_indexing_and_warning():
    a, b, c = np.array([1, 2]), np.array([3, 4, 5]), np.array([6.0])
    assert_same(lambda L, a, b: L.meshgrid(a, b, indexing="xy"), a, b)
    assert_same(lambda L, a, b: L.meshgrid([a, b], indexing="ij"), a, b)
    assert_same(lambda L, a, b: [t.stride() for t in L.meshgrid((a, b, b), indexing="xy")], a, b)
    assert_same(lambda L, c: L.meshgrid(c, indexing="xy"), c)
    prog = lambda L, a, b: L.meshgrid(a, b)  # noqa: E731
    assert _warnings_of(prog, nt, a, b) == _warnings_of(prog, torch, a, b)
    assert_same(prog, a, b)
    assert_same_error(lambda L, a, c: L.meshgrid(a, c, indexing="ij"), a, c)
    assert_same_error(lambda L, a: L.meshgrid(a, a, indexing="yx"), a)
    assert_same_error(lambda L: L.meshgrid(indexing="ij"))
    x = np.array([1.0, 2.0])

    def grads(L, x):
        x.requires_grad_(True)
        g0, g1 = L.meshgrid(x, x * 2, indexing="xy")
        return L.autograd.grad((g0 * g1.square()).sum(), x)

    assert_same(grads, x)


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
def test_triangle_indices(name):
    for row, col in [(0, 0), (1, 1), (3, 4), (4, 3), (5, 5)]:
        for offset in (-6, -2, -1, 0, 1, 3, 10):
            assert_same(lambda L: getattr(L, name)(row, col, offset))
    assert_same(lambda L: getattr(L, name)(3, 4, dtype=L.int32))
    assert_same_error(lambda L: getattr(L, name)(3, 4, offset=1, dtype=L.int16))
    assert_same_error(lambda L: getattr(L, name)(-1, 4))
    assert_same_error(lambda L: getattr(L, name)(3, -1))
    assert_same_error(lambda L: getattr(L, name)(3, 4, dtype=L.float32))
    assert_same_error(lambda L: getattr(L, name)(3, 4, dtype=L.bool))
    assert_same_error(lambda L: getattr(L, name)(3.0, 4))


def test_vander_values_and_gradient():
    x = np.array([2.0, 0.0, -1.5, 3.0])
    for n in (None, 0, 1, 2, 5):
        for inc in (False, True):
            assert_same(lambda L, x: L.vander(x, n, inc), x)
    assert_same(lambda L, x: L.vander(x), np.array([2, -3, 0]))
    assert_same(lambda L, x: L.vander(x, 3), np.array([True, False]))
    assert_same(lambda L, x: L.vander(x, 3), np.array([1j, 2 - 1j]))
    assert_same_error(grad_prog(lambda L, x: L.vander(x, 1).sum()), x)  # ones: no grad_fn
    # from N = 2 on PyTorch's backward raises (its cumprod's saved input is overwritten);
    # ours is the analytic gradient
    for n, dx in ((2, np.ones_like(x)), (4, 1 + 2 * x + 3 * x * x)):
        g = nt.tensor(x, requires_grad=True)
        nt.vander(g, n).sum().backward()
        np.testing.assert_allclose(g.grad.numpy(), dx, rtol=1e-12)
    assert_same_error(lambda L, x: L.vander(x.reshape(2, 2)), x)
    assert_same_error(lambda L, x: L.vander(x, -1), x)


def test_unravel_index():
    idx = np.array([[0, 5, 23], [7, -1, 30]])
    assert_same(lambda L, i: L.unravel_index(i, (2, 3, 4)), idx)
    assert_same(lambda L, i: L.unravel_index(i, 6), idx)
    assert_same(lambda L, i: L.unravel_index(i, [4, 6]), idx.astype(np.int32))
    assert_same(lambda L, i: L.unravel_index(i, ()), idx)
    assert_same(lambda L, i: L.unravel_index(i[0, 1], (2, 3)), idx)
    assert_same_error(lambda L, i: L.unravel_index(i, (2, 3)), idx.astype(np.float32))
    assert_same_error(lambda L, i: L.unravel_index(i, (2, 3)), idx.astype(bool))
    assert_same_error(lambda L, i: L.unravel_index(i, (2, -3)), idx)


# ------------------------------------------------------------------ range, scalar_tensor, ...
def test_range_is_inclusive_and_deprecated():
    for args in [(1, 4), (1, 4, 0.5), (0, 1, 0.3), (4, 1, -1), (1.5, 4), (0, 0), (-2, 3, 2)]:
        assert_same(lambda L: L.range(*args))
    assert_same(lambda L: L.range(1, 4, dtype=L.int64))
    assert_same(lambda L: L.range(1, 4, dtype=L.float64))
    assert _warnings_of(lambda L: L.range(1, 4), nt) == _warnings_of(lambda L: L.range(1, 4), torch)
    assert_same_error(lambda L: L.range(4, 1))
    assert_same_error(lambda L: L.range(1, 4, 0))


def test_scalar_tensor_and_result_type():
    for s in (2, 2.5, True, -0.0):
        assert_same(lambda L: L.scalar_tensor(s))
        assert_same(lambda L: L.scalar_tensor(s, dtype=L.float64))
    assert_same(lambda L: L.scalar_tensor(3, dtype=L.int64))
    assert_same(lambda L: L.scalar_tensor(2.0, requires_grad=True).requires_grad)
    assert_same_error(lambda L: L.scalar_tensor(1j))
    i, f, h = np.array([1]), np.array([1.0], dtype=np.float32), np.array([1], dtype=np.float16)
    cases = [
        lambda L, i, f, h: L.result_type(i, 2.0),
        lambda L, i, f, h: L.result_type(2, h),
        lambda L, i, f, h: L.result_type(2, 3.0),
        lambda L, i, f, h: L.result_type(2, True),
        lambda L, i, f, h: L.result_type(i, f),
        lambda L, i, f, h: L.result_type(f[0].double(), i),
        lambda L, i, f, h: L.result_type(f, 1j),
        lambda L, i, f, h: L.result_type(i.bool(), i.to(L.uint8)),
    ]
    for prog in cases:
        assert run(prog, nt, i, f, h).__repr__() == run(prog, torch, i, f, h).__repr__()


def test_asarray_shares_or_copies():
    def shares(L, copy):
        a = np.array([1.0, 2.0])
        t = L.asarray(a, copy=copy)
        t[0] = 5
        return a[0], t

    for copy in (None, True, False):
        assert_same(lambda L: shares(L, copy))
    for obj in ([1, 2.5], [[1, 2], [3, 4]], 3, 3.5, True, np.float32(2.0)):
        assert_same(lambda L: L.asarray(obj))
        assert_same(lambda L: L.asarray(obj, dtype=L.float64))
    assert_same_error(lambda L: L.asarray([1, 2], copy=False))
    x = np.array([1.0, 2.0], dtype=np.float32)
    assert_same(lambda L, x: L.asarray(x) is x, x)
    assert_same(lambda L, x: L.asarray(x, dtype=L.float64), x)
    assert_same_error(lambda L, x: L.asarray(x, dtype=L.float64, copy=False), x)
    assert_same(lambda L, x: (L.asarray(x, copy=True) is x, L.asarray(x, copy=True)), x)
    assert_same(lambda L: L.asarray([1.0, 2.0], requires_grad=True).requires_grad)


def test_frombuffer():
    def prog(L, **kw):
        b = bytearray(b"\x01\x00\x00\x00\x02\x00\x00\x00")
        t = L.frombuffer(b, **kw)
        t[0] = 9
        return t, bytes(b)

    assert_same(lambda L: prog(L, dtype=L.int32))
    assert_same(lambda L: prog(L, dtype=L.int32, count=1, offset=4))
    assert_same(lambda L: prog(L, dtype=L.uint8, offset=3))
    assert_same(lambda L: prog(L, dtype=L.int16, count=2))
    assert_same(lambda L: L.frombuffer(array.array("f", [1.0, 2.0]), dtype=L.float32))
    for kw in ({"count": 3}, {"offset": 1, "dtype": "int64"}, {"offset": 9}, {"count": 0}):
        kw = dict(kw)
        name = kw.pop("dtype", "int32")
        assert_same_error(lambda L: prog(L, dtype=getattr(L, name), **kw))
    assert_same_error(lambda L: L.frombuffer(b"", dtype=L.int32))


def test_meshgrid_and_vander_complex():
    z = np.array([1 + 2j, -0.5 + 1j, 3 - 1j])

    def grads(L, z):
        z.requires_grad_(True)
        a, b = L.meshgrid(z, z * 2, indexing="xy")
        return a, b, L.autograd.grad((a * b.conj()).abs().sum(), z)

    assert_same(grads, z)
    assert_same(lambda L, z: (L.vander(z), L.vander(z, 2, True)), z)


# ------------------------------------------------------------------ integer overflow
# A Python int is PyTorch's Scalar first (int64, or uint64: beyond, its OverflowError);
# fill values, clamp bounds and alpha are converted with an overflow check (RuntimeError
# naming the C++ type; unsigned types take negatives down to -max, wrapped), arithmetic
# and comparison operands wrap into the tensor's dtype.
OVERFLOW_CALLS = {
    "fill_": lambda T, d, v: T.zeros(3, dtype=d).fill_(v),
    "full": lambda T, d, v: T.full((2,), v, dtype=d),
    "full_like": lambda T, d, v: T.full_like(T.zeros(2, dtype=d), v),
    "new_full": lambda T, d, v: T.zeros(2, dtype=d).new_full((2,), v),
    "masked_fill": lambda T, d, v: T.zeros(2, dtype=d).masked_fill(T.tensor([True, False]), v),
    "index_fill": lambda T, d, v: T.zeros(2, dtype=d).index_fill(0, T.tensor([0]), v),
    "clamp_min": lambda T, d, v: T.zeros(2, dtype=d).clamp(min=v),
    "clamp_max": lambda T, d, v: T.zeros(2, dtype=d).clamp(max=v),
    "tensor": lambda T, d, v: T.tensor([v, 1], dtype=d),
    "add_alpha": lambda T, d, v: T.add(T.ones(2, dtype=d), T.ones(2, dtype=d), alpha=v),
    "sub_alpha": lambda T, d, v: T.sub(T.ones(2, dtype=d), T.ones(2, dtype=d), alpha=v),
    "rsub_alpha": lambda T, d, v: T.rsub(T.ones(2, dtype=d), T.ones(2, dtype=d), alpha=v),
    "plus": lambda T, d, v: T.ones(2, dtype=d) + v,
    "times": lambda T, d, v: T.ones(2, dtype=d) * v,
    "add_": lambda T, d, v: T.ones(2, dtype=d).add_(v),
    "lt": lambda T, d, v: T.ones(2, dtype=d) < v,
    "eq": lambda T, d, v: T.zeros(2, dtype=d) == v,
}
OVERFLOW_VALUES = [1000, -1, -255, -256, 100000, 2**31, 2**63, -(2**63) - 1, 2**64]


@pytest.mark.parametrize("value", OVERFLOW_VALUES)
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
@pytest.mark.parametrize("call", list(OVERFLOW_CALLS.values()), ids=list(OVERFLOW_CALLS))
def test_integer_overflow_of_python_ints(call, dtype, value):
    assert_same_outcome(lambda lib, v: call(lib, getattr(lib, dtype), v), value)


@pytest.mark.parametrize("value", [1000, -1, -(2**63) - 1, 2**64])
@pytest.mark.parametrize("call", ["fill_", "full", "full_like", "tensor", "lt"])
def test_integer_overflow_into_bool(call, value):
    assert_same_outcome(lambda lib, v: OVERFLOW_CALLS[call](lib, lib.bool, v), value)


# Every factory and Tensor.new_* method takes its arguments by PyTorch's keyword names.
@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.zeros(size=(2, 3)),
        lambda T: T.ones(size=[2, 3], dtype=T.float64),
        lambda T: T.empty(size=(2, 3)).shape,
        lambda T: T.full(size=(2, 3), fill_value=1.5),
        lambda T: T.ones(2).new_zeros(size=(2, 3)),
        lambda T: T.ones(2).new_ones(size=(2, 3)),
        lambda T: T.ones(2).new_empty(size=(2, 3)).shape,
        lambda T: T.ones(2).new_full(size=(2, 3), fill_value=2),
        lambda T: T.arange(end=3),
        lambda T: T.arange(start=1, end=7, step=2),
        lambda T: T.zeros(2, size=(2,)),
        lambda T: T.ones(2).new_zeros(2, size=(2,)),
        lambda T: T.zeros(),
        lambda T: T.ones(2).new_ones(),
        lambda T: T.zeros(size=2),
        lambda T: T.arange(),
    ],
)
def test_factory_keywords(call):
    assert_same_outcome(call)
