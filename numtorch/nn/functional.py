"""torch.nn.functional: the public functions of this namespace, listed here."""

# ruff: noqa: F401
from ..ops import indexing as _indexing
from ..ops import reduction as _reduction
from ..ops.random import dropout

# pooling
from ._pool import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
    max_pool3d,
    max_pool3d_with_indices,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)

# reduction
log_softmax = _reduction.nn_log_softmax
softmax = _reduction.nn_softmax

# indexing
one_hot = _indexing.one_hot.fn
