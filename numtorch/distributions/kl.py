"""torch.distributions.kl: ``kl_divergence(p, q)`` and ``register_kl``.

Implementations are registered per pair of distribution classes. A call dispatches on the
most specific registered pair for ``(type(p), type(q))`` (ordered first by p's class, then
by q's); when ordering by q first would pick another implementation, the pair is ambiguous
and a RuntimeWarning says which pair to register. Results are memoized per type pair.

To add a pair: write ``_kl_<p>_<q>(p, q)`` below, decorated with
``@register_kl(P, Q)``; a pair whose divergence is infinite (q's support does not
cover p's) goes in ``_INFINITE``.
"""

from __future__ import annotations

import functools
import math
import warnings

from .. import linalg
from ..nn import functional as F
from ._api import (
    Size,
    broadcast_shapes,
    digamma,
    erf,
    exp,
    full_like,
    grad,
    lgamma,
    log,
    where,
    xlogy,
)
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .lowrank_multivariate_normal import (
    LowRankMultivariateNormal,
    _batch_lowrank_logdet,
    _batch_lowrank_mahalanobis,
)
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import _sum_rightmost, euler_constant

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY = {}  # (type_p, type_q) -> fn(p, q)
_KL_MEMOIZE = {}  # (type(p), type(q)) -> the dispatched fn, or NotImplemented


def register_kl(type_p, type_q):
    """A decorator registering ``fn(p, q)`` as KL(p || q) for these two classes."""
    if not isinstance(type_p, type) and issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) and issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun

    return decorator


@functools.total_ordering
class _Match:
    """A registered pair, ordered lexicographically by subclass relation: a pair is
    smaller (more specific) when its first differing type is a subclass of the other's."""

    __slots__ = ["types"]

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    matches = [(p, q) for p, q in _KL_REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    if left_fun is not _KL_REGISTRY[right_p, right_q]:
        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
            f"Please register_kl({left_p.__name__}, {right_q.__name__})",
            RuntimeWarning,
            stacklevel=2,
        )
    return left_fun


def kl_divergence(p, q):
    """KL(p || q), batched over the batch shape."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {p.__class__.__name__} and "
            f"q type {q.__class__.__name__}"
        )
    return fun(p, q)


def _infinite_like(tensor):
    return full_like(tensor, math.inf)


def _inf_where(condition, value):
    return where(condition, math.inf, value)


# Same-family pairs


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = where(p.probs == 0, 0.0, _inf_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = where(p.probs == 1, 0.0, _inf_where(q.probs == 1, t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _inf_where((q.probs == 0).expand_as(t), t)
    t = where((p.probs == 0).expand_as(t), 0.0, t)
    return t.sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the log normalizer between the natural parameters."""
    if type(p) is not type(q):
        raise NotImplementedError(
            "The cross KL-divergence between different exponential families cannot "
            "                            be computed using Bregman divergences"
        )
    p_thetas = [theta.detach().requires_grad_() for theta in p._natural_params]
    q_thetas = q._natural_params
    p_norm = p._log_normalizer(*p_thetas)
    slopes = grad(p_norm.sum(), p_thetas, create_graph=True)
    result = q._log_normalizer(*q_thetas) - p_norm
    for p_theta, q_theta, slope in zip(p_thetas, q_thetas, slopes):
        result = result - _sum_rightmost((q_theta - p_theta) * slope, len(q.event_shape))
    return result


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_gap = (p.loc - q.loc).abs()
    return -scale_ratio.log() + loc_gap / q.scale + scale_ratio * exp(-loc_gap / p.scale) - 1


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _inf_where((q.low > p.low) | (q.high < p.high), result)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return _sum_rightmost(result, p.reinterpreted_batch_ndims)


# Cross-family pairs


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * log(rate_sqr * var_normal * 2 * math.pi)
    t2 = rate_sqr.reciprocal()
    t3 = q.loc / p.rate
    t4 = q.loc.pow(2) * 0.5
    return t1 - 1 + (t2 - t3 + t4) / var_normal


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var_normal = q.scale.pow(2)
    scale_sqr_var_ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * log(2 * scale_sqr_var_ratio / math.pi)
    t2 = 0.5 * p.loc.pow(2)
    t3 = p.loc * q.loc
    t4 = 0.5 * q.loc.pow(2)
    return -t1 + scale_sqr_var_ratio + (t2 - t3 + t4) / var_normal - 1


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    z = loc_diff / p.scale
    t1 = log(scale_ratio)
    t2 = math.sqrt(2 / math.pi) * p.scale * exp(-0.5 * z.pow(2))
    t3 = loc_diff * erf(math.sqrt(0.5) * z)
    return -t1 + (t2 + t3) / q.scale - 0.5 * (1 + math.log(0.5 * math.pi))


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _inf_where(p.low < q.support.lower_bound, result)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    width = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / width).log()
    t2 = width.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


