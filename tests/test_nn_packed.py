"""nn.utils.rnn (packed sequences and the pad/pack conversions) and the packed overloads of
torch.lstm / gru / rnn_tanh / rnn_relu, against torch: values, gradients, vmap, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from twolibs import arr, assert_close, assert_same, assert_same_error

import numtorch as nt
import numtorch.nn.utils.rnn  # noqa: F401


def R(lib):
    return lib.nn.utils.rnn


LENGTHS = {"sorted": [4, 2, 2, 1], "unsorted": [2, 4, 1, 2]}


# ------------------------------------------------------------------ the conversions
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("order", ["sorted", "unsorted"])
def test_pack_pad_round_trip_with_gradients(batch_first, order):
    lengths = LENGTHS[order]
    x = arr(4, 4, 3, seed=1)

    def prog(lib, x):
        x.requires_grad_()
        p = R(lib).pack_padded_sequence(x, lengths, batch_first, order == "sorted")
        padded, lens = R(lib).pad_packed_sequence(
            p,
            batch_first,
            padding_value=-1.5,
            total_length=5,
        )
        (padded * padded.cos()).sum().backward()
        return tuple(p), padded, lens, x.grad

    assert_same(prog, x)


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_sequence(side, batch_first):
    seqs = [arr(3, 2, seed=1), arr(1, 2, seed=2), arr(4, 2, seed=3)]

    def prog(lib, *seqs):
        for s in seqs:
            s.requires_grad_()
        out = R(lib).pad_sequence(list(seqs), batch_first, 7.0, side)
        (out**2).sum().backward()
        return out, [s.grad for s in seqs]

    assert_same(prog, *seqs)


def test_pack_sequence_unpack_and_unpad():
    seqs = [arr(2, 3, seed=1), arr(4, 3, seed=2), arr(1, 3, seed=3)]

    def prog(lib, *seqs):
        p = R(lib).pack_sequence(list(seqs), enforce_sorted=False)
        padded, lens = R(lib).pad_packed_sequence(p)
        return tuple(p), R(lib).unpack_sequence(p), R(lib).unpad_sequence(padded, lens)

    assert_same(prog, *seqs)


def test_invert_permutation_and_packed_sequence_methods():
    def prog(lib):
        perm = lib.tensor([2, 0, 3, 1])
        p = R(lib).pack_sequence([lib.ones(3, 2), lib.ones(1, 2)])
        d = p.double()
        return (
            R(lib).invert_permutation(perm),
            R(lib).invert_permutation(None),
            d.data.dtype,
            p.to(lib.float32) is p,
            p.is_cuda,
            p.is_pinned(),
            type(d).__name__,
        )

    got, ref = prog(nt), prog(torch)
    assert str(got[2]) == str(ref[2]) and got[3:] == ref[3:]
    assert_close(got[:2], ref[:2])
    assert repr(R(nt).pack_sequence([nt.ones(2), nt.ones(1)])) == repr(
        R(torch).pack_sequence([torch.ones(2), torch.ones(1)])
    )


def test_vmap_over_padding_and_packing(no_fallback):
    x = arr(3, 4, 3, 2, seed=1)  # a vmapped batch of 3 padded (T=4, B=3) batches

    def f(lib, x):
        p = R(lib).pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False)
        return R(lib).pad_packed_sequence(p, total_length=5)[0] * 2, p.data

    got = nt.vmap(lambda x: f(nt, x))(nt.tensor(x))
    assert_close(got, torch.func.vmap(lambda x: f(torch, x))(torch.tensor(x)))
    seqs = [arr(3, 2, 2, seed=1), arr(3, 4, 2, seed=2)]
    got = nt.vmap(lambda a, b: R(nt).pad_sequence([a, b], True))(*map(nt.tensor, seqs))
    ref = torch.stack(
        [R(torch).pad_sequence([a, b], True) for a, b in zip(*map(torch.tensor, seqs))]
    )
    assert_close(got, ref)


@pytest.mark.parametrize(
    "call",
    [
        lambda R, lib: R.pack_padded_sequence(lib.zeros(3, 2, 1), [2, 3]),
        lambda R, lib: R.pack_padded_sequence(lib.zeros(3, 2, 1), [3, 0]),
        lambda R, lib: R.pack_padded_sequence(lib.zeros(3, 2, 1), [3, 0], enforce_sorted=False),
        lambda R, lib: R.pack_padded_sequence(lib.zeros(3, 2, 1), [3, 2, 1]),
        lambda R, lib: R.pack_padded_sequence(lib.zeros(3, 2, 1), lib.tensor([[3, 2]])),
        lambda R, lib: R.pack_padded_sequence(lib.zeros(3, 0, 1), []),
        lambda R, lib: R.pad_packed_sequence(
            R.pack_sequence([lib.ones(3), lib.ones(1)]), total_length=2
        ),
        lambda R, lib: R.pad_sequence([]),
        lambda R, lib: R.pad_sequence(3),
        lambda R, lib: R.pad_sequence([lib.ones(2, 3)], padding_side="up"),
        lambda R, lib: R.pad_sequence([lib.ones(2, 3), lib.ones(3, 2)]),
        lambda R, lib: R.pad_sequence([lib.ones(()), lib.ones(())]),
        lambda R, lib: R.pack_sequence([lib.ones(2), lib.ones(3)]),
        lambda R, lib: R.PackedSequence(lib.ones(2)),
    ],
)
def test_errors(call):
    assert_same_error(lambda lib: call(R(lib), lib))


# ------------------------------------------------------------------ the packed recurrent cores
MODULES = {
    "lstm": torch.nn.LSTM,
    "gru": torch.nn.GRU,
    "rnn_tanh": torch.nn.RNN,
    "rnn_relu": torch.nn.RNN,
}
CASES = [
    ("lstm", dict(num_layers=2, bidirectional=True), "unsorted"),
    ("lstm", dict(num_layers=1, bidirectional=True, proj_size=2), "unsorted"),
    ("lstm", dict(num_layers=2, bias=False), "sorted"),
    ("gru", dict(num_layers=2, bidirectional=True), "unsorted"),
    ("gru", dict(num_layers=1), "sorted"),
    ("rnn_tanh", dict(num_layers=2, bidirectional=True), "unsorted"),
    ("rnn_relu", dict(num_layers=1, bidirectional=True, nonlinearity="relu"), "sorted"),
]


@pytest.mark.parametrize("cell,kw,order", CASES)
def test_packed_cores_match_torch_modules(cell, kw, order):
    """torch.nn.<RNN> on a packed batch against numtorch's ``<cell>(data, batch_sizes, hx,
    params, ...)`` with the same weights: output data, final states, input, initial-state
    and weight gradients."""
    torch.manual_seed(0)
    module = MODULES[cell](3, 4, **kw).double()
    dirs, layers = 1 + kw.get("bidirectional", False), kw.get("num_layers", 1)
    lengths = LENGTHS[order]
    x = arr(4, 4, 3, seed=1)
    h0 = arr(dirs * layers, 4, kw.get("proj_size", 0) or 4, seed=2)
    c0 = arr(dirs * layers, 4, 4, seed=3)
    weights = [p.detach().numpy() for p in module._flat_weights]

    def prog(lib, x, h0, c0, *weights):
        for t in (x, h0, c0, *weights):
            t.requires_grad_()
        p = R(lib).pack_padded_sequence(x, lengths, enforce_sorted=order == "sorted")
        hx = (h0, c0) if cell == "lstm" else h0
        if lib is torch:
            with torch.no_grad():
                for w, v in zip(module._flat_weights, weights):
                    w.copy_(v)
            out, hn = module(p, hx)
            data, hn = out.data, hn if cell == "lstm" else (hn,)
            grads = torch.autograd.grad(
                (data.sin().sum() + sum((h**2).sum() for h in hn)),
                [x, h0, c0, *module._flat_weights],
                allow_unused=True,
            )
        else:
            perm = p.sorted_indices
            hs = [h if perm is None else h.index_select(1, perm) for h in (h0, c0)]
            res = getattr(nt, cell)(
                p.data,
                p.batch_sizes,
                tuple(hs) if cell == "lstm" else hs[0],
                list(weights),
                kw.get("bias", True),
                layers,
                0.0,
                True,
                dirs == 2,
            )
            data, hn = res[0], res[1:]
            if perm is not None:
                hn = tuple(h.index_select(1, p.unsorted_indices) for h in hn)
            grads = nt.autograd.grad(
                (data.sin().sum() + sum((h**2).sum() for h in hn)),
                [x, h0, c0, *weights],
                allow_unused=True,
            )
        return data, hn, grads

    assert_same(prog, x, h0, c0, *weights, rtol=1e-9, atol=1e-12)


def test_packed_core_per_sample_gradients_and_forward_mode(no_fallback):
    """vmap(grad) over a packed GRU's weights (one packed batch per vmapped sample) against
    a loop of torch.autograd.grad; jvp against central differences (torch.func cannot run
    torch's packed kernels)."""
    torch.manual_seed(0)
    module = torch.nn.GRU(2, 3, bidirectional=True).double()
    weights = [p.detach().numpy() for p in module._flat_weights]
    xs = arr(2, 4, 2, seed=1)  # per-sample packed data (batch sizes 2, 1, 1)
    bs = np.array([2, 1, 1])

    def loss(lib, ws, x):
        h0 = lib.zeros(2, 2, 3, dtype=lib.float64)
        out, hn = lib.gru(x, lib.tensor(bs), h0, list(ws), True, 1, 0.0, False, True)
        return (out**2).sum() + hn.sum()

    ws = [nt.tensor(w) for w in weights]
    got = nt.func.vmap(nt.func.grad(lambda ws, x: loss(nt, ws, x)), in_dims=(None, 0))(
        ws, nt.tensor(xs)
    )
    tws = [torch.tensor(w, requires_grad=True) for w in weights]
    per = [torch.autograd.grad(loss(torch, tws, torch.tensor(x)), tws) for x in xs]
    assert_close(got, [torch.stack(g) for g in zip(*per)], rtol=1e-9, atol=1e-12)

    tang = [arr(*w.shape, seed=10 + k) for k, w in enumerate(weights)]
    x0 = nt.tensor(xs[0])
    _, jv = nt.func.jvp(lambda *ws: loss(nt, ws, x0), tuple(ws), tuple(map(nt.tensor, tang)))
    eps = 1e-6
    fd = [
        float(loss(nt, [nt.tensor(w + s * eps * t) for w, t in zip(weights, tang)], x0))
        for s in (1, -1)
    ]
    assert abs(float(jv) - (fd[0] - fd[1]) / (2 * eps)) < 1e-6 * max(1.0, abs(float(jv)))


@pytest.mark.parametrize(
    "data,bs,match",
    [
        ((5, 2), [2, 2.0, 1], "expected scalar type Long but found Float"),
        ((5, 2), [1, 2, 2], "non-increasing"),
        ((5, 2), [2, 2, 0], "positive"),
        ((6, 2), [2, 2, 1], r"sum\(batch_sizes\) = 5 rows"),
        ((5, 2, 1), [2, 2, 1], r"sum\(batch_sizes\) = 5 rows"),
    ],
)
def test_packed_cores_check_batch_sizes(data, bs, match):
    """torch's packed kernels read out of bounds on inconsistent batch sizes; here a clear
    error, before any work."""
    h = nt.zeros(1, 2, 3)
    with pytest.raises(RuntimeError, match=match):
        nt.lstm(
            nt.zeros(*data),
            nt.tensor(bs),
            (h, h),
            [nt.zeros(12, 2), nt.zeros(12, 3)],
            False,
            1,
            0.0,
            False,
            False,
        )


# ==================================================================
# Causes behind the bad-input sweep's DIFFERS cases (tests/test_bad_inputs.py), fixed.


W = np.arange(15.0).reshape(5, 3) / 10


@pytest.mark.parametrize("sizes", [[0, 0, 0, 0], [-1000, 2, 1], [1000, 2, 1], [3, 3, 1, 1]])
@pytest.mark.parametrize("cell", ["rnn_tanh", "lstm", "gru"])
def test_packed_rnn_batch_sizes(cell, sizes):
    """Batch sizes that are no packed sequence's fail where PyTorch's loop fails (its fused
    LSTM cell fails on a step of no rows at a reshape: not that case)."""
    if cell == "lstm" and 0 in sizes:
        pytest.skip("PyTorch's fused LSTM cell: a reshape's text")
    gates = {"rnn_tanh": 1, "lstm": 4, "gru": 3}[cell]

    def prog(L, _):
        data = L.ones(6, 2)
        h = L.ones(1, 3, 2)
        hx = (h, h) if cell == "lstm" else h
        params = [L.ones(gates * 2, 2) / 4, L.ones(gates * 2, 2) / 4]
        bs = L.tensor(sizes)
        return getattr(L, cell)(data, bs, hx, params, False, 1, 0.0, False, False)

    assert_same_error(prog, W)
