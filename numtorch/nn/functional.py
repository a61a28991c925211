"""torch.nn.functional: the public functions of this namespace, listed here."""

# ruff: noqa: F401
from ..ops import indexing as _indexing
from ..ops import reduction as _reduction
from ..ops.random import dropout
from ._loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    cross_entropy,
    ctc_loss,
    gaussian_nll_loss,
    hinge_embedding_loss,
    huber_loss,
    kl_div,
    l1_loss,
    margin_ranking_loss,
    mse_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    nll_loss,
    poisson_nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)

# reduction
log_softmax = _reduction.nn_log_softmax
softmax = _reduction.nn_softmax

# indexing
one_hot = _indexing.one_hot.fn
