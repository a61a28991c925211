"""torch.special: the public functions of this namespace, listed here."""

# ruff: noqa: F401
from .ops import pointwise as _pointwise
from .ops import reduction as _reduction
from .ops.reduction import log_softmax, softmax

# pointwise
erf = _pointwise.erf.fn
erfc = _pointwise.erfc.fn
erfinv = _pointwise.erfinv.fn
exp2 = _pointwise.exp2.fn
expit = _pointwise.sigmoid.fn
expm1 = _pointwise.expm1.fn
log1p = _pointwise.log1p.fn
logit = _pointwise.logit.fn
round = _pointwise.round.fn

# reduction
logsumexp = _reduction.logsumexp.fn
