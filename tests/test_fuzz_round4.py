"""Regression tests for the causes behind the fourth fuzz round's unlisted failures
(tests/progfuzz.py): one test per cause, each against torch."""

from __future__ import annotations

import numpy as np
import pytest
from twolibs import arr, assert_same, assert_same_error

W = arr(4, 3, 2, seed=1)


def _flat_write(L, y, order):
    """A write through a view whose chain needs the base's layout (view(-1)), then a
    permute: the base's gradient arrives non-contiguous."""
    y.permute(order).view(-1)[:3].sin_()
    return y.movedim(2, 0)


def _base(L, x, order):
    return x.permute(order).contiguous().permute(np.argsort(order).tolist()) * 2


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 0, 1)], ids=["contiguous", "permuted"])
@pytest.mark.parametrize("mode", ["backward", "grad", "vmap_grad", "double"])
def test_view_chain_replays_on_a_gradient_laid_out_like_the_base(mode, order):
    """CopySlices (and view_scatter under transforms) replays the view chain of an in-place
    write on the base's gradient: PyTorch first copies that gradient into a buffer laid out
    like the base, so a view(-1) in the chain holds however the gradient arrives."""

    def loss(L, x):
        return (_flat_write(L, _base(L, x, order), order) * L.tensor(W)).sum()

    def prog(L, x):
        if mode == "backward":
            x.requires_grad_()
            loss(L, x).backward()
            return x.grad
        if mode == "grad":
            return L.func.grad(lambda x: loss(L, x))(x)
        if mode == "vmap_grad":
            return L.func.vmap(L.func.grad(lambda x: loss(L, x)))(L.stack([x, x * 0.5]))
        x.requires_grad_()
        (g,) = L.autograd.grad(loss(L, x), x, create_graph=True)
        return L.autograd.grad((g * g).sum(), x)

    assert_same(prog, arr(3, 2, 4))


LCSE_POINTS = {
    "huge": [1e30],
    "huge_tie": [1e30, 1e30, -1e30],
    "absorbing": [1e8, 1e8 + 16, 3.0],
    "spread": [-100.0, 50.0, -80.0, 120.0],
    "plain": [0.3, -1.2, 2.0, 0.1],
}


def _lcse_weights_by_hand(x: np.ndarray) -> np.ndarray:
    """w[i, j] = exp(x_j - r_i) for j <= i, each row shifted by its own running max (float64)."""
    w = np.zeros((x.size, x.size))
    for i in range(x.size):
        z = np.exp(x[: i + 1] - x[: i + 1].max())
        w[i, : i + 1] = z / z.sum()
    return w


@pytest.mark.parametrize("name", sorted(LCSE_POINTS))
def test_logcumsumexp_derivatives_keep_the_tangents_digits_at_large_magnitudes(name):
    """logcumsumexp's jvp and vjp weigh by exp(x_j - r_i) computed from x's running max, not
    as exp(log|t| + x - r): at |x| = 1e30 in float32 the tangent's log vanished against x.
    The oracle is the weights by hand in float64: torch's vjp adds log|g| to -r the same way
    (wrong at 1e30 in float64 too), its jvp underflows exp(x - max) at [-100, 50, -80, 120]."""
    import numtorch as nt

    x32 = np.array(LCSE_POINTS[name], dtype=np.float32)
    t32 = np.array([1.93, -0.5, 2.0, 1.0][: x32.size], dtype=np.float32)
    x, t = nt.tensor(x32), nt.tensor(t32)
    _, jvp = nt.func.jvp(lambda x: x.logcumsumexp(0), (x,), (t,))
    _, pull = nt.func.vjp(lambda x: x.logcumsumexp(0), x)
    w = _lcse_weights_by_hand(x32.astype(np.float64))
    t64 = t32.astype(np.float64)
    np.testing.assert_allclose(np.asarray(jvp.tolist()), w @ t64, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(pull(t)[0].tolist()), w.T @ t64, rtol=1e-5, atol=1e-6)


def test_logcumsumexp_derivatives_at_infinities_follow_pytorch():
    """-inf prefixes (jvp 0, vjp NaN into them) and +inf (vjp NaN at it, 0 before) as
    PyTorch gives. (Its jvp with a +inf is 0 before it, from exp(x - inf); r_0 = x_0 there,
    so numtorch keeps t_0.)"""
    inf = float("inf")

    def jvp(L, x, t):
        return L.func.jvp(lambda x: x.logcumsumexp(0), (x,), (t,))[1]

    def vjp(L, x, t):
        return L.func.vjp(lambda x: x.logcumsumexp(0), x)[1](t)[0]

    t = np.array([1.93, -0.5, 2.0, 1.0])
    assert_same(jvp, np.array([-inf, -inf, 1.0, -inf]), t)
    for x in ([-inf, -inf, 1.0, -inf], [inf, 1.0, 2.0, -1.0], [1.0, -inf, inf, 2.0]):
        assert_same(vjp, np.array(x), t)


