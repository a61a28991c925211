"""Linear, embedding, distances and attention: what the generic op tests can't see
(gradients that are not derivatives, in-place renormalization, zero-distance gradients,
dropout, error texts), against PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from twolibs import (
    TENSORS,
    arr,
    assert_close,
    assert_same,
    assert_same_error,
    op_tol,
    run_both,
)

import numtorch as nt


def _grads(lib, fn, *tensors):
    """fn's value and the gradients of sum(fn * fixed weights) w.r.t. the float tensors."""
    ins = [t.requires_grad_() for t in tensors if t.dtype.is_floating_point]
    out = fn(*tensors)
    w = lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))
    return (out, *lib.autograd.grad((out * w).sum(), ins))


IDX = np.array([[1, 2, 1], [4, 1, 0]])


# ------------------------------------------------------------------ embedding
@pytest.mark.parametrize(
    "kw",
    [
        {"padding_idx": 1},
        {"padding_idx": -4},
        {"scale_grad_by_freq": True},
        {"padding_idx": 0, "scale_grad_by_freq": True},
        {"sparse": True},
    ],
)
def test_embedding_gradient_options(kw):
    def prog(lib, i, w):
        out, g = _grads(lib, lambda w: lib.nn.functional.embedding(i, w, **kw), w)
        return out, g.to_dense() if getattr(g, "is_sparse", False) else g

    assert_same(prog, IDX, arr(5, 3))


@pytest.mark.parametrize("padding_idx", [-1, 2])
def test_torch_embedding(padding_idx):
    """torch.embedding(weight, indices, padding_idx=-1, ...): the aten argument order."""

    def prog(lib, w, i):
        fn = nt.nn._embedding.torch_embedding if lib is nt else torch.embedding
        return _grads(lib, lambda w: fn(w, i, padding_idx, True), w)

    assert_same(prog, arr(5, 3), IDX)


def test_embedding_max_norm_renormalizes_weight_in_place():
    def prog(lib, i, w):
        w0 = w.clone()
        out = lib.nn.functional.embedding(i, w, max_norm=1.5, norm_type=1.0)
        return out, w, w0

    w = arr(5, 3) * 2
    (_, wn, w0), (_, wt, _) = run_both(prog, IDX, w)
    assert_close(wn, wt, rtol=1e-12)
    assert not np.allclose(wn.numpy()[[0, 1, 2, 4]], w0.numpy()[[0, 1, 2, 4]])
    np.testing.assert_array_equal(wn.numpy()[3], w0.numpy()[3])  # not referenced: untouched


def test_embedding_max_norm_bad_index_modifies_nothing():
    w = nt.tensor(arr(5, 3) * 3)
    before = w.clone()
    with pytest.raises(IndexError, match="index out of range in self"):
        nt.nn.functional.embedding(nt.tensor([1, 9]), w, max_norm=1.0)
    assert nt.equal(w, before)


def test_embedding_padding_idx_out_of_range():
    def prog(lib, i, w):
        return lib.nn.functional.embedding(i, w, padding_idx=5)

    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        prog(nt, nt.tensor(IDX), nt.tensor(arr(5, 3)))
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        prog(torch, torch.tensor(IDX), torch.tensor(arr(5, 3)))


def test_per_sample_embedding_gradients_with_padding():
    def prog(lib, w, i):
        F = lib.nn.functional
        f = lambda w, i: (F.embedding(i, w, padding_idx=1, scale_grad_by_freq=True) ** 2).sum()
        return lib.func.vmap(lib.func.grad(f), in_dims=(None, 0))(w, i)

    assert_same(prog, arr(5, 3), IDX)


@pytest.mark.parametrize(
    "kw",
    [
        {"mode": "sum", "padding_idx": 2},
        {"mode": "mean", "padding_idx": 1},
        {"mode": "max", "padding_idx": 4},
        {"mode": "mean", "max_norm": 1.0},
    ],
)
def test_embedding_bag_gradient_options(kw):
    def prog(lib, i, w, o):
        return _grads(lib, lambda w: lib.nn.functional.embedding_bag(i, w, o, **kw), w)

    assert_same(prog, np.array([1, 2, 4, 2, 1, 0, 3]), arr(5, 3) * 2, np.array([0, 3, 3, 5]))


