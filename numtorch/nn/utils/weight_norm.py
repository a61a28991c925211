"""torch.nn.utils.weight_norm: weight normalization as a forward pre-hook (the legacy form,
with ``weight_g`` and ``weight_v`` parameters), and ``torch._weight_norm``."""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

from ..._core.layout import contiguous
from ..._core.op import composite
from ..._core.tensor import Tensor
from ..._opdb.samples import S
from .._aten_norm import norm_except_dim
from ..modules.module import Module
from ..parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """v scaled to the norm g: ``v * (g / norm_except_dim(v, 2, dim))``."""
    return v * (g / norm_except_dim(v, 2, dim))


def _weight_norm_samples(make):
    # dims other than the first and last come first: there PyTorch runs this same formula,
    # while its fused kernel for the first and last dims has a wrong second derivative
    # (gradgradcheck fails on it), so the second-order tests compare the first two only
    yield S((make((3, 4, 2)), make((1, 4, 1), 0.5, 2.0), 1))
    yield S((make((3, 4)), make((), 0.5, 2.0), -1))
    yield S((make((3, 4)), make((3, 1), 0.5, 2.0)))
    yield S((make((3, 4, 2)), make((1, 1, 2), 0.5, 2.0), 2))


def _weight_norm_complex32(inputs, args) -> str:
    """PyTorch's kernel refusing complex32: its fused one where ``dim`` is written as the
    first or last dim (a negative dim is not unwrapped there), else its formula's division."""
    v = inputs[0]
    return "weight_norm_kernel" if args["dim"] in (0, v.dim() - 1) else "div_cpu"


_weight_norm = composite(
    _weight_norm,
    samples=_weight_norm_samples,
    complex32=_weight_norm_complex32,
    layout=contiguous,
    test={"dtypes": ("float32", "float64")},
)


def _weight_norm_compat_hook(state_dict: dict, prefix: str, name: str) -> None:
    """Rename a legacy state dict's ``<name>_g``/``<name>_v`` to the parametrization's
    ``parametrizations.<name>.original0``/``original1``."""
    g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
    if g_key in state_dict and v_key in state_dict:
        state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
        state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and
    ``<name>_v``."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Any:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int) -> WeightNorm:
        warnings.warn(
            "`torch.nn.utils.weight_norm` is deprecated in favor of "
            "`torch.nn.utils.parametrizations.weight_norm`.",
            FutureWarning,
            stacklevel=3,
        )
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}"
                )
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `WeightNorm` can't have uninitialized parameters. "
                "Make sure to run the dummy forward before applying weight normalization"
            )
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


T_module = TypeVar("T_module", bound=Module)


def weight_norm(module: T_module, name: str = "weight", dim: int | None = 0) -> T_module:
    """Replace module.<name> by ``<name>_g`` (magnitude) and ``<name>_v`` (direction),
    recombined before every forward (deprecated: use parametrizations.weight_norm)."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo weight_norm on module.<name>, leaving its current value as a parameter."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
