"""Regression tests for the causes behind the bad-input sweep's DIFFERS cases that were fixed
(tests/test_bad_inputs.py): one test per cause, each against torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from twolibs import assert_same, assert_same_error, outcome

import numtorch as nt

X = np.array([[0.25, 0.5, 0.75], [0.125, 0.625, 0.875]])
DTYPES = ("bool", "int64", "float32", "float64", "complex128")


def _as(a: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "bool":
        return a > 0.4
    if dtype == "int64":
        return np.round(a * 3).astype(np.int64)
    if dtype == "complex128":
        return a * (1 + 0.5j)
    return a.astype(dtype)


LOSSES = {
    "mse": lambda F, x, y: F.mse_loss(x, y),
    "smooth_l1": lambda F, x, y: F.smooth_l1_loss(x, y),
    "huber": lambda F, x, y: F.huber_loss(x, y),
    "bce": lambda F, x, y: F.binary_cross_entropy(x, y),
    "bce_logits": lambda F, x, y: F.binary_cross_entropy_with_logits(x, y),
    "kl_div": lambda F, x, y: F.kl_div(x, y, reduction="sum"),
    "soft_margin": lambda F, x, y: F.soft_margin_loss(x, y),
    "multilabel_soft_margin": lambda F, x, y: F.multilabel_soft_margin_loss(x, y),
    "hinge": lambda F, x, y: F.hinge_embedding_loss(x, y),
    "hinge_sum": lambda F, x, y: F.hinge_embedding_loss(x, y, 2.5, reduction="sum"),
    "margin_ranking": lambda F, x, y: F.margin_ranking_loss(x, y, y.real > 0.5),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_dtypes_follow_pytorchs_kernels(name):
    """Each loss on every pair of input and target dtypes: PyTorch's refusal (its kernel's
    name, its cast into the input's or target's dtype, its bool arithmetic) in its order,
    or its result and result dtype."""
    fn = LOSSES[name]
    for dx in DTYPES:
        for dy in DTYPES:

            def prog(L, x, y):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    return fn(L.nn.functional, x, y)

            got, want = (
                outcome(prog, nt, _as(X, dx), _as(X[::-1], dy)),
                outcome(prog, torch, _as(X, dx), _as(X[::-1], dy)),
            )
            if hasattr(want, "text"):
                assert_same_error(prog, _as(X, dx), _as(X[::-1], dy))
            else:
                assert not hasattr(got, "text"), f"{name} {dx} {dy}: {got}"
                assert_same(prog, _as(X, dx), _as(X[::-1], dy), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, c, x: L.clamp_min(c, 0),  # a number bound: clamp's kernel
        lambda L, c, x: L.clamp_max(c, 0.5),
        lambda L, c, x: c.clamp_min_(0),
        lambda L, c, x: L.clamp_min(c, x),  # a tensor bound: maximum's
        lambda L, c, x: L.clamp_max(c, x),
        lambda L, c, x: L.nn.functional.cosine_similarity(c, x),
        lambda L, c, x: L.nn.functional.scaled_dot_product_attention(c, x, x),
        lambda L, c, x: L.nn.functional.scaled_dot_product_attention(x.long(), x, x),
    ],
)
def test_complex_and_dtype_texts(prog):
    assert_same_error(prog, X * (1 + 0.5j), X)


W = np.arange(15.0).reshape(5, 3) / 10


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, w: L.nn.functional.embedding_bag(L.tensor([1, 2]), w.bool(), L.tensor([0])),
        lambda L, w: L.nn.functional.embedding_bag(L.tensor([1, 2]), w.long(), L.tensor([0])),
        lambda L, w: L.nn.functional.embedding_bag(L.tensor([1, 2]), w.cdouble(), L.tensor([0])),
        # the weight's dtype is checked before the offsets and per_sample_weights
        lambda L, w: L.nn.functional.embedding_bag(L.tensor([1, 7]), w.long(), L.tensor([1])),
        lambda L, w: L.nn.functional.embedding_bag(
            L.tensor([1, 2]), w.long(), L.tensor([0]), mode="sum", per_sample_weights=w[0, :2]
        ),
        # out of range: float32 sum/mean without padding_idx run PyTorch's fast kernel
        lambda L, w: L.nn.functional.embedding_bag(L.tensor([1, 7]), w, L.tensor([0])),
        lambda L, w: L.nn.functional.embedding_bag(L.tensor([-1, 2]), w.float(), L.tensor([0])),
        lambda L, w: L.nn.functional.embedding_bag(L.tensor([[1, 2], [7, 0]]), w.float()),
        *(  # a bag after the first: PyTorch's report reads it at its offset counted twice
            lambda L, w, i=i, o=o: L.nn.functional.embedding_bag(
                L.tensor(i), w.float(), L.tensor(o)
            )
            for i, o in (([1, 2, 7, 0], [0, 2]), ([1, 2, -1, 0], [0, 1]), ([1, 2, 3, -1], [0, 2]))
        ),
        lambda L, w: L.nn.functional.embedding_bag(
            L.tensor([[1, 7]]), w.float(), mode="sum", padding_idx=1
        ),
        lambda L, w: L.nn.functional.embedding_bag(L.tensor([[-4, 2]]), w.float(), mode="max"),
    ],
)
def test_embedding_bag_checks(prog):
    assert_same_error(prog, W)


def test_svd_of_nonfinite_input():
    """LAPACK's failure on NaN/inf in PyTorch's words (NumPy: 'SVD did not converge')."""
    a = np.eye(3)
    a[0, 1] = np.nan
    progs = [
        lambda L, a: L.linalg.svdvals(a),
        lambda L, a: L.linalg.svd(a),
        lambda L, a: L.linalg.pinv(a),
        lambda L, a: L.linalg.svdvals(L.stack([a.nan_to_num(), a])),  # a batch element
    ]
    for prog in progs:
        assert_same_error(prog, a)


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, a: L.linalg.pinv(a.long()),
        lambda L, a: L.pinverse(a.bool()),
        lambda L, a: L.linalg.pinv(a[0]),
    ],
)
def test_pinv_refusals(prog):
    assert_same_error(prog, W)


def test_conjugate_transposes():
    c = W[:3] * (1 + 0.5j) + 0.25j
    assert_same(lambda L, c: (c.mH, c.adjoint(), L.adjoint(c)), c)
    assert_same(lambda L, c: (L.linalg.pinv(c), L.pinverse(L.stack([c, c.mT]))), c, atol=1e-12)


def _rnn_args(L, hidden, gates=1):
    x = L.ones(3, 2, 2)
    params = [L.ones(gates * 3, 2) / 4, L.ones(gates * 3, 3) / 4]
    return x, L.ones(1, 2, hidden), params


@pytest.mark.parametrize(
    "prog",
    [
        lambda L: L.rnn_tanh(*_rnn_args(L, 4), False, 1, 0.0, False, False, False),
        lambda L: L.rnn_relu(*_rnn_args(L, 4), False, 1, 0.0, False, False, False),
        lambda L: L.gru(*_rnn_args(L, 4, 3), False, 1, 0.0, False, False, False),
        lambda L: L.nn.RNN(2, 3)(L.ones(3, 2, 2), L.ones(1, 2, 4)),  # the module's own check
    ],
)
def test_functional_rnn_hidden_size(prog):
    assert_same_error(lambda L, _: prog(L), W)


@pytest.mark.parametrize("sizes", [[0, 0, 0, 0], [-1000, 2, 1], [1000, 2, 1], [3, 3, 1, 1]])
@pytest.mark.parametrize("cell", ["rnn_tanh", "lstm", "gru"])
def test_packed_rnn_batch_sizes(cell, sizes):
    """Batch sizes that are no packed sequence's fail where PyTorch's loop fails (its fused
    LSTM cell fails on a step of no rows at a reshape: not that case)."""
    if cell == "lstm" and 0 in sizes:
        pytest.skip("PyTorch's fused LSTM cell: a reshape's text")
    gates = {"rnn_tanh": 1, "lstm": 4, "gru": 3}[cell]

    def prog(L, _):
        data = L.ones(6, 2)
        h = L.ones(1, 3, 2)
        hx = (h, h) if cell == "lstm" else h
        params = [L.ones(gates * 2, 2) / 4, L.ones(gates * 2, 2) / 4]
        bs = L.tensor(sizes)
        return getattr(L, cell)(data, bs, hx, params, False, 1, 0.0, False, False)

    assert_same_error(prog, W)


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, x: x[:, :1].clone().addmm_(x[:, :2], x[:2]),
        lambda L, x: x[:2, 0].clone()[:1].addmv_(x[:2, :2], x[:2, 0]),
        lambda L, x: x[None, :, :1].clone().baddbmm_(x[None, :, :2], x[None, :2]),
        lambda L, x: (x > 0.3).cumsum_(0),
        lambda L, x: (x > 0.3).cumprod_(1),
        lambda L, x: x.clone().cumsum_(0, dtype=L.int64),
        lambda L, x: x.long().cumprod_(0, dtype=L.float32),
        lambda L, x: x.long().mvlgamma_(1),
        lambda L, x: x.int().mvlgamma_(1),
    ],
)
def test_inplace_texts(prog):
    assert_same_error(prog, W)


def test_inplace_scans_run_in_selfs_dtype():
    assert_same(lambda L, x: (x.int().cumsum_(0), x.float().cumprod_(1), x.cumsum_(dim=1)), W)


@pytest.mark.parametrize("dtype", ["bool", "int64", "complex128"])
@pytest.mark.parametrize(
    "shape, modes",
    [
        ((1, 2, 3), ("nearest", "linear", "area", "nearest-exact")),
        ((1, 2, 3, 3), ("nearest", "bilinear", "bicubic", "area")),
        ((1, 1, 2, 3, 3), ("nearest", "trilinear", "area")),
    ],
)
def test_resampling_refusals(dtype, shape, modes):
    """PyTorch's kernel names for inputs it cannot resample, complex ones too."""
    x = np.ones(shape, dtype)
    for mode in modes:
        assert_same_error(
            lambda L, x, m=mode: L.nn.functional.interpolate(x, scale_factor=2, mode=m), x
        )
    if len(shape) > 3:  # the shapes are checked first
        for g in (np.zeros((1, *(2,) * (len(shape) - 2), len(shape) - 2)), np.zeros((1, 2, 2))):
            assert_same_error(
                lambda L, x, g: L.nn.functional.grid_sample(x, g.to(x.dtype), align_corners=False),
                x,
                g,
            )


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, b, f: L.einsum("ij,jk->ik", b, f),  # bmm looks at its first operand's dtype
        lambda L, b, f: L.einsum("ij,jk->ik", f, b),
        lambda L, b, f: L.einsum("ij,jk", b, f.long()),  # the implicit output contracts j
        lambda L, b, f: L.einsum("ij,ij", b, f),
    ],
)
def test_einsum_mixed_dtypes_refused(prog):
    assert_same_error(prog, W[:2, :2] > 0.1, W[:2, :2])


