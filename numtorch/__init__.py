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
from ._core.device import device, is_cuda_available
from ._core.dtype import (
    can_cast,
    finfo,
    get_default_dtype,
    iinfo,
    promote_types,
    set_default_dtype,
)
from ._core.state import is_grad_enabled, is_inference_mode_enabled
from ._core.tensor import Size, Tensor
from . import ops as _ops  # registers every op and declares the Tensor methods
from . import autograd, func, linalg, nn, special
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
from .ops.pointwise import conj, positive
from .ops.binary import clamp, true_divide
from .ops.shape import (
    adjoint,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    broadcast_shapes,
    broadcast_tensors,
    chunk,
    concat,
    concatenate,
    fliplr,
    flipud,
    moveaxis,
    row_stack,
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
from .ops import (
    creation as _creation,
    conversion as _conversion,
    comparison as _comparison,
    pointwise as _pointwise,
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

# pointwise
abs = _pointwise.abs.fn
absolute = _pointwise.abs.fn
acos = _pointwise.acos.fn
acosh = _pointwise.acosh.fn
add = _pointwise.add.fn
angle = _pointwise.angle.fn
arccos = _pointwise.acos.fn
arccosh = _pointwise.acosh.fn
arcsin = _pointwise.asin.fn
arcsinh = _pointwise.asinh.fn
arctan = _pointwise.atan.fn
arctanh = _pointwise.atanh.fn
asin = _pointwise.asin.fn
asinh = _pointwise.asinh.fn
atan = _pointwise.atan.fn
atanh = _pointwise.atanh.fn
ceil = _pointwise.ceil.fn
conj_physical = _pointwise.conj_physical.fn
cos = _pointwise.cos.fn
cosh = _pointwise.cosh.fn
deg2rad = _pointwise.deg2rad.fn
erf = _pointwise.erf.fn
erfc = _pointwise.erfc.fn
erfinv = _pointwise.erfinv.fn
exp = _pointwise.exp.fn
exp2 = _pointwise.exp2.fn
expm1 = _pointwise.expm1.fn
fix = _pointwise.trunc.fn
floor = _pointwise.floor.fn
frac = _pointwise.frac.fn
isfinite = _pointwise.isfinite.fn
isinf = _pointwise.isinf.fn
isnan = _pointwise.isnan.fn
isneginf = _pointwise.isneginf.fn
isposinf = _pointwise.isposinf.fn
isreal = _pointwise.isreal.fn
log = _pointwise.log.fn
log10 = _pointwise.log10.fn
log1p = _pointwise.log1p.fn
log2 = _pointwise.log2.fn
logit = _pointwise.logit.fn
mul = _pointwise.mul.fn
multiply = _pointwise.mul.fn
nan_to_num = _pointwise.nan_to_num.fn
neg = _pointwise.neg.fn
negative = _pointwise.neg.fn
rad2deg = _pointwise.rad2deg.fn
reciprocal = _pointwise.reciprocal.fn
relu = _pointwise.relu.fn
resolve_conj = _pointwise._identity
resolve_neg = _pointwise._identity
round = _pointwise.round.fn
rsqrt = _pointwise.rsqrt.fn
sgn = _pointwise.sgn.fn
sigmoid = _pointwise.sigmoid.fn
sign = _pointwise.sign.fn
signbit = _pointwise.signbit.fn
sin = _pointwise.sin.fn
sinh = _pointwise.sinh.fn
sqrt = _pointwise.sqrt.fn
square = _pointwise.square.fn
sub = _pointwise.sub.fn
subtract = _pointwise.sub.fn
tan = _pointwise.tan.fn
tanh = _pointwise.tanh.fn
trunc = _pointwise.trunc.fn

# binary
addcdiv = _binary.addcdiv.fn
addcmul = _binary.addcmul.fn
arctan2 = _binary.atan2.fn
atan2 = _binary.atan2.fn
bitwise_and = _binary.bitwise_and.fn
bitwise_left_shift = _binary.bitwise_left_shift.fn
bitwise_not = _binary.bitwise_not.fn
bitwise_or = _binary.bitwise_or.fn
bitwise_right_shift = _binary._op.fn
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
pow = _binary.pow.fn
remainder = _binary.remainder.fn
rsub = _binary.rsub.fn
xlogy = _binary.xlogy.fn

# shape
broadcast_to = _shape.broadcast_to.fn
cat = _shape.cat.fn
diag = _shape.diag.fn
diag_embed = _shape.diag_embed.fn
diagonal = _shape.diagonal.fn
dstack = _shape.dstack.fn
flatten = _shape.flatten.fn
flip = _shape.flip.fn
hstack = _shape.hstack.fn
movedim = _shape.movedim.fn
narrow = _shape.narrow.fn
permute = _shape.permute.fn
ravel = _shape.ravel.fn
repeat_interleave = _shape._repeat_interleave_fn
reshape = _shape.reshape.fn
roll = _shape.roll.fn
rot90 = _shape.rot90.fn
select = _shape.select.fn
squeeze = _shape.squeeze.fn
stack = _shape.stack.fn
t = _shape.t.fn
tile = _shape.tile.fn
transpose = _shape.transpose.fn
tril = _shape.tril.fn
triu = _shape.triu.fn
unflatten = _shape.unflatten.fn
unsqueeze = _shape.unsqueeze.fn
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
) = _pointwise.inplace_functions(
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


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:
    return input.is_floating_point()


def is_complex(input: Tensor) -> bool:
    return input.is_complex()


def numel(input: Tensor) -> int:
    return input.numel()


del annotations
