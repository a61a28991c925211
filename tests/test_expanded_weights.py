"""Per-sample gradients through ExpandedWeights (nn.utils._per_sample_grad.
call_for_per_sample_grads) against PyTorch: each supported layer's ``grad_sample`` and input
gradient on the same weights and data, sum and mean reductions, frozen parameters, layers
used twice, the layers and inputs refused, and the argument checks' texts. The backward is
vectorized: vmap's slow fallback never runs."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest
import torch
from twolibs import LAYER_ATOL, LAYER_RTOL, arr, assert_close, assert_same_error, to_nt, to_torch
from twomods import copy_weights

import numtorch as nt


def _psg(lib):
    return importlib.import_module(f"{lib.__name__}.nn.utils._per_sample_grad")


def _build(lib, spec):
    """A float64 layer (or Sequential of layers) from (name, args, kwargs) triples."""
    layers = [getattr(lib.nn, name)(*args, **kwargs) for name, args, kwargs in spec]
    mod = layers[0] if len(layers) == 1 else lib.nn.Sequential(*layers)
    return mod.double()


def _pair(spec, seed=0):
    torch.manual_seed(seed)
    tmod = _build(torch, spec)
    with torch.no_grad():
        for i, p in enumerate(tmod.parameters()):
            p.add_(torch.tensor(arr(*p.shape, seed=100 + i)) * 0.1)
    nmod = _build(nt, spec)
    copy_weights(tmod, nmod)
    return tmod, nmod


def _run(lib, mod, x, reduction="sum", batch_size=None, frozen=(), twice=False):
    """grad_sample of each parameter (None where absent), .grad, and the input's grad."""
    for name in frozen:
        mod.get_parameter(name).requires_grad_(False)
    kw = {} if batch_size is None else {"batch_size": batch_size}
    fn = _psg(lib).call_for_per_sample_grads(mod, loss_reduction=reduction, **kw)
    out = fn(x)
    if twice:
        out = out + fn(x)
    target = lib.tensor(arr(*out.shape, seed=7))
    loss = (out * target).mean() if reduction == "mean" else (out * target).sum()
    loss.backward()
    samples = {n: getattr(p, "grad_sample", None) for n, p in mod.named_parameters()}
    grads = {n: p.grad for n, p in mod.named_parameters()}
    return samples, grads, x.grad if x.dtype.is_floating_point else None, out.detach()


FLOAT_CASES = {
    "linear": ([("Linear", (4, 3), {})], (5, 4)),
    "linear 3d input": ([("Linear", (4, 3), {})], (5, 2, 4)),
    "conv1d": ([("Conv1d", (2, 3, 3), {"padding": 1})], (4, 2, 6)),
    "conv2d": ([("Conv2d", (2, 3, 2), {"stride": 2, "groups": 1})], (3, 2, 5, 5)),
    "conv2d groups": ([("Conv2d", (4, 2, 3), {"groups": 2, "dilation": 2})], (2, 4, 6, 6)),
    "conv3d": ([("Conv3d", (1, 2, 2), {})], (2, 1, 3, 3, 3)),
    "group_norm": ([("GroupNorm", (2, 4), {})], (3, 4, 5)),
    "instance_norm": ([("InstanceNorm1d", (3,), {"affine": True})], (4, 3, 6)),
    "instance_norm2d": ([("InstanceNorm2d", (2,), {"affine": True})], (3, 2, 3, 3)),
    "layer_norm": ([("LayerNorm", ((3, 4),), {})], (5, 3, 4)),
    "net": (
        [
            ("Conv2d", (1, 2, 3), {}),
            ("ReLU", (), {}),
            ("GroupNorm", (1, 2), {}),
            ("Flatten", (), {}),
            ("Linear", (18, 3), {}),
            ("Tanh", (), {}),
            ("Linear", (3, 2), {"bias": False}),
        ],
        (4, 1, 5, 5),
    ),
}


def _compare(spec, shape, **kw):
    tmod, nmod = _pair(spec)
    x = arr(*shape, seed=3)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="There is a performance drop")
        ours = _run(nt, nmod, to_nt(x, requires_grad=True), **kw)
    theirs = _run(torch, tmod, to_torch(x, requires_grad=True), **kw)
    assert_close(ours, theirs, rtol=LAYER_RTOL, atol=LAYER_ATOL)
    return ours


@pytest.mark.parametrize("case", sorted(FLOAT_CASES))
@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_layers_match_torch(case, reduction):
    spec, shape = FLOAT_CASES[case]
    samples, grads, _, _ = _compare(spec, shape, reduction=reduction)
    assert all(g is None for g in grads.values())
    assert all(s is not None and s.shape[0] == shape[0] for s in samples.values())


def test_grad_sample_sums_to_grad():
    spec, shape = FLOAT_CASES["net"]
    _, nmod = _pair(spec)
    _, ref = _pair(spec)
    x = arr(*shape, seed=3)
    samples, _, _, _ = _run(nt, nmod, to_nt(x, requires_grad=True))
    out = ref(to_nt(x))
    (out * nt.tensor(arr(*out.shape, seed=7))).sum().backward()
    for name, p in ref.named_parameters():
        np.testing.assert_allclose(samples[name].sum(0).numpy(), p.grad.numpy(), rtol=1e-10)


def test_frozen_bias_and_explicit_batch_size():
    spec, shape = FLOAT_CASES["linear"]
    samples, _, _, _ = _compare(spec, shape, frozen=("bias",), batch_size=5)
    assert samples["bias"] is None


