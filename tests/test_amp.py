"""Mixed precision: autocast regions (op dtypes per PyTorch's CPU lists, nesting, the weight
cache, gradients through the casts, transforms), the state functions and their errors,
custom_fwd/custom_bwd, and GradScaler, all against torch."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import torch
from opdb import resolve, samples
from twolibs import (
    arr,
    as_numpy,
    assert_close,
    assert_same,
    assert_same_error,
    run_both,
    to_nt,
    to_torch,
)

import numtorch as nt
from numtorch._core.op import REGISTRY

BF16_TOL = {"rtol": 2e-2, "atol": 2e-2}
F32_TOL = {"rtol": 1e-5, "atol": 1e-6}


def f32(*shape, seed=0):
    return arr(*shape, seed=seed).astype(np.float32)


# ------------------------------------------------------------------ op dtypes per the lists
LOWER = "mm bmm matmul addmm baddbmm addbmm einsum conv1d conv2d conv3d "
LOWER += "conv_transpose1d conv_transpose2d linear prelu vecdot conv_tbc "
LOWER += "scaled_dot_product_attention multi_head_attention_forward"
FP32 = "prod trace linalg_inv linalg_inv_ex linalg_solve linalg_qr linalg_cholesky "
FP32 += "linalg_eigvalsh linalg_svdvals linalg_lstsq geqrf cdist pinverse quantile nanquantile "
FP32 += "mse_loss l1_loss smooth_l1_loss huber_loss nll_loss cross_entropy kl_div "
FP32 += "binary_cross_entropy binary_cross_entropy_with_logits margin_ranking_loss "
FP32 += "hinge_embedding_loss soft_margin_loss triplet_margin_loss multi_margin_loss "
FP32 += "cosine_embedding_loss poisson_nll_loss multilabel_margin_loss grid_sample "
FP32 += "grid_sampler_2d avg_pool3d adaptive_avg_pool3d adaptive_max_pool3d max_unpool2d "
FP32 += "max_unpool3d fractional_max_pool2d ormqr linalg_householder_product"
PROMOTE = "cat stack index_copy"
SWEEP = [*LOWER.split(), *FP32.split(), *PROMOTE.split()]


def _dtypes(out, lib) -> list[str]:
    if isinstance(out, lib.Tensor):
        return [str(out.dtype).split(".")[-1]]
    if isinstance(out, (tuple, list)):
        return [d for o in out for d in _dtypes(o, lib)]
    return []


def _to_bf16(x, lib):
    if isinstance(x, lib.Tensor) and x.dtype == lib.float32:
        return x.to(lib.bfloat16)
    if isinstance(x, (list, tuple)):
        return type(x)(_to_bf16(v, lib) for v in x)
    if isinstance(x, dict):
        return {k: _to_bf16(v, lib) for k, v in x.items()}
    return x


def _autocast_dtypes(lib, op, s, low: bool):
    fn = resolve(lib, op.oracle or op.api) if lib is torch else resolve(nt, op.api)
    convert = to_torch if lib is torch else to_nt
    args, kwargs = convert(s.args), convert(s.kwargs)
    if low:
        args, kwargs = _to_bf16(args, lib), _to_bf16(kwargs, lib)
    with lib.autocast("cpu"):
        return _dtypes(fn(*args, **kwargs), lib)


@pytest.mark.parametrize("name", SWEEP)
def test_op_dtype_under_autocast_matches_torch(name):
    """Each op's result dtypes under autocast('cpu'), for float32 inputs and for bfloat16
    ones, are torch's (its first three samples)."""
    op = REGISTRY[name]
    compared = 0
    for s in samples(op, "float32")[:3]:
        for low in (False, True):
            try:
                want = _autocast_dtypes(torch, op, s, low)
            except Exception:  # noqa: BLE001 - torch has no kernel for this one
                continue
            assert _autocast_dtypes(nt, op, s, low) == want, (s, low)
            compared += 1
    assert compared


def test_each_list_changes_dtypes():
    """The facts have effect: a lower op gives bfloat16, an fp32 op float32, a promote op
    the widest, and float64 is never cast."""
    x = nt.tensor(f32(3, 3))
    with nt.autocast("cpu"):
        assert nt.mm(x, x).dtype == nt.bfloat16
        assert nt.mm(x.double(), x.double()).dtype == nt.float64
        assert nt.nn.functional.mse_loss(x.bfloat16(), x.bfloat16()).dtype == nt.float32
        assert nt.cat([x.bfloat16(), x]).dtype == nt.float32
        assert nt.cat([x.bfloat16(), x.bfloat16()]).dtype == nt.bfloat16
        assert nt.add(x, x).dtype == nt.float32  # (in no list)
    assert nt.mm(x, x).dtype == nt.float32