# The gamma family: Gamma (and Chi2, a Gamma), Beta and Dirichlet. InverseGamma pairs dispatch through
# (TransformedDistribution, TransformedDistribution) to the Gamma pair.


def _x_log_x(x):
    """x log x, 0 at x = 0."""
    return xlogy(x, x)


def _beta_mean(p):
    return p.concentration1 / (p.concentration1 + p.concentration0)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    total_p = p.concentration1 + p.concentration0
    total_q = q.concentration1 + q.concentration0
    log_norm_q = lgamma(q.concentration1) + lgamma(q.concentration0) + lgamma(total_p)
    log_norm_p = lgamma(p.concentration1) + lgamma(p.concentration0) + lgamma(total_q)
    t1 = (p.concentration1 - q.concentration1) * digamma(p.concentration1)
    t0 = (p.concentration0 - q.concentration0) * digamma(p.concentration0)
    t_total = (total_q - total_p) * digamma(total_p)
    return log_norm_q - log_norm_p + t1 + t0 + t_total


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    total_p = p.concentration.sum(-1)
    total_q = q.concentration.sum(-1)
    t1 = lgamma(total_p) - lgamma(total_q)
    t2 = (lgamma(p.concentration) - lgamma(q.concentration)).sum(-1)
    gap = p.concentration - q.concentration
    expected_log = digamma(p.concentration) - digamma(total_p).unsqueeze(-1)
    return t1 - t2 + (gap * expected_log).sum(-1)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = lgamma(q.concentration) - lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * _beta_mean(p)


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    t1 = -p.entropy()
    t2 = lgamma(q.concentration) - q.concentration * q.rate.log()
    expected_log = digamma(p.concentration1) - digamma(p.concentration1 + p.concentration0)
    t3 = (q.concentration - 1) * expected_log
    t4 = q.rate * _beta_mean(p)
    return t1 + t2 - t3 + t4


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    mean = _beta_mean(p)
    var_normal = q.scale.pow(2)
    t1 = -p.entropy()
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    second_moment = mean * (1 - mean) / (p.concentration1 + p.concentration0 + 1) + mean.pow(2)
    t3 = second_moment * 0.5
    t4 = q.loc * mean
    t5 = q.loc.pow(2) * 0.5
    return t1 + t2 + (t3 - t4 + t5) / var_normal


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    support = p.support
    return _inf_where((q.low > support.lower_bound) | (q.high < support.upper_bound), result)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * log(ratio)
    return (
        t1
        + ratio
        + lgamma(q.concentration)
        + q.concentration * euler_constant
        - (1 + euler_constant)
    )


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    alpha = p.concentration
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * log(rate_sqr * var_normal * 2 * math.pi) - alpha - lgamma(alpha)
    t2 = 0.5 * (alpha.pow(2) + alpha) / rate_sqr
    t3 = q.loc * alpha / p.rate
    t4 = 0.5 * q.loc.pow(2)
    return t1 + (alpha - 1) * digamma(alpha) + (t2 - t3 + t4) / var_normal


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    width = p.high - p.low
    t1 = log(width)
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + width) / width
    t4 = (
        lgamma(q.concentration1)
        + lgamma(q.concentration0)
        - lgamma(q.concentration1 + q.concentration0)
    )
    result = t3 + t4 - t1 - t2
    support = q.support
    return _inf_where((p.high > support.upper_bound) | (p.low < support.lower_bound), result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    width = p.high - p.low
    t1 = width.log()
    t2 = lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t4 = q.rate * (p.high + p.low) / 2
    result = -t1 + t2 + t3 + t4
    return _inf_where(p.low < q.support.lower_bound, result)


# Cauchy, ContinuousBernoulli, Gumbel, HalfNormal and Pareto


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    spread = (p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)
    return spread.log() - (4 * p.scale * q.scale).log()


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + (-p.probs).log1p()
    t3 = -q._cont_bern_log_norm() - (-q.probs).log1p()
    return t1 + t2 + t3


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    scale_ratio = p.scale / q.scale
    q_loc, p_loc = q.loc / q.scale, p.loc / q.scale
    t1 = -scale_ratio.log() - q_loc + p_loc
    t2 = scale_ratio * euler_constant
    t3 = exp(q_loc + (1 + scale_ratio).lgamma() - p_loc)
    return t1 + t2 + t3 - (1 + euler_constant)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * (p.scale / q.scale).log() - alpha_ratio.log() + alpha_ratio - 1
    return _inf_where(p.support.lower_bound < q.support.lower_bound, result)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).square()) + q.scale.log()
    t3 = (p.variance + p.mean.square() - 2.0 * q.loc * p.mean) / (2.0 * q.scale.square())
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    support = p.support
    return _inf_where((q.low >= support.lower_bound) | (q.high <= support.upper_bound), result)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    scale_rate = p.rate * q.scale
    loc_ratio = q.loc / q.scale
    t1 = scale_rate.log() - 1
    t2 = exp(loc_ratio) * scale_rate / (scale_rate + 1)
    return t1 - loc_ratio + t2 + scale_rate.reciprocal()


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    scale_ratio = p.scale / q.scale
    t1 = (scale_ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * scale_ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * euler_constant - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (euler_constant + 1)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_ratio = p.loc / q.scale
    var_ratio = (p.scale / q.scale).pow(2)
    loc_ratio = q.loc / q.scale
    t1 = var_ratio.log() * 0.5
    t3 = exp(-mean_ratio + 0.5 * var_ratio + loc_ratio)
    return -t1 + (mean_ratio - loc_ratio) + t3 - 0.5 * (1 + math.log(2 * math.pi))


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    scale_rate = p.scale * q.rate
    t1 = (p.alpha / scale_rate).log()
    t3 = p.alpha * scale_rate / (p.alpha - 1)
    return _inf_where(p.alpha <= 1, t1 - p.alpha.reciprocal() + t3 - 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    two_var = 2 * q.scale.pow(2)
    spread = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t3 = p.alpha * spread.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * spread - q.loc).pow(2)
    return _inf_where(p.alpha <= 2, t1 - p.alpha.reciprocal() + (t3 + t4) / two_var - 1)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()
    support = q.support
    return _inf_where((p.high >= support.upper_bound) | (p.low <= support.lower_bound), result)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    ratio = q.scale / (p.high - p.low)
    high = (p.high - q.loc) / q.scale
    low = (p.low - q.loc) / q.scale
    t1 = ratio.log() + 0.5 * (high + low)
    return t1 - ratio * (exp(-high) - exp(-low))


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    width = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * width).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    return _inf_where(p.low < q.support.lower_bound, t2 * (q.alpha + 1) - t1)


