"""Convolution beyond the generic op tests: per-sample gradients of a small CNN against
torch.func, double backward and forward-over-reverse against torch, vmap over both
operands (model ensembling), and PyTorch's error texts word for word."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from twolibs import arr, assert_close, assert_same, assert_same_error

import numtorch as nt
from numtorch.nn import _conv_gather

TOL = {"rtol": 1e-9, "atol": 1e-11}


def _strided_only(monkeypatch):
    for limit in ("_SMALL", "_SMALL_ADJOINT", "_LARGE"):
        monkeypatch.setattr(_conv_gather, limit, -1)


@pytest.fixture(params=["gather", "strided"])
def kernels(request, monkeypatch):
    """Run a test on the small operands' gather kernels and on the general strided ones."""
    if request.param == "strided":
        _strided_only(monkeypatch)
    return request.param


def _fn(lib):
    return nt.func if lib is nt else torch.func


def _cnn_params():
    return {
        "w1": arr(4, 1, 3, 3, seed=1) * 0.5,
        "b1": arr(4, seed=2) * 0.1,
        "w2": arr(6, 2, 2, 2, seed=3) * 0.3,
        "b2": arr(6, seed=4) * 0.1,
        "fc": arr(6 * 4 * 3, 5, seed=5) * 0.2,
    }


def _cnn_loss(lib, p, x, y):
    """conv -> relu -> grouped, dilated, strided conv -> relu -> linear -> log_softmax -> nll."""
    F = lib.nn.functional
    h = F.conv2d(x.unsqueeze(0), p["w1"], p["b1"], padding=1).relu()
    h = F.conv2d(h, p["w2"], p["b2"], stride=2, dilation=(1, 2), groups=2).relu()
    logits = h.reshape(1, -1) @ p["fc"]
    return -F.log_softmax(logits, 1).gather(1, y.reshape(1, 1)).mean()


def test_per_sample_grads_of_a_cnn_match_torch_func(no_fallback, kernels):
    def prog(lib, w1, b1, w2, b2, fc, x, y):
        p = {"w1": w1, "b1": b1, "w2": w2, "b2": b2, "fc": fc}
        per = _fn(lib).vmap(_fn(lib).grad(lambda q, a, b: _cnn_loss(lib, q, a, b)), (None, 0, 0))
        return per(p, x, y)

    x, y = arr(3, 1, 8, 8, seed=6), np.array([1, 4, 0])
    got = assert_same(prog, *_cnn_params().values(), x, y, **TOL)
    assert got["w2"].shape == (3, 6, 2, 2, 2)


def test_per_sample_grads_equal_a_loop_of_grads(no_fallback):
    p = {k: nt.tensor(v) for k, v in _cnn_params().items()}
    x, y = nt.tensor(arr(2, 1, 8, 8, seed=7)), nt.tensor([2, 3])
    per = nt.func.vmap(nt.func.grad(lambda q, a, b: _cnn_loss(nt, q, a, b)), (None, 0, 0))(p, x, y)
    for i in range(2):
        one = nt.func.grad(lambda q: _cnn_loss(nt, q, x[i], y[i]))(p)
        for k in p:
            np.testing.assert_allclose(per[k][i].numpy(), one[k].numpy(), **TOL)


@pytest.mark.parametrize(
    "name,kwargs",
    [
        ("conv2d", {"stride": 2, "padding": 1, "groups": 2}),
        ("conv2d", {"padding": "same", "dilation": 2}),
        ("conv_transpose2d", {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}),
        ("conv1d", {"dilation": 2}),
    ],
)
def test_double_backward_matches_torch(name, kwargs, kernels):
    transposed = name.startswith("conv_transpose")
    spatial = (5,) if name == "conv1d" else (5, 5)
    wshape = (4, 2, *(3,) * len(spatial))
    cin = 4 if transposed else (2 * kwargs.get("groups", 1))

    def prog(lib, x, w, b, v):
        x, w = x.requires_grad_(), w.requires_grad_()
        out = getattr(lib.nn.functional, name)(x, w, b, **kwargs)
        gx, gw = lib.autograd.grad((out * out).sum(), (x, w), create_graph=True)
        return lib.autograd.grad((gx * gx).sum() + (gw * v).sum(), (x, w))

    cout = 2 * kwargs.get("groups", 1) if transposed else 4
    assert_same(
        prog,
        arr(2, cin, *spatial, seed=1),
        arr(*wshape, seed=2),
        arr(cout, seed=3),
        arr(*wshape, seed=4),
        rtol=1e-9,
        atol=1e-10,
    )


