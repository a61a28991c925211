"""The ATen forms of nn functions in the ``torch`` namespace: ``convolution`` (every
convolution, by ATen's arguments), ``conv_tbc`` (time-batch-channel convolution, also
``F.conv_tbc``), ``grid_sampler``/``grid_sampler_2d``/``grid_sampler_3d`` (grid_sample with
integer modes), ``affine_grid_generator`` and ``embedding_bag`` (its four results).

Each is a composite over the ``nn.functional`` forms, so it differentiates, batches and
runs forward mode as they do.
"""

from __future__ import annotations

from .._core import dtype as dt
from .._core.op import NoKernel, composite
from .._core.tensor import Tensor
from .._opdb.samples import ErrorInput, S
from ..autograd.grad_mode import no_grad
from ..ops._families import COMPLEX, COMPLEX_TOO
from ..ops.complex import complex_p
from ..ops.creation import empty, tensor, zeros
from ._conv import conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d
from ._embedding import embedding_bag as _embedding_bag
from ._padding import pad as _pad
from ._resample import affine_grid, grid_sample

_CONVS = {1: conv1d, 2: conv2d, 3: conv3d}
_TRANSPOSED = {1: conv_transpose1d, 2: conv_transpose2d, 3: conv_transpose3d}


# ------------------------------------------------------------------ convolution
def _convolution(
    input, weight, bias, stride, padding, dilation, transposed, output_padding, groups
) -> Tensor:
    """ATen's convolution: the 1-, 2- or 3-D convolution (``transposed``: its transpose)
    of a batched ``input`` that ``weight``'s rank picks."""
    k = weight.dim()
    if input.dim() != k:
        raise RuntimeError(
            f"Expected {k}-dimensional input for {k}-dimensional weight {list(weight.shape)}, "
            f"but got {input.dim()}-dimensional input of size {list(input.shape)} instead"
        )
    d = k - 2
    _check_mixed(input, weight, d, transposed, dilation)
    if transposed:
        return _TRANSPOSED[d](
            input, weight, bias, stride, padding, output_padding, groups, dilation
        )
    return _CONVS[d](input, weight, bias, stride, padding, dilation, groups)


def _convolution_samples(make):
    yield S((make((2, 3, 5)), make((4, 3, 2)), make((4,)), [1], [0], [1], False, [0], 1))
    yield S(
        (make((1, 4, 5, 4)), make((2, 2, 3, 2)), None, [2, 1], [1, 0], [1, 2], False, [0, 0], 2)
    )
    yield S((make((1, 3, 5)), make((3, 2, 2)), make((2,)), [2], [1], [1], True, [1], 1))
    yield S(
        (
            make((1, 2, 3, 3, 2)),
            make((2, 2, 2, 2, 1)),
            None,
            [1, 1, 1],
            [0, 1, 0],
            [1, 1, 1],
            False,
            [0, 0, 0],
            1,
        )
    )


def _convolution_errors(make):
    yield ErrorInput(
        S((make((3, 5)), make((2, 3, 2)), None, [1], [0], [1], False, [0], 1)),
        RuntimeError,
        r"Expected 3-dimensional input for 3-dimensional weight \[2, 3, 2\], but got "
        r"2-dimensional input of size \[3, 5\] instead",
    )


def _check_mixed(input: Tensor, weight: Tensor, d: int, transposed: bool, dilation) -> None:
    """ATen's CPU convolution kernels: none for a bool or complex input (F.conv* computes
    complex ones from real parts, ATen's does not; a dilated one is slow_conv_dilated's),
    and a weight of the input's dtype."""
    if input.dtype == dt.bool_ or input.dtype.is_complex:
        if transposed:
            kernel = "slow_conv_transpose3d_out_cpu" if d == 3 else "slow_conv_transpose2d_out_cpu"
        elif any(v != 1 for v in dilation):
            kernel = "slow_conv_dilated<>"
        else:
            kernel = "compute_columns3d" if d == 3 else "slow_conv2d_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype.scalar_name}'")
    if input.dtype != weight.dtype:
        raise RuntimeError(
            f"expected scalar type {input.dtype.scalar_name} but found {weight.dtype.scalar_name}"
        )