def test_promote_refuses_two_lower_dtypes():
    assert_same_error(
        lambda L, x: _in_autocast(L, lambda: L.cat([x.bfloat16(), x.half()])), f32(2, 2)
    )


def _in_autocast(L, f, **kw):
    with L.autocast("cpu", **kw):
        return f()


# ------------------------------------------------------------------ a model, forward and backward
def _model_prog(L, x, cw, cb, lw, lb):
    conv_w, conv_b = cw.requires_grad_(), cb.requires_grad_()
    lin_w, lin_b = lw.requires_grad_(), lb.requires_grad_()
    F = L.nn.functional
    with L.autocast("cpu", dtype=L.bfloat16):
        h = F.relu(F.conv2d(x, conv_w, conv_b, padding=1))
        y = F.linear(h.flatten(1), lin_w, lin_b)
        loss = F.mse_loss(y, L.ones_like(y, dtype=L.float32))
    loss.backward()
    return h, y, loss, conv_w.grad, conv_b.grad, lin_w.grad, lin_b.grad


def test_conv_linear_model_forward_backward_matches_torch():
    """dtypes of the activations (bfloat16), the loss (float32) and the float32 parameters'
    gradients, and their values, are torch's."""
    args = (f32(2, 3, 4, 4), f32(5, 3, 3, 3, seed=1), f32(5, seed=2))
    args += (f32(6, 80, seed=3) * 0.1, f32(6, seed=4))
    ours, theirs = run_both(_model_prog, *args)
    assert [str(t.dtype).split(".")[-1] for t in ours] == [
        "bfloat16",
        "bfloat16",
        "float32",
        *["float32"] * 4,
    ]
    assert_close(ours, theirs, **BF16_TOL)


def test_grad_fn_of_a_cast_is_to_copy():
    def prog(L, x, w):
        w.requires_grad_()
        with L.autocast("cpu"):
            y = L.mm(x, w)
        return type(y.grad_fn).__name__, type(y.grad_fn.next_functions[1][0]).__name__

    ours, theirs = run_both(prog, f32(2, 2), f32(2, 2))
    assert ours == theirs == ("MmBackward0", "ToCopyBackward0")


def test_weight_cache_within_a_region_and_cache_enabled_false():
    """A float32 leaf weight is cast once per region (both uses share the cast node), and
    not with cache_enabled=False; gradients accumulate through the shared cast."""

    def prog(L, x, w):
        w.requires_grad_()
        with L.autocast("cpu"):
            a, b = L.mm(x, w), L.mm(x, w)
            with L.autocast("cpu", cache_enabled=False):
                c = L.mm(x, w)
        shared = a.grad_fn.next_functions[1][0] is b.grad_fn.next_functions[1][0]
        fresh = c.grad_fn.next_functions[1][0] is not a.grad_fn.next_functions[1][0]
        (a.float().sum() + b.float().sum() + c.float().sum()).backward()
        return shared, fresh, w.grad

    ours, theirs = run_both(prog, f32(3, 2), f32(2, 2, seed=1))
    assert ours[:2] == theirs[:2] == (True, True)
    assert_close(ours[2], theirs[2], **BF16_TOL)


def test_nested_disabled_region_and_float16():
    def prog(L, x):
        with L.autocast("cpu"):
            a = L.mm(x, x)
            with L.autocast("cpu", enabled=False):
                b = L.mm(x, x)
                inner = L.is_autocast_enabled("cpu")
            c = L.mm(x, x)
        with L.autocast("cpu", dtype=L.float16):
            d = L.mm(x, x)
        return a, b, c, d, inner, L.is_autocast_enabled("cpu")

    ours, theirs = run_both(prog, f32(3, 3))
    assert_close(ours, theirs, **BF16_TOL)
    assert [str(t.dtype) for t in ours[:4]] == [
        "torch.bfloat16",
        "torch.float32",
        "torch.bfloat16",
        "torch.float16",
    ]


def test_decorator_and_thread_locality():
    import threading

    @nt.autocast("cpu")
    def f(x):
        seen = []
        t = threading.Thread(target=lambda: seen.append(nt.mm(x, x).dtype))
        t.start()
        t.join()
        return nt.mm(x, x).dtype, seen[0]

    assert f(nt.tensor(f32(2, 2))) == (nt.bfloat16, nt.float32)
    assert not nt.is_autocast_enabled("cpu")


