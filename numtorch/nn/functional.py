"""torch.nn.functional: the public functions of this namespace, listed here."""

# ruff: noqa: F401
from ..ops import indexing as _indexing
from ..ops import reduction as _reduction
from ..ops.random import dropout
from ._activation import (
    celu,
    celu_,
    elu,
    elu_,
    gelu,
    glu,
    gumbel_softmax,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    relu_,
    rrelu,
    rrelu_,
    selu,
    selu_,
    sigmoid,
    silu,
    softmin,
    softplus,
    softshrink,
    softsign,
    tanh,
    tanhshrink,
    threshold,
    threshold_,
)
from ._aten_nn import conv_tbc
from ._attention import multi_head_attention_forward, scaled_dot_product_attention

# convolution
from ._conv import (
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    fold,
    unfold,
)
from ._distance import cosine_similarity, pairwise_distance, pdist
from ._dropout import alpha_dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout
from ._embedding import embedding, embedding_bag
from ._grouped_mm import ScalingType, SwizzleType, grouped_mm, scaled_grouped_mm, scaled_mm
from ._linear import bilinear, linear
from ._loss_classification import cross_entropy, linear_cross_entropy, nll_loss
from ._loss_ctc import ctc_loss
from ._loss_likelihood import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    gaussian_nll_loss,
    kl_div,
    poisson_nll_loss,
)
from ._loss_margin import (
    cosine_embedding_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from ._loss_regression import huber_loss, l1_loss, mse_loss, smooth_l1_loss
from ._norm import (
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
    normalize,
    rms_norm,
)

# padding and resampling
from ._padding import pad

# pooling
from ._pool_adaptive import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
)
from ._pool_avg import avg_pool1d, avg_pool2d, avg_pool3d, lp_pool1d, lp_pool2d, lp_pool3d
from ._pool_fractional import (
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)
from ._pool_max import (
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
    max_pool3d,
    max_pool3d_with_indices,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from ._resample import (
    affine_grid,
    channel_shuffle,
    grid_sample,
    interpolate,
    native_channel_shuffle,
    pixel_shuffle,
    pixel_unshuffle,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)

# reduction
log_softmax = _reduction.nn_log_softmax
softmax = _reduction.nn_softmax

# indexing
one_hot = _indexing.one_hot_p.fn

# NumPy's names (x= for input=, axis= for dim=, ...) in the functions PyTorch parses
from .._core.signature import numpy_keywords_in as _numpy_keywords_in  # noqa: E402

_numpy_keywords_in(globals(), "nn.functional")
