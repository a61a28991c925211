"""Where bench_eager's FFT rows spend their time: CPU time (not wall time, so another
process on the machine does not count) of the same transforms in torch on one thread, in
scipy.fft (the library numtorch's kernels call) and in numtorch.

    python benchmarks/bench_fft_cpu.py
"""

from __future__ import annotations

import time

import numpy as np
import scipy.fft as sf
import torch

import numtorch as nt


def cpu_us(fn, number: int = 30, repeat: int = 7) -> float:
    """Best CPU time of one call, in microseconds."""
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        for _ in range(number):
            fn()
        best = min(best, (time.process_time() - t) / number)
    return best * 1e6


def main() -> None:
    torch.set_num_threads(1)
    x = np.random.default_rng(0).standard_normal((64, 4096)).astype(np.float32)
    tx, nx = torch.from_numpy(x), nt.from_numpy(x)
    frames = np.random.default_rng(1).standard_normal((126, 512)).astype(np.float32)
    s = np.random.default_rng(2).standard_normal(16000).astype(np.float32)
    ts, ns = torch.from_numpy(s), nt.from_numpy(s)
    tw, nw = torch.hann_window(512), nt.hann_window(512)
    rows = [
        (
            "rfft + irfft, 64 x 4096",
            lambda: torch.fft.irfft(torch.fft.rfft(tx), n=4096),
            lambda: sf.irfft(sf.rfft(x, axis=-1), n=4096, axis=-1),
            lambda: nt.fft.irfft(nt.fft.rfft(nx), n=4096),
        ),
        (
            "rfft, 126 x 512 (stft's frames)",
            lambda: torch.fft.rfft(torch.from_numpy(frames)),
            lambda: sf.rfft(frames, axis=-1),
            lambda: nt.fft.rfft(nt.from_numpy(frames)),
        ),
        (
            "stft 1 s at 16 kHz, n_fft 512, hop 128",
            lambda: torch.stft(ts, 512, hop_length=128, window=tw, return_complex=True),
            None,
            lambda: nt.stft(ns, 512, hop_length=128, window=nw, return_complex=True),
        ),
    ]
    print(f"{'CPU us per call':<40}  {'torch 1t':>9}  {'scipy':>9}  {'numtorch':>9}")
    for name, t, s_, n in rows:
        cells = [f"{cpu_us(f):>9.0f}" if f is not None else f"{'-':>9}" for f in (t, s_, n)]
        print(f"{name:<40}  " + "  ".join(cells))
    print("(numtorch's large transforms use every core: its CPU time there sums them)")


if __name__ == "__main__":
    main()