def test_einsum_mixed_dtypes_without_contraction():
    """No bmm runs: PyTorch's products promote, with every gradient in its input's dtype."""

    def prog(L, a, b):
        a, b = a.float().requires_grad_(), b.requires_grad_()
        r = L.einsum("i,j->ij", a, b)
        r.sum().backward()
        jvp = L.func.jvp(lambda x: L.einsum("i,j", x, b.detach()), (a.detach(),), (a.detach(),))
        return r, a.grad, b.grad, jvp, L.einsum("i,i->i", a.detach().long()[:2], b)

    assert_same(prog, W[0], W[1, :2], rtol=1e-6)


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, x: L.nn.functional.grid_sample(x, x.new_zeros(1, 2, 2, 3).float()),  # shapes
        lambda L, x: L.nn.functional.grid_sample(x.bool(), x.new_zeros(1, 2, 2, 2)),  # kernel
        lambda L, x: L.nn.functional.grid_sample(x.float(), x.new_zeros(1, 2, 2, 2).bool()),
        lambda L, x: L.nn.functional.grid_sample(x, x.new_zeros(1, 2, 2, 2).float()),
    ],
)
def test_grid_sample_check_order(prog):
    assert_same_error(prog, np.ones((1, 1, 3, 3)))


def test_margin_losses_skip_nan_terms():
    """PyTorch's multi-margin kernels add a term only where it is positive: NaN is skipped,
    inf kept (and their gradients follow)."""
    x = np.array([[0.1, np.nan, 0.3, -0.2], [np.inf, 0.2, -0.1, 0.4], [0.5, 0.1, np.inf, 0.0]])

    def prog(L, x):
        x = x.requires_grad_()
        t = L.tensor([0, 2, 1])
        ml = L.tensor([[0, -1, 1, 1], [1, 3, -1, 0], [3, -1, 0, 0]])
        out = (
            L.nn.functional.multi_margin_loss(x, t, reduction="none"),
            L.nn.functional.multi_margin_loss(x, t, p=2, reduction="none"),
            L.nn.functional.multilabel_margin_loss(x, ml, reduction="none"),
        )
        (g,) = L.autograd.grad([o.nan_to_num(posinf=0.0).sum() for o in out], x)
        return out, g

    assert_same(prog, x)


