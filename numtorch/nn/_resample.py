"""Resampling: ``interpolate`` (and its deprecated ``upsample*`` aliases), ``grid_sample``,
``affine_grid``, ``pixel_shuffle`` and ``pixel_unshuffle``.

The public functions are composites; three primitives carry the data movement.
``interpolate`` is separable: each spatial dim is resampled on its own by
``_resample_axis``, whose table of source indices and weights per output position is
computed from the sizes alone (PyTorch's source-index rules; ``area`` and anti-aliased
modes are windows) and cached; its gradient is the same op with the transposed table, so
both directions are gathers and a weighted sum of a few taps (reflect/replicate/circular
padding uses it too).
``grid_sample`` gathers its taps from the flattened spatial planes with indices computed
from the grid (``_plane_gather``, one index shared by the channels; its gradient is
``_plane_scatter``, a bincount), so it is differentiable in the input and in the grid
(through the tap weights and the padding's coordinate maps).
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from collections.abc import Sequence

import numpy as np

from .._core import dtype as dt
from .._core.layout import contiguous
from .._core.meta import by_kernel
from .._core.no_kernel import empty_complex_runs, unless_empty
from .._core.op import LINEAR, ErrorInput, NoKernel, composite, defop
from .._core.pyargs import has, int_seq, judge
from .._core.tensor import Tensor
from .._opdb.samples import S
from ..ops._batching import along_dims, front, lshape, materialize
from ..ops._families import COMPLEX_TOO
from ..ops.comparison import where
from ..ops.creation import tensor
from ..ops.shape import stack as _stack

_MODES = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area")
_RANK = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
_CUBIC_A = -0.75  # PyTorch's bicubic interpolation constant


# ------------------------------------------------------------------ 1-D tables
def _area_scale(n_in: int, n_out: int, align_corners: bool, scale, ft):
    """PyTorch's area_pixel_compute_scale, in the compute dtype ``ft``."""
    if align_corners:
        return ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
    if scale is not None and scale > 0:
        return ft(1.0 / scale)
    return ft(n_in) / ft(n_out)


def _nearest_table(n_in: int, n_out: int, scale, exact: bool, shortcut: bool) -> np.ndarray:
    """Source index of each output position (PyTorch computes it in float32). PyTorch's 2-D
    nearest kernel copies equal sizes and halves indices of doubled sizes whatever the
    scale factor (``shortcut``); its 1-D and 3-D kernels always use the scale."""
    dst = np.arange(n_out)
    if shortcut and n_out == n_in:
        return dst
    if shortcut and n_out == 2 * n_in:
        return dst >> 1
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(n_in) / n_out
    src = (dst.astype(np.float32) + np.float32(0.5 if exact else 0)) * s
    return np.minimum(np.floor(src).astype(np.int64), n_in - 1)


