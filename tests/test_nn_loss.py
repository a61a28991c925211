"""nn.functional losses against PyTorch where the op database cannot look: the legacy
size_average/reduce arguments and their warnings, gradients PyTorch defines away from the
derivative (gaussian_nll_loss's clamp), argument errors, and per-sample gradients."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from twolibs import arr, assert_same, assert_same_error, op_tol, outcome, run_both

import numtorch as nt

LEGACY = [(None, False), (False, None), (True, True), (False, False), (None, True), (True, False)]


def _targets(*shape, high=4, seed=1):
    return np.random.default_rng(seed).integers(0, high, size=shape)


@pytest.mark.parametrize("size_average,reduce", LEGACY)
@pytest.mark.parametrize(
    "prog",
    [
        pytest.param(lambda F, x, t, **kw: F.nll_loss(x, t, **kw), id="nll_loss"),
        pytest.param(lambda F, x, t, **kw: F.cross_entropy(x, t, **kw), id="cross_entropy"),
        pytest.param(
            lambda F, x, t, **kw: F.mse_loss(x, t.double().unsqueeze(-1), **kw), id="mse_loss"
        ),
        pytest.param(
            lambda F, x, t, **kw: F.kl_div(x, t.double().unsqueeze(-1), **kw), id="kl_div"
        ),
        pytest.param(lambda F, x, t, **kw: F.multi_margin_loss(x, t, **kw), id="multi_margin_loss"),
        pytest.param(
            lambda F, x, t, **kw: F.cosine_embedding_loss(x, x.flip(0), t - 1.5, **kw),
            id="cosine_embedding_loss",
        ),
    ],
)
def test_legacy_reduction_arguments(prog, size_average, reduce):
    kw = {"size_average": size_average, "reduce": reduce, "reduction": "foo"}

    def run(lib, x, t):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = prog(lib.nn.functional, x, t, **kw)
        return out, [str(m.message) for m in w if "size_average" in str(m.message)]

    assert_same(run, arr(3, 4), _targets(3))


def test_elementwise_mean_is_mean_with_a_warning():
    def run(lib, x, y):
        with pytest.warns(UserWarning, match="elementwise_mean"):
            return lib.nn.functional.l1_loss(x, y, reduction="elementwise_mean")

    assert_same(run, arr(2, 3), arr(2, 3, seed=1))


def test_mismatched_sizes_warn_and_broadcast():
    def run(lib, x, y):
        with pytest.warns(UserWarning, match=r"Using a target size \(torch.Size\(\[3\]\)\)"):
            return lib.nn.functional.mse_loss(x, y, reduction="none")

    assert_same(run, arr(2, 3), arr(3, seed=1))


def test_gaussian_nll_clamp_passes_the_gradient_like_torch():
    # var below eps: the value is clamped, the gradient is the one at the clamped value
    # (PyTorch clamps in place under no_grad), which is not the derivative.
    v = np.array([[1e-3, 0.5, 2.0], [0.05, 1e-4, 1.0]])

    def run(lib, x, y, var):
        var.requires_grad_(True)
        x.requires_grad_(True)
        out = lib.nn.functional.gaussian_nll_loss(x, y, var, eps=0.1)
        return out, lib.autograd.grad(out, (x, var))

    assert_same(run, arr(2, 3), arr(2, 3, seed=1), v)

    def tangent(lib, x, y, var, t):  # forward mode sees the clamp
        f = lambda v: lib.nn.functional.gaussian_nll_loss(x, y, v, eps=0.1, reduction="none")  # noqa: E731
        return lib.func.jvp(f, (var,), (t,))

    assert_same(tangent, arr(2, 3), arr(2, 3, seed=1), v, arr(2, 3, seed=2))


NLL_ERRORS = {
    "weight dtype": lambda F, x, t: F.nll_loss(x, t, x[0].float()),
    "2d size mismatch": lambda F, x, t: F.nll_loss(
        x.reshape(1, 3, 2, 2), t.reshape(1, 3, 1)[:, :2]
    ),
    "2d weight": lambda F, x, t: F.nll_loss(x.reshape(3, 4, 1, 1), t.reshape(3, 1, 1), x[0, :2]),
    "1d input, 1d target": lambda F, x, t: F.nll_loss(x[0], t),
    "target out of bounds": lambda F, x, t: F.cross_entropy(x, t + 2, label_smoothing=0.1),
    "ignored but out of bounds": lambda F, x, t: F.nll_loss(x, t + 2, ignore_index=5),
    "label smoothing": lambda F, x, t: F.cross_entropy(x, t, label_smoothing=1.5),
}


@pytest.mark.parametrize("name", NLL_ERRORS)
def test_nll_argument_errors(name):
    prog = NLL_ERRORS[name]
    assert_same_error(lambda lib, x, t: prog(lib.nn.functional, x, t), arr(3, 4), _targets(3))


def test_negative_label_smoothing_is_none():
    for t in (_targets(3), arr(3, 4, seed=1)):
        assert_same(
            lambda lib, x, t: lib.nn.functional.cross_entropy(
                x, t.softmax(1) if t.dim() == 2 else t, label_smoothing=-0.2
            ),
            arr(3, 4),
            t,
        )


def test_all_ignored_targets_give_nan():
    t = np.full(3, -100)
    assert_same(lambda lib, x, t: lib.nn.functional.cross_entropy(x, t), arr(3, 4), t)
    assert_same(
        lambda lib, x, t: lib.nn.functional.cross_entropy(x, t, label_smoothing=0.2), arr(3, 4), t
    )


KEPT = [
    ([3, 1, 0], {}),
    ([3, -100, 0], {}),
    ([-100, -100, -100], {}),
    ([2], {}),
    ([3, 1, 0], {"ignore_index": 1}),
    ([3, 5, 0], {"ignore_index": 5}),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "name,targets,kw",
    [("cross_entropy", *c) for c in KEPT]
    + [("nll_loss", *c) for c in KEPT]
    + [("nll_loss", np.array([3, 1, 0], np.uint8), {})],
)
def test_mean_over_kept_targets(name, targets, kw, dtype):
    """The 'mean' over the targets kept, its count read off the array where no transform
    runs: PyTorch's loss and gradient, and to the bit those computed under a transform."""
    targets = np.asarray(targets)
    x = arr(len(targets), 4).astype(dtype)

    def prog(lib, x, t):
        x.requires_grad_()
        loss = getattr(lib.nn.functional, name)(x, t, **kw)
        return loss, lib.autograd.grad(loss, x)[0]

    ours = assert_same(prog, x, targets, **op_tol(np.dtype(dtype).name))
    fn = getattr(nt.nn.functional, name)
    g, v = nt.func.grad_and_value(lambda x: fn(x, nt.tensor(targets), **kw))(nt.tensor(x))
    for a, b in zip(ours, (v, g)):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a.detach().numpy(), b.numpy())


