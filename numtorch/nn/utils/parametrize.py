"""torch.nn.utils.parametrize: a module's tensor seen through a chain of modules.

``register_parametrization(m, "weight", P)`` moves ``m.weight`` into
``m.parametrizations.weight.original`` (or ``original0, original1, ...`` when P's
``right_inverse`` splits it) and turns ``weight`` into a property of a per-instance
subclass (``ParametrizedLinear``) that evaluates the chain on every read.
"""

from __future__ import annotations

import collections.abc
import copy
import copyreg
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ..._core.tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = [
    "cached",
    "ParametrizationList",
    "register_parametrization",
    "is_parametrized",
    "remove_parametrizations",
    "type_before_parametrizations",
    "transfer_parametrizations_and_params",
]

_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor | None] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Within the block, each parametrized tensor is computed once and reused."""
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _maybe_set(dest: Tensor, src: Tensor) -> None:
    """dest takes src's data, keeping its identity (so optimizers still hold it)."""
    dest.set_(src)


def _right_inverse_or_identity(modules, value):
    """value pulled back through the chain; a missing or unimplemented right_inverse is
    the identity."""
    with no_grad():
        for module in reversed(modules):
            if hasattr(module, "right_inverse"):
                try:
                    value = module.right_inverse(value)
                except NotImplementedError:
                    pass
    return value


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, and the original tensor(s) they act on: the type
    of ``module.parametrizations[tensor_name]``."""

    original: Tensor
    unsafe: bool

    def __init__(
        self, modules: Sequence[Module], original: Tensor | Parameter, unsafe: bool = False
    ) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        new = _right_inverse_or_identity(self, original)
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError(
                "'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                f"Got {type(new).__name__}"
            )
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            self._adopt_single(original, new)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of tensors "
                        "(list, tuple...). "
                        f"Got element {i} of the sequence with type {type(part).__name__}."
                    )
                if isinstance(original, Parameter):
                    part = Parameter(part, original.requires_grad)
                part.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", part)
        if not self.unsafe:
            self._check_consistent(shape, dtype)

    def _adopt_single(self, original: Tensor, new: Tensor) -> None:
        """Keep original's identity with new's data, registered as ``original``."""
        for what in ("dtype", "device"):
            if getattr(original, what) != getattr(new, what):
                raise ValueError(
                    f"When `right_inverse` outputs one tensor, it may not change the {what}.\n"
                    f"original.{what}: {getattr(original, what)}\n"
                    f"right_inverse(original).{what}: {getattr(new, what)}"
                )
        with no_grad():
            _maybe_set(original, new)
        _register_parameter_or_buffer(self, "original", original)

    def _check_consistent(self, shape, dtype) -> None:
        z = self()
        if not isinstance(z, Tensor):
            raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
        for what, before in (("dtype", dtype), ("shape", shape)):
            after = getattr(z, what)
            if after != before:
                raise ValueError(
                    f"Registering a parametrization may not change the {what} of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized {what}: {before}\n"
                    f"parametrized {what}: {after}"
                )

    def right_inverse(self, value: Tensor) -> None:
        """Pull value back through every parametrization (last first) and store the result
        in ``original`` (or ``original0, original1, ...``)."""
        with no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement right_inverse."
                    )
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(
                        f"`right_inverse` should return a tensor. Got {type(value).__name__}"
                    )
                if value.dtype != self.original.dtype:
                    raise ValueError(
                        f"The tensor returned by `right_inverse` has dtype {value.dtype} "
                        f"while `original` has dtype {self.original.dtype}"
                    )
                _maybe_set(self.original, value)
                return
            if not isinstance(value, collections.abc.Sequence):
                raise ValueError(
                    "'right_inverse' must return a sequence of tensors. "
                    f"Got {type(value).__name__}."
                )
            if len(value) != self.ntensors:
                raise ValueError(
                    "'right_inverse' must return a sequence of tensors of length "
                    f"{self.ntensors}. Got a sequence of length {len(value)}."
                )
            for i, part in enumerate(value):
                if not isinstance(part, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a sequence of tensors "
                        "or reference-type opaques. Got element "
                        f"{i} of type {type(part).__name__}."
                    )
                held = getattr(self, f"original{i}")
                if held.dtype != part.dtype:
                    raise ValueError(
                        f"Tensor {i} returned by `right_inverse` has dtype {part.dtype} "
                        f"while `original{i}` has dtype {held.dtype}"
                    )
                _maybe_set(held, part)

    def forward(self) -> Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        i = 1
        while str(i) in self._modules:
            x = self[i](x)
            i += 1
        return x


def _getstate(self):
    raise RuntimeError(
        "Serialization of parametrized modules is only supported through state_dict(). See:\n"
        "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
        "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training"
    )


def _deepcopy(self, memo):
    """A plain deepcopy (the class forbids pickling, so copy's default route is closed)."""
    if id(self) in memo:
        return memo[id(self)]
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(self.__class__):
        if hasattr(self, slot):
            setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
    return replica


def _inject_new_class(module: Module) -> None:
    """Give module a class of its own, ``Parametrized<Class>``, to hold the properties."""
    cls = module.__class__
    attrs = {"__getstate__": _getstate}
    if not hasattr(cls, "__deepcopy__"):
        attrs["__deepcopy__"] = _deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), attrs)