def _cubic_weights(t):
    """The four cubic-convolution weights around fractional offsets ``t`` (an array, or a
    Tensor in grid_sample, where they carry the grid's gradient)."""
    a = _CUBIC_A

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _interp_table(mode, n_in, n_out, scale, align_corners, ft):
    """[(index, weight), ...] taps of linear or cubic interpolation along one dim."""
    s = _area_scale(n_in, n_out, align_corners, scale, ft)
    dst = np.arange(n_out, dtype=ft)
    src = s * dst if align_corners else s * (dst + ft(0.5)) - ft(0.5)
    cubic = mode == "bicubic"
    if not cubic and not align_corners:
        src = np.maximum(src, ft(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    lam = np.clip(src - i0.astype(ft), ft(0), ft(1)).astype(ft)
    if not cubic:
        i1 = i0 + (i0 < n_in - 1)
        return [(i0, (ft(1) - lam).astype(ft)), (i1, lam)]
    return [
        (np.clip(i0 - 1 + k, 0, n_in - 1), w.astype(ft)) for k, w in enumerate(_cubic_weights(lam))
    ]


def _windows(start: np.ndarray, end: np.ndarray):
    """(row, col) pairs of the windows [start, end) of each row, row-major."""
    counts = np.maximum(end - start, 0)
    rows = np.repeat(np.arange(len(start)), counts)
    offsets = np.arange(len(rows)) - np.repeat(np.cumsum(counts) - counts, counts)
    return rows, start[rows] + offsets


def _area_entries(n_in: int, n_out: int, ft):
    """Adaptive average pooling along one dim: each output averages its window."""
    i = np.arange(n_out)
    start = (i * n_in) // n_out
    end = -((-(i + 1) * n_in) // n_out)
    rows, cols = _windows(start, end)
    return rows, cols, (ft(1) / (end - start)[rows].astype(ft)).astype(ft)


def _aa_filter(mode: str, x: np.ndarray) -> np.ndarray:
    x = np.abs(x)
    if mode == "bilinear":
        return np.maximum(0.0, 1.0 - x)
    a = -0.5  # the anti-aliased bicubic filter uses Keys' a = -0.5
    return np.where(
        x < 1.0,
        ((a + 2) * x - (a + 3)) * x * x + 1,
        np.where(x < 2.0, (((x - 5) * x + 8) * x - 4) * a, 0.0),
    )


def _aa_entries(mode, n_in, n_out, scale, align_corners, ft):
    """Anti-aliased resampling along one dim: a filter stretched by the downscale factor,
    cut to the input and normalized per output."""
    s = float(_area_scale(n_in, n_out, align_corners, scale, ft))
    support = (2 if mode == "bilinear" else 4) * 0.5
    inv = 1.0
    if s >= 1.0:
        support, inv = support * s, 1.0 / s
    center = s * (np.arange(n_out) + 0.5)  # align_corners changes the scale only
    lo = np.maximum((center - support + 0.5).astype(np.int64), 0)
    hi = np.minimum((center + support + 0.5).astype(np.int64), n_in)
    rows, cols = _windows(lo, hi)
    w = _aa_filter(mode, (cols - center[rows] + 0.5) * inv)
    total = np.bincount(rows, weights=w, minlength=n_out)[rows]
    return rows, cols, (w / np.where(total == 0, 1.0, total)).astype(ft)


# ------------------------------------------------------------------ the 1-D resampling op
def _index_map(mode: str, n: int, lo: int, hi: int) -> np.ndarray:
    """The input position each output position of one padded dim reads."""
    if mode == "circular":  # negative pads crop first; positive ones wrap the cropped span
        start, m = max(-lo, 0), n + min(lo, 0) + min(hi, 0)
        return start + (np.arange(m + max(lo, 0) + max(hi, 0)) - max(lo, 0)) % max(m, 1)
    j = np.arange(n + lo + hi) - lo
    if mode == "replicate":
        return np.clip(j, 0, n - 1)
    period = 2 * (n - 1)  # reflect: mirror about the first and last elements
    j = np.abs(j) % max(period, 1)
    return np.where(j >= n, period - j, j)


def _entries(kind: tuple):
    """One 1-D resampling as (rows, cols, weights) of its sparse (out, in) matrix, from
    its hashable description; several entries of a row are summed in their order."""
    name, *p = kind
    if name in ("nearest", "pad"):  # (n_in, n_out, scale, exact, shortcut) | (mode, n, lo, hi)
        cols = _nearest_table(*p) if name == "nearest" else _index_map(*p)
        return np.arange(len(cols)), cols, np.ones(len(cols), np.float32)
    if name == "area":  # (n_in, n_out, dtype)
        return _area_entries(p[0], p[1], np.dtype(p[2]).type)
    if name == "aa":  # (mode, n_in, n_out, scale, align_corners, dtype)
        return _aa_entries(*p[:5], np.dtype(p[5]).type)
    mode, n_in, n_out, scale, align_corners, dtype = p  # "interp": linear or cubic taps
    taps = _interp_table(mode, n_in, n_out, scale, align_corners, np.dtype(dtype).type)
    rows = np.tile(np.arange(n_out), len(taps)).reshape(len(taps), n_out).T.reshape(-1)
    cols = np.stack([i for i, _ in taps], 1).reshape(-1)
    return rows, cols, np.stack([w for _, w in taps], 1).reshape(-1)


@functools.lru_cache(maxsize=512)
def _table(kind: tuple, transpose: bool):
    """The taps of each output row: (index (rows, T), weight (rows, T), unit-weight flags
    per tap). Rows with fewer taps than T read index 0 with weight 0."""
    rows, cols, w = _entries(kind)
    n_rows = _sizes_of(kind)[1 - transpose]
    if transpose:
        rows, cols = cols, rows
    if kind[0] != "interp" or transpose:
        # PyTorch's interpolation kernels read every tap, NaN and inf too, at weight 0
        keep = w != 0
        rows, cols, w = rows[keep], cols[keep], w[keep]
    order = np.argsort(rows, kind="stable")
    rows, cols, w = rows[order], cols[order], w[order]
    counts = np.bincount(rows, minlength=n_rows)
    taps = max(int(counts.max()) if n_rows else 0, 1)
    slot = np.arange(len(rows)) - np.repeat(np.cumsum(counts) - counts, counts)
    index = np.zeros((n_rows, taps), np.int64)
    weight = np.zeros((n_rows, taps), w.dtype)
    index[rows, slot], weight[rows, slot] = cols, w
    unit = tuple(bool((weight[:, t] == 1).all()) for t in range(taps))
    return index, weight, unit


def _sizes_of(kind: tuple) -> tuple[int, int]:
    """(input size, output size) of a resampling description."""
    name, *p = kind
    if name == "pad":
        mode, n, lo, hi = p
        return n, n + lo + hi
    if name in ("nearest", "area"):
        return p[0], p[1]
    return p[1], p[2]


def _resample_axis(xp, input, dim, kind, transpose=False):
    index, weight, unit = _table(kind, transpose)
    shape = (-1,) + (1,) * (input.ndim - 1 - dim)
    out = None
    for t in range(index.shape[1]):
        term = xp.take(input, xp.asarray(index[:, t]), axis=dim)
        if not unit[t]:
            term *= xp.asarray(weight[:, t].astype(input.dtype)).reshape(shape)
        out = term if out is None else xp.add(out, term, out=out)
    return out


resample_axis_p = defop(
    "_resample_axis",
    _resample_axis,
    nin=1,
    # a linear map along one dim; its gradient is the transposed map, folded as a gather too
    vjp=lambda g, dim, kind, transpose: resample_axis(g, dim, kind, not transpose),
    jvp=LINEAR,
    batch_rule=along_dims(),
    api="nn._resample.resample_axis",
    test={"no_oracle": True},  # internal: interpolate and pad check it against PyTorch
    samples=lambda make: [
        S((make((2, 3, 4)), 2, ("interp", "bicubic", 4, 6, None, False, str(make.dtype)))),
        S((make((5, 3)), 0, ("nearest", 3, 5, None, False, False), True)),
        S((make((2, 6, 2)), 1, ("area", 6, 4, str(make.dtype)))),
        S((make((3, 4)), 1, ("pad", "reflect", 3, 2, -1), True)),
    ],
    complex32=True,  # (circular pad runs complex32; reflect and replicate refuse first),
    meta=by_kernel,
)
resample_axis = resample_axis_p.fn


def _resample_dim(x: Tensor, d: int, n_out: int, mode: str, scale, align_corners, aa) -> Tensor:
    n_in = x.shape[d]
    dtype = "float64" if x.dtype.name == "float64" else "float32"
    if n_out == n_in and mode in ("linear", "bilinear", "trilinear"):
        return x  # PyTorch copies equal sizes whatever the scale factor
    if mode in ("nearest", "nearest-exact"):
        exact, shortcut = mode != "nearest", x.dim() == 4 and mode == "nearest"
        kind = ("nearest", n_in, n_out, scale, exact, shortcut)
    elif mode == "area":
        kind = ("area", n_in, n_out, dtype)
    elif aa:
        kind = ("aa", mode, n_in, n_out, scale, align_corners, dtype)
    else:
        kind = ("interp", mode, n_in, n_out, scale, align_corners, dtype)
    return resample_axis(x, d, kind)


def _sizes_text(sizes) -> str:
    names = ("D", "H", "W")[3 - len(sizes) :]
    return ", ".join(f"{n}: {s}" for n, s in zip(names, sizes))


def _plan(x: Tensor, size, scale_factor, mode, recompute_scale_factor):
    """Output sizes and the scales the kernels use (None: recomputed from the sizes)."""
    dim = x.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scales = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(x.shape[2:])} and output size of "
                    f"{size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "output size in (o1, o2, ...,oK) format."
                )
            if not all(isinstance(s, (int, np.integer)) for s in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    "Tuple[int, int, int], but got size with types "
                    f"{[type(s) for s in size]}"
                )
            out = [int(s) for s in size]
        else:
            out = [int(size)] * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(x.shape[2:])} and scale_factor "
                    f"of shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, "
                    "...,dK) format and scale_factor in (s1, s2, ...,sK) format."
                )
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
        out = [math.floor(n * s) for n, s in zip(x.shape[2:], scales)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor or mode == "area":
        scales = None
    return out, scales or [None] * dim


def _check_rank(x: Tensor, mode: str) -> None:
    rank, want = x.dim(), _RANK.get(mode)
    if mode in _MODES and rank in (3, 4, 5) and mode != "bicubic":
        if want is None or rank == want:
            return
        raise NotImplementedError(f"Got {rank}D input, but {mode} mode needs {want}D input")
    if mode == "bicubic" and rank == 4:
        return
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {rank}D) for the modes: "
        "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact "
        f"(got {mode})"
    )


