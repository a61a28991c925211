"""Fit a small two-layer network with loss.backward() and a manual SGD step.

This is a PyTorch program: only the import line differs.
"""

import numtorch as torch

torch.manual_seed(0)

# Data: a noisy sine wave.
x = torch.linspace(-2, 2, 64).unsqueeze(1)
y = torch.sin(2 * x) + 0.05 * torch.randn(64, 1)

# A 1-32-1 network with tanh hidden units.
w1 = (torch.randn(1, 32) * 1.0).requires_grad_()
b1 = torch.zeros(32, requires_grad=True)
w2 = (torch.randn(32, 1) * 0.3).requires_grad_()
b2 = torch.zeros(1, requires_grad=True)
params = [w1, b1, w2, b2]

lr = 0.1
for step in range(1001):
    hidden = torch.tanh(x @ w1 + b1)
    pred = hidden @ w2 + b2
    loss = ((pred - y) ** 2).mean()

    for p in params:
        p.grad = None
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad

    if step % 100 == 0:
        print(f"step {step:4d}   loss {loss.item():.5f}")
