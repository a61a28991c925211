"""examples/vae.py on a few steps: the loss is the negative ELBO written out by hand, its
posterior draws are reparameterized, a short run learns, and the decoder's samples are
images."""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest
from scipy import special

import numtorch as nt

_PATH = pathlib.Path(__file__).resolve().parents[1] / "examples" / "vae.py"


@pytest.fixture(scope="module")
def vae():
    spec = importlib.util.spec_from_file_location("vae", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _continuous_bernoulli_log_prob(x, logits):
    """log C(p) + x log p + (1 - x) log(1 - p), C(p) = 2 atanh(1 - 2p) / (1 - 2p)."""
    p = special.expit(logits)
    log_norm = np.log(2 * np.arctanh(1 - 2 * p) / (1 - 2 * p))
    return log_norm + x * np.log(p) + (1 - x) * np.log1p(-p)


def test_loss_is_the_negative_elbo_by_hand(vae):
    train_set, _ = vae.load_digits(seed=0)
    x = train_set[:16]
    nt.manual_seed(0)
    model = vae.VAE()
    nt.manual_seed(5)
    loss = model.loss(x)
    q = model.posterior(x)
    nt.manual_seed(5)
    z = q.rsample()
    mu, sigma = q.base_dist.loc.detach().numpy(), q.base_dist.scale.detach().numpy()
    kl = 0.5 * (sigma**2 + mu**2 - 1 - 2 * np.log(sigma)).sum(-1)
    logits = model.decoder(z).detach().numpy().astype(np.float64)
    log_lik = _continuous_bernoulli_log_prob(x.numpy(), logits).sum(-1)
    np.testing.assert_allclose(loss.item(), (kl - log_lik).mean(), rtol=1e-4)
    # the draw is reparameterized: the loss reaches the encoder through z
    grads = nt.autograd.grad(loss, list(model.encoder.parameters()))
    assert all(g.abs().sum().item() > 0 for g in grads)


def test_short_run_learns_and_samples_images(vae, capsys):
    res = vae.main(["--epochs", "3", "--max-steps", "40", "--quiet"])
    history = res["history"]
    assert len(history) == 3 and history[-1] < history[0]
    images = res["model"].sample(5)
    assert tuple(images.shape) == (5, 64)
    assert ((images >= 0) & (images <= 1)).all().item()
    assert "VAE test -ELBO" in capsys.readouterr().out