@pytest.mark.parametrize(
    "key",
    ["[:, None]", "[None, ::2]", "[..., None]", "[None, 1, None, ::2]", "[1:, None, 0]"],
)
def test_none_index_gives_the_unsqueezed_dim_pytorchs_stride(key):
    """x[..., None, ...] is unsqueeze in PyTorch: the new dim's stride is size * stride of the
    dim after it, not NumPy's 0. Layout rules read it: exp of x[:, None, :].expand(...)[:, :,
    None] took another dim order and a later view(-1) failed (also under vmap)."""

    def strides(L, x):
        return list(eval(f"x{key}").stride())

    assert_same(strides, arr(4, 3, 2))

    def prog(L, x):
        y = x.movedim(1, 0)[:, None, :].expand(2, 2, 2)[:, :, None].exp()
        return y[0].view(-1)

    assert_same(prog, arr(2, 2))

    def batched(L, x):
        return L.func.vmap(lambda v: v.expand(2, 2)[:, None].exp().view(-1), in_dims=-1)(x)

    assert_same(batched, arr(2, 2))


@pytest.mark.parametrize(
    "key", ["[0:1][:, [1, 0]]", "[None, [1, 0], ..., 1]", "[:, :, 1:2][:, [1, 0]]"]
)
def test_advanced_index_layout_reads_the_index_views_size1_strides(key):
    """PyTorch views each index tensor with size-1 dims around it before its TensorIterator
    orders the result's dims; those dims carry the strides of a view (not 0), and the
    order reads them (x[0:1][:, [1, 0]] of a permuted x was laid out otherwise)."""

    def strides(L, x):
        y = eval(f"x.permute(2, 1, 0){key}")
        return [s for s, n in zip(y.stride(), y.shape) if n != 1]

    assert_same(strides, arr(4, 3, 2))


@pytest.mark.parametrize("dtype", ["bool", "float32", "complex64", "int64", "uint8", "float16"])
def test_expand_error_names_the_type_as_pytorch(dtype):
    assert_same_error(lambda lib: lib.zeros(2, 3, dtype=getattr(lib, dtype)).expand(3))


def test_cumprod_gradient_at_an_infinity_is_the_product_of_the_others():
    """Not torch's (it divides by x: inf / inf): d c_k / d x_i = prod_{j <= k, j != i} x_j."""
    import warnings

    import numtorch as nt

    x = nt.tensor([float("inf"), 2.0, 3.0], dtype=nt.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.cumprod(0).backward(nt.tensor([1.0, 1.0, 0.5], dtype=nt.float64))
        single = nt.tensor([float("inf")], requires_grad=True)
        single.cumprod(0).backward(nt.tensor([1.5]))
    assert x.grad.tolist() == [1 + 2 + 0.5 * 6, float("inf"), float("inf")]
    assert single.grad.tolist() == [1.5]


def test_nansum_jvp_drops_the_tangents_of_nan_elements_as_pytorch():
    def f(lib):
        x = lib.tensor([-0.22, 0.5], dtype=lib.float64)
        t = lib.tensor([2.23, 1.0], dtype=lib.float64)
        return lib.func.jvp(lambda x: x.logit().nansum(-1), (x,), (t,))

    assert_same(f)


def test_vmap_index_add_checks_the_dtypes_before_the_sizes():
    def f(lib):
        x = lib.tensor([[[[True, False]]]])

        def one(x):
            y = x.expand(0, 1, 2)
            return y.index_add_(0, lib.tensor([0]), y[:1] * 3)

        return lib.func.vmap(one, in_dims=-1)(x)

    assert_same_error(f)


def test_atan2_gradient_at_the_origin_is_pytorchs_zero():
    def f(lib):
        y = lib.tensor([[0.0, 1.0]], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([[0.0, 2.0]], dtype=lib.float64, requires_grad=True)
        lib.atan2(y, x).backward(lib.ones(1, 2, dtype=lib.float64))
        return y.grad, x.grad.abs()  # (torch's x gradient at the origin is -0.)

    assert_same(f)