def _check_dtype(x: Tensor, mode: str) -> None:
    """Integer, bool and complex inputs: PyTorch resamples uint8 with nearest modes only
    (here) and names the kernel that refuses the others."""
    if x.dtype.is_floating_point:
        return
    nearest = mode in ("nearest", "nearest-exact")
    if nearest and x.dtype.scalar_name == "Byte":
        return
    if x.dtype.scalar_name == "Byte" and mode in ("bilinear", "bicubic"):
        raise NotImplementedError(
            f"interpolate: uint8 input in mode '{mode}' (PyTorch's fixed-point kernel) is not "
            "supported by numtorch; convert to float first"
        )
    kernel = {
        "linear": "compute_indices_weights_linear",
        "trilinear": "compute_indices_weights_linear",
        "bilinear": "upsample_bilinear2d_channels_last",
        "bicubic": "compute_indices_weights_cubic",
        "area": "adaptive_avg_pool3d_cpu" if x.dim() == 5 else "adaptive_avg_pool2d",
    }.get(mode)
    if nearest:
        kernel = (
            "upsample_nearest2d_channels_last"
            if x.dim() == 4
            else "compute_indices_weights_nearest"
        )
    raise dt.not_implemented(kernel, x)


def _interp_samples(make):
    yield S((make((2, 3, 4)),), {"scale_factor": 1.5})
    yield S((make((1, 2, 3, 4)),), {"size": (5, 3), "mode": "nearest-exact"})
    yield S((make((1, 2, 2, 3, 2)),), {"scale_factor": (2, 1, 1.5)})
    yield S((make((2, 2, 5)),), {"size": 3, "mode": "linear", "align_corners": True})
    yield S((make((4, 2, 3)).transpose(1, 2, 0),), {"scale_factor": 1.7, "mode": "linear"})
    yield S((make((1, 2, 3, 4)),), {"size": (5, 3), "mode": "bilinear"})
    yield S(
        (make((1, 1, 3, 3)),),
        {"scale_factor": 0.6, "mode": "bilinear", "recompute_scale_factor": True},
    )
    yield S((make((1, 2, 3, 4)),), {"size": (5, 2), "mode": "bicubic", "align_corners": True})
    yield S((make((1, 2, 4, 3)),), {"scale_factor": (1.5, 0.8), "mode": "bicubic"})
    yield S((make((1, 1, 2, 3, 2)),), {"size": (3, 2, 4), "mode": "trilinear"})
    yield S((make((1, 2, 5, 4)),), {"size": (3, 3), "mode": "area"})
    yield S((make((1, 1, 5, 4)),), {"size": (2, 5), "mode": "bilinear", "antialias": True})
    yield S(
        (make((1, 1, 6, 4)),),
        {"scale_factor": 0.5, "mode": "bicubic", "align_corners": True, "antialias": True},
    )
    yield S((make((2, 2, 5)),), {"scale_factor": 0.5, "mode": "area"})
    yield S((make((0, 2, 3)),), {"size": 4, "mode": "linear"}, name="empty batch")


