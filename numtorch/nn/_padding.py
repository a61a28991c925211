"""Padding: ``F.pad`` in its four modes.

Constant padding is a primitive (``constant_pad_nd``; negative pads crop, and its
gradient is the opposite crop/pad). Reflect, replicate and circular padding resample each
padded dim through an index map computed from the shapes (``_resample_axis``), whose
gradient is the transposed map: a gather that folds the border gradients back onto the
input.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._core import dtype as dt
from .._core.meta import by_kernel
from .._core.op import ErrorInput, composite, defop
from .._core.tensor import Tensor
from .._opdb.samples import S
from ..ops._batching import batch_first
from ..ops._families import COMPLEX_TOO
from ._resample import resample_axis

_MODES = ("constant", "reflect", "replicate", "circular")
_COMBOS = (
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
)


def _check_pad(pad, ndim: int) -> tuple[int, ...]:
    for i, p in enumerate(pad):
        if not isinstance(p, (int, np.integer)) or isinstance(p, bool):
            if isinstance(p, Tensor) and p.dim() == 0 and not p.dtype.is_floating_point:
                continue
            raise TypeError(
                "pad(): argument 'pad' (position 2) must be tuple of ints, but found element "
                f"of type {type(p).__name__} at pos {i}"
            )
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension "
            f"but got padding length {len(pad)} and input of dimension {ndim}"
        )
    return pad


# ------------------------------------------------------------------ constant
def _constant_pad(xp, input, pad, value=0):
    pad = _check_pad(pad, input.ndim)
    crop = [slice(None)] * input.ndim
    put = [slice(None)] * input.ndim
    shape = list(input.shape)
    for i in range(len(pad) // 2):
        d = input.ndim - 1 - i
        lo, hi, n = pad[2 * i], pad[2 * i + 1], input.shape[d]
        size = n + lo + hi
        if n + min(lo, 0) + min(hi, 0) < 0:  # the crop is longer than the dim
            raise RuntimeError("narrow(): length must be non-negative.")
        crop[d] = slice(max(-lo, 0), n - max(-hi, 0))
        put[d] = slice(max(lo, 0), size - max(hi, 0))
        shape[d] = size
    out = xp.full(shape, 0 if value is None else value, dtype=input.dtype)
    out[tuple(put)] = input[tuple(crop)]
    return out


def _constant_samples(make):
    yield S((make((2, 3)), (1, 2)))
    yield S((make((2, 3, 4)), (1, 0, 2, 1)), {"value": 1.5})
    yield S((make((2, 3, 4)), (-1, 2, 0, -1, 1, 1)))
    yield S((make((2, 1, 3, 4)), [2, -1, 1, 1]), {"mode": "constant", "value": -2.0})
    yield S((make((4, 3)).T, (1, 1, 1, 0)), name="non-contiguous")
    yield S((make((0, 2, 3)), (1, 1)), name="empty batch")
    yield S((make((3,)), ()))


constant_pad_nd_p = defop(
    "constant_pad_nd",
    _constant_pad,
    nin=1,
    vjp=lambda g, pad: constant_pad_nd(g, tuple(-p for p in pad)),
    jvp=lambda t, pad: constant_pad_nd(t, pad),  # the fill value is a constant
    batch_rule=batch_first(),  # the pads address trailing dims: a leading batch is untouched
    api="nn.functional.pad",
    samples=_constant_samples,
    error_samples=lambda make: [
        ErrorInput(S((make((2, 3)), (1,))), RuntimeError, "Padding length must be divisible by 2"),
        ErrorInput(
            S((make((2, 3)), (1, 1, 1, 1, 1, 1))),
            RuntimeError,
            "Padding length should be less than or equal to two times the input dimension but "
            "got padding length 6 and input of dimension 2",
        ),
        ErrorInput(S((make((2, 3)), (1.5, 1))), TypeError, "must be tuple of ints"),
        ErrorInput(
            S((make((2, 3)), (-5, 3))), RuntimeError, r"narrow\(\): length must be non-negative"
        ),
    ],
    float8=True,  # (PyTorch copies float8)
    test=COMPLEX_TOO,
    complex32=True,
    meta=by_kernel,
)
constant_pad_nd = constant_pad_nd_p.fn


# ------------------------------------------------------------------ reflect / replicate / circular
def _check_modes(x: Tensor, pad: tuple, mode: str) -> None:
    nd, rank = len(pad) // 2, x.dim()
    if nd not in (1, 2, 3) or rank not in (nd + 1, nd + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {rank}D input tensor.\n{_COMBOS}"
        )
    shape = list(x.shape)
    if mode in ("reflect", "replicate") and x.dtype.scalar_name == "Bool":
        kernel = "reflection" if mode == "reflect" else "replication"
        raise dt.not_implemented(f"{kernel}_pad{nd}d", x)
    if mode in ("reflect", "replicate"):
        first = 1 if rank == nd + 2 else 0
        if any(s == 0 for s in shape[first:]):
            raise RuntimeError(
                f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with possibly 0 batch size "
                f"and other non-zero dimensions for input, but got: {shape}"
            )
    outs = [
        shape[rank - nd + i] + pad[2 * (nd - 1 - i)] + pad[2 * (nd - 1 - i) + 1] for i in range(nd)
    ]
    if mode in ("reflect", "replicate") and max(outs) < 1:
        names = ("D", "H", "W")[3 - nd :]
        sizes = ", ".join(f"{n}: {v}" for n, v in zip(names, shape[rank - nd :]))
        space = " " if mode == "replicate" and nd == 2 else ""  # sic, PyTorch's text
        calc = " ".join(f"{n}: {v}" for n, v in zip(names, outs))
        raise RuntimeError(f"input ({sizes}{space}) is too small. Calculated output {calc}")
    if mode == "circular":
        for i in range(nd):
            n, (lo, hi) = shape[rank - 1 - i], pad[2 * i : 2 * i + 2]
            kept = n + min(lo, 0) + min(hi, 0)
            if kept < 0 or n + lo + hi < 0 or (kept == 0 and n + lo + hi > 0):
                raise RuntimeError(
                    f"circular padding ({lo}, {hi}) of a dimension of size {n} crops more "
                    "than the dimension"
                )
    for i in range(nd):
        d, (lo, hi) = rank - 1 - i, pad[2 * i : 2 * i + 2]
        if mode == "reflect" and not (lo < shape[d] and hi < shape[d]):
            raise RuntimeError(
                f"Argument #{2 * nd + 2}: Padding size should be less than the corresponding "
                f"input dimension, but got: padding ({lo}, {hi}) at dimension {d} of input "
                f"{shape}"
            )
        if mode == "circular" and (lo > shape[d] or hi > shape[d]):
            raise RuntimeError("Padding value causes wrapping around more than once.")


def _pad_samples(make):
    yield S((make((2, 4)), (2, 1)), {"mode": "reflect"})
    yield S((make((2, 3, 4)), (1, 2, 2, 0)), {"mode": "reflect"})
    yield S((make((1, 2, 3, 3, 4)), (1, 1, 2, -1, 0, 2)), {"mode": "reflect"})
    yield S((make((2, 3)), (3, -1)), {"mode": "replicate"})
    yield S((make((5, 3, 2)).transpose(2, 1, 0), (2, 1, 1, 3)), {"mode": "replicate"})
    yield S((make((2, 3, 3, 3)), (1, 0, 0, 2, 2, 1)), {"mode": "replicate"})
    yield S((make((0, 2, 3)), (1, 2)), {"mode": "circular"})
    yield S((make((2, 4, 3)), (-1, 2, 3, 1)), {"mode": "circular"})


def _pad_errors(make):
    x = make((1, 2, 3))
    yield ErrorInput(
        S((x, (3, 3)), {"mode": "reflect"}),
        RuntimeError,
        r"Argument #4: Padding size should be less than the corresponding input dimension, "
        r"but got: padding \(3, 3\) at dimension 2 of input \[1, 2, 3\]",
    )
    yield ErrorInput(
        S((make((1, 2, 3, 4)), (1, 1, 3, 1)), {"mode": "reflect"}),
        RuntimeError,
        r"Argument #6: Padding size should be less than the corresponding input dimension, "
        r"but got: padding \(3, 1\) at dimension 2 of input \[1, 2, 3, 4\]",
    )
    yield ErrorInput(
        S((x, (1, 1)), {"mode": "reflect", "value": 1.0}),
        RuntimeError,
        'Padding mode "reflect" doesn\'t take in value argument',
    )
    yield ErrorInput(
        S((x, (1, 1)), {"mode": "foo"}), NotImplementedError, "Unrecognised padding mode foo"
    )
    yield ErrorInput(
        S((make((3,)), (1, 1)), {"mode": "replicate"}),
        NotImplementedError,
        "Padding size 2 is not supported for 1D input tensor",
    )
    yield ErrorInput(
        S((x, (4, 1)), {"mode": "circular"}),
        RuntimeError,
        "Padding value causes wrapping around more than once",
    )
    yield ErrorInput(
        S((make((2, 3, 0)), (1, 1)), {"mode": "replicate"}),
        RuntimeError,
        r"Expected 2D or 3D \(batch mode\) tensor with possibly 0 batch size and other "
        r"non-zero dimensions for input, but got: \[2, 3, 0\]",
    )


_PAD_KERNELS = {"reflect": "reflection_pad", "replicate": "replication_pad"}
# (mode, padded dims) of the kernels in PyTorch's fp32 autocast list
_FP32_PADS = {("reflect", 1), ("reflect", 2), ("replicate", 1), ("replicate", 2), ("replicate", 3)}


def _casting_pad(args: dict) -> bool:
    """Whether autocast casts the call to float32: the kernel that runs is in its list."""
    return (args.get("mode", "constant"), len(args["pad"]) // 2) in _FP32_PADS


def _pad_complex32(inputs, args):
    """PyTorch's reflection and replication kernels refuse complex32 (after their checks);
    constant and circular padding run it."""
    mode, input = args["mode"], inputs[0]
    if mode not in _PAD_KERNELS:
        return True
    pad = _check_pad(args["pad"], input.dim())
    _check_modes(input, pad, mode)
    return f"{_PAD_KERNELS[mode]}{len(pad) // 2}d"


@composite(
    samples=_pad_samples,
    error_samples=_pad_errors,
    api="nn.functional.pad",
    test=COMPLEX_TOO,
    complex32=_pad_complex32,
    autocast=lambda inputs, args: "fp32" if _casting_pad(args) else None,
)
def pad(
    input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None
) -> Tensor:
    """Pads the trailing dims of ``input`` by ``pad`` (last dim first, (left, right) pairs)."""
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    pad = _check_pad(pad, input.dim())
    if mode == "constant":
        return constant_pad_nd(input, pad, value=0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    _check_modes(input, pad, mode)
    x = input
    for i in range(len(pad) // 2):
        d = input.dim() - 1 - i
        x = resample_axis(x, d, ("pad", mode, input.shape[d], pad[2 * i], pad[2 * i + 1]))
    return x
