"""The ATen-level normalization and dropout functions of the ``torch`` namespace:
``native_batch_norm``, ``native_layer_norm``, ``native_group_norm`` (each returns its
output and the statistics PyTorch's backward saves), ``native_dropout`` (the output and the
keep mask), ``norm_except_dim`` (weight norm's norm), ``batch_norm_update_stats`` and the
distributed batch-norm pieces (``batch_norm_stats``, ``batch_norm_elemt``,
``batch_norm_gather_stats[_with_counts]``, ``batch_norm_backward_reduce``,
``batch_norm_backward_elemt``) and ``native_norm``.

They are composites over the ``nn.functional`` forms. As in PyTorch, the statistics a
``native_*`` function returns carry no gradient of their own. PyTorch's CPU build has no
kernel for ``native_norm`` and the distributed batch-norm pieces (they are CUDA kernels):
on a CPU tensor they raise its dispatcher error; on a CUDA tensor they compute.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtype as dt
from .._core.meta import by_kernel
from .._core.op import NoKernel, composite, defop
from .._core.tensor import Tensor
from .._opdb.samples import ErrorInput, S
from ..autograd.grad_mode import is_grad_enabled
from ..ops._batching import along_dims
from ..ops.creation import empty, ones_like
from ..ops.random import _bernoulli_draw, _real
from ._norm import (
    _BN_COMPLEX32,
    _BN_NO_KERNEL,
    _normalized_shape,
    _param_dtypes_first,
    _size,
    _write_running,
    batch_norm,
    group_norm,
    layer_norm,
)

_BACKENDS = (
    "Meta, BackendSelect, Python, FuncTorchDynamicLayerBackMode, Functionalize, Conjugate, "
    "Negative, ZeroTensor, ADInplaceOrView, AutogradOther, AutogradCPU, AutogradCUDA, "
    "AutogradHIP, AutogradXLA, AutogradMPS, AutogradIPU, AutogradXPU, AutogradHPU, "
    "AutogradVE, AutogradLazy, AutogradMTIA, AutogradMAIA, AutogradPrivateUse1, "
    "AutogradPrivateUse2, AutogradPrivateUse3, AutogradMeta, AutogradNestedTensor, Tracer, "
    "AutocastCPU, AutocastMTIA, AutocastMAIA, AutocastXPU, AutocastMPS, AutocastCUDA, "
    "FuncTorchBatched, BatchedNestedTensor, FuncTorchVmapMode, Batched, VmapMode, "
    "FuncTorchGradWrapper, PythonTLSSnapshot, FuncTorchDynamicLayerFrontMode, PreDispatch, "
    "PythonDispatcher"
)


def _no_cpu_kernel(aten: str, input: Tensor) -> None:
    """PyTorch's dispatcher error for an op with no CPU kernel."""
    if input.device.type == "cpu":
        raise NotImplementedError(
            f"Could not run 'aten::{aten}' with arguments from the 'CPU' backend. This could be "
            "because the operator doesn't exist for this backend, or was omitted during the "
            "selective/custom build process (if using custom build). If you are a Facebook "
            "employee using PyTorch on mobile, please visit https://fburl.com/ptmfixes for "
            f"possible resolutions. 'aten::{aten}' is only available for these backends: "
            f"[{_BACKENDS}]."
        )


def _norm_stats_kernel(xp, x, dims=(0,), eps=1e-5, keepdim=False):
    mean = x.mean(axis=dims, keepdims=True)
    d = x - mean
    var = (d * d).mean(axis=dims, keepdims=keepdim)
    with np.errstate(divide="ignore"):
        rstd = (1 / xp.sqrt(var + eps)).astype(x.dtype)
    return (mean if keepdim else mean.squeeze(axis=dims)), rstd


def _norm_stats_vjp(g, x, result, dims, keepdim):
    gmean, grstd = g
    mean, rstd = result
    if not keepdim:
        for d in sorted(dims):
            gmean, grstd, rstd = gmean.unsqueeze(d), grstd.unsqueeze(d), rstd.unsqueeze(d)
    n = math.prod(x.shape[d] for d in dims)
    centered = x - x.mean(dims, keepdim=True)
    return (gmean - rstd.pow(3) * grstd * centered) / n


