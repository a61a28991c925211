"""torch.nn.functional: the public functions of this namespace, listed here."""

# ruff: noqa: F401
from ..ops import indexing as _indexing
from ..ops import reduction as _reduction
from ..ops.random import dropout
from ._attention import scaled_dot_product_attention
from ._distance import cosine_similarity, pairwise_distance, pdist
from ._embedding import embedding, embedding_bag
from ._linear import bilinear, linear

# reduction
log_softmax = _reduction.nn_log_softmax
softmax = _reduction.nn_softmax

# indexing
one_hot = _indexing.one_hot.fn
