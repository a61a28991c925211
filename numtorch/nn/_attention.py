"""Scaled dot-product attention: softmax(q k^T * scale + mask) v, with bool or additive
masks, a causal mask, grouped-query heads and dropout on the attention weights; and
multi-head attention's forward (projections, heads, masks, extra keys) built on it."""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._core.op import composite
from .._core.tensor import Tensor
from .._opdb.samples import ErrorInput as E
from .._opdb.samples import S
from ..ops.comparison import where
from ..ops.creation import tensor, zeros_like
from ..ops.random import dropout
from ..ops.reduction import softmax
from ..ops.shape import cat
from ._linear import linear
from ._padding import pad


def _check(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa) -> None:
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
            f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead."
        )
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{query.dtype.cpp_name} key.dtype: {key.dtype.cpp_name} and "
            f"value.dtype: {value.dtype.cpp_name} instead."
        )
    if attn_mask is not None:
        if is_causal:
            raise RuntimeError(
                "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                "is_causal=True"
            )
        if attn_mask.dtype.name != "bool" and attn_mask.dtype != query.dtype:
            raise RuntimeError(
                "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                f"attn_mask.dtype: {attn_mask.dtype.cpp_name} and  query.dtype: {query.dtype.cpp_name} "
                "instead."
            )
    if not 0 <= dropout_p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p:g}")
    if enable_gqa and query.dim() >= 3 and key.dim() >= 3:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hq % hk or hq % hv:
            raise RuntimeError(
                "Number of heads in key and value must divide the number of heads in "
            )
    if key.shape[-1] != query.shape[-1]:
        b = math.prod(query.shape[:-2])
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{b}, {query.shape[-1]}] but got: [{b}, {key.shape[-1]}]."
        )
    if value.shape[-2] != key.shape[-2]:
        b = math.prod(query.shape[:-2])
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{b}, {key.shape[-2]}] but got: [{b}, {value.shape[-2]}]."
        )


def _samples(make):
    q, k, v = make((2, 3, 4)), make((2, 5, 4)), make((2, 5, 2))
    yield S((q, k, v))
    yield S((q, k, v), {"is_causal": True, "scale": 0.5})
    yield S((q, k, v), {"attn_mask": np.arange(15).reshape(3, 5) % 3 != 1}, name="bool mask")
    yield S((q, k, v), {"attn_mask": make((2, 3, 5))}, name="float mask")
    yield S((q, k, v), {"attn_mask": np.arange(5) > 6}, name="all masked: zeros as PyTorch")
    yield S(
        (make((1, 4, 2, 3)), make((1, 2, 3, 3)), make((1, 2, 3, 2))),
        {"enable_gqa": True},
        name="gqa",
    )
    yield S((make((3, 4)), make((5, 4)).T.copy().T, make((5, 2))), name="2-D")
    yield S((make((0, 3, 4)), make((0, 5, 4)), make((0, 5, 2))), name="empty")


def _errors(make):
    q, k, v = make((2, 3, 4)), make((2, 5, 4)), make((2, 5, 2))
    yield E(
        S((q, k, v), {"attn_mask": np.ones((3, 5), bool), "is_causal": True}),
        RuntimeError,
        "Explicit attn_mask should not be set when is_causal=True",
    )
    yield E(
        S((q, make((2, 5, 3)), v)),
        RuntimeError,
        r"Expected size for first two dimensions of batch2 tensor to be: \[2, 4\] but got: "
        r"\[2, 3\].",
    )
    yield E(
        S((q, k, make((2, 4, 2)))),
        RuntimeError,
        r"Expected size for first two dimensions of batch2 tensor to be: \[2, 5\] but got: "
        r"\[2, 4\].",
    )
    yield E(
        S((q, k, v.astype(np.float64))),
        RuntimeError,
        "Expected query, key, and value to have the same dtype",
    )
    yield E(S((q[0, 0], k[0, 0], v[0, 0])), RuntimeError, "at least 2 dimensional")
    yield E(
        S((q, k, v), {"attn_mask": np.ones((3, 5), np.int64)}),
        RuntimeError,
        "Expected attn_mask dtype to be bool or float or to match query dtype",
    )
    yield E(
        S((make((1, 4, 3, 4)), make((1, 3, 5, 4)), make((1, 3, 5, 4))), {"enable_gqa": True}),
        RuntimeError,
        "Number of heads in key and value must divide the number of heads in",
    )
    yield E(S((q, k, v), {"dropout_p": 1.5}), RuntimeError, "dropout probability has to be")


