"""The numtorch functions the distributions are written with.

The distributions sit in the package face (layer 7), but they cannot import ``numtorch``
itself (its ``__init__`` imports this package), so the few functions they call by name
come from their ops modules here. Everything else is a Tensor method.
"""

# ruff: noqa: F401
from __future__ import annotations

from .._core.dtype import bool_, finfo, get_default_dtype, int64
from .._core.tensor import Size, Tensor
from ..autograd import enable_grad, grad, no_grad
from ..ops import binary as _binary
from ..ops import comparison as _comparison
from ..ops import reduction as _reduction
from ..ops import shape as _shape
from ..ops import unary as _unary
from ..ops.comparison import where
from ..ops.creation import arange, empty, eye, full, full_like, ones, tensor, zeros, zeros_like
from ..ops.random import bernoulli, normal, rand
from ..ops.random_counts import multinomial
from ..ops.views import broadcast_shapes, broadcast_tensors

atanh = _unary.atanh_p.fn
cat = _shape.cat_p.fn
stack = _shape.stack_p.fn
erf = _unary.erf_p.fn
erfinv = _unary.erfinv_p.fn
exp = _unary.exp_p.fn
log = _unary.log_p.fn
log1p = _unary.log1p_p.fn
sigmoid = _unary.sigmoid_p.fn
xlogy = _binary.xlogy_p.fn

EMPTY = Size()  # the default sample_shape / batch_shape / event_shape

# Gamma, Beta, Dirichlet and friends (issue 31, the gamma family)
from .._core.dtype import float64  # noqa: E402
from ..autograd.function import Function, once_differentiable  # noqa: E402
from ..ops import gamma as _gamma_ops  # noqa: E402
from ..ops import random_gamma as _random_gamma  # noqa: E402
from ..ops import special as _special_ops  # noqa: E402
from ..ops.creation import as_tensor  # noqa: E402

_dirichlet_grad = _random_gamma._dirichlet_grad
_sample_dirichlet = _random_gamma._sample_dirichlet
_standard_gamma = _random_gamma._standard_gamma
cos = _unary.cos_p.fn
digamma = _special_ops.digamma_p.fn
gammainc = _gamma_ops.special_gammainc_p.fn
i0e = _special_ops.special_i0e_p.fn
i1e = _special_ops.special_i1e_p.fn
lgamma = _special_ops.lgamma_p.fn
rsqrt = _unary.rsqrt_p.fn
