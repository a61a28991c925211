"""torch.functional: the tensor functions PyTorch writes in Python, here numtorch's own."""

from __future__ import annotations

from .nn._distance import cdist
from .ops.combine import block_diag, cartesian_prod, chain_matmul
from .ops.grids import meshgrid, unravel_index
from .ops.linalg import torch_lu as lu
from .ops.linalg.composites import torch_norm as norm
from .ops.linalg.contractions import einsum, tensordot
from .ops.linalg.lowrank import pca_lowrank, svd_lowrank
from .ops.setops import unique, unique_consecutive
from .ops.shape import atleast_1d, atleast_2d, atleast_3d
from .ops.spectral import istft, stft
from .ops.splits import split
from .ops.views import broadcast_shapes, broadcast_tensors

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_shapes",
    "broadcast_tensors",
    "cartesian_prod",
    "block_diag",
    "cdist",
    "chain_matmul",
    "einsum",
    "istft",
    "lu",
    "norm",
    "meshgrid",
    "pca_lowrank",
    "split",
    "stft",
    "svd_lowrank",
    "tensordot",
    "unique",
    "unique_consecutive",
    "unravel_index",
]
