"""Compiled autograd beside numtorch's eager engine and PyTorch's eager backward, and
training steps under numtorch.compile beside eager numtorch and PyTorch, measured in one
run; every compiled row is first checked bit for bit against eager.

python benchmarks/bench_compile.py
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

import numpy as np
from bench_eager import best_of

import numtorch as nt
from numtorch._dynamo import compiled_autograd

try:
    import torch
except ImportError:  # the table then shows numtorch alone
    torch = None

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))


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
        for _ in range(15):  # (many: this machine's noise is larger than the rows' gaps)
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


def step_time(lib, compiled: bool, width: int, batch: int, number: int) -> float:
    """Best time of one training step, ``opt.zero_grad(); loss = loss_fn(x, y);
    loss.backward(); opt.step()``, with ``loss_fn`` (the model and its loss) under
    ``numtorch.compile`` when ``compiled``."""
    step, _ = train_step(lib, compiled, width, batch)
    for _ in range(3):  # the trace, and warm-up
        step()
    return best_of(step, repeat=7, number=number)


def train_step(lib, compiled: bool, width: int, batch: int):
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(
        nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 1)
    )
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    x, y = lib.randn(batch, width), lib.randn(batch, 1)

    def loss_fn(x, y):
        return nn.functional.mse_loss(model(x), y)

    if compiled:
        loss_fn = lib.compile(loss_fn)

    def step():
        opt.zero_grad()
        loss = loss_fn(x, y)
        loss.backward()
        opt.step()

    step.loss_fn = loss_fn
    return step, model


def bare_step(lib, width: int = 16, batch: int = 1, lr: float = 0.01):
    """A training step written as a bare loop: the forward, ``loss.backward()``, then each
    parameter updated in place under no_grad and its ``.grad`` set to None."""
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(
        nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 1)
    )
    params = list(model.parameters())
    x, y = lib.randn(batch, width), lib.randn(batch, 1)

    def step():
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        with lib.no_grad():
            for p in params:
                p.sub_(lr * p.grad)
                p.grad = None
        return loss

    return step, params, (x, y)


def numpy_step(width: int = 16, batch: int = 1, lr: float = 0.01):
    """``bare_step``'s arithmetic written by hand in NumPy, on numtorch's initial weights."""
    _, params, (x, y) = bare_step(nt, width, batch, lr)
    w1, b1, w2, b2, w3, b3 = (p.detach().numpy().copy() for p in params)
    x, y = x.numpy(), y.numpy()
    ps = [w1, b1, w2, b2, w3, b3]

    def step():
        a1 = x @ w1.T + b1
        h1 = np.maximum(0, a1)
        a2 = h1 @ w2.T + b2
        h2 = np.maximum(0, a2)
        d = h2 @ w3.T + b3 - y
        loss = (d * d).sum() / d.size
        g3 = d * (2 / d.size)
        g2 = (g3 @ w3) * (a2 > 0)
        g1 = (g2 @ w2) * (a1 > 0)
        grads = [g1.T @ x, g1.sum(0), g2.T @ h1, g2.sum(0), g3.T @ h2, g3.sum(0)]
        for p, g in zip(ps, grads):
            p -= lr * g
        return loss

    return step, ps


def check_bare() -> None:
    """The compiled bare-loop step (with compiled autograd on and off) leaves eager's
    parameters bit for bit and its .grad None; the NumPy step stays close to eager's."""
    results = []
    for compiled, ca in ((False, False), (True, False), (True, True)):
        step, params, _ = bare_step(nt)
        if compiled:
            step = nt.compile(step)
        with compiled_autograd._enable(nt.compile) if ca else _Nothing():
            for _ in range(5):
                step()
        assert all(p.grad is None for p in params), "a .grad left after the step"
        results.append([p.detach().numpy().copy() for p in params])
    for c in results[1:]:
        for e, got in zip(results[0], c):
            assert np.array_equal(e, got), "the compiled bare-loop step differs from eager"
    step, ps = numpy_step()
    for _ in range(5):
        step()
    for e, got in zip(results[0], ps):
        np.testing.assert_allclose(got, e, rtol=1e-4, atol=1e-6)


