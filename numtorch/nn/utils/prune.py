"""torch.nn.utils.prune: masking a module's parameter by a pruning method.

Pruning ``name`` keeps the original values as the parameter ``name_orig``, the mask as the
buffer ``name_mask``, and the product under the plain attribute ``name``, recomputed
before every forward by the method, which is registered as a forward pre-hook. Pruning
the same tensor again merges the methods in a ``PruningContainer``; ``remove`` makes the
product the parameter again.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import Any

from ..._core.tensor import Tensor
from ...ops.creation import ones_like, zeros_like
from ...ops.random import rand, rand_like
from ...ops.sorting import kthvalue, topk
from ..modules.module import Module
from .convert_parameters import parameters_to_vector

__all__ = [
    "BasePruningMethod",
    "CustomFromMask",
    "Identity",
    "L1Unstructured",
    "LnStructured",
    "PruningContainer",
    "RandomStructured",
    "RandomUnstructured",
    "custom_from_mask",
    "global_unstructured",
    "identity",
    "is_pruned",
    "l1_unstructured",
    "ln_structured",
    "random_structured",
    "random_unstructured",
    "remove",
]


class BasePruningMethod(ABC):
    """A way to compute a mask for a tensor; registered on a module as its forward pre-hook,
    it sets the pruned tensor (mask times original) before each forward."""

    _tensor_name: str

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask for t, given the mask from earlier pruning (default_mask)."""

    def apply_mask(self, module: Module) -> Tensor:
        """The module's original tensor times its mask."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(
        cls,
        module: Module,
        name: str,
        *args: Any,
        importance_scores: Tensor | None = None,
        **kwargs,
    ) -> BasePruningMethod:
        """Prune ``module.name`` by a new ``cls(*args, **kwargs)``, merged with the pruning
        already on it; returns the method registered on the module."""
        method = _merged_method(cls, module, name, args, kwargs)
        orig = getattr(module, name)
        if importance_scores is None:
            importance_scores = orig
        elif importance_scores.shape != orig.shape:
            raise AssertionError(
                f"importance_scores should have the same shape as parameter {name} of "
                f"{module}, got {importance_scores.shape} vs {orig.shape}"
            )
        first = not isinstance(method, PruningContainer)
        if first:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            module.register_buffer(
                name + "_mask", method.compute_mask(importance_scores, default_mask=default_mask)
            )
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:  # put the parameter back as it was
                module.register_parameter(name, getattr(module, name + "_orig"))
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(
        self, t: Tensor, default_mask: Tensor | None = None, importance_scores: Tensor | None = None
    ) -> Tensor:
        """t times the mask this method computes for it (from importance_scores, if given)."""
        if importance_scores is None:
            importance_scores = t
        elif importance_scores.shape != t.shape:
            raise AssertionError(
                "importance_scores should have the same shape as tensor t, "
                f"got {importance_scores.shape} vs {t.shape}"
            )
        if default_mask is None:
            default_mask = ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Module) -> None:
        """Make the pruned tensor the module's parameter ``name`` again, dropping
        ``name_orig`` and ``name_mask``."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        name = self._tensor_name
        pruned = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters.pop(name + "_orig")
        orig.data = pruned.data
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


def _merged_method(cls, module: Module, name: str, args: tuple, kwargs: dict) -> BasePruningMethod:
    """A new cls method for ``name``, taking the place of the method already hooked on it
    (joined with it in a PruningContainer)."""
    keys = [
        k
        for k, hook in module._forward_pre_hooks.items()
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name
    ]
    if len(keys) > 1:
        raise AssertionError(
            f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
            "Use a PruningContainer."
        )
    old = module._forward_pre_hooks.pop(keys[0]) if keys else None
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if old is None:
        return method
    container = old if isinstance(old, PruningContainer) else PruningContainer(old)
    container.add_pruning_method(method)
    return container