def _inject_property(module: Module, tensor_name: str) -> None:
    """Make ``tensor_name`` a property: reading evaluates the parametrizations, writing
    calls their ``right_inverse``."""
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self) -> Tensor:
        given = self.__dict__.get(tensor_name)
        if given is not None:  # functional_call's value for the name: no parametrization
            return given
        chain = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return chain()
        key = (id(self), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = _cache[key] = chain()
        return tensor

    def set_original(self, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def _check_appended(module: Module, tensor_name: str, parametrization: Module) -> None:
    """A parametrization added on top of others must map the tensor's space to itself."""
    y = getattr(module, tensor_name)
    x = parametrization(y)
    if not isinstance(x, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
    for what in ("dtype", "shape"):
        if getattr(x, what) != getattr(y, what):
            raise ValueError(
                f"Registering a parametrization may not change the {what} of the tensor, "
                "unless the `unsafe` flag is enabled.\n"
                f"module.{tensor_name}.{what}: {getattr(y, what)}\n"
                f"parametrization(module.{tensor_name}).{what}: {getattr(x, what)}"
            )
    if not hasattr(parametrization, "right_inverse"):
        return
    try:
        z = parametrization.right_inverse(x)
    except NotImplementedError:
        return
    if not isinstance(z, Tensor):
        raise ValueError(
            f"parametrization.right_inverse must return a tensor. Got: {type(z).__name__}"
        )
    for what in ("dtype", "shape"):
        if getattr(z, what) != getattr(y, what):
            raise ValueError(
                f"The tensor returned by parametrization.right_inverse must have the same "
                f"{what} as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                f"module.{tensor_name}.{what}: {getattr(y, what)}\n"
                f"returned {what}: {getattr(z, what)}"
            )


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Make ``module.<tensor_name>`` read as ``parametrization(original)``; returns module."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_appended(module, tensor_name, parametrization)
        chain = module.parametrizations[tensor_name]
        chain.append(parametrization)
        chain.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        chain = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = chain
    else:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a "
            f"parametrized element with name '{tensor_name}'"
        )
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether module has a parametrization on tensor_name (on any tensor when None)."""
    chains = getattr(module, "parametrizations", None)
    if not isinstance(chains, ModuleDict):
        return False
    return len(chains) > 0 if tensor_name is None else tensor_name in chains


def remove_parametrizations(
    module: Module, tensor_name: str, leave_parametrized: bool = True
) -> Module:
    """Undo the parametrizations of tensor_name, leaving it at its current parametrized value
    (or, with ``leave_parametrized=False``, at its original); returns module."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    chain = module.parametrizations[tensor_name]
    if chain.is_tensor:
        original = chain.original
        if leave_parametrized:
            with no_grad():
                _maybe_set(original, getattr(module, tensor_name))
    elif leave_parametrized:
        t = getattr(module, tensor_name)  # with grad: whether the originals required it
        original = Parameter(t) if t.requires_grad else t
    else:
        raise ValueError(
            "Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
            "that is parametrized in terms of a sequence of tensors."
        )
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class as it was before any parametrization was registered."""
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def transfer_parametrizations_and_params(
    from_module: Module, to_module: Module, tensor_name: str | None = None
) -> Module:
    """Register from_module's parametrizations (of tensor_name, or all) on to_module, sharing
    their original tensors; returns to_module."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        source = from_module.parametrizations[name]
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            i = 0
            while hasattr(source, f"original{i}"):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
                i += 1
    return to_module