def bare_time(lib, compiled: bool = False, ca: bool = False, number: int = 200) -> float:
    """Best time of one bare-loop step (``lib`` None: the NumPy step)."""
    step = numpy_step()[0] if lib is None else bare_step(lib)[0]
    if compiled:
        step = lib.compile(step)
    with compiled_autograd._enable(nt.compile) if ca else _Nothing():
        for _ in range(3):  # the trace, and warm-up
            step()
        return best_of(step, repeat=7, number=number)


def bare_table() -> None:
    """The bare-loop step's table: each way of running it, against PyTorch eager and NumPy."""
    check_bare()
    rows = [
        ("numtorch eager", bare_time(nt)),
        ("numtorch.compile", bare_time(nt, compiled=True)),
        ("numtorch.compile, compiled autograd on", bare_time(nt, compiled=True, ca=True)),
        ("PyTorch eager", bare_time(torch) if torch else float("nan")),
        ("NumPy by hand", bare_time(None)),
    ]
    theirs, numpy_ = rows[3][1], rows[4][1]
    name = "bare-loop training step, MLP 3x16, batch 1 (us)"
    w = max(len(name), *(len(r[0]) for r in rows))
    print(f"\n{name:<{w}}  {'time':>9}  {'vs torch':>8}  {'vs numpy':>8}")
    for what, t in rows:
        print(f"{what:<{w}}  {t * 1e6:>9.2f}  {t / theirs:>7.2f}x  {t / numpy_:>7.2f}x")


# 100 steps over 50 batch sizes (16..65, each twice, shuffled): the first sight of a size
# traces it unless a program made for other sizes serves it
VARYING = np.random.default_rng(1).permutation(np.repeat(np.arange(16, 66), 2)).tolist()


def varying_step(lib, compiled: bool, width: int = 64):
    """A training step (as ``train_step``'s) on a batch of the next size in ``VARYING``."""
    step, model = train_step(lib, compiled, width, max(VARYING))
    sizes = itertools.cycle(VARYING)
    lib.manual_seed(1)
    data = lib.randn(max(VARYING), width), lib.randn(max(VARYING), 1)
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = step.loss_fn

    def run():
        n = next(sizes)
        opt.zero_grad()
        loss_fn(data[0][:n], data[1][:n]).backward()
        opt.step()

    return run, model


def varying_time(lib, compiled: bool) -> float:
    """The mean step over ``VARYING``'s sizes, traces included."""
    run, _ = varying_step(lib, compiled)
    t = time.perf_counter()
    for _ in VARYING:
        run()
    return (time.perf_counter() - t) / len(VARYING)


def check_training(make, steps: int, what: str) -> None:
    """``steps`` compiled steps leave the parameters eager's leave, bit for bit; ``make``
    takes whether to compile and gives a step and its model."""
    results = []
    for compiled in (False, True):
        step, model = make(compiled)
        for _ in range(steps):
            step()
        results.append([p.detach().numpy().copy() for p in model.parameters()])
    for e, c in zip(*results):
        assert np.array_equal(e, c), f"compiled {what} differs from eager"