def _norm_stats_jvp(t, x, result, dims, keepdim):
    mean, rstd = result
    tmean = t.mean(dims, keepdim=True)
    spread = ((x - x.mean(dims, keepdim=True)) * (t - tmean)).mean(dims, keepdim)
    return (tmean if keepdim else tmean.squeeze(dims)), -rstd.pow(3) * spread


def _norm_stats_samples(make):
    yield S((make((2, 3, 4)),), {"dims": (2,), "eps": 1e-5})
    yield S((make((2, 3, 4)),), {"dims": (0, 2), "eps": 1e-3, "keepdim": True})


# The statistics the native_* functions return: the mean and 1/sqrt(biased var + eps) over
# ``dims``, differentiable (native_group_norm's are; native_batch_norm's and
# native_layer_norm's are computed from the detached input).
_norm_stats_p = defop(
    "_norm_stats",
    _norm_stats_kernel,
    nin=1,
    nout=2,
    vjp=(_norm_stats_vjp,),
    jvp=_norm_stats_jvp,
    batch_rule=along_dims(names=("dims",)),
    samples=_norm_stats_samples,
    api="nn._aten_norm._norm_stats",
    test={"no_oracle": True},
    meta=by_kernel,
)
_norm_stats = _norm_stats_p.fn


def _stats(x: Tensor, dims: tuple, eps: float, keepdim: bool) -> tuple[Tensor, Tensor]:
    """The statistics of native_batch_norm and native_layer_norm, which (unlike
    native_group_norm's) have no derivative in PyTorch: no gradient, no tangent."""
    mean, rstd = _norm_stats(x.detach(), dims=dims, eps=eps, keepdim=keepdim)
    return mean, rstd


def _channel_dims(input: Tensor) -> tuple:
    return (0, *range(2, input.dim()))


# ------------------------------------------------------------------ native_batch_norm
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """batch_norm with ATen's argument order, returning ``(output, save_mean,
    save_invstd)``: the batch statistics when training, empty tensors otherwise."""
    if training:
        mean, invstd = _stats(input, _channel_dims(input), eps, False)
    out = batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        mean = empty(0, dtype=input.dtype, device=input.device)
        invstd = empty(0, dtype=input.dtype, device=input.device)
    return out, mean, invstd


def _nbn_samples(make):
    c = 3
    yield S((make((4, c)), make((c,)), make((c,)), None, None, True, 0.1, 1e-5))
    yield S((make((2, c, 5)), None, None, None, None, True, 0.2, 1e-3))
    yield S(
        (make((2, c, 3, 2)), make((c,)), None, make((c,)), make((c,), 0.5, 1.5), False, 0.1, 0.1)
    )
    yield S((make((2, c, 2, 2, 2)), None, make((c,)), None, None, True, 0.1, 1e-5))


native_batch_norm = composite(
    native_batch_norm,
    no_kernel=_BN_NO_KERNEL,
    complex32=_BN_COMPLEX32,
    # the statistics have no tangent in PyTorch, so finite differences of all three outputs
    # disagree: tests/test_nn_norm.py compares the gradients and tangents with PyTorch's
    test={"no_grad_test": True},
    samples=_nbn_samples,
    # no error samples: PyTorch's CPU kernel crashes (a segmentation fault) on evaluation
    # without running statistics, where numtorch raises F.batch_norm's error
    nout=3,
    grad_args=(0, 1, 2),
)


# ------------------------------------------------------------------ native_layer_norm
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """layer_norm returning ``(output, mean, rstd)``; the statistics keep the normalized
    dims as size 1."""
    out = layer_norm(input, normalized_shape, weight, bias, eps)
    k = len(_normalized_shape("layer_norm", normalized_shape))
    dims = tuple(range(input.dim() - k, input.dim()))
    mean, rstd = _stats(input, dims, eps, True)
    return out, mean, rstd


