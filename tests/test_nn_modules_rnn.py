"""nn.RNN, nn.LSTM, nn.GRU and their cells against torch on the same weights: outputs,
final states, gradients with respect to inputs and every parameter, repr, state-dict
keys, packed input and output, unbatched input, default initialization and errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from twolibs import arr, assert_close, assert_same_error, normal
from twomods import check_module, copy_weights, pair

import numtorch as nt

LAYERS = [
    ("LSTM", (3, 4), {}),
    ("LSTM", (3, 4, 2), dict(bidirectional=True, batch_first=True)),
    ("LSTM", (3, 4), dict(proj_size=2, bidirectional=True)),
    ("LSTM", (3, 4, 2), dict(bias=False, proj_size=3)),
    ("GRU", (3, 4, 2), dict(bidirectional=True)),
    ("GRU", (3, 4), dict(bias=False, batch_first=True)),
    ("RNN", (3, 4, 2), dict(bidirectional=True)),
    ("RNN", (3, 4), dict(nonlinearity="relu", bias=False)),
    ("RNN", (3, 4, 1, "relu"), dict(batch_first=True)),
]


def _states(name, args, kw, batch, seed=5):
    layers = args[2] if len(args) > 2 else 1
    n = layers * (2 if kw.get("bidirectional") else 1)
    h = arr(n, *batch, kw.get("proj_size") or args[1], seed=seed)
    return (h, arr(n, *batch, args[1], seed=seed + 1)) if name == "LSTM" else h


@pytest.mark.parametrize("name,args,kw", LAYERS)
def test_layers_match_torch(name, args, kw, dev):
    x = arr(2, 5, 3, seed=1) if kw.get("batch_first") else arr(5, 2, 3, seed=1)
    check_module(name, args, kw, (x,), device=dev)
    check_module(name, args, kw, (x, _states(name, args, kw, (2,))), device=dev)


@pytest.mark.parametrize("name,args,kw", LAYERS[1:3] + LAYERS[4:5] + LAYERS[6:7])
def test_unbatched_input(name, args, kw):
    check_module(name, args, kw, (arr(5, 3, seed=1),))
    check_module(name, args, kw, (arr(5, 3, seed=1), _states(name, args, kw, ())))


@pytest.mark.parametrize("batched", [True, False])
def test_lstm_state_as_a_list(batched):
    shape = (5, 2, 3) if batched else (5, 3)
    states = [arr(1, *((2,) if batched else ()), 4, seed=s) for s in (2, 3)]
    check_module("LSTM", (3, 4), {}, (arr(*shape, seed=1), states))


def test_dropout_between_layers_in_eval_and_with_p_one():
    check_module("LSTM", (3, 4, 3), dict(dropout=0.5), (arr(4, 2, 3, seed=1),), train=False)
    check_module("GRU", (3, 4, 2), dict(dropout=1.0), (arr(4, 2, 3, seed=1),))


@pytest.mark.parametrize("name,args,kw", [LAYERS[1], LAYERS[2], LAYERS[4], LAYERS[7]])
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("with_hx", [False, True])
def test_packed_sequence_in_and_out(name, args, kw, enforce_sorted, with_hx):
    """A PackedSequence in, a PackedSequence out (same batch sizes and indices); final
    states in the input's batch order; gradients wrt the padded input, hx and weights."""
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    bf = kw.get("batch_first", False)
    x = arr(4, 5, 3, seed=1) if bf else arr(5, 4, 3, seed=1)
    hx = _states(name, args, kw, (4,))

    def run(lib, mod):
        R = lib.nn.utils.rnn
        xt = lib.tensor(x, requires_grad=True)
        hs = tuple(lib.tensor(h, requires_grad=True) for h in (hx if name == "LSTM" else (hx,)))
        packed = R.pack_padded_sequence(xt, lengths, bf, enforce_sorted)
        out, hn = mod(packed, (hs if name == "LSTM" else hs[0]) if with_hx else None)
        assert type(out).__name__ == "PackedSequence"
        padded, lens = R.pad_packed_sequence(out, bf, total_length=6)
        hn = hn if name == "LSTM" else (hn,)
        loss = (padded * padded.cos()).sum() + sum((h * h.sin()).sum() for h in hn)
        wrt = [xt, *hs, *mod.parameters()] if with_hx else [xt, *mod.parameters()]
        return tuple(out), padded, lens, hn, lib.autograd.grad(loss, wrt)

    import numtorch.nn.utils.rnn  # noqa: F401

    tmod, nmod = pair(name, *args, **kw)
    assert_close(run(nt, nmod), run(torch, tmod), rtol=1e-9, atol=1e-12)


CELLS = [
    ("LSTMCell", (3, 4), {}),
    ("GRUCell", (3, 4), dict(bias=False)),
    ("RNNCell", (3, 4), {}),
    ("RNNCell", (3, 4, True, "relu"), {}),
]


@pytest.mark.parametrize("name,args,kw", CELLS)
def test_cells_match_torch(name, args, kw):
    lstm = name == "LSTMCell"
    for batch in ((2,), ()):
        x = arr(*batch, 3, seed=1)
        h = arr(*batch, 4, seed=2)
        check_module(name, args, kw, (x,))
        check_module(name, args, kw, (x, (h, arr(*batch, 4, seed=3)) if lstm else h))


