"""Issue 14, crashes where PyTorch succeeds: each program runs on numtorch and on torch and
must give the same values (or the same error)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from twolibs import arr, assert_same, assert_same_error, error_of, fd_grad

import numtorch as nt


@pytest.mark.parametrize("kw", ["dim", "axis"])
@pytest.mark.parametrize("name", ["concatenate", "concat"])
def test_join_takes_dim_and_axis(name, kw):
    assert_same(lambda L, a, b: getattr(L, name)([a, b], **{kw: 1}), arr(2, 3), arr(2, 1))


def test_concatenate_dim_and_axis_together():
    assert_same_error(lambda L, a: L.concatenate([a], 0, dim=0), arr(2))


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8", "float32"])
def test_median_of_nothing(dtype):
    assert_same(lambda L, x: L.median(x), np.zeros(0, dtype))


@pytest.mark.parametrize("reduce", ["amax", "amin", "sum", "prod", "mean"])
@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_scatter_reduce_empty_index(reduce, dtype):
    def prog(L, x, src):
        idx = L.zeros(3, 0, dtype=L.long)
        return [x.scatter_reduce(1, idx, src, reduce, include_self=inc) for inc in (True, False)]

    assert_same(prog, np.arange(6, dtype=dtype).reshape(3, 2), np.zeros((3, 0), dtype))


@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_scatter_reduce_extremes_without_self(reduce):
    def prog(L, x, src):
        idx = L.tensor([[0, 0, 1], [1, 1, 1]])
        return x.scatter_reduce(1, idx, src, reduce, include_self=False)

    assert_same(prog, arr(2, 3), arr(2, 3, seed=1))
    assert_same(prog, np.arange(6).reshape(2, 3), -np.arange(6).reshape(2, 3))


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, a: L.norm(a, p="nuc", dim=0),
        lambda L, a: L.norm(a, p="nuc", dim=[0]),
        lambda L, a: L.norm(a, p="nuc", dim=(0, 1, 1)),
        lambda L, a: L.linalg.matrix_norm(a, dim=(0,)),
        lambda L, a: L.linalg.matrix_norm(a, "nuc", dim=(1, -1)),
        lambda L, a: L.linalg.matrix_norm(a, dim=(0, 3)),
        lambda L, a: L.linalg.norm(a, "nuc", dim=(0,)),
    ],
)
def test_matrix_norm_dim_errors(prog):
    assert_same_error(prog, arr(3, 3))


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, a: L.linalg.norm(a, "nuc", dim=(0, 1, 1)),
        lambda L, a: L.linalg.norm(a, 3, dim=(0, 1, 1)),
        lambda L, a: L.linalg.norm(a[0], "fro"),
        lambda L, a: L.linalg.norm(a.expand(2, 3, 3), "fro"),
        lambda L, a: L.linalg.norm(a.expand(2, 3, 3), "fro", dim=(0,)),
    ],
)
def test_linalg_norm_dim_errors(prog):
    assert_same_error(prog, arr(3, 3))


def test_linalg_norm_string_order_on_a_matrix():
    assert_same(lambda L, a: [L.linalg.norm(a, o) for o in ("fro", "nuc")], arr(3, 4))


NAN_MATRICES = [
    [[np.nan, 1.0], [1.0, 1.0]],
    [[1.0, 1.0], [1.0, np.nan]],
    [[np.inf, 1.0], [1.0, 1.0]],
    [[np.nan, np.nan], [np.nan, np.nan]],
]


@pytest.mark.parametrize("m", NAN_MATRICES)
def test_linalg_on_nonfinite_matrices(m):
    a = np.array(m)
    assert_same(lambda L, a: L.linalg.inv(a), a)
    assert_same(lambda L, a: L.linalg.solve(a, L.ones(2, dtype=a.dtype)), a)
    assert_same(lambda L, a: L.cholesky_solve(a, L.eye(2, dtype=a.dtype)), a)
    assert_same(lambda L, a: L.linalg.solve_triangular(a, a[:, :1], upper=True), a)
    assert_same(lambda L, a: L.linalg.det(a), a)


def test_inv_batch_with_nan_and_singular():
    good = np.array([[[np.nan, 1.0], [1.0, 1.0]], [[2.0, 1.0], [1.0, 1.0]]])
    assert_same(lambda L, a: L.linalg.inv(a), good)
    bad = np.array([[[np.nan, 1.0], [1.0, 1.0]], [[1.0, 1.0], [1.0, 1.0]]])
    want = error_of(lambda L, a: L.linalg.inv(a), torch, bad)
    with pytest.raises(nt.linalg.LinAlgError) as e:
        nt.linalg.inv(nt.tensor(bad))
    assert str(e.value) == want.text


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


@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("float64", "float32")])
def test_outer_mixed_float_backward(dtypes):
    def prog(L, a, b):
        a, b = a.requires_grad_(), b.requires_grad_()
        y = L.outer(a, b)
        (y * y).sum().backward()
        return y, a.grad, b.grad

    a, b = arr(3).astype(dtypes[0]), arr(2, seed=1).astype(dtypes[1])
    assert_same(prog, a, b, rtol=1e-6, atol=1e-6)


BOOL_OPERAND = [
    lambda L, a, m: L.minimum(a, m),
    lambda L, a, m: L.maximum(m, a),
    lambda L, a, m: a / m,
    lambda L, a, m: m / a,
    lambda L, a, m: L.addcdiv(a, a, m),
    lambda L, a, m: L.addcdiv(a, m, a),
    lambda L, a, m: L.addcmul(a, m, a),
    lambda L, a, m: L.atan2(a, m),
    lambda L, a, m: L.fmod(a, m),
    lambda L, a, m: L.remainder(m, a),
    lambda L, a, m: L.where(a > 0, a, m),
]


@pytest.mark.parametrize("f", BOOL_OPERAND)
@pytest.mark.parametrize("dtype", [bool, np.int64])
def test_jvp_with_an_integer_operand(f, dtype):
    def prog(L, a, t):
        m = L.tensor(np.array([True, True, True]).astype(dtype))
        return L.func.jvp(lambda a: f(L, a, m), (a,), (t,))

    assert_same(prog, np.array([2.0, -1.5, 0.5]), np.array([1.0, 0.5, -2.0]))


def _write_through_view_of_second_output(L, a):
    logabs = L.linalg.slogdet(a)[1]  # output 1 of a two-output node
    logabs.view(-1).mul_(3.0)
    return (logabs * logabs).sum()


def test_backward_after_writing_a_view_of_a_second_output():
    def prog(L, a):
        a = a.requires_grad_()
        _write_through_view_of_second_output(L, a).backward()
        return a.grad

    assert_same(prog, arr(2, 3, 3) + 3 * np.eye(3))


def test_grad_after_writing_a_view_of_a_second_output():
    prog = lambda L, a: L.func.grad(lambda a: _write_through_view_of_second_output(L, a))(a)  # noqa: E731
    assert_same(prog, arr(2, 3, 3) + 3 * np.eye(3))
    mean = lambda L, x: L.var_mean(x, dim=0)[1].unflatten(0, (2, 3)).deg2rad_().sum()  # noqa: E731
    assert_same(lambda L, x: L.func.grad(lambda x: mean(L, x))(x), arr(2, 6))
    assert_same(lambda L, x: L.func.vmap(L.func.grad(lambda x: mean(L, x)))(x), arr(3, 2, 6))


MASKS = np.array([[True, False, True, False], [False, True, True, True], [False] * 4])


@pytest.mark.parametrize("in_dims", [(0, None, 0), (None, None, 0), (None, 0, 0), (0, 0, 0)])
def test_vmap_grad_masked_scatter_batched_mask(in_dims):
    def prog(L, s, x, m):
        f = lambda s, x, m: (x.masked_scatter(m, s) ** 2).sum()  # noqa: E731
        return L.func.vmap(L.func.grad(f, argnums=(0, 1)), in_dims=in_dims)(s, x, m)

    s = arr(3, 5) if in_dims[0] == 0 else arr(5)
    x = arr(3, 4, seed=1) if in_dims[1] == 0 else arr(4, seed=1)
    assert_same(prog, s, x, MASKS)


def test_masked_scatter_backward_broadcast_mask():
    def prog(L, s, x, m):
        s, x = s.requires_grad_(), x.requires_grad_()
        (x.masked_scatter(m, s) ** 2).sum().backward()
        return s.grad, x.grad

    assert_same(prog, arr(2, 5), arr(3, 4, seed=1), MASKS[1])


SINGULAR = [
    np.zeros((3, 3)),
    np.array([[1.0, 2.0], [2.0, 4.0]]),  # rank 1
    np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]),  # rank 2
    np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]]),  # rank 2
]


@pytest.mark.parametrize("a", SINGULAR)
def test_det_derivatives_at_singular_matrices(a):
    # PyTorch's eager backward gives 0 at a matrix of rank n-1 (its vmap(grad) gives the
    # cofactors): finite differences decide, the derivative is the matrix of cofactors.
    want = fd_grad(lambda m: np.linalg.det(m), a)
    x = nt.tensor(a, requires_grad=True)
    nt.linalg.det(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), want, atol=1e-8)
    np.testing.assert_allclose(nt.func.grad(nt.linalg.det)(nt.tensor(a)).numpy(), want, atol=1e-8)
    batch = nt.tensor(np.stack([a, np.eye(len(a))]))
    g = nt.func.vmap(nt.func.grad(nt.linalg.det))(batch).numpy()
    np.testing.assert_allclose(g[0], want, atol=1e-8)
    t = np.ones_like(a)
    _, tangent = nt.func.jvp(nt.linalg.det, (nt.tensor(a),), (nt.tensor(t),))
    np.testing.assert_allclose(float(tangent), (want * t).sum(), atol=1e-8)


def test_det_backward_of_the_zero_matrix_like_torch():
    def prog(L, a):
        a = a.requires_grad_()
        L.linalg.det(a).backward()
        return a.grad

    assert_same(prog, np.zeros((3, 3)))


def test_scatter_reduce_prod_gradient_at_a_zero_of_input():
    def prog(L, x, src):
        x = x.requires_grad_()
        y = x.scatter_reduce(0, L.tensor([0, 0, 1]), src, "prod")
        y.backward(L.tensor([1.0, 2.0, 3.0, 4.0], dtype=y.dtype))
        return y, x.grad

    assert_same(prog, np.array([0.0, 2.0, 0.0, 1.5]), np.array([3.0, -2.0, 5.0]))
    empty = (
        lambda L, x: L.func.grad(  # noqa: E731
            lambda x: x.scatter_reduce(0, L.zeros(0, dtype=L.long), x[:0], "prod").sum()
        )(x)
    )
    assert_same(empty, np.array([0.0, 2.0]))
    # PyTorch's jvp of scatter_reduce "prod" is 0 everywhere: finite differences decide.
    x, t = np.array([0.0, 2.0, 0.0, 1.5]), np.array([1.0, -1.0, 2.0, 0.5])
    src = np.array([3.0, -2.0, 5.0])

    def f(x):
        return x.scatter_reduce(0, nt.tensor([0, 0, 1]), nt.tensor(src), "prod")

    _, got = nt.func.jvp(f, (nt.tensor(x),), (nt.tensor(t),))
    eps = 1e-6
    want = (f(nt.tensor(x + eps * t)) - f(nt.tensor(x - eps * t))).numpy() / (2 * eps)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-8)


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_prod_gradient_at_zeros_of_src(include_self):
    def prog(L, x, s):
        x, s = x.requires_grad_(), s.requires_grad_()
        y = x.scatter_reduce(0, L.tensor([0, 0, 1, 2, 2]), s, "prod", include_self=include_self)
        y.backward(L.tensor([1.0, 2.0, 3.0, 4.0], dtype=y.dtype))
        return y, x.grad, s.grad

    x, src = np.array([0.0, 2.0, 0.0, 1.5]), np.array([0.0, -2.0, 5.0, 0.0, 0.0])
    assert_same(prog, x, src)
    # the jvp in src (PyTorch's is 0 everywhere): finite differences decide
    t = np.array([1.0, -1.0, 2.0, 0.5, 3.0])

    def f(s):
        idx = nt.tensor([0, 0, 1, 2, 2])
        return nt.tensor(x).scatter_reduce(0, idx, s, "prod", include_self=include_self)

    _, got = nt.func.jvp(f, (nt.tensor(src),), (nt.tensor(t),))
    eps = 1e-6
    want = (f(nt.tensor(src + eps * t)) - f(nt.tensor(src - eps * t))).numpy() / (2 * eps)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-8)