convolution = composite(
    _convolution,
    name="torch_convolution",
    api="convolution",
    oracle="convolution",
    samples=_convolution_samples,
    error_samples=_convolution_errors,
    grad_args=(0, 1, 2),
    autocast="keep",  # (aten::convolution is in no CPU list: the conv ops below it are)
)


# ------------------------------------------------------------------ conv_tbc
def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """A 1-D convolution of a (time, batch, in_channels) ``input`` with a (kernel_width,
    in_channels, out_channels) ``weight``, zero-padded by ``pad`` on both ends of time:
    out[t] = bias + sum_k input[t + k - pad] @ weight[k]."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError(
            "Weight tensor must have 3 dims: kernel_width, in_channels, out_channels."
        )
    if bias.dim() != 1:
        raise RuntimeError("Bias tensor must have 1 dim: out_channels.")
    if bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if input.dtype != weight.dtype:
        raise RuntimeError(
            "self and mat2 must have the same dtype, but got "
            f"{input.dtype.scalar_name} and {weight.dtype.scalar_name}"
        )
    width = weight.shape[0]
    steps = input.shape[0] + 2 * pad - width + 1
    if steps < 0:
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {steps}: "
            f"[{steps}, {input.shape[1]}, {weight.shape[2]}]"
        )
    x = _pad(input, (0, 0, 0, 0, pad, pad)) if pad > 0 else input
    if pad < 0:
        x = x[-pad : x.shape[0] + pad]
    out = bias.expand(steps, input.shape[1], weight.shape[2])
    for k in range(width):
        out = out + x[k : k + steps] @ weight[k]
    return out


def _tbc_samples(make):
    yield S((make((5, 2, 3)), make((3, 3, 4)), make((4,))))
    yield S((make((5, 2, 3)), make((3, 3, 4)), make((4,)), 1))
    yield S((make((4, 1, 2)), make((1, 2, 3)), make((3,)), 2))
    yield S((make((2, 3, 2)), make((2, 2, 2)), make((2,))), name="one step")


def _tbc_errors(make):
    x, w, b = make((5, 2, 3)), make((3, 3, 4)), make((4,))
    yield ErrorInput(S((x[0], w, b)), RuntimeError, "Input must have 3 dims: time, batch")
    yield ErrorInput(S((x, w[0], b)), RuntimeError, "Weight tensor must have 3 dims")
    yield ErrorInput(S((x, w, b[:2])), RuntimeError, "Bias size must equal dim 2 in the weight")
    yield ErrorInput(S((x, w[:, :2], b)), RuntimeError, r"Input dim 2 \(input channels\) is not")
    yield ErrorInput(
        S((x[:1], w, b)),
        RuntimeError,
        r"Trying to create tensor with negative dimension -1: \[-1, 2, 4\]",
    )


conv_tbc = composite(
    conv_tbc,
    samples=_tbc_samples,
    error_samples=_tbc_errors,
    test={"dtypes": ("float32", "float64", "int64", *COMPLEX)},
    complex_grad=False,
    autocast="lower",
)


# ------------------------------------------------------------------ grid_sampler
_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def _sampler(name: str, rank: int | None):
    def sampler(input, grid, interpolation_mode: int, padding_mode: int, align_corners: bool):
        if rank is not None and (input.dim() != rank or grid.dim() != rank):
            raise RuntimeError(
                f"grid_sampler(): expected {rank}D input and grid with same number of "
                f"dimensions, but got input with sizes {list(input.shape)} and grid with "
                f"sizes {list(grid.shape)}"
            )
        if interpolation_mode == 2 and input.dim() != 4:
            raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
        return grid_sample(
            input, grid, _MODES[interpolation_mode], _PADDINGS[padding_mode], align_corners
        )

    sampler.__name__ = sampler.__qualname__ = name
    sampler.__doc__ = (
        f"``torch.{name}``: grid_sample with ATen's integer interpolation (0 bilinear, 1 "
        "nearest, 2 bicubic) and padding (0 zeros, 1 border, 2 reflection) modes."
    )
    return sampler


def _grid_samples(rank):
    def samples(make):
        if rank in (None, 4):
            x, g = make((1, 2, 4, 4)), make((1, 3, 3, 2), -1.1, 1.1)
            yield S((x, g, 0, 0, False))
            yield S((x, g, 0, 1, True))
            yield S((x, g, 2, 2, False))
        if rank in (None, 5):
            x, g = make((1, 2, 3, 3, 3)), make((1, 2, 2, 2, 3), -1.1, 1.1)
            yield S((x, g, 0, 2, True))
            yield S((x, g, 0, 0, False))

    return samples


def _grid_errors(rank):
    def errors(make):
        x4, g4 = make((1, 2, 4, 4)), make((1, 3, 3, 2))
        x5, g5 = make((1, 2, 3, 3, 3)), make((1, 2, 2, 2, 3))
        if rank == 4:
            yield ErrorInput(S((x5, g5, 0, 0, False)), RuntimeError, "expected 4D input and grid")
        if rank == 5:
            yield ErrorInput(S((x4, g4, 0, 0, False)), RuntimeError, "expected 5D input and grid")
        if rank != 4:
            yield ErrorInput(
                S((x5, g5, 2, 0, False)), RuntimeError, "bicubic interpolation only supports 4D"
            )

    return errors


def _grid_no_kernel(kernel: str) -> NoKernel:
    return NoKernel(
        "bic",
        lambda ins, attrs: kernel if ins[0].dim() == 4 else "grid_sampler3d_cpu",
        inputs=(0,),
    )


grid_sampler, grid_sampler_2d, grid_sampler_3d = (
    composite(
        _sampler(name, rank),
        samples=_grid_samples(rank),
        error_samples=_grid_errors(rank),
        no_kernel=_grid_no_kernel("grid_sampler_2d_cpu_kernel_impl"),
        autocast="fp32",
    )
    for name, rank in (("grid_sampler", None), ("grid_sampler_2d", 4), ("grid_sampler_3d", 5))
)


# ------------------------------------------------------------------ affine_grid_generator
def affine_grid_generator(theta: Tensor, size, align_corners: bool) -> Tensor:
    """``torch.affine_grid_generator``: the grid of F.affine_grid, with ATen's checks (no
    check of theta's shape or dtype but the base grid's: complex grids are made)."""
    size = list(size)
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    d = theta.dtype
    if d == dt.bool_:
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
    k = len(size) - 2
    base_shape = [size[0], *size[2:], k + 1]
    bad = next((v for v in base_shape if v < 0), None)
    if bad is not None:
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {base_shape}")
    if d.is_floating_point:
        return affine_grid(theta, size, align_corners)
    real = affine_grid(theta.real, size, align_corners) if d.is_complex else None
    if real is None:
        return affine_grid(theta, size, align_corners)
    imag = affine_grid(theta.imag, size, align_corners)
    return complex_p.fn(real, imag)


def _agg_samples(make):
    yield S((make((2, 2, 3)), [2, 3, 4, 5], False))
    yield S((make((1, 2, 3)), [1, 1, 3, 3], True))
    yield S((make((1, 3, 4)), [1, 2, 2, 3, 2], False))


def _agg_errors(make):
    yield ErrorInput(
        S((make((1, 2, 3)), [1, 2, 4], True)), RuntimeError, "AffineGridGenerator needs 4d"
    )


def _agg_complex32(inputs, args):
    """The base grid is a linspace in theta's dtype: its kernel refuses complex32 beyond one
    step."""
    return "linspace_cpu" if any(n > 1 for n in list(args["size"])[2:]) else True


affine_grid_generator = composite(
    affine_grid_generator,
    samples=_agg_samples,
    error_samples=_agg_errors,
    test=COMPLEX_TOO,
    complex_grad=False,
    complex32=_agg_complex32,
)


# ------------------------------------------------------------------ embedding_bag
_BAG_MODES = ("sum", "mean", "max")


def embedding_bag(
    weight: Tensor,
    indices: Tensor,
    offsets: Tensor,
    scale_grad_by_freq: bool = False,
    mode: int = 0,
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``torch.embedding_bag``: F.embedding_bag's output (``mode`` 0 sum, 1 mean, 2 max)
    with the bookkeeping PyTorch's CPU kernel returns: ``offset2bag`` (each index's bag;
    empty for a plain sum), ``bag_size`` (the indices per bag but padding, zeros for a sum)
    and ``max_indices`` (for max, the row each output element came from; else bag_size)."""
    out = _embedding_bag(
        indices,
        weight,
        offsets,
        None,
        2,
        scale_grad_by_freq,
        _BAG_MODES[mode],
        sparse,
        per_sample_weights,
        include_last_offset,
        padding_idx,
    )
    with no_grad():
        return (
            out,
            *_bag_bookkeeping(weight, indices, offsets, mode, include_last_offset, padding_idx),
        )