@pytest.mark.parametrize("spatial", [False, True])
def test_nll_unpick_is_the_scatter_of_minus_g(spatial):
    """nll_pick's gradient (one op) is -g scattered to the kept targets' classes: the
    gather's adjoint written with where and scatter_add, to the bit (+0 for a zero g)."""
    from numtorch.nn._loss_classification import nll_unpick
    from numtorch.ops.reduction import scatter_add_dim

    shape = (3, 4, 2) if spatial else (3, 4)
    t = _targets(3, 2) if spatial else _targets(3)
    t.reshape(-1)[1] = -100
    g = np.cos(np.arange(t.size)).reshape(t.shape).astype(np.float32)
    g.reshape(-1)[0] = 0.0
    g.reshape(-1)[2] = -0.0
    tg, tt = nt.tensor(g), nt.tensor(t)
    keep = tt != -100
    want = scatter_add_dim(
        nt.where(keep, -tg, 0.0).unsqueeze(1), nt.where(keep, tt, 0).unsqueeze(1), 1, shape
    )
    got = nll_unpick(tg, tt, ignore_index=-100, shape=shape)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy().view(np.uint32), want.numpy().view(np.uint32))


def test_nll_targets_out_of_bounds_raise_on_every_path():
    def prog(lib, x, t, **kw):
        return lib.nn.functional.nll_loss(x, t, **kw)

    for t in ([0, 4, 1], [0, -1, 1], [-100, 7, 0]):
        assert_same_error(prog, arr(3, 4), np.array(t))


