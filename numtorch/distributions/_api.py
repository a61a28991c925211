"""The numtorch functions the distributions are written with.

The distributions sit in the package face (layer 7), but they cannot import ``numtorch``
itself (its ``__init__`` imports this package), so the few functions they call by name
come from their ops modules here. Everything else is a Tensor method.
"""

# ruff: noqa: F401
from __future__ import annotations

from .._core.dtype import bool_, finfo, float64, get_default_dtype, int64
from .._core.tensor import Size, Tensor
from ..autograd import enable_grad, grad, no_grad
from ..autograd.function import Function, once_differentiable
from ..ops import binary as _binary
from ..ops import gamma as _gamma
from ..ops import shape as _shape
from ..ops import special as _special
from ..ops import unary as _unary
from ..ops.comparison import where
from ..ops.creation import (
    arange,
    as_tensor,
    empty,
    eye,
    full,
    full_like,
    ones,
    tensor,
    zeros,
    zeros_like,
)
from ..ops.random import bernoulli, normal, rand
from ..ops.random_counts import binomial, multinomial, poisson
from ..ops.random_gamma import _dirichlet_grad, _sample_dirichlet, _standard_gamma
from ..ops.views import broadcast_shapes, broadcast_tensors

atanh = _unary.atanh_p.fn
cat = _shape.cat_p.fn
cos = _unary.cos_p.fn
digamma = _special.digamma_p.fn
erf = _unary.erf_p.fn
erfinv = _unary.erfinv_p.fn
exp = _unary.exp_p.fn
gammainc = _gamma.special_gammainc_p.fn
i0e = _special.special_i0e_p.fn
i1e = _special.special_i1e_p.fn
lgamma = _special.lgamma_p.fn
log = _unary.log_p.fn
log1p = _unary.log1p_p.fn
rsqrt = _unary.rsqrt_p.fn
sigmoid = _unary.sigmoid_p.fn
stack = _shape.stack_p.fn
xlogy = _binary.xlogy_p.fn

EMPTY = Size()  # the default sample_shape / batch_shape / event_shape
