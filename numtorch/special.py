"""torch.special: the public functions of this namespace, listed here."""

# ruff: noqa: F401
from .ops import reduction as _reduction
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