def test_embedding_bag_per_sample_weights_gradient():
    def prog(lib, i, w, o, psw):
        F = lib.nn.functional
        f = lambda w, psw: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=psw)
        return _grads(lib, f, w, psw)

    assert_same(prog, np.array([1, 2, 4, 2, 1]), arr(5, 3), np.array([0, 2, 2]), arr(5, seed=3))


def test_embedding_bag_scale_grad_by_freq_divides_by_each_index_count():
    """PyTorch 2.13's CPU embedding_bag divides by the wrong count when an index seen once
    sorts after a repeated one (pytorch/pytorch#190063, fixed by #190264): the reference is
    embedding's scaled gradient summed per bag, which is what the fix computes."""
    i, o = np.array([1, 2, 4, 2, 1, 0, 3]), np.array([0, 3, 3, 5])

    def bag(lib, i, w, o):
        F = lib.nn.functional
        f = lambda w: F.embedding_bag(i, w, o, mode="sum", padding_idx=2, scale_grad_by_freq=True)
        return _grads(lib, f, w)

    def reference(lib, i, w, seg):
        def f(w):
            rows = lib.nn.functional.embedding(i, w, padding_idx=2, scale_grad_by_freq=True)
            rows = rows * (i != 2).unsqueeze(1)
            return lib.zeros(4, 3, dtype=w.dtype).index_add(0, seg, rows)

        return _grads(lib, f, w)

    w = arr(5, 3)
    got = bag(nt, nt.tensor(i), nt.tensor(w), nt.tensor(o))
    want = reference(torch, torch.tensor(i), torch.tensor(w), torch.tensor([0, 0, 0, 2, 2, 3, 3]))
    assert_close(got, want, rtol=1e-12)


def test_embedding_bag_errors():
    F = "nn.functional.embedding_bag"

    def call(*a, **kw):
        return lambda lib, *t: getattr(lib.nn.functional, F.rsplit(".", 1)[1])(*t, *a, **kw)

    w = arr(5, 3)
    assert_same_error(call(), np.array([1, 2]), w, np.array([0, 3]))
    assert_same_error(call(), np.array([1, 2]), w, np.array([[0]]))
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        nt.nn.functional.embedding_bag(nt.tensor([[1, 2]]), nt.tensor(w), nt.tensor([0]))
    assert_same_error(call(), np.array([1, 2]), w[0])

    def weighted(lib, i, w, o, psw):
        return lib.nn.functional.embedding_bag(i, w, o, mode="sum", per_sample_weights=psw)

    assert_same_error(weighted, np.array([1, 2]), w, np.array([0]), np.ones(3))
    assert_same_error(weighted, np.array([1, 2]), w, np.array([0]), np.ones(2, np.float32))


