"""Differentially private training of a small CNN on scikit-learn's digits, beside the same
model trained without privacy.

DP-SGD, written as a PyTorch user writes it (only the import line says numtorch):
Poisson-sampled batches; per-sample gradients with vmap(grad(...)) over functional_call;
each example's gradient clipped to max_grad_norm over all parameters; Gaussian noise of
std noise_multiplier * max_grad_norm added to the sum; an optimizer step. The privacy
spent, epsilon at delta = 1e-5, comes from Google's dp-accounting (RDP accountant).

    python examples/dp_sgd.py            # both runs, a summary line, dp_sgd.png
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import numtorch as torch
import numtorch.nn.functional as F
from numtorch import nn
from numtorch.func import functional_call, grad, vmap

DELTA = 1e-5


class DigitCNN(nn.Module):
    """Two 3x3 convolutions with max pooling, then a linear classifier (8x8 -> 10)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 2 * 2, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


def load_digits(seed: int):
    """scikit-learn's bundled 8x8 digits (1,797 images), scaled to [0, 1]; an 80/20 split."""
    from sklearn.datasets import load_digits as sk_digits

    images, labels = sk_digits(return_X_y=True)
    order = np.random.default_rng(seed).permutation(len(labels))
    images = torch.tensor(images[order] / 16.0, dtype=torch.float32).reshape(-1, 1, 8, 8)
    labels = torch.tensor(labels[order])
    cut = int(0.8 * len(labels))
    return (images[:cut], labels[:cut]), (images[cut:], labels[cut:])


def per_sample_grads(model: nn.Module, x, y) -> dict:
    """Each example's gradient of the loss, for every parameter: {name: (batch, *shape)}."""
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def loss_of_one(params, buffers, xi, yi):
        out = functional_call(model, (params, buffers), (xi.unsqueeze(0),))
        return F.cross_entropy(out, yi.unsqueeze(0))

    return vmap(grad(loss_of_one), in_dims=(None, None, 0, 0))(params, buffers, x, y)


def clip(grads: dict, max_grad_norm: float) -> dict:
    """Each example's gradient scaled to norm at most max_grad_norm (over all parameters)."""
    norms = torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in grads.values()))
    scale = (max_grad_norm / (norms + 1e-6)).clamp(max=1.0)
    return {k: g * scale.view(-1, *[1] * (g.dim() - 1)) for k, g in grads.items()}


def noisy_mean(clipped: dict, noise_multiplier: float, max_grad_norm: float, expected: float,
               generator) -> dict:  # fmt: skip
    """The sum of the clipped gradients plus N(0, (noise_multiplier * max_grad_norm)^2)
    noise per coordinate, over the expected batch size."""
    std = noise_multiplier * max_grad_norm
    return {
        k: (g.sum(0) + torch.normal(0.0, std, g.shape[1:], generator=generator)) / expected
        for k, g in clipped.items()
    }


def accuracy(model: nn.Module, x, y) -> float:
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def epsilon(sample_rate: float, noise_multiplier: float, steps: int) -> float:
    """The privacy spent after ``steps`` Poisson-sampled Gaussian steps (RDP accountant)."""
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant

    accountant = rdp_privacy_accountant.RdpAccountant()
    event = dp_event.PoissonSampledDpEvent(sample_rate, dp_event.GaussianDpEvent(noise_multiplier))
    accountant.compose(event, steps)
    return accountant.get_epsilon(target_delta=DELTA)


def train(args, train_set, test_set, private: bool):
    """Train one model; returns (test accuracy per epoch, epsilon per epoch or None)."""
    from tqdm import tqdm

    torch.manual_seed(args.seed)
    generator = torch.Generator().manual_seed(args.seed)
    model = DigitCNN()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    x_train, y_train = train_set
    n = len(y_train)
    rate = args.batch_size / n
    steps_per_epoch = max(1, round(1 / rate))
    accs, epsilons, steps = [], [], 0
    for epoch in range(1, args.epochs + 1):
        order = torch.randperm(n, generator=generator)
        bar = tqdm(range(steps_per_epoch), desc=f"{'DP-SGD' if private else 'SGD'} epoch {epoch}",
                   leave=False, disable=args.quiet)  # fmt: skip
        for step in bar:
            if args.max_steps and steps >= args.max_steps:
                break
            optimizer.zero_grad()
            if private:  # Poisson sampling: each example joins the batch with prob. rate
                idx = (torch.rand(n, generator=generator) < rate).nonzero().flatten()
                grads = clip(
                    per_sample_grads(model, x_train[idx], y_train[idx]), args.max_grad_norm
                )
                update = noisy_mean(grads, args.noise_multiplier, args.max_grad_norm,
                                    rate * n, generator)  # fmt: skip
                for name, p in model.named_parameters():
                    p.grad = update[name]
            else:
                idx = order[step * args.batch_size : (step + 1) * args.batch_size]
                loss = F.cross_entropy(model(x_train[idx]), y_train[idx])
                loss.backward()
            optimizer.step()
            steps += 1
        accs.append(accuracy(model, *test_set))
        if private:
            epsilons.append(epsilon(rate, args.noise_multiplier, steps))
    return accs, (epsilons if private else None)


def plot(path: str, dp_acc, plain_acc, epsilons) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    epochs = range(1, len(dp_acc) + 1)
    fig, ax = plt.subplots(figsize=(6.4, 4))
    ax.plot(epochs, plain_acc, "o-", label="SGD (no privacy)")
    ax.plot(epochs, dp_acc, "s-", label="DP-SGD")
    ax.set_xlabel("epoch")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("test accuracy")
    ax.set_ylim(0, 1)
    eps_ax = ax.twinx()
    eps_ax.plot(epochs, epsilons, "k--", label=f"DP-SGD ε (δ = {DELTA:g})")
    eps_ax.set_ylabel("ε")
    lines = ax.get_legend_handles_labels()
    more = eps_ax.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], loc="lower right")
    ax.set_title("Digits CNN: DP-SGD beside SGD (numtorch)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=64, help="expected batch size")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--noise-multiplier", type=float, default=1.0)
    p.add_argument("--max-grad-norm", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--plot", default="dp_sgd.png", help="where to write the plot")
    p.add_argument("--max-steps", type=int, default=0, help="stop each run after this many steps")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    return p.parse_args(argv)


def main(argv=None) -> dict:
    args = parse(argv)
    start = time.perf_counter()
    train_set, test_set = load_digits(args.seed)
    dp_acc, epsilons = train(args, train_set, test_set, private=True)
    plain_acc, _ = train(args, train_set, test_set, private=False)
    plot(args.plot, dp_acc, plain_acc, epsilons)
    wall = time.perf_counter() - start
    print(
        f"DP-SGD test accuracy {dp_acc[-1]:.1%} at ε = {epsilons[-1]:.2f} (δ = {DELTA:g}); "
        f"without privacy {plain_acc[-1]:.1%}; {args.epochs} epochs each in {wall:.0f} s; "
        f"plot: {args.plot}"
    )
    return {"dp": dp_acc, "plain": plain_acc, "epsilon": epsilons, "seconds": wall}


if __name__ == "__main__":
    main()