def _bag_bookkeeping(weight, indices, offsets, mode, include_last_offset, padding_idx):
    """PyTorch's CPU bookkeeping. A float32 sum without padding_idx takes its fast path,
    which leaves offset2bag empty; a sum's bag_size (and max_indices) are zeros, one per
    offset (one fewer with include_last_offset when the weight requires grad)."""
    n = indices.shape[0]
    all_offsets = [int(o) for o in offsets.tolist()]
    starts = all_offsets[:-1] if include_last_offset else all_offsets
    bags = len(starts)
    bounds = [(s, starts[i + 1] if i + 1 < bags else n) for i, s in enumerate(starts)]
    ids = indices.tolist()
    long = dict(dtype=indices.dtype, device=indices.device)
    if mode == 0 and padding_idx is None and weight.dtype == dt.float32:
        offset2bag = empty(0, **long)
    else:
        marks = all_offsets if mode == 0 else starts
        offset2bag = _long_tensor([_bag_of(i, marks) for i in range(n)], long)
    if mode == 0:
        size = len(all_offsets) - (1 if include_last_offset and weight.requires_grad else 0)
        bag_size = zeros(size, **long)
        return offset2bag, bag_size, bag_size.clone()
    counts = [sum(1 for i in ids[s:e] if i != padding_idx) for s, e in bounds]
    bag_size = _long_tensor(counts, long)
    if mode == 1:
        return offset2bag, bag_size, bag_size.clone()
    dim = weight.shape[1]
    rows = weight.detach()
    best = []
    for s, e in bounds:
        kept = [i for i in ids[s:e] if i != padding_idx]
        if not kept:
            best.append([0] * dim)
            continue
        arg = rows[_long_tensor(kept, long)].argmax(0).tolist()
        best.append([kept[a] for a in arg])
    return offset2bag, bag_size, _long_tensor(best, long).reshape(bags, dim)


def _bag_of(i: int, marks: list) -> int:
    """The bag of index position i: the last mark at or before it (the first bag before
    any mark)."""
    return max(sum(1 for m in marks if m <= i) - 1, 0)


def _long_tensor(values, like: dict) -> Tensor:
    return tensor(values, **like)


__all__ = [
    "affine_grid_generator",
    "conv_tbc",
    "convolution",
    "embedding_bag",
    "grid_sampler",
    "grid_sampler_2d",
    "grid_sampler_3d",
]