def test_autocast_under_vmap_and_grad():
    """vmap and grad of a function with an autocast region inside, and an autocast region
    around them: values and dtypes as torch's."""

    def f(L, x, w):
        with L.autocast("cpu"):
            return L.mm(x[None], w).float().sum()

    def prog(L, x, w):
        per_sample = L.func.vmap(lambda xi: L.func.grad(f, argnums=1)(L, xi, w))(x)
        with L.autocast("cpu"):
            batched = L.func.vmap(lambda xi: L.mm(xi[None], w))(x)
        g = L.func.grad(f, argnums=1)(L, x[0], w)
        return per_sample, batched, g

    assert_same(prog, f32(4, 3), f32(3, 2, seed=1), **BF16_TOL)


# ------------------------------------------------------------------ state functions and errors
def test_state_functions_match_torch():
    def prog(L):
        before = (L.is_autocast_enabled(), L.is_autocast_enabled("cpu"))
        dtypes = (L.get_autocast_dtype("cpu"), L.get_autocast_dtype("cuda"))
        with L.autocast("cpu", dtype=L.float16):
            inside = (L.is_autocast_enabled("cpu"), L.get_autocast_dtype("cpu"))
        L.set_autocast_enabled("cpu", True)
        on = L.is_autocast_enabled("cpu")
        L.set_autocast_enabled("cpu", False)
        L.set_autocast_dtype("cpu", L.float16)
        set_dtype = L.get_autocast_dtype("cpu")
        L.set_autocast_dtype("cpu", L.bfloat16)
        avail = [L.amp.is_autocast_available(d) for d in ("cpu", "cuda", "xpu", "meta")]
        L.clear_autocast_cache()
        return before, str(dtypes), inside[0], str(inside[1]), on, str(set_dtype), avail

    ours, theirs = run_both(prog)
    assert ours == theirs


@pytest.mark.parametrize(
    "call",
    [
        lambda L: L.autocast("foo"),
        lambda L: L.autocast(1),
        lambda L: L.autocast("meta"),
        lambda L: L.get_autocast_dtype("foo"),
        lambda L: L.is_autocast_enabled("foo"),
        lambda L: L.autocast("cpu")(3),
        lambda L: L.amp.custom_fwd(device_type=1),
        lambda L: L.amp.GradScaler("cpu", growth_factor=1.0),
        lambda L: L.amp.GradScaler("cpu", backoff_factor=1.0),
    ],
)
def test_errors_match_torch(call):
    assert_same_error(call)


def _warnings_of(f):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f()
    return [(x.category, str(x.message).split(" (Triggered internally")[0]) for x in w]


@pytest.mark.parametrize(
    "call",
    [
        lambda L: L.autocast("cpu", dtype=L.float32),
        lambda L: L.cpu.amp.autocast(),
        lambda L: L.cpu.amp.GradScaler(),
        lambda L: L.cuda.amp.custom_fwd(lambda ctx: 0),
        lambda L: L.cuda.amp.custom_bwd(lambda ctx: 0),
        lambda L: L.is_autocast_cpu_enabled(),
        lambda L: L.get_autocast_cpu_dtype(),
        lambda L: L.set_autocast_cpu_enabled(False),
        lambda L: L.get_autocast_gpu_dtype(),
        lambda L: L.is_autocast_xla_enabled(),
    ],
)
def test_warnings_match_torch(call):
    assert _warnings_of(lambda: call(nt)) == _warnings_of(lambda: call(torch))


def test_unsupported_dtype_disables_autocast():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with nt.autocast("cpu", dtype=nt.float64):
            x = nt.tensor(f32(2, 2))
            assert nt.mm(x, x).dtype == nt.float32
            assert not nt.is_autocast_enabled("cpu")


def test_fast_path_untouched_when_autocast_is_off():
    """Outside any region no op carries a casting impl (the dispatcher's fast path)."""
    with nt.autocast("cpu"):
        assert REGISTRY["mm"].impl is not None
    assert all(op.impl is None for op in REGISTRY.values() if op.autocast and not op.composite)


# ------------------------------------------------------------------ custom_fwd / custom_bwd
def _custom_prog(cast_inputs):
    def prog(L, x, w):
        amp = L.amp

        class MyMM(L.autograd.Function):
            @staticmethod
            @amp.custom_fwd(device_type="cpu", cast_inputs=cast_inputs)
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                ctx.fwd_state = L.is_autocast_enabled("cpu")
                return a.mm(b)

            @staticmethod
            @amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                a, b = ctx.saved_tensors
                ctx.bwd_state = L.is_autocast_enabled("cpu")
                return g.mm(b.t()), a.t().mm(g)

        w.requires_grad_()
        with L.autocast("cpu"):
            y = MyMM.apply(x, w)
        y.float().sum().backward()
        node = y.grad_fn
        return y, w.grad, node.fwd_state, node.bwd_state

    return prog


