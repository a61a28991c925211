"""Normalization and dropout-family behaviour the op database cannot see: running statistics
updated in place (values against torch), batch norm under vmap (per-sample statistics,
torch.func's errors), argument errors word for word, and the dropout family's masks and
statistics."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from twolibs import arr, assert_same, assert_same_error

import numtorch as nt

F32 = {"rtol": 1e-5, "atol": 1e-6}


# ------------------------------------------------------------------ running statistics
def _bn_train(T, x, rm, rv, w, b, momentum):
    out = T.nn.functional.batch_norm(x, rm, rv, w, b, training=True, momentum=momentum)
    return out, rm, rv, rm._version


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 2, 4), (2, 3, 2, 2, 2)])
@pytest.mark.parametrize("momentum", [0.1, 0.0, 1.0, 0.35])
def test_batch_norm_training_updates_running_stats_like_torch(shape, momentum):
    c = shape[1]
    args = (arr(*shape), arr(c, seed=1), arr(c, seed=2) ** 2, arr(c, seed=3), arr(c, seed=4))
    assert_same(lambda T, *a: _bn_train(T, *a, momentum), *args, rtol=1e-12, atol=1e-14)


def test_batch_norm_float32_running_stats_and_repeated_calls():
    def prog(T, x, rm, rv):
        x, rm, rv = x.float(), rm.float(), rv.float()
        outs = [T.nn.functional.batch_norm(x * k, rm, rv, training=True) for k in (1, 2, 3)]
        return outs, rm, rv

    assert_same(prog, arr(3, 4, 2), arr(4, seed=1), arr(4, seed=2) ** 2, **F32)


def test_batch_norm_eval_uses_and_keeps_running_stats():
    def prog(T, x, rm, rv, w, b):
        out = T.nn.functional.batch_norm(x, rm, rv, w, b, training=False, eps=1e-3)
        return out, rm, rv

    assert_same(prog, arr(2, 3, 4), arr(3, seed=1), arr(3, seed=2) ** 2, arr(3), arr(3, seed=5))


def test_batch_norm_zero_batch_keeps_shapes():
    def prog(T, rm, rv):
        out = T.nn.functional.batch_norm(T.zeros(0, 3, dtype=T.float64), rm, rv, training=True)
        return out.shape, rm, rv

    assert_same(prog, arr(3), arr(3, seed=2) ** 2)


def test_instance_norm_updates_running_stats_like_torch():
    def prog(T, x, rm, rv, w):
        out = T.nn.functional.instance_norm(x, rm, rv, w, momentum=0.3)
        return out, rm, rv, rm._version

    assert_same(prog, arr(2, 3, 4, 2), arr(3, seed=1), arr(3, seed=2) ** 2, arr(3, seed=3))


def test_bad_input_modifies_no_running_stat():
    rm, rv = nt.zeros(3), nt.ones(3)
    with pytest.raises(RuntimeError, match="weight should contain 3 elements not 2"):
        nt.nn.functional.batch_norm(nt.randn(4, 3), rm, rv, nt.ones(2), training=True)
    np.testing.assert_array_equal(rm.numpy(), 0)
    np.testing.assert_array_equal(rv.numpy(), 1)


def test_running_stats_and_gradients_together():
    """The update sits outside the graph; input, weight and bias get torch's gradients."""

    def prog(T, x, rm, rv, w, b):
        x, w, b = (t.requires_grad_() for t in (x, w, b))
        out = T.nn.functional.batch_norm(x, rm, rv, w, b, training=True)
        g = T.autograd.grad((out * out.detach().cos()).sum(), (x, w, b))
        return g, rm, rv

    assert_same(prog, arr(3, 2, 4), arr(2), arr(2, seed=1) ** 2, arr(2, seed=2), arr(2, seed=3))


# ------------------------------------------------------------------ batch norm under vmap
def _vmap_bn(T, x, rm, rv, dims, training=True):
    f = lambda x, rm, rv: T.nn.functional.batch_norm(x, rm, rv, training=training)  # noqa: E731
    vmap = T.vmap if T is nt else torch.func.vmap
    return vmap(f, in_dims=dims)(x, rm, rv), rm, rv


