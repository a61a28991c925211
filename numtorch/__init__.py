"""numtorch: PyTorch's eager autograd and function transforms over NumPy.

``import numtorch as torch`` and PyTorch code runs unchanged. This module lists every
public name of the ``torch`` namespace that numtorch has.
"""

# ruff: noqa: F401, E402, I001
from __future__ import annotations

import os as _os
import warnings as _warnings

# Like PyTorch, numtorch's kernels do not warn on inf/nan results (log(0), 0/0, overflow).
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"numtorch(\.|$)")

from ._core import heap as _heap  # (malloc's thresholds, before any tensor exists)
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
from . import autograd, fft, func, linalg, nn, signal, special
from . import backends, cuda, utils  # torch.backends; torch.cuda; torch.utils (benchmark)
from . import optim  # torch.optim
from . import distributions  # torch.distributions
from . import distributed  # torch.distributed on MPI (mpi4py loads on first use)
from . import random  # torch.random: seeds, states, fork_rng
from . import _C  # torch._C: the engine's private entry points
from . import _dynamo  # compiled autograd
from . import profiler  # torch.profiler: op and backward-node timing
from . import hub  # torch.hub: hubconf entry points and cached checkpoints
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
from .ops.spectral import istft, stft
from .ops.calculus import cumulative_trapezoid, diff, gradient, trapezoid, trapz
from .ops.windows import (
    bartlett_window,
    blackman_window,
    hamming_window,
    hann_window,
    kaiser_window,
)
from .ops.combine import (
    block_diag,
    cartesian_prod,
    chain_matmul,
    column_stack,
    combinations,
    diagflat,
    msort,
)
from .ops.comparison import allclose, equal, where
from .ops.setops import unique, unique_consecutive
from .ops.statistics import bincount, corrcoef, cov, histc, isin
from .ops.complex import (
    conj,
    is_conj,
    is_neg,
    polar,
    resolve_conj,
    resolve_neg,
    view_as_complex,
    view_as_real,
)
from .ops.unary import positive
from .ops.binary import true_divide
from .ops.clamp import clamp
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
from .ops.splits import chunk, split, tensor_split, unbind
from .ops.views import (
    adjoint,
    broadcast_shapes,
    broadcast_tensors,
    moveaxis,
    swapaxes,
    swapdims,
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
    celu,
    celu_,
    hardshrink,
    prelu,
    rrelu,
    rrelu_,
    selu,
    selu_,
    threshold,
    threshold_,
)
from .ops.segment import segment_reduce
from .nn._aten_nn import (
    affine_grid_generator,
    conv_tbc,
    convolution,
    embedding_bag,
    grid_sampler,
    grid_sampler_2d,
    grid_sampler_3d,
)
from .nn._aten_norm import (
    batch_norm_backward_elemt,
    batch_norm_backward_reduce,
    batch_norm_elemt,
    batch_norm_gather_stats,
    batch_norm_gather_stats_with_counts,
    batch_norm_stats,
    batch_norm_update_stats,
    native_batch_norm,
    native_dropout,
    native_group_norm,
    native_layer_norm,
    native_norm,
    norm_except_dim,
)
from .nn.utils.weight_norm import _weight_norm  # torch._weight_norm
from .nn._conv import (
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
)
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
    clamp as _clamp,
    shape as _shape,
    reduction as _reduction,
    indexing as _indexing,
    views as _views,
    view_scatters as _view_scatters,
    linalg as _linalg,
    random as _random,
)

# conversion
clone = _conversion.clone_p.fn

# comparison
eq = _comparison.eq_p.fn
ge = _comparison.ge_p.fn
greater = _comparison.gt_p.fn
greater_equal = _comparison.ge_p.fn
gt = _comparison.gt_p.fn
isclose = _comparison.isclose_p.fn
le = _comparison.le_p.fn
less = _comparison.lt_p.fn
less_equal = _comparison.le_p.fn
logical_and = _comparison.logical_and_p.fn
logical_not = _comparison.logical_not_p.fn
logical_or = _comparison.logical_or_p.fn
logical_xor = _comparison.logical_xor_p.fn
lt = _comparison.lt_p.fn
ne = _comparison.ne_p.fn
not_equal = _comparison.ne_p.fn

