"""Convolution: numtorch against torch CPU (default threads) on the tutorial CNN's shapes,
measured in one run, after checking that both compute the same numbers.

python benchmarks/bench_conv.py            # best of 7
python benchmarks/bench_conv.py --quick    # best of 2
python benchmarks/bench_conv.py --one-thread  # both libraries on one thread (a shared machine)
"""

from __future__ import annotations

import os
import sys
import time

ONE_THREAD = "--one-thread" in sys.argv
if ONE_THREAD:  # before NumPy loads its BLAS
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402

import numtorch as nt  # noqa: E402

try:
    import torch
    import torch.func

    if ONE_THREAD:
        torch.set_num_threads(1)
except ImportError:  # the table then shows numtorch alone
    torch = None

QUICK = "--quick" in sys.argv
REPEAT = 2 if QUICK else 7


def best_of(fns) -> list[float]:
    """Best wall time of one call of each function, in milliseconds; the functions take
    turns, so that both libraries see the same load on a shared machine."""
    for fn in fns:
        fn()  # warm up
    best = [float("inf")] * len(fns)
    for _ in range(REPEAT):
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - t)
    return [b * 1e3 for b in best]


def _arr(*shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


X2 = _arr(64, 32, 26, 26)
W2, B2 = _arr(64, 32, 3, 3, seed=1, scale=0.06), _arr(64, seed=2)
IMG = _arr(64, 1, 28, 28, seed=3)
PARAMS = {
    "w1": _arr(32, 1, 3, 3, seed=4, scale=0.3), "b1": _arr(32, seed=5, scale=0.1),
    "w2": _arr(64, 32, 3, 3, seed=6, scale=0.06), "b2": _arr(64, seed=7, scale=0.1),
}  # fmt: skip


def forward(T):
    x, w, b = T.tensor(X2), T.tensor(W2), T.tensor(B2)
    F = T.nn.functional
    return lambda: F.conv2d(x, w, b)


def forward_backward(T):
    x, w, b = T.tensor(X2).requires_grad_(), T.tensor(W2).requires_grad_(), T.tensor(B2)
    g = T.tensor(_arr(64, 64, 24, 24, seed=8))
    F = T.nn.functional

    def run():
        out = F.conv2d(x, w, b)
        return T.autograd.grad(out, (x, w), g)

    return run


def per_sample_grads(T):
    """vmap(grad) of conv2d(1->32,3) relu conv2d(32->64,3) relu sum, over a batch of 64."""
    F = T.nn.functional
    params = {k: T.tensor(v) for k, v in PARAMS.items()}
    img = T.tensor(IMG)
    fn = nt.func if T is nt else torch.func

    def loss(p, x):
        h = F.conv2d(x.unsqueeze(0), p["w1"], p["b1"]).relu()
        h = F.conv2d(h, p["w2"], p["b2"]).relu()
        return (h * h).mean()

    return lambda: fn.vmap(fn.grad(loss), in_dims=(None, 0))(params, img)


FC = {
    "fc1": _arr(9216, 128, seed=9, scale=0.01), "fb1": _arr(128, seed=10, scale=0.1),
    "fc2": _arr(128, 10, seed=11, scale=0.1), "fb2": _arr(10, seed=12, scale=0.1),
}  # fmt: skip
LABELS = np.random.default_rng(13).integers(0, 10, 64)


def tutorial_cnn(T):
    """vmap(grad) of the tutorial CNN's loss (max_pool2d(2) written as reshape + amax, nll as
    gather + mean), over a batch of 64."""
    F = T.nn.functional
    params = {k: T.tensor(v) for k, v in {**PARAMS, **FC}.items()}
    img, labels = T.tensor(IMG), T.tensor(LABELS)
    fn = nt.func if T is nt else torch.func

    def loss(p, x, y):
        h = F.conv2d(x.unsqueeze(0), p["w1"], p["b1"]).relu()
        h = F.conv2d(h, p["w2"], p["b2"]).relu()
        h = h.reshape(1, 64, 12, 2, 12, 2).amax((3, 5))
        h = (h.reshape(1, -1) @ p["fc1"] + p["fb1"]).relu()
        logits = h @ p["fc2"] + p["fb2"]
        return -F.log_softmax(logits, 1).gather(1, y.reshape(1, 1)).mean()

    return lambda: fn.vmap(fn.grad(loss), in_dims=(None, 0, 0))(params, img, labels)


def _numpy(out):
    if isinstance(out, dict):
        return [_numpy(v) for v in out.values()]
    if isinstance(out, (tuple, list)):
        return [np.asarray(_numpy(v)) for v in out]
    return out.detach().numpy()


def main() -> None:
    rows = [("conv2d forward", forward), ("conv2d forward+backward", forward_backward),
            ("vmap(grad) 2-conv model", per_sample_grads), ("vmap(grad) tutorial CNN", tutorial_cnn)]  # fmt: skip
    print(f"{'case':28s} {'numtorch ms':>12s} {'torch ms':>10s} {'ratio':>6s}")
    for name, case in rows:
        f_nt = case(nt)
        if torch is not None:
            f_t = case(torch)
            for a, b in zip(_numpy(f_nt()), _numpy(f_t())):
                scale = float(np.abs(b).max())  # float32 sums of many terms: compare to the scale
                np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5 * scale, err_msg=name)
        t_nt, t_t = best_of([f_nt, f_t]) if torch is not None else (*best_of([f_nt]), float("nan"))
        print(f"{name:28s} {t_nt:12.1f} {t_t:10.1f} {t_nt / t_t:6.2f}")


if __name__ == "__main__":
    main()
