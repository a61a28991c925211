"""numtorch: PyTorch's eager autograd and function transforms over NumPy.

``import numtorch as torch`` and PyTorch code runs unchanged. This module lists every
public name of the ``torch`` namespace that numtorch has.
"""

# ruff: noqa: F401, E402, I001
from __future__ import annotations

import warnings as _warnings

# Like PyTorch, numtorch's kernels do not warn on inf/nan results (log(0), 0/0, overflow).
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"numtorch(\.|$)")

from ._core import dtype as _dt
from ._core.device import device, get_default_device, is_cuda_available, set_default_device
from ._core.dtype import (
    can_cast,
    finfo,
    get_default_dtype,
    iinfo,
    promote_types,
    set_default_dtype,
)
from ._core.state import (
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    set_anomaly_enabled,
)
from ._core.tensor import Size, Tensor
from . import ops as _ops  # registers every op and declares the Tensor methods
from . import autograd, func, linalg, nn, special
from . import cuda, utils  # torch.cuda; torch.utils (benchmark)
from . import optim  # torch.optim
from . import _C  # torch._C: the engine's private entry points
from . import _dynamo  # compiled autograd
from ._compile import compile  # torch.compile
from .autograd import forward_ad, functional  # torch.autograd.functional, .forward_ad
from .autograd import enable_grad, inference_mode, no_grad, set_grad_enabled
from .func import vmap

from .ops.creation import (
    Generator,
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    get_rng_state,
    initial_seed,
    linspace,
    logspace,
    manual_seed,
    ones,
    ones_like,
    seed,
    set_rng_state,
    tensor,
    zeros,
    zeros_like,
)
from .ops.comparison import allclose, equal, where
from .ops.setops import unique, unique_consecutive
from .ops.unary import conj, positive
from .ops.binary import clamp, true_divide
from .ops.shape import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    concat,
    concatenate,
    fliplr,
    flipud,
    row_stack,
)
from .ops.views import (
    adjoint,
    broadcast_shapes,
    broadcast_tensors,
    chunk,
    moveaxis,
    split,
    swapaxes,
    swapdims,
    tensor_split,
    unbind,
)
from .ops.reduction import (
    cummax,
    cummin,
    kthvalue,
    mode,
    log_softmax,
    max,
    median,
    min,
    softmax,
    sort,
    std,
    std_mean,
    topk,
    var,
    var_mean,
)
from .ops.indexing import (
    fill_,
    gather,
    index_add,
    index_copy,
    index_fill,
    index_put,
    index_put_,
    index_select,
    nonzero,
    scatter,
    scatter_reduce,
    zero_,
)
from .ops.linalg import (
    cholesky,
    cholesky_inverse,
    cholesky_solve,
    cross,
    det,
    einsum,
    inner,
    inverse,
    kron,
    logdet,
    pinverse,
    slogdet,
    tensordot,
)
from .nn._activation import (
    celu, celu_, hardshrink, prelu, rrelu, rrelu_, selu, selu_, threshold, threshold_,
)  # fmt: skip
from .nn._conv import (
    conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d,
)  # fmt: skip
from .nn._pool_adaptive import adaptive_avg_pool1d
from .nn._pool_adaptive import adaptive_max_pool1d_with_indices as adaptive_max_pool1d
from .nn._pool_avg import avg_pool1d
from .nn._pool_max import max_pool1d, max_pool1d_with_indices, max_pool2d, max_pool3d
from .nn._distance import cdist, cosine_similarity, pairwise_distance, pdist
from .nn._dropout import alpha_dropout, feature_alpha_dropout
from .nn._embedding import torch_embedding as embedding
from .nn._linear import bilinear
from .nn._loss_aten import ATEN_LOSSES as _aten_losses
from .nn import _padding
from .nn._resample import channel_shuffle, native_channel_shuffle, pixel_shuffle, pixel_unshuffle
from .nn._norm import rms_norm
from .nn._norm import torch_batch_norm as batch_norm
from .nn._norm import torch_group_norm as group_norm
from .nn._norm import torch_instance_norm as instance_norm
from .nn._norm import torch_layer_norm as layer_norm
from .ops.random import (
    bernoulli,
    dropout_,
    normal,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
)
from .nn._recurrent import (
    gru,
    gru_cell,
    lstm,
    lstm_cell,
    rnn_relu,
    rnn_relu_cell,
    rnn_tanh,
    rnn_tanh_cell,
)
from . import serialization  # torch.save / torch.load (PyTorch's checkpoint format)
from .serialization import load, save
from .ops import (
    creation as _creation,
    conversion as _conversion,
    comparison as _comparison,
    unary as _unary,
    binary as _binary,
    shape as _shape,
    reduction as _reduction,
    indexing as _indexing,
    views as _views,
    linalg as _linalg,
    random as _random,
)

