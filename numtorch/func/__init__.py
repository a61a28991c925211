"""Function transforms (torch.func)."""

from ._batched import (
    BatchedTensor,
    _is_vmap_fallback_enabled,
    _set_vmap_fallback_enabled,
    _set_vmap_fallback_warning_enabled,
)
from ._functionalize import debug_unwrap, functionalize
from ._grad import GradTrackingTensor, grad, grad_and_value, vjp
from ._jacobian import hessian, jacfwd, jacrev, linearize
from ._jvp import jvp
from ._module import functional_call, replace_all_batch_norm_modules_, stack_module_state
from ._vmap import vmap

__all__ = [
    "BatchedTensor",
    "GradTrackingTensor",
    "_is_vmap_fallback_enabled",
    "_set_vmap_fallback_enabled",
    "_set_vmap_fallback_warning_enabled",
    "debug_unwrap",
    "functional_call",
    "functionalize",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "replace_all_batch_norm_modules_",
    "stack_module_state",
    "vjp",
    "vmap",
]
