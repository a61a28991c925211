"""Linear maps: ``linear`` (x W^T + b) and ``bilinear`` (x1^T A x2 + b), composites of
matmul and einsum (one GEMM forward, one per input gradient, also under vmap)."""

from __future__ import annotations

import math

from .._core.dispatch import bare_arrays, kernel_call
from .._core.op import composite
from .._core.tensor import Tensor, _make
from .._opdb.samples import ErrorInput as E
from .._opdb.samples import S
from ..ops._families import COMPLEX_TOO
from ..ops.linalg import addmm, addmm_p, einsum, matmul_p


def _shape(t: Tensor) -> tuple:
    """t's (logical) shape as a tuple (a plain tensor's array's: no Size built)."""
    return tuple(t.shape) if t._level else t._data.shape


def _check(input: Tensor, weight: Tensor, bias: Tensor | None) -> tuple:
    """PyTorch's errors for the shapes it multiplies (the input flattened to rows); returns
    the input's and the weight's shapes."""
    si, sw = _shape(input), _shape(weight)
    ni, nw = len(si), len(sw)
    if ni == 0 or nw == 0:
        raise RuntimeError(
            f"both arguments to linear need to be at least 1D, but they are {ni}D and {nw}D"
        )
    if nw > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nw}D")
    if nw == 1 and ni == 2 and bias is not None:
        raise RuntimeError("mat2 must be a matrix, got 1-D tensor")
    k, n = si[-1], sw[-1]
    if k == n:
        if bias is not None and nw == 2:
            sb = _shape(bias)
            if len(sb) <= 1 or ni <= 2:  # else it broadcasts with the output
                _check_bias(sb, si, sw[0])
        return si, sw
    rows = math.prod(si[:-1])
    if nw == 2:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and {n}x{sw[0]})"
        )
    if ni == 1:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{k}] and src [{n}] to have the same "
            f"number of elements, but got {k} and {n} elements respectively"
        )
    raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{k}), vec ({n})")


def _check_bias(sb: tuple, si: tuple, out: int) -> None:
    """PyTorch expands the bias to (rows, out_features) of the flattened input."""
    if sb and sb[-1] in (1, out) and (len(sb) == 1 or sb[-2] in (1, math.prod(si[:-1]))):
        return
    target = (math.prod(si[:-1]), out)
    for d in range(1, min(len(sb), 2) + 1):
        if sb[-d] not in (1, target[-d]):
            raise RuntimeError(
                f"The expanded size of the tensor ({target[-d]}) must match the existing size "
                f"({sb[-d]}) at non-singleton dimension {2 - d}.  Target sizes: "
                f"[{target[0]}, {target[1]}].  Tensor sizes: {list(sb)}"
            )


def _linear_samples(make):
    yield S((make((2, 3)), make((4, 3))))
    yield S((make((2, 3)), make((4, 3)), make((4,))))
    yield S((make((3,)), make((4, 3)), make((4,))), name="vector input")
    yield S((make((2, 2, 3)), make((4, 3)), make((4,))), name="leading dims")
    yield S((make((2, 3)), make((3,))), name="1-D weight")
    yield S((make((2, 2, 3)), make((3,)), make(())), name="1-D weight, bias")
    yield S((make((3, 2)).T, make((3, 4)).T, make((4,))), name="transposed")
    yield S((make((0, 3)), make((4, 3)), make((4,))), name="empty batch")


def _linear_errors(make):
    yield E(
        S((make((2, 3)), make((5, 4)))),
        RuntimeError,
        r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)",
    )
    yield E(
        S((make((2, 2, 3)), make((5, 4)))),
        RuntimeError,
        r"mat1 and mat2 shapes cannot be multiplied \(4x3 and 4x5\)",
    )
    yield E(S((make((2, 3)), make((4,)))), RuntimeError, r"size mismatch, got input \(2\)")
    yield E(S((make((2, 3)), make((3,)), make(()))), RuntimeError, "mat2 must be a matrix")
    yield E(
        S((make((2, 3)), make((4, 3)), make((3,)))),
        RuntimeError,
        r"The expanded size of the tensor \(4\) must match the existing size \(3\)",
    )
    yield E(S((make(()), make((4, 5)))), RuntimeError, "both arguments to linear need to be")