def test_per_sample_gradients_of_log_softmax_nll(no_fallback):
    """The per-sample-gradients tutorial's loss: vmap(grad) over log_softmax -> nll_loss."""
    w, b = arr(5, 4), arr(4, seed=1)
    data, targets = arr(6, 5, seed=2), _targets(6)

    def per_sample(lib, w, b, data, targets):
        F = lib.nn.functional

        def loss(w, b, x, t):
            logits = (x.unsqueeze(0) @ w + b).log_softmax(-1)
            return F.nll_loss(logits, t.unsqueeze(0))

        return lib.func.vmap(lib.func.grad(loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))(
            w, b, data, targets
        )

    assert_same(per_sample, w, b, data, targets)


CTC_CASES = {
    "padded": (np.array([[1, 2, 2], [3, 1, 0]]), [6, 5], [3, 2], {}),
    "padded, tensors, none": (
        np.array([[1, 2, 2], [3, 1, 0]]),
        np.array([6, 5]),
        np.array([3, 2]),
        {"reduction": "none"},
    ),
    "concatenated, sum": (np.array([1, 2, 2, 3, 1]), [6, 4], [3, 2], {"reduction": "sum"}),
    "blank 2": (np.array([[1, 0, 3], [3, 1, 0]]), [6, 6], [3, 3], {"blank": 2}),
    "infinite": (np.array([[2, 2, 1], [1, 3, 0]]), [3, 6], [3, 0], {"reduction": "none"}),
    "zero_infinity": (np.array([[2, 2, 1], [1, 3, 0]]), [3, 6], [3, 0], {"zero_infinity": True}),
    "empty input": (np.array([[1, 2, 2], [3, 1, 0]]), [0, 4], [0, 1], {"reduction": "none"}),
}


@pytest.mark.parametrize("name", CTC_CASES)
def test_ctc_loss_matches_torch(name):
    targets, il, tl, kw = CTC_CASES[name]

    def run(lib, x, targets, il, tl):
        return lib.nn.functional.ctc_loss(x.log_softmax(-1), targets, il, tl, **kw)

    assert_same(run, arr(6, 2, 4), targets, il, tl)


@pytest.mark.parametrize("name", [n for n in CTC_CASES if n != "infinite"])
def test_ctc_loss_gradient_through_log_softmax_matches_torch(name):
    # torch's gradient with respect to log_probs is exp(log_probs) minus the derivative: the
    # extra term cancels in log_softmax's backward, so the gradients of the logits agree.
    targets, il, tl, kw = CTC_CASES[name]

    def run(lib, x, targets, il, tl):
        x.requires_grad_(True)
        out = lib.nn.functional.ctc_loss(x.log_softmax(-1), targets, il, tl, **kw)
        return lib.autograd.grad(out.sum(), x)

    assert_same(run, arr(6, 2, 4), targets, il, tl, rtol=1e-9, atol=1e-12)


def test_ctc_loss_gradient_is_torch_minus_its_exp_term():
    targets, il, tl, _ = CTC_CASES["padded"]
    x = arr(6, 2, 4)
    lp = x - np.log(np.exp(x).sum(-1, keepdims=True))

    def grad(lib, lp, targets):
        lp.requires_grad_(True)
        out = lib.nn.functional.ctc_loss(lp, targets, il, tl, reduction="sum")
        return lib.autograd.grad(out, lp)[0]

    ours, theirs = run_both(grad, lp, targets)
    live = np.arange(6)[:, None, None] < np.array(il)[:, None]  # (T, N, 1): steps in use
    want = theirs.numpy() - np.exp(lp) * live
    np.testing.assert_allclose(ours.numpy(), want, rtol=1e-9, atol=1e-12)


