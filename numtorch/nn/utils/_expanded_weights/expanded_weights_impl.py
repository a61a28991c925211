"""ExpandedWeight: a parameter standing for one copy per sample of a batch.

It aliases the original weight (same memory, a leaf of its own), so a layer computes as
with the weight itself; the layers that know their per-sample rule (``layers.py``) run
their backward so that the original weight's ``grad_sample`` gets one gradient per sample
and its ``grad`` nothing.
"""

from __future__ import annotations

from ...._core.tensor import Tensor, _init


class ExpandedWeight(Tensor):
    """orig_weight, seen as expanded to batch_size samples."""

    def __new__(cls, orig_weight: Tensor, batch_size: int, loss_reduction: str):
        if not isinstance(orig_weight, Tensor):
            raise RuntimeError(
                f"Can only make Expanded Weights of Tensors, got {type(orig_weight).__name__}"
            )
        if not orig_weight.requires_grad:
            raise RuntimeError(
                "Can only build ExpandedWeights objects of tensors that requires_grad"
            )
        t = object.__new__(cls)
        _init(t, orig_weight._data)
        t._ver = orig_weight._ver
        t.requires_grad_(True)
        return t

    def __init__(self, orig_weight: Tensor, batch_size: int, loss_reduction: str) -> None:
        self.batch_size = batch_size
        self.batch_first = True
        self.allow_smaller_batches = False
        self.orig_weight = orig_weight
        self.loss_reduction = loss_reduction

    def set_allow_smaller_batches(self, is_allow_smaller_batches: bool) -> None:
        self.allow_smaller_batches = is_allow_smaller_batches

    def set_batch_first(self, is_batch_first: bool = True) -> None:
        self.batch_first = is_batch_first