def test_forward_over_reverse_matches_torch(no_fallback):
    def prog(lib, x, w, tx, tw):
        f = lib.func

        def g(a, b):
            return f.grad(
                lambda a, b: lib.nn.functional.conv2d(a, b, stride=2).tanh().sum(), (0, 1)
            )(a, b)

        return f.jvp(g, (x, w), (tx, tw))

    assert_same(
        prog,
        arr(2, 2, 5, 5),
        arr(3, 2, 2, 2, seed=1),
        arr(2, 2, 5, 5, seed=2),
        arr(3, 2, 2, 2, seed=3),
        **TOL,
    )


@pytest.mark.parametrize("groups", [1, 2])
def test_vmap_over_weights_and_inputs_matches_torch(groups, no_fallback, kernels):
    """Model ensembling: both operands batched fold into the groups."""

    def prog(lib, x, w, b):
        def f(xi, wi, bi):
            y = lib.nn.functional.conv2d(xi, wi, bi, padding=1, groups=groups)
            return lib.nn.functional.conv_transpose2d(y, wi, stride=2, groups=groups)

        return lib.func.vmap(f)(x, w, b)

    assert_same(
        prog, arr(3, 2, 4, 4, 4), arr(3, 4, 4 // groups, 3, 3, seed=1), arr(3, 4, seed=2), **TOL
    )


@pytest.mark.parametrize("padding", [1, (2,), "same"])
@pytest.mark.parametrize("in_dims", [(0, 0), (0, None), (None, 0)])
def test_vmap_of_padded_conv1d_matches_torch(padding, in_dims, no_fallback):
    """Padding is read per spatial dim of the logical input, whatever vmap folds in."""

    def prog(lib, x, w):
        f = lambda xi, wi: lib.nn.functional.conv1d(xi, wi, padding=padding)  # noqa: E731
        return lib.func.vmap(f, in_dims=in_dims)(x, w)

    x = arr(3, 2, 4, 7) if in_dims[0] == 0 else arr(2, 4, 7)
    w = arr(3, 5, 4, 3, seed=1) if in_dims[1] == 0 else arr(5, 4, 3, seed=1)
    assert_same(prog, x, w, **TOL)


def test_same_padding_with_an_even_kernel_warns_as_torch_does():
    x, w = nt.tensor(arr(1, 2, 5, 5)), nt.tensor(arr(3, 2, 2, 2))
    with pytest.warns(UserWarning, match="padding='same' with even kernel lengths"):
        out = nt.nn.functional.conv2d(x, w, padding="same")
    assert out.shape == (1, 3, 5, 5)


@pytest.mark.parametrize("groups", [1, 2])
def test_grads_with_a_long_contraction_match_torch(groups):
    """N * L >= 4096: the weight gradient's GEMM runs the other way round."""

    def prog(lib, x, w, g):
        x, w = x.requires_grad_(), w.requires_grad_()
        out = lib.nn.functional.conv2d(x, w, padding=1, groups=groups)
        return lib.autograd.grad(out, (x, w), g)

    assert_same(
        prog,
        arr(4, 4, 32, 32),
        arr(4, 4 // groups, 3, 3, seed=1),
        arr(4, 4, 32, 32, seed=2),
        rtol=1e-9,
        atol=1e-9,
    )


@pytest.mark.parametrize(
    "d, groups, padding, dilation",
    [(2, 1, 0, 1), (2, 2, (1, 2), (2, 1)), (3, 1, 1, 1), (3, 3, (0, 1, 2), (1, 2, 1))],
)
def test_stride_one_input_grads_match_torch(d, groups, padding, dilation, kernels):
    """At stride 1 the input gradient's GEMM runs on the padded input's grid, each kernel
    offset one run per channel that wraps from row to row."""
    conv = "conv2d" if d == 2 else "conv3d"
    size = (7, 6) if d == 2 else (5, 4, 6)

    def prog(lib, x, w):
        x = x.requires_grad_()
        kw = {"padding": padding, "dilation": dilation, "groups": groups}
        out = getattr(lib.nn.functional, conv)(x, w, **kw)
        return lib.autograd.grad((out * out).sum(), x)

    x, w = arr(2, 3 * groups, *size), arr(2 * groups, 3, *(3,) * d, seed=1)
    assert_same(prog, x, w, rtol=1e-9, atol=1e-9)


def test_input_grad_of_a_non_finite_weight_matches_torch(kernels):
    """An inf in the weight times a zero gradient is NaN only where a window reads it."""

    def prog(lib, x, w):
        x = x.requires_grad_()
        out = lib.nn.functional.conv2d(x, w)
        g = lib.ones(out.shape, dtype=out.dtype)
        g[:, :, :, :3] = 0
        return lib.autograd.grad(out, x, g)

    w = arr(3, 2, 3, 3, seed=1)
    w[1, 0, 0, 2] = np.inf
    (grad,) = assert_same(prog, arr(2, 2, 6, 7), w)
    assert 0 < np.isnan(grad.numpy()).sum() < grad.numel()


_GEOMETRIES = [
    ("conv2d", (2, 3, 8, 8), (4, 3, 3, 3), {"padding": 1}),
    ("conv2d", (1, 4, 7, 6), (6, 2, 2, 3), {"stride": (2, 1), "padding": (1, 2), "groups": 2}),
    ("conv2d", (2, 2, 9, 8), (3, 2, 3, 2), {"dilation": (2, 3), "padding": (2, 0)}),
    ("conv2d", (2, 2, 6, 6), (2, 2, 3, 3), {"padding": 3}),  # padding past the kernel
    ("conv1d", (3, 2, 9), (4, 2, 3), {"stride": 3, "padding": 2}),
    ("conv3d", (1, 2, 4, 5, 3), (2, 1, 2, 3, 2), {"padding": (1, 0, 1), "groups": 2}),
    ("conv_transpose2d", (2, 4, 3, 4), (4, 2, 3, 2), {"stride": 2, "output_padding": 1}),
    ("conv_transpose1d", (1, 2, 5), (2, 3, 3), {"stride": 3, "padding": 2, "dilation": 2}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, xs, ws, kwargs", _GEOMETRIES)
def test_small_geometries_match_torch(name, xs, ws, kwargs, dtype, kernels):
    """Values and all three gradients, on non-contiguous operands, through both kernels."""

    def prog(lib, x, w, b, g):
        t = getattr(lib, dtype)
        x = x.to(t).transpose(-1, -2).requires_grad_()  # a non-contiguous input
        w, b = w.to(t).transpose(-1, -2).requires_grad_(), b.to(t).requires_grad_()
        out = getattr(lib.nn.functional, name)(x, w, b, **kwargs)
        return (out, *lib.autograd.grad(out, (x, w, b), g.to(t)[..., : out.shape[-1]]))

    x, w = arr(*xs[:-2], xs[-1], xs[-2]), arr(*ws[:-2], ws[-1], ws[-2], seed=1)
    transposed = name.startswith("conv_transpose")
    b = arr(ws[1] * kwargs.get("groups", 1) if transposed else ws[0], seed=2)
    out = getattr(torch.nn.functional, name)(
        torch.tensor(x).transpose(-1, -2), torch.tensor(w).transpose(-1, -2), None, **kwargs
    )
    g = arr(*out.shape[:-1], out.shape[-1] + 1, seed=3)  # sliced: a non-contiguous gradient
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else TOL
    assert_same(prog, x, w, b, g, **tol)


def test_gather_forward_equals_the_strided_kernel_bitwise(monkeypatch):
    """Both kernels gather the same columns and run the same GEMM."""
    x, w = nt.tensor(arr(2, 4, 7, 6)).float(), nt.tensor(arr(6, 2, 3, 2, seed=1)).float()
    kw = {"stride": (2, 1), "padding": (1, 2), "dilation": (1, 2), "groups": 2}
    gathered = nt.nn.functional.conv2d(x, w, **kw).numpy()
    _strided_only(monkeypatch)
    np.testing.assert_array_equal(gathered, nt.nn.functional.conv2d(x, w, **kw).numpy())


@pytest.mark.parametrize(
    "kw",
    [
        {"padding": 1},
        {"padding": (1, 2), "dilation": (1, 2), "groups": 2},
        {"padding": 0, "dilation": 2, "groups": 3},
    ],
)
def test_input_grad_in_chunks_of_samples_equals_one_chunk_bitwise(kw, monkeypatch):
    """The stride-1 input gradient computes its GEMM's columns a few samples at a time; each
    element is the same dot product as in one GEMM, and the result matches torch."""
    x = nt.tensor(arr(7, 6, 9, 8)).float().requires_grad_()
    w = nt.tensor(arr(6, 6 // kw.get("groups", 1), 3, 3, seed=1)).float()
    _strided_only(monkeypatch)
    out = nt.nn.functional.conv2d(x, w, **kw)
    g = nt.tensor(arr(*out.shape, seed=2)).float()
    (whole,) = nt.autograd.grad(out, x, g)
    monkeypatch.setattr(nt.nn._conv, "_CHUNK_BYTES", 1)  # one sample at a time
    (chunked,) = nt.autograd.grad(nt.nn.functional.conv2d(x, w, **kw), x, g)
    np.testing.assert_array_equal(chunked.numpy(), whole.numpy())
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    ty = torch.nn.functional.conv2d(tx, torch.tensor(w.numpy()), **kw)
    (expected,) = torch.autograd.grad(ty, tx, torch.tensor(g.numpy()))
    np.testing.assert_allclose(chunked.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("in_dims", [(None, None, 0), (0, None, 0), (None, 0, 0), (0, 0, 0)])
def test_vmap_of_a_batched_bias_matches_torch(in_dims, groups, transposed, no_fallback):
    """The bias lands on the result's batch and channel axes wherever the convolution's
    rule puts them."""
    name = "conv_transpose2d" if transposed else "conv2d"

    def prog(lib, x, w, b):
        conv = getattr(lib.nn.functional, name)
        f = lambda xi, wi, bi: conv(xi, wi, bi, padding=1, groups=groups)  # noqa: E731
        return lib.func.vmap(f, in_dims=in_dims)(x, w, b)

    x = arr(3, 2, 4, 5, 4) if in_dims[0] == 0 else arr(2, 4, 5, 4)
    w = arr(3, 6, 4 // groups, 3, 3, seed=1) if in_dims[1] == 0 else arr(6, 4 // groups, 3, 3)
    if transposed:  # (the weight is (in, out / groups, ...): 4 in, 6 // groups * groups out)
        w = w[..., :4, :, :, :] if in_dims[1] == 0 else w[:4]
    channels = 4 // groups * groups if transposed else 6
    assert_same(prog, x, w, arr(3, channels, seed=2), **TOL)


@pytest.mark.parametrize(
    "name, ws, bias_dtype",
    [
        ("conv2d", (3, 2, 3, 3), "float64"),
        ("conv_transpose2d", (2, 3, 3, 3), "float64"),
        ("conv_transpose2d", (2, 3, 3, 3), "float32"),  # a bias of another dtype: added as is
    ],
)
def test_a_biased_conv_is_one_node_as_in_torch(name, ws, bias_dtype):
    """The bias is added in the convolution's node, whose edges include the bias's; the
    transposed form takes a bias of another dtype into the same node."""

    def graph(lib):
        x = lib.tensor(arr(1, 2, 5, 5), requires_grad=True)
        w = lib.tensor(arr(*ws, seed=1), requires_grad=True)
        b = lib.tensor(arr(3, seed=2), dtype=getattr(lib, bias_dtype), requires_grad=True)
        y = getattr(lib.nn.functional, name)(x, w, b, padding=1)
        fn = y.grad_fn
        (y * lib.tensor(arr(*y.shape, seed=3))).sum().backward()
        edges = [type(n).__name__ if n else None for n, _ in fn.next_functions]
        return (fn.name(), edges, str(y.dtype)), [t.grad.numpy() for t in (x, w, b)]

    (ours, grads), (theirs, expected) = graph(nt), graph(torch)
    assert ours == theirs == (ours[0], ["AccumulateGrad"] * 3, ours[2])
    assert ours[0] == "ConvolutionBackward0"
    for g, e in zip(grads, expected, strict=True):
        assert g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)


def test_repeated_parameters_still_raise_for_another_weight():
    """The normalized parameters are kept per argument values; their checks against the
    weight's rank still run on every call."""
    F = nt.nn.functional
    x = nt.ones(1, 2, 5, 5)
    F.conv2d(x, nt.ones(3, 2, 3, 3), stride=(1, 2))
    F.conv2d(x, nt.ones(3, 2, 3, 3), stride=[1, 2])  # a list: checked anew

    def prog(lib, x, w):
        return lib.nn.functional.conv2d(x, w, stride=(1, 2))

    assert_same_error(prog, arr(1, 2, 5, 5, 5), arr(3, 2, 3, 3, 3))
    assert_same_error(prog, arr(1, 2, 2, 2), arr(3, 2, 3, 3))


def test_unfold_then_fold_is_the_overlap_count_times_the_image():
    def prog(lib, x):
        F = lib.nn.functional
        cols = F.unfold(x, (2, 3), padding=1, stride=(1, 2))
        return F.fold(cols, (5, 6), (2, 3), padding=1, stride=(1, 2)), cols

    assert_same(prog, arr(2, 3, 5, 6), **TOL)


def test_conv2d_equals_unfold_matmul_fold():
    x, w = nt.tensor(arr(2, 3, 6, 6)), nt.tensor(arr(4, 3, 3, 3, seed=1))
    out = nt.nn.functional.conv2d(x, w)
    cols = nt.nn.functional.unfold(x, 3)
    assert_close(out, torch.tensor((w.reshape(4, -1) @ cols).reshape(2, 4, 4, 4).numpy()), **TOL)


ERRORS = [
    ("conv2d", (1, 2, 5, 5), (4, 2, 3), {}),
    ("conv2d", (5, 5), (4, 2, 3, 3), {}),
    ("conv2d", (1, 4, 5, 5), (3, 2, 3, 3), {"groups": 2}),
    ("conv2d", (1, 3, 5, 5), (4, 2, 3, 3), {"groups": 2}),
    ("conv2d", (1, 2, 5, 5), (4, 2, 3, 3), {"stride": 2, "padding": "same"}),
    ("conv2d", (1, 2, 5, 5), (4, 2, 3, 3), {"padding": "foo"}),
    ("conv2d", (1, 2, 2, 2), (4, 2, 3, 3), {}),
    ("conv2d", (1, 2, 5, 5), (4, 2, 3, 3), {"padding": -1}),
    ("conv2d", (1, 2, 5, 5), (4, 2, 3, 3), {"stride": 0}),
    ("conv2d", (1, 2, 5, 5), (4, 2, 3, 3), {"stride": (1, 1, 1)}),
    ("conv2d", (1, 2, 5, 5), (4, 2, 3, 3), {"dilation": 0}),
    ("conv2d", (1, 2, 5, 5), (4, 2, 3, 3), {"groups": 0}),
    ("conv2d", (1, 2, 5, 5), (0, 2, 3, 3), {}),
    ("conv2d", (1, 2, 5, 5), (4, 2, 3, 3, 3), {}),
    ("conv3d", (2, 5, 5), (4, 2, 3, 3, 3), {}),
    ("conv_transpose2d", (1, 2, 5, 5), (2, 4, 3, 3), {"output_padding": 1}),
    ("conv_transpose2d", (1, 2, 5, 5), (2, 4, 3, 3), {"stride": 2, "output_padding": 2}),
    ("conv_transpose2d", (1, 3, 5, 5), (2, 4, 3, 3), {}),
    ("conv_transpose2d", (1, 3, 5, 5), (3, 4, 3, 3), {"groups": 2}),
    ("conv_transpose2d", (1, 2, 2, 2), (2, 4, 3, 3), {"padding": 3}),
    ("conv_transpose2d", (1, 2, 5, 5), (2, 4, 3, 3), {"padding": "same"}),
    ("conv_transpose3d", (1, 2, 5, 5, 5), (2, 4, 3, 3, 3), {"output_padding": 1}),
    ("conv_transpose1d", (1, 2, 5), (2, 4, 3), {"output_padding": 1}),
    ("conv1d", (1, 2, 5), (4, 2, 3), {"dilation": 0}),
    ("conv1d", (1, 2, 2), (4, 2, 3), {}),
]


@pytest.mark.parametrize("name,xs,ws,kwargs", ERRORS)
def test_errors_match_torch_word_for_word(name, xs, ws, kwargs):
    def prog(lib, x, w):
        return getattr(lib.nn.functional, name)(x, w, **kwargs)

    assert_same_error(prog, arr(*xs), arr(*ws))


def test_bias_and_dtype_errors_match_torch():
    def bias(lib, x, w, b):
        return lib.nn.functional.conv2d(x, w, b)

    assert_same_error(bias, arr(1, 2, 5, 5), arr(4, 2, 3, 3), arr(3))
    assert_same_error(bias, arr(1, 2, 5, 5), arr(4, 2, 3, 3), arr(4, 1))

    def mixed(lib, x, w):
        return lib.nn.functional.conv2d(x, w.float())

    assert_same_error(mixed, arr(1, 2, 5, 5), arr(4, 2, 3, 3))


FOLD_ERRORS = [
    ("unfold", (1, 2, 2, 5, 5), (2,), {}),
    ("unfold", (1, 2, 5, 5), (7,), {}),
    ("unfold", (1, 2, 5, 5), (2,), {"stride": 0}),
    ("unfold", (1, 2, 5, 5), (2,), {"dilation": 0}),
    ("unfold", (1, 2, 5, 5), (2,), {"padding": -1}),
    ("unfold", (1, 2, 5, 5), ((2, 2, 2),), {}),
    ("unfold", (5, 5), (2,), {}),
    ("fold", (1, 7, 9), ((4, 4), 2), {}),
    ("fold", (1, 8, 10), ((4, 4), 2), {}),
    ("fold", (8,), ((4, 4), 2), {}),
    ("fold", (1, 8, 9), (4, 0), {}),
    ("fold", (1, 8, 9), ((4, 4, 4), 2), {}),
]


@pytest.mark.parametrize("name,xs,args,kwargs", FOLD_ERRORS)
def test_fold_errors_match_torch_word_for_word(name, xs, args, kwargs):
    def prog(lib, x):
        return getattr(lib.nn.functional, name)(x, *args, **kwargs)

    assert_same_error(prog, arr(*xs))


def test_unfold_and_fold_results_own_their_memory():
    # a 1x1 kernel's windows are the (padded) input itself; the result must still be a new
    # tensor, and a padded fold's inner part a copy (kernels keep temporaries in buffers
    # that the next call reuses)
    def prog(L):
        F = L.nn.functional
        x = L.ones(1, 2, 3, 3)
        u = F.unfold(x, 1)
        u.add_(1)
        p = F.unfold(L.ones(1, 1, 3, 3), 1, padding=1)
        F.unfold(L.zeros(1, 1, 3, 3), 1, padding=1)
        f = F.fold(L.ones(1, 1, 5), (3, 1), 1, padding=(1, 0))
        F.fold(L.zeros(1, 1, 5), (3, 1), 1, padding=(1, 0))
        c = F.conv_transpose1d(L.ones(1, 1, 5), L.ones(1, 1, 1), padding=1)
        F.conv_transpose1d(L.zeros(1, 1, 5), L.ones(1, 1, 1), padding=1)
        return x, u, p, f, c, u.stride(), p.stride(), f.stride(), c.stride()

    assert_same(prog)


# ------------------------------------------------------------------ conv_tbc, torch.convolution
@pytest.mark.parametrize("pad", [0, 1, 3, -1])
def test_conv_tbc_values_and_gradients(pad):
    """conv_tbc (torch's and F's) at several paddings, a negative one included: values and
    the gradients of input, weight and bias."""

    def prog(T, x, w, b):
        for t in (x, w, b):
            t.requires_grad_(True)
        out = T.conv_tbc(x, w, b, pad)
        same = T.nn.functional.conv_tbc(x, w, b, pad)
        return out, same, T.autograd.grad((out * out).sum(), (x, w, b))

    assert_same(prog, arr(6, 2, 3), arr(3, 3, 4, seed=1), arr(4, seed=2), **TOL)


def test_conv_tbc_integers_and_complex():
    """Integer operands convolve exactly; complex ones too, but refuse autograd."""

    def prog(T):
        x = T.arange(30).reshape(5, 2, 3)
        w = T.arange(36).reshape(3, 3, 4) - 10
        z = T.ones(4, 1, 2, dtype=T.complex128) * (1 + 2j)
        zw = T.ones(2, 2, 3, dtype=T.complex128) * (2 - 1j)
        return T.conv_tbc(x, w, T.arange(4), 1), T.conv_tbc(z, zw, T.zeros(3, dtype=T.complex128))

    assert_same(prog)

    def complex_grad(T):
        z = T.ones(4, 1, 2, dtype=T.complex128, requires_grad=True)
        T.conv_tbc(z, T.ones(2, 2, 3, dtype=T.complex128), T.zeros(3, dtype=T.complex128))

    assert_same_error(complex_grad)


@pytest.mark.parametrize(
    "args",
    [
        ((2, 3, 6), (4, 3, 3), True, [2], [1], [2], False, [0], 1),
        ((1, 4, 5, 4), (4, 1, 3, 2), False, [1, 2], [1, 1], [1, 1], False, [0, 0], 4),
        ((1, 4, 5), (4, 2, 3), True, [2], [1], [1], True, [1], 2),
        (
            (1, 2, 3, 4, 3),
            (2, 3, 2, 2, 2),
            False,
            [2, 1, 1],
            [0, 1, 0],
            [1, 1, 1],
            True,
            [1, 0, 0],
            1,
        ),
    ],
    ids=str,
)
def test_torch_convolution_against_the_functional_forms(args):
    """torch.convolution, plain and transposed, grouped, strided, dilated, with
    output_padding: values and gradients as PyTorch's."""
    xs, ws, has_bias, *geo = args
    out_channels = ws[1] * geo[5] if geo[3] else ws[0]

    def prog(T, x, w, b):
        for t in (x, w, b):
            t.requires_grad_(True)
        out = T.convolution(x, w, b if has_bias else None, *geo)
        return out, T.autograd.grad((out * out).sum(), (x, w, b), allow_unused=True)

    assert_same(prog, arr(*xs), arr(*ws, seed=1), arr(out_channels, seed=2), **TOL)


def test_torch_convolution_refuses_complex():
    """ATen's CPU convolution has no complex kernel (F.conv1d computes one from real parts)."""

    def prog(T, transposed):
        x = T.ones(1, 3, 5, dtype=T.complex128)
        w = T.ones(3, 3, 2, dtype=T.complex128)
        return T.convolution(x, w, None, [1], [0], [1], transposed, [0], 1)

    assert_same_error(prog, False)
    assert_same_error(prog, True)