@composite(
    api="nn.functional.linear",
    samples=_linear_samples,
    error_samples=_linear_errors,
    test=COMPLEX_TOO,
    autocast="lower",
)
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = input @ weight.T + bias over the last dim of input (any leading dims)."""
    si, sw = _check(input, weight, bias)
    if len(si) == 2 and len(sw) == 2:
        # one kernel call (addmm's or matmul's), where nothing observes or records it
        arrays = bare_arrays(input, weight) if bias is None else bare_arrays(input, weight, bias)
        if arrays is not None:
            if bias is None:
                return _make(kernel_call(matmul_p, arrays[0], arrays[1].T))
            return _make(kernel_call(addmm_p, arrays[2], arrays[0], arrays[1].T))
    if bias is not None and len(si) in (2, 3) and not input.dtype == weight.dtype == bias.dtype:
        # PyTorch runs these as addmm (3-d folded to 2-d): addmm's dtype check raises
        addmm(bias, input.reshape(-1, si[-1]), weight.mT)
    if bias is not None and len(si) == 2 and len(sw) == 2:
        return addmm(bias, input, weight.t())  # PyTorch's graph: AddmmBackward0, TBackward0
    out = input @ (weight.t() if len(sw) == 2 else weight)
    if bias is None:
        return out
    return out + bias


def _bilinear_samples(make):
    yield S((make((2, 3)), make((2, 4)), make((5, 3, 4))))
    yield S((make((2, 3)), make((2, 4)), make((5, 3, 4)), make((5,))))
    yield S((make((2, 2, 3)), make((2, 2, 4)), make((5, 3, 4)), make((5,))), name="leading dims")
    yield S((make((0, 3)), make((0, 4)), make((2, 3, 4)), make((2,))), name="empty batch")


def _bilinear_errors(make):
    yield E(
        S((make((2, 3)), make((3, 4)), make((5, 3, 4)))),
        RuntimeError,
        r"bilinear\(\): input batch dimensions do not match: got \[2\] and \[3\]",
    )
    yield E(
        S((make((2, 3)), make((2, 4)), make((5, 2, 4)))),
        RuntimeError,
        r"bilinear\(\): input1 size does not match weight size: got 3 but expected 2",
    )
    yield E(
        S((make((2, 3)), make((2, 4)), make((5, 3, 2)))),
        RuntimeError,
        r"bilinear\(\): input2 size does not match weight size: got 4 but expected 2",
    )
    yield E(
        S((make((2, 3)), make((2, 4)), make((5, 3, 4)), make((4,)))),
        RuntimeError,
        r"bilinear\(\): bias size does not match weight size: got 4 but expected 5",
    )


@composite(
    api="nn.functional.bilinear",
    samples=_bilinear_samples,
    error_samples=_bilinear_errors,
    test=COMPLEX_TOO,
    complex_grad="_trilinear",  # PyTorch's bilinear calls _trilinear, which refuses
)
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]."""
    named = [("input1", input1), ("input2", input2), ("weight", weight), ("bias", bias)]
    named = [(n, t) for n, t in named if t is not None]
    if any(t.dtype != input1.dtype for _, t in named):  # checked before the shapes
        got = ", ".join(f"{n}: {t.dtype.cpp_name}" for n, t in named)
        raise RuntimeError(f"All tensors must have the same dtype, got {got}")
    s1, s2 = list(input1.shape), list(input2.shape)
    if input1.dim() != input2.dim():
        raise RuntimeError(
            f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}"
        )
    if s1[:-1] != s2[:-1]:
        raise RuntimeError(
            f"bilinear(): input batch dimensions do not match: got {s1[:-1]} and {s2[:-1]}"
        )
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-dimensional, but got {weight.dim()}")
    for n, s, w in ((1, s1, weight.shape[1]), (2, s2, weight.shape[2])):
        if s[-1] != w:
            raise RuntimeError(
                f"bilinear(): input{n} size does not match weight size: got {s[-1]} but "
                f"expected {w}"
            )
    if bias is not None and bias.shape[-1] != weight.shape[0]:
        raise RuntimeError(
            f"bilinear(): bias size does not match weight size: got {bias.shape[-1]} but "
            f"expected {weight.shape[0]}"
        )
    # (x1 W) first: one GEMM over the rows, then a row-wise product with x2.
    t = einsum("...i,oij->...oj", input1, weight)
    out = (t * input2.unsqueeze(-2)).sum(-1)
    return out if bias is None else out + bias
