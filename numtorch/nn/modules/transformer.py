"""The Transformer of "Attention Is All You Need": encoder and decoder layers, their
stacks, and the whole model."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

from ..._core.state import is_grad_enabled
from ..._core.tensor import Tensor
from ...ops.creation import full
from .. import init
from .._attention import _additive as _canonical_mask
from ..functional import gelu, relu
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = [
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
]

_Activation = str | Callable[[Tensor], Tensor]


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
    return full((sz, sz), float("-inf"), dtype=dtype, device=device).triu(1)


def _get_seq_len(src: Tensor, batch_first: bool) -> int:
    return src.shape[0] if src.dim() == 2 else src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask: Tensor | None, is_causal: bool | None, size: int | None) -> bool:
    """is_causal when given; otherwise whether mask is the square subsequent mask."""
    if is_causal is not None or mask is None:
        return is_causal is True
    sz = size if size is not None else mask.shape[-2]
    causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
    return mask.shape == causal.shape and bool((mask == causal).all())


def _get_clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return relu
    if activation == "gelu":
        return gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _relu_or_gelu(activation) -> int:
    """PyTorch's activation_relu_or_gelu flag: 1 relu, 2 gelu (function or module), else 0."""
    if activation is relu or isinstance(activation, ReLU):
        return 1
    if activation is gelu or isinstance(activation, GELU):
        return 2
    return 0


def _check_batch_and_features(src: Tensor, tgt: Tensor, batch_first: bool, d_model: int) -> None:
    if src.dim() == 3 and src.shape[0 if batch_first else 1] != tgt.shape[0 if batch_first else 1]:
        raise RuntimeError("the batch number of src and tgt must be equal")
    if src.shape[-1] != d_model or tgt.shape[-1] != d_model:
        raise RuntimeError("the feature number of src and tgt must be equal to d_model")


class Transformer(Module):
    """An encoder-decoder Transformer (the encoder and decoder stacks, each ending in a
    LayerNorm, or custom ones)."""

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: _Activation = relu,
        custom_encoder: Any | None = None,
        custom_decoder: Any | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        kw = {"device": device, "dtype": dtype}
        super().__init__()
        layer_args = (
            d_model,
            nhead,
            dim_feedforward,
            dropout,
            activation,
            layer_norm_eps,
            batch_first,
            norm_first,
            bias,
        )
        stacks = (
            (
                "encoder",
                custom_encoder,
                TransformerEncoderLayer,
                TransformerEncoder,
                num_encoder_layers,
            ),
            (
                "decoder",
                custom_decoder,
                TransformerDecoderLayer,
                TransformerDecoder,
                num_decoder_layers,
            ),
        )
        for name, custom, layer_cls, stack_cls, num_layers in stacks:
            if custom is None:
                norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
                custom = stack_cls(layer_cls(*layer_args, **kw), num_layers, norm)
            setattr(self, name, custom)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """The decoder's output for tgt attending to the encoding of src."""
        _check_batch_and_features(src, tgt, self.batch_first, self.d_model)
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """The (sz, sz) causal mask: -inf above the diagonal, 0 elsewhere."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)


class TransformerEncoder(Module):
    """num_layers copies of encoder_layer applied in turn, then norm (if given)."""

    __constants__ = ["norm"]

    def __init__(
        self,
        encoder_layer: TransformerEncoderLayer,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_not_nested(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(
                "enable_nested_tensor is True, but self.use_nested_tensor is False because "
                f"{why_not}",
                stacklevel=2,
            )
            self.use_nested_tensor = False

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        """src through every layer (is_causal None: detected from mask), then the norm."""
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", src.dtype, mask, "mask"
        )
        mask = _canonical_mask(mask, "mask", src.dtype)
        first = self.layers[0]
        is_causal = _detect_is_causal_mask(
            mask, is_causal, _get_seq_len(src, first.self_attn.batch_first)
        )
        output = src
        for mod in self.layers:
            output = mod(
                output,
                src_mask=mask,
                is_causal=is_causal,
                src_key_padding_mask=src_key_padding_mask,
            )
        padded = self._nested_padding(src, mask, src_key_padding_mask)
        if padded is not None:
            output = output.masked_fill(padded.unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _nested_padding(self, src: Tensor, mask, key_padding_mask) -> Tensor | None:
        """Where PyTorch's nested-tensor inference path runs, the padded positions it returns
        as zeros (before the norm); None where it does not run."""
        first = self.layers[0]
        if (
            not getattr(self, "use_nested_tensor", False)
            or first.training
            or src.dim() != 3
            or key_padding_mask is None
            or mask is not None
        ):
            return None
        if is_grad_enabled() and any(p.requires_grad for p in (src, *_fast_path_tensors(first))):
            return None
        padded = key_padding_mask != 0
        left_aligned = bool((padded[:, 1:] >= padded[:, :-1]).all())
        if getattr(self, "mask_check", True) and not left_aligned:
            return None
        return padded


def _fast_path_tensors(layer: TransformerEncoderLayer) -> list[Tensor]:
    mods = (layer.self_attn.out_proj, layer.norm1, layer.norm2, layer.linear1, layer.linear2)
    ts = [layer.self_attn.in_proj_weight, layer.self_attn.in_proj_bias]
    ts += [t for m in mods for t in (m.weight, m.bias)]
    return [t for t in ts if t is not None]


def _why_not_nested(layer) -> str:
    """Why PyTorch's encoder cannot take its nested-tensor path with this layer ('' if it
    can)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    attn = layer.self_attn
    reasons = (
        (layer.norm_first, f"{name}.norm_first was True"),
        (
            not attn.batch_first,
            f"{name}.self_attn.batch_first was not True"
            "(use batch_first for better inference performance)",
        ),
        (not attn._qkv_same_embed_dim, f"{name}.self_attn._qkv_same_embed_dim was not True"),
        (attn.in_proj_bias is None, f"{name}.self_attn was passed bias=False"),
        (not layer.activation_relu_or_gelu, f"{name}.activation_relu_or_gelu was not True"),
        (layer.norm1.eps != layer.norm2.eps, f"{name}.norm1.eps was not equal to {name}.norm2.eps"),
        (attn.num_heads % 2 == 1, f"{name}.self_attn.num_heads is odd"),
    )
    return next((why for bad, why in reasons if bad), "")