def test_layer_used_twice_accumulates():
    _compare(*FLOAT_CASES["conv1d"], twice=True)


def test_embedding():
    tmod, nmod = _pair([("Embedding", (6, 3), {})])
    idx = np.array([[0, 1, 5], [2, 2, 4]], dtype=np.int64)
    ours = _run(nt, nmod, nt.tensor(idx))
    theirs = _run(torch, tmod, torch.tensor(idx))
    assert_close(ours, theirs, rtol=LAYER_RTOL, atol=LAYER_ATOL)


def test_embedding_padding_idx_gets_no_gradient():
    # PyTorch's per-sample rule ignores padding_idx, so its grad_sample rows for the padding
    # index are not zero although the embedding's gradient there is: numtorch's per-sample
    # gradients sum to the gradient (recorded difference; the gradient decides).
    _, nmod = _pair([("Embedding", (6, 3), {"padding_idx": 1})])
    idx = nt.tensor(np.array([[0, 1, 5], [1, 2, 1]], dtype=np.int64))
    samples, _, _, _ = _run(nt, nmod, idx)
    weight = samples["weight"].numpy()
    assert weight.shape == (2, 6, 3)
    np.testing.assert_array_equal(weight[:, 1], 0.0)
    assert np.abs(weight[0, 0]).sum() > 0 and np.abs(weight[1, 2]).sum() > 0


def _call(spec, shape, **kw):
    def prog(lib):
        mod = _build(lib, spec)
        return _psg(lib).call_for_per_sample_grads(mod, **kw)(lib.ones(*shape, dtype=lib.float64))

    return prog


REFUSED = {
    "batch_norm": ([("BatchNorm1d", (3,), {})], (4, 3)),
    "prelu": ([("PReLU", (), {})], (4, 3)),
    "conv_transpose": ([("ConvTranspose1d", (3, 2, 2), {})], (4, 3, 5)),
    "batch_norm2d": ([("BatchNorm2d", (3,), {})], (4, 3, 2, 2)),
    "layer norm over batch": ([("LayerNorm", ((4, 3),), {})], (4, 3)),
    "layer norm 0 batch": ([("LayerNorm", (2,), {})], (0, 2)),
    "embedding 1-d": ([("Embedding", (3, 2), {})], (3,)),
    "linear 1-d input": ([("Linear", (3, 2), {})], (3,)),
    "group norm 0 batch": ([("GroupNorm", (1, 2), {})], (0, 2, 3)),
    "scalar input": ([("LayerNorm", ((),), {})], ()),
    "batch mismatch": ([("Linear", (3, 2), {})], (4, 3)),
    "bad reduction": ([("Linear", (3, 2), {})], (4, 3)),
    "bad batch size type": ([("Linear", (3, 2), {})], (4, 3)),
    "zero batch size": ([("Linear", (3, 2), {})], (4, 3)),
}
KWARGS = {
    "batch mismatch": {"batch_size": 5},
    "bad reduction": {"loss_reduction": "none"},
    "bad batch size type": {"batch_size": 2.0},
    "zero batch size": {"batch_size": 0},
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused(case):
    assert_same_error(_call(*REFUSED[case], **KWARGS.get(case, {})))


def test_unbatched_conv():
    # PyTorch's text shows the function's repr, which holds an address: compare around it
    prog = _call([("Conv1d", (2, 3, 2), {})], (2, 5))
    for lib in (nt, torch):
        with pytest.raises(RuntimeError) as e:
            prog(lib)
        text = str(e.value)
        assert text.startswith("Expanded Weights only support convolution with batched input")
        assert "conv1d" in text
        assert text.endswith("with anunbatched input of dim 2, expected input of dim 3")


def test_argument_errors():
    def not_module(lib):
        return _psg(lib).call_for_per_sample_grads(3)

    def mixed_batches(lib):
        mod = lib.nn.Linear(3, 2)
        return _psg(lib).call_for_per_sample_grads(mod)(lib.ones(4, 3), lib.ones(3, 3))

    def no_tensor(lib):
        return _psg(lib).call_for_per_sample_grads(lib.nn.Linear(3, 2))(3)

    def second_call(lib):
        mod = lib.nn.Linear(3, 2)
        with lib.no_grad():
            mod.weight.fill_(1.0)
            mod.bias.fill_(0.5)
        _psg(lib).call_for_per_sample_grads(mod)(lib.ones(4, 3)).sum().backward()
        mod.bias.grad_sample = None
        return _psg(lib).call_for_per_sample_grads(mod)

    for prog in (not_module, mixed_batches, no_tensor, second_call):
        assert_same_error(prog)


def test_expanded_weight_construction():
    from numtorch.nn.utils._expanded_weights import ExpandedWeight

    w = nt.nn.Parameter(nt.ones(2, 3))
    ew = ExpandedWeight(w, 4, "mean")
    assert (ew.batch_size, ew.loss_reduction, ew.batch_first) == (4, "mean", True)
    assert ew.orig_weight is w and ew.shape == w.shape and ew.requires_grad and ew.is_leaf
    ew.set_batch_first(False)
    ew.set_allow_smaller_batches(True)
    assert (ew.batch_first, ew.allow_smaller_batches) == (False, True)

    def ew_of(value):
        def prog(lib):
            module = importlib.import_module(f"{lib.__name__}.nn.utils._expanded_weights")
            return module.ExpandedWeight(value(lib), 4, "sum")

        return prog

    assert_same_error(ew_of(lambda lib: lib.ones(2)))
    assert_same_error(ew_of(lambda lib: 3))
