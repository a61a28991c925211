"""Function transforms: numtorch beside torch.func / torch.autograd.functional, one run.

python benchmarks/bench_transforms.py          # the full table
python benchmarks/bench_transforms.py --quick  # fewer repeats

Every row first checks that numtorch's result matches torch's on the same data,
then times both (median of repeats, in ms). "loop" is a Python loop of
numtorch's per-sample transform where one applies. A numtorch cell reads "n/a"
where the API it needs does not exist yet.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

import numpy as np
import torch
import torch.func

import numtorch as nt

QUICK = "--quick" in sys.argv
REPEAT = 3 if QUICK else 15
DTYPE = np.float32


def median_ms(fn: Callable[[], object], repeat: int = REPEAT) -> float:
    """Median wall time of one call in ms, after one warm-up call."""
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def _array(shape: tuple, seed: int, scale: float = 1.0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(DTYPE)


def _to_numpy(x) -> np.ndarray:
    return np.asarray(x.detach().numpy())


def _leaves(tree) -> list:
    if isinstance(tree, dict):
        return [leaf for k in sorted(tree) for leaf in _leaves(tree[k])]
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in _leaves(t)]
    return [tree]


def assert_agree(ours, theirs, name: str) -> None:
    """numtorch's result equals torch's (same pytree, float32 tolerances)."""
    a, b = _leaves(ours), _leaves(theirs)
    assert len(a) == len(b), f"{name}: {len(a)} outputs vs torch's {len(b)}"
    for x, y in zip(a, b):
        x, y = _to_numpy(x), _to_numpy(y)
        assert x.shape == y.shape, f"{name}: shape {x.shape} vs torch's {y.shape}"
        np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-5, err_msg=name)


# ---------------------------------------------------------------- per-sample gradients

MLP_SHAPES = {"w1": (128, 784), "b1": (128,), "w2": (10, 128), "b2": (10,)}
BATCH = 64


def _mlp_data(T) -> tuple:
    params = {
        k: T.tensor(_array(s, seed=i, scale=1 / s[-1] ** 0.5))
        for i, (k, s) in enumerate(MLP_SHAPES.items())
    }
    x = T.tensor(_array((BATCH, 784), seed=10))
    labels = np.random.default_rng(11).integers(0, 10, BATCH)
    t = T.tensor(np.eye(10, dtype=DTYPE)[labels])
    return params, x, t


def mlp_loss(p: dict, x, t):
    """Cross-entropy of a 784-128-10 tanh MLP on one sample (one-hot target)."""
    h = (p["w1"] @ x + p["b1"]).tanh()
    z = p["w2"] @ h + p["b2"]
    return -(t * z.log_softmax(-1)).sum()


def per_sample_grads(T) -> Callable[[], object]:
    F = T.func
    params, x, t = _mlp_data(T)
    f = F.vmap(F.grad(mlp_loss), in_dims=(None, 0, 0))
    return lambda: f(params, x, t)


def per_sample_loop(T) -> Callable[[], object]:
    params, x, t = _mlp_data(T)
    g = T.func.grad(mlp_loss)

    def loop():
        grads = [g(params, x[i], t[i]) for i in range(BATCH)]
        return {k: T.stack([d[k] for d in grads]) for k in params}

    return loop


# ---------------------------------------------------------------- Jacobians


def _tanh_layer(T, n: int) -> tuple:
    w = T.tensor(_array((n, n), seed=20, scale=n**-0.5))
    x = T.tensor(_array((n,), seed=21))
    return (lambda v: (w @ v).tanh()), x


def functional_jacobian(n: int, vectorize: bool):
    def case(T):
        f, x = _tanh_layer(T, n)
        return lambda: T.autograd.functional.jacobian(f, x, vectorize=vectorize)

    return case


def func_jacobian(n: int, transform: str):
    def case(T):
        f, x = _tanh_layer(T, n)
        jac = getattr(T.func, transform)(f)
        return lambda: jac(x)

    return case


# ---------------------------------------------------------------- Hessians

HESS_WIDTHS = (8, 32, 32, 32, 1)


def _deep_mlp(T) -> tuple:
    layers = [
        (T.tensor(_array((o, i), seed=30 + k, scale=i**-0.5)), T.tensor(_array((o,), seed=40 + k)))
        for k, (i, o) in enumerate(zip(HESS_WIDTHS, HESS_WIDTHS[1:]))
    ]

    def f(v):
        for k, (w, b) in enumerate(layers):
            v = w @ v + b
            if k < len(layers) - 1:
                v = v.tanh()
        return v.sum()

    return f, T.tensor(_array((HESS_WIDTHS[0],), seed=50))


def func_hessian(T) -> Callable[[], object]:
    f, x = _deep_mlp(T)
    hess = T.func.hessian(f)
    return lambda: hess(x)


def functional_hessian(T) -> Callable[[], object]:
    f, x = _deep_mlp(T)
    return lambda: T.autograd.functional.hessian(f, x, vectorize=True)


# ---------------------------------------------------------------- the table


def _has_functional() -> bool:
    return hasattr(nt.autograd, "functional")


def _always() -> bool:
    return True


def _row(name: str, case, loop=None, available=_always) -> tuple:
    return name, case, loop, available


def _jacobian_rows(n: int) -> list:
    return [
        _row(
            f"autograd.functional.jacobian N={n}",
            functional_jacobian(n, False),
            None,
            _has_functional,
        ),
        _row(
            f"autograd.functional.jacobian vec N={n}",
            functional_jacobian(n, True),
            None,
            _has_functional,
        ),
        _row(f"func.jacrev tanh(W @ x) N={n}", func_jacobian(n, "jacrev")),
        _row(f"func.jacfwd tanh(W @ x) N={n}", func_jacobian(n, "jacfwd")),
    ]


ROWS = [
    _row(f"per-sample grad MLP 784-128-10, B={BATCH}", per_sample_grads, per_sample_loop),
    *_jacobian_rows(64),
    *_jacobian_rows(512),
    _row("func.hessian MLP 8-32-32-32-1", func_hessian),
    _row("autograd.functional.hessian vec, same", functional_hessian, None, _has_functional),
]


def _cell(x: float | None) -> str:
    return f"{'n/a':>12s}" if x is None else f"{x:12.2f}"


def main() -> None:
    cols = ["numtorch", "torch", "nt/torch", "nt loop"]
    print(f"median of {REPEAT} calls; torch threads: {torch.get_num_threads()}")
    print(f"{'case (ms)':42s}" + "".join(f"{c:>12s}" for c in cols))
    for name, case, loop, available in ROWS:
        ours = available()
        theirs_fn = case(torch)
        if ours:
            ours_fn = case(nt)
            assert_agree(ours_fn(), theirs_fn(), name)
            if loop is not None:
                assert_agree(loop(nt)(), theirs_fn(), f"{name} (loop)")
        t_theirs = median_ms(theirs_fn)
        t_ours = median_ms(ours_fn) if ours else None
        t_loop = median_ms(loop(nt)) if ours and loop is not None else None
        ratio = t_ours / t_theirs if ours else None
        row = [t_ours, t_theirs, ratio, t_loop]
        print(f"{name:42s}" + "".join(_cell(x) for x in row), flush=True)


if __name__ == "__main__":
    main()