# Counts and one-hot categoricals


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    """Defined only when q's trials cover p's; infinite where p has more trials."""
    if (p.total_count < q.total_count).any():
        raise NotImplementedError(
            "KL between Binomials where q.total_count > p.total_count is not implemented"
        )
    per_trial = p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p()
    return _inf_where(p.total_count > q.total_count, p.total_count * per_trial)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


# Multivariate normals (full and low-rank covariance)


def _batch_trace_XXT(bmat):
    """``trace(X X^T)`` over the batch: the sum of the squared entries."""
    return bmat.pow(2).sum((-2, -1))


def _same_event_shape(p, q, what):
    if p.event_shape != q.event_shape:
        raise ValueError(
            f"KL-divergence between two {what} with"
            "                          different event shapes cannot be computed"
        )


def _lowrank_parts(d):
    return d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag, d._capacitance_tril


def _woodbury_factor(q):
    """``A`` with ``inv(W W^T + D) = inv(D) - A^T A``, for q's low-rank covariance."""
    W, D, C = _lowrank_parts(q)
    return linalg.solve_triangular(C, W.mT / D.unsqueeze(-2), upper=False)


def _lowrank_logdet(d):
    return _batch_lowrank_logdet(*_lowrank_parts(d))


def _log_det_tril(L):
    return 2 * L.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def _lowrank_gap(p, q):
    W, D, C = _lowrank_parts(q)
    return _batch_lowrank_mahalanobis(W, D, q.loc - p.loc, C)


