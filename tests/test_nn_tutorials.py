"""PyTorch's torch.func tutorials, retold in our own words and run on both libraries with
only the import changed: per-sample gradients of a CNN, model ensembling, and the neural
tangent kernel. Each program is written once against ``lib`` (numtorch or torch) and its
answers are compared with torch.func's."""

from __future__ import annotations

import functools

import numpy as np
import torch
from twolibs import assert_close
from twomods import copy_weights

import numtorch as nt


def same_models(make, seed: int = 0):
    """make(lib) in both libraries, torch's (seeded) weights copied into numtorch's."""
    torch.manual_seed(seed)
    theirs = make(torch)
    ours = make(nt)
    copy_weights(theirs, ours)
    return ours, theirs


def both(program, *models, **data):
    """program(lib, *models, **data) on each library (NumPy data made tensors of it)."""
    results = []
    for lib, ms in ((nt, [m[0] for m in models]), (torch, [m[1] for m in models])):
        device = "cuda" if lib.cuda.is_available() else "cpu"  # the tutorials' first line
        tensors = {k: lib.tensor(v).to(device) for k, v in data.items()}
        ms = [m.to(device) for m in ms]
        results.append(program(lib, *ms, **tensors))
    return results


# ------------------------------------------------------------------ per-sample gradients
def digit_classifier(lib):
    """The tutorial's small convolutional classifier for 28x28 single-channel images."""
    nn, F = lib.nn, lib.nn.functional

    class DigitNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 3, 1)
            self.conv2 = nn.Conv2d(6, 8, 3, 1)
            self.fc1 = nn.Linear(8 * 12 * 12, 16)
            self.fc2 = nn.Linear(16, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = lib.flatten(x, 1)
            x = F.relu(self.fc1(x))
            return F.log_softmax(self.fc2(x), dim=1)

    return DigitNet().to(lib.float64)


def test_per_sample_gradients_tutorial():
    rng = np.random.default_rng(0)
    images = rng.standard_normal((6, 1, 28, 28))
    labels = rng.integers(0, 10, 6)

    def program(lib, model, images, labels):
        F = lib.nn.functional
        from_func = lib.func

        # the slow way: one backward per example
        looped = []
        for i in range(len(images)):
            model.zero_grad()
            F.nll_loss(model(images[i : i + 1]), labels[i : i + 1]).backward()
            looped.append([p.grad.clone() for p in model.parameters()])
        looped = [lib.stack(gs) for gs in zip(*looped)]

        # the torch.func way: a loss of (params, buffers, one sample), vmapped over samples
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}

        def sample_loss(params, buffers, image, label):
            out = from_func.functional_call(model, (params, buffers), (image.unsqueeze(0),))
            return F.nll_loss(out, label.unsqueeze(0))

        per_sample = from_func.vmap(from_func.grad(sample_loss), in_dims=(None, None, 0, 0))(
            params, buffers, images, labels
        )
        return looped, per_sample

    (ours_loop, ours), (theirs_loop, theirs) = both(
        program, same_models(digit_classifier), images=images, labels=labels
    )
    assert_close(ours, theirs, rtol=1e-9, atol=1e-12)
    assert_close(list(ours.values()), ours_loop, rtol=1e-9, atol=1e-12)
    assert_close(ours_loop, theirs_loop, rtol=1e-9, atol=1e-12)


def test_per_sample_gradients_with_batch_norm_after_replacing_it():
    def make(lib):
        nn = lib.nn
        return nn.Sequential(
            nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(48, 2)
        ).to(lib.float64)

    rng = np.random.default_rng(1)
    data = {"x": rng.standard_normal((4, 1, 6, 6)), "y": rng.integers(0, 2, 4)}

    def program(lib, model, x, y):
        lib.func.replace_all_batch_norm_modules_(model)
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, xi, yi):
            out = lib.func.functional_call(model, p, (xi.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, yi.unsqueeze(0))

        grads = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
        return grads, [n for n, _ in model.named_buffers()], model[1].track_running_stats

    ours, theirs = both(program, same_models(make), **data)
    assert ours[1] == theirs[1] == [] and ours[2] is theirs[2] is False
    assert_close(ours[0], theirs[0], rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------------ model ensembling
@functools.cache
def _small_mlp_class(lib):
    nn, F = lib.nn, lib.nn.functional

    class SmallMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(12, 16)
            self.fc2 = nn.Linear(16, 8)
            self.fc3 = nn.Linear(8, 3)

        def forward(self, x):
            x = x.flatten(1)
            return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))

    return SmallMLP


