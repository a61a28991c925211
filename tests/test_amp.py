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
def _scaler_run(L, w0, grads, make, device="cpu"):
    """SGD steps with a GradScaler over the given gradients (an inf among them makes an
    overflow); returns the scale and the parameter after each step, and the state dict."""
    w = L.tensor(w0, device=device, requires_grad=True)
    opt = L.optim.SGD([w], lr=0.1)
    scaler = make(L)
    trail = []
    for g in grads:
        opt.zero_grad()
        loss = (w * L.tensor(g, device=device)).sum()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        assert w.device.type == nt.device(device).type
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


def test_grad_scaler_skips_on_inf_and_backs_off(dev):
    """Ours on either device (its scale and found-inf flag live there), torch's on the CPU."""
    grads = _grads(5, inf_at=(1, 3))
    ours = _scaler_run(nt, f32(3), grads, lambda L: L.amp.GradScaler(dev, init_scale=1024.0), dev)
    theirs = _scaler_run(torch, f32(3), grads, lambda L: L.amp.GradScaler("cpu", init_scale=1024.0))
    _compare_trails(ours, theirs)


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


# ------------------------------------------------------------------ the sweep over the op database
# (op, sample index): why numtorch's dtype under autocast differs from torch's there
SWEEP_EXCEPTIONS = {
    ("lstm", 0): "float16: torch's mkldnn LSTM has no float16 primitive on this CPU",
    ("lstm", 1): "float16: as above",
    ("lstm", 2): "float16: as above",
    ("lstm", 3): "float16: as above",
    ("lstm_packed", 1): "float16: as above (equal lengths take the mkldnn path)",
    **{
        ("view_as_complex_copy", i): "float16: torch gives complex64, outside it complex32"
        for i in range(3)
    },
    ("linalg_matrix_norm", 3): "float16 'nuc': torch refuses low precision before svdvals' cast",
    ("norm", 2): "float16 'nuc': as above",
    **{("nuclear_norm", i): "float16: as above" for i in range(4)},
    **{
        ("linalg_eigvals", i): "float16: torch's runs in float32; numtorch refuses half"
        for i in range(3)
    },
}
if torch.backends.opt_einsum.is_available():  # torch then contracts by opt_einsum's path
    SWEEP_EXCEPTIONS[("einsum", 12)] = "three operands: torch's dtype is its last step's"


def _outcome(lib, op, s, dtype: str, low: bool, region: bool):
    """The result dtypes (or "error") of an op on a sample, its float32 inputs cast to
    ``dtype`` when ``low``, inside an autocast('cpu', dtype) region when ``region``."""
    fn = resolve(lib, op.oracle or op.api) if lib is torch else resolve(nt, op.api)
    convert = to_torch if lib is torch else to_nt
    d = getattr(lib, dtype)
    try:
        args, kwargs = convert(s.args), convert(s.kwargs)
        if low:
            args, kwargs = _to_low(args, lib, d), _to_low(kwargs, lib, d)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autocast("cpu", dtype=d, enabled=region):
                return _dtypes(fn(*args, **kwargs), lib)
    except Exception:  # noqa: BLE001 - an error is an outcome too
        return "error"


def _to_low(x, lib, d):
    if isinstance(x, lib.Tensor) and x.dtype == lib.float32:
        return x.to(d)
    if isinstance(x, (list, tuple)):
        return type(x)(_to_low(v, lib, d) for v in x)
    if isinstance(x, dict):
        return {k: _to_low(v, lib, d) for k, v in x.items()}
    return x


def _has_float_input(s) -> bool:
    values = [*s.args, *s.kwargs.values()]
    values += [v for a in values if isinstance(a, (list, tuple)) for v in a]
    return any(isinstance(v, np.ndarray) and v.dtype.kind == "f" for v in values)


def _sweep_mismatches(op) -> list:
    """The (sample, dtype, low inputs, torch's, ours) where the result dtypes under autocast
    differ, except where they differ outside autocast too (a kernel's dtypes, not autocast's)."""
    bad = []
    for i, s in enumerate(samples(op, "float32")):
        if not _has_float_input(s) or (op.name, i) in SWEEP_EXCEPTIONS:
            continue
        for dtype in ("bfloat16", "float16"):
            for low in (False, True):
                want = _outcome(torch, op, s, dtype, low, True)
                got = _outcome(nt, op, s, dtype, low, True)
                if want != got and _outcome(torch, op, s, dtype, low, False) == _outcome(
                    nt, op, s, dtype, low, False
                ):
                    bad.append((i, dtype, low, want, got))
    return bad


_SWEPT = [op.name for op in REGISTRY.values() if op.samples is not None and not op.test.no_oracle]


@pytest.mark.parametrize("name", _SWEPT)
def test_sweep_result_dtypes_under_autocast_match_torch(name):
    """Over the whole op database: each sample with floating inputs gives torch's result
    dtypes under autocast('cpu', bfloat16) and ('cpu', float16), for float32 inputs and for
    inputs in the region's dtype (exceptions: SWEEP_EXCEPTIONS)."""
    assert _sweep_mismatches(REGISTRY[name]) == []


def test_sweep_exceptions_still_differ():
    """Each listed exception is a real difference (the list shrinks when one is fixed)."""
    for (name, i), _why in SWEEP_EXCEPTIONS.items():
        op, s = REGISTRY[name], samples(REGISTRY[name], "float32")[i]
        outcomes = {
            (d, low): (_outcome(torch, op, s, d, low, True), _outcome(nt, op, s, d, low, True))
            for d in ("bfloat16", "float16")
            for low in (False, True)
        }
        assert any(t != n for t, n in outcomes.values()), (name, i)


