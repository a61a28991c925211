"""Grouped and scaled matrix products of ``nn.functional``: ``grouped_mm`` (PyTorch's
mixture-of-experts GEMM, which runs on CPU for float32, bfloat16 and float16 operands),
``scaled_mm`` (float8 operands with tensor-wise or row-wise decoding scales, accumulated in
float32 as PyTorch's CPU kernel does), ``scaled_grouped_mm`` (no CPU kernel in PyTorch),
and the ``ScalingType``/``SwizzleType`` enums they take."""

from __future__ import annotations

import enum

import numpy as np

from .._core import dtype as dt
from .._core.op import composite
from .._core.tensor import Tensor
from .._opdb.samples import ErrorInput, S
from ..ops.creation import zeros
from ..ops.shape import cat, stack
from ._aten_norm import _no_cpu_kernel


class ScalingType(enum.IntEnum):
    """How a float8 operand was scaled (F.ScalingType)."""

    TensorWise = 0
    RowWise = 1
    BlockWise1x16 = 2
    BlockWise1x32 = 3
    BlockWise1x128 = 4
    BlockWise128x128 = 5


class SwizzleType(enum.IntEnum):
    """The swizzling pattern of a scale (F.SwizzleType)."""

    NO_SWIZZLE = 0
    SWIZZLE_32_4_4 = 1


ScalingType.__module__ = SwizzleType.__module__ = "torch.nn.functional"