def _common_batch(*tensors):
    return Size(broadcast_shapes(*[t.shape[:-2] for t in tensors]))


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p, q):
    _same_event_shape(p, q, "Low Rank Multivariate Normals")
    pW, pD, _ = _lowrank_parts(p)
    A = _woodbury_factor(q)
    # trace(inv(qcov) pcov) with inv(qcov) = inv(qD) - A^T A and pcov = pD + pW pW^T
    trace = (
        (pD / q._unbroadcasted_cov_diag).sum(-1)
        + _batch_trace_XXT(pW * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
        - _batch_trace_XXT(A * pD.sqrt().unsqueeze(-2))
        - _batch_trace_XXT(A.matmul(pW))
    )
    log_det_ratio = _lowrank_logdet(q) - _lowrank_logdet(p)
    return 0.5 * (log_det_ratio + trace + _lowrank_gap(p, q) - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(p, q):
    _same_event_shape(p, q, "(Low Rank) Multivariate Normals")
    pL = p._unbroadcasted_scale_tril
    A = _woodbury_factor(q)
    trace = _batch_trace_XXT(
        pL * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1)
    ) - _batch_trace_XXT(A.matmul(pL))
    log_det_ratio = _lowrank_logdet(q) - _log_det_tril(pL)
    return 0.5 * (log_det_ratio + trace + _lowrank_gap(p, q) - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(p, q):
    _same_event_shape(p, q, "(Low Rank) Multivariate Normals")
    qL = q._unbroadcasted_scale_tril
    pW, pD, _ = _lowrank_parts(p)
    n = p.event_shape[0]
    batch = _common_batch(qL, pW)
    qL = qL.expand(batch + (n, n))
    # trace(inv(qL qL^T) (pW pW^T + pD)) = |qL^{-1} pW|^2 + |qL^{-1} pD^{1/2}|^2
    trace = _batch_trace_XXT(
        linalg.solve_triangular(qL, pW.expand(batch + pW.shape[-2:]), upper=False)
    ) + _batch_trace_XXT(
        linalg.solve_triangular(qL, pD.sqrt().diag_embed().expand(batch + (n, n)), upper=False)
    )
    log_det_ratio = _log_det_tril(q._unbroadcasted_scale_tril) - _lowrank_logdet(p)
    gap = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return 0.5 * (log_det_ratio + trace + gap - n)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    _same_event_shape(p, q, "Multivariate Normals")
    pL, qL = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    n = p.event_shape[0]
    batch = _common_batch(pL, qL)
    solved = linalg.solve_triangular(
        qL.expand(batch + (n, n)), pL.expand(batch + (n, n)), upper=False
    )
    half_log_det_ratio = 0.5 * (_log_det_tril(qL) - _log_det_tril(pL))
    gap = _batch_mahalanobis(qL, q.loc - p.loc)
    return half_log_det_ratio + 0.5 * (_batch_trace_XXT(solved) + gap - n)


# The gamma family against ContinuousBernoulli, Gumbel and Pareto
@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    """E_p[(x - loc)/scale + exp(-(x - loc)/scale)] uses Gamma's Laplace transform."""
    alpha = p.concentration
    rate_scale = p.rate * q.scale
    loc_ratio = q.loc / q.scale
    t1 = (alpha - 1) * digamma(alpha) - lgamma(alpha) - alpha
    t2 = rate_scale.log() + alpha / rate_scale
    t3 = exp(loc_ratio) * (1 + rate_scale.reciprocal()).pow(-alpha) - loc_ratio
    return t1 + t2 + t3


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    """Finite only where Pareto's mean exists (alpha > 1)."""
    expected_log = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - expected_log
    t2 = lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * expected_log
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return _inf_where(p.alpha <= 1, t1 + t2 + t3 + t4 - 1)


# Pairs where q's support misses part of p's: KL is infinite. The parameter named is
# the one whose shape the result takes.
_INFINITE = {
    (Beta, Pareto): "concentration1",
    (ContinuousBernoulli, Pareto): "probs",
    (Exponential, Beta): "rate",
    (Exponential, ContinuousBernoulli): "rate",
    (Exponential, Pareto): "rate",
    (Exponential, Uniform): "rate",
    (Gamma, Beta): "concentration",
    (Gamma, ContinuousBernoulli): "concentration",
    (Gamma, Pareto): "concentration",
    (Gamma, Uniform): "concentration",
    (Gumbel, Beta): "loc",
    (Gumbel, ContinuousBernoulli): "loc",
    (Gumbel, Exponential): "loc",
    (Gumbel, Gamma): "loc",
    (Gumbel, Pareto): "loc",
    (Gumbel, Uniform): "loc",
    (Laplace, Beta): "loc",
    (Laplace, ContinuousBernoulli): "loc",
    (Laplace, Exponential): "loc",
    (Laplace, Gamma): "loc",
    (Laplace, Pareto): "loc",
    (Laplace, Uniform): "loc",
    (Normal, Beta): "loc",
    (Normal, ContinuousBernoulli): "loc",
    (Normal, Exponential): "loc",
    (Normal, Gamma): "loc",
    (Normal, Pareto): "loc",
    (Normal, Uniform): "loc",
    (Pareto, Beta): "scale",
    (Pareto, ContinuousBernoulli): "scale",
    (Pareto, Uniform): "scale",
    (Poisson, Bernoulli): "rate",
    (Poisson, Binomial): "rate",
}


def _register_infinite(type_p, type_q, param):
    def _kl_infinity(p, q):
        return _infinite_like(getattr(p, param))

    _kl_infinity.__name__ = f"_kl_{type_p.__name__.lower()}_infinity"
    register_kl(type_p, type_q)(_kl_infinity)


for (_p, _q), _param in _INFINITE.items():
    _register_infinite(_p, _q, _param)
