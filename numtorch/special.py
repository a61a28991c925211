"""torch.special: the public functions of this namespace, listed here."""

# ruff: noqa: F401
from ._core.signature import numpy_keywords_in as _numpy_keywords_in
from .ops import polynomials as _polynomials
from .ops import reduction as _reduction
from .ops import special as _special
from .ops import unary as _unary
from .ops.reduction import log_softmax, softmax

# unary
erf = _unary.erf_p.fn
erfc = _unary.erfc_p.fn
erfinv = _unary.erfinv_p.fn
exp2 = _unary.exp2_p.fn
expit = _unary.sigmoid_p.fn
expm1 = _unary.expm1_p.fn
log1p = _unary.log1p_p.fn
logit = _unary.logit_p.fn
round = _unary.round_p.fn

# reduction
logsumexp = _reduction.logsumexp_p.fn

# gamma family, Bessel functions, sinc

digamma = _special.digamma_p.fn
gammaln = _special.lgamma_p.fn
i0 = _special.i0_p.fn
i0e = _special.special_i0e_p.fn
i1 = _special.special_i1_p.fn
i1e = _special.special_i1e_p.fn
multigammaln = _special.mvlgamma_p.fn
polygamma = _special.polygamma
psi = _special.digamma_p.fn
sinc = _special.sinc_p.fn

# orthogonal polynomials
chebyshev_polynomial_t = _polynomials.special_chebyshev_polynomial_t_p.fn
chebyshev_polynomial_u = _polynomials.special_chebyshev_polynomial_u_p.fn
chebyshev_polynomial_v = _polynomials.special_chebyshev_polynomial_v_p.fn
chebyshev_polynomial_w = _polynomials.special_chebyshev_polynomial_w_p.fn
hermite_polynomial_h = _polynomials.special_hermite_polynomial_h_p.fn
hermite_polynomial_he = _polynomials.special_hermite_polynomial_he_p.fn
laguerre_polynomial_l = _polynomials.special_laguerre_polynomial_l_p.fn
legendre_polynomial_p = _polynomials.special_legendre_polynomial_p_p.fn
shifted_chebyshev_polynomial_t = _polynomials.special_shifted_chebyshev_polynomial_t_p.fn
shifted_chebyshev_polynomial_u = _polynomials.special_shifted_chebyshev_polynomial_u_p.fn
shifted_chebyshev_polynomial_v = _polynomials.special_shifted_chebyshev_polynomial_v_p.fn
shifted_chebyshev_polynomial_w = _polynomials.special_shifted_chebyshev_polynomial_w_p.fn

# NumPy's axis=/keepdims= for dim=/keepdim=, as PyTorch's argument parser takes them
_numpy_keywords_in(globals(), "special")