class PruningContainer(BasePruningMethod):
    """The pruning methods applied one after another to one tensor."""

    def __init__(self, *args: BasePruningMethod) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        """Append a method acting on the same tensor."""
        if method is not None and not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{self._tensor_name}' to PruningContainer {self}. "
                f"Found '{method._tensor_name}'"
            )
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask computed on the part of t the earlier masks left: the
        unpruned entries (unstructured), the unpruned channels (structured), or all of t
        (global); zeros already in default_mask stay."""
        method = self._pruning_methods[-1]
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            where: Any = default_mask == 1
        elif kind == "structured":
            where = _kept_channels(method, t, default_mask)
        elif kind == "global":
            where = (slice(None),) * t.dim()
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        mask = default_mask.to(dtype=t.dtype)
        part = method.compute_mask(t[where], default_mask=default_mask[where])
        mask[where] = part.to(dtype=mask.dtype)
        return mask


def _kept_channels(method: BasePruningMethod, t: Tensor, mask: Tensor) -> tuple:
    """The index selecting the channels along ``method.dim`` that mask has not zeroed."""
    if not hasattr(method, "dim"):
        raise AttributeError(
            'Pruning methods of PRUNING_TYPE "structured" need to have the attribute `dim` defined.'
        )
    ndim = t.dim()
    dim = method.dim + ndim if method.dim < 0 else method.dim
    if dim < 0:
        raise IndexError(f"Index is out of bounds for tensor with dimensions {ndim}")
    others = [d for d in range(ndim) if d != dim]
    index: list = [slice(None)] * ndim
    index[dim] = mask.sum(dim=others) != 0
    return tuple(index)


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str) -> Identity:  # type: ignore[override]
        """Add the identity pruning to ``module.name``."""
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes ``amount`` entries (a count, or a fraction of the tensor) chosen at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: int | float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return _unstructured_mask(self.amount, t, default_mask, lambda: rand_like(t), True)

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float) -> RandomUnstructured:  # type: ignore[override]
        """Prune ``amount`` random entries of ``module.name``."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the ``amount`` entries of smallest absolute value."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: int | float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return _unstructured_mask(self.amount, t, default_mask, t.abs, False)

    @classmethod
    def apply(  # type: ignore[override]
        cls, module: Module, name: str, amount: int | float, importance_scores: Tensor | None = None
    ) -> L1Unstructured:
        """Prune the ``amount`` smallest entries (by importance_scores, if given)."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` whole channels along ``dim``, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        channels = _structured_size(t, self.dim)
        count = _pruned_count(self.amount, channels)
        if not count:
            return default_mask
        draw = rand(channels)
        kept = draw > kthvalue(draw, k=count).values
        return _channel_mask(t, self.dim, kept) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(
        cls, module: Module, name: str, amount: int | float, dim: int = -1
    ) -> RandomStructured:  # type: ignore[override]
        """Prune ``amount`` random channels of ``module.name`` along dim."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` channels along ``dim`` of smallest L``n`` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, n: int | float | str, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        channels = _structured_size(t, self.dim)
        count = _pruned_count(self.amount, channels)
        dim = self.dim % t.dim()
        norms = t.norm(p=self.n, dim=[d for d in range(t.dim()) if d != dim])
        kept = topk(norms, k=channels - count, largest=True).indices
        if not count:
            return default_mask
        return _channel_mask(t, dim, kept) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(  # type: ignore[override]
        cls,
        module: Module,
        name: str,
        amount: int | float,
        n: int | float | str,
        dim: int,
        importance_scores: Tensor | None = None,
    ) -> LnStructured:
        """Prune the ``amount`` channels of smallest norm (of importance_scores, if given)."""
        return super().apply(
            module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores
        )


