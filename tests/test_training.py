"""A PyTorch training program runs unchanged on numtorch and follows the same losses."""

from __future__ import annotations

import numpy as np
from twolibs import assert_same


def train(T, steps: int = 30) -> list[float]:
    rng = np.random.default_rng(0)
    x = T.tensor(rng.uniform(-2, 2, (64, 3)), dtype=T.float32)
    y = T.sin(x.sum(dim=1, keepdim=True))
    params = [
        T.tensor(rng.standard_normal((3, 16)) * 0.5, dtype=T.float32, requires_grad=True),
        T.zeros(16, requires_grad=True),
        T.tensor(rng.standard_normal((16, 1)) * 0.3, dtype=T.float32, requires_grad=True),
        T.zeros(1, requires_grad=True),
    ]
    w1, b1, w2, b2 = params
    losses = []
    for _ in range(steps):
        hidden = T.relu(x @ w1 + b1)
        pred = T.tanh(hidden @ w2 + b2)
        loss = ((pred - y) ** 2).mean() + 1e-3 * sum((p * p).sum() for p in params)
        for p in params:
            if p.grad is not None:
                p.grad.zero_()
        loss.backward()
        with T.no_grad():
            for p in params:
                p.sub_(0.2 * p.grad)
        losses.append(loss.item())
    return losses


def test_training_loop_matches_pytorch():
    ours = assert_same(train, rtol=1e-4, atol=0)
    assert ours[-1] < 0.5 * ours[0]
