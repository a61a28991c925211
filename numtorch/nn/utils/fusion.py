"""torch.nn.utils.fusion: fold an eval-mode batch norm into the convolution or linear
layer before it."""

from __future__ import annotations

import copy
from typing import TypeVar

from ..._core.tensor import Tensor
from ...ops.creation import ones_like, zeros_like
from ..modules.module import Module
from ..parameter import Parameter

__all__ = [
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
]

ConvT = TypeVar("ConvT", bound=Module)
LinearT = TypeVar("LinearT", bound=Module)


def _check_eval(layer: Module, bn: Module) -> None:
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")


def _check_stats(bn: Module) -> None:
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def fuse_conv_bn_eval(conv: ConvT, bn: Module, transpose: bool = False) -> ConvT:
    """A copy of conv computing ``bn(conv(x))`` (both in eval mode)."""
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    _check_stats(bn)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight,
        fused.bias,
        bn.running_mean,
        bn.running_var,
        bn.eps,
        bn.weight,
        bn.bias,
        transpose,
    )
    return fused


def fuse_conv_bn_weights(
    conv_w: Tensor,
    conv_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor | None,
    bn_b: Tensor | None,
    transpose: bool = False,
) -> tuple[Parameter, Parameter]:
    """(weight, bias) of the convolution that computes ``bn(conv(x))``."""
    w_dtype = conv_w.dtype
    b_dtype = w_dtype if conv_b is None else conv_b.dtype
    conv_b = zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = zeros_like(bn_rm) if bn_b is None else bn_b
    inv_std = (bn_rv + bn_eps).rsqrt()
    channel = 1 if transpose else 0  # the weight's dim that holds the output channels
    shape = [1] * len(conv_w.shape)
    shape[channel] = -1
    fused_w = (conv_w * (bn_w * inv_std).reshape(shape)).to(dtype=w_dtype)
    fused_b = ((conv_b - bn_rm) * inv_std * bn_w + bn_b).to(dtype=b_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear: LinearT, bn: Module) -> LinearT:
    """A copy of linear computing ``bn(linear(x))`` (both in eval mode)."""
    _check_eval(linear, bn)
    fused = copy.deepcopy(linear)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, "
            f"got linear.out_features={linear.out_features} and "
            f"bn.num_features={bn.num_features}"
        )
    _check_stats(bn)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    return fused


def fuse_linear_bn_weights(
    linear_w: Tensor,
    linear_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor,
    bn_b: Tensor,
) -> tuple[Parameter, Parameter]:
    """(weight, bias) of the linear layer that computes ``bn(linear(x))``."""
    w_dtype = linear_w.dtype
    b_dtype = w_dtype if linear_b is None else linear_b.dtype
    linear_b = zeros_like(bn_rm) if linear_b is None else linear_b
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    fused_w = linear_w * scale.unsqueeze(-1).to(dtype=w_dtype)
    fused_b = ((linear_b - bn_rm) * scale + bn_b).to(dtype=b_dtype)
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)