# unary
abs = _unary.abs_p.fn
absolute = _unary.abs_p.fn
acos = _unary.acos_p.fn
acosh = _unary.acosh_p.fn
angle = _unary.angle_p.fn
arccos = _unary.acos_p.fn
arccosh = _unary.acosh_p.fn
arcsin = _unary.asin_p.fn
arcsinh = _unary.asinh_p.fn
arctan = _unary.atan_p.fn
arctanh = _unary.atanh_p.fn
asin = _unary.asin_p.fn
asinh = _unary.asinh_p.fn
atan = _unary.atan_p.fn
atanh = _unary.atanh_p.fn
bitwise_not = _unary.bitwise_not_p.fn
ceil = _unary.ceil_p.fn
conj_physical = _unary.conj_physical_p.fn
cos = _unary.cos_p.fn
cosh = _unary.cosh_p.fn
deg2rad = _unary.deg2rad_p.fn
erf = _unary.erf_p.fn
erfc = _unary.erfc_p.fn
erfinv = _unary.erfinv_p.fn
exp = _unary.exp_p.fn
exp2 = _unary.exp2_p.fn
expm1 = _unary.expm1_p.fn
fix = _unary.trunc_p.fn
floor = _unary.floor_p.fn
frac = _unary.frac_p.fn
isfinite = _unary.isfinite_p.fn
isinf = _unary.isinf_p.fn
isnan = _unary.isnan_p.fn
isneginf = _unary.isneginf_p.fn
isposinf = _unary.isposinf_p.fn
isreal = _unary.isreal_p.fn
log = _unary.log_p.fn
log10 = _unary.log10_p.fn
log1p = _unary.log1p_p.fn
log2 = _unary.log2_p.fn
logit = _unary.logit_p.fn
nan_to_num = _unary.nan_to_num_p.fn
neg = _unary.neg_p.fn
negative = _unary.neg_p.fn
rad2deg = _unary.rad2deg_p.fn
reciprocal = _unary.reciprocal_p.fn
relu = _unary.relu_p.fn
round = _unary.round_p.fn
rsqrt = _unary.rsqrt_p.fn
sgn = _unary.sgn_p.fn
sigmoid = _unary.sigmoid_p.fn
sign = _unary.sign_p.fn
signbit = _unary.signbit_p.fn
sin = _unary.sin_p.fn
sinh = _unary.sinh_p.fn
sqrt = _unary.sqrt_p.fn
square = _unary.square_p.fn
tan = _unary.tan_p.fn
tanh = _unary.tanh_p.fn
trunc = _unary.trunc_p.fn

# binary
add = _binary.add_p.fn
addcdiv = _binary.addcdiv_p.fn
addcmul = _binary.addcmul_p.fn
arctan2 = _binary.atan2_p.fn
atan2 = _binary.atan2_p.fn
bitwise_and = _binary.bitwise_and_p.fn
bitwise_left_shift = _binary.bitwise_left_shift_p.fn
bitwise_or = _binary.bitwise_or_p.fn
bitwise_right_shift = _binary.bitwise_right_shift_p.fn
bitwise_xor = _binary.bitwise_xor_p.fn
clamp_max = _clamp.clamp_max_p.fn
clamp_min = _clamp.clamp_min_p.fn
clip = _clamp.clip
copysign = _binary.copysign_p.fn
div = _binary.div_p.fn
divide = _binary.div_p.fn
float_power = _binary.float_power_p.fn
floor_divide = _binary.floor_divide_p.fn
fmax = _binary.fmax_p.fn
fmin = _binary.fmin_p.fn
fmod = _binary.fmod_p.fn
hypot = _binary.hypot_p.fn
lerp = _binary.lerp_p.fn
logaddexp = _binary.logaddexp_p.fn
logaddexp2 = _binary.logaddexp2_p.fn
maximum = _binary.maximum_p.fn
minimum = _binary.minimum_p.fn
mul = _binary.mul_p.fn
multiply = _binary.mul_p.fn
pow = _binary.pow_p.fn
remainder = _binary.remainder_p.fn
rsub = _binary.rsub_p.fn
sub = _binary.sub_p.fn
subtract = _binary.sub_p.fn
xlogy = _binary.xlogy_p.fn

# integer math and floating-point parts
from .ops import float_parts as _float_parts, integer_math as _integer_math

