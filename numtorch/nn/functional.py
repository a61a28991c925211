"""torch.nn.functional: the public functions of this namespace, listed here."""

# ruff: noqa: F401
from ..ops import indexing as _indexing
from ..ops import reduction as _reduction
from ..ops.random import dropout

# convolution
from ._conv import (
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    fold,
    unfold,
)

# reduction
log_softmax = _reduction.nn_log_softmax
softmax = _reduction.nn_softmax

# indexing
one_hot = _indexing.one_hot.fn