@pytest.mark.parametrize(
    "dims,rm_shape",
    [((0, 0, 0), (5, 3)), ((None, 0, 0), (5, 3)), ((1, 0, 0), (5, 3)), ((0, 1, 1), (3, 5))],
)
def test_vmap_batch_norm_batched_running_stats(dims, rm_shape):
    """Against torch's loop over the samples: torch.func.vmap itself gets in_dims=(0, 1, 1)
    wrong (its running stats differ from its own loop's); the other cases agree with it."""
    xs = {0: (5, 2, 3, 4), 1: (2, 5, 3, 4), None: (2, 3, 4)}[dims[0]]
    args = (arr(*xs), arr(*rm_shape, seed=1), arr(*rm_shape, seed=2) ** 2)
    got = _vmap_bn(nt, *(nt.tensor(a) for a in args), dims)
    x, rm, rv = (torch.tensor(a) for a in args)
    pick = lambda t, d, i: t if d is None else t.select(d, i)  # noqa: E731
    outs = [
        torch.nn.functional.batch_norm(
            pick(x, dims[0], i), pick(rm, dims[1], i), pick(rv, dims[2], i), training=True
        )
        for i in range(5)
    ]
    for g, w in zip(got, (torch.stack(outs), rm, rv)):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-14)
    if dims != (0, 1, 1):
        assert_same(lambda T, *a: _vmap_bn(T, *a, dims), *args, rtol=1e-12, atol=1e-14)


def test_vmap_batch_norm_keeps_per_sample_statistics(no_fallback):
    x = nt.tensor(arr(4, 2, 3, 5))
    got = nt.vmap(lambda v: nt.nn.functional.batch_norm(v, None, None, training=True))(x)
    want = nt.stack([nt.nn.functional.batch_norm(v, None, None, training=True) for v in x])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)


def test_vmap_batch_norm_unbatched_running_stats_is_torch_error():
    def prog(T, x, rm, rv):
        return _vmap_bn(T, x, rm, rv, (0, None, None))

    assert_same_error(prog, arr(5, 2, 3), arr(3), arr(3, seed=1) ** 2)
    rm, rv = nt.zeros(3), nt.ones(3)
    with pytest.raises(RuntimeError):
        _vmap_bn(nt, nt.tensor(arr(5, 2, 3)), rm, rv, (0, None, None))
    np.testing.assert_array_equal(rm.numpy(), 0)  # nothing was written
    np.testing.assert_array_equal(rv.numpy(), 1)


def test_vmap_batch_norm_eval_with_unbatched_running_stats():
    args = (arr(5, 2, 3, 4), arr(3, seed=1), arr(3, seed=2) ** 2)
    assert_same(lambda T, *a: _vmap_bn(T, *a, (0, None, None), training=False), *args)


def test_per_sample_gradients_of_a_batch_norm_model(no_fallback):
    """functorch's hard case: vmap(grad) through batch norm without running stats."""

    def prog(T, x, w, b, lin):
        func = T.func if T is torch else nt.func

        def loss(params, xi):
            w, b, lin = params
            h = T.nn.functional.batch_norm(xi @ lin, None, None, w, b, training=True)
            return (h.tanh() ** 2).sum()

        return func.vmap(func.grad(loss), in_dims=(None, 0))((w, b, lin), x)

    assert_same(prog, arr(4, 3, 5), arr(2), arr(2, seed=1), arr(5, 2, seed=2), rtol=1e-10)


