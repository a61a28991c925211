"""Embedding and EmbeddingBag."""

from __future__ import annotations

from ..._core.tensor import Tensor
from ...autograd.grad_mode import is_grad_enabled, no_grad
from ...ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module
from .utils import _DeviceLike, _DTypeLike

_SPARSE = (
    "{}(sparse=True): numtorch has no sparse tensors, so it cannot produce the sparse "
    "gradient PyTorch gives the weight (and will not silently give a dense one). Use "
    "sparse=False for a dense gradient, or freeze the weight."
)


def _padding_index(padding_idx: int | None, num: int, word: str) -> int | None:
    """padding_idx as a row number (a negative one counts from the end)."""
    if padding_idx is None:
        return None
    if padding_idx >= num or padding_idx < -num:
        raise AssertionError(f"{word} must be within num_embeddings")
    return padding_idx + num if padding_idx < 0 else padding_idx


def _pretrained_shape(embeddings: Tensor) -> tuple[int, int]:
    """(num_embeddings, embedding_dim) of a pretrained table, which must be 2-D."""
    if embeddings.dim() != 2:
        raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
    rows, cols = embeddings.shape
    return rows, cols


class _Embeddings(Module):
    """The lookup table both layers share: ``weight`` (num_embeddings, embedding_dim) drawn
    from N(0, 1), the padding row zeroed; or a given ``_weight`` (shared, not copied)."""

    def _init_weight(
        self,
        num_embeddings: int,
        embedding_dim: int,
        _weight: Tensor | None,
        requires_grad: bool,
        device: _DeviceLike,
        dtype: _DTypeLike,
    ) -> None:
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if _weight is None:
            data = empty((num_embeddings, embedding_dim), device=device, dtype=dtype)
            self.weight = Parameter(data, requires_grad=requires_grad)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError(
                    "Shape of weight does not match num_embeddings and embedding_dim"
                )
            self.weight = Parameter(_weight, requires_grad=requires_grad)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def _check_sparse(self) -> None:
        if self.sparse and self.weight.requires_grad and is_grad_enabled():
            raise NotImplementedError(_SPARSE.format(type(self).__name__))

    def _repr_options(self) -> str:
        s = ""
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        return s


class Embedding(_Embeddings):
    """A lookup table: ``weight[input]`` (``F.embedding``). The ``padding_idx`` row gets no
    gradient; ``max_norm`` renormalizes the looked-up rows of the weight in place.
    ``sparse=True`` raises once a gradient for the weight would be recorded (numtorch has no
    sparse tensors)."""

    __constants__ = [
        "num_embeddings",
        "embedding_dim",
        "padding_idx",
        "max_norm",
        "norm_type",
        "scale_grad_by_freq",
        "sparse",
    ]

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Tensor | None = None,
        _freeze: bool = False,
        device: _DeviceLike = None,
        dtype: _DTypeLike = None,
    ) -> None:
        super().__init__()
        self.padding_idx = _padding_index(padding_idx, num_embeddings, "Padding_idx")
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self._init_weight(num_embeddings, embedding_dim, _weight, not _freeze, device, dtype)
        self.sparse = sparse

    def forward(self, input: Tensor) -> Tensor:
        self._check_sparse()
        return F.embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        s += self._repr_options()
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> Embedding:
        """An Embedding whose weight is ``embeddings`` (shared, not copied); ``freeze``:
        the weight does not require grad."""
        rows, cols = _pretrained_shape(embeddings)
        return cls(
            num_embeddings=rows,
            embedding_dim=cols,
            _weight=embeddings,
            _freeze=freeze,
            padding_idx=padding_idx,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            sparse=sparse,
        )


class EmbeddingBag(_Embeddings):
    """The sum, mean or max of the embeddings of each bag (``F.embedding_bag``): the rows
    of a 2-D input, or the slices of a 1-D input that ``offsets`` start."""

    __constants__ = [
        "num_embeddings",
        "embedding_dim",
        "max_norm",
        "norm_type",
        "scale_grad_by_freq",
        "mode",
        "sparse",
        "include_last_offset",
        "padding_idx",
    ]

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight: Tensor | None = None,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        device: _DeviceLike = None,
        dtype: _DTypeLike = None,
    ) -> None:
        super().__init__()
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _padding_index(padding_idx, num_embeddings, "padding_idx")
        self._init_weight(num_embeddings, embedding_dim, _weight, True, device, dtype)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def forward(
        self,
        input: Tensor,
        offsets: Tensor | None = None,
        per_sample_weights: Tensor | None = None,
    ) -> Tensor:
        self._check_sparse()
        return F.embedding_bag(
            input,
            self.weight,
            offsets,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.mode,
            self.sparse,
            per_sample_weights,
            self.include_last_offset,
            self.padding_idx,
        )

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}" + self._repr_options()
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
    ) -> EmbeddingBag:
        """An EmbeddingBag whose weight is ``embeddings`` (shared, not copied); ``freeze``:
        the weight does not require grad."""
        rows, cols = _pretrained_shape(embeddings)
        bag = cls(
            num_embeddings=rows,
            embedding_dim=cols,
            _weight=embeddings,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            mode=mode,
            sparse=sparse,
            include_last_offset=include_last_offset,
            padding_idx=padding_idx,
        )
        bag.weight.requires_grad = not freeze
        return bag