def _nln_samples(make):
    yield S((make((2, 3, 4)), [4], make((4,)), make((4,)), 1e-5))
    yield S((make((2, 3, 4)), (3, 4), None, None, 1e-3))
    yield S((make((5,)), [5], make((5,)), None, 0.1))
    yield S((make((0, 4)), [4], None, None, 1e-5))


def _nln_errors(make):
    yield ErrorInput(
        S((make((2, 3)), [4], None, None, 1e-5)),
        RuntimeError,
        r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\]",
    )


native_layer_norm = composite(
    native_layer_norm,
    no_kernel=NoKernel("bic", "LayerNormKernelImpl", inputs=(0,), first=_param_dtypes_first),
    # the statistics have no tangent in PyTorch, so finite differences of all three outputs
    # disagree: tests/test_nn_norm.py compares the gradients and tangents with PyTorch's
    test={"no_grad_test": True},
    samples=_nln_samples,
    error_samples=_nln_errors,
    nout=3,
    grad_args=(0, 2, 3),
)


# ------------------------------------------------------------------ native_group_norm


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """group_norm over an (N, C, *) input of N * C * HxW elements, returning ``(output,
    mean, rstd)`` with the statistics of shape (N, group)."""
    if input.numel() != N * C * HxW:
        raise RuntimeError(
            "Expected X.numel() == N * C * HxW to be true, but got false.  (Could this error "
            "message be improved?  If so, please report an enhancement request to PyTorch.)"
        )
    if C % group:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {_size(input.shape)} and num_groups={group}"
        )
    out = group_norm(input, group, weight, bias, eps) if N * HxW * C // group > 1 else None
    mean, rstd = _norm_stats(input.reshape(N, group, -1), dims=(2,), eps=eps)
    if out is None:  # one value per group: F.group_norm's check is not ATen's
        shape = (N, group, 1)
        out = (input.reshape(N, group, -1) - mean.detach().reshape(shape)) * rstd.detach().reshape(
            shape
        )
        out = out.reshape(input.shape)
    return out, mean, rstd


def _ngn_samples(make):
    yield S((make((2, 4, 3)), make((4,)), make((4,)), 2, 4, 3, 2, 1e-5))
    yield S((make((3, 6, 2, 2)), None, None, 3, 6, 4, 3, 1e-3))
    yield S((make((2, 3)), make((3,)), None, 2, 3, 1, 1, 0.1))


def _ngn_errors(make):
    yield ErrorInput(
        S((make((2, 4, 3)), None, None, 2, 4, 4, 2, 1e-5)),
        RuntimeError,
        r"Expected X.numel\(\) == N \* C \* HxW to be true",
    )
    yield ErrorInput(
        S((make((2, 3, 5)), None, None, 2, 3, 5, 2, 1e-5)),
        RuntimeError,
        "Expected number of channels in input to be divisible by num_groups",
    )


native_group_norm = composite(
    native_group_norm,
    no_kernel=NoKernel("bic", "GroupNormKernelImpl", inputs=(0,), first=_param_dtypes_first),
    samples=_ngn_samples,
    error_samples=_ngn_errors,
    nout=3,
    grad_args=(0, 1, 2),
)


# ------------------------------------------------------------------ native_dropout
def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:
    """Dropout returning ``(output, mask)``: the mask (bool) marks the kept elements. Not
    training (``train=False``), the output is a copy and the mask all True."""
    if input.is_complex() and input.requires_grad and is_grad_enabled():
        raise RuntimeError(
            "native_dropout does not support automatic differentiation for outputs with "
            "complex dtype."
        )
    if input.numel() == 0:
        return input.clone(), empty(input.shape, dtype=input.dtype, device=input.device)
    if train is None or train:
        d = input.dtype
        if not (d.is_floating_point or d.is_complex):
            raise RuntimeError(
                f"result type Float can't be cast to the desired output type {d.scalar_name}"
            )
        q = 1 - p
        if not 0 <= q <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={q}")
        real = dt.from_np(_real(d.np))
        keep = _bernoulli_draw(tuple(input.shape), q, real, None, input.device)
        scale = 0.0 if q == 0 else 1 / q
        return input * keep * scale, keep.to(dt.bool_)
    return input.clone(), ones_like(input, dtype=dt.bool_)