frexp = _float_parts.frexp
gcd = _integer_math.gcd_p.fn
heaviside = _float_parts.heaviside
lcm = _integer_math.lcm_p.fn
ldexp = _float_parts.ldexp
nextafter = _float_parts.nextafter_p.fn
gcd_, lcm_, ldexp_ = _unary.inplace_functions("gcd lcm ldexp")

# shape
cat = _shape.cat_p.fn
diag = _shape.diag_p.fn
diag_embed = _shape.diag_embed_p.fn
dstack = _shape.dstack_p.fn
flip = _shape.flip_p.fn
hstack = _shape.hstack_p.fn
repeat_interleave = _shape._repeat_interleave_fn
roll = _shape.roll_p.fn
rot90 = _shape.rot90_p.fn
stack = _shape.stack_p.fn
tile = _shape.tile_p.fn
tril = _shape.tril_p.fn
triu = _shape.triu_p.fn
vstack = _shape.vstack_p.fn

# reduction
all = _reduction.all_p.fn
amax = _reduction.amax_p.fn
amin = _reduction.amin_p.fn
any = _reduction.any_p.fn
argmax = _reduction.argmax_p.fn
argmin = _reduction.argmin_p.fn
argsort = _reduction.argsort_p.fn
count_nonzero = _reduction.count_nonzero_p.fn
cumprod = _reduction.cumprod_p.fn
cumsum = _reduction.cumsum_p.fn
logcumsumexp = _reduction.logcumsumexp_p.fn
logsumexp = _reduction.logsumexp_p.fn
mean = _reduction.mean_p.fn
nanmean = _reduction.nanmean_p.fn
nansum = _reduction.nansum_p.fn
prod = _reduction.prod_p.fn
sum = _reduction.sum_p.fn

# indexing
argwhere = _indexing.argwhere_p.fn
fill = _indexing.fill_p.fn
masked_fill = _indexing.masked_fill_p.fn
masked_scatter = _indexing.masked_scatter_p.fn
masked_select = _indexing.masked_select_p.fn
put = _indexing.put_p.fn
scatter_add = _indexing.scatter_add
scatter_reduce_weights = _indexing.sr_stats_p.fn
take = _indexing.take_p.fn
take_along_dim = _indexing.take_along_dim_p.fn

# views
broadcast_to = _views.broadcast_to_p.fn
diagonal = _views.diagonal_p.fn
flatten = _views.flatten_or_self
movedim = _views.movedim_p.fn
narrow = _views.narrow_p.fn
permute = _views.permute_p.fn
ravel = _views.ravel_p.fn
reshape = _views.reshape_p.fn
select = _views.select_p.fn
squeeze = _views.squeeze_p.fn
t = _views.t_p.fn
transpose = _views.transpose_p.fn
unflatten = _views.unflatten_p.fn
unsqueeze = _views.unsqueeze_p.fn
view_scatter = _views.view_scatter_p.fn

# view copies: the view, copied into a new tensor
from .ops import view_copies as _view_copies

alias_copy = _view_copies.alias_copy_p.fn
as_strided_copy = _view_copies.as_strided_copy
detach_copy = _view_copies.detach_copy_p.fn
diagonal_copy = _view_copies.diagonal_copy_p.fn
expand_copy = _view_copies.expand_copy_p.fn
narrow_copy = _view_copies.narrow_copy_p.fn
permute_copy = _view_copies.permute_copy_p.fn
select_copy = _view_copies.select_copy_p.fn
slice_copy = _view_copies.slice_copy_p.fn
split_copy = _view_copies.split_copy_p.fn
view_as_real_copy = _view_copies.view_as_real_copy_p.fn
view_as_complex_copy = _view_copies.view_as_complex_copy_p.fn
split_with_sizes_copy = _view_copies.split_with_sizes_copy_p.fn
squeeze_copy = _view_copies.squeeze_copy_p.fn
t_copy = _view_copies.t_copy_p.fn
transpose_copy = _view_copies.transpose_copy_p.fn
unbind_copy = _view_copies.unbind_copy_p.fn
unfold_copy = _view_copies.unfold_copy_p.fn
unsqueeze_copy = _view_copies.unsqueeze_copy_p.fn
view_copy = _view_copies.view_copy_p.fn

# view scatters
diagonal_scatter = _view_scatters.diagonal_scatter_p.fn
as_strided_scatter = _view_scatters.as_strided_scatter
select_scatter = _view_scatters.select_scatter_p.fn
slice_scatter = _view_scatters.slice_scatter_p.fn

