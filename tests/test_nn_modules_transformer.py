"""nn.MultiheadAttention and the Transformer family against PyTorch on the same weights:
outputs, attention weights, gradients, masks, repr, state-dict keys, init and errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from twolibs import arr, assert_close, assert_same_error
from twomods import check_module, copy_weights

import numtorch as nt

E, H, FF = 8, 2, 16
Q, K = arr(3, 2, E, seed=1), arr(4, 2, E, seed=2)
KPM = np.array([[False, False, True, True], [False, True, False, False]])
CAUSAL = np.triu(np.ones((3, 3), bool), 1)


def check_built(monkeypatch, build, inputs, **kw):
    """check_module for a layer built by ``build(lib)`` (stacks take a layer instance, which
    the name-and-arguments form cannot pass): the builder is served as ``lib.nn.Built``."""
    for lib in (torch, nt):
        monkeypatch.setattr(lib.nn, "Built", lambda lib=lib: build(lib), raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the encoder's nested-tensor notice
        return check_module("Built", inputs=inputs, **kw)


# ------------------------------------------------------------------ MultiheadAttention
MHA_CASES = {
    "cross": ({}, (Q, K, K), {}),
    "self, batch_first": ({"batch_first": True}, (Q, Q, Q), {}),
    "kdim/vdim": ({"kdim": 6, "vdim": 4}, (Q, arr(4, 2, 6), arr(4, 2, 4)), {}),
    "bias_kv, zero_attn, masks": (
        {"add_bias_kv": True, "add_zero_attn": True},
        (Q, K, K),
        {"key_padding_mask": KPM, "attn_mask": np.eye(3, 4, 1, dtype=bool)},
    ),
    "no bias, per-head weights": (
        {"bias": False},
        (Q, K, K),
        {"average_attn_weights": False, "attn_mask": arr(4, 3, 4, seed=3)},
    ),
    "float masks, no weights": (
        {"batch_first": True},
        (Q.transpose(1, 0, 2), K.transpose(1, 0, 2), K.transpose(1, 0, 2)),
        {
            "key_padding_mask": arr(2, 4, seed=4),
            "attn_mask": arr(3, 4, seed=5),
            "need_weights": False,
        },
    ),
    "causal hint": ({}, (Q, Q, Q), {"attn_mask": CAUSAL, "is_causal": True, "need_weights": False}),
    "unbatched": (
        {"kdim": 6},
        (Q[:, 0], arr(4, 6), K[:, 0]),
        {"key_padding_mask": KPM[0], "attn_mask": arr(H, 3, 4, seed=6)},
    ),
}


@pytest.mark.parametrize("case", MHA_CASES)
def test_multihead_attention(case):
    kw, inputs, fkw = MHA_CASES[case]
    check_module("MultiheadAttention", (E, H), kw, inputs, forward_kwargs=fkw)


def test_multihead_attention_dropout():
    """eval mode ignores dropout; train mode with p=1 zeroes every weight."""
    check_module("MultiheadAttention", (E, H), {"dropout": 0.5}, (Q, K, K), train=False)
    m = nt.nn.MultiheadAttention(E, H, dropout=1.0).double()
    out, w = m(nt.tensor(Q), nt.tensor(K), nt.tensor(K))
    assert float(w.abs().sum()) == 0
    assert_close(out, m.out_proj.bias.expand(3, 2, E))


def test_multihead_attention_init_and_factory_kwargs():
    m = nt.nn.MultiheadAttention(64, 4, add_bias_kv=True, dtype=nt.float64)
    w = m.in_proj_weight.detach().numpy()
    bound = math.sqrt(6 / (64 + 3 * 64))
    assert w.dtype == np.float64 and np.abs(w).max() <= bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.03 * bound
    assert not m.in_proj_bias.detach().numpy().any() and not m.out_proj.bias.detach().numpy().any()
    assert m.bias_k.shape == (1, 1, 64) and m.bias_k.requires_grad
    sep = nt.nn.MultiheadAttention(E, H, kdim=3, vdim=5, bias=False)
    names = [n for n, _ in sep.named_parameters()]
    assert names == ["q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight"]
    assert sep.in_proj_weight is None and sep.in_proj_bias is None and sep.bias_k is None
    assert (sep.kdim, sep.vdim, sep.head_dim, sep._qkv_same_embed_dim) == (3, 5, 4, False)


@pytest.mark.parametrize(
    "prog",
    [
        lambda lib: lib.nn.MultiheadAttention(0, 2),
        lambda lib: lib.nn.MultiheadAttention(8, 3),
        lambda lib: lib.nn.MultiheadAttention(8, 2)(*(lib.zeros(1, 2, 3, 8),) * 3),
        lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.zeros(3, 2, 8), *(lib.zeros(3, 8),) * 2),
        lambda lib: lib.nn.MultiheadAttention(8, 2)(
            *(lib.zeros(3, 2, 8),) * 3, key_padding_mask=lib.zeros(2, 3, dtype=lib.int64)
        ),
        lambda lib: lib.nn.MultiheadAttention(8, 2)(*(lib.zeros(3, 2, 8),) * 3, is_causal=True),
    ],
)
def test_multihead_attention_errors(prog):
    assert_same_error(prog)


def test_multihead_attention_merge_masks():
    def prog(lib):
        m = lib.nn.MultiheadAttention(E, H, batch_first=True)
        q = lib.zeros(2, 3, E)
        kpm, am = lib.tensor(arr(2, 3)), lib.tensor(arr(3, 3, seed=1))
        return [m.merge_masks(am, kpm, q)[0], m.merge_masks(None, kpm, q)[1]]

    assert_close(prog(nt), prog(torch))


# ------------------------------------------------------------------ layers
SRC, TGT = arr(5, 2, E, seed=7), arr(3, 2, E, seed=8)
SRC_KPM = np.array([[False] * 5, [False, False, False, True, True]])


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer(norm_first, activation, dev):
    kw = {"dropout": 0.0, "norm_first": norm_first, "activation": activation}
    fkw = {"src_mask": np.triu(np.ones((5, 5), bool), 1), "src_key_padding_mask": SRC_KPM}
    check_module("TransformerEncoderLayer", (E, H, FF), kw, (SRC,), forward_kwargs=fkw, device=dev)


@pytest.mark.parametrize(
    "kw, inputs, fkw",
    [
        (
            {"batch_first": True, "bias": False, "layer_norm_eps": 1e-3},
            (SRC.transpose(1, 0, 2),),
            {"src_mask": arr(5, 5), "is_causal": False},
        ),
        ({"dropout": 0.3}, (SRC[:, 0],), {"src_key_padding_mask": SRC_KPM[1]}),
    ],
)
def test_encoder_layer_options(kw, inputs, fkw):
    check_module("TransformerEncoderLayer", (E, H, FF), kw, inputs, forward_kwargs=fkw, train=False)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer(norm_first):
    kw = {"dropout": 0.0, "norm_first": norm_first, "activation": "gelu", "batch_first": True}
    fkw = {
        "tgt_mask": CAUSAL,
        "tgt_is_causal": True,
        "memory_mask": arr(3, 5),
        "tgt_key_padding_mask": np.array([[False, False, True], [False] * 3]),
        "memory_key_padding_mask": SRC_KPM,
    }
    inputs = (TGT.transpose(1, 0, 2), SRC.transpose(1, 0, 2))
    check_module("TransformerDecoderLayer", (E, H, FF), kw, inputs, forward_kwargs=fkw)


def test_decoder_layer_unbatched_causal_hint():
    fkw = {"tgt_mask": CAUSAL, "tgt_is_causal": True}
    check_module(
        "TransformerDecoderLayer",
        (E, H, FF),
        {"dropout": 0.0},
        (TGT[:, 0], SRC[:, 0]),
        forward_kwargs=fkw,
    )


def test_callable_activation(monkeypatch):
    def build(lib):
        return lib.nn.TransformerEncoderLayer(E, H, FF, 0.0, lambda x: lib.tanh(x) * 2)

    check_built(monkeypatch, build, (SRC,))


# ------------------------------------------------------------------ stacks
def _encoder(lib, norm_first=False, norm=True, **kw):
    layer = lib.nn.TransformerEncoderLayer(E, H, FF, 0.0, norm_first=norm_first)
    return lib.nn.TransformerEncoder(layer, 2, lib.nn.LayerNorm(E) if norm else None, **kw)


def _decoder(lib, norm_first=False, norm=True):
    layer = lib.nn.TransformerDecoderLayer(E, H, FF, 0.0, norm_first=norm_first)
    return lib.nn.TransformerDecoder(layer, 2, lib.nn.LayerNorm(E) if norm else None)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder(monkeypatch, norm_first):
    mask = Transformer_mask(5)
    check_built(
        monkeypatch,
        lambda lib: _encoder(lib, norm_first),
        (SRC,),
        forward_kwargs={"mask": mask, "src_key_padding_mask": SRC_KPM},
    )
    check_built(monkeypatch, lambda lib: _encoder(lib, norm=False), (SRC,))


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder(monkeypatch, norm_first):
    fkw = {"tgt_mask": Transformer_mask(3), "memory_key_padding_mask": SRC_KPM}
    check_built(monkeypatch, lambda lib: _decoder(lib, norm_first), (TGT, SRC), forward_kwargs=fkw)


def Transformer_mask(n: int) -> np.ndarray:  # noqa: N802
    return np.triu(np.full((n, n), -np.inf), 1)


def test_stack_layers_are_copies():
    enc = _encoder(nt)
    a, b = enc.layers[0].linear1.weight, enc.layers[1].linear1.weight
    assert a is not b and np.array_equal(a.detach().numpy(), b.detach().numpy())
    assert enc.num_layers == 2 and len(list(enc.parameters())) == 2 * 12 + 2


def test_encoder_detects_causal_mask(monkeypatch):
    """is_causal=None: a mask equal to the causal one reaches the layers as is_causal=True."""
    seen = []
    cls = nt.nn.TransformerEncoderLayer
    forward = cls.forward
    monkeypatch.setattr(
        cls, "forward", lambda self, *a, **k: seen.append(k["is_causal"]) or forward(self, *a, **k)
    )
    enc = _encoder(nt).double()
    for mask in (None, np.triu(np.ones((5, 5), bool), 1), Transformer_mask(5), arr(5, 5)):
        enc(nt.tensor(SRC), mask=None if mask is None else nt.tensor(mask))
    enc(nt.tensor(SRC), is_causal=False, mask=nt.tensor(Transformer_mask(5)))
    assert seen == [False] * 2 + [True] * 4 + [False] * 4


def test_encoder_nested_tensor_warning():
    def notes(lib, **kw):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            layer = lib.nn.TransformerEncoderLayer(E, H, FF, **kw)
            enc = lib.nn.TransformerEncoder(layer, 1)
        return [str(x.message) for x in w], enc.use_nested_tensor

    for kw in (
        {},
        {"batch_first": True},
        {"batch_first": True, "norm_first": True},
        {"batch_first": True, "activation": lambda x: x},
    ):
        assert notes(nt, **kw) == notes(torch, **kw)


def test_encoder_inference_zeroes_padding():
    """In eval mode without grad, PyTorch's nested-tensor path returns zeros (before the
    norm) at padded positions; numtorch matches it."""

    def prog(lib):
        torch.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            layer = lib.nn.TransformerEncoderLayer(E, H, FF, batch_first=True)
            return lib.nn.TransformerEncoder(layer, 2, lib.nn.LayerNorm(E)).double().eval()

    tmod, nmod = prog(torch), prog(nt)
    copy_weights(tmod, nmod)
    src = SRC.transpose(1, 0, 2)
    for kpm in (SRC_KPM, SRC_KPM[:, ::-1].copy()):  # left-aligned (nested path) or not
        with torch.no_grad(), nt.no_grad():
            got = nmod(nt.tensor(src), src_key_padding_mask=nt.tensor(kpm))
            want = tmod(torch.tensor(src), src_key_padding_mask=torch.tensor(kpm))
        assert_close(got, want, rtol=1e-7, atol=1e-9)


# ------------------------------------------------------------------ Transformer
def test_transformer_train(monkeypatch):
    fkw = {
        "src_mask": Transformer_mask(5),
        "tgt_mask": Transformer_mask(3),
        "src_key_padding_mask": SRC_KPM,
        "memory_key_padding_mask": SRC_KPM,
        "tgt_is_causal": True,
    }
    tmod, nmod = check_built(
        monkeypatch,
        lambda lib: lib.nn.Transformer(E, H, 1, 2, FF, dropout=0.0, activation="gelu"),
        (SRC, TGT),
        forward_kwargs=fkw,
    )
    assert "decoder.layers.1.multihead_attn.in_proj_weight" in nmod.state_dict()
    assert (nmod.d_model, nmod.nhead, nmod.batch_first) == (E, H, False)


def test_transformer_eval_batch_first_norm_first(monkeypatch):
    def build(lib):
        return lib.nn.Transformer(E, H, 2, 1, FF, batch_first=True, norm_first=True, bias=False)

    inputs = (SRC.transpose(1, 0, 2), TGT.transpose(1, 0, 2))
    check_built(monkeypatch, build, inputs, train=False)
    check_built(monkeypatch, build, (SRC[:, 0], TGT[:, 0]), train=False)  # unbatched


def test_transformer_defaults_and_init():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = nt.nn.Transformer(num_encoder_layers=1, num_decoder_layers=1)
    assert (m.d_model, m.nhead) == (512, 8)
    lin = m.encoder.layers[0].linear1
    assert lin.weight.shape == (2048, 512) and m.encoder.layers[0].dropout.p == 0.1
    w = lin.weight.detach().numpy()
    bound = math.sqrt(6 / (512 + 2048))  # every matrix re-drawn with xavier_uniform_
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert m.encoder.layers[0].activation is nt.nn.functional.relu


def test_transformer_custom_encoder_decoder():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        enc, dec = _encoder(nt), _decoder(nt)
    m = nt.nn.Transformer(E, H, custom_encoder=enc, custom_decoder=dec)
    assert m.encoder is enc and m.decoder is dec


def test_generate_square_subsequent_mask():
    def prog(lib):
        m = lib.nn.Transformer.generate_square_subsequent_mask
        return [m(4), m(3, dtype=lib.float64), m(0)]

    assert_close(prog(nt), prog(torch))


@pytest.mark.parametrize(
    "prog",
    [
        lambda lib: lib.nn.TransformerEncoderLayer(E, H, activation="tanh"),
        lambda lib: lib.nn.Transformer(E, H, 1, 1, FF)(lib.zeros(5, 2, E), lib.zeros(3, 1, E)),
        lambda lib: lib.nn.Transformer(E, H, 1, 1, FF, batch_first=True)(
            lib.zeros(2, 5, E), lib.zeros(1, 3, E)
        ),
        lambda lib: lib.nn.Transformer(E, H, 1, 1, FF)(lib.zeros(5, 2, E), lib.zeros(3, 2, 4)),
        lambda lib: lib.nn.TransformerEncoderLayer(E, H)(
            lib.zeros(3, 2, E), src_key_padding_mask=lib.zeros(2, 3, dtype=lib.int64)
        ),
    ],
)
def test_transformer_errors(prog):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_error(prog)


def test_mismatched_mask_types_warn():
    def notes(lib):
        m = lib.nn.MultiheadAttention(E, H).double()
        x = lib.tensor(Q)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m(x, x, x, key_padding_mask=lib.tensor(KPM[:, :3]), attn_mask=lib.tensor(arr(3, 3)))
        return [str(x.message) for x in w]

    assert notes(nt) == notes(torch) != []


def test_vmap_over_layers():
    """vmap over a layer (and over the whole model) is the loop over the batch."""
    layer = nt.nn.TransformerEncoderLayer(E, H, FF, dropout=0.0).double()
    model = nt.nn.Transformer(E, H, 1, 1, FF, dropout=0.0).double()
    x, y = nt.tensor(arr(2, 5, 2, E)), nt.tensor(arr(2, 3, 2, E, seed=1))
    mask = nt.tensor(Transformer_mask(5))
    got = nt.func.vmap(lambda t: layer(t, src_mask=mask))(x)
    assert_close(got, nt.stack([layer(t, src_mask=mask) for t in x]), rtol=1e-12, atol=1e-12)
    got = nt.func.vmap(model)(x, y)
    assert_close(got, nt.stack([model(a, b) for a, b in zip(x, y)]), rtol=1e-12, atol=1e-12)