# ------------------------------------------------------------------ distances
@pytest.mark.parametrize("p", [2.0, 1.0, 0.5, 3.0, math.inf, 0.0])
@pytest.mark.parametrize("mode", ["use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"])
def test_cdist_gradient_at_zero_distance(p, mode):
    """cdist(x, x) and repeated rows: PyTorch's gradient is 0 where a distance is 0."""

    def prog(lib, x, y):
        y = lib.cat([x[:2], y])
        return _grads(lib, lambda x, y: lib.cdist(x, y, p, compute_mode=mode), x, y)

    x = arr(4, 3)
    x[3] = x[1]
    assert_same(prog, x, arr(2, 3), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("p", [2.0, 1.5, math.inf])
def test_cdist_second_order_matches_finite_differences(p):
    """torch has no double backward for cdist; check the Hessian-vector product by finite
    differences of the gradient."""
    x, y = arr(3, 2), arr(4, 2, seed=1)
    v = arr(3, 2, seed=2)

    def grad_at(xa):
        xt = nt.tensor(xa).requires_grad_()
        out = nt.cdist(xt, nt.tensor(y), p) ** 2
        return nt.autograd.grad(out.sum(), xt, create_graph=True)[0]

    xt = nt.tensor(x).requires_grad_()
    (g,) = nt.autograd.grad((nt.cdist(xt, nt.tensor(y), p) ** 2).sum(), xt, create_graph=True)
    (hv,) = nt.autograd.grad((g * nt.tensor(v)).sum(), xt)
    eps = 1e-6
    fd = ((grad_at(x + eps * v) - grad_at(x - eps * v)) / (2 * eps)).detach().numpy()
    np.testing.assert_allclose(hv.numpy(), fd, rtol=1e-5, atol=1e-7)


def test_cdist_large_uses_mm_and_matches():
    def prog(lib, x, y):
        return _grads(lib, lambda x, y: lib.cdist(x, y), x, y)

    assert_same(prog, arr(30, 4), arr(28, 4, seed=1), rtol=1e-8, atol=1e-10)


def test_pdist_duplicate_rows_gradient():
    def prog(lib, x):
        return _grads(lib, lambda x: lib.nn.functional.pdist(x), x)

    x = arr(4, 3)
    x[2] = x[0]
    assert_same(prog, x, rtol=1e-9, atol=1e-12)


def test_cosine_similarity_zero_vector():
    def prog(lib, a, b):
        return _grads(lib, lambda a, b: lib.nn.functional.cosine_similarity(a, b), a, b)

    a = arr(3, 4)
    a[1] = 0
    assert_same(prog, a, arr(3, 4, seed=1), rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------------ linear
def test_per_sample_linear_gradients():
    def prog(lib, w, b, x):
        F = lib.nn.functional
        f = lambda w, b, x: F.linear(x, w, b).relu().sum()
        return lib.func.vmap(lib.func.grad(f, argnums=(0, 1)), in_dims=(None, None, 0))(w, b, x)

    assert_same(prog, arr(4, 6), arr(4), arr(5, 6, seed=1))


def test_linear_errors():
    def prog(lib, x, w):
        return lib.nn.functional.linear(x, w)

    assert_same_error(prog, arr(2, 3), arr(5, 4))
    assert_same_error(prog, arr(2, 2, 3), arr(5, 4))
    assert_same_error(prog, arr(3), arr(5, 4))
    assert_same_error(prog, arr(2, 3), arr(2, 5, 3))


def _linear_operands(case: str, dtype):
    x, w, b = arr(3, 5).astype(dtype), arr(4, 5, seed=1).astype(dtype), arr(4, seed=2)
    b = b.astype(dtype)
    if case == "no bias":
        b = None
    elif case == "2-d bias":
        b = arr(3, 4, seed=2).astype(dtype)
    elif case == "transposed":
        x, w = np.ascontiguousarray(x.T).T, np.ascontiguousarray(w.T).T
    elif case == "empty batch":
        x = x[:0]
    elif case == "one inner":
        x, w = x[:, :1], w[:, :1]
    return x, w, b


LINEAR_CASES = ["bias", "no bias", "2-d bias", "transposed", "empty batch", "one inner"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", LINEAR_CASES)
def test_unrecorded_linear_is_the_dispatched_product(case, dtype):
    """Where nothing records or observes it, linear is one kernel call: the values (to the
    bit), dtype and strides of the ops it is written with (addmm, or matmul without a bias),
    and PyTorch's values."""
    x, w, b = _linear_operands(case, dtype)
    tx, tw = nt.tensor(x), nt.tensor(w)
    if case == "transposed":
        tx, tw = nt.tensor(x.T).T, nt.tensor(w.T).T
    tb = None if b is None else nt.tensor(b)
    out = nt.nn.functional.linear(tx, tw, tb)
    ref = tx @ tw.t() if tb is None else nt.addmm(tb, tx, tw.t())
    assert out.dtype == ref.dtype and out.shape == ref.shape and out.stride() == ref.stride()
    assert np.array_equal(out.numpy(), ref.numpy())
    assert out.grad_fn is None and not out.requires_grad
    assert_same(
        lambda lib, x, w, b=None: lib.nn.functional.linear(x, w, b),
        *(x, w, b)[: 2 + (b is not None)],
        **op_tol(np.dtype(dtype).name),
    )


@pytest.mark.parametrize("case", LINEAR_CASES)
def test_linear_records_pytorchs_graph(case):
    """A weight that requires grad: AddmmBackward0 over TBackward0 (MmBackward0 without a
    bias), and PyTorch's gradients; under no_grad nothing is recorded."""
    x, w, b = _linear_operands(case, np.float64)

    def prog(lib, x, w, b=None):
        w.requires_grad_()
        with lib.no_grad():
            quiet = lib.nn.functional.linear(x, w, b)
        out = lib.nn.functional.linear(x, w, b)
        names = [out.grad_fn.name()] + [
            f[0].name() for f in out.grad_fn.next_functions if f[0] is not None
        ]
        (gw,) = lib.autograd.grad((out * out).sum(), w)
        return quiet.requires_grad, names, out, gw

    ours, theirs = run_both(prog, *(x, w, b)[: 2 + (b is not None)])
    assert ours[:2] == theirs[:2]
    assert_close(ours[2:], theirs[2:])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", LINEAR_CASES)
def test_linear_gradients_on_arrays_are_the_formulas(case, dtype):
    """addmm's factor gradients computed on arrays (a backward pass nothing observes) are
    its formulas' to the bit, with their strides."""
    from numtorch.autograd import node

    x, w, b = _linear_operands(case, dtype)
    gos = np.cos(np.arange(x.shape[0] * 4)).reshape(x.shape[0], 4).astype(dtype)

    def grads(forms: bool):
        node.use_array_forms(forms)
        try:
            tx, tw = nt.tensor(x, requires_grad=True), nt.tensor(w, requires_grad=True)
            tb = None if b is None else nt.tensor(b, requires_grad=True)
            out = nt.nn.functional.linear(tx, tw, tb)
            leaves = [t for t in (tx, tw, tb) if t is not None]
            return nt.autograd.grad(out, leaves, nt.tensor(gos))
        finally:
            node.use_array_forms(True)

    for got, want in zip(grads(True), grads(False)):
        assert got.dtype == want.dtype and got.stride() == want.stride()
        assert np.array_equal(got.numpy(), want.numpy())


def test_linear_under_inference_mode_and_dispatch_modes():
    """The short path is left where a mode observes ops: a dispatch mode sees PyTorch's t
    and addmm; inference mode gives an inference tensor."""
    from numtorch.utils._python_dispatch import TorchDispatchMode

    seen = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    x, w, b = (nt.tensor(a) for a in _linear_operands("bias", np.float32))
    with Log():
        nt.nn.functional.linear(x, w, b)
    assert seen == ["aten.t.default", "aten.addmm.default"]
    with nt.inference_mode():
        out = nt.nn.functional.linear(x, w, b)
    assert out.is_inference()


def test_linear_mixed_dtypes_raise_addmms_error():
    def prog(lib, x, w, b):
        return lib.nn.functional.linear(x, w, b)

    assert_same_error(prog, arr(2, 3).astype(np.float32), arr(4, 3), arr(4))
    assert_same_error(prog, arr(2, 3), arr(4, 3), arr(4).astype(np.float32))


# ------------------------------------------------------------------ attention
def test_sdpa_fully_masked_row_has_zero_gradient():
    def prog(lib, q, k, v, m):
        fn = lib.nn.functional.scaled_dot_product_attention
        return _grads(lib, lambda q, k, v: fn(q, k, v, attn_mask=m), q, k, v)

    m = np.ones((3, 5), bool)
    m[1] = False
    assert_same(prog, arr(2, 3, 4), arr(2, 5, 4), arr(2, 5, 2), m, rtol=1e-9, atol=1e-12)


def test_sdpa_float_mask_with_minus_inf_rows():
    def prog(lib, q, k, v, m):
        fn = lib.nn.functional.scaled_dot_product_attention
        return _grads(lib, lambda q, k, v: fn(q, k, v, attn_mask=m), q, k, v)

    m = arr(3, 5)
    m[0] = -math.inf
    m[2, 1:] = -math.inf
    assert_same(prog, arr(2, 3, 4), arr(2, 5, 4), arr(2, 5, 2), m, rtol=1e-9, atol=1e-12)


def test_sdpa_dropout_statistics_and_scale():
    """Each weight is dropped with probability p and the rest scaled by 1/(1-p): with
    value = ones the output row is sum(kept weights) / (1 - p), of mean 1."""
    nt.manual_seed(0)
    q, k = nt.tensor(arr(64, 16, 8)), nt.tensor(arr(64, 32, 8, seed=1))
    v = nt.ones(64, 32, 1, dtype=nt.float64)
    out = nt.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.25)
    o = out.numpy()
    assert abs(o.mean() - 1) < 0.02
    assert o.std() > 0.05
    nt.manual_seed(0)
    again = nt.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.25)
    assert nt.equal(out, again)
    zero = nt.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=1.0)
    assert float(zero.abs().sum()) == 0