class TransformerDecoder(Module):
    """num_layers copies of decoder_layer applied in turn, then norm (if given)."""

    __constants__ = ["norm"]

    def __init__(
        self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None
    ) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """tgt through every layer, attending to memory, then the norm."""
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        output = tgt
        for mod in self.layers:
            output = mod(
                output,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=tgt_is_causal,
                memory_is_causal=memory_is_causal,
            )
        if self.norm is not None:
            output = self.norm(output)
        return output


class _Layer(Module):
    """What the encoder and decoder layers share: attention block(s), the feed-forward
    block, norms and dropouts (PyTorch's attribute names and registration order)."""

    __constants__ = ["norm_first"]
    _n_attn: int

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: _Activation = relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        kw = {"device": device, "dtype": dtype}
        super().__init__()
        for name in ("self_attn", "multihead_attn")[: self._n_attn]:
            attn = MultiheadAttention(
                d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
            )
            setattr(self, name, attn)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        for i in range(1, self._n_attn + 2):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        for i in range(1, self._n_attn + 2):
            setattr(self, f"dropout{i}", Dropout(dropout))
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if self._n_attn == 1:  # PyTorch's encoder layer alone carries this fast-path flag
            self.activation_relu_or_gelu = _relu_or_gelu(activation)
        self.activation = activation

    def __setstate__(self, state: dict) -> None:
        state.setdefault("activation", relu)  # checkpoints from before activation=
        super().__setstate__(state)

    def _attend(self, attn, dropout, x, mem, attn_mask, key_padding_mask, is_causal) -> Tensor:
        out = attn(
            x,
            mem,
            mem,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return dropout(out)

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal: bool = False) -> Tensor:
        return self._attend(
            self.self_attn, self.dropout1, x, x, attn_mask, key_padding_mask, is_causal
        )

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return getattr(self, f"dropout{self._n_attn + 1}")(x)


class TransformerEncoderLayer(_Layer):
    """Self-attention then a feed-forward network, each a residual block with a LayerNorm
    after it (or before it when norm_first)."""

    _n_attn = 1

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        """One encoder layer on src ((S, N, E), (N, S, E) when batch_first, or (S, E))."""
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", src.dtype, src_mask, "src_mask"
        )
        src_mask = _canonical_mask(src_mask, "src_mask", src.dtype)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))


class TransformerDecoderLayer(_Layer):
    """Self-attention, attention to the encoder's memory, then a feed-forward network, each a
    residual block with a LayerNorm after it (or before it when norm_first)."""

    _n_attn = 2

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """One decoder layer on tgt, attending to memory."""
        x = tgt
        sa = (tgt_mask, tgt_key_padding_mask, tgt_is_causal)
        mha = (memory, memory_mask, memory_key_padding_mask, memory_is_causal)
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), *sa)
            x = x + self._mha_block(self.norm2(x), *mha)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, *sa))
        x = self.norm2(x + self._mha_block(x, *mha))
        return self.norm3(x + self._ff_block(x))

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal: bool = False) -> Tensor:
        return self._attend(
            self.multihead_attn, self.dropout2, x, mem, attn_mask, key_padding_mask, is_causal
        )
