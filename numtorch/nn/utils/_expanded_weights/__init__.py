"""torch.nn.utils._expanded_weights: weights that make backward fill ``grad_sample`` with
per-sample gradients (``call_for_per_sample_grads`` is their entry point)."""

from .expanded_weights_impl import ExpandedWeight

__all__ = ["ExpandedWeight"]