def test_sdpa_dropout_under_vmap():
    F = nt.nn.functional
    q, k, v = (nt.tensor(arr(3, 2, 4, 5, seed=s)) for s in range(3))

    def f(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)

    with pytest.raises(RuntimeError, match="randomness"):
        nt.func.vmap(f)(q, k, v)
    out = nt.func.vmap(f, randomness="different")(q, k, v)
    assert out.shape == (3, 2, 4, 5)


def test_sdpa_gqa_and_causal_grads():
    def prog(lib, q, k, v):
        fn = lib.nn.functional.scaled_dot_product_attention
        return _grads(lib, lambda q, k, v: fn(q, k, v, is_causal=True, enable_gqa=True), q, k, v)

    assert_same(prog, arr(2, 4, 5, 3), arr(2, 2, 3, 3), arr(2, 2, 3, 2), rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------------ multi-head attention
def _mha_samples(need_weights: bool, seed: int = 0):
    """The op database's samples (all need_weights=True) with need_weights set."""
    from opdb import samples

    op = nt._core.op.REGISTRY["multi_head_attention_forward"]
    out = []
    for s in samples(op, "float64", seed):
        if len(s.args) > 15:  # need_weights is the 16th argument
            s = type(s)((*s.args[:15], need_weights, *s.args[16:]), s.kwargs, name=s.name)
        else:
            s = type(s)(s.args, {**s.kwargs, "need_weights": need_weights}, name=s.name)
        out.append(s)
    return out


MHA_IDS = [s.name for s in _mha_samples(False)]


def _mha_prog(s):
    """lib -> (out, weights, grads of sum(out * w) for every float argument)."""

    def prog(lib):
        from twolibs import to_nt, to_torch

        conv = to_nt if lib is nt else to_torch
        args, kwargs = conv(s.args, True), conv(s.kwargs)
        ins = [a for a in args if isinstance(a, TENSORS) and a.requires_grad]
        out, weights = lib.nn.functional.multi_head_attention_forward(*args, **kwargs)
        w = lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))
        return out, weights, lib.autograd.grad((out * w).sum(), ins, allow_unused=True)

    return prog