def small_mlp(lib):
    return _small_mlp_class(lib)().to(lib.float64)


def test_model_ensembling_tutorial():
    rng = np.random.default_rng(2)
    n_models = 4
    data = {
        "shared": rng.standard_normal((5, 3, 4)),
        "split": rng.standard_normal((n_models, 5, 3, 4)),
    }
    models = [same_models(small_mlp, seed=i) for i in range(n_models)]

    def program(lib, *ms, shared, split):
        params, buffers = lib.func.stack_module_state(ms)
        # a "meta" copy whose state is never used, only its structure
        base = ms[0]

        def run_one(p, b, x):
            return lib.func.functional_call(base, (p, b), (x,))

        same_batch = lib.func.vmap(run_one, in_dims=(0, 0, None))(params, buffers, shared)
        own_batch = lib.func.vmap(run_one)(params, buffers, split)
        loops = [m(shared) for m in ms], [m(x) for m, x in zip(ms, split)]
        return same_batch, own_batch, [lib.stack(r) for r in loops]

    ours, theirs = both(program, *models, **data)
    assert_close(ours, theirs, rtol=1e-10, atol=1e-12)
    assert_close([ours[0], ours[1]], ours[2], rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------ neural tangent kernel
def tiny_cnn(lib):
    nn = lib.nn

    class TinyCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(2, 4, (3, 3))
            self.conv2 = nn.Conv2d(4, 4, (3, 3))
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            x = self.conv1(x).relu()
            x = self.conv2(x).relu()
            x = x.mean((-2, -1))  # global average pool
            return self.fc(x)

    return TinyCNN().to(lib.float64)


def test_neural_tangent_kernel_tutorial():
    rng = np.random.default_rng(3)
    data = {"x1": rng.standard_normal((3, 2, 7, 7)), "x2": rng.standard_normal((2, 2, 7, 7))}

    def program(lib, model, x1, x2):
        func = lib.func
        params = {k: v.detach() for k, v in model.named_parameters()}

        def f(p, x):
            return func.functional_call(model, p, (x.unsqueeze(0),)).squeeze(0)

        def jacobians(x):
            jac = func.vmap(func.jacrev(f), (None, 0))(params, x)
            return [j.flatten(2) for j in jac.values()]

        j1, j2 = jacobians(x1), jacobians(x2)
        full = sum(lib.einsum("Naf,Mbf->NMab", a, b) for a, b in zip(j1, j2))
        trace = sum(lib.einsum("Naf,Maf->NM", a, b) for a, b in zip(j1, j2))

        # the same kernel from vector products: jvp of the vjp, one output unit at a time
        def via_products(x1, x2):
            def f1(p):
                return f(p, x1)

            def f2(p):
                return f(p, x2)

            out, vjp_fn = func.vjp(f1, params)

            def column(unit):
                (vjps,) = vjp_fn(unit)
                return func.jvp(f2, (params,), (vjps,))[1]

            return func.vmap(column)(lib.eye(out.numel(), dtype=out.dtype, device=out.device))

        products = func.vmap(func.vmap(via_products, (None, 0)), (0, None))(x1, x2)
        return full, trace, products

    ours, theirs = both(program, same_models(tiny_cnn), **data)
    assert_close(ours, theirs, rtol=1e-9, atol=1e-12)
    assert_close(ours[2], ours[0], rtol=1e-9, atol=1e-12)