# conversion
clone = _conversion.clone.fn

# comparison
eq = _comparison.eq.fn
ge = _comparison.ge.fn
greater = _comparison.gt.fn
greater_equal = _comparison.ge.fn
gt = _comparison.gt.fn
isclose = _comparison.isclose.fn
le = _comparison.le.fn
less = _comparison.lt.fn
less_equal = _comparison.le.fn
logical_and = _comparison.logical_and.fn
logical_not = _comparison.logical_not.fn
logical_or = _comparison.logical_or.fn
logical_xor = _comparison.logical_xor.fn
lt = _comparison.lt.fn
ne = _comparison.ne.fn
not_equal = _comparison.ne.fn

# unary
abs = _unary.abs.fn
absolute = _unary.abs.fn
acos = _unary.acos.fn
acosh = _unary.acosh.fn
angle = _unary.angle.fn
arccos = _unary.acos.fn
arccosh = _unary.acosh.fn
arcsin = _unary.asin.fn
arcsinh = _unary.asinh.fn
arctan = _unary.atan.fn
arctanh = _unary.atanh.fn
asin = _unary.asin.fn
asinh = _unary.asinh.fn
atan = _unary.atan.fn
atanh = _unary.atanh.fn
bitwise_not = _unary.bitwise_not.fn
ceil = _unary.ceil.fn
conj_physical = _unary.conj_physical.fn
cos = _unary.cos.fn
cosh = _unary.cosh.fn
deg2rad = _unary.deg2rad.fn
erf = _unary.erf.fn
erfc = _unary.erfc.fn
erfinv = _unary.erfinv.fn
exp = _unary.exp.fn
exp2 = _unary.exp2.fn
expm1 = _unary.expm1.fn
fix = _unary.trunc.fn
floor = _unary.floor.fn
frac = _unary.frac.fn
isfinite = _unary.isfinite.fn
isinf = _unary.isinf.fn
isnan = _unary.isnan.fn
isneginf = _unary.isneginf.fn
isposinf = _unary.isposinf.fn
isreal = _unary.isreal.fn
log = _unary.log.fn
log10 = _unary.log10.fn
log1p = _unary.log1p.fn
log2 = _unary.log2.fn
logit = _unary.logit.fn
nan_to_num = _unary.nan_to_num.fn
neg = _unary.neg.fn
negative = _unary.neg.fn
rad2deg = _unary.rad2deg.fn
reciprocal = _unary.reciprocal.fn
relu = _unary.relu.fn
resolve_conj = _unary._identity
resolve_neg = _unary._identity
round = _unary.round.fn
rsqrt = _unary.rsqrt.fn
sgn = _unary.sgn.fn
sigmoid = _unary.sigmoid.fn
sign = _unary.sign.fn
signbit = _unary.signbit.fn
sin = _unary.sin.fn
sinh = _unary.sinh.fn
sqrt = _unary.sqrt.fn
square = _unary.square.fn
tan = _unary.tan.fn
tanh = _unary.tanh.fn
trunc = _unary.trunc.fn