class CustomFromMask(BasePruningMethod):
    """Prunes by a given mask."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if default_mask.shape != self.mask.shape:
            raise AssertionError(
                f"default_mask shape {default_mask.shape} must match "
                f"self.mask shape {self.mask.shape}"
            )
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, mask: Tensor) -> CustomFromMask:  # type: ignore[override]
        """Prune ``module.name`` by mask."""
        return super().apply(module, name, mask=mask)


def _unstructured_mask(
    amount: int | float,
    t: Tensor,
    default_mask: Tensor,
    scores: Callable[[], Tensor],
    largest: bool,
) -> Tensor:
    """default_mask with zeros at the ``amount`` entries of t whose ``scores()`` are the
    largest (or smallest); scores is only called when something is pruned."""
    count = _pruned_count(amount, t.nelement())
    mask = default_mask.clone()
    if count:
        mask.view(-1)[topk(scores().view(-1), k=count, largest=largest).indices] = 0
    return mask


def _structured_size(t: Tensor, dim: int) -> int:
    """The number of channels along dim, after PyTorch's checks for structured pruning."""
    if t.dim() <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. Found tensor "
            f"of shape {t.shape} with {t.dim()} dims"
        )
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")
    return t.shape[dim]


def _channel_mask(t: Tensor, dim: int, kept: Tensor) -> Tensor:
    """Ones in the channels ``kept`` (a bool mask or indices) along dim, zeros elsewhere."""
    mask = zeros_like(t)
    index: list = [slice(None)] * t.dim()
    index[dim] = kept
    mask[tuple(index)] = 1
    return mask


def _pruned_count(amount: int | float, size: int) -> int:
    """How many of size entries amount prunes (a count, or a fraction rounded)."""
    count = amount if isinstance(amount, numbers.Integral) else round(amount * size)
    _validate_pruning_amount(count, size)
    return count


def _validate_pruning_amount_init(amount: Any) -> None:
    """Raise unless amount is a non-negative int or a float in [0, 1]."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if isinstance(amount, numbers.Integral):
        bad = amount < 0
    else:
        bad = not 0.0 <= float(amount) <= 1.0
    if bad:
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a non-negative "
            "integer"
        )


def _validate_pruning_amount(amount: Any, tensor_size: int) -> None:
    """Raise when an int amount exceeds the number of entries to prune from."""
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(
            f"amount={amount} should be smaller than the number of parameters to "
            f"prune={tensor_size}"
        )


def identity(module: Module, name: str) -> Module:
    """Prune nothing of ``module.name``, but set up the pruning scheme; returns module."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: int | float) -> Module:
    """Prune ``amount`` random entries of ``module.name``; returns module."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(
    module: Module, name: str, amount: int | float, importance_scores: Tensor | None = None
) -> Module:
    """Prune the ``amount`` entries of ``module.name`` of smallest absolute value (of
    importance_scores, if given); returns module."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: int | float, dim: int) -> Module:
    """Prune ``amount`` random channels of ``module.name`` along dim; returns module."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(
    module: Module,
    name: str,
    amount: int | float,
    n: int | float | str,
    dim: int,
    importance_scores: Tensor | None = None,
) -> Module:
    """Prune the ``amount`` channels of ``module.name`` along dim of smallest L``n`` norm;
    returns module."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(
    parameters: Iterable, pruning_method: type, importance_scores: dict | None = None, **kwargs
) -> None:
    """Prune the (module, name) pairs of parameters together, as one tensor, by an
    unstructured pruning method built with kwargs."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    if importance_scores is None:
        importance_scores = {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    parameters = list(parameters)
    scores = parameters_to_vector(
        [importance_scores.get((m, n), getattr(m, n)) for m, n in parameters]
    )
    masks = parameters_to_vector(
        [getattr(m, n + "_mask", ones_like(getattr(m, n))) for m, n in parameters]
    )
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
            f"{pruning_method} of type {method.PRUNING_TYPE}"
        )
    container = PruningContainer()
    container._tensor_name = "temp"
    container.add_pruning_method(method)
    mask = container.compute_mask(scores, masks)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        size = param.numel()
        custom_from_mask(module, name, mask=mask[start : start + size].view_as(param))
        start += size


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Prune ``module.name`` by mask; returns module."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.name`` permanent: the pruned values become the parameter
    and the hook, ``name_orig`` and ``name_mask`` go; returns module."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(
        f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed"
    )


def is_pruned(module: Module) -> bool:
    """Whether module or one of its submodules has a pruning hook."""
    return any(
        isinstance(hook, BasePruningMethod)
        for _, sub in module.named_modules()
        for hook in sub._forward_pre_hooks.values()
    )
