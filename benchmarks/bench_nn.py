"""nn.functional workloads, numtorch beside PyTorch (at its default threads), one run.

Each row first checks that both libraries compute the same numbers on the same data,
then times the call (best of several, garbage collector off). The per-sample row also
reports the peak memory the call adds (resident set, each library in a fresh
subprocess).

python benchmarks/bench_nn.py
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
from bench_eager import best_of

import numtorch as nt

try:
    import torch
    import torch.func
except ImportError:  # the table then shows numtorch alone
    torch = None

BATCH = 64


# ------------------------------------------------------------------ the tutorial's CNN
def cnn_data(T, batch: int = BATCH):
    """The per-sample-gradients tutorial's CNN, its parameters and a batch (same numbers
    in both libraries)."""
    rng = np.random.default_rng(0)

    def param(*shape, fan_in):
        return T.tensor((rng.uniform(-1, 1, shape) / fan_in**0.5).astype(np.float32))

    params = {
        "conv1.weight": param(32, 1, 3, 3, fan_in=9),
        "conv1.bias": param(32, fan_in=9),
        "conv2.weight": param(64, 32, 3, 3, fan_in=288),
        "conv2.bias": param(64, fan_in=288),
        "fc1.weight": param(128, 9216, fan_in=9216),
        "fc1.bias": param(128, fan_in=9216),
        "fc2.weight": param(10, 128, fan_in=128),
        "fc2.bias": param(10, fan_in=128),
    }
    x = T.tensor(rng.standard_normal((batch, 1, 28, 28)).astype(np.float32))
    y = T.tensor(rng.integers(0, 10, batch).astype(np.int64))
    return params, x, y


def cnn_loss(T):
    F = T.nn.functional

    def loss(p, x, y):
        h = F.relu(F.conv2d(x, p["conv1.weight"], p["conv1.bias"]))
        h = F.relu(F.conv2d(h, p["conv2.weight"], p["conv2.bias"]))
        h = F.max_pool2d(h, 2).flatten(1)
        h = F.relu(F.linear(h, p["fc1.weight"], p["fc1.bias"]))
        out = F.log_softmax(F.linear(h, p["fc2.weight"], p["fc2.bias"]), dim=1)
        return F.nll_loss(out, y)

    return loss


def per_sample_grads(T):
    params, x, y = cnn_data(T)
    loss = cnn_loss(T)
    f = T.func.vmap(T.func.grad(loss), in_dims=(None, 0, 0))

    def run():
        return f(params, x.unsqueeze(1), y.unsqueeze(1))

    return run


def cnn_module(T, params):
    """The tutorial's CNN as an nn.Module holding the given parameters."""
    nn, F = T.nn, T.nn.functional

    class SimpleCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2).flatten(1)
            x = F.relu(self.fc1(x))
            return F.log_softmax(self.fc2(x), dim=1)

    model = SimpleCNN()
    model.load_state_dict(params)
    return model


def per_sample_grads_module(T):
    params, x, y = cnn_data(T)
    model = cnn_module(T, params)
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def loss(params, buffers, sample, target):
        out = T.func.functional_call(model, (params, buffers), (sample.unsqueeze(0),))
        return T.nn.functional.nll_loss(out, target.unsqueeze(0))

    f = T.func.vmap(T.func.grad(loss), in_dims=(None, None, 0, 0))

    def run():
        return f(params, buffers, x, y)

    return run


def batched_step(T):
    params, x, y = cnn_data(T)
    params = {k: v.requires_grad_() for k, v in params.items()}
    loss = cnn_loss(T)

    def run():
        for v in params.values():
            v.grad = None
        loss(params, x, y).backward()
        return [v.grad for v in params.values()]

    return run


# ------------------------------------------------------------------ one conv layer
def conv_data(T, requires_grad: bool):
    rng = np.random.default_rng(1)
    x = T.tensor(rng.standard_normal((BATCH, 32, 26, 26)).astype(np.float32))
    w = T.tensor((rng.standard_normal((64, 32, 3, 3)) / 17).astype(np.float32))
    b = T.tensor(rng.standard_normal(64).astype(np.float32))
    if requires_grad:
        x.requires_grad_(), w.requires_grad_(), b.requires_grad_()
    return x, w, b


def conv_forward(T):
    x, w, b = conv_data(T, False)
    return lambda: T.nn.functional.conv2d(x, w, b)


def conv_backward(T):
    x, w, b = conv_data(T, True)
    g = T.ones(BATCH, 64, 24, 24)

    def run():
        out = T.nn.functional.conv2d(x, w, b)
        return T.autograd.grad(out, (x, w, b), g)

    return run


# ------------------------------------------------------------------ LSTM, attention
def lstm(T):
    rng = np.random.default_rng(2)
    hidden, inp, seq, batch, layers = 128, 128, 50, 32, 2
    params = []
    for layer in range(layers):
        n_in = inp if layer == 0 else hidden
        for shape in ((4 * hidden, n_in), (4 * hidden, hidden), (4 * hidden,), (4 * hidden,)):
            a = (rng.uniform(-1, 1, shape) / hidden**0.5).astype(np.float32)
            params.append(T.tensor(a).requires_grad_())
    x = T.tensor(rng.standard_normal((seq, batch, inp)).astype(np.float32))
    h0 = T.zeros(layers, batch, hidden)
    c0 = T.zeros(layers, batch, hidden)

    def run():
        out, h, c = T.lstm(x, (h0, c0), params, True, layers, 0.0, True, False, False)
        return T.autograd.grad(out.sum() + h.sum() + c.sum(), params)

    return run


