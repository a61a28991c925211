"""Whole models written with nn.functional, against torch: the per-sample-gradients
tutorial's CNN (conv2d, relu, max_pool2d, linear, log_softmax, nll_loss) under
``vmap(grad)`` with the fallback off, and its batched gradients."""

from __future__ import annotations

from twolibs import arr, assert_same

SHAPES = {
    "conv1.weight": (4, 1, 3, 3),
    "conv1.bias": (4,),
    "conv2.weight": (6, 4, 3, 3),
    "conv2.bias": (6,),
    "fc1.weight": (8, 54),
    "fc1.bias": (8,),
    "fc2.weight": (5, 8),
    "fc2.bias": (5,),
}
PARAMS = {k: arr(*s, seed=i) / 3 for i, (k, s) in enumerate(SHAPES.items())}
BATCH = 3
IMAGES = arr(BATCH, 1, 10, 10, seed=20)
LABELS = (abs(arr(BATCH, seed=21)) * 7).astype("int64") % 5


def _loss(lib):
    F = lib.nn.functional

    def loss(p, x, y):
        h = F.relu(F.conv2d(x, p["conv1.weight"], p["conv1.bias"]))
        h = F.relu(F.conv2d(h, p["conv2.weight"], p["conv2.bias"]))
        h = F.max_pool2d(h, 2).flatten(1)
        h = F.relu(F.linear(h, p["fc1.weight"], p["fc1.bias"]))
        return F.nll_loss(F.log_softmax(F.linear(h, p["fc2.weight"], p["fc2.bias"]), dim=1), y)

    return loss


def _tensors(lib, *params):
    return dict(zip(SHAPES, params))


def test_per_sample_grads_of_the_tutorial_cnn_match_torch_func(no_fallback):
    def prog(lib, x, y, *params):
        grads = lib.func.vmap(lib.func.grad(_loss(lib)), in_dims=(None, 0, 0))
        return grads(_tensors(lib, *params), x.unsqueeze(1), y.unsqueeze(1))

    assert_same(prog, IMAGES, LABELS, *PARAMS.values(), rtol=1e-9, atol=1e-12)


def test_batched_grads_of_the_tutorial_cnn_match_torch():
    def prog(lib, x, y, *params):
        p = {k: v.requires_grad_() for k, v in _tensors(lib, *params).items()}
        loss = _loss(lib)(p, x, y)
        return loss, lib.autograd.grad(loss, list(p.values()))

    assert_same(prog, IMAGES, LABELS, *PARAMS.values(), rtol=1e-9, atol=1e-12)