# binary
add = _binary.add.fn
addcdiv = _binary.addcdiv.fn
addcmul = _binary.addcmul.fn
arctan2 = _binary.atan2.fn
atan2 = _binary.atan2.fn
bitwise_and = _binary.bitwise_and.fn
bitwise_left_shift = _binary.bitwise_left_shift.fn
bitwise_or = _binary.bitwise_or.fn
bitwise_right_shift = _binary.bitwise_right_shift.fn
bitwise_xor = _binary.bitwise_xor.fn
clamp_max = _binary.clamp_max.fn
clamp_min = _binary.clamp_min.fn
clip = _binary.clamp
copysign = _binary.copysign.fn
div = _binary.div.fn
divide = _binary.div.fn
float_power = _binary.float_power.fn
floor_divide = _binary.floor_divide.fn
fmax = _binary.fmax.fn
fmin = _binary.fmin.fn
fmod = _binary.fmod.fn
hypot = _binary.hypot.fn
lerp = _binary.lerp.fn
logaddexp = _binary.logaddexp.fn
logaddexp2 = _binary.logaddexp2.fn
maximum = _binary.maximum.fn
minimum = _binary.minimum.fn
mul = _binary.mul.fn
multiply = _binary.mul.fn
pow = _binary.pow.fn
remainder = _binary.remainder.fn
rsub = _binary.rsub.fn
sub = _binary.sub.fn
subtract = _binary.sub.fn
xlogy = _binary.xlogy.fn

# shape
cat = _shape.cat.fn
diag = _shape.diag.fn
diag_embed = _shape.diag_embed.fn
dstack = _shape.dstack.fn
flip = _shape.flip.fn
hstack = _shape.hstack.fn
repeat_interleave = _shape._repeat_interleave_fn
roll = _shape.roll.fn
rot90 = _shape.rot90.fn
stack = _shape.stack.fn
tile = _shape.tile.fn
tril = _shape.tril.fn
triu = _shape.triu.fn
vstack = _shape.vstack.fn

# reduction
all = _reduction.all.fn
amax = _reduction.amax.fn
amin = _reduction.amin.fn
any = _reduction.any.fn
argmax = _reduction.argmax.fn
argmin = _reduction.argmin.fn
argsort = _reduction.argsort.fn
count_nonzero = _reduction.count_nonzero.fn
cumprod = _reduction.cumprod.fn
cumsum = _reduction.cumsum.fn
logcumsumexp = _reduction.logcumsumexp.fn
logsumexp = _reduction.logsumexp.fn
mean = _reduction.mean.fn
nanmean = _reduction.nanmean.fn
nansum = _reduction.nansum.fn
prod = _reduction.prod.fn
sum = _reduction.sum.fn

# indexing
argwhere = _indexing.argwhere.fn
fill = _indexing.fill.fn
masked_fill = _indexing.masked_fill_op.fn
masked_scatter = _indexing.masked_scatter_op.fn
masked_select = _indexing.masked_select.fn
put = _indexing.put_op.fn
scatter_add = _indexing.scatter_add_fn
scatter_reduce_weights = _indexing.sr_stats.fn
take = _indexing.take.fn
take_along_dim = _indexing.take_along_dim.fn

# views
broadcast_to = _views.broadcast_to.fn
diagonal = _views.diagonal.fn
flatten = _views.flatten_or_self
movedim = _views.movedim.fn
narrow = _views.narrow.fn
permute = _views.permute.fn
ravel = _views.ravel.fn
reshape = _views.reshape.fn
select = _views.select.fn
squeeze = _views.squeeze.fn
t = _views.t.fn
transpose = _views.transpose.fn
unflatten = _views.unflatten.fn
unsqueeze = _views.unsqueeze.fn
view_scatter = _views.view_scatter.fn

# linalg
addbmm = _linalg.addbmm.fn
addmm = _linalg.addmm.fn
addmv = _linalg.addmv.fn
baddbmm = _linalg.baddbmm.fn
bmm = _linalg.bmm.fn
dot = _linalg.dot.fn
ger = _linalg.outer.fn
matmul = _linalg.matmul.fn
matrix_exp = _linalg.linalg_matrix_exp.fn
matrix_power = _linalg.matrix_power_legacy
mm = _linalg.mm.fn
mv = _linalg.mv.fn
norm = _linalg.torch_norm
outer = _linalg.outer.fn
qr = _linalg.qr_legacy
svd = _linalg.svd_legacy
trace = _linalg.trace.fn
vdot = _linalg.vdot.fn

