"""The normalization and embedding layers against torch's on the same weights and data:
outputs and gradients in train and eval, running statistics after several steps, reprs,
state-dict keys and old checkpoints, default initialization, and error texts."""

from __future__ import annotations

import inspect
import math
import os
import warnings

import numpy as np
import pytest
import torch
from twolibs import arr, assert_close, assert_same, assert_same_error, fd_grad
from twomods import check_module, pair

import numtorch as nt

X3 = arr(3, 4, 5)
IDX = np.array([[1, 3, 0], [4, 3, 3]])

# (layer, constructor args, constructor kwargs, inputs)
CASES = [
    ("BatchNorm1d", (4,), {}, (arr(3, 4),)),
    ("BatchNorm1d", (4,), {"momentum": None, "eps": 1e-3}, (X3,)),
    ("BatchNorm1d", (4,), {"affine": False}, (X3,)),
    ("BatchNorm1d", (4,), {"track_running_stats": False}, (X3,)),
    ("BatchNorm1d", (4,), {"bias": False}, (X3,)),
    ("BatchNorm2d", (4,), {}, (arr(2, 4, 3, 2),)),
    ("BatchNorm3d", (2,), {"momentum": 0.3}, (arr(2, 2, 2, 3, 2),)),
    ("SyncBatchNorm", (4,), {"momentum": None}, (arr(2, 4, 3, 2),)),
    ("InstanceNorm1d", (4,), {}, (X3,)),
    ("InstanceNorm1d", (4,), {"affine": True, "track_running_stats": True}, (X3,)),
    ("InstanceNorm1d", (4,), {"affine": True}, (X3[0],)),
    ("InstanceNorm2d", (4,), {"track_running_stats": True, "momentum": 0.5}, (arr(2, 4, 3, 2),)),
    ("InstanceNorm2d", (4,), {"affine": True}, (arr(4, 3, 2),)),
    ("InstanceNorm3d", (2,), {"affine": True, "bias": False}, (arr(2, 2, 2, 3, 2),)),
    ("LayerNorm", (5,), {}, (X3,)),
    ("LayerNorm", ([4, 5],), {"eps": 1e-3, "bias": False}, (X3,)),
    ("LayerNorm", ((5,),), {"elementwise_affine": False}, (X3,)),
    ("GroupNorm", (2, 4), {}, (X3,)),
    ("GroupNorm", (1, 4), {"affine": False}, (arr(2, 4, 3, 2),)),
    ("GroupNorm", (4, 4), {"bias": False, "eps": 0.1}, (X3,)),
    ("RMSNorm", (5,), {}, (X3,)),
    ("RMSNorm", ([4, 5],), {"eps": 1e-4}, (X3,)),
    ("RMSNorm", (5,), {"elementwise_affine": False}, (X3,)),
    ("LocalResponseNorm", (3,), {}, (X3,)),
    ("LocalResponseNorm", (2,), {"alpha": 0.5, "beta": 0.5, "k": 2.0}, (arr(2, 4, 3, 2),)),
    ("Embedding", (6, 3), {}, (IDX,)),
    ("Embedding", (6, 3), {"padding_idx": -2}, (IDX,)),
    ("Embedding", (6, 3), {"padding_idx": 3, "scale_grad_by_freq": True}, (IDX,)),
    ("Embedding", (6, 3), {"max_norm": 1.0, "norm_type": 1.0}, (IDX[0],)),
    ("EmbeddingBag", (6, 3), {}, (IDX,)),
    ("EmbeddingBag", (6, 3), {"mode": "max", "padding_idx": 3}, (IDX,)),
    # torch 2.13's CPU embedding_bag scales by the wrong count when a once-used index sorts
    # after a repeated one (pytorch#190063): this input avoids that, the test below checks it
    (
        "EmbeddingBag",
        (6, 3),
        {"mode": "sum", "max_norm": 1.2, "scale_grad_by_freq": True},
        (np.array([[0, 1, 2], [2, 5, 5]]),),
    ),
    ("EmbeddingBag", (6, 3), {"mode": "sum"}, (IDX.ravel(), np.array([0, 2, 2]))),
    ("EmbeddingBag", (6, 3), {"include_last_offset": True}, (IDX.ravel(), np.array([0, 2, 6]))),
    ("EmbeddingBag", (6, 3), {"mode": "sum"}, (IDX, None, arr(2, 3))),
]


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize(
    "name, args, kwargs, inputs", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_layer_matches_torch(name, args, kwargs, inputs, train, dev):
    tmod, nmod = check_module(name, args, kwargs, inputs, train=train, device=dev)
    # running statistics (or whatever the forward wrote in place) match too
    assert_close(dict(nmod.state_dict()), dict(tmod.state_dict()), rtol=1e-12, atol=1e-14)


CLASSES = [
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "LayerNorm",
    "GroupNorm",
    "RMSNorm",
    "LocalResponseNorm",
    "CrossMapLRN2d",
    "Embedding",
    "EmbeddingBag",
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
]


@pytest.mark.parametrize("name", CLASSES)
def test_signatures_match_torch(name):
    def params(cls):
        sig = inspect.signature(cls)
        return [(p.name, p.kind, p.default) for p in sig.parameters.values()]

    assert params(getattr(nt.nn, name)) == params(getattr(torch.nn, name))


# ------------------------------------------------------------------ running statistics
def _steps(T, xs, mod):
    """Three training steps, then eval: the outputs, the buffers after each step."""
    seen = []
    for x in xs:
        out = mod(x)
        seen.append([out, *(b.clone() for b in mod.buffers())])
    mod.eval()
    seen.append(mod(xs[0]))
    return seen


@pytest.mark.parametrize(
    "name, kwargs, shape",
    [
        ("BatchNorm1d", {}, (3, 4)),
        ("BatchNorm1d", {"momentum": None}, (3, 4, 2)),
        ("BatchNorm2d", {"momentum": None, "affine": False}, (2, 4, 2, 2)),
        ("BatchNorm3d", {"momentum": 0.7}, (2, 4, 1, 2, 2)),
        ("BatchNorm1d", {"track_running_stats": False}, (3, 4)),
        ("InstanceNorm1d", {"track_running_stats": True}, (2, 4, 3)),
        ("InstanceNorm2d", {"track_running_stats": True, "momentum": None}, (2, 4, 2, 2)),
    ],
)
def test_running_stats_over_several_steps(name, kwargs, shape):
    xs = [arr(*shape, seed=s) * (s + 1) + s for s in range(3)]

    def prog(T, *xs):
        mod = getattr(T.nn, name)(shape[1], **kwargs).double()
        return _steps(T, xs, mod)

    got = assert_same(prog, *xs, rtol=1e-12, atol=1e-14)
    if kwargs.get("momentum", 0.1) is None and name.startswith("Batch"):
        # the cumulative average: the running mean is the mean of the batch means
        dims = (0, *range(2, len(shape)))
        want = np.mean([x.mean(dims) for x in xs], axis=0)
        np.testing.assert_allclose(got[2][1].numpy(), want, rtol=1e-12)
        assert int(got[2][3]) == 3


def test_batchnorm_eval_without_running_stats_uses_batch_statistics():
    def prog(T, x):
        mod = T.nn.BatchNorm1d(4, track_running_stats=False).double().eval()
        return mod(x), mod.running_mean, mod.num_batches_tracked

    out = assert_same(prog, arr(3, 4))
    assert out[1] is None and out[2] is None


def test_reset_running_stats_and_parameters():
    def prog(T, x):
        mod = T.nn.BatchNorm1d(4).double()
        mod(x)
        with T.no_grad():
            mod.weight.mul_(3)
            mod.bias.add_(1)
        before = [t.clone() for t in mod.state_dict().values()]
        mod.reset_running_stats()
        after_stats = [t.clone() for t in mod.state_dict().values()]
        mod.reset_parameters()
        return before, after_stats, dict(mod.state_dict())

    assert_same(prog, arr(3, 4))


def test_default_parameters_buffers_and_dtypes():
    bn = nt.nn.BatchNorm2d(3)
    assert bn.weight.dtype == nt.float32 and bn.weight.requires_grad
    assert bn.num_batches_tracked.dtype == nt.int64 and bn.num_batches_tracked.dim() == 0
    assert bn.running_mean.tolist() == [0, 0, 0] and bn.running_var.tolist() == [1, 1, 1]
    assert bn.weight.tolist() == [1, 1, 1] and bn.bias.tolist() == [0, 0, 0]
    ln = nt.nn.LayerNorm((2, 3), dtype=nt.float64)
    assert ln.weight.dtype == nt.float64 and ln.weight.shape == (2, 3)
    assert ln.bias.sum().item() == 0 and ln.weight.sum().item() == 6
    assert nt.nn.RMSNorm(3).weight.tolist() == [1, 1, 1]
    for mod in (nt.nn.InstanceNorm1d(3), nt.nn.GroupNorm(1, 3, affine=False)):
        assert mod.weight is None and mod.bias is None and not list(mod.parameters())
    assert list(nt.nn.InstanceNorm1d(3).buffers()) == []


def test_batch_norm_marker():
    """numtorch.func.replace_all_batch_norm_modules_ finds the batch norms by this marker."""
    for cls in (nt.nn.BatchNorm1d, nt.nn.BatchNorm2d, nt.nn.BatchNorm3d):
        assert cls._is_batch_norm is True
    for mod in (nt.nn.InstanceNorm1d(2), nt.nn.LayerNorm(2), nt.nn.GroupNorm(1, 2)):
        assert not getattr(mod, "_is_batch_norm", False)


def test_convert_sync_batchnorm_keeps_parameters_and_buffers():
    def prog(T, x):
        model = T.nn.Sequential(T.nn.BatchNorm1d(4, bias=False), T.nn.LayerNorm(2)).double()
        model[0].eval()
        old = [model[0].weight, model[0].running_var, model[0].num_batches_tracked]
        conv = T.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        new = [conv[0].weight, conv[0].running_var, conv[0].num_batches_tracked]
        shared = [a is b for a, b in zip(old, new)]
        return repr(conv), conv[0].training, shared, conv(x)

    got = assert_same(prog, arr(3, 4, 2))
    assert got[2] == [True] * 3


# ------------------------------------------------------------------ lazy forms
@pytest.mark.parametrize(
    "name, kwargs, shape",
    [
        ("LazyBatchNorm1d", {}, (3, 4)),
        ("LazyBatchNorm2d", {"affine": False, "momentum": None}, (2, 3, 2, 2)),
        ("LazyBatchNorm3d", {"bias": False}, (2, 3, 1, 2, 2)),
        ("LazyInstanceNorm1d", {}, (2, 3, 4)),
        ("LazyInstanceNorm2d", {"track_running_stats": False}, (2, 3, 2, 2)),
        ("LazyInstanceNorm3d", {"affine": False}, (2, 3, 1, 2, 2)),
    ],
)
def test_lazy_forms_infer_num_features(name, kwargs, shape):
    def prog(T, x):
        mod = getattr(T.nn, name)(**kwargs).double()
        before = (repr(mod), mod.has_uninitialized_params())
        out = mod(x)
        params = [(n, p.dtype, tuple(p.shape)) for n, p in mod.named_parameters()]
        return before, repr(mod), type(mod).__name__, out, dict(mod.state_dict()), str(params)

    assert_same(prog, arr(*shape), rtol=1e-12, atol=1e-14)


def test_lazy_batchnorm_materializes_from_a_state_dict():
    def prog(T, x):
        src = T.nn.BatchNorm1d(4).double()
        src(x)
        lazy = T.nn.LazyBatchNorm1d().double()
        lazy.load_state_dict(src.state_dict())
        return lazy.weight.shape, dict(lazy.state_dict()), lazy(x), type(lazy).__name__

    assert_same(prog, arr(3, 4))


# ------------------------------------------------------------------ state dicts
def _old_checkpoint(T, version):
    """A BatchNorm checkpoint without num_batches_tracked, as saved by old versions."""
    src = T.nn.BatchNorm1d(3).double()
    src(T.tensor(arr(4, 3)))
    sd = src.state_dict()
    del sd["num_batches_tracked"]
    if version is None:
        del sd._metadata
    else:
        sd._metadata[""]["version"] = version
    return sd


@pytest.mark.parametrize("version", [None, 1])
def test_batchnorm_loads_checkpoint_without_num_batches_tracked(version):
    def prog(T):
        mod = T.nn.BatchNorm1d(3).double()
        mod(T.tensor(arr(4, 3, seed=1)))
        mod(T.tensor(arr(4, 3, seed=2)))
        res = mod.load_state_dict(_old_checkpoint(T, version))
        return repr(res), dict(mod.state_dict())

    assert_same(prog)


def test_batchnorm_version_2_checkpoint_must_have_num_batches_tracked():
    def prog(T):
        T.nn.BatchNorm1d(3).double().load_state_dict(_old_checkpoint(T, 2))

    assert_same_error(prog)


def test_instancenorm_old_checkpoint_with_running_stats():
    def prog(T):
        sd = T.nn.InstanceNorm1d(3, track_running_stats=True).state_dict()
        T.nn.InstanceNorm1d(3).load_state_dict(dict(sd))

    assert_same_error(prog)


# ------------------------------------------------------------------ input checks, errors
@pytest.mark.parametrize(
    "name, shape",
    [
        ("BatchNorm1d", (2, 3, 2, 2)),
        ("BatchNorm1d", (3,)),
        ("BatchNorm2d", (2, 3, 2)),
        ("BatchNorm3d", (2, 3, 2, 2)),
        ("SyncBatchNorm", (3,)),
        ("InstanceNorm1d", (2, 3, 2, 2)),
        ("InstanceNorm2d", (3, 2)),
        ("InstanceNorm3d", (2, 3, 2, 2, 2, 2)),
    ],
)
def test_input_dim_errors(name, shape):
    assert_same_error(lambda T, x: getattr(T.nn, name)(3)(x), arr(*shape))


def test_bad_input_dim_does_not_count_a_batch():
    def prog(T, x):
        mod = T.nn.BatchNorm1d(3)
        try:
            mod(x)
        except ValueError:
            pass
        return mod.num_batches_tracked

    assert_same(prog, arr(2, 3, 2, 2).astype(np.float32))


@pytest.mark.parametrize(
    "prog",
    [
        lambda T: T.nn.GroupNorm(3, 4),
        lambda T: T.nn.Embedding(4, 2, padding_idx=4),
        lambda T: T.nn.Embedding(4, 2, padding_idx=-5),
        lambda T: T.nn.EmbeddingBag(4, 2, padding_idx=4),
        lambda T: T.nn.Embedding(4, 2, _weight=T.zeros(3, 2)),
        lambda T: T.nn.EmbeddingBag(4, 2, _weight=T.zeros(4, 3)),
        lambda T: T.nn.Embedding.from_pretrained(T.zeros(4)),
        lambda T: T.nn.EmbeddingBag.from_pretrained(T.zeros(2, 2, 2)),
        lambda T: T.nn.InstanceNorm1d(3, affine=True)(T.zeros(2, 4, 5)),
        lambda T: T.nn.InstanceNorm2d(3, affine=True)(T.zeros(4, 5, 5)),
        lambda T: T.nn.CrossMapLRN2d(3)(T.zeros(2, 4, 5)),
        lambda T: T.nn.LayerNorm(4)(T.zeros(2, 3)),
        lambda T: T.nn.BatchNorm1d(3)(T.zeros(1, 3)),
        lambda T: T.nn.SyncBatchNorm(3)(T.zeros(2, 0, 3)),
        lambda T: T.nn.EmbeddingBag(4, 2, mode="median")(T.tensor([[0, 1]])),
    ],
)
def test_errors_match_torch(prog):
    assert_same_error(prog)


def test_instancenorm_warns_on_unused_num_features():
    def prog(T, x):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = T.nn.InstanceNorm1d(3)(x)
        return out, [str(w.message) for w in caught], [w.filename for w in caught]

    got, want = (prog(lib, lib.tensor(arr(2, 4, 5))) for lib in (nt, torch))
    assert_close(got[0], want[0])
    assert got[1] == want[1] and len(got[1]) == 1
    # stacklevel=2 as PyTorch's: the warning points at Module.__call__
    assert [os.path.basename(f) for f in got[2]] == [os.path.basename(f) for f in want[2]]


# ------------------------------------------------------------------ embeddings
def test_embedding_max_norm_renormalizes_weight_in_place():
    def prog(T, w, idx):
        emb = T.nn.Embedding.from_pretrained(w, freeze=False, max_norm=1.5, norm_type=3.0)
        out = emb(idx)
        (out * out).sum().backward()
        return out, w, emb.weight.grad, emb.weight._version, emb.weight.data_ptr() == w.data_ptr()

    got = assert_same(prog, arr(6, 3) * 2, IDX, rtol=1e-12)
    assert got[4]  # the given tensor is the weight: it was renormalized in place


def test_embedding_padding_idx_gets_no_gradient():
    def prog(T, idx, cot):
        emb = T.nn.Embedding(6, 3, padding_idx=-3)
        out = emb(idx)
        out.backward(cot.float())
        return emb.weight[3], emb.weight.grad

    got = assert_same(prog, IDX, arr(2, 3, 3), rtol=1e-6)
    assert not got[0].any() and not got[1][3].any()


@pytest.mark.parametrize("freeze", [True, False])
@pytest.mark.parametrize("cls", ["Embedding", "EmbeddingBag"])
def test_from_pretrained_freeze(cls, freeze):
    def prog(T, w):
        emb = getattr(T.nn, cls).from_pretrained(w, freeze=freeze)
        return emb.weight.requires_grad, emb(T.tensor([[0, 2], [1, 1]])), repr(emb)

    got = assert_same(prog, arr(4, 3))
    assert got[0] is (not freeze)
    w = nt.tensor(arr(4, 3))
    emb = getattr(nt.nn, cls).from_pretrained(w, freeze=freeze)
    assert emb.weight.data_ptr() == w.data_ptr()  # shared, not copied


def test_embedding_default_init_is_standard_normal():
    emb = nt.nn.Embedding(400, 50, padding_idx=7)
    w = emb.weight.detach().numpy()
    assert not w[7].any()
    rest = np.delete(w, 7, axis=0)
    # 19950 draws from N(0, 1): mean within 5 standard errors, std within 3%
    assert abs(rest.mean()) < 5 / math.sqrt(rest.size)
    assert abs(rest.std() - 1) < 0.03
    assert nt.nn.EmbeddingBag(3, 2, dtype=nt.float64).weight.dtype == nt.float64


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_scale_grad_by_freq_divides_by_true_counts(mode):
    """Each row's gradient divided by its index's count; torch 2.13's CPU kernel divides row
    4 here by the count of index 3 (pytorch#190063, a silent-correctness bug fixed upstream),
    so the reference is computed by hand."""
    bag = nt.nn.EmbeddingBag(6, 3, mode=mode, scale_grad_by_freq=True)
    bag(nt.tensor(IDX)).sum().backward()
    per_use = 1.0 if mode == "sum" else 1 / 3  # d(bag)/d(row) for each use of a row
    uses = np.bincount(IDX.ravel(), minlength=6)
    want = np.where(uses > 0, per_use, 0.0)  # uses * per_use / uses
    np.testing.assert_allclose(bag.weight.grad.numpy(), np.repeat(want[:, None], 3, 1), rtol=1e-6)


@pytest.mark.parametrize("cls", ["Embedding", "EmbeddingBag"])
def test_sparse_gradients_raise_instead_of_going_dense(cls):
    emb = getattr(nt.nn, cls)(5, 2, sparse=True)
    assert repr(emb) == repr(getattr(torch.nn, cls)(5, 2, sparse=True))
    idx = nt.tensor([[0, 1], [2, 2]])
    with pytest.raises(NotImplementedError, match="no sparse tensors"):
        emb(idx)
    with nt.no_grad():
        emb(idx)  # nothing is recorded: no gradient to get wrong
    frozen = getattr(nt.nn, cls).from_pretrained(nt.ones(5, 2), sparse=True)
    assert frozen(idx).shape[0] == 2


# ------------------------------------------------------------------ CrossMapLRN2d
@pytest.mark.parametrize("size, channels", [(1, 3), (2, 5), (3, 6), (4, 4), (5, 7)])
def test_cross_map_lrn2d_forward_matches_torch_and_gradient_is_true(size, channels):
    x = arr(2, channels, 2, 3)
    kw = {"alpha": 0.5, "beta": 0.75, "k": 1.5}
    tmod, nmod = pair("CrossMapLRN2d", size, **kw)
    assert repr(nmod) == repr(tmod)
    assert_close(nmod(nt.tensor(x)), tmod(torch.tensor(x)), rtol=1e-12)
    # torch's hand-written backward is not the derivative of its forward (its gradcheck
    # fails): finite differences decide
    cot = arr(*x.shape, seed=1)
    xt = nt.tensor(x, requires_grad=True)
    (g,) = nt.autograd.grad((nmod(xt) * nt.tensor(cot)).sum(), xt)

    def f(a):
        return float((nmod(nt.tensor(a)) * nt.tensor(cot)).sum())

    np.testing.assert_allclose(g.numpy(), fd_grad(f, x), rtol=1e-6, atol=1e-8)


# ------------------------------------------------------------------ under transforms
def test_layers_under_vmap_and_grad_match_torch_func():
    def prog(T, x, w, idx):
        bn = T.nn.BatchNorm1d(4, track_running_stats=False).double()
        gn = T.nn.GroupNorm(2, 4).double()
        emb = T.nn.Embedding(6, 4, padding_idx=1).double()
        with T.no_grad():
            emb.weight.copy_(T.arange(24.0).reshape(6, 4) / 10)

        def f(x, idx):
            return (gn(bn(x + emb(idx))) * w).sum()

        return T.func.vmap(f)(x, idx), T.func.vmap(T.func.grad(f))(x, idx)

    assert_same(prog, arr(2, 3, 4), arr(3, 4, seed=5), IDX, rtol=1e-10, atol=1e-14)


def test_vmap_over_batchnorm_tracking_running_stats_raises_torch_func_error():
    assert_same_error(lambda T, x: T.func.vmap(T.nn.BatchNorm1d(4).double())(x), arr(2, 3, 4))


def test_per_sample_grads_after_replace_all_batch_norm_modules():
    def prog(T, x, w):
        model = T.nn.Sequential(T.nn.BatchNorm1d(4), T.nn.InstanceNorm1d(4, affine=True))
        model = T.func.replace_all_batch_norm_modules_(model.double())
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(params, sample):
            out = T.func.functional_call(model, params, (sample.unsqueeze(0),))
            return (out * w).sum()

        grads = T.func.vmap(T.func.grad(loss), in_dims=(None, 0))(params, x)
        return grads, model[0].running_mean, repr(model)

    assert_same(prog, arr(3, 4, 5), arr(1, 4, 5, seed=2), rtol=1e-10, atol=1e-14)


def test_ensemble_of_batchnorms_updates_stacked_running_stats():
    def prog(T, x):
        models = [T.nn.Sequential(T.nn.BatchNorm1d(4), T.nn.LayerNorm(4)).double() for _ in "ab"]
        params, buffers = T.func.stack_module_state(models)

        def f(p, b, x):
            return T.func.functional_call(models[0], (p, b), (x,))

        out = T.func.vmap(f, in_dims=(0, 0, None))(params, buffers, x)
        return out, buffers, dict(models[0].state_dict())

    assert_same(prog, arr(3, 4), rtol=1e-10, atol=1e-14)