@pytest.mark.parametrize(
    "name,args,kw",
    [
        ("Linear", (3, 4), {}),
        ("LSTM", (3, 4), dict(proj_size=2)),
        ("GRU", (3, 4, 2), dict(bidirectional=True)),
        ("RNN", (3, 4), dict(batch_first=True)),
        ("LSTMCell", (3, 4), {}),
    ],
)
def test_complex_layers_match_torch(name, args, kw):
    """Layers built with dtype=cfloat: PyTorch's init runs on complex, and the outputs and
    the gradients of the input and every parameter are PyTorch's."""
    torch.manual_seed(0)
    tmod = getattr(torch.nn, name)(*args, **kw, dtype=torch.cfloat)
    nmod = getattr(nt.nn, name)(*args, **kw, dtype=nt.cfloat)
    assert all(p.dtype == nt.complex64 for p in nmod.parameters())
    copy_weights(tmod, nmod)
    rng = np.random.default_rng(1)
    shape = (2, 3) if name.endswith("Cell") else (5, 2, 3)
    x0 = (normal(rng, shape, np.complex64) * 0.5).astype(np.complex64)
    outs = []
    for lib, mod in ((torch, tmod), (nt, nmod)):
        x = lib.tensor(x0, requires_grad=True)
        out = mod(x)
        first = out[0] if isinstance(out, tuple) else out
        cot = normal(np.random.default_rng(2), tuple(first.shape), np.complex64)
        cot = lib.tensor(cot.astype(np.complex64))
        grads = lib.autograd.grad(first, [x, *mod.parameters()], cot)
        outs.append((out, grads))
    assert_close(outs[1], outs[0], rtol=1e-5, atol=1e-6)


def test_reprs_and_state_dict_keys():
    for name, args, kw in [
        (
            "LSTM",
            (2, 3, 2),
            dict(proj_size=1, dropout=0.5, bidirectional=True, batch_first=True, bias=False),
        ),
        ("RNN", (2, 3), dict(nonlinearity="relu")),
        ("GRU", (2, 3), dict(bidirectional=True)),
        ("RNNCell", (2, 3), dict(bias=False, nonlinearity="relu")),
        ("LSTMCell", (2, 3), {}),
    ]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tmod, nmod = pair(name, *args, **kw)
        assert repr(nmod) == repr(tmod)
        assert list(nmod.state_dict()) == list(tmod.state_dict())
        if hasattr(tmod, "_flat_weights_names"):
            assert nmod._flat_weights_names == tmod._flat_weights_names
            assert [tuple(w.shape) for w in nmod._flat_weights] == [
                tuple(w.shape) for w in tmod._flat_weights
            ]
            assert [[tuple(w.shape) for w in ws] for ws in nmod.all_weights] == [
                [tuple(w.shape) for w in ws] for ws in tmod.all_weights
            ]


def test_a_reassigned_parameter_is_used():
    """``_flat_weights`` follows the module's attributes (a swapped-in tensor is used)."""
    tmod, nmod = pair("GRU", 3, 4)
    w = arr(12, 4, seed=9)
    tmod.weight_hh_l0 = torch.nn.Parameter(torch.tensor(w))
    nmod.weight_hh_l0 = nt.nn.Parameter(nt.tensor(w))
    x = arr(3, 2, 3, seed=1)
    assert_close(nmod(nt.tensor(x)), tmod(torch.tensor(x)), rtol=1e-9, atol=1e-12)


def test_default_initialization_statistics():
    """Every parameter ~ U(-1/sqrt(hidden), 1/sqrt(hidden)), through nn.init."""
    nt.manual_seed(0)
    for mod in (nt.nn.LSTM(20, 64, 2, proj_size=8), nt.nn.GRUCell(10, 100)):
        bound = 1 / math.sqrt(mod.hidden_size)
        for p in mod.parameters():
            v = p.detach().numpy()
            assert np.abs(v).max() <= bound and np.abs(v).max() > 0.9 * bound
            assert abs(v.mean()) < 0.1 * bound
        allv = np.concatenate([p.detach().numpy().ravel() for p in mod.parameters()])
        assert abs(allv.std() - bound / math.sqrt(3)) < 0.03 * bound
    m = nt.nn.LSTM(2, 3, dtype=nt.float64)
    assert all(p.dtype == nt.float64 and p.requires_grad for p in m.parameters())