@pytest.mark.parametrize("k", range(len(MHA_IDS)), ids=MHA_IDS)
def test_multi_head_without_weights_matches_torch(k):
    """need_weights=False runs scaled_dot_product_attention (is_causal as a hint)."""
    s = _mha_samples(False)[k]
    ours, theirs = run_both(_mha_prog(s))
    assert ours[1] is None
    assert_close(ours, theirs, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("k", range(len(MHA_IDS)), ids=MHA_IDS)
def test_multi_head_without_weights_vmap_and_jvp(k, no_fallback):
    """vmap over every tensor argument (masks included) with out_dims=(0, None), against a
    loop; and forward mode against finite differences."""
    group = [_mha_samples(False, seed)[k] for seed in range(2)]
    pos = [i for i, a in enumerate(group[0].args) if isinstance(a, np.ndarray)]
    kw = {
        key: nt.tensor(v) if isinstance(v, np.ndarray) else v for key, v in group[0].kwargs.items()
    }
    mha = nt.nn.functional.multi_head_attention_forward

    def f(*xs):
        args = list(group[0].args)
        for i, x in zip(pos, xs):
            args[i] = x
        return mha(*args, **kw)

    xs = [nt.tensor(np.stack([s.args[i] for s in group])) for i in pos]
    got, none = nt.vmap(f, out_dims=(0, None))(*xs)
    assert none is None
    want = nt.stack([f(*(x[b] for x in xs))[0] for b in range(2)])
    assert_close(got, want, rtol=1e-10, atol=1e-12)

    prims = [nt.tensor(group[0].args[i]) for i in pos]
    fl = [j for j, p in enumerate(prims) if p.dtype.is_floating_point]
    rng = np.random.default_rng(1)
    tans = [nt.tensor(rng.standard_normal(tuple(prims[j].shape))) for j in fl]

    def g(*fs):
        xs = list(prims)
        for j, x in zip(fl, fs):
            xs[j] = x
        return f(*xs)[0]

    _, t = nt.func.jvp(g, tuple(prims[j] for j in fl), tuple(tans))
    eps = 1e-6
    hi = g(*(prims[j] + eps * d for j, d in zip(fl, tans)))
    lo = g(*(prims[j] - eps * d for j, d in zip(fl, tans)))
    np.testing.assert_allclose(t.numpy(), ((hi - lo) / (2 * eps)).numpy(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("k", range(len(MHA_IDS)), ids=MHA_IDS)
def test_multi_head_without_weights_second_order(k):
    """Hessian-vector products against finite differences of the gradient (PyTorch has no
    double backward for its CPU attention kernel)."""
    s = _mha_samples(False)[k]
    pos = [i for i, a in enumerate(s.args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    kw = {key: nt.tensor(v) if isinstance(v, np.ndarray) else v for key, v in s.kwargs.items()}
    rng = np.random.default_rng(4)
    u = [rng.standard_normal(s.args[i].shape) for i in pos]

    def grads(shift, create_graph=False):
        args = [nt.tensor(a) if isinstance(a, np.ndarray) else a for a in s.args]
        ins = [nt.tensor(s.args[i] + shift * d).requires_grad_() for i, d in zip(pos, u)]
        for i, x in zip(pos, ins):
            args[i] = x
        out, _ = nt.nn.functional.multi_head_attention_forward(*args, **kw)
        w = nt.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))
        gs = nt.autograd.grad((out * w).sum(), ins, create_graph=create_graph, allow_unused=True)
        return ins, [nt.zeros_like(x) if g is None else g for g, x in zip(gs, ins)]

    ins, gs = grads(0.0, create_graph=True)  # static_k/v: key and value are not used
    total = sum((g * nt.tensor(d)).sum() for g, d in zip(gs, u) if g.requires_grad)
    hv = nt.autograd.grad(total, ins, allow_unused=True)  # the biases enter linearly
    eps = 1e-6
    for h, hi, lo in zip(hv, grads(eps)[1], grads(-eps)[1]):
        fd = (hi - lo).numpy() / (2 * eps)
        np.testing.assert_allclose(0 * fd if h is None else h.numpy(), fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("same", ["self", "key is value"])
def test_multi_head_shared_inputs_match_torch(same, need_weights):
    """Self-attention (query is key is value: one projection GEMM) and encoder-decoder
    attention (key is value: two), with their gradients."""

    def prog(lib, x, m, w, b, wo, bo):
        for t in (x, m, w, b):
            t.requires_grad_()
        kv = x if same == "self" else m
        out, weights = lib.nn.functional.multi_head_attention_forward(
            x, kv, kv, 4, 2, w, b, None, None, False, 0.0, wo, bo, need_weights=need_weights
        )
        return out, weights, lib.autograd.grad(out.square().sum(), [x, kv, w, b])

    assert_same(
        prog,
        arr(3, 2, 4),
        arr(3, 2, 4, seed=1),
        arr(12, 4, seed=2),
        arr(12, seed=3),
        arr(4, 4, seed=4),
        arr(4, seed=5),
        rtol=1e-9,
        atol=1e-12,
    )


@pytest.mark.parametrize("need_weights", [True, False])
def test_multi_head_every_key_padded(need_weights):
    """A batch element with every key padded: nan with the weights (softmax of -inf), zeros
    through scaled_dot_product_attention, as in PyTorch."""

    def prog(lib, q, w, wo, m):
        F = lib.nn.functional
        return F.multi_head_attention_forward(
            q,
            q,
            q,
            4,
            2,
            w,
            None,
            None,
            None,
            False,
            0.0,
            wo,
            None,
            key_padding_mask=m,
            need_weights=need_weights,
        )

    m = np.array([[True, True, True], [False, True, False]])
    out = assert_same(prog, arr(3, 2, 4), arr(12, 4, seed=1), arr(4, 4, seed=2), m)
    assert np.isnan(out[0].numpy()[:, 0]).all() == need_weights


def test_multi_head_dropout_draws_one_mask_for_the_weights():
    """The returned per-head weights are the softmax weights with F.dropout applied (the
    same draw, seeded), and the scaled_dot_product_attention path draws the same mask."""
    F = nt.nn.functional
    q, w, wo = (nt.tensor(arr(*s, seed=i)) for i, s in enumerate([(5, 2, 4), (12, 4), (4, 4)]))

    def mha(p, need_weights=True, training=True):
        return F.multi_head_attention_forward(
            q,
            q,
            q,
            4,
            2,
            w,
            None,
            None,
            None,
            False,
            p,
            wo,
            None,
            training=training,
            need_weights=need_weights,
            average_attn_weights=False,
        )

    _, clean = mha(0.0)
    nt.manual_seed(3)
    out, dropped = mha(0.4)
    nt.manual_seed(3)
    assert nt.equal(dropped, F.dropout(clean.reshape(4, 5, 5), 0.4).reshape(2, 2, 5, 5))
    nt.manual_seed(3)
    assert_close(mha(0.4, need_weights=False)[0], out, rtol=1e-12, atol=1e-14)
    assert nt.equal(mha(0.4, training=False)[1], clean)


def test_multi_head_dropout_statistics():
    F = nt.nn.functional
    q, w, wo = (nt.tensor(arr(*s, seed=i)) for i, s in enumerate([(40, 8, 4), (12, 4), (4, 4)]))
    nt.manual_seed(0)
    _, weights = F.multi_head_attention_forward(
        q, q, q, 4, 2, w, None, None, None, False, 0.25, wo, None, average_attn_weights=False
    )
    kept = weights.numpy() != 0
    assert abs(kept.mean() - 0.75) < 0.01
    # each kept row sums (in expectation) to 1 / (1 - p) * (1 - p) = 1
    assert abs(weights.numpy().sum(-1).mean() - 1) < 0.01


def test_multi_head_per_sample_gradients():
    """vmap(grad) over a batch of unbatched (L, E) sequences, weights shared."""

    def prog(lib, x, w, wo):
        F = lib.nn.functional

        def loss(w, x):
            out, _ = F.multi_head_attention_forward(
                x, x, x, 4, 2, w, None, None, None, False, 0.0, wo, None, need_weights=False
            )
            return out.square().sum()

        return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0))(w, x)

    assert_same(prog, arr(3, 5, 4), arr(12, 4, seed=1), arr(4, 4, seed=2), rtol=1e-9, atol=1e-12)


def _mha_call(*args, **kwargs):
    return lambda lib, q, k, v: lib.nn.functional.multi_head_attention_forward(
        q,
        k,
        v,
        *(lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args),
        **{n: lib.tensor(a) if isinstance(a, np.ndarray) else a for n, a in kwargs.items()},
    )


@pytest.mark.parametrize(
    "kw",
    [
        {"static_k": arr(4, 2, 3)},
        {"static_k": arr(4, 2, 2), "static_v": arr(4, 2, 1)},
        {"key_padding_mask": np.ones((1, 2), bool)},
        {"attn_mask": np.ones((4, 3, 3), bool)},
        {"attn_mask": np.ones((3, 3), bool), "is_causal": True},
        {"attn_mask": np.ones((3, 2)), "is_causal": True, "key_padding_mask": np.ones((2, 1))},
        {"attn_mask": np.ones((3, 2), np.int64)},
        {
            "use_separate_proj_weight": True,
            "q_proj_weight": arr(4, 4),
            "k_proj_weight": arr(4, 4),
            "v_proj_weight": arr(4, 3),
        },
    ],
)
def test_multi_head_errors_match_torch(kw):
    """Exact type and text (the sample errors match a fragment)."""
    call = _mha_call(4, 2, arr(12, 4), None, None, None, False, 0.0, arr(4, 4), None, **kw)
    assert_same_error(call, arr(3, 2, 4), arr(2, 2, 4), arr(2, 2, 4))


def test_multi_head_mismatched_mask_types_warn():
    call = _mha_call(
        4,
        2,
        arr(12, 4),
        None,
        None,
        None,
        False,
        0.0,
        arr(4, 4),
        None,
        key_padding_mask=np.zeros((2, 2), bool),
        attn_mask=np.zeros((3, 2)),
    )
    for lib in (nt, torch):
        with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and attn"):
            call(lib, *(lib.tensor(arr(*s)) for s in [(3, 2, 4), (2, 2, 4), (2, 2, 4)]))


@pytest.mark.parametrize(
    "input_shape, bias_shape",
    [((2, 3), (3,)), ((5, 2, 3), (3,)), ((3,), (3,)), ((5, 2, 3), (7, 4)), ((2, 3), (3, 4))],
)
def test_linear_bias_shape_errors_match_torch(input_shape, bias_shape):
    """The bias is expanded to (rows of the flattened input, out_features), as PyTorch does."""

    def prog(lib, x, w, b):
        return lib.nn.functional.linear(x, w, b)

    assert_same_error(prog, arr(*input_shape), arr(4, 3, seed=1), arr(*bias_shape, seed=2))


# ==================================================================
# Causes behind the bad-input sweep's DIFFERS cases (tests/test_bad_inputs.py), fixed.


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