def _interp_errors(make):
    x3, x4 = make((1, 2, 3)), make((1, 2, 3, 3))
    yield ErrorInput(
        S((x3,), {"size": 2, "scale_factor": 2.0}),
        ValueError,
        "only one of size or scale_factor should be defined",
    )
    yield ErrorInput(
        S(
            (x3,),
        ),
        ValueError,
        "either size or scale_factor should be defined",
    )
    yield ErrorInput(
        S((x3,), {"size": 4, "mode": "bilinear"}),
        NotImplementedError,
        "Got 3D input, but bilinear mode needs 4D input",
    )
    yield ErrorInput(
        S((x4,), {"size": 4, "align_corners": True}),
        ValueError,
        "align_corners option can only be set with the interpolating modes",
    )
    yield ErrorInput(
        S((x4,), {"size": (4,)}),
        ValueError,
        "Input and output must have the same number of spatial dimensions",
    )
    yield ErrorInput(
        S((x3,), {"size": 0, "mode": "linear"}),
        RuntimeError,
        r"Input and output sizes should be greater than 0, but got input \(W: 3\) and output "
        r"\(W: 0\)",
    )
    yield ErrorInput(
        S((x3,), {"size": 4, "mode": "linear", "antialias": True}),
        ValueError,
        "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes",
    )
    yield ErrorInput(
        S((make((2, 3)),), {"size": 4}),
        NotImplementedError,
        r"Input Error: Only 3D, 4D and 5D input Tensors supported \(got 2D\)",
    )