# linalg
addbmm = _linalg.addbmm_p.fn
addmm = _linalg.addmm_p.fn
addmv = _linalg.addmv_p.fn
baddbmm = _linalg.baddbmm_p.fn
bmm = _linalg.bmm_p.fn
dot = _linalg.dot_p.fn
ger = _linalg.outer_p.fn
matmul = _linalg.matmul_p.fn
matrix_exp = _linalg.linalg_matrix_exp_p.fn
matrix_power = _linalg.matrix_power_legacy
mm = _linalg.mm_p.fn
mv = _linalg.mv_p.fn
norm = _linalg.torch_norm
outer = _linalg.outer_p.fn
qr = _linalg.qr_legacy
svd = _linalg.svd_legacy
trace = _linalg.trace_p.fn
vdot = _linalg.vdot_p.fn

# random
_inplace_random_check = _random._inplace_random_check_p.fn
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
complex32, complex64, complex128 = _dt.complex32, _dt.complex64, _dt.complex128
bfloat16 = _dt.bfloat16
float8_e4m3fn, float8_e5m2 = _dt.float8_e4m3fn, _dt.float8_e5m2
float8_e4m3fnuz, float8_e5m2fnuz = _dt.float8_e4m3fnuz, _dt.float8_e5m2fnuz
float8_e8m0fnu = _dt.float8_e8m0fnu
half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
chalf, cfloat, cdouble = complex32, complex64, complex128
dtype = _dt.dtype


constant_pad_nd = _padding.constant_pad_nd_p.fn

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

digamma = _special_ops.digamma_p.fn
i0 = _special_ops.i0_p.fn
lgamma = _special_ops.lgamma_p.fn
mvlgamma = _special_ops.mvlgamma_p.fn
polygamma = _special_ops.polygamma
sinc = _special_ops.sinc_p.fn
addr = _linalg.addr_p.fn
from .ops.linalg import dist
from .ops.linalg import frobenius_norm, lu_unpack, nuclear_norm, vander
from .ops.linalg import (
    geqrf,
    lobpcg,
    orgqr,
    ormqr,
    pca_lowrank,
    svd_lowrank,
    triangular_solve,
)
from .ops.linalg import torch_lu as lu
from .ops.linalg import torch_lu_solve as lu_solve
from .ops.linalg.removed import eig, lstsq, matrix_rank, solve, symeig
from .ops.reduction import aminmax, nanmedian, renorm
from .ops.splits import dsplit, hsplit, vsplit
from .ops.index_reduce import index_reduce
from .ops.strided import as_strided, imag, real

# torch's private gradients of softmax and log_softmax
_softmax_backward_data = _ops.reduction._softmax_backward_data_p.fn
_log_softmax_backward_data = _ops.reduction._log_softmax_backward_data_p.fn

# torch's private transforms under torch.fft
_fft_c2c = _ops.fft.fft_c2c_p.fn
_fft_r2c = _ops.fft.fft_r2c_p.fn
_fft_c2r = _ops.fft.fft_c2r_p.fn

i0_, sinc_ = _unary.inplace_functions("i0 sinc")

# splits, factories and queries of the torch namespace
import math as _math

from .ops.splits import split_with_sizes, unsafe_chunk, unsafe_split, unsafe_split_with_sizes
from .ops.creation import _efficientzerotensor, empty_permuted, empty_strided  # noqa: E402
from .ops.indexing.positions import nonzero_static
from .ops.tensor_extras import (
    detach,
    detach_,
    from_dlpack,
    get_device,
    init_num_threads,
    is_inference,
    is_storage,
    to_dlpack,
    is_nonzero,
    is_same_size,
    is_signed,
    typename,
)
from .nn._dropout import alpha_dropout_, feature_alpha_dropout_, feature_dropout, feature_dropout_
from .nn._embedding import embedding_renorm_
from ._core.layout import layout, strided

# torch.<name>_(input, ...): the in-place method as a function
(
    addmv_,
    as_strided_,
    clamp_,
    clamp_max_,
    clamp_min_,
    clip_,
    conj_physical_,
    resize_as_,
) = _unary.inplace_functions(
    "addmv as_strided clamp clamp_max clamp_min clip conj_physical resize_as"
)

