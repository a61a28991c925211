"""Compiled autograd beside numtorch's eager engine and PyTorch's eager backward, measured
in one run; every compiled row is first checked bit for bit against eager.

python benchmarks/bench_compile.py
"""

from __future__ import annotations

import numpy as np
from bench_eager import best_of

import numtorch as nt
from numtorch._dynamo import compiled_autograd

try:
    import torch
except ImportError:  # the table then shows numtorch alone
    torch = None


def add_chain(T):
    """Backward of a chain of 10,000 adds (each add also reads the leaf)."""
    x = T.ones(3, requires_grad=True)

    def build():
        x.grad = None
        y = x
        for _ in range(10_000):
            y = y + x
        return y.sum(), [x]

    return build


def mlp(width: int, batch: int):
    def case(T):
        """Backward of a 3-layer MLP's mean squared output."""
        T.manual_seed(0)
        x = T.randn(batch, width)
        ws = [(T.randn(width, width) / width**0.5).requires_grad_() for _ in range(3)]
        bs = [T.zeros(width, requires_grad=True) for _ in range(3)]

        def build():
            for p in ws + bs:
                p.grad = None
            h = x
            for i, (w, b) in enumerate(zip(ws, bs)):
                h = h @ w + b
                if i < 2:
                    h = T.relu(h)
            return (h * h).mean(), ws + bs

        return build

    return case


def backward_time(build, compiled: bool, number: int) -> float:
    """Best time of ``loss.backward()`` alone (the graph is built outside the timing)."""
    ctx = compiled_autograd._enable(lambda g: g) if compiled else _Nothing()
    with ctx:
        build()[0].backward()  # capture (and warm-up)
        times = []
        for _ in range(5):
            losses = [build()[0] for _ in range(number)]
            times.append(best_of(lambda: [loss.backward() for loss in losses], repeat=1))
    return min(times) / number


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def check(build) -> None:
    """The compiled backward's gradients equal eager's bit for bit."""
    loss, params = build()
    loss.backward()
    eager = [p.grad.numpy().copy() for p in params]
    with compiled_autograd._enable(lambda g: g):
        for _ in range(2):  # the capture, then the generated code
            loss, params = build()
            loss.backward()
            for e, p in zip(eager, params):
                assert np.array_equal(e, p.grad.numpy()), "compiled gradients differ from eager"


CASES = [
    ("backward, chain of 10k adds (ms)", add_chain, 1e3, 1),
    ("backward, MLP 3x16, batch 1 (us)", mlp(16, 1), 1e6, 200),
    ("backward, MLP 3x512, batch 256 (ms)", mlp(512, 256), 1e3, 5),
]


def main() -> None:
    rows = []
    for name, case, scale, number in CASES:
        check(case(nt))
        eager = backward_time(case(nt), False, number) * scale
        comp = backward_time(case(nt), True, number) * scale
        theirs = backward_time(case(torch), False, number) * scale if torch else float("nan")
        rows.append((name, eager, comp, theirs))
    w = max(len(r[0]) for r in rows)
    print(
        f"{'case':<{w}}  {'eager':>9}  {'compiled':>9}  {'torch':>9}  {'speed-up':>8}  {'vs torch':>8}"
    )
    for name, eager, comp, theirs in rows:
        print(
            f"{name:<{w}}  {eager:>9.2f}  {comp:>9.2f}  {theirs:>9.2f}  "
            f"{eager / comp:>7.2f}x  {comp / theirs:>7.2f}x"
        )


if __name__ == "__main__":
    main()
