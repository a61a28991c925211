"""``freeze`` and ``optimize_for_inference``: checks as PyTorch's, then the module as it
is (its compiled forward already serves inference)."""

from __future__ import annotations

from ._deprecation import warn_deprecated
from ._script import ScriptModule

__all__ = ["freeze", "optimize_for_inference"]


def _script_module(mod, what: str) -> None:
    if not isinstance(mod, ScriptModule):
        raise RuntimeError(
            f"{what} expects a ScriptModule as input. "
            "Please use torch.jit.script or torch.jit.trace to script your 'nn.Module'."
        )


def freeze(mod: ScriptModule, preserved_attrs=None, optimize_numerics: bool = True):
    """An eval-mode ScriptModule, checked and returned."""
    warn_deprecated("freeze")
    _script_module(mod, "Freezing")
    if mod.training:
        raise RuntimeError(
            "Freezing is currently only implemented for modules in eval mode. "
            "Please call .eval() on your module before freezing."
        )
    return mod


def optimize_for_inference(mod: ScriptModule, other_methods=None):
    """The ScriptModule in eval mode (frozen)."""
    warn_deprecated("optimize_for_inference")
    _script_module(mod, "optimize_for_inference")
    return freeze(mod.eval(), other_methods)
