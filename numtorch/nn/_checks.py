"""Argument checks that read a tensor's values, as PyTorch's data-dependent checks do."""

from __future__ import annotations

import numpy as np

from .._core.interpreter import WrapperTensor
from .._core.tensor import Tensor
from ..func._batched import BatchedTensor


def concrete(t: Tensor) -> np.ndarray | None:
    """``t``'s values, seen through grad and jvp wrappers; None under vmap, where a value is
    one per sample and PyTorch refuses data-dependent checks too, and on the meta device,
    where there are no values (PyTorch's meta kernels skip these checks)."""
    while isinstance(t, WrapperTensor):
        if isinstance(t, BatchedTensor):
            return None
        t = t._inner
    if t.is_meta:
        return None
    return t.detach().numpy()