@pytest.mark.parametrize("cast_inputs", [None, "float32"])
def test_custom_fwd_and_bwd_match_torch(cast_inputs):
    def prog(L, x, w):
        return _custom_prog(None if cast_inputs is None else getattr(L, cast_inputs))(L, x, w)

    ours, theirs = run_both(prog, f32(2, 3), f32(3, 2, seed=1))
    assert str(ours[0].dtype).split(".")[-1] == str(theirs[0].dtype).split(".")[-1]
    assert ours[2:] == theirs[2:]
    assert_close(ours[:2], theirs[:2], **BF16_TOL)


# ------------------------------------------------------------------ GradScaler
def _scaler_run(L, w0, grads, make, steps_between=None):
    """SGD steps with a GradScaler over the given gradients (an inf among them makes an
    overflow); returns the scale and the parameter after each step, and the state dict."""
    w = L.tensor(w0, requires_grad=True)
    opt = L.optim.SGD([w], lr=0.1)
    scaler = make(L)
    trail = []
    for g in grads:
        opt.zero_grad()
        loss = (w * L.tensor(g)).sum()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        trail.append((scaler.get_scale(), w.detach().clone()))
    return trail, scaler.state_dict()


def _grads(n, inf_at=()):
    out = []
    for i in range(n):
        g = f32(3, seed=i)
        if i in inf_at:
            g[1] = np.inf
        out.append(g)
    return out


def _compare_trails(ours, theirs):
    assert [s for s, _ in ours[0]] == [s for s, _ in theirs[0]]
    for (_, a), (_, b) in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(as_numpy(a), as_numpy(b), **F32_TOL)
    assert ours[1] == theirs[1]


def test_grad_scaler_skips_on_inf_and_backs_off():
    def make(L):
        return L.amp.GradScaler("cpu", init_scale=1024.0)

    grads = _grads(5, inf_at=(1, 3))
    _compare_trails(_scaler_run(nt, f32(3), grads, make), _scaler_run(torch, f32(3), grads, make))


def test_grad_scaler_grows_after_growth_interval():
    def make(L):
        return L.amp.GradScaler("cpu", init_scale=4.0, growth_factor=3.0, growth_interval=2)

    grads = _grads(7, inf_at=(4,))
    _compare_trails(_scaler_run(nt, f32(3), grads, make), _scaler_run(torch, f32(3), grads, make))


def test_grad_scaler_state_dict_round_trip_and_pickle():
    def prog(L):
        a = L.amp.GradScaler("cpu", init_scale=8.0, growth_interval=3)
        _scaler_run(L, f32(3), _grads(2), lambda L: a)
        b = L.amp.GradScaler("cpu")
        b.load_state_dict(a.state_dict())
        c = pickle.loads(pickle.dumps(b))
        return a.state_dict(), b.state_dict(), c.state_dict(), c.get_scale()

    ours, theirs = run_both(prog)
    assert ours == theirs


def test_grad_scaler_errors_and_unscale():
    def prog(L, w0, g):
        w = L.tensor(w0, requires_grad=True)
        opt = L.optim.SGD([w], lr=0.1)
        scaler = L.amp.GradScaler("cpu", init_scale=4.0)
        texts = []
        for bad in (lambda: scaler.step(opt), lambda: scaler.update()):
            try:
                bad()
            except AssertionError as e:
                texts.append(str(e))
        scaler.scale((w * L.tensor(g)).sum()).backward()
        scaler.unscale_(opt)
        unscaled = w.grad.clone()
        for bad in (lambda: scaler.unscale_(opt), lambda: scaler.step(opt, closure=None)):
            try:
                bad()
            except RuntimeError as e:
                texts.append(str(e))
        scaler.step(opt)
        for bad in (lambda: scaler.step(opt), lambda: scaler.unscale_(opt)):
            try:
                bad()
            except RuntimeError as e:
                texts.append(str(e))
        scaler.update(2.0)
        scaled = scaler.scale([w.sum(), (w * 2,)])
        return texts, unscaled, w.detach(), scaler.get_scale(), scaled

    assert_same(prog, f32(3), f32(3, seed=1), **F32_TOL)


def test_grad_scaler_disabled_passes_through():
    def prog(L, w0, g):
        w = L.tensor(w0, requires_grad=True)
        opt = L.optim.SGD([w], lr=0.1)
        scaler = L.amp.GradScaler("cpu", enabled=False)
        loss = (w * L.tensor(g)).sum()
        scaled = scaler.scale(loss)
        scaled.backward()
        scaler.step(opt)
        scaler.update()
        return scaled, w.detach(), scaler.get_scale(), scaler.is_enabled(), scaler.state_dict()

    assert_same(prog, f32(3), f32(3, seed=1), **F32_TOL)