@composite(
    api="nn.functional.scaled_dot_product_attention", samples=_samples, error_samples=_errors
)
def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """softmax(query @ key^T * scale + mask) @ value over the last two dims; a bool mask (or
    the causal one) keeps the True positions, a float mask is added; rows with nothing to
    attend to give zeros."""
    _check(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa)
    n_q, n_k = query.shape[-2], key.shape[-2]
    if scale is None:
        scale = 1 / math.sqrt(query.shape[-1])
    if enable_gqa and query.dim() >= 3:
        key = key.repeat_interleave(query.shape[-3] // key.shape[-3], -3)
        value = value.repeat_interleave(query.shape[-3] // value.shape[-3], -3)
    bias, dead = _bias(attn_mask, is_causal, n_q, n_k, query)
    keep = None
    if dead is not None and (type(dead) is not Tensor or dead.is_meta or bool(dead.any())):
        bias = where(dead, 0.0, bias)
        keep = dead.logical_not().to(query.dtype)
    scores = (query * scale) @ key.mT
    if bias is not None:
        scores = scores + bias
    weights = softmax(scores, -1)
    if keep is not None:  # rows with no key to attend to: zeros, not nan (as PyTorch)
        weights = weights * keep
    if dropout_p > 0:
        weights = dropout(weights, dropout_p)
    return weights @ value


def _bias(attn_mask, is_causal: bool, n_q: int, n_k: int, like: Tensor):
    """The additive mask (0 or -inf where a bool mask is False) and which of its rows mask
    every key (None when none can), both of the mask's own (broadcastable) shape."""
    if is_causal:  # row i keeps keys 0..i: never empty
        b = np.where(np.tri(n_q, n_k, dtype=bool), 0.0, -np.inf)
        return tensor(b, dtype=like.dtype, device=like.device), None
    if attn_mask is None:
        return None, None
    if attn_mask.dtype.name == "bool":
        b = where(attn_mask, 0.0, -math.inf).to(like.dtype)
        return b, attn_mask.logical_not().all(-1, keepdim=True)
    return attn_mask, (attn_mask == -math.inf).all(-1, keepdim=True)


# ------------------------------------------------------------------ multi-head attention
def _mha_check(query, key, value, key_padding_mask, attn_mask, num_heads: int) -> bool:
    """PyTorch's rank checks of the inputs and masks; whether the input is batched."""
    if query.dim() not in (2, 3):
        raise AssertionError(
            "query should be unbatched 2D or batched 3D tensor but received "
            f"{query.dim()}-D query tensor"
        )
    n = query.dim()
    kind = "For batched (3-D) `query`" if n == 3 else "For unbatched (2-D) `query`"
    if key.dim() != n or value.dim() != n:
        raise AssertionError(
            f"{kind}, expected `key` and `value` to be {n}-D but found {key.dim()}-D and "
            f"{value.dim()}-D tensors respectively"
        )
    if key_padding_mask is not None and key_padding_mask.dim() != n - 1:
        raise AssertionError(
            f"{kind}, expected `key_padding_mask` to be `None` or {n - 1}-D but found "
            f"{key_padding_mask.dim()}-D tensor instead"
        )
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(
                f"{kind}, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                f"{attn_mask.dim()}-D tensor instead"
            )
        want = (num_heads, query.shape[0], key.shape[0])
        if n == 2 and attn_mask.dim() == 3 and attn_mask.shape != want:
            raise AssertionError(
                f"Expected `attn_mask` shape to be {want} but got {attn_mask.shape}"
            )
    return n == 3


def _additive(mask, name: str, dtype, other=None, other_name: str = ""):
    """A mask to add to the scores: a bool one as -inf where True (in dtype), a float one
    as it is."""
    if mask is None:
        return None
    if mask.dtype.name != "bool" and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if other is not None and other.dtype != mask.dtype:
        warnings.warn(
            f"Support for mismatched {name} and {other_name} is deprecated. Use same type for "
            "both instead.",
            stacklevel=3,
        )
    if mask.dtype.is_floating_point:
        return mask
    return zeros_like(mask, dtype=dtype).masked_fill(mask, -math.inf)


def _packed_projection(query, key, value, w, b):
    """q, k, v from the (3E, E) stacked weight: one GEMM for self-attention, two when key is
    value (encoder-decoder), three otherwise."""
    E = query.shape[-1]
    if key is value and query is key:
        return linear(query, w, b).unflatten(-1, (3, E)).unbind(-2)
    if key is value:
        w_q, w_kv = w.split([E, 2 * E])
        b_q, b_kv = (None, None) if b is None else b.split([E, 2 * E])
        return (linear(query, w_q, b_q), *linear(key, w_kv, b_kv).unflatten(-1, (2, E)).unbind(-2))
    bs = (None,) * 3 if b is None else b.chunk(3)
    return tuple(linear(x, wx, bx) for x, wx, bx in zip((query, key, value), w.chunk(3), bs))


def _separate_projection(query, key, value, ws, b):
    """q, k, v from three weights (key and value may have their own widths)."""
    for name, w in zip("qkv", ws):
        if w is None:
            raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
    bs = (None,) * 3 if b is None else b.chunk(3)
    eq = query.shape[-1]
    names = ("query", "key", "value")
    for name, x, w in zip(names, (query, key, value), ws):
        if w.shape != (eq, x.shape[-1]):
            raise AssertionError(
                f"expecting {name} weights shape of {(eq, x.shape[-1])}, but got {w.shape}"
            )
    for name, bx in zip(names, bs):
        if bx is not None and bx.shape != (eq,):
            raise AssertionError(f"expecting {name} bias shape of {(eq,)}, but got {bx.shape}")
    return tuple(linear(x, w, bx) for x, w, bx in zip((query, key, value), ws, bs))


def _check_attn_mask(attn_mask, bsz: int, num_heads: int, tgt_len: int, src_len: int):
    """The additive attn_mask as (1 or N*heads, L, S)."""
    if attn_mask.dim() == 2:
        if attn_mask.shape != (tgt_len, src_len):
            raise RuntimeError(
                f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                f"{(tgt_len, src_len)}."
            )
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if attn_mask.shape != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(
                f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                f"{(bsz * num_heads, tgt_len, src_len)}."
            )
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _heads(x, static, name: str, bsz: int, num_heads: int, head_dim: int):
    """(S, N, E) projections as (N*heads, S, head_dim), or the given static ones."""
    if static is None:
        return x.reshape(x.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if static.shape[0] != bsz * num_heads:
        raise AssertionError(
            f"expecting {name}.size(0) of {bsz * num_heads}, but got {static.shape[0]}"
        )
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.shape[2]}")
    return static


def _mha_samples(make):
    """need_weights=True only: with False the result is (out, None), which vmap refuses
    without out_dims=(0, None), as torch.func.vmap does; tests/test_nn_misc.py reruns every
    sample with need_weights=False (the scaled_dot_product_attention path)."""
    E, H = 4, 2
    w, b, wo, bo = make((3 * E, E)), make((3 * E,)), make((E, E)), make((E,))
    q, k, v = make((3, 2, E)), make((2, 2, E)), make((2, 2, E))
    packed = (E, H, w, b, None, None, False, 0.0, wo, bo)
    kpm = np.array([[False, True], [True, False]])
    yield S((q, k, v, *packed), {"attn_mask": make((3, 2))}, name="float 2-D attn_mask")
    yield S(
        (q[:, 0], k[:, 0], v[:, 0], E, 1, w, None, None, None, False, 0.5, wo, None, False),
        {"key_padding_mask": np.array([False, True]), "attn_mask": np.eye(3, 2, 1, bool)},
        name="unbatched, one head, bool masks, eval dropout",
    )
    yield S(
        (q, k, v, *packed),
        {
            "key_padding_mask": make((2, 2)),
            "attn_mask": make((4, 3, 2)),
            "average_attn_weights": False,
        },
        name="float masks, 3-D attn_mask, weights per head",
    )
    yield S(
        (q, k, v, E, H, w, b, make((1, 1, E)), make((1, 1, E)), True, 0.0, wo, bo),
        {"key_padding_mask": kpm, "attn_mask": np.array([[0, 1], [0, 0], [1, 0]], bool)},
        name="bias_k/v, add_zero_attn, bool masks",
    )
    yield S(
        (
            q,
            make((2, 2, 3)),
            make((2, 2, 2)),
            E,
            H,
            None,
            b,
            None,
            None,
            False,
            0.0,
            wo,
            None,
            True,
            kpm,
            True,
            None,
            True,
            make((E, E)),
            make((E, 3)),
            make((E, 2)),
        ),
        name="separate weights, bool key_padding_mask",
    )
    yield S(
        (q[:2], k, v, *packed),
        {"attn_mask": np.triu(np.ones((2, 2), bool), 1), "is_causal": True},
        name="is_causal",
    )
    yield S(
        (
            q,
            k,
            v,
            E,
            H,
            w,
            b,
            None,
            None,
            True,
            0.0,
            wo,
            None,
            True,
            np.pad(kpm, ((0, 0), (0, 1))),
            True,
            None,
            False,
            None,
            None,
            None,
            make((4, 3, 2)),
            make((4, 3, 2)),
        ),
        name="static_k/v, add_zero_attn, bool key_padding_mask",
    )
    yield S((q[:, :0], k[:, :0], v[:, :0], *packed), name="empty batch")


def _mha_errors(make):
    D, H = 4, 2
    w, wo = make((3 * D, D)), make((D, D))
    q, k = make((3, 2, D)), make((2, 2, D))
    args = (D, H, w, None, None, None, False, 0.0, wo, None)

    def err(qkv, message, kwargs=None, rest=args, error=AssertionError):
        return E(S((*qkv, *rest), kwargs or {}), error, message)

    yield err((q[0, 0], k, k), "query should be unbatched 2D or batched 3D tensor")
    yield err((q, k[0], k), r"batched \(3-D\) `query`, expected `key` and `value` to be 3-D")
    yield err((q[:, 0], k[:, 0], k), "found 2-D and 3-D tensors respectively")
    yield err(
        (q, k, k), "`key_padding_mask` to be `None` or 2-D", {"key_padding_mask": np.ones(2, bool)}
    )
    yield err(
        (q[:, 0], k[:, 0], k[:, 0]),
        r"Expected `attn_mask` shape to be \(2, 3, 2\)",
        {"attn_mask": np.ones((3, 3, 2), bool)},
    )
    yield err((q, k, k), "`attn_mask` to be `None`, 2-D or 3-D", {"attn_mask": np.ones(2, bool)})
    yield err(
        (q, k, k),
        "only bool and floating types of key_padding_mask",
        {"key_padding_mask": np.ones((2, 2), np.int64)},
    )
    yield err(
        (q, k, k),
        "Need attn_mask if specifying the is_causal hint",
        {"is_causal": True},
        error=RuntimeError,
    )
    yield err((q, k, k), "was expecting embedding dimension of 5, but got 4", rest=(5, *args[1:]))
    yield err((q, k, k), "embed_dim 4 not divisible by num_heads 3", rest=(D, 3, *args[2:]))
    yield err((q, k, k[:, :, :3]), r"key shape torch.Size\(\[2, 2, 4\]\) does not match value")
    yield err(
        (q, k, k),
        "use_separate_proj_weight is False but in_proj_weight is None",
        rest=(D, H, None, *args[3:]),
    )
    yield err(
        (q, k, k[:1]),
        r"key's sequence and batch dims torch.Size\(\[2, 2\]\) do not",
        {"use_separate_proj_weight": True},
    )
    yield err(
        (q, k, k),
        "use_separate_proj_weight is True but k_proj_weight is None",
        {"use_separate_proj_weight": True, "q_proj_weight": wo},
    )
    ws = {"use_separate_proj_weight": True, "q_proj_weight": wo, "k_proj_weight": wo}
    yield err(
        (q, k, k),
        r"expecting value weights shape of \(4, 4\), but got torch.Size\(\[4, 3",
        {**ws, "v_proj_weight": make((D, 3))},
    )
    yield err(
        (q, k, k),
        r"The shape of the 2D attn_mask is torch.Size\(\[3, 3\]\), but should",
        {"attn_mask": np.ones((3, 3), bool)},
        error=RuntimeError,
    )
    yield err(
        (q, k, k),
        r"The shape of the 3D attn_mask is torch.Size\(\[2, 3, 2\]\)",
        {"attn_mask": np.ones((2, 3, 2), bool)},
        error=RuntimeError,
    )
    yield err(
        (q, k, k),
        "bias_k is set but bias_v is None",
        rest=(D, H, w, None, make((1, 1, D)), *args[5:]),
    )
    bias = (make((1, 1, D)), make((1, 1, D)))
    yield err(
        (q, k, k),
        "bias cannot be added to static key",
        {"static_k": make((4, 2, 2))},
        rest=(D, H, w, None, *bias, *args[6:]),
    )
    yield err(
        (q, k, k), r"expecting static_v.size\(0\) of 4, but got 2", {"static_v": make((2, 2, 2))}
    )
    yield err(
        (q, k, k),
        r"Expected key_padded_mask.shape\[1\] to be 2, but got 3",
        {"key_padding_mask": np.ones((2, 3), bool)},
    )
    yield err(
        (q, k, k),
        "dropout probability has to be between 0 and 1, but got 1.5",
        rest=(*args[:7], 1.5, *args[8:]),
        error=ValueError,
    )


@composite(
    api="nn.functional.multi_head_attention_forward",
    samples=_mha_samples,
    error_samples=_mha_errors,
    autocast="lower",
)
def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """nn.MultiheadAttention's forward on (L, N, E) or unbatched (L, E) inputs: project
    query, key and value, attend per head (with the masks, extra bias and zero keys), project
    the heads' concatenation; also the attention weights (averaged over heads or per head)
    when need_weights."""
    batched = _mha_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    kpm = _additive(key_padding_mask, "key_padding_mask", query.dtype, attn_mask, "attn_mask")
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
            "module method `generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and kpm is None and not need_weights:
        attn_mask = None  # the hint alone: scaled_dot_product_attention makes the mask
    else:
        attn_mask = _additive(attn_mask, "attn_mask", query.dtype)
        is_causal = is_causal and kpm is None  # merged with the padding: no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if not use_separate_proj_weight and key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    if use_separate_proj_weight and key.shape[:2] != value.shape[:2]:
        raise AssertionError(
            f"key's sequence and batch dims {key.shape[:2]} do not match value's {value.shape[:2]}"
        )
    if use_separate_proj_weight:
        ws = (q_proj_weight, k_proj_weight, v_proj_weight)
        q, k, v = _separate_projection(query, key, value, ws, in_proj_bias)
    elif in_proj_weight is None:
        raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
    else:
        q, k, v = _packed_projection(query, key, value, in_proj_weight, in_proj_bias)
    if attn_mask is not None:
        attn_mask = _check_attn_mask(attn_mask, bsz, num_heads, tgt_len, src_len)
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k, v = cat([k, bias_k.repeat(1, bsz, 1)]), cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask, kpm = (None if m is None else pad(m, (0, 1)) for m in (attn_mask, kpm))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads(k, static_k, "static_k", bsz, num_heads, head_dim)
    v = _heads(v, static_v, "static_v", bsz, num_heads, head_dim)
    if add_zero_attn:  # one more key and value, of zeros, that every query may attend to
        k, v = pad(k, (0, 0, 0, 1)), pad(v, (0, 0, 0, 1))
        attn_mask, kpm = (None if m is None else pad(m, (0, 1)) for m in (attn_mask, kpm))
    src_len = k.shape[1]
    if kpm is not None:
        if kpm.shape[0] != bsz:
            raise AssertionError(
                f"Expected key_padded_mask.shape[0] to be {bsz}, but got {kpm.shape[0]}"
            )
        if kpm.shape[1] != src_len:
            raise AssertionError(
                f"Expected key_padded_mask.shape[1] to be {src_len}, but got {kpm.shape[1]}"
            )
        kpm = kpm.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if need_weights:
        scores = (q * math.sqrt(1.0 / head_dim)) @ k.mT
        if attn_mask is not None:
            scores = attn_mask + scores
        weights = softmax(scores, -1)  # a row with every key masked is nan, as in PyTorch
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p)
        out = (weights @ v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
    else:
        if attn_mask is not None:
            attn_mask = (
                attn_mask.unsqueeze(0)
                if attn_mask.shape[0] == 1
                else attn_mask.reshape(bsz, num_heads, -1, src_len)
            )
        q, k, v = (x.reshape(bsz, num_heads, x.shape[1], head_dim) for x in (q, k, v))
        out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
        out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
        weights = None
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.reshape(tgt_len, bsz, out.shape[1])
    if not batched:
        out = out.squeeze(1)
        weights = None if weights is None else weights.squeeze(0)
    return out, weights