e, pi, inf, nan = _math.e, _math.pi, _math.inf, _math.nan
newaxis = None

# settings
from ._core.printing import set_printoptions
from ._settings import (
    are_deterministic_algorithms_enabled,
    compiled_with_cxx11_abi,
    get_deterministic_debug_mode,
    get_float32_matmul_precision,
    get_num_interop_threads,
    get_num_threads,
    has_lapack,
    has_mkl,
    has_openmp,
    has_spectral,
    is_deterministic_algorithms_warn_only_enabled,
    is_vulkan_available,
    is_warn_always_enabled,
    set_default_tensor_type,
    set_deterministic_debug_mode,
    set_float32_matmul_precision,
    set_flush_denormal,
    set_num_interop_threads,
    set_num_threads,
    set_warn_always,
    use_deterministic_algorithms,
)

from .signal import windows  # (torch.windows is torch.signal.windows)


def thread_safe_generator():
    """The generator of the current DataLoader thread worker: None outside one (numtorch's
    workers are processes), so the default generator serves."""
    return None


complex = _ops.complex.complex_p.fn  # (shadows the builtin from here on)

# incomplete gamma functions
from .ops import gamma as _gamma

igamma = _gamma.igamma_p.fn
igammac = _gamma.igammac_p.fn
xlogy_ = _unary.inplace_functions("xlogy")[0]

# grids, index arithmetic, factories from data
from .ops.grids import meshgrid, tril_indices, triu_indices, unravel_index
from .ops.from_data import asarray, frombuffer, range, result_type, scalar_tensor
from .ops.quantile import nanquantile, quantile
from .ops.bins import bucketize, histogram, histogramdd, searchsorted
from .ops.random_counts import binomial, multinomial, poisson
from .ops.random_gamma import (
    _dirichlet_grad,
    _sample_dirichlet,
    _standard_gamma,
    _standard_gamma_grad,
)

# NumPy's axis=/keepdims= for dim=/keepdim=, as PyTorch's argument parser takes them
from ._core.signature import numpy_keywords_in as _numpy_keywords_in

_numpy_keywords_in(globals(), "torch")

# torch.__version__, torch.version, torch.torch_version; standing in for torch (issue 33)
from . import torch_version, version
from ._install import install_as_torch
from .torch_version import __version__

# Submodules that use the package face itself load on first touch (PEP 562), as no cycle.
_LAZY_SUBMODULES = frozenset({"testing"})


def __getattr__(name: str):
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY_SUBMODULES)


# automatic mixed precision: torch.amp, autocast regions and their state
from . import amp
from .amp import GradScaler, autocast
from .amp.autocast_mode import (
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    get_autocast_gpu_dtype,
    get_autocast_ipu_dtype,
    get_autocast_xla_dtype,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    is_autocast_ipu_enabled,
    is_autocast_xla_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
    set_autocast_gpu_dtype,
    set_autocast_ipu_dtype,
    set_autocast_ipu_enabled,
    set_autocast_xla_dtype,
    set_autocast_xla_enabled,
)
from . import cpu  # torch.cpu (its deprecated amp spellings)

# issue 33 (jit, legacy types): torch.jit; torch.functional's names
from . import jit  # torch.jit: script and trace over numtorch.compile
from . import functional  # noqa: F811 - torch.functional, not the autograd one imported above
from ._tensor_types import (  # the legacy tensor types, as constructors and isinstance targets
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    cuda_types as _cuda_types,
)

for _name, _type in _cuda_types().items():
    setattr(cuda, _name, _type)  # torch.cuda.FloatTensor and its kin
del _name, _type

# issue 33 (libraries' test suites: einops, tensorly, torchdiffeq, pytorch-minimize, entmax)
from . import _vmap_internals  # torch._vmap_internals: the first vmap, which libraries import
from ._core.memory_format import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    legacy_contiguous_format,
    memory_format,
    preserve_format,
)

# issue 34: the CPU stand-in for CuPy, when the environment asks for it
if _os.environ.get("NUMTORCH_CUPY_STANDIN"):
    from .testing import _cupy_standin

    _cupy_standin.enable(strict=_os.environ["NUMTORCH_CUPY_STANDIN"] == "strict")
    if _os.environ["NUMTORCH_CUPY_STANDIN"] == "strict":
        import atexit as _atexit

        _atexit.register(_cupy_standin.report)