def test_complex_matrix_norms_and_logdet():
    c = (np.arange(9.0).reshape(3, 3) / 7 + np.eye(3)) * (1 + 0.5j) + 0.1j
    singular = c.copy()
    singular[0] = 0
    assert_same(
        lambda L, c, s: (
            [L.linalg.matrix_norm(c, o) for o in ("fro", "nuc", 2, 1, -1, float("inf"))],
            L.linalg.norm(c),
            L.logdet(c),
            L.logdet(L.stack([c, -c, s])),
        ),
        c,
        singular,
        atol=1e-12,
    )


def test_complex_sigmoid_silu_logaddexp():
    """PyTorch's complex kernels: 1 / (1 + exp(-z)), z sigmoid(z), and logaddexp as
    max + log1p(exp(min - max)) with the operands ordered by real part (ties: the first is
    the larger; NaN and -inf handled as PyTorch's)."""
    rng = np.random.default_rng(0)
    a = np.array([0.5 + 0.3j, 800 + 1j, -800 - 2j, 3 - 4j, 1 + np.nan * 1j, -np.inf + 1j, 0j])
    b = np.array([1.5 - 0.3j, 1 + 1j, 2 + 0j, 3 + 4j, 2, -np.inf + 2j, 1j])
    a = np.concatenate([a, rng.normal(size=8) * 3 + 4j * rng.normal(size=8)])
    b = np.concatenate([b, rng.normal(size=8) * 3 + 4j * rng.normal(size=8)])
    assert_same(
        lambda L, a, b: (
            L.sigmoid(a),
            L.nn.functional.silu(a),
            L.logaddexp(a, b),
            L.logaddexp(b, a),
            L.logaddexp(a, b.real),
            L.angle(a),  # real, and its tangent Im(t / z)
            L.func.jvp(L.angle, (a,), (b,)),
        ),
        a,
        b,
        rtol=1e-12,
    )


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize(
    "shape, mode", [((1, 2, 5), "linear"), ((1, 2, 4, 5), "bilinear"), ((1, 2, 4, 5), "bicubic")]
)
def test_interpolation_reads_every_tap(shape, mode, align_corners):
    """PyTorch's interpolation reads each tap, one of weight 0 too: NaN and inf spread to
    exactly the outputs whose taps hold them. (Not trilinear: PyTorch's kernel there
    interpolates as x0 + t (x1 - x0), which turns an inf at weight 0 into NaN.)"""
    x = np.random.default_rng(0).normal(size=shape)
    x.flat[[0, x.size // 2]] = [np.nan, np.inf]
    for scale in (2.0, 0.5, 1.3):
        assert_same(
            lambda L, x, s=scale: L.nn.functional.interpolate(
                x, scale_factor=s, mode=mode, align_corners=align_corners
            ),
            x,
            rtol=1e-10,
            atol=1e-12,
        )


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_does_not_read_outside_taps(mode):
    """With zeros padding, a tap outside the input is not read: an inf at the border gives
    no NaN where the sample point lies past it."""
    x = np.random.default_rng(0).normal(size=(1, 2, 3, 4))
    x[0, 1, 2, 3], x[0, 0, 0, 0] = np.inf, np.nan
    g = np.array(
        [[[[0.9, 0.8], [1.05, 1.1], [-1.1, -1.05]], [[0.2, -0.3], [0.99, 0.95], [1.3, 0.2]]]]
    )
    assert_same(
        lambda L, x, g: L.nn.functional.grid_sample(x, g, mode=mode, align_corners=False), x, g
    )


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, s, m: s.clone().masked_scatter_(m, L.ones(12)),
        lambda L, s, m: s.clone().masked_scatter_(m[None], L.ones(12)),
        lambda L, s, m: s.clone().masked_scatter_(m[0], L.ones(12)),
        lambda L, s, m: s.clone().masked_fill_(m, 1.0),  # broadcasts: the in-place shape text
    ],
)
def test_masked_scatter_expands_the_mask_to_self(prog):
    assert_same_error(prog, np.zeros((3, 1)), np.ones((3, 4), bool))
