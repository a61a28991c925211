"""A variational autoencoder on scikit-learn's 8x8 digits, with torch.distributions.

Written as a PyTorch user writes it (only the import line says numtorch): the encoder
gives a diagonal Normal posterior q(z | x), a reparameterized draw z = q.rsample() feeds
the decoder, whose logits make a ContinuousBernoulli likelihood of the pixel intensities
in [0, 1]; the loss is the negative ELBO, -E_q[log p(x | z)] + KL(q(z | x) || N(0, I)),
with the KL in closed form from kl_divergence. Adam on minibatches; each epoch reports
the test set's negative ELBO per image.

    python examples/vae.py               # 30 epochs, about 10 s on 2 cores

The likelihood is a density, so the negative ELBO (in nats per image) goes below zero.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import numtorch as torch
import numtorch.nn.functional as F
from numtorch import nn
from numtorch.distributions import ContinuousBernoulli, Independent, Normal, kl_divergence


def load_digits(seed: int):
    """scikit-learn's bundled 8x8 digits (1,797 images) as (n, 64) intensities in [0, 1];
    an 80/20 split."""
    from sklearn.datasets import load_digits as sk_digits

    images, _ = sk_digits(return_X_y=True)
    order = np.random.default_rng(seed).permutation(len(images))
    x = torch.tensor(images[order] / 16.0, dtype=torch.float32)
    cut = int(0.8 * len(x))
    return x[:cut], x[cut:]


class VAE(nn.Module):
    def __init__(self, pixels: int = 64, hidden: int = 128, latent: int = 4):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Linear(pixels, hidden), nn.ReLU(), nn.Linear(hidden, 2 * latent)
        )
        self.decoder = nn.Sequential(
            nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, pixels)
        )
        self.latent = latent

    def posterior(self, x):
        loc, pre_scale = self.encoder(x).chunk(2, dim=-1)
        return Independent(Normal(loc, F.softplus(pre_scale) + 1e-4), 1)

    def likelihood(self, z):
        return Independent(ContinuousBernoulli(logits=self.decoder(z)), 1)

    def prior(self):
        return Independent(Normal(torch.zeros(self.latent), torch.ones(self.latent)), 1)

    def loss(self, x):
        """The negative ELBO per image, averaged over the batch."""
        q = self.posterior(x)
        z = q.rsample()
        return (kl_divergence(q, self.prior()) - self.likelihood(z).log_prob(x)).mean()

    @torch.no_grad()
    def sample(self, n: int):
        """Mean images of the decoder at n draws from the prior."""
        return self.likelihood(self.prior().sample((n,))).mean


def train(args, train_set, test_set):
    """Returns the test set's negative ELBO per image after each epoch."""
    torch.manual_seed(args.seed)
    model = VAE()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    n, steps, history = len(train_set), 0, []
    for epoch in range(1, args.epochs + 1):
        for idx in torch.randperm(n).split(args.batch_size):
            if args.max_steps and steps >= args.max_steps:
                break
            loss = model.loss(train_set[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            steps += 1
        with torch.no_grad():
            history.append(model.loss(test_set).item())
        if not args.quiet:
            print(f"epoch {epoch:3d}  test -ELBO {history[-1]:8.2f} nats per image")
    return model, history


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps")
    p.add_argument("--quiet", action="store_true", help="no line per epoch")
    return p.parse_args(argv)


def main(argv=None) -> dict:
    args = parse(argv)
    start = time.perf_counter()
    train_set, test_set = load_digits(args.seed)
    model, history = train(args, train_set, test_set)
    wall = time.perf_counter() - start
    print(
        f"VAE test -ELBO {history[0]:.2f} after epoch 1, {history[-1]:.2f} after epoch "
        f"{len(history)} (nats per image); {wall:.0f} s"
    )
    return {"model": model, "history": history, "seconds": wall}


if __name__ == "__main__":
    main()