# random
_inplace_random_check = _random._inplace_random_check.fn
dropout = _random._torch_dropout

# torch.<name>_(input): the in-place method as a function
(
    abs_,
    exp_,
    exp2_,
    expm1_,
    log_,
    log2_,
    log10_,
    log1p_,
    sqrt_,
    rsqrt_,
    square_,
    sin_,
    cos_,
    tan_,
    asin_,
    acos_,
    atan_,
    sinh_,
    cosh_,
    tanh_,
    asinh_,
    acosh_,
    atanh_,
    arcsin_,
    arccos_,
    arctan_,
    arcsinh_,
    arccosh_,
    arctanh_,
    sigmoid_,
    logit_,
    relu_,
    erf_,
    erfc_,
    reciprocal_,
    floor_,
    ceil_,
    round_,
    trunc_,
    fix_,
    frac_,
    nan_to_num_,
    deg2rad_,
    rad2deg_,
    neg_,
    negative_,
) = _unary.inplace_functions(
    "abs exp exp2 expm1 log log2 log10 log1p sqrt rsqrt square sin cos tan asin acos atan sinh "
    "cosh tanh asinh acosh atanh arcsin arccos arctan arcsinh arccosh arctanh sigmoid logit "
    "relu erf erfc reciprocal floor ceil round trunc fix frac nan_to_num deg2rad rad2deg neg "
    "negative"
)
default_generator = _creation._generators["cpu"]

bool = _dt.bool_
uint8, int8, int16, int32, int64 = _dt.uint8, _dt.int8, _dt.int16, _dt.int32, _dt.int64
float16, float32, float64 = _dt.float16, _dt.float32, _dt.float64
complex64, complex128 = _dt.complex64, _dt.complex128
half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128
dtype = _dt.dtype


constant_pad_nd = _padding.constant_pad_nd.fn

# losses in ATen's form (an integer reduction)
binary_cross_entropy_with_logits = _aten_losses["binary_cross_entropy_with_logits"]
cosine_embedding_loss = _aten_losses["cosine_embedding_loss"]
ctc_loss = _aten_losses["ctc_loss"]
hinge_embedding_loss = _aten_losses["hinge_embedding_loss"]
kl_div = _aten_losses["kl_div"]
margin_ranking_loss = _aten_losses["margin_ranking_loss"]
poisson_nll_loss = _aten_losses["poisson_nll_loss"]
triplet_margin_loss = _aten_losses["triplet_margin_loss"]


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:
    return input.is_floating_point()


def is_complex(input: Tensor) -> bool:
    return input.is_complex()


def numel(input: Tensor) -> int:
    return input.numel()


del annotations

# special functions, reductions, splits and linalg added for issue 14
from .ops import special as _special_ops

digamma = _special_ops.digamma.fn
i0 = _special_ops.i0.fn
lgamma = _special_ops.lgamma.fn
mvlgamma = _special_ops.mvlgamma.fn
polygamma = _special_ops.polygamma_fn
sinc = _special_ops.sinc.fn
addr = _linalg.addr.fn
from .ops.linalg import dist
from .ops.reduction import aminmax, nanmedian, renorm
from .ops.views import dsplit, hsplit, vsplit
from .ops.index_reduce import index_reduce
from .ops.strided import as_strided, imag, real

# torch's private gradients of softmax and log_softmax
_softmax_backward_data = _ops.reduction._softmax_backward_data_op.fn
_log_softmax_backward_data = _ops.reduction._log_softmax_backward_data_op.fn

i0_, sinc_ = _unary.inplace_functions("i0 sinc")

# NumPy's axis=/keepdims= for dim=/keepdim=, as PyTorch's argument parser takes them
from ._core.signature import numpy_keywords_in as _numpy_keywords_in

_numpy_keywords_in(globals(), "torch")
