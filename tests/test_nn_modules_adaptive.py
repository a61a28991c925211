"""nn.AdaptiveLogSoftmaxWithLoss against torch with the same weights: the targets'
log-probabilities and loss with their gradients, the full log-probabilities, the
predictions, and the errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from twolibs import assert_close, assert_same_error
from twomods import pair

import numtorch as nt

ARGS = (6, 10, [3, 6])  # in_features, n_classes, cutoffs: a shortlist and two clusters


def _data(n: int = 7, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, ARGS[0])), rng.integers(0, ARGS[1], n)


@pytest.mark.parametrize("head_bias", [False, True])
@pytest.mark.parametrize("batched", [True, False])
def test_forward_and_gradients(head_bias, batched):
    tmod, nmod = pair("AdaptiveLogSoftmaxWithLoss", *ARGS, div_value=2.0, head_bias=head_bias)
    assert repr(nmod) == repr(tmod)
    assert list(nmod.state_dict()) == list(tmod.state_dict())
    x, y = _data()
    if not batched:
        x, y = x[0], y[0]
    results = []
    for lib, mod in ((nt, nmod), (torch, tmod)):
        xt = lib.tensor(x).requires_grad_()
        out, loss = mod(xt, lib.tensor(y))
        grads = lib.autograd.grad(
            loss + out.sum() * 0.5, [xt, *mod.parameters()], allow_unused=True
        )
        full = (mod.log_prob(lib.tensor(x)), mod.predict(lib.tensor(x))) if batched else ()
        results.append((out, loss, grads, *full))
    assert_close(results[0], results[1], rtol=1e-9, atol=1e-12)
    if not batched:  # torch's log_prob/predict fail on one row (log_softmax over dim 1)
        x2 = x[None]
        assert_close(nmod.log_prob(nt.tensor(x)), nmod.log_prob(nt.tensor(x2))[0])
        assert_close(nmod.predict(nt.tensor(x)), nmod.predict(nt.tensor(x2))[0])


def test_predict_reaches_the_clusters():
    tmod, nmod = pair("AdaptiveLogSoftmaxWithLoss", *ARGS)
    with torch.no_grad():  # make the cluster slots win for some rows
        tmod.head.weight[3:] *= 6
    nmod.head.weight.data.copy_(nt.tensor(tmod.head.weight.detach().numpy()))
    x = np.random.default_rng(3).standard_normal((12, ARGS[0]))
    got, want = nmod.predict(nt.tensor(x)), tmod.predict(torch.tensor(x))
    assert (want >= 3).any() and (want < 3).any()
    assert_close(got, want)


@pytest.mark.parametrize(
    "bad",
    [
        lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, []),
        lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 3]),
        lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3, 10]),
        lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3, 3]),
        lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [0, 3]),
        lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [2])(
            lib.zeros(3, 4), lib.tensor([1, 2])
        ),
        lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [2])(
            lib.zeros(2, 4), lib.tensor([1, 12])
        ),
        lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [2])(
            lib.zeros(2, 4), lib.zeros(2, 1).long()
        ),
    ],
)
def test_errors(bad):
    assert_same_error(bad)
