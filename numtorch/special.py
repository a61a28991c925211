"""torch.special: the public functions of this namespace, listed here."""

# ruff: noqa: F401
from ._core.signature import numpy_keywords_in as _numpy_keywords_in
from .ops import reduction as _reduction
from .ops import special as _special
from .ops import unary as _unary
from .ops.reduction import log_softmax, softmax

# unary
erf = _unary.erf.fn
erfc = _unary.erfc.fn
erfinv = _unary.erfinv.fn
exp2 = _unary.exp2.fn
expit = _unary.sigmoid.fn
expm1 = _unary.expm1.fn
log1p = _unary.log1p.fn
logit = _unary.logit.fn
round = _unary.round.fn

# reduction
logsumexp = _reduction.logsumexp.fn

# gamma family, Bessel functions, sinc

digamma = _special.digamma.fn
gammaln = _special.lgamma.fn
i0 = _special.i0.fn
i0e = _special.special_i0e.fn
i1 = _special.special_i1.fn
i1e = _special.special_i1e.fn
multigammaln = _special.mvlgamma.fn
polygamma = _special.polygamma_fn
psi = _special.digamma.fn
sinc = _special.sinc.fn

# NumPy's axis=/keepdims= for dim=/keepdim=, as PyTorch's argument parser takes them
_numpy_keywords_in(globals(), "special")