def attention(T):
    rng = np.random.default_rng(3)
    q, k, v = (
        T.tensor(rng.standard_normal((8, 8, 256, 64)).astype(np.float32)).requires_grad_()
        for _ in range(3)
    )

    def run():
        out = T.nn.functional.scaled_dot_product_attention(q, k, v)
        return T.autograd.grad(out.sum(), (q, k, v))

    return run


# ------------------------------------------------------------------ small layers
def _small(T, *shape):
    return T.tensor(np.random.default_rng(4).standard_normal(shape).astype(np.float32))


def small_max_pool(T):
    x = _small(T, 1, 16, 8, 8)
    return lambda: T.nn.functional.max_pool2d(x, 2)


def small_conv(T):
    x, w, b = _small(T, 1, 1, 8, 8), _small(T, 16, 1, 3, 3), _small(T, 16)
    return lambda: T.nn.functional.conv2d(x, w, b, padding=1)


def small_linear(T):
    x, w, b = _small(T, 1, 128), _small(T, 10, 128), _small(T, 10)
    return lambda: T.nn.functional.linear(x, w, b)


CASES = {
    "max_pool2d(2) of (1,16,8,8), no grad (us)": (small_max_pool, 2.5),
    "conv2d (1,1,8,8) * (16,1,3,3), padding 1, no grad (us)": (small_conv, 2.5),
    "linear (1,128) * (10,128) + bias, no grad (us)": (small_linear, 2.5),
    "per-sample grads, tutorial CNN, batch 64 (ms)": (per_sample_grads, 1.0),
    "per-sample grads, nn.Module + functional_call (ms)": (per_sample_grads_module, 1.0),
    "batched fwd+bwd, tutorial CNN, batch 64 (ms)": (batched_step, 1.5),
    "conv2d fwd (64,32,26,26) * (64,32,3,3) (ms)": (conv_forward, 1.5),
    "conv2d fwd+bwd, same layer (ms)": (conv_backward, 1.5),
    "LSTM 2x128, seq 50, batch 32, fwd+bwd (ms)": (lstm, 2.0),
    "sdpa fwd+bwd (8,8,256,64) (ms)": (attention, 1.5),
}


# ------------------------------------------------------------------ harness
def _numpy(out):
    if isinstance(out, dict):
        out = list(out.values())
    if isinstance(out, (list, tuple)):
        return [a for o in out for a in _numpy(o)]
    return [np.asarray(out.detach().numpy(), np.float64)]


def check(name: str, ours, theirs) -> None:
    for a, b in zip(_numpy(ours), _numpy(theirs), strict=True):
        scale = max(np.abs(b).max(initial=0.0), 1e-6)
        err = np.abs(a - b).max(initial=0.0) / scale
        if err > 1e-3:
            raise AssertionError(f"{name}: numtorch differs from torch (relative {err:.2e})")


def _status_kib(field: str) -> int:
    """A memory figure of this process from /proc/self/status (VmRSS, VmHWM), in KiB."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))


def peak_memory(lib: str) -> float:
    """MiB the per-sample call adds to the resident set at its peak, measured in a fresh
    process (VmHWM, unlike ru_maxrss, starts anew at exec)."""
    code = (
        "import sys, json; sys.path.insert(0, 'benchmarks'); import bench_nn as b; "
        f"T = b.nt if {lib!r} == 'numtorch' else b.torch; run = b.per_sample_grads(T); "
        "before = b._status_kib('VmRSS'); run(); "
        "print(json.dumps((b._status_kib('VmHWM') - before) / 1024))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    rows = []
    for name, (case, target) in CASES.items():
        unit, repeat, number = (1e6, 20, 200) if name.endswith("(us)") else (1e3, 5, 1)
        ours_fn = case(nt)
        ours = best_of(ours_fn, repeat, number) * unit
        theirs = float("nan")
        if torch is not None:
            theirs_fn = case(torch)
            check(name, ours_fn(), theirs_fn())
            theirs = best_of(theirs_fn, repeat, number) * unit
        rows.append((name, ours, theirs, ours / theirs, target))
    w = max(len(r[0]) for r in rows)
    print(f"{'case':<{w}}  {'numtorch':>9}  {'torch':>9}  {'ratio':>6}  {'target':>6}")
    for name, ours, theirs, ratio, target in rows:
        print(f"{name:<{w}}  {ours:>9.1f}  {theirs:>9.1f}  {ratio:>6.2f}  {target:>6.1f}")
    mem = {lib: peak_memory(lib) for lib in ("numtorch", "torch" if torch else None) if lib}
    print("peak memory added by the per-sample call (MiB): " + ", ".join(
        f"{k} {v:.0f}" for k, v in mem.items()
    ))  # fmt: skip


if __name__ == "__main__":
    main()
