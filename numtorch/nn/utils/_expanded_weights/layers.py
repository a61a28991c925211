"""Which layers compute per-sample gradients of their ExpandedWeights, and how.

PyTorch routes each functional call that receives an ExpandedWeight to that function's
rule. numtorch decides per layer instead: while ``call_for_per_sample_grads`` runs a
module, each submodule holding ExpandedWeights runs through ``per_sample_forward``. A
layer whose samples do not mix (Linear, ConvNd, Embedding, GroupNorm, InstanceNormNd,
LayerNorm) gets one backward for the whole batch: the gradient of each sample's output
with respect to the weights, vectorized by vmap over the samples. Any other layer raises
PyTorch's error for the function it would have called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .... import nn
from ...._core.tensor import Tensor
from ....autograd.function import Function
from ....autograd.grad_mode import no_grad
from ....func._grad import grad
from ....func._module import _reparametrize_module
from ....func._vmap import vmap
from .expanded_weights_impl import ExpandedWeight

Check = Callable[[Any, Tensor], None]


def _check_linear(module, x: Tensor) -> None:
    if x.dim() <= 1:
        raise RuntimeError(
            "Input does not have a batch dimension. Expanded Weights expected input of at "
            f"least rank 2, got of rank {x.dim()}"
        )


def _check_embedding(module, x: Tensor) -> None:
    if x.dim() == 1:
        raise RuntimeError(
            f"Expanded Weights needs an input with a batch size, got a 1D tensor, {x}"
        )


def _check_layer_norm(module, x: Tensor) -> None:
    if x.dim() <= len(module.normalized_shape):
        raise RuntimeError(
            "Expanded Weights: Layer norm should not normalize over batch dimension for per "
            "sample gradientcomputations but got that normalized shape, "
            f"{module.normalized_shape}, matched input shape."
        )


def _conv_check(name: str, rank: int) -> Check:
    def check(module, x: Tensor) -> None:
        if x.dim() != rank:
            raise RuntimeError(
                f"Expanded Weights only support convolution with batched input, got {name} "
                f"with anunbatched input of dim {x.dim()}, expected input of dim {rank}"
            )

    return check


def _no_check(module, x: Tensor) -> None:
    pass


# The layers with a per-sample rule: the function PyTorch names in its errors about the
# input, the rule's own input check before the common ones, and after them.
SUPPORTED: dict[type, tuple[str, Check, Check]] = {
    nn.Linear: ("linear", _check_linear, _no_check),
    nn.Conv1d: ("conv1d", _no_check, _conv_check("conv1d", 3)),
    nn.Conv2d: ("conv2d", _no_check, _conv_check("conv2d", 4)),
    nn.Conv3d: ("conv3d", _no_check, _conv_check("conv3d", 5)),
    nn.Embedding: ("embedding", _check_embedding, _no_check),
    nn.GroupNorm: ("native_group_norm", _no_check, _no_check),
    nn.InstanceNorm1d: ("instance_norm", _no_check, _no_check),
    nn.InstanceNorm2d: ("instance_norm", _no_check, _no_check),
    nn.InstanceNorm3d: ("instance_norm", _no_check, _no_check),
    nn.LayerNorm: ("native_layer_norm", _check_layer_norm, _no_check),
}

# Layers without one: the function PyTorch reports it cannot handle.
REFUSED: dict[type, str] = {
    nn.BatchNorm1d: "batch_norm",
    nn.BatchNorm2d: "batch_norm",
    nn.BatchNorm3d: "batch_norm",
    nn.ConvTranspose1d: "conv_transpose1d",
    nn.ConvTranspose2d: "conv_transpose2d",
    nn.ConvTranspose3d: "conv_transpose3d",
    nn.PReLU: "prelu",
    nn.Bilinear: "bilinear",
    nn.EmbeddingBag: "embedding_bag",
    nn.LSTM: "mkldnn_rnn_layer.default",
    nn.GRU: "mkldnn_rnn_layer.default",
    nn.RNN: "rnn_tanh",
}


def _rule_of(module) -> tuple[str, Check, Check]:
    """The layer's function name and input check; raises for a layer without a rule."""
    for cls in type(module).__mro__:
        if cls in SUPPORTED:
            return SUPPORTED[cls]
        if cls in REFUSED:
            name = REFUSED[cls]
            if cls is nn.RNN and module.nonlinearity == "relu":
                name = "rnn_relu"
            break
    else:
        name = f"{type(module).__name__}.forward"
    raise RuntimeError(f"Expanded Weights encountered but cannot handle function {name}")


