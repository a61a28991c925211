"""2-layer LSTM (input 128, hidden 128, T=50, N=32) forward+backward: numtorch vs torch CPU."""

from __future__ import annotations

import os
import time

import numpy as np
import torch

import numtorch as nt


def _params(lib, rng, layers=2, i=128, h=128):
    out = []
    for layer in range(layers):
        fan = i if layer == 0 else h
        for shape in ((4 * h, fan), (4 * h, h), (4 * h,), (4 * h,)):
            out.append(lib.tensor(rng.uniform(-0.08, 0.08, shape).astype(np.float32)))
    return [p.requires_grad_() for p in out]


def step(lib, x, hx, ps):
    out, h, c = lib.lstm(x, hx, ps, True, 2, 0.0, True, False, False)
    out.sum().backward()


def best(fn, n=10):
    for _ in range(2):
        fn()
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return min(ts)


def main():
    torch.set_num_threads(int(os.environ.get("TORCH_THREADS", torch.get_num_threads())))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((50, 32, 128)).astype(np.float32)
    h0 = np.zeros((2, 32, 128), np.float32)
    rows = []
    for lib in (torch, nt):
        ps = _params(lib, np.random.default_rng(1))
        xt = lib.tensor(x).requires_grad_()
        hx = (lib.tensor(h0), lib.tensor(h0))
        rows.append((lib.__name__, best(lambda: step(lib, xt, hx, ps))))
    for name, t in rows:
        print(f"{name:10s} fwd+bwd {t * 1e3:8.2f} ms")
    print(
        f"ratio numtorch/torch {rows[1][1] / rows[0][1]:.2f} (torch threads {torch.get_num_threads()})"
    )


if __name__ == "__main__":
    main()
