"""numtorch: PyTorch's eager autograd and function transforms over NumPy.

``import numtorch as torch`` and PyTorch code runs unchanged.
"""

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
from ._core.op import REGISTRY as _REGISTRY
from ._core.state import is_grad_enabled, is_inference_mode_enabled
from ._core.tensor import Size, Tensor
from . import ops as _ops  # registers every op
from . import autograd, func, linalg, nn, special
from .autograd import forward_ad, functional  # noqa: F401  (torch.autograd.functional)
from .func import vmap
from .autograd import enable_grad, inference_mode, no_grad, set_grad_enabled
from .ops.creation import *  # noqa: F403
from ._api import install as _install_api

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


_install_api(globals())
del annotations
