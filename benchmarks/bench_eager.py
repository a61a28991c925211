"""Eager-mode overheads, numtorch beside PyTorch, measured in one run.

python benchmarks/bench_eager.py [substring of the rows to run]
"""

from __future__ import annotations

import gc
import time

import numtorch as nt

try:
    import torch
except ImportError:  # the table then shows numtorch alone
    torch = None


def best_of(fn, repeat: int = 5, number: int = 1) -> float:
    """Best wall time of `number` calls, in seconds per call. As in ``timeit``, the garbage
    collector is off while timing: where its full collections land (tens of ms over the
    ~170k objects torch keeps alive) would otherwise decide the backward rows."""
    best = float("inf")
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            t = time.perf_counter()
            for _ in range(number):
                fn()
            best = min(best, (time.perf_counter() - t) / number)
    finally:
        if enabled:
            gc.enable()
    return best


def add_no_grad(T):
    a, b = T.ones(1), T.ones(1)

    def run():
        for _ in range(10_000):
            a + b

    return lambda: best_of(run) / 10_000


def add_chain_backward(T):
    w = T.ones(1, requires_grad=True)
    b = T.ones(1)

    def run():
        z = w
        for _ in range(10_000):
            z = z + b
        z.backward()

    return lambda: best_of(run) / 10_000


def mlp(T, width: int, batch: int, number: int):
    T.manual_seed(0)
    x = T.randn(batch, width)
    ws = [(T.randn(width, width) / width**0.5).requires_grad_() for _ in range(3)]
    bs = [T.zeros(width, requires_grad=True) for _ in range(3)]

    def run():
        h = x
        for i, (w, b) in enumerate(zip(ws, bs)):
            h = h @ w + b
            if i < 2:
                h = T.relu(h)
        loss = (h * h).mean()
        loss.backward()

    return lambda: best_of(run, number=number)


def stacked_outer(T, op: str):
    """A stack of outer products, (64, 128, 1) times (64, 1, 256), float32: the per-sample
    weight gradients of a 256 -> 128 linear layer, through ``mul`` or ``matmul``."""
    T.manual_seed(0)
    a, b = T.randn(64, 128, 1), T.randn(64, 1, 256)
    fn = getattr(T, op)
    return lambda: best_of(lambda: fn(a, b), repeat=20, number=20)


def rfft_round_trip(T):
    """rfft then irfft of a (64, 4096) float32 signal along its last dim."""
    T.manual_seed(0)
    x = T.randn(64, 4096)
    return lambda: best_of(lambda: T.fft.irfft(T.fft.rfft(x), n=4096), repeat=20, number=10)


def stft_16k(T):
    """stft of one second at 16 kHz: n_fft 512, hop 128, a Hann window, complex result."""
    T.manual_seed(0)
    x, w = T.randn(16000), T.hann_window(512)

    def run():
        T.stft(x, 512, hop_length=128, window=w, return_complex=True)

    return lambda: best_of(run, repeat=20, number=10)


def import_time(T):
    """``import <library>`` in a fresh interpreter (best of 3, process start included)."""
    import subprocess
    import sys

    def run():
        subprocess.run([sys.executable, "-c", f"import {T.__name__}"], check=True, timeout=120)

    return lambda: best_of(run, repeat=3)


CASES = [
    ("a + b, 1 element, no grad (us/op)", add_no_grad, 1e6),
    ("a + b chain of 10k, record + backward (us/op)", add_chain_backward, 1e6),
    ("MLP 3x16, batch 1, fwd+bwd (us/iter)", lambda T: mlp(T, 16, 1, 200), 1e6),
    ("MLP 3x512, batch 256, fwd+bwd (ms/iter)", lambda T: mlp(T, 512, 256, 5), 1e3),
    ("outer products 64 x 128 x 256, mul (us/op)", lambda T: stacked_outer(T, "mul"), 1e6),
    ("outer products 64 x 128 x 256, matmul (us/op)", lambda T: stacked_outer(T, "matmul"), 1e6),
    ("rfft + irfft, 64 x 4096 float32 (us/iter)", rfft_round_trip, 1e6),
    ("stft 1 s at 16 kHz, n_fft 512, hop 128 (us/op)", stft_16k, 1e6),
    ("import, a fresh interpreter (ms)", import_time, 1e3),
]


def main(only: str | None = None) -> None:
    if torch is not None:
        torch.set_num_threads(max(1, torch.get_num_threads()))
    rows = []
    for name, case, scale in CASES:
        if only is not None and only not in name:
            continue
        ours = case(nt)() * scale
        theirs = case(torch)() * scale if torch is not None else float("nan")
        rows.append((name, ours, theirs, ours / theirs if torch is not None else float("nan")))
    w = max(len(r[0]) for r in rows)
    print(f"{'case':<{w}}  {'numtorch':>10}  {'torch':>10}  {'ratio':>7}")
    for name, ours, theirs, ratio in rows:
        print(f"{name:<{w}}  {ours:>10.2f}  {theirs:>10.2f}  {ratio:>7.2f}")


if __name__ == "__main__":
    import sys

    main(sys.argv[1] if len(sys.argv) > 1 else None)