def test_ctc_loss_has_a_second_derivative(no_fallback):
    # PyTorch has none (its ctc_loss_backward is not differentiable): finite differences.
    targets, il, tl, _ = CTC_CASES["padded"]
    x, v = nt.tensor(arr(6, 2, 4)), nt.tensor(arr(6, 2, 4, seed=3))
    t = nt.tensor(targets)

    def g(x):
        return nt.func.grad(lambda x: nt.nn.functional.ctc_loss(x, t, il, tl))(x)

    hvp = nt.func.jvp(g, (x,), (v,))[1]
    eps = 1e-6
    fd = (g(x + eps * v) - g(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(hvp.numpy(), fd.numpy(), rtol=1e-5, atol=1e-7)
    hvp_rev = nt.func.grad(lambda x: (g(x) * v).sum())(x)
    np.testing.assert_allclose(hvp_rev.numpy(), fd.numpy(), rtol=1e-5, atol=1e-7)


def test_binary_cross_entropy_at_saturated_probabilities():
    # sigmoid(20) is 1.0 in float32: the loss clamps its log at -100, the gradient stays
    # finite (PyTorch's formula, not the clamped logs' derivative).
    def run(lib, x, y):
        x.requires_grad_(True)
        out = lib.nn.functional.binary_cross_entropy(x.sigmoid(), y, reduction="sum")
        return out, lib.autograd.grad(out, x)

    x = np.array([-30.0, -20.0, 0.5, 20.0, 30.0], np.float32)
    y = np.array([1.0, 0.0, 0.3, 0.0, 1.0], np.float32)
    assert_same(run, x, y, rtol=1e-6, atol=1e-6)


def test_binary_cross_entropy_with_logits_is_stable():
    def run(lib, x, y, pw):
        x.requires_grad_(True)
        out = lib.nn.functional.binary_cross_entropy_with_logits(
            x, y, pos_weight=pw, reduction="none"
        )
        return out, lib.autograd.grad(out.sum(), x)

    x = np.array([-1000.0, -90.0, -20.0, 0.0, 20.0, 90.0, 1000.0], np.float32)
    y = np.array([1.0, 0.0, 0.3, 0.5, 0.0, 1.0, 0.2], np.float32)
    pw = np.full(7, 1.5, np.float32)
    assert_same(run, x, y, pw, rtol=1e-6, atol=1e-6)


def test_ctc_loss_vmap_over_concatenated_targets_and_tensor_lengths(no_fallback):
    # Under vmap the lengths can't be read: targets are cut at their whole length.
    lp = nt.tensor(arr(3, 6, 2, 4)).log_softmax(-1)
    targets = nt.tensor(np.array([[1, 2, 2, 3, 1], [3, 3, 1, 2, 1], [2, 1, 3, 1, 1]]))
    il = nt.tensor(np.array([[6, 4], [5, 6], [6, 6]]))
    tl = nt.tensor(np.array([[3, 2], [2, 3], [4, 1]]))

    def f(lp, t, il, tl):
        return nt.nn.functional.ctc_loss(lp, t, il, tl, reduction="none")

    got = nt.vmap(f)(lp, targets, il, tl)
    want = nt.stack([f(lp[b], targets[b], il[b], tl[b]) for b in range(3)])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "kw",
    [{"label_smoothing": 0.1}, {"ignore_index": 2}, {"reduction": "sum", "label_smoothing": 0.3}],
)
def test_per_sample_gradients_of_cross_entropy(kw, no_fallback):
    def per_sample(lib, w, weight, data, targets):
        def loss(w, x, t):
            logits = x.unsqueeze(0) @ w
            return lib.nn.functional.cross_entropy(logits, t.unsqueeze(0), weight, **kw)

        return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(w, data, targets)

    assert_same(per_sample, arr(5, 4), arr(4, seed=3) ** 2, arr(6, 5, seed=2), _targets(6))


# ==================================================================
# Causes behind the bad-input sweep's DIFFERS cases (tests/test_bad_inputs.py), fixed.


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


# ------------------------------------------------------------------ linear_cross_entropy
@pytest.mark.parametrize(
    "shapes,kwargs",
    [
        (((3, 4), (5, 4), (3,)), dict(reduction="sum")),
        (((3, 4), (5, 4), (3,)), dict(ignore_index=2, label_smoothing=0.2)),
        (((4,), (5, 4), ()), dict(reduction="none")),
        (((2, 4), (3, 2, 4), (2, 2)), dict(reduction="none", label_smoothing=0.1)),
        (((3, 4), (5, 4), (3, 5)), dict(reduction="mean")),
    ],
    ids=str,
)
def test_linear_cross_entropy_gradients_with_bias_and_weight(shapes, kwargs):
    """The loss and the gradients of input, linear_weight and linear_bias (keyword-only,
    so outside the op database's gradient checks), class weights, K-dimensional logits."""
    xs, ws, ts = shapes
    probs = len(ts) == 2 and ts[1] == ws[0]

    def prog(T, x, w, b, cw, t):
        for v in (x, w, b):
            v.requires_grad_(True)
        if probs:
            t = t.softmax(-1)
        loss = T.nn.functional.linear_cross_entropy(x, w, t, linear_bias=b, weight=cw, **kwargs)
        return loss, T.autograd.grad(loss.sum(), (x, w, b))

    target = arr(*ts, seed=5) if probs else _targets(*ts, high=ws[0], seed=5)
    args = (arr(*xs), arr(*ws, seed=1), arr(*ws[:-1], seed=2), arr(ws[0], seed=3) ** 2, target)
    assert_same(prog, *args, rtol=1e-10, atol=1e-12)


def test_linear_cross_entropy_options_warn_and_compute_the_same_loss():
    """options=LinearCrossEntropyOptions(...): the chunked path's loss (here the reference
    path's), and PyTorch's warning where the chunked path does not apply."""

    def prog(T, x, w, t):
        opts = T.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
        plain = T.nn.functional.linear_cross_entropy(x, w, t, options=opts)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            smooth = T.nn.functional.linear_cross_entropy(
                x, w, t, label_smoothing=0.1, options=opts
            )
        return plain, smooth, [str(c.message) for c in caught], repr(opts)

    assert_same(prog, arr(6, 4), arr(5, 4, seed=1), _targets(6, high=5), rtol=1e-10, atol=1e-12)
    for bad in (
        dict(acc_policy="fast"),
        dict(chunking_method="rows"),
        dict(chunking_method="aspect_ratio:0"),
        dict(batch_chunk_size=0),
    ):
        assert_same_error(lambda T, kw=bad: T.nn.LinearCrossEntropyOptions(**kw))


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(),
        dict(out_features=(2, 3), bias=True, reduction="sum"),
        dict(bias=True, ignore_index=1, label_smoothing=0.1, reduction="none"),
    ],
    ids=str,
)
def test_linear_cross_entropy_loss_module(kwargs):
    from twomods import check_module

    out = kwargs.get("out_features", ())
    target = _targets(3, *out, high=4, seed=2)
    check_module("LinearCrossEntropyLoss", (5, 4), kwargs, (arr(3, 5), target))


def test_linear_cross_entropy_loss_errors():
    assert_same_error(lambda T: T.nn.LinearCrossEntropyLoss(5, 4, weight=T.ones(3)))
    assert_same_error(lambda T: T.nn.LinearCrossEntropyLoss(5, 4, label_smoothing=1.5))