class _DefaultDtype:
    """scaled_mm's default output dtype (bfloat16), comparing equal to any dtype that
    prints as it does (numtorch's and PyTorch's), so the signature reads as PyTorch's."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __eq__(self, other) -> bool:
        return repr(other) == repr(self)

    def __hash__(self) -> int:
        return hash(repr(self))


_BFLOAT16 = _DefaultDtype("bfloat16")

_GROUPED_DTYPES = (dt.float32, dt.bfloat16, dt.float16)


# ------------------------------------------------------------------ grouped_mm
def _check_grouped(mat_a: Tensor, mat_b: Tensor, offs, bias, out_dtype) -> None:
    for name, t in (("mat_a", mat_a), ("mat_b", mat_b)):
        if t.dim() not in (2, 3):
            raise RuntimeError(f"{name} has to be 2 or 3d")
    for name, t in (("mat_a", mat_a), ("mat_b", mat_b)):
        if t.dtype not in _GROUPED_DTYPES:
            raise RuntimeError(
                f"Expected {name} to be Float32, BFloat16 or Float16 matrix, got "
                f"{t.dtype.scalar_name}"
            )
    both_3d = mat_a.dim() == 3 and mat_b.dim() == 3
    if (offs is None) != both_3d:
        raise RuntimeError(
            "Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d"
        )
    if offs is not None and offs.dtype != dt.int32:
        raise RuntimeError("Offsets have to be int32")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and out_dtype != mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    for t in (mat_a, mat_b):
        size = t.dtype.itemsize
        if any(s * size % 16 for s, n in zip(_layout(t), t.shape) if s != 1 and n != 1):
            raise RuntimeError("strides should be multiple of 16 bytes")
    if both_3d and mat_a.shape[0] != mat_b.shape[0]:
        raise RuntimeError("batched dimension has to match")
    k_b = mat_b.shape[-2]
    if mat_a.shape[-1] != k_b:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")


def _layout(t: Tensor) -> tuple[int, ...]:
    """The strides of t's shape laid out contiguously. PyTorch checks the actual strides
    (a view of other strides may be refused there and accepted here); numtorch checks the
    shape's, so that a transform's tensors, which have no strides, are checked alike."""
    strides, step = [], 1
    for n in reversed(tuple(t.shape)):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _bounds(offs: Tensor) -> list[tuple[int, int]]:
    ends = [int(v) for v in offs.tolist()]
    return list(zip([0, *ends[:-1]], ends))


def grouped_mm(
    mat_a: Tensor,
    mat_b: Tensor,
    *,
    offs: Tensor | None = None,
    bias: Tensor | None = None,
    out_dtype=None,
) -> Tensor:
    """Per-group matrix products: 3-D by 3-D is a batched product; a 2-D operand is split
    into groups at ``offs`` (the ends of the groups): mat_a's rows (2-D by 3-D), mat_b's
    columns (3-D by 2-D), or the shared contraction dim (2-D by 2-D, one product per
    group). Rows or columns past ``offs[-1]`` are zeros (PyTorch leaves them unwritten)."""
    _check_grouped(mat_a, mat_b, offs, bias, out_dtype)
    if offs is None:
        return mat_a @ mat_b
    groups = _bounds(offs)
    if mat_a.dim() == 2 and mat_b.dim() == 3:
        parts = [mat_a[s:e] @ mat_b[g] for g, (s, e) in enumerate(groups)]
        rest = mat_a.shape[0] - groups[-1][1]
        parts.append(zeros(rest, mat_b.shape[2], dtype=mat_a.dtype, device=mat_a.device))
        return cat(parts, 0)
    if mat_a.dim() == 3:
        parts = [mat_a[g] @ mat_b[:, s:e] for g, (s, e) in enumerate(groups)]
        rest = mat_b.shape[1] - groups[-1][1]
        parts.append(zeros(mat_a.shape[1], rest, dtype=mat_a.dtype, device=mat_a.device))
        return cat(parts, 1)
    return stack([mat_a[:, s:e] @ mat_b[s:e] for s, e in groups])


def _offs(*ends):
    return np.array(ends, dtype=np.int32)


def _gmm_samples(make):
    f32 = dict(dtype=np.float32)
    yield S((make((2, 4, 8), **f32), make((2, 8, 4), **f32)))
    yield S((make((8, 8), **f32), make((2, 8, 4), **f32)), {"offs": _offs(3, 8)})
    yield S((make((2, 4, 8), **f32), make((8, 8), **f32)), {"offs": _offs(4, 8)})
    yield S((make((4, 12), **f32), make((12, 4), **f32)), {"offs": _offs(4, 8, 12)})


def _gmm_errors(make):
    f32 = dict(dtype=np.float32)
    a3, b3 = make((2, 4, 8), **f32), make((2, 8, 4), **f32)
    yield ErrorInput(S((make((8,), **f32), b3)), RuntimeError, "mat_a has to be 2 or 3d")
    yield ErrorInput(
        S((a3, make((2, 8, 4), dtype=np.float64))),
        RuntimeError,
        "Expected mat_b to be Float32, BFloat16 or Float16 matrix, got Double",
    )
    yield ErrorInput(S((a3, b3), {"offs": _offs(4, 8)}), RuntimeError, "Have to provide offsets")
    yield ErrorInput(
        S((make((8, 8), **f32), b3), {"offs": np.array([4, 8])}),
        RuntimeError,
        "Offsets have to be int32",
    )
    yield ErrorInput(S((a3, b3), {"bias": make((2, 4), **f32)}), RuntimeError, "Bias not")
    yield ErrorInput(
        S((a3, make((2, 8, 3), **f32))), RuntimeError, "strides should be multiple of 16 bytes"
    )
    yield ErrorInput(
        S((make((3, 4, 8), **f32), b3)), RuntimeError, "batched dimension has to match"
    )
    yield ErrorInput(
        S((a3, make((2, 4, 4), **f32))), RuntimeError, "contraction dimension of mat_a and"
    )


grouped_mm = composite(
    grouped_mm,
    samples=_gmm_samples,
    error_samples=_gmm_errors,
    api="nn.functional.grouped_mm",
    # PyTorch has float32, bfloat16 and float16 kernels only (float64 samples would be
    # refused), and float32 finite differences are too coarse: tests/test_nn_toplevel.py
    # compares gradients with PyTorch's
    test={"dtypes": ("float32",), "no_grad_test": True},
    autocast="keep",
)


# ------------------------------------------------------------------ scaled_mm
def _dims(t: Tensor) -> str:
    return "[" + ", ".join(str(v) for v in t.shape) + "]"


def _strides(t: Tensor) -> str:
    return "[" + ", ".join(str(v) for v in t.stride()) + "]"


def _first(v):
    return v[0] if isinstance(v, (list, tuple)) else v


def _scales_fit(mat_a, mat_b, sa, sb, recipe_a, recipe_b) -> bool:
    """PyTorch's accepted configurations: float8 operands, float32 scales, tensor-wise
    (one value each) or row-wise ((M, 1) and (1, N), contiguous)."""
    if mat_a.dtype not in dt.FLOAT8 or mat_b.dtype not in dt.FLOAT8:
        return False
    if sa.dtype != dt.float32 or sb.dtype != dt.float32:
        return False
    if recipe_a == ScalingType.TensorWise and recipe_b == ScalingType.TensorWise:
        return sa.numel() == 1 and sb.numel() == 1
    if recipe_a == ScalingType.RowWise and recipe_b == ScalingType.RowWise:
        shapes = tuple(sa.shape) == (mat_a.shape[0], 1) and tuple(sb.shape) == (1, mat_b.shape[1])
        return shapes and sa.is_contiguous() and sb.is_contiguous()
    return False


def scaled_mm(
    mat_a: Tensor,
    mat_b: Tensor,
    scale_a,
    scale_recipe_a,
    scale_b,
    scale_recipe_b,
    swizzle_a=None,
    swizzle_b=None,
    bias: Tensor | None = None,
    output_dtype=_BFLOAT16,
    contraction_dim=(),
    use_fast_accum: bool = False,
) -> Tensor:
    """``(mat_a @ mat_b) * scale_a * scale_b (+ bias)`` of float8 matrices, accumulated in
    float32 and cast to ``output_dtype``: scales per tensor or per row of mat_a and column of
    mat_b."""
    for name, t in (("mat_a", mat_a), ("mat_b", mat_b)):
        if t.dim() != 2:
            raise ValueError(f"{name} must be a matrix")
    sa, sb = _first(scale_a), _first(scale_b)
    fp8 = mat_a.dtype in dt.FLOAT8 and mat_b.dtype in dt.FLOAT8
    if fp8 and ScalingType.RowWise in (_first(scale_recipe_a), _first(scale_recipe_b)):
        for name, scale, want in (
            ("scale_a", sa, [mat_a.shape[0], 1]),
            ("scale_b", sb, [1, mat_b.shape[1]]),
        ):
            if list(scale.shape) != want:
                raise ValueError(f"{name} must have shape {want}, got [{list(scale.shape)}]")
    if not _scales_fit(mat_a, mat_b, sa, sb, _first(scale_recipe_a), _first(scale_recipe_b)):
        raise ValueError(
            "Invalid scaling configuration.\n"
            "- For TensorWise scaling, a and b should be float8, scales should be float and "
            "singletons.\n"
            "- For RowWise scaling, a and b should be float8, scales should be float, scale_a "
            f"should be ({mat_a.shape[0]}, 1) and scale_b should be (1, {mat_b.shape[1]}), "
            "and both should be contiguous.\n"
            f"Got mat_a.dtype()={mat_a.dtype.scalar_name}, "
            f"scale_a.dtype()={sa.dtype.scalar_name}, scale_a.size()={_dims(sa)}, "
            f"scale_a.stride()={_strides(sa)}, mat_b.dtype()={mat_b.dtype.scalar_name}, "
            f"scale_b.dtype()={sb.dtype.scalar_name}, scale_b.size()={_dims(sb)} and "
            f"scale_b.stride()={_strides(sb)}"
        )
    out = (mat_a.to(dt.float32) @ mat_b.to(dt.float32)) * sa.reshape(sa.shape or (1,)) * sb
    if bias is not None:
        out = out + bias.to(dt.float32)
    target = dt.bfloat16 if output_dtype is None or output_dtype == _BFLOAT16 else output_dtype
    return out.to(target)


def scaled_grouped_mm(
    mat_a: Tensor,
    mat_b: Tensor,
    scale_a,
    scale_recipe_a,
    scale_b,
    scale_recipe_b,
    swizzle_a=None,
    swizzle_b=None,
    bias: Tensor | None = None,
    offs: Tensor | None = None,
    output_dtype=_BFLOAT16,
    contraction_dim=(),
    use_fast_accum: bool = False,
) -> Tensor:
    """A grouped float8 matrix product. PyTorch has no CPU kernel for it (CUDA only), nor
    has numtorch a CUDA one."""
    _no_cpu_kernel("_scaled_grouped_mm_v2", mat_a)
    raise NotImplementedError("numtorch: scaled_grouped_mm has no kernel for this device")


__all__ = [
    "ScalingType",
    "SwizzleType",
    "grouped_mm",
    "scaled_grouped_mm",
    "scaled_mm",
]
