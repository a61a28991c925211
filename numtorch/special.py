"""torch.special: the public functions of this namespace, listed here."""

# ruff: noqa: F401
from ._core.signature import numpy_keywords_in as _numpy_keywords_in
from .ops import bessel as _bessel
from .ops import binary as _binary
from .ops import gamma as _gamma
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

# Bessel and Airy functions; erfcx, log_ndtr, ndtri, entr, xlog1py, zeta
airy_ai = _bessel.special_airy_ai_p.fn
bessel_j0 = _bessel.special_bessel_j0_p.fn
bessel_j1 = _bessel.special_bessel_j1_p.fn
bessel_y0 = _bessel.special_bessel_y0_p.fn
bessel_y1 = _bessel.special_bessel_y1_p.fn
modified_bessel_i0 = _bessel.special_modified_bessel_i0_p.fn
modified_bessel_i1 = _bessel.special_modified_bessel_i1_p.fn
modified_bessel_k0 = _bessel.special_modified_bessel_k0_p.fn
modified_bessel_k1 = _bessel.special_modified_bessel_k1_p.fn
scaled_modified_bessel_k0 = _bessel.special_scaled_modified_bessel_k0_p.fn
scaled_modified_bessel_k1 = _bessel.special_scaled_modified_bessel_k1_p.fn
spherical_bessel_j0 = _bessel.special_spherical_bessel_j0_p.fn
entr = _special.special_entr_p.fn
erfcx = _special.special_erfcx_p.fn
log_ndtr = _special.special_log_ndtr_p.fn
ndtri = _special.special_ndtri_p.fn
xlog1py = _special.special_xlog1py_p.fn
zeta = _special.special_zeta_p.fn

# incomplete gamma functions, ndtr, xlogy
gammainc = _gamma.special_gammainc_p.fn
gammaincc = _gamma.special_gammaincc_p.fn
ndtr = _gamma.ndtr
xlogy = _binary.xlogy_p.fn

# NumPy's axis=/keepdims= for dim=/keepdim=, as PyTorch's argument parser takes them
_numpy_keywords_in(globals(), "special")