# ------------------------------------------------------------------ out=, in-place, compile
def test_out_and_inplace_forms_are_not_cast():
    """As in PyTorch (autocast kernels are the functional overloads'): ``mm(out=)`` and
    ``addmm_`` compute in their inputs' dtype, and a bfloat16 ``self`` with float32 operands
    raises addmm's own dtype error."""

    def prog(L, a):
        with L.autocast("cpu"):
            c = L.mm(a, a, out=L.empty(3, 3))
            x = a.clone().addmm_(a, a)
            return c, x, L.mm(a, a)

    ours, theirs = run_both(prog, f32(3, 3))
    assert [t.dtype for t in ours] == [nt.float32, nt.float32, nt.bfloat16]
    assert_close(ours, theirs, **F32_TOL)
    assert_same_error(lambda L, a: _in_autocast(L, lambda: a.bfloat16().addmm_(a, a)), f32(3, 3))


def test_fact_as_a_function_of_the_call():
    """pad's reflect and replicate kernels are cast to float32, its constant one is not;
    local_response_norm is cast on 4-d input only; max_pool3d is cast without indices."""
    F = "nn.functional."

    def prog(L, x2, x4, x5):
        f = resolve(L, F + "pad"), resolve(L, F + "local_response_norm")
        mp = resolve(L, F + "max_pool3d")
        with L.autocast("cpu"):
            x2, x4, x5 = x2.bfloat16(), x4.bfloat16(), x5.bfloat16()
            return (
                f[0](x2, (1, 1), mode="reflect"),
                f[0](x2, (1, 1)),
                f[1](x2.unsqueeze(0), 2),
                f[1](x4, 2),
                mp(x5, 2),
                mp(x5, 2, return_indices=True)[0],
            )

    ours, theirs = run_both(prog, f32(2, 3), f32(1, 2, 3, 3, seed=1), f32(1, 2, 2, 2, 2, seed=2))
    assert [str(t.dtype)[6:] for t in theirs] == ["float32", "bfloat16", "bfloat16"] + [
        "float32",
        "float32",
        "bfloat16",
    ]
    assert_close(ours, theirs, **BF16_TOL)


def test_compile_names_autocast_where_it_stops_tracing():
    from numtorch._dynamo.exc import Unsupported

    def f(x):
        with nt.autocast("cpu"):
            return nt.mm(x, x)

    with pytest.raises(Unsupported, match="mm under autocast"):
        nt.compile(f, fullgraph=True)(nt.tensor(f32(2, 2)))
    with pytest.warns(UserWarning, match="mm under autocast"):
        assert nt.compile(f)(nt.tensor(f32(2, 2))).dtype == nt.bfloat16


def test_rms_norm_in_bfloat16():
    def prog(L, x):
        return L.nn.functional.rms_norm(x.bfloat16(), [3])

    ours, theirs = run_both(prog, f32(2, 3))
    assert ours.dtype == nt.bfloat16
    assert_close(ours, theirs, **BF16_TOL)


# ---------------------------------------- GradScaler with optimizers that unscale themselves
FUSED = {
    "Adam": {},
    "AdamW": {"weight_decay": 0.1},
    "SGD": {"momentum": 0.9},
    "Adagrad": {},
}


def _fused_run(L, name, grads, unscale_first=False, device="cpu"):
    """Fused-optimizer steps under a GradScaler: the scale, the flag, the parameter, its
    gradient after the step (unscaled in place, or left scaled on an overflow) and the
    optimizer's state after each step."""
    w = L.tensor(f32(3), device=device, requires_grad=True)
    opt = getattr(L.optim, name)([w], lr=0.1, fused=True, **FUSED[name])
    scaler = L.amp.GradScaler(device, init_scale=8.0, growth_interval=2)
    trail = [opt._step_supports_amp_scaling]
    for g in grads:
        opt.zero_grad()
        scaler.scale((w * w * L.tensor(g, device=device)).sum()).backward()
        if unscale_first:
            scaler.unscale_(opt)
        scaler.step(opt)
        state = {k: v.clone() for k, v in opt.state[w].items()}
        trail.append((scaler.get_scale(), w.detach().clone(), w.grad.clone(), state))
        trail.append(hasattr(opt, "grad_scale") or hasattr(opt, "found_inf"))
        scaler.update()
    return trail, scaler.state_dict()


@pytest.mark.parametrize("name", sorted(FUSED))
@pytest.mark.parametrize("unscale_first", [False, True])
def test_grad_scaler_fused_optimizer_unscales_and_skips(name, unscale_first, dev):
    grads = _grads(6, inf_at=(1, 4))
    ours = _fused_run(nt, name, grads, unscale_first, dev)
    theirs = _fused_run(torch, name, grads, unscale_first)
    assert ours[1] == theirs[1]
    assert_close(ours[0], theirs[0], **F32_TOL)


def test_grad_scaler_passes_itself_to_a_step_that_takes_it():
    def prog(L):
        class Custom(L.optim.SGD):
            _step_supports_amp_scaling = True

            def step(self, closure=None, grad_scaler=None):
                self.seen = grad_scaler
                return "stepped"

        w = L.tensor(f32(3), requires_grad=True)
        opt = Custom([w], lr=0.1)
        scaler = L.amp.GradScaler("cpu", init_scale=4.0)
        scaler.scale((w * 2).sum()).backward()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = scaler.step(opt)
        texts = [(c.category.__name__, str(c.message)) for c in caught]
        return out, opt.seen is scaler, texts, w.grad.clone()

    ours, theirs = run_both(prog)
    assert ours[:3] == theirs[:3]
    assert_close(ours[3], theirs[3])
