"""vmap against a Python loop, numtorch beside torch.func, measured in one run.

python benchmarks/bench_vmap.py          # the full table
python benchmarks/bench_vmap.py --quick  # smaller Jacobians, fewer repeats
"""

from __future__ import annotations

import sys
import time

import numpy as np

import numtorch as nt

try:
    import torch
    import torch.func
except ImportError:  # the table then shows numtorch alone
    torch = None

QUICK = "--quick" in sys.argv


def best_of(fn, repeat: int = 3) -> float:
    """Best wall time of one call, in seconds."""
    fn()  # warm up
    best = float("inf")
    for _ in range(1 if QUICK else repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _data(T, *shape, seed=0):
    return T.tensor(np.random.default_rng(seed).standard_normal(shape))


def _vmap(T):
    return nt.vmap if T is nt else torch.func.vmap


def _stack_loop(T, fn, *args):
    return T.stack([fn(*(a[i] for a in args)) for i in range(args[0].shape[0])])


def elementwise(T):
    x = _data(T, 256, 128)

    def f(v):
        return (v.sin() * v + 1.0).exp().tanh() - v * 0.5

    return lambda: _vmap(T)(f)(x), lambda: _stack_loop(T, f, x)


def matmul(T):
    w = _data(T, 64, 64)
    x = _data(T, 256, 64, seed=1)

    def f(v):
        return (w @ v).relu()

    return lambda: _vmap(T)(f)(x), lambda: _stack_loop(T, f, x)


def reduction(T):
    x = _data(T, 256, 32, 32)

    def f(v):
        return v.softmax(-1).sum(0) / v.norm()

    return lambda: _vmap(T)(f)(x), lambda: _stack_loop(T, f, x)


def jacobian(n: int):
    def case(T):
        w = _data(T, n, n) / n**0.5
        x = _data(T, n, seed=1).requires_grad_()
        y = (w @ x).tanh()
        eye = T.eye(n, dtype=T.float64)

        def vjp(v):
            return T.autograd.grad(y, x, v, retain_graph=True)[0]

        return lambda: _vmap(T)(vjp)(eye), lambda: _stack_loop(T, vjp, eye)

    return case


CASES = [
    ("elementwise chain, 256 x (128,)", elementwise),
    ("matmul W @ v, 256 x (64,)", matmul),
    ("softmax + sum + norm, 256 x (32, 32)", reduction),
    *(
        (f"Jacobian, vmap over autograd.grad, N={n}", jacobian(n))
        for n in ((64, 256) if QUICK else (64, 256, 1024))
    ),
]


def main() -> None:
    cols = ["vmap", "loop", "loop/vmap"] + (["torch vmap", "torch loop"] if torch else [])
    print(f"{'case (ms)':44s}" + "".join(f"{c:>12s}" for c in cols))
    for name, case in CASES:
        v, loop = case(nt)
        tv, tl = best_of(v), best_of(loop)
        row = [tv * 1e3, tl * 1e3, tl / tv]
        if torch is not None:
            pv, pl = case(torch)
            row += [best_of(pv) * 1e3, best_of(pl) * 1e3]
        print(f"{name:44s}" + "".join(f"{x:12.2f}" for x in row))


if __name__ == "__main__":
    main()