# ------------------------------------------------------------------ norm_except_dim
def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dim but ``dim`` (all dims when ``dim`` is
    -1), keeping the reduced dims as size 1: weight norm's norm."""
    if not (v.is_floating_point() or v.is_complex()):
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. Got "
            f"{v.dtype.scalar_name} instead."
        )
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        size = (v.size(0), *(1,) * (v.dim() - 1))
        return v.contiguous().view(v.size(0), -1).norm(pow, 1).view(size)
    if dim == v.dim() - 1:
        size = (*(1,) * (v.dim() - 1), v.size(-1))
        return v.contiguous().view(-1, v.size(-1)).norm(pow, 0).view(size)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _ned_samples(make):
    yield S((make((3, 4, 2)),))
    yield S((make((3, 4, 2)), 3, 1))
    yield S((make((3, 4, 2)), 2, 2))
    yield S((make((3, 4)), 1, -1))
    yield S((make((3, 4, 2)), 2, -2))
    yield S((make((5,)), 2, 0))


norm_except_dim = composite(
    norm_except_dim,
    samples=_ned_samples,
    test={"dtypes": ("float32", "float64", "complex128")},
)


# ------------------------------------------------------------------ batch_norm_update_stats
def _update_stats_kernel(xp, input, dims=(0,)):
    mean = input.mean(axis=dims)
    d = input - xp.expand_dims(mean, dims)
    return mean, (d * d).mean(axis=dims)


def _update_stats_vjp(g):
    raise RuntimeError("derivative for aten::batch_norm_update_stats is not implemented")


def _update_stats_jvp(t):
    raise NotImplementedError(
        "Trying to use forward AD with aten::batch_norm_update_stats that does not support it."
    )


def _update_stats_samples(make):
    yield S((make((4, 3, 5)),), {"dims": (0, 2)})
    yield S((make((4, 3)),), {"dims": (0,)})


# The batch statistics of batch_norm_update_stats: (mean, biased var) per channel. PyTorch
# has no derivative for it (its results require grad; backward raises).
_update_stats_p = defop(
    "_batch_norm_update_stats",
    _update_stats_kernel,
    nin=1,
    nout=2,
    vjp=(_update_stats_vjp,),
    jvp=_update_stats_jvp,
    node_name="NotImplemented",
    batch_rule=along_dims(names=("dims",)),
    no_kernel=NoKernel("bic", "batch_norm_update_stats_cpu"),
    samples=_update_stats_samples,
    api="nn._aten_norm._update_stats",
    test={"no_oracle": True, "no_grad_test": True},
)
_update_stats = _update_stats_p.fn


def batch_norm_update_stats(input, running_mean, running_var, momentum):
    """The per-channel (dim 1) mean and biased variance of ``input``; given running
    statistics, update them in place (with the unbiased variance), as training
    batch_norm does."""
    dims = _channel_dims(input)
    mean, var = _update_stats(input, dims=dims)
    if running_mean is not None or running_var is not None:
        n = input.numel() // input.size(1)
        unbiased = var.detach() * (n / (n - 1)) if n > 1 else var.detach()
        _write_running(running_mean, running_var, mean, unbiased, momentum)
    return mean, var


# ------------------------------------------------------------------ CUDA-only pieces
def _channel(t: Tensor, input: Tensor) -> Tensor:
    """A per-channel vector shaped to broadcast against ``input``'s dim 1."""
    return t.reshape(-1, *(1,) * (input.dim() - 2))


