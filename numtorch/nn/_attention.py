"""Scaled dot-product attention: softmax(q k^T * scale + mask) v, with bool or additive
masks, a causal mask, grouped-query heads and dropout on the attention weights."""

from __future__ import annotations

import math

import numpy as np

from .._core.op import composite
from .._core.tensor import Tensor
from ..ops.comparison import where
from ..ops.creation import tensor
from ..ops.random import dropout
from ..ops.reduction import softmax
from ..testing.samples import ErrorInput as E
from ..testing.samples import S


def _check(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa) -> None:
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
            f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead."
        )
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{query.dtype.scalar_name.lower()} key.dtype: {key.dtype.scalar_name.lower()} and "
            f"value.dtype: {value.dtype.scalar_name.lower()} instead."
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
                f"attn_mask.dtype: {_c_name(attn_mask)} and  query.dtype: {_c_name(query)} "
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


def _c_name(t: Tensor) -> str:
    """A dtype as PyTorch's C++ messages name it (``float``, ``double``, ``long int``)."""
    return {"int64": "long int", "int32": "int", "float32": "float"}.get(t.dtype.name, t.dtype.name)


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
    if dead is not None and (type(dead) is not Tensor or bool(dead.any())):
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
