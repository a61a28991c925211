"""examples/dp_sgd.py on a few batches: per-sample gradients equal a loop of backward
passes, clipping bounds every example's gradient norm, the noise has the advertised
scale, and a short run writes its plot and reports epsilon."""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest

import numtorch as nt

_PATH = pathlib.Path(__file__).resolve().parents[1] / "examples" / "dp_sgd.py"


@pytest.fixture(scope="module")
def dp():
    spec = importlib.util.spec_from_file_location("dp_sgd", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def batch(dp):
    (x, y), _ = dp.load_digits(seed=0)
    return x[:12], y[:12]


def test_per_sample_grads_equal_a_loop(dp, batch):
    nt.manual_seed(0)
    model = dp.DigitCNN()
    x, y = batch
    grads = dp.per_sample_grads(model, x, y)
    for i in range(len(y)):
        model.zero_grad()
        nt.nn.functional.cross_entropy(model(x[i : i + 1]), y[i : i + 1]).backward()
        for name, p in model.named_parameters():
            np.testing.assert_allclose(grads[name][i].numpy(), p.grad.numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("max_norm", [0.05, 1.0, 100.0])
def test_clipping_bounds_each_example(dp, batch, max_norm):
    nt.manual_seed(0)
    grads = dp.per_sample_grads(dp.DigitCNN(), *batch)
    clipped = dp.clip(grads, max_norm)

    def norms(gs):
        return np.sqrt(
            sum((g.flatten(1).numpy().astype(np.float64) ** 2).sum(1) for g in gs.values())
        )

    before, after = norms(grads), norms(clipped)
    assert (after <= max_norm * (1 + 1e-5)).all()
    small = before < max_norm
    np.testing.assert_allclose(after[small], before[small], rtol=1e-5)
    np.testing.assert_allclose(after[~small], max_norm, rtol=1e-4)


def test_noise_scale(dp):
    clipped = {"w": nt.zeros(8, 200, 100)}
    gen = nt.Generator().manual_seed(3)
    out = dp.noisy_mean(
        clipped, noise_multiplier=1.3, max_grad_norm=0.7, expected=5.0, generator=gen
    )
    values = out["w"].numpy().astype(np.float64)
    assert values.shape == (200, 100)
    assert abs(values.std() - 1.3 * 0.7 / 5.0) < 0.01 * (1.3 * 0.7 / 5.0) * 3
    assert abs(values.mean()) < 3 * (1.3 * 0.7 / 5.0) / np.sqrt(values.size)


def test_short_run_reports_epsilon_and_plots(dp, tmp_path, capsys):
    plot = tmp_path / "dp.png"
    res = dp.main(["--epochs", "2", "--max-steps", "3", "--quiet", "--plot", str(plot)])
    assert plot.exists() and plot.stat().st_size > 1000
    assert len(res["dp"]) == len(res["plain"]) == len(res["epsilon"]) == 2
    assert 0 < res["epsilon"][0] <= res["epsilon"][1]
    assert res["epsilon"][1] == pytest.approx(dp.epsilon(64 / 1437, 1.0, 3))
    assert "DP-SGD test accuracy" in capsys.readouterr().out