def dp_step(lib, compiled: bool, batch: int = 64, sizes=None):
    """One DP-SGD step of examples/dp_sgd.py's model and recipe on a fixed batch (or, with
    ``sizes``, on batches of those sizes in turn, as Poisson sampling draws them):
    per-sample gradients (vmap of grad over functional_call), each clipped to norm 1,
    summed with Gaussian noise, then an SGD step; the gradient computation compiled."""
    import dp_sgd  # the main job's model and recipe (examples/)

    lib.manual_seed(0)
    model = dp_sgd.DigitCNN() if lib is nt else _torch_digit_cnn()
    opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    gen = lib.Generator().manual_seed(0)
    most = max(sizes) if sizes else batch
    x_all, y_all = lib.randn(most, 1, 8, 8), lib.randint(0, 10, (most,))
    turn = itertools.cycle(sizes or [batch])
    F, func = lib.nn.functional, lib.func

    def update(x, y):
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss_of_one(p, xi, yi):
            out = func.functional_call(model, p, (xi.unsqueeze(0),))
            return F.cross_entropy(out, yi.unsqueeze(0))

        grads = func.vmap(func.grad(loss_of_one), in_dims=(None, 0, 0))(params, x, y)
        norms = lib.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in grads.values()))
        scale = (1.0 / (norms + 1e-6)).clamp(max=1.0)
        return {
            k: ((g * scale.view(-1, *[1] * (g.dim() - 1))).sum(0)
                + lib.normal(0.0, 1.1, g.shape[1:], generator=gen)) / x.shape[0]
            for k, g in grads.items()
        }  # fmt: skip

    if compiled:
        update = lib.compile(update)

    def step():
        n = next(turn)
        opt.zero_grad()
        new = update(x_all[:n], y_all[:n])
        for name, p in model.named_parameters():
            p.grad = new[name]
        opt.step()

    return step, model


def _torch_digit_cnn():
    """The same network as examples/dp_sgd.py's DigitCNN, in PyTorch's layers."""
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 2 * 2, 10),
    )  # fmt: skip


def dp_time(lib, compiled: bool) -> float:
    step, _ = dp_step(lib, compiled)
    for _ in range(2):
        step()
    return best_of(step, repeat=5, number=2)


# 200 Poisson-sampled batch sizes (1,797 digits at rate 64/1,797): the first sight of each
# size traces it, later ones replay
POISSON = np.random.default_rng(0).binomial(1797, 64 / 1797, 200).tolist()


def dp_poisson_time(lib, compiled: bool) -> float:
    """The mean step over 200 Poisson-sampled batches, new sizes' traces included."""
    step, _ = dp_step(lib, compiled, sizes=POISSON)
    step()
    t = time.perf_counter()
    for _ in POISSON:
        step()
    return (time.perf_counter() - t) / len(POISSON)


STEPS = [
    ("training step, MLP 3x16, batch 1 (us)", 16, 1, 1e6, 200),
    ("training step, MLP 3x512, batch 256 (ms)", 512, 256, 1e3, 5),
]

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
    for name, width, batch, scale, number in STEPS:
        check_training(lambda c: train_step(nt, c, width, batch), 5, "training")
        eager, comp = (step_time(nt, c, width, batch, number) * scale for c in (False, True))
        theirs = step_time(torch, False, width, batch, number) * scale if torch else float("nan")
        rows.append((name, eager, comp, theirs))
    check_training(lambda c: varying_step(nt, c), 12, "training at changing sizes")
    eager, comp = (varying_time(nt, c) * 1e3 for c in (False, True))
    theirs = varying_time(torch, False) * 1e3 if torch else float("nan")
    rows.append(
        ("training step, MLP 3x64, 100 batches of 50 sizes, mean (ms)", eager, comp, theirs)
    )
    check_training(lambda c: dp_step(nt, c), 3, "DP-SGD")
    eager, comp = (dp_time(nt, c) * 1e3 for c in (False, True))
    theirs = dp_time(torch, False) * 1e3 if torch else float("nan")
    rows.append(("DP-SGD step, examples/dp_sgd.py's CNN, batch 64 (ms)", eager, comp, theirs))
    eager, comp = (dp_poisson_time(nt, c) * 1e3 for c in (False, True))
    theirs = dp_poisson_time(torch, False) * 1e3 if torch else float("nan")
    distinct = len(set(POISSON))
    name = f"DP-SGD, 200 Poisson batches ({distinct} sizes), mean step (ms)"
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
    bare_table()


if __name__ == "__main__":
    main()
