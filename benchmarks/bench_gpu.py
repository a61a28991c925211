"""The GPU table: the seed tutorial's CNN on device='cuda', numtorch beside PyTorch.

Rows: per-sample gradients with vmap(grad) (batch 64 and 512) against torch.func, the batched
training step, conv2d forward+backward, and a DP-SGD epoch (per-sample gradients clipped,
noised, averaged, then an SGD update). PyTorch's column needs torch.cuda (n/a otherwise).
Each row first checks both libraries agree, then times the best of several runs, the device
synchronized around each.

python benchmarks/bench_gpu.py --device cuda          # the table
python benchmarks/bench_gpu.py --device cuda --dry    # each case once at a tiny size
"""

from __future__ import annotations

import sys
import time

import numpy as np
from bench_nn import check, cnn_data, cnn_loss

import numtorch as nt

try:
    import torch
    import torch.func
except ImportError:
    torch = None

DRY = "--dry" in sys.argv
DEVICE = sys.argv[sys.argv.index("--device") + 1] if "--device" in sys.argv else "cuda"


def _sync(T) -> None:
    if DEVICE.startswith("cuda"):
        T.cuda.synchronize()


def best_of(T, fn, repeat: int = 5) -> float:
    """Best wall time of one call in seconds, the device synchronized around it."""
    fn()
    _sync(T)
    best = float("inf")
    for _ in range(1 if DRY else repeat):
        t = time.perf_counter()
        fn()
        _sync(T)
        best = min(best, time.perf_counter() - t)
    return best


def _cnn(T, batch: int):
    params, x, y = cnn_data(T, batch)
    return {k: v.to(DEVICE) for k, v in params.items()}, x.to(DEVICE), y.to(DEVICE)


def per_sample(batch: int):
    def case(T):
        params, x, y = _cnn(T, batch)
        f = T.func.vmap(T.func.grad(cnn_loss(T)), in_dims=(None, 0, 0))
        return lambda: f(params, x.unsqueeze(1), y.unsqueeze(1))

    return case


def batched_step(T):
    params, x, y = _cnn(T, 4 if DRY else 64)
    params = {k: v.requires_grad_() for k, v in params.items()}
    loss = cnn_loss(T)

    def run():
        for v in params.values():
            v.grad = None
        loss(params, x, y).backward()
        return [v.grad for v in params.values()]

    return run


def conv(T):
    rng = np.random.default_rng(1)
    n = 2 if DRY else 64
    x = T.tensor(rng.standard_normal((n, 32, 26, 26)).astype(np.float32)).to(DEVICE)
    w = T.tensor((rng.standard_normal((64, 32, 3, 3)) / 17).astype(np.float32)).to(DEVICE)
    b = T.tensor(rng.standard_normal(64).astype(np.float32)).to(DEVICE)
    x, w, b = (t.requires_grad_() for t in (x, w, b))
    g = T.ones(n, 64, 24, 24, device=DEVICE)

    def run():
        return T.autograd.grad(T.nn.functional.conv2d(x, w, b), (x, w, b), g)

    return run


def dp_sgd_epoch(T):
    """One epoch of DP-SGD: per batch, per-sample gradients clipped to norm 1, Gaussian noise
    (drawn on the device, the same numbers in both libraries: zero std here, so that the
    libraries agree), averaged, then an SGD step. Returns the final parameters."""
    batch, steps = (4, 2) if DRY else (64, 16)
    params, x, y = _cnn(T, batch * steps)
    loss = cnn_loss(T)
    f = T.func.vmap(T.func.grad(loss), in_dims=(None, 0, 0))

    def run():
        p = dict(params)
        for s in range(steps):
            xb, yb = x[s * batch : (s + 1) * batch], y[s * batch : (s + 1) * batch]
            g = f(p, xb.unsqueeze(1), yb.unsqueeze(1))
            norms = T.stack([v.flatten(1).norm(dim=1) for v in g.values()]).norm(dim=0)
            scale = (1.0 / (norms + 1e-6)).clamp(max=1.0)
            for k, v in g.items():
                clipped = (v * scale.view(-1, *[1] * (v.ndim - 1))).sum(0)
                noise = T.randn(clipped.shape, device=DEVICE) * 0.0
                p[k] = p[k] - 0.05 * (clipped + noise) / batch
        return p

    return run


CASES = {
    "per-sample grads vmap(grad), batch 64 (ms)": per_sample(2 if DRY else 64),
    "per-sample grads vmap(grad), batch 512 (ms)": per_sample(3 if DRY else 512),
    "batched fwd+bwd, tutorial CNN, batch 64 (ms)": batched_step,
    "conv2d fwd+bwd (64,32,26,26)*(64,32,3,3) (ms)": conv,
    "DP-SGD epoch, 16 batches of 64 (ms)": dp_sgd_epoch,
}


def _torch_on_device() -> bool:
    return torch is not None and (not DEVICE.startswith("cuda") or torch.cuda.is_available())


def main() -> None:
    print(f"device {DEVICE}{' (dry run: tiny sizes, one run each)' if DRY else ''}")
    rows = []
    for name, case in CASES.items():
        ours_fn = case(nt)
        ours = best_of(nt, ours_fn) * 1e3
        theirs = None
        if _torch_on_device():
            theirs_fn = case(torch)
            check(
                name, [v.cpu() for v in _leaves(ours_fn())], [v.cpu() for v in _leaves(theirs_fn())]
            )
            theirs = best_of(torch, theirs_fn) * 1e3
        rows.append((name, ours, theirs))
    w = max(len(r[0]) for r in rows)
    print(f"{'case':<{w}}  {'numtorch':>9}  {'torch':>9}  {'ratio':>6}")
    for name, ours, theirs in rows:
        t, r = ("n/a", "n/a") if theirs is None else (f"{theirs:.1f}", f"{ours / theirs:.2f}")
        print(f"{name:<{w}}  {ours:>9.1f}  {t:>9}  {r:>6}")


def _leaves(out) -> list:
    if isinstance(out, dict):
        out = list(out.values())
    if isinstance(out, (list, tuple)):
        return [a for o in out for a in _leaves(o)]
    return [out.detach()]


if __name__ == "__main__":
    main()