def _check_input(x: Any, name: str, weights: list[ExpandedWeight]) -> None:
    """PyTorch's checks of the batched input a per-sample rule receives."""
    if isinstance(x, ExpandedWeight):
        raise RuntimeError(
            "Expanded Weights do not support inputs that are also ExpandedWeights. Input "
            f"must be a Tensor, got {type(x).__name__} in function {name}"
        )
    if not isinstance(x, Tensor):
        raise RuntimeError(
            "Expanded Weights requires a Tensor as the first input to get the batch "
            f"dimension, got {type(x).__name__} in function {name}"
        )
    if x.dim() == 0:
        raise RuntimeError(
            "Expanded Weights requires a batch dimension but got an input of size 0 in "
            f"function {name}"
        )
    if x.shape[0] == 0:
        raise RuntimeError(
            "0 is not a valid batch size for Expanded Weights but got input tensor of "
            f"{x} in function {name}"
        )
    for w in weights:
        if w.batch_size != x.shape[0]:
            raise RuntimeError(
                "Expected ExpandedWeights to have batch size matching input but got input "
                f"batch size of {x.shape[0]} with ExpandedWeight of batch size {w.batch_size}"
            )


def per_sample_forward(module) -> Callable:
    """The forward that ``module`` runs while it holds ExpandedWeights."""

    def forward(*args, **kwargs):
        names = [n for n, p in module._parameters.items() if isinstance(p, ExpandedWeight)]
        name, check_before, check_after = _rule_of(module)
        x = args[0] if args else kwargs.get("input")
        weights = [module._parameters[n] for n in names]
        if isinstance(x, Tensor):
            check_before(module, x)
        _check_input(x, name, weights)
        check_after(module, x)
        return _PerSampleLayer.apply(module, names, x, *weights)

    return forward


class _PerSampleLayer(Function):
    """A layer on a batch: its forward as usual; its backward gives the input its gradient
    and each ExpandedWeight's original weight its per-sample gradients (``grad_sample``)."""

    @staticmethod
    def forward(ctx, module, names: list[str], x: Tensor, *weights: ExpandedWeight) -> Tensor:
        ctx.module, ctx.names, ctx.weights = module, names, weights
        ctx.values = {n: w.detach() for n, w in zip(names, weights)}
        ctx.save_for_backward(x)
        return type(module).forward(module, x)

    @staticmethod
    def backward(ctx, g: Tensor):
        (x,) = ctx.saved_tensors
        module = ctx.module
        need_x = ctx.needs_input_grad[2]

        def sample_loss(values: dict, xi: Tensor, gi: Tensor) -> Tensor:
            with _reparametrize_module(module, values):
                out = type(module).forward(module, xi.unsqueeze(0))
            return (out * gi.unsqueeze(0)).sum()

        per_sample = vmap(grad(sample_loss, argnums=(0, 1) if need_x else 0), in_dims=(None, 0, 0))
        grads = per_sample(ctx.values, x.detach(), g.detach())
        weight_grads, x_grad = grads if need_x else (grads, None)
        with no_grad():
            for name, w in zip(ctx.names, ctx.weights):
                _add_grad_sample(w, weight_grads[name])
        return (None, None, x_grad) + (None,) * len(ctx.weights)


def _add_grad_sample(w: ExpandedWeight, per_sample: Tensor) -> None:
    """Add per-sample gradients to the original weight's ``grad_sample`` (times the batch
    size when the loss is a mean, undoing the mean's 1/batch)."""
    if w.loss_reduction == "mean":
        per_sample = per_sample * w.batch_size
    orig = w.orig_weight
    if getattr(orig, "grad_sample", None) is not None:
        orig.grad_sample = orig.grad_sample + per_sample
    else:
        orig.grad_sample = per_sample
