"""torch.nn.functional: the public functions of this namespace, listed here."""

# ruff: noqa: F401
from ..ops import indexing as _indexing
from ..ops import reduction as _reduction
from ..ops.random import dropout

# padding and resampling
from ._padding import pad
from ._resample import (
    affine_grid,
    grid_sample,
    interpolate,
    pixel_shuffle,
    pixel_unshuffle,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)

# reduction
log_softmax = _reduction.nn_log_softmax
softmax = _reduction.nn_softmax

# indexing
one_hot = _indexing.one_hot.fn