@composite(
    samples=_interp_samples,
    error_samples=_interp_errors,
    api="nn.functional.interpolate",
    # (antialiased modes' complex32 kernel is compute_index_ranges_weights in PyTorch; ours
    # names upsample_bilinear2d_channels_last: not yet mirrored)
    test={"no_complex32": "antialiased modes' complex32 kernel names are not yet mirrored"},
)
def interpolate(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resamples the spatial dims of an (N, C, *spatial) tensor to ``size`` or by
    ``scale_factor`` with the interpolation ``mode``."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    if size is not None and not isinstance(size, (list, tuple, int, np.integer)):
        _refuse_size(input, size, mode, align_corners)
    out, scales = _plan(input, size, scale_factor, mode, recompute_scale_factor)
    if antialias and not (mode in ("bilinear", "bicubic") and input.dim() == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and "
            "requires a 4-D tensor as input"
        )
    _check_rank(input, mode)
    _check_dtype(input, mode)
    spatial = list(input.shape[2:])
    if mode != "area":
        if min(spatial) <= 0 or min(out) <= 0:
            raise RuntimeError(
                "Input and output sizes should be greater than 0, but got input "
                f"({_sizes_text(spatial)}){' and' if len(out) == 1 else ''} output "
                f"({_sizes_text(out)})"
            )
        if input.shape[1] == 0:
            raise RuntimeError(
                f"Non-empty {input.dim()}D data tensor expected but got a tensor with sizes "
                f"{list(input.shape)}"
            )
    x = input
    for i, (n_out, s) in enumerate(zip(out, scales)):
        x = _resample_dim(x, 2 + i, n_out, mode, s, align_corners, antialias)
    return input.clone() if x is input else x


def _refuse_size(input: Tensor, size, mode: str, align_corners) -> None:
    """PyTorch's error for a lone size that is not an int: its interpolate hands the size,
    once per spatial dim, to the kernel of ``mode``, whose parser refuses it."""
    n = input.dim() - 2
    out = [size] * n
    kernel = {
        "nearest": (f"_nn.upsample_nearest{n}d", (input, out, None)),
        "nearest-exact": (f"_nn._upsample_nearest_exact{n}d", (input, out, None)),
        "area": (
            "torch.adaptive_avg_pool1d" if n == 1 else f"_nn.adaptive_avg_pool{n}d",
            (input, out),
        ),
    }
    linear = {1: "linear1d", 2: "bilinear2d", 3: "trilinear3d"}.get(n)
    name = f"_nn.upsample_{'bicubic2d' if mode == 'bicubic' else linear}"
    key, args = kernel.get(mode, (name, (input, out, align_corners, None)))
    if has(key):
        judge(key, args, {})


def _deprecated(name: str) -> None:
    warnings.warn(
        f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=3,
    )


def _alias_samples(make):
    yield S((make((1, 2, 3, 4)),), {"size": (5, 3)})
    yield S((make((1, 2, 3, 2)),), {"scale_factor": 2})


@composite(samples=_alias_samples, api="nn.functional.upsample")
def upsample(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """Deprecated alias of ``interpolate``."""
    _deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


@composite(samples=_alias_samples, api="nn.functional.upsample_nearest")
def upsample_nearest(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
) -> Tensor:
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    _deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


@composite(samples=_alias_samples, api="nn.functional.upsample_bilinear")
def upsample_bilinear(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
) -> Tensor:
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    _deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ------------------------------------------------------------------ plane gather / scatter
# grid_sample's taps: per sample n, the same positions of every channel plane. The index
# (N, L) is shared by the C planes, so neither op expands it over channels.
def _plane_gather(xp, input, index):
    return xp.take_along_axis(input, index[:, None, :], axis=2)


def _plane_scatter(xp, src, index, size):
    n, c, length = src.shape
    planes = xp.arange(n * c).reshape(n, c, 1) * size
    rows = (planes + index[:, None, :]).reshape(-1)
    out = xp.bincount(rows, weights=src.reshape(-1), minlength=n * c * size)
    return out.astype(src.dtype).reshape(n, c, size)


def _fold_n(vmap, x, bx, index, bi):
    """Both batch-first with the batch folded into N (an unbatched operand expanded)."""
    x, index = materialize(vmap, x, bx), materialize(vmap, index, bi)
    b, n = index.shape[:2]
    return x.reshape(b * n, *x.shape[2:]), index.reshape(b * n, index.shape[-1])


def _fold_c(x, bx):
    """Batched planes (B, N, C, P) as (N, B * C, P)."""
    x = front(x, bx).movedim(0, 1)
    n, b, c, p = x.shape
    return x.reshape(n, b * c, p)


def _plane_gather_rule(vmap, args, bdims, attrs):
    (x, index), (bx, bi) = args, bdims
    b, n, c = vmap.size, lshape(index, bi)[0], lshape(x, bx)[1]
    if bi is None:  # one index for every batch element: the batch joins the channels
        out = plane_gather(_fold_c(x, bx), index)
        return out.reshape(n, b, c, out.shape[-1]), 1
    if bx is None:  # one set of planes: the batch joins the positions
        i = front(index, bi).movedim(0, 1)
        length = i.shape[-1]
        out = plane_gather(x, i.reshape(n, b * length))
        return out.reshape(n, c, b, length), 2
    xf, i = _fold_n(vmap, x, bx, index, bi)
    out = plane_gather(xf, i)
    return out.reshape(b, n, c, out.shape[-1]), 0


def _plane_scatter_rule(vmap, args, bdims, attrs):
    (src, index), (bs, bi) = args, bdims
    b, n, c, size = vmap.size, lshape(index, bi)[0], lshape(src, bs)[1], attrs["size"]
    if bi is None:
        out = plane_scatter(_fold_c(src, bs), index, size)
        return out.reshape(n, b, c, size), 1
    # a batched index: each batch element scatters on its own planes (the result holds
    # B copies anyway, so an unbatched src is expanded here)
    sf, i = _fold_n(vmap, src, bs, index, bi)
    return plane_scatter(sf, i, size).reshape(b, n, c, size), 0


def _plane_samples(make):
    yield S((make((2, 3, 5)), make.index((2, 4), 5)))
    yield S((make((1, 2, 3)), make.index((1, 6), 3)))
    yield S((make((0, 2, 3)), make.index((0, 4), 3)))


plane_gather_p = defop(
    "_plane_gather",
    _plane_gather,
    vjp=(lambda g, input_shape, index: plane_scatter(g, index, input_shape[2]), None),
    jvp=LINEAR,
    batch_rule=_plane_gather_rule,
    api="nn._resample.plane_gather",
    test={"no_oracle": True},  # internal to grid_sample, which is checked against PyTorch
    samples=_plane_samples,
    meta=by_kernel,
)
plane_gather = plane_gather_p.fn
plane_scatter_p = defop(
    "_plane_scatter",
    _plane_scatter,
    nin=2,
    vjp=(lambda g, index: plane_gather(g, index), None),
    jvp=LINEAR,
    batch_rule=_plane_scatter_rule,
    api="nn._resample.plane_scatter",
    test={"no_oracle": True},
    samples=lambda make: [
        S((make((2, 3, 4)), make.index((2, 4), 5), 5)),
        S((make((1, 2, 6)), make.index((1, 6), 3), 3)),
        S((make((0, 2, 4)), make.index((0, 4), 3), 3)),
    ],
)
plane_scatter = plane_scatter_p.fn


# ------------------------------------------------------------------ grid_sample / affine_grid
def _unnormalize(c: Tensor, size: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (c + 1) * ((size - 1) / 2)
    return ((c + 1) * size - 1) / 2


def _reflect(c: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """Fold coordinates into [low, high] by reflecting at both ends."""
    if twice_low == twice_high:
        return c * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    c = (c - low).abs()
    flips = (c / span).floor()
    extra = c - flips * span
    return where(flips.remainder(2) == 0, extra + low, span - extra + low)


def _pad_coords(c: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    """PyTorch's compute_coordinates: source coordinates under the padding mode."""
    if padding_mode == "zeros":
        return c
    if padding_mode == "reflection":
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
    return c.clamp(0, size - 1)


def _taps(c: Tensor, size: int, mode: str, padding_mode: str, align_corners: bool):
    """[(index, weight or None), ...] along one spatial dim; indices may be out of range."""
    if mode == "bicubic":
        f = c.floor()
        t = c - f
        out = []
        for k, w in enumerate(_cubic_weights(t)):
            tap = _pad_coords(f + (k - 1), size, padding_mode, align_corners)
            out.append((tap, w))
        return out
    c = _pad_coords(c, size, padding_mode, align_corners)
    if mode == "nearest":
        # a weight of one that keeps the grid in the graph: its gradient is zero, as in PyTorch
        pos = c.round()
        return [(pos, pos * 0 + 1)]
    f = c.floor()
    return [(f, f + 1 - c), (f + 1, c - f)]


def _check_grid(
    input: Tensor, grid: Tensor, mode: str, padding_mode: str, dtypes: bool = True
) -> None:
    """PyTorch's checks in its order: the arguments, the shapes, (the kernel's dtypes: the
    op's no_kernel, which runs this without ``dtypes`` first), then grid's dtype."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    k = input.dim() - 2
    if grid.shape[-1] != k:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {k} in last dimension, but got grid "
            f"with sizes {list(grid.shape)}"
        )
    if input.dim() not in (4, 5) or grid.dim() != input.dim():
        raise RuntimeError(
            f"grid_sampler(): expected {input.dim()}D input and grid with same number of "
            f"dimensions, but got input with sizes {list(input.shape)} and grid with sizes "
            f"{list(grid.shape)}"
        )
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    for d in range(2, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but input "
                f"has sizes {list(input.shape)} with dimension {d} being empty"
            )
    if mode == "bicubic" and input.dim() != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if dtypes and input.dtype != grid.dtype:
        raise RuntimeError(
            f"expected scalar type {input.dtype.scalar_name} but found {grid.dtype.scalar_name}"
        )


def _grid_samples(make):
    def grid(shape, low=-1.15, high=1.15):
        # coordinates on a fine lattice offset from pixel centres and borders, where the
        # sampled function is smooth (finite differences need that)
        g = make(shape, low, high)
        return (np.round(g * 24) / 24 + 1 / 96).astype(g.dtype)

    x = make((2, 2, 3, 4))
    yield S((x, grid((2, 3, 2, 2))), {"align_corners": False})
    yield S((x, grid((2, 2, 3, 2))), {"padding_mode": "border", "align_corners": True})
    yield S((x, grid((2, 2, 2, 2), -2.2, 2.2)), {"padding_mode": "reflection"})
    yield S(
        (make((1, 3, 4, 3)), grid((1, 2, 2, 2), -1.8, 1.8)),
        {"padding_mode": "reflection", "align_corners": True},
    )
    yield S((x, grid((2, 2, 2, 2))), {"mode": "nearest", "align_corners": False})
    yield S(
        (make((1, 3, 3, 2)).transpose(0, 3, 1, 2), grid((1, 2, 2, 2))),
        {"mode": "bicubic", "align_corners": False},
    )
    yield S(
        (make((1, 1, 4, 3)), grid((1, 2, 1, 2), -1.6, 1.6)),
        {"mode": "bicubic", "padding_mode": "reflection", "align_corners": True},
    )
    yield S((make((1, 2, 2, 3, 2)), grid((1, 2, 1, 2, 3))), {"align_corners": False})
    yield S((make((0, 2, 3, 3)), grid((0, 2, 2, 2))), {"align_corners": False}, name="empty")


def _grid_errors(make):
    x = make((1, 2, 3, 3))
    yield ErrorInput(
        S((x, make((2, 3, 3, 2))), {"align_corners": False}),
        RuntimeError,
        r"grid_sampler\(\): expected grid and input to have same batch size, but got input "
        r"with sizes \[1, 2, 3, 3\] and grid with sizes \[2, 3, 3, 2\]",
    )
    yield ErrorInput(
        S((x, make((1, 3, 3, 3))), {"align_corners": False}),
        RuntimeError,
        r"expected grid to have size 2 in last dimension, but got grid with sizes \[1, 3, 3, 3\]",
    )
    yield ErrorInput(
        S((make((1, 2, 3, 3, 3)), make((1, 3, 3, 3, 3))), {"mode": "bicubic"}),
        RuntimeError,
        "bicubic interpolation only supports 4D input",
    )
    yield ErrorInput(
        S((x, make((1, 3, 3, 2))), {"mode": "linear"}),
        ValueError,
        "expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: 'linear'",
    )
    yield ErrorInput(
        S((x, make((1, 3, 3, 2))), {"padding_mode": "wrap"}),
        ValueError,
        "expected padding_mode to be 'zeros', 'border', or 'reflection', but got: 'wrap'",
    )
    yield ErrorInput(
        S((make((1, 2, 0, 3)), make((1, 3, 3, 2))), {}),
        RuntimeError,
        r"expected input to have non-empty spatial dimensions, but input has sizes "
        r"\[1, 2, 0, 3\] with dimension 2 being empty",
    )


@composite(
    samples=_grid_samples,
    error_samples=_grid_errors,
    api="nn.functional.grid_sample",
    no_kernel=NoKernel(
        "bic",
        lambda ins, attrs: (
            "grid_sampler_2d_cpu_kernel_impl" if ins[0].dim() == 4 else "grid_sampler3d_cpu"
        ),
        inputs=(0,),
        first=lambda ins, a: _check_grid(ins[0], ins[1], a["mode"], a["padding_mode"], False),
        when=lambda ins, attrs: ins[0].dim() != 4 or ins[0].numel(),  # (an empty 2-d: none)
    ),
    autocast="fp32",
)
@empty_complex_runs
def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Samples ``input`` (N, C, *spatial) at the normalized coordinates of ``grid``
    (N, *out, k), the last grid entry indexing the first spatial dim."""
    _check_grid(input, grid, mode, padding_mode)
    align_corners = bool(align_corners)
    n, c, sizes = input.shape[0], input.shape[1], list(input.shape[2:])
    k, out = len(sizes), list(grid.shape[1:-1])
    flat = input.reshape(n, c, math.prod(sizes))
    g = grid.reshape(n, math.prod(out), k)
    per_dim = []
    for d, size in enumerate(sizes):
        coord = _unnormalize(g[..., k - 1 - d], size, align_corners)
        per_dim.append(_taps(coord, size, mode, padding_mode, align_corners))
    strides = [math.prod(sizes[d + 1 :]) for d in range(k)]
    indices, weights, insides = [], [], []
    for combo in itertools.product(*per_dim):
        index, weight, inside = 0, None, None
        for (pos, w), size, stride in zip(combo, sizes, strides):
            ok = (pos >= 0) & (pos <= size - 1)
            inside = ok if inside is None else inside & ok
            index = index + pos.clamp(0, size - 1) * stride
            weight = w if weight is None else weight * w
        indices.append(index)
        weights.append(weight)
        insides.append(inside)
    taps, length = len(indices), g.shape[1]
    index = _stack(indices, 1).reshape(n, taps * length).long()
    values = plane_gather(flat, index).reshape(n, c, taps, length)
    # a tap outside the input is not read, as in PyTorch: an inf there gives no NaN
    values = where(_stack(insides, 1).unsqueeze(1), values, 0.0)
    result = (values * _stack(weights, 1).unsqueeze(1)).sum(2)
    return result.reshape(n, c, *out)


def _affine_samples(make):
    yield S((make((2, 2, 3)), (2, 3, 4, 5)), {"align_corners": False})
    yield S((make((1, 2, 3)), [1, 1, 3, 1]), {"align_corners": True})
    yield S((make((2, 3, 4)), (2, 1, 2, 3, 2)), {"align_corners": False})
    yield S((make((4, 3, 1)).transpose(2, 0, 1)[:, :2], (1, 2, 2, 3)), {"align_corners": True})


def _affine_errors(make):
    yield ErrorInput(
        S((make((2, 2, 3)), (2, 3, 4, 5, 5)), {"align_corners": False}),
        ValueError,
        r"Expected a batch of 3D affine matrices of shape Nx3x4 for size \(2, 3, 4, 5, 5\)",
    )
    yield ErrorInput(
        S((make((2, 2, 3)), (2, 3, 5)), {"align_corners": False}),
        NotImplementedError,
        "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
        r"respectively. Got size \(2, 3, 5\).",
    )
    yield ErrorInput(
        S((make((2, 2, 3)), (2, 3, 0, 5)), {"align_corners": False}),
        ValueError,
        r"Expected non-zero, positive output size. Got \(2, 3, 0, 5\)",
    )


def _base_coords(size: int, align_corners: bool) -> np.ndarray:
    if size <= 1:
        return np.zeros(max(size, 0))
    steps = np.linspace(-1.0, 1.0, size)
    return steps if align_corners else steps * (size - 1) / size


@composite(samples=_affine_samples, error_samples=_affine_errors, api="nn.functional.affine_grid")
def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """The sampling grid (N, *spatial, k) of the affine maps ``theta`` (N, k, k + 1) for an
    output of shape ``size`` (N, C, *spatial)."""
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) in (4, 5):
        k = len(size) - 2
        if theta.dim() != 3 or theta.shape[-2] != k or theta.shape[-1] != k + 1:
            raise ValueError(
                f"Expected a batch of {k}D affine matrices of shape Nx{k}x{k + 1} for size "
                f"{tuple(size)}. Got {theta.shape}."
            )
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {tuple(size)}."
        )
    spatial = size[2:]
    if not (align_corners and min(spatial) == 1) and min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {tuple(size)}")
    if not int_seq(size):  # PyTorch's affine_grid calls affine_grid_generator here
        judge("torch.affine_grid_generator", (theta, size, bool(align_corners)), {})
        size = [int(s) for s in size]
        spatial = size[2:]
    axes = [_base_coords(s, bool(align_corners)) for s in reversed(spatial)]  # x, y(, z)
    mesh = np.meshgrid(*axes[::-1], indexing="ij")[::-1]
    base = np.stack([*mesh, np.ones(spatial)], -1).reshape(-1, k + 1)
    base = tensor(base.astype(theta.dtype.np), device=theta.device)
    out = base @ theta.transpose(1, 2)
    return out.reshape(size[0], *spatial, k)


# ------------------------------------------------------------------ pixel shuffle
# No 0-size samples: PyTorch's pixel_unshuffle returns an empty input unchanged ((0, 1, 2, 4)
# stays (0, 1, 2, 4) instead of (0, 4, 1, 2)), which also breaks pixel_shuffle's backward.
def _shuffle_samples(make):
    yield S((make((2, 8, 2, 3)), 2))
    yield S((make((9, 1, 2)), 3))
    yield S((make((2, 1, 4, 2, 1)), 1))
    yield S((make((2, 3, 4, 2)).transpose(0, 1, 3, 2), 1))


def _unshuffle_samples(make):
    yield S((make((2, 2, 4, 6)), 2))
    yield S((make((1, 3, 3)), 3))
    yield S((make((2, 1, 1, 2, 4)), 2))


def _shuffle_errors(name: str, factor: str):
    def errors(make):
        yield ErrorInput(
            S((make((4, 3)), 2)),
            RuntimeError,
            rf"{name} expects input to have at least 3 dimensions, but got input with 2 "
            r"dimension\(s\)",
        )
        yield ErrorInput(
            S((make((4, 2, 2)), 0)),
            RuntimeError,
            f"{name} expects a positive {factor}, but got 0",
        )

    return errors


def _shuffle_factor(input: Tensor, r: int, name: str, what: str) -> int:
    """PyTorch's checks shared by pixel_shuffle and pixel_unshuffle; returns the factor."""
    if input.dim() < 3:
        raise RuntimeError(
            f"{name} expects input to have at least 3 dimensions, but got input with "
            f"{input.dim()} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {r}")
    return r


@composite(
    samples=_shuffle_samples,
    error_samples=_shuffle_errors("pixel_shuffle", "upscale_factor"),
    api="nn.functional.pixel_shuffle",
    layout=contiguous,
    test=COMPLEX_TOO,
    complex32="pixel_shuffle",  # (PyTorch's kernel that refuses ComplexHalf)
)
def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) to (*, C, H r, W r)."""
    r = _shuffle_factor(input, upscale_factor, "pixel_shuffle", "upscale_factor")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    b = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(b), b, b + 3, b + 1, b + 4, b + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


@composite(
    samples=_unshuffle_samples,
    error_samples=_shuffle_errors("pixel_unshuffle", "downscale_factor"),
    api="nn.functional.pixel_unshuffle",
    layout=contiguous,
    test=COMPLEX_TOO,
    complex32="pixel_unshuffle",  # (PyTorch's kernel)
)
def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) to (*, C r^2, H, W)."""
    r = _shuffle_factor(input, downscale_factor, "pixel_unshuffle", "downscale_factor")
    *lead, c, h, w = input.shape
    for name, n, d in (("height", h, -2), ("width", w, -1)):
        if n % r:
            raise RuntimeError(
                f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                f"input.size({d})={n} is not divisible by {r}"
            )
    b = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(b), b, b + 2, b + 4, b + 1, b + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


# ------------------------------------------------------------------ channel shuffle
def _channel_shuffle_samples(make):
    yield S((make((2, 6, 2, 3)), 2))
    yield S((make((2, 6, 3)), 3))
    yield S((make((6, 2, 2)), 2))  # dim 1 holds the channels even in 3-d
    yield S((make((1, 4, 2, 1, 2)), 4))
    yield S((make((0, 6, 2)), 3))
    yield S((make((2, 3, 4, 2)).transpose(0, 2, 1, 3), 2))


def _channel_shuffle_errors(make):
    yield ErrorInput(
        S((make((6, 2)), 2)),
        RuntimeError,
        r"channel_shuffle expects input with > 2 dims, but got input with sizes \[6, 2\]",
    )
    yield ErrorInput(
        S((make((1, 6, 2)), 0)),
        RuntimeError,
        "Number of groups to divide channels in must be positive. Value of groups:0",
    )
    yield ErrorInput(
        S((make((1, 6, 2)), 4)),
        RuntimeError,
        "Number of channels must be divisible by groups. Got 6 channels and 4 groups.",
    )
    yield ErrorInput(
        S((make((1, 6, 2)), 2.0)),
        TypeError,
        r"channel_shuffle\(\): argument 'groups' \(position 2\) must be int, not float",
    )


@composite(
    samples=_channel_shuffle_samples,
    error_samples=_channel_shuffle_errors,
    api="nn.functional.channel_shuffle",
    layout=contiguous,
    test=COMPLEX_TOO,
    complex32=unless_empty("channel_shuffle"),  # (PyTorch's kernel; none when empty)
)
def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Dim 1's C channels as (groups, C / groups) read out transposed: each group's k-th
    channel side by side."""
    if not isinstance(groups, (int, np.integer)) or isinstance(groups, bool):
        raise TypeError(
            "channel_shuffle(): argument 'groups' (position 2) must be int, not "
            f"{type(groups).__name__}"
        )
    if input.dim() <= 2:
        raise RuntimeError(
            "channel_shuffle expects input with > 2 dims, but got input with sizes "
            f"[{', '.join(map(str, input.shape))}]"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    x = input.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return x.reshape(n, c, *rest)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``channel_shuffle`` under ATen's name for its native kernel."""
    return channel_shuffle(input, groups)