def test_per_sample_gradients_of_norm_layers(no_fallback):
    def prog(T, x, w, b):
        func = T.func if T is torch else nt.func
        fn = T.nn.functional

        def loss(params, xi):
            w, b = params
            h = fn.layer_norm(xi, (4,), w, b)
            h = fn.group_norm(h, 2, w, b)
            h = fn.instance_norm(h, weight=w, bias=b)
            return (h.sin() * fn.rms_norm(h, (4,), w)).sum()

        return func.vmap(func.grad(loss), in_dims=(None, 0))((w, b), x)

    assert_same(prog, arr(3, 2, 4, 4), arr(4), arr(4, seed=1), rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------------ torch's broken cases
def test_group_norm_cases_torch_cannot_differentiate():
    """torch's group_norm backward fails for weight=None with a bias and for a 0-size batch
    ("tensor does not have a device"): forward against torch, gradients against the same
    function written out."""
    x, b = arr(1, 4, 2, 3), arr(4, seed=1)
    assert_same(lambda T, x, b: T.nn.functional.group_norm(x, 4, None, b), x, b)
    assert_same(
        lambda T, x: T.nn.functional.group_norm(x, 2, T.ones(4, dtype=T.float64)), arr(0, 4, 2)
    )

    def grads(f, *a):
        ts = [torch.tensor(v, requires_grad=True) for v in a]
        return torch.autograd.grad((f(*ts) ** 2).sum(), ts)

    want = grads(lambda x, b: torch.nn.functional.group_norm(x, 4) + b.reshape(4, 1, 1), x, b)
    got = nt.autograd.grad(
        *(lambda xs: ((nt.nn.functional.group_norm(xs[0], 4, None, xs[1]) ** 2).sum(), xs))(
            [nt.tensor(x, requires_grad=True), nt.tensor(b, requires_grad=True)]
        )
    )
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10, atol=1e-12)
    x0 = nt.tensor(arr(0, 4, 2), requires_grad=True)
    (g0,) = nt.autograd.grad(nt.nn.functional.group_norm(x0, 2).sum(), x0)
    assert g0.shape == (0, 4, 2)


# ------------------------------------------------------------------ argument errors
ERRORS = {
    "bn_one_value": lambda T: T.nn.functional.batch_norm(T.ones(1, 3), None, None, training=True),
    "bn_one_value_4d": lambda T: T.nn.functional.batch_norm(
        T.ones(1, 3, 1, 1), T.zeros(3), T.ones(3), training=True
    ),
    "bn_eval_no_stats": lambda T: T.nn.functional.batch_norm(T.ones(2, 3), None, None),
    "bn_momentum_none": lambda T: T.nn.functional.batch_norm(
        T.ones(2, 3), T.zeros(3), T.ones(3), training=True, momentum=None
    ),
    "bn_one_stat": lambda T: T.nn.functional.batch_norm(T.ones(2, 3), T.zeros(3), None),
    "bn_one_stat_train": lambda T: T.nn.functional.batch_norm(
        T.ones(2, 3), None, T.ones(3), training=True
    ),
    "bn_rm_size": lambda T: T.nn.functional.batch_norm(T.ones(2, 3), T.zeros(2), T.ones(3)),
    "bn_eps": lambda T: T.nn.functional.batch_norm(T.ones(2, 3), None, None, training=True, eps=0),
    "in_spatial": lambda T: T.nn.functional.instance_norm(T.ones(2, 3, 1, 1)),
    "in_eval": lambda T: T.nn.functional.instance_norm(T.ones(2, 3, 4), use_input_stats=False),
    "in_rm_size": lambda T: T.nn.functional.instance_norm(T.ones(2, 3, 4), T.zeros(4), T.ones(4)),
    "ln_shape": lambda T: T.nn.functional.layer_norm(T.ones(2, 3, 4), (5, 4)),
    "ln_weight": lambda T: T.nn.functional.layer_norm(T.ones(2, 3, 4), (3, 4), T.ones(4)),
    "ln_bias": lambda T: T.nn.functional.layer_norm(T.ones(2, 3, 4), [4], None, T.ones(3, 4)),
    "ln_empty": lambda T: T.nn.functional.layer_norm(T.ones(2, 3), []),
    "ln_int": lambda T: T.nn.functional.layer_norm(T.ones(2, 3), 3),
    "ln_rank": lambda T: T.nn.functional.layer_norm(T.ones(3), (2, 3)),
    "rms_shape": lambda T: T.nn.functional.rms_norm(T.ones(2, 3, 4), (5, 4)),
    "rms_weight": lambda T: T.nn.functional.rms_norm(T.ones(2, 3, 4), (4,), T.ones(3)),
    "gn_groups": lambda T: T.nn.functional.group_norm(T.ones(2, 6, 4), 4),
    "gn_weight": lambda T: T.nn.functional.group_norm(T.ones(2, 6, 4), 3, T.ones(6, 1)),
    "gn_rank": lambda T: T.nn.functional.group_norm(T.ones(6), 3),
    "gn_one_value": lambda T: T.nn.functional.group_norm(T.ones(1, 3, 1), 3),
    "lrn_rank": lambda T: T.nn.functional.local_response_norm(T.ones(2, 3), 2),
    "normalize_dim": lambda T: T.nn.functional.normalize(T.ones(2, 3), dim=2),
    "d1_rank": lambda T: T.nn.functional.dropout1d(T.ones(2, 3, 4, 5)),
    "d1_p": lambda T: T.nn.functional.dropout1d(T.ones(2, 3, 4), 1.5),
    "d2_p": lambda T: T.nn.functional.dropout2d(T.ones(2, 3, 4), -0.1),
    "d2_rank1": lambda T: T.nn.functional.dropout2d(T.ones(3), 0.5),
    "d3_p": lambda T: T.nn.functional.dropout3d(T.ones(2, 3, 4), 2.0),
    "ad_p": lambda T: T.nn.functional.alpha_dropout(T.ones(3), 1.5, True),
    "ad_int": lambda T: T.nn.functional.alpha_dropout(T.ones(3, dtype=T.int64), 0.5, True),
    "fad_rank": lambda T: T.nn.functional.feature_alpha_dropout(T.ones(3), 0.5, True),
    "fad_p": lambda T: T.nn.functional.feature_alpha_dropout(T.ones(2, 3), -1.0, True),
    "d2_int": lambda T: T.nn.functional.dropout2d(T.ones(2, 3, 2, dtype=T.int64), 0.5),
}


