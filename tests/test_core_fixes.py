"""Core behaviour found wrong by the nn.functional work (issue 10 follow-ups), each against
torch: broadcasting errors, integer softmax, bool abs, silent IEEE results, index_add and
scatter_add accumulation, detach under the tracing interpreter."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from twolibs import arr, assert_close, assert_same, assert_same_error, run, run_both

import numtorch as nt


# ------------------------------------------------------------------ broadcasting errors
@pytest.mark.parametrize(
    "prog",
    [
        lambda lib, a, b: a + b,
        lambda lib, a, b: a * b.unsqueeze(0),
        lambda lib, a, b: lib.where(a > 0, b, 0.0),
        lambda lib, a, b: lib.lerp(a, b, 0.5),
        lambda lib, a, b: lib.addcmul(a, b, a),
        lambda lib, a, b: b.eq(a),
        lambda lib, a, b: a.add_(b),  # fails before a is written
    ],
    ids=["add", "mul-3d", "where", "lerp", "addcmul", "eq", "add_"],
)
def test_shapes_that_do_not_broadcast_raise_torchs_error(prog):
    assert_same_error(prog, arr(2, 3), arr(4))


@pytest.mark.parametrize("sa, sb", [((2, 3, 5), (4, 1)), ((5, 2, 3), (2, 4)), ((2, 0), (3,))])
def test_broadcast_error_names_the_rightmost_mismatch(sa, sb):
    assert_same_error(lambda lib, a, b: a - b, arr(*sa), arr(*sb))


def test_inplace_into_a_smaller_shape_raises_torchs_error():
    assert_same_error(lambda lib, a, b: a.add_(b), arr(2, 3), arr(5, 2, 3))


# ------------------------------------------------------------------ softmax on integers
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape, dim", [((2, 3), 1), ((2, 3), -1), ((2, 3), 0), ((), 0)])
def test_softmax_of_an_integer_tensor_raises(fn, shape, dim):
    ints = np.arange(int(np.prod(shape))).reshape(shape)
    assert_same_error(lambda lib, x: getattr(lib, fn)(x, dim), ints)
    assert_same_error(lambda lib, x: getattr(lib.nn.functional, fn)(x, dim), ints)


def test_softmax_of_an_integer_tensor_with_a_float_dtype():
    ints = np.arange(6).reshape(2, 3)
    assert_same(lambda lib, x: lib.softmax(x, 0, dtype=lib.float64), ints)
    assert_same_error(lambda lib, x: lib.softmax(x, 0, dtype=lib.int64), arr(2, 3))


# ------------------------------------------------------------------ rounding and abs on bool
@pytest.mark.parametrize(
    "prog",
    [
        lambda lib, x: x.abs(),
        lambda lib, x: lib.absolute(x),
        lambda lib, x: x.floor(),
        lambda lib, x: x.round(),
        lambda lib, x: x.frac(),
    ],
    ids=["abs", "absolute", "floor", "round", "frac"],
)
def test_bool_kernels_that_do_not_exist_raise_not_implemented(prog):
    assert_same_error(prog, np.array([True, False]))


# ------------------------------------------------------------------ silent IEEE results
SPECIAL = np.array([0.0, -1.0, 1.0, 0.5, 1000.0, -1000.0])


@pytest.mark.parametrize(
    "prog",
    [
        lambda lib, x: x / 0,
        lambda lib, x: x / x,
        lambda lib, x: lib.floor_divide(x, lib.zeros_like(x)),
        lambda lib, x: lib.remainder(x, 0.0),
        lambda lib, x: lib.fmod(x, 0.0),
        lambda lib, x: x.reciprocal(),
        lambda lib, x: x.rsqrt(),
        lambda lib, x: (x.log(), x.log2(), x.log10(), (x - 1).log1p()),
        lambda lib, x: x.sqrt(),
        lambda lib, x: (x.exp(), x.exp2(), x.expm1(), x.sinh(), x.cosh()),
        lambda lib, x: ((x * 2).asin(), (x * 2).acos(), x.acosh(), x.atanh()),
        lambda lib, x: x.logit(),
        lambda lib, x: (x.pow(-1), x.pow(0.5)),
        lambda lib, x: lib.xlogy(x, x - 1),
        lambda lib, x: lib.addcdiv(x, x, x * 0),
        lambda lib, x: lib.softmax(lib.full((2, 3), -float("inf")), 1),
    ],
)
def test_ieee_results_are_silent_whatever_numpys_error_state(prog):
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        ours = run(prog, nt, SPECIAL)
    assert_close(ours, run(prog, torch, SPECIAL), rtol=1e-12, atol=0)


# ------------------------------------------------------------------ index_add / scatter_add
ACC_DTYPES = ["float32", "float64", "int64", "complex128", "bool"]


def _data(dtype, *shape, seed=0):
    x = arr(*shape, seed=seed) * 3
    if dtype == "complex128":
        return x + 1j * arr(*shape, seed=seed + 1)
    if dtype == "bool":
        return x > 0
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", ACC_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1, 2])
def test_index_add_accumulates_duplicates(dtype, dim):
    x, src = _data(dtype, 4, 5, 3), _data(dtype, 4, 5, 3, seed=2)
    size = x.shape[dim]
    index = np.array([1, 0, 1, size - 1, 1, 0, size - 1])
    src_shape = list(x.shape)
    src_shape[dim] = index.size
    src = np.resize(src, src_shape)
    alpha = True if dtype == "bool" else 2
    tol = 1e-6 if dtype == "float32" else 1e-12
    assert_same(lambda lib, x, i, s: x.index_add(dim, i, s), x, index, src, rtol=tol)
    assert_same(lambda lib, x, i, s: x.index_add(dim, i, s, alpha=alpha), x, index, src, rtol=tol)
    assert_same(lambda lib, x, i, s: x.clone().index_add_(dim, i, s), x, index, src, rtol=tol)


def test_index_add_edge_shapes():
    assert_same(lambda lib, x, i, s: x.index_add(0, i, s), arr(3, 0), np.array([0, 0]), arr(2, 0))
    assert_same(lambda lib, x, i, s: x.index_add(0, i, s), arr(3, 2), np.zeros(0, int), arr(0, 2))
    assert_same(lambda lib, x, i, s: x.index_add(0, i, s), arr(5), np.array([4, 4]), arr(2))
    assert_same(lambda lib, x, i, s: x.index_add(0, i, s), arr(), np.array([0]), arr())


@pytest.mark.parametrize("dtype", ACC_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter_add_accumulates_duplicates(dtype, dim):
    x, src = _data(dtype, 3, 4, 2), _data(dtype, 5, 5, 5, seed=3)
    ishape = [2, 3, 2]
    ishape[dim] = 5
    index = np.random.default_rng(1).integers(0, x.shape[dim], ishape)
    tol = 1e-6 if dtype == "float32" else 1e-12
    assert_same(lambda lib, x, i, s: x.scatter_add(dim, i, s), x, index, src, rtol=tol)
    assert_same(lambda lib, x, i, s: lib.scatter_add(x, dim, i, s), x, index, src, rtol=tol)
    if dtype in ("float32", "float64"):
        for reduce in ("sum", "prod", "mean", "amax"):
            assert_same(
                lambda lib, x, i, s: x.scatter_reduce(dim, i, s, reduce),
                x, index, src, rtol=tol,
            )  # fmt: skip


@pytest.mark.parametrize("dtype", ACC_DTYPES)
def test_index_put_accumulate_rows(dtype):
    x = _data(dtype, 4, 4)
    idx = np.array([[1, -1], [1, 0], [-4, 3]])
    vals = _data(dtype, 3, 2, 4, seed=4)
    tol = 1e-6 if dtype == "float32" else 1e-12
    put = lambda lib, x, i, v: x.index_put((i,), v, accumulate=True)  # noqa: E731
    assert_same(put, x, idx, vals, rtol=tol)
    assert_same(put, x, idx, vals[0, 0], rtol=tol)  # one row broadcast to every index
    assert_same(put, x, np.zeros(0, int), vals[0, :0], rtol=tol)
    assert_same(lambda lib, x, i, v: x.index_put((i, i), v, accumulate=True), x, idx, vals[..., 0])
    assert_same(put, x, np.array([True, False, True, True]), vals[:, 0], rtol=tol)


def test_indexing_backward_accumulates_duplicate_rows():
    def prog(lib, w, i):
        w = w.requires_grad_()
        (w[i] * lib.arange(3.0)).sum().backward()
        return w.grad

    assert_same(prog, arr(5, 3), np.array([0, 4, 0, -1, 2]))


@pytest.mark.parametrize(
    "sa, sb",
    [
        ((2, 3, 4), (5, 4, 2)),
        ((6, 2, 3, 4), (5, 1, 4, 2)),
        ((3, 2, 3, 4), (2, 6, 4, 2)),
        ((2, 3, 4), (2, 5, 2)),
        ((2, 2, 3, 4), (2, 5, 2)),
        ((3, 4), (2, 5, 2)),
        ((4,), (2, 5, 2)),
        ((2, 3, 4), (5,)),
        ((2, 3, 4), (5, 2)),
    ],
)
def test_matmul_shapes_that_do_not_fit_raise_torchs_error(sa, sb):
    assert_same_error(lambda lib, a, b: a @ b, arr(*sa), arr(*sb))


def test_number_divided_by_tensor_rounds_as_torch():
    """``number / t`` is ``t.reciprocal() * number`` in PyTorch: the same float32 rounding
    and node (MulBackward0), and int tensors give floats."""

    def prog(lib, x):
        x = x.float().requires_grad_()
        y = 0.001 / x
        (g,) = lib.autograd.grad(y.sum(), x)
        return y, g, y.grad_fn.name(), 2 / lib.tensor([3, 0]), True / lib.tensor([2.0])

    ours, theirs = run_both(prog, np.array([3.0, 7.0, 0.1, -2.5]))
    assert ours[2] == theirs[2] == "MulBackward0"
    assert_close(ours[:2] + ours[3:], theirs[:2] + theirs[3:], rtol=0, atol=0)