def test_dropout_warning_for_one_layer():
    def build(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.nn.LSTM(2, 3, dropout=0.3)
        return [str(x.message) for x in w], [x.category for x in w]

    assert build(nt) == build(torch)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.nn.LSTM(2, 3, dropout=1.5),
        lambda lib: lib.nn.LSTM(2, 3, dropout=True),
        lambda lib: lib.nn.LSTM(2, 3, bias=1),
        lambda lib: lib.nn.LSTM(2, 3, batch_first=None),
        lambda lib: lib.nn.LSTM(2.0, 3),
        lambda lib: lib.nn.LSTM(0, 3),
        lambda lib: lib.nn.GRU(2, 0),
        lambda lib: lib.nn.RNN(2, 3, 0),
        lambda lib: lib.nn.LSTM(2, 3, proj_size=-1),
        lambda lib: lib.nn.LSTM(2, 3, proj_size=3),
        lambda lib: lib.nn.GRU(2, 3, proj_size=1),
        lambda lib: lib.nn.RNN(2, 3, proj_size=1),
        lambda lib: lib.nn.RNN(2, 3, nonlinearity="gelu"),
        lambda lib: lib.nn.RNNCell(2, 3, nonlinearity="gelu")(lib.zeros(1, 2)),
        lambda lib: lib.nn.LSTM(2, 3)(lib.zeros(4)),
        lambda lib: lib.nn.RNN(2, 3)(lib.zeros(1, 2, 3, 2)),
        lambda lib: lib.nn.GRU(2, 3)(lib.zeros(1, 2, 3, 2)),
        lambda lib: lib.nn.LSTM(2, 3)(lib.zeros(4, 2, 5)),
        lambda lib: lib.nn.LSTM(2, 3)(lib.zeros(4, 2, 2, dtype=lib.float64)),
        lambda lib: lib.nn.LSTM(2, 3)(lib.zeros(4, 2, 2), (lib.zeros(1, 3, 3), lib.zeros(1, 2, 3))),
        lambda lib: lib.nn.LSTM(2, 3)(lib.zeros(4, 2, 2), (lib.zeros(1, 2, 3), lib.zeros(2, 2, 3))),
        lambda lib: lib.nn.LSTM(2, 3)(lib.zeros(4, 2, 2), (lib.zeros(2, 3), lib.zeros(1, 2, 3))),
        lambda lib: lib.nn.LSTM(2, 3)(lib.zeros(4, 2), (lib.zeros(1, 2, 3), lib.zeros(1, 2, 3))),
        lambda lib: lib.nn.GRU(2, 3)(lib.zeros(4, 2, 2), lib.zeros(1, 3, 3)),
        lambda lib: lib.nn.GRU(2, 3)(lib.zeros(4, 2, 2), lib.zeros(2, 3)),
        lambda lib: lib.nn.RNN(2, 3)(lib.zeros(4, 2), lib.zeros(1, 1, 3)),
        lambda lib: lib.nn.RNN(2, 3, 2, bidirectional=True)(lib.zeros(4, 2, 2), lib.zeros(2, 2, 3)),
        lambda lib: lib.nn.GRUCell(2, 3)(lib.zeros(1, 1, 2)),
        lambda lib: lib.nn.GRUCell(2, 3)(lib.zeros(1, 2), lib.zeros(1, 1, 3)),
        lambda lib: lib.nn.LSTMCell(2, 3)(lib.zeros(1, 2), (lib.zeros(1, 3), lib.zeros(1, 1, 3))),
        lambda lib: lib.nn.RNNCell(2, 3)(lib.zeros(1, 4)),
    ],
)
def test_errors(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_error(call)


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN"])
def test_vmap_over_a_layer_and_its_input_gradient(name, no_fallback):
    """vmap over unbatched inputs equals the layer on the batch; vmap(grad) gives each
    sample's input gradient (the batch's gradient, sample by sample)."""
    nt.manual_seed(0)
    mod = getattr(nt.nn, name)(3, 4, 2, bidirectional=True, dtype=nt.float64)
    xs = nt.tensor(arr(2, 5, 3, seed=1))  # (B, T, I): one unbatched (T, I) input per sample

    def out(x):
        return mod(x)[0]

    got = nt.func.vmap(out)(xs)
    assert_close(got, mod(xs.transpose(0, 1))[0].transpose(0, 1), rtol=1e-12, atol=1e-14)
    per = nt.func.vmap(nt.func.grad(lambda x: (out(x) ** 2).sum()))(xs)
    xb = xs.transpose(0, 1).detach().requires_grad_()
    (g,) = nt.autograd.grad((mod(xb)[0] ** 2).sum(), [xb])
    assert_close(per, g.transpose(0, 1), rtol=1e-10, atol=1e-12)


def test_vmap_over_packed_batches(no_fallback):
    """vmap over a function that packs its (unsorted) batch and runs an LSTM on it: the
    loop's values and per-sample input gradients."""
    import numtorch.nn.utils.rnn as R

    nt.manual_seed(0)
    mod = nt.nn.LSTM(3, 4, bidirectional=True, dtype=nt.float64)
    xs = nt.tensor(arr(2, 5, 3, 3, seed=1))

    def f(x):
        return mod(R.pack_padded_sequence(x, [2, 5, 3], enforce_sorted=False))[0].data

    def loss(x):
        return (f(x) ** 2).sum()

    assert_close(nt.func.vmap(f)(xs), nt.stack([f(x) for x in xs]), rtol=1e-12, atol=1e-14)
    assert_close(
        nt.func.vmap(nt.func.grad(loss))(xs),
        nt.stack([nt.func.grad(loss)(x) for x in xs]),
        rtol=1e-12,
        atol=1e-14,
    )