def native_norm(input: Tensor, p=2, dim=None, keepdim=False, dtype=None) -> Tensor:
    """The p-norm (over ``dim``), as ``torch.norm``. PyTorch has no CPU kernel for it."""
    _no_cpu_kernel("native_norm" if dim is None else "native_norm.ScalarOpt_dim_dtype", input)
    if dim is None:
        return input.norm(p)
    return input.norm(p, dim, keepdim, dtype=dtype)


def batch_norm_stats(input: Tensor, eps: float) -> tuple[Tensor, Tensor]:
    """The per-channel mean and 1/sqrt(biased var + eps) of ``input``."""
    _no_cpu_kernel("batch_norm_stats", input)
    return _stats(input, _channel_dims(input), eps, False)


def batch_norm_elemt(input, weight, bias, mean, invstd, eps) -> Tensor:
    """``(input - mean) * invstd * weight + bias``, per channel."""
    _no_cpu_kernel("batch_norm_elemt", input)
    out = (input - _channel(mean, input)) * _channel(invstd, input)
    if weight is not None:
        out = out * _channel(weight, input)
    return out if bias is None else out + _channel(bias, input)


def _gather(input, mean, invstd, running_mean, running_var, momentum, eps, counts):
    counts = counts.to(mean.dtype).reshape(-1, 1)
    total = counts.sum()
    global_mean = (counts * mean).sum(0) / total
    var = (invstd.pow(-2) - eps + (mean - global_mean).pow(2)) * counts
    global_var = var.sum(0) / total
    if running_mean is not None:
        unbiased = global_var * (total / (total - 1))
        _write_running(running_mean, running_var, global_mean, unbiased, momentum)
    return global_mean, (global_var + eps).rsqrt()


def batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, eps, count):
    """Combine per-device statistics (rows of ``mean`` and ``invstd``, each over ``count``
    values) into the global mean and invstd; update the running statistics."""
    _no_cpu_kernel("batch_norm_gather_stats", input)
    counts = mean.new_full((mean.size(0),), count)
    return _gather(input, mean, invstd, running_mean, running_var, momentum, eps, counts)


def batch_norm_gather_stats_with_counts(
    input, mean, invstd, running_mean, running_var, momentum, eps, counts
):
    """batch_norm_gather_stats with a count per device."""
    _no_cpu_kernel("batch_norm_gather_stats_with_counts", input)
    return _gather(input, mean, invstd, running_mean, running_var, momentum, eps, counts)


def batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g, weight_g, bias_g):
    """The per-channel sums batch norm's backward needs: ``(sum_dy, sum_dy_xmu,
    grad_weight, grad_bias)``, each only where asked for (None otherwise)."""
    _no_cpu_kernel("batch_norm_backward_reduce", input)
    dims = _channel_dims(input)
    sum_dy = grad_out.sum(dims)
    sum_dy_xmu = (grad_out * (input - _channel(mean, input))).sum(dims)
    grad_weight = sum_dy_xmu * invstd if weight_g else None
    grad_bias = sum_dy if bias_g else None
    if not input_g:
        sum_dy = sum_dy_xmu = None
    return sum_dy, sum_dy_xmu, grad_weight, grad_bias


def batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu, count):
    """The input gradient of batch norm from the reduced sums over ``count.sum()``
    values."""
    _no_cpu_kernel("batch_norm_backward_elemt", input)
    n = count.sum().to(input.dtype)
    istd = _channel(invstd, input)
    xmu = input - _channel(mean, input)
    g = grad_out - _channel(sum_dy, input) / n - xmu * istd * istd * _channel(sum_dy_xmu, input) / n
    g = g * istd
    return g if weight is None else g * _channel(weight, input)


__all__ = [
    "batch_norm_backward_elemt",
    "batch_norm_backward_reduce",
    "batch_norm_elemt",
    "batch_norm_gather_stats",
    "batch_norm_gather_stats_with_counts",
    "batch_norm_stats",
    "batch_norm_update_stats",
    "native_batch_norm",
    "native_dropout",
    "native_group_norm",
    "native_layer_norm",
    "native_norm",
    "norm_except_dim",
]
