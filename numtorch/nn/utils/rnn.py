"""torch.nn.utils.rnn: packed sequences and the conversions between padded, packed and
listed batches of variable-length sequences.

Each conversion is one gather (``index_select``) with an index computed from the lengths,
so gradients flow through it and vmap batches it like any indexing op.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import numpy as np

from ..._core import dtype as dt
from ..._core.messages import broadcast_mismatch
from ..._core.tensor import Tensor
from ...ops.creation import arange, as_tensor, empty_like, full
from ...ops.reduction import sort
from ...ops.shape import cat

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def _bind(t, fn):
    return None if t is None else fn(t)


def _cast(name: str, dtype: dt.dtype) -> Callable[[PackedSequence], PackedSequence]:
    """The method ``PackedSequence.<name>()``: the sequence with its data in ``dtype``."""

    def cast(self: PackedSequence) -> PackedSequence:
        return self.to(dtype=dtype)

    cast.__name__, cast.__qualname__ = name, f"PackedSequence.{name}"
    cast.__doc__ = f"The sequence with its data cast to {dtype}."
    return cast


class PackedSequence(PackedSequence_):
    """The data of a batch of sequences packed time step by time step, and the number of
    sequences still running at each step (``batch_sizes``, a CPU int64 tensor)."""

    def __new__(
        cls,
        data: Tensor,
        batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes), ...)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never "
                "be created manually. They should be instantiated by functions like "
                "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence"
            )
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data.to(...)``; the indices follow data's device, batch_sizes stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self

        def move(t):
            return t.to(data.device)

        return type(self)(
            data,
            self.batch_sizes,
            _bind(self.sorted_indices, move),
            _bind(self.unsorted_indices, move),
        )

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        kwargs.setdefault("device", "cuda")
        return self.to(*args, **kwargs)

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        kwargs.setdefault("device", "cpu")
        return self.to(*args, **kwargs)

    double = _cast("double", dt.float64)
    float = _cast("float", dt.float32)
    half = _cast("half", dt.float16)
    long = _cast("long", dt.int64)
    int = _cast("int", dt.int32)
    short = _cast("short", dt.int16)
    char = _cast("char", dt.int8)
    byte = _cast("byte", dt.uint8)

    @property
    def is_cuda(self) -> bool:
        """Whether ``data`` is on a GPU."""
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        """Always False: numtorch has no pinned memory."""
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of ``permutation`` (None stays None)."""
    if permutation is None:
        return None
    n = permutation.numel()
    return empty_like(permutation).scatter_(0, permutation, arange(n, device=permutation.device))


# ------------------------------------------------------------------ index plans
def _int64(values, device=None) -> Tensor:
    return as_tensor(np.asarray(values, dtype=np.int64), device=device)


def _active(lengths: np.ndarray, T: int) -> tuple:
    """(t, n) of every element of a batch of sequences with these lengths, time-major:
    the order of a packed sequence's data when lengths decrease."""
    return np.nonzero(np.arange(T)[:, None] < lengths[None, :])


def _gather(data: Tensor, flat: np.ndarray, fill_at: np.ndarray | None, value) -> Tensor:
    """``data[flat]`` along dim 0, with ``value`` where ``fill_at`` (one gather from data
    and one extra row holding ``value``)."""
    if fill_at is not None and fill_at.any():
        pad = full((1, *data.shape[1:]), value, dtype=data.dtype, device=data.device)
        data = cat([data, pad], 0)
        flat = np.where(fill_at, data.shape[0] - 1, flat)
    return data.index_select(0, _int64(flat, data.device))


def _padded(data: Tensor, src: np.ndarray, valid: np.ndarray, value) -> Tensor:
    """``data[src]`` along dim 0 (shaped ``src.shape + data.shape[1:]``), ``value`` where not
    ``valid``."""
    padded = _gather(data, src.reshape(-1), ~valid.reshape(-1), value)
    return padded.reshape(*src.shape, *data.shape[1:])


def _starts(counts: np.ndarray) -> np.ndarray:
    """Where each of consecutive runs of these lengths starts."""
    return np.concatenate([[0], np.cumsum(counts)])[:-1]


def _lengths_of(batch_sizes: np.ndarray) -> np.ndarray:
    """Each sequence's length from the per-step batch sizes."""
    n = int(batch_sizes[0]) if batch_sizes.size else 0
    return (batch_sizes[:, None] > np.arange(n)[None, :]).sum(0)