@pytest.mark.parametrize("name", list(ERRORS))
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_errors_match_torch(name):
    assert_same_error(ERRORS[name])


# ------------------------------------------------------------------ dropout family
N = 40_000
Z = 5.0


def _close_mean(x, mean, var):
    x = np.asarray(x, np.float64)
    assert abs(x.mean() - mean) < Z * np.sqrt(var / x.size), (x.mean(), mean)


CHANNEL = {
    "dropout1d": ((N // 8, 8, 3), (N // 8, 8)),
    "dropout1d_unbatched": ((N, 3), (N,)),
    "dropout2d": ((N // 8, 8, 2, 2), (N // 8, 8)),
    "dropout2d_3d_input": ((N // 8, 8, 3), (N // 8, 8)),
    "dropout3d": ((N // 8, 8, 2, 1, 2), (N // 8, 8)),
    "dropout3d_unbatched": ((N, 2, 1, 2), (N,)),
}


@pytest.mark.parametrize("name", list(CHANNEL))
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_channel_dropout_zeroes_whole_channels(name):
    shape, channels = CHANNEL[name]
    fn = getattr(nt.nn.functional, name.split("_")[0])
    nt.manual_seed(0)
    y = fn(nt.full(shape, 2.0), 0.3).numpy()
    flat = y.reshape(*channels, -1)
    assert (flat == flat[..., :1]).all()  # one draw per channel
    np.testing.assert_allclose(np.unique(y), [0.0, 2.0 / 0.7], rtol=1e-6)
    _close_mean(flat[..., 0] == 0, 0.3, 0.3 * 0.7)
    assert y.shape == shape


def test_alpha_dropout_keeps_mean_and_variance():
    nt.manual_seed(1)
    x = nt.randn(N, dtype=nt.float64)
    y = nt.nn.functional.alpha_dropout(x, 0.2, True).numpy()
    assert abs(y.mean()) < Z / np.sqrt(N) * 1.5 and abs(y.var() - 1) < 0.05
    a = 1 / np.sqrt((1.7580993408473766**2 * 0.2 + 1) * 0.8)
    dropped = a * -1.7580993408473766 + 1.7580993408473766 * a * 0.2
    frac = np.isclose(y, dropped).mean()
    _close_mean(frac, 0.2, 0.2 * 0.8 / N * N)
    kept = ~np.isclose(y, dropped)
    b = 1.7580993408473766 * a * 0.2
    np.testing.assert_allclose(y[kept], x.numpy()[kept] * a + b, rtol=1e-12)


def test_feature_alpha_dropout_per_channel():
    nt.manual_seed(2)
    y = nt.nn.functional.feature_alpha_dropout(nt.zeros(N // 4, 4, 3), 0.5, True).numpy()
    assert (y == y[..., :1]).all()
    assert len(np.unique(y)) == 2


FAMILY = {
    "dropout1d": (2, 3, 2),
    "dropout2d": (2, 3, 2, 2),
    "dropout3d": (2, 3, 2, 1, 2),
    "alpha_dropout": (2, 3),
    "feature_alpha_dropout": (2, 3, 2, 2),
}


@pytest.mark.parametrize("name", list(FAMILY))
def test_dropout_family_eval_p0_p1_inplace(name):
    fn, shape = getattr(nt.nn.functional, name), FAMILY[name]
    x = nt.ones(*shape)
    assert fn(x, 0.5, False) is x
    assert fn(x, 0.0, True) is x
    np.testing.assert_array_equal(fn(x, 1.0, True).numpy(), 0)
    z, tz = x.clone(), torch.ones(*shape)
    out = fn(z, 0.5, True, inplace=True)
    getattr(torch.nn.functional, name)(tz, 0.5, True, inplace=True)
    assert out is z and z._version == tz._version
    e = nt.ones(0, *shape[1:])
    assert fn(e, 0.5, True) is e
    w = nt.ones(*shape, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        fn(w, 0.5, True, inplace=True)


@pytest.mark.parametrize("name", ["dropout2d", "alpha_dropout", "feature_alpha_dropout"])
def test_dropout_family_gradient_is_the_mask(name):
    """d out / d input is the multiplicative noise: out(ones) - out(zeros) on the same draw."""
    fn = getattr(nt.nn.functional, name)
    x = nt.randn(6, 4, 3, dtype=nt.float64, requires_grad=True)
    draws = []
    for v in (x, nt.ones(6, 4, 3, dtype=nt.float64), nt.zeros(6, 4, 3, dtype=nt.float64)):
        nt.manual_seed(3)
        draws.append(fn(v, 0.4, True))
    (g,) = nt.autograd.grad(draws[0].sum(), x)
    np.testing.assert_allclose(g.numpy(), (draws[1] - draws[2]).numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["dropout1d", "dropout2d", "alpha_dropout"])
def test_dropout_family_vmap_randomness(name, no_fallback):
    fn = lambda v: getattr(nt.nn.functional, name)(v, 0.5, True)  # noqa: E731
    x = nt.ones(4, 8, 6, 3)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        nt.vmap(fn)(x)
    same = nt.vmap(fn, randomness="same")(x).numpy()
    assert all((same[k] == same[0]).all() for k in range(4))
    diff = nt.vmap(fn, randomness="different")(x).numpy()
    assert any((diff[k] != diff[0]).any() for k in range(1, 4))
    if name != "alpha_dropout":  # whole channels of each sample: (8, 6) of length 3
        assert (diff == diff[..., :1]).all()


def test_instance_norm_zero_batch_running_stats_like_torch():
    def prog(T, rm, rv):
        out = T.nn.functional.instance_norm(T.zeros(0, 3, 4, dtype=T.float64), rm, rv)
        return out.shape, rm, rv

    assert_same(prog, arr(3), arr(3, seed=2) ** 2)


def test_running_stats_update_under_grad_and_jvp():
    """torch.func.grad/jvp through batch norm in training mode update the running stats
    with plain values, as the native op does."""

    def prog(T, x, rm, rv):
        f = lambda x: T.nn.functional.batch_norm(x, rm, rv, training=True)  # noqa: E731
        g = T.func.grad(lambda x: (f(x) ** 3).sum())(x)
        _, t = T.func.jvp(f, (x,), (x.cos(),))
        return g, t, rm, rv, rm._version

    assert_same(prog, arr(4, 3, 2), arr(3, seed=1), arr(3, seed=2) ** 2, rtol=1e-10, atol=1e-12)


def test_nested_vmap_batch_norm_running_stats(no_fallback):
    x = nt.tensor(arr(2, 3, 4, 3, 2))
    rm, rv = nt.tensor(arr(2, 3, 3, seed=1)), nt.tensor(arr(3, 2, 3, seed=2) ** 2)
    f = lambda x, m, v: nt.nn.functional.batch_norm(x, m, v, training=True)  # noqa: E731
    got = nt.vmap(nt.vmap(f), in_dims=(0, 0, 1))(x, rm, rv)
    trm, trv = torch.tensor(arr(2, 3, 3, seed=1)), torch.tensor(arr(3, 2, 3, seed=2) ** 2)
    want = []
    for i in range(2):
        for j in range(3):
            want.append(
                torch.nn.functional.batch_norm(
                    torch.tensor(arr(2, 3, 4, 3, 2)[i, j]), trm[i, j], trv[j, i], training=True
                )
            )
    np.testing.assert_allclose(got.numpy().reshape(6, 4, 3, 2), torch.stack(want).numpy())
    np.testing.assert_allclose(rm.numpy(), trm.numpy(), rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), trv.numpy(), rtol=1e-12)


def test_vmap_instance_norm_running_stats_like_torch():
    def prog(T, x, rm, rv, dims):
        f = lambda x, m, v: T.nn.functional.instance_norm(x, m, v)  # noqa: E731
        return T.func.vmap(f, in_dims=dims)(x, rm, rv), rm, rv

    x = arr(5, 2, 3, 4)
    assert_same(prog, x, arr(5, 3, seed=1), arr(5, 3, seed=2) ** 2, (0, 0, 0), rtol=1e-12)
    assert_same_error(prog, x, arr(3, seed=1), arr(3, seed=2) ** 2, (0, None, None))


# ------------------------------------------------------------------ torch.native_* norms
def _native(name):
    """The three outputs of a torch.native_* norm, with the gradients of x, weight and bias
    through all three (cotangents of every output that requires grad), and requires_grad."""
    calls = {
        "batch_norm": lambda T, x, w, b: T.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5),
        "batch_norm_eval": lambda T, x, w, b: T.native_batch_norm(
            x, w, b, T.zeros(3, dtype=T.float64), T.ones(3, dtype=T.float64), False, 0.1, 1e-5
        ),
        "layer_norm": lambda T, x, w, b: T.native_layer_norm(x, [4, 5], None, None, 1e-3),
        "group_norm": lambda T, x, w, b: T.native_group_norm(x, w, b, 2, 3, 20, 3, 1e-5),
    }

    def prog(T, x, w, b):
        for t in (x, w, b):
            t.requires_grad_(True)
        outs = calls[name](T, x, w, b)
        live = [o for o in outs if o.requires_grad]
        cot = [T.tensor(arr(*o.shape, seed=9 + i)) for i, o in enumerate(live)]
        grads = T.autograd.grad(live, (x, w, b), cot, allow_unused=True)
        return outs, [o.requires_grad for o in outs], grads

    return prog


@pytest.mark.parametrize("name", ["batch_norm", "batch_norm_eval", "layer_norm", "group_norm"])
def test_native_norms_outputs_and_gradients(name):
    """native_batch_norm/layer_norm's statistics require no grad; native_group_norm's do,
    and their gradients add to the output's, as PyTorch's."""
    args = (arr(2, 3, 4, 5), arr(3, seed=1), arr(3, seed=2))
    assert_same(_native(name), *args, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["batch_norm", "layer_norm", "group_norm"])
def test_native_norms_tangents(name):
    """Forward mode: the output's tangent; native_group_norm's statistics carry tangents,
    the others' none (as PyTorch's)."""
    calls = {
        "batch_norm": lambda T, x: T.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5),
        "layer_norm": lambda T, x: T.native_layer_norm(x, [5], None, None, 1e-5),
        "group_norm": lambda T, x: T.native_group_norm(x, None, None, 2, 6, 4, 3, 1e-5),
    }

    def prog(T, x, t):
        fwAD = T.autograd.forward_ad
        with fwAD.dual_level():
            outs = calls[name](T, fwAD.make_dual(x, t))
            return [fwAD.unpack_dual(o).tangent for o in outs[:1]], [
                fwAD.unpack_dual(o).tangent is None for o in outs
            ]

    x = arr(2, 6, 4) if name == "group_norm" else arr(2, 3, 5)
    assert_same(prog, x, arr(*x.shape, seed=5), rtol=1e-10, atol=1e-12)


def test_native_dropout():
    """Not training (False): a copy and an all-True mask; p=0 and p=1; an empty input; the
    errors. Training: the output is input * mask / (1 - p) with a Bernoulli mask, and the
    gradient is the mask's."""

    def prog(T, x):
        return (
            T.native_dropout(x, 0.3, False),
            T.native_dropout(x, 0.0, True),
            T.native_dropout(x, 1.0, True),
            T.native_dropout(x[:0], 0.5, True),
            T.native_dropout(T.ones(3, dtype=T.int64), 0.5, False),
        )

    assert_same(prog, arr(4, 5))
    for bad in (
        lambda T: T.native_dropout(T.ones(3, dtype=T.int64), 0.5, True),
        lambda T: T.native_dropout(T.ones(3, dtype=T.complex128, requires_grad=True), 0.5, True),
    ):
        assert_same_error(bad)
    assert_same(lambda T: T.native_dropout(T.ones(3, dtype=T.complex128), 0.0, True))
    x = nt.tensor(arr(200, 50), requires_grad=True)
    out, mask = nt.native_dropout(x, 0.25, True)
    assert mask.dtype == nt.bool and 0.7 < mask.float().mean().item() < 0.8
    np.testing.assert_allclose(out.detach().numpy(), (x * mask / 0.75).detach().numpy())
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), mask.numpy() / 0.75)


def test_batch_norm_update_stats():
    """The batch mean and biased variance; the running statistics updated with the
    unbiased one; results that require grad, whose backward and forward mode raise."""

    def prog(T, x, rm, rv):
        return (
            T.batch_norm_update_stats(x, rm, rv, 0.2),
            rm,
            rv,
            T.batch_norm_update_stats(x, None, None, 0.1),
        )

    assert_same(prog, arr(4, 3, 5), arr(3, seed=1), arr(3, seed=2) ** 2, rtol=1e-12, atol=1e-14)

    def backward(T):
        x = T.tensor(arr(4, 3), requires_grad=True)
        mean, var = T.batch_norm_update_stats(x, None, None, 0.1)
        assert mean.requires_grad and var.requires_grad
        mean.sum().backward()

    def forward(T):
        with T.autograd.forward_ad.dual_level():
            x = T.autograd.forward_ad.make_dual(T.tensor(arr(4, 3)), T.ones(4, 3))
            T.batch_norm_update_stats(x, None, None, 0.1)

    assert_same_error(backward)
    assert_same_error(forward)


@pytest.mark.parametrize(
    "call",
    [
        lambda T, x: T.native_norm(x),
        lambda T, x: T.native_norm(x, 3, [1], True, T.float64),
        lambda T, x: T.batch_norm_stats(x, 1e-5),
        lambda T, x: T.batch_norm_elemt(x, None, None, x[0, :, 0], x[0, :, 0], 1e-5),
        lambda T, x: T.batch_norm_gather_stats(x, x[:, :, 0], x[:, :, 0], None, None, 0.1, 1e-5, 3),
        lambda T, x: T.batch_norm_gather_stats_with_counts(
            x, x[:, :, 0], x[:, :, 0], None, None, 0.1, 1e-5, x[:, 0, 0]
        ),
        lambda T, x: T.batch_norm_backward_reduce(
            x, x, x[0, :, 0], x[0, :, 0], None, True, True, True
        ),
        lambda T, x: T.batch_norm_backward_elemt(
            x, x, x[0, :, 0], x[0, :, 0], None, x[0, :, 0], x[0, :, 0], x[:, 0, 0]
        ),
    ],
)
def test_cuda_only_batch_norm_pieces_refuse_cpu(call):
    """PyTorch's CPU build has no kernel for these: its dispatcher's error, word for word
    up to the list of backends."""
    got = None
    try:
        call(nt, nt.tensor(arr(2, 3, 4)))
    except NotImplementedError as e:
        got = str(e)
    with pytest.raises(NotImplementedError) as ref:
        call(torch, torch.tensor(arr(2, 3, 4)))
    head = str(ref.value).split("[")[0]
    assert got is not None and got.startswith(head)


def test_distributed_batch_norm_pieces_compute_batch_norm(monkeypatch):
    """The distributed pieces (CUDA kernels in PyTorch, so checked here with the CPU refusal
    lifted) recombine into training batch norm: stats from two halves, gathered, then the
    elementwise forward and the backward reduce/elemt match F.batch_norm's output and
    gradients."""
    import numtorch.nn._aten_norm as aten

    monkeypatch.setattr(aten, "_no_cpu_kernel", lambda name, input: None)
    x = nt.tensor(arr(6, 3, 4), requires_grad=True)
    w, b = nt.tensor(arr(3, seed=1)), nt.tensor(arr(3, seed=2))
    go = nt.tensor(arr(6, 3, 4, seed=3))
    ref = nt.nn.functional.batch_norm(x, None, None, w, b, training=True, eps=1e-5)
    (ref_grad,) = nt.autograd.grad(ref, x, go)
    xd = x.detach()
    parts = [aten.batch_norm_stats(xd[:2], 1e-5), aten.batch_norm_stats(xd[2:], 1e-5)]
    means = nt.stack([p[0] for p in parts])
    invstds = nt.stack([p[1] for p in parts])
    rm, rv = nt.zeros(3, dtype=nt.float64), nt.ones(3, dtype=nt.float64)
    counts = nt.tensor([8.0, 16.0], dtype=nt.float64)
    mean, invstd = aten.batch_norm_gather_stats_with_counts(
        xd, means, invstds, rm, rv, 0.1, 1e-5, counts
    )
    out = aten.batch_norm_elemt(xd, w, b, mean, invstd, 1e-5)
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-12)
    sum_dy, sum_dy_xmu, gw, gb = aten.batch_norm_backward_reduce(
        go, xd, mean, invstd, w, True, True, True
    )
    count = nt.tensor([24], dtype=nt.int32)
    grad = aten.batch_norm_backward_elemt(go, xd, mean, invstd, w, sum_dy, sum_dy_xmu, count)
    np.testing.assert_allclose(grad.numpy(), ref_grad.numpy(), rtol=1e-10, atol=1e-12)
    theirs = torch.nn.functional.batch_norm(
        t := torch.tensor(arr(6, 3, 4), requires_grad=True),
        rmt := torch.zeros(3, dtype=torch.float64),
        rvt := torch.ones(3, dtype=torch.float64),
        torch.tensor(arr(3, seed=1), requires_grad=True),
        torch.tensor(arr(3, seed=2)),
        training=True,
        eps=1e-5,
    )
    theirs.backward(torch.tensor(arr(6, 3, 4, seed=3)))
    np.testing.assert_allclose(rm.numpy(), rmt.numpy(), rtol=1e-10)
    np.testing.assert_allclose(rv.numpy(), rvt.numpy(), rtol=1e-10)
    assert t.grad is not None
    np.testing.assert_allclose(gb.numpy(), go.sum((0, 2)).numpy(), rtol=1e-10)
    gathered = aten.batch_norm_gather_stats(xd, means[:1], invstds[:1], None, None, 0.1, 1e-5, 8)
    np.testing.assert_allclose(gathered[0].numpy(), means[0].numpy(), rtol=1e-12)


@pytest.mark.parametrize("pw,dim", [(2, 0), (3, 1), (2, 2), (1, -1), (2, -2)])
def test_norm_except_dim(pw, dim):
    def prog(T, v):
        v.requires_grad_(True)
        out = T.norm_except_dim(v, pw, dim)
        (g,) = T.autograd.grad(out.sum(), v)
        return out, g

    assert_same(prog, arr(3, 4, 2), rtol=1e-12, atol=1e-14)