# ------------------------------------------------------------------ the conversions
def pack_padded_sequence(
    input: Tensor,
    lengths: Tensor | list[int],
    batch_first: bool = False,
    enforce_sorted: bool = True,
) -> PackedSequence:
    """Pack a padded batch (``T x B x *``, or ``B x T x *`` with ``batch_first``) of
    sequences of the given lengths."""
    if isinstance(lengths, Tensor):
        lengths = lengths.to(dtype=dt.int64)
    else:
        lengths = as_tensor(np.asarray(lengths).astype(np.int64))
    if lengths.dim() != 1 or lengths.device.type != "cpu":
        raise RuntimeError(
            "'lengths' argument should be a 1D CPU int64 tensor, but got "
            f"{lengths.dim()}D {lengths.device.type} {lengths.dtype.scalar_name} tensor"
        )
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    x = input.transpose(0, 1) if batch_first else input
    T, B = x.shape[0], x.shape[1]
    if x.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    n = lengths.numpy(force=True)
    if n.shape[0] != B:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got "
            f"{n.shape[0]} (batch_size={B})"
        )
    if n[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an "
            "element in 'lengths' that is <= 0"
        )
    if (n[1:] > n[:-1]).any():
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
            "sidestep this requirement if you do not need ONNX exportability."
        )
    if n[0] > T:
        raise RuntimeError(f"numtorch: a length ({n[0]}) exceeds the padded sequence length ({T})")
    t, b = _active(n, int(n[0]))
    data = _gather(x.reshape(T * B, *x.shape[2:]), t * B + b, None, 0)
    batch_sizes = _int64(np.bincount(t, minlength=int(n[0])))
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """The padded batch (``T x B x *`` or ``B x T x *``) and the lengths of a packed
    sequence, in the batch order it was packed from."""
    bs = sequence.batch_sizes.numpy(force=True).astype(np.int64)
    T = bs.shape[0]
    if total_length is not None:
        if total_length < T:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being {T}"
            )
        T = total_length
    data = sequence.data
    lengths = _lengths_of(bs)
    B = lengths.shape[0]
    offsets = _starts(bs)
    ts, ns = np.meshgrid(np.arange(T), np.arange(B), indexing="ij")
    valid = ts < lengths[None, :]
    src = np.where(valid, offsets[np.minimum(ts, len(bs) - 1)] + ns, 0)
    if batch_first:
        src, valid, ts = src.T, valid.T, ts.T
    if sequence.unsorted_indices is not None:
        order = sequence.unsorted_indices.numpy(force=True)
        axis = 0 if batch_first else 1
        src, valid = np.take(src, order, axis), np.take(valid, order, axis)
        lengths = lengths[order]
    return _padded(data, src, valid, padding_value), _int64(lengths)


def pad_sequence(
    sequences: Tensor | list[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Stack sequences of different lengths (``L x *``) into one padded batch."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(
            "pad_sequence: Expected iterable for input sequences, but got arg of "
            f"type: {type(sequences)}"
        )
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    first = sequences[0]
    if first.dim() == 0:
        raise RuntimeError("ArrayRef: invalid slice, N = 1; size = 0")
    rest = tuple(first.shape[1:])
    parts = []
    for s in sequences:
        want = (s.shape[0], *rest)
        if tuple(s.shape) != want:
            msg = broadcast_mismatch([want, tuple(s.shape)])
            if msg is not None or s.dim() > len(want):
                raise RuntimeError(msg or f"expand: the source has {s.dim()} dims")
            s = s.expand(*want)
        parts.append(s if s.dtype == first.dtype else s.to(first.dtype))
    lengths = np.array([s.shape[0] for s in parts], dtype=np.int64)
    T, B = int(lengths.max()), len(parts)
    offsets = _starts(lengths)
    ts = np.arange(T)[:, None] - (T - lengths[None, :] if padding_side == "left" else 0)
    valid = (ts >= 0) & (ts < lengths[None, :])
    src = np.where(valid, offsets[None, :] + ts, 0)
    if batch_first:
        src, valid = src.T, valid.T
    data = cat(parts, 0) if B > 1 else parts[0]
    return _padded(data, src, valid, padding_value)


def unpad_sequence(
    padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False
) -> list[Tensor]:
    """The list of sequences, each cut to its length, of a padded batch."""
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [seq[: int(n)] for seq, n in zip(x.unbind(0), lengths.tolist(), strict=True)]


def pack_sequence(sequences: list[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences (``L x *``), longest first unless ``enforce_sorted`` is
    False."""
    lengths = as_tensor(np.array([v.size(0) for v in sequences], dtype=np.int64))
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a packed sequence holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
