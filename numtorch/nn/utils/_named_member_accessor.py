"""torch.nn.utils._named_member_accessor: reading, setting, swapping and deleting a module's
tensors and submodules by dotted name (``"layer1.conv1.weight"``), with the submodule
lookups cached; what libraries use to run a module on other tensors."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..._core.tensor import Tensor
from ..modules.module import Module

_MISSING: Tensor = object()  # type: ignore[assignment]


def _check_name(name: str, what: str) -> None:
    if "." in name:
        raise KeyError(f'{what} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{what} name can\'t be empty string ""')


def _check_module(module) -> None:
    if not isinstance(module, Module):
        raise TypeError(f"{module} is not an instance of torch.nn.Module")


def _check_tensor(tensor) -> None:
    if tensor is not None and not isinstance(tensor, Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")


def _get_attr(owner: Module, attr: str, shown: str):
    """owner.attr; when missing, PyTorch's AttributeError naming ``shown``."""
    try:
        return getattr(owner, attr)
    except AttributeError as ex:
        raise AttributeError(f"{owner._get_name()} has no attribute `{shown}`") from ex


def set_tensor(module: Module, name: str, tensor: Tensor) -> None:
    """Put tensor at ``module.name``: in place of a parameter or buffer of that name (with
    no Parameter check), else as an attribute."""
    _check_module(module)
    _check_tensor(tensor)
    _check_name(name, "tensor")
    for place in (module._parameters, module._buffers):
        if name in place:
            place[name] = tensor
            return
    setattr(module, name, tensor)


def swap_tensor(module: Module, name: str, tensor: Tensor, allow_missing: bool = False) -> Tensor:
    """Put tensor at ``module.name`` (``_MISSING``: delete it) and return what was there
    (``_MISSING`` if nothing was and allow_missing)."""
    _check_module(module)
    if tensor is not _MISSING:
        _check_tensor(tensor)
    _check_name(name, "tensor")
    for place in (module._parameters, module._buffers):
        if name in place:
            orig = place[name]
            if tensor is _MISSING:
                del place[name]
            else:
                place[name] = tensor
            return orig
    if hasattr(module, name):
        orig = getattr(module, name)
    elif allow_missing:
        orig = _MISSING
    else:
        raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
    if orig is not _MISSING and orig is not None and not isinstance(orig, Tensor):
        raise TypeError(f"attribute `{name}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return orig


def swap_submodule(module: Module, name: str, submodule: Module) -> Module:
    """Put submodule in place of ``module.name`` (which must exist); returns the old one."""
    _check_module(module)
    _check_module(submodule)
    _check_name(name, "submodule")
    if name not in module._modules:
        raise KeyError(f"submodule {name} does not exist")
    orig = module._modules[name]
    if not isinstance(orig, Module):
        raise TypeError(f"{name} attribute is not an instance of torch.nn.Module")
    module._modules[name] = submodule
    return orig


def _same_length(names, values) -> tuple[list | tuple, list | tuple]:
    names = names if isinstance(names, (list, tuple)) else list(names)
    values = values if isinstance(values, (list, tuple)) else list(values)
    if len(names) != len(values):
        raise AssertionError(
            "names and values must have the same length, "
            f"got {len(names)} names and {len(values)} values"
        )
    return names, values


class NamedMemberAccessor:
    """A module's submodules and tensors by dotted name, submodule lookups cached."""

    def __init__(self, module: Module) -> None:
        self.module = module
        self.memo: dict[str, Module] = {}

    def get_submodule(self, name: str) -> Module:
        """The submodule at a dotted path ("" is the module itself)."""
        if not name:
            return self.module
        found = self.memo.get(name)
        if found is not None:
            return found
        prefix, _, attr = name.rpartition(".")
        parent = self.get_submodule(prefix)
        sub = _get_attr(parent, attr, attr)
        if not isinstance(sub, Module):
            raise TypeError(f"submodule `{name}`: {sub} is not an instance of torch.nn.Module")
        self.memo[name] = sub
        return sub

    def swap_submodule(self, path: str, value: Module) -> Module:
        """Put value at a dotted submodule path; returns the old submodule."""
        prefix, _, attr = path.rpartition(".")
        return swap_submodule(self.get_submodule(prefix), attr, value)

    def get_tensor(self, name: str) -> Tensor:
        """The tensor at a dotted path."""
        prefix, _, attr = name.rpartition(".")
        tensor = _get_attr(self.get_submodule(prefix), attr, name)
        _check_tensor(tensor)
        return tensor

    def set_tensor(self, name: str, value: Tensor) -> None:
        """Put value at a dotted path."""
        prefix, _, attr = name.rpartition(".")
        set_tensor(self.get_submodule(prefix), attr, value)

    def del_tensor(self, name: str) -> None:
        """Delete the tensor at a dotted path."""
        prefix, _, attr = name.rpartition(".")
        owner = self.get_submodule(prefix)
        try:
            delattr(owner, attr)
        except AttributeError as ex:
            raise AttributeError(f"{owner._get_name()} has no attribute `{name}`") from ex

    def swap_tensor(self, name: str, value: Tensor, allow_missing: bool = False) -> Tensor:
        """Put value at a dotted path; returns what was there."""
        prefix, _, attr = name.rpartition(".")
        return swap_tensor(self.get_submodule(prefix), attr, value, allow_missing=allow_missing)

    def get_tensors(self, names: Iterable[str]) -> list[Tensor]:
        """The tensors at several dotted paths."""
        return [self.get_tensor(name) for name in names]

    def set_tensors(self, names: Iterable[str], values: Iterable[Tensor]) -> None:
        """Put each value at its dotted path."""
        names, values = _same_length(names, values)
        for name, value in zip(names, values):
            self.set_tensor(name, value)

    def set_tensors_dict(self, named_tensors: dict[str, Tensor]) -> None:
        """Put each value at its dotted path (the dict's key)."""
        for name, value in named_tensors.items():
            self.set_tensor(name, value)

    def del_tensors(self, names: Iterable[str]) -> None:
        """Delete the tensors at several dotted paths."""
        for name in names:
            self.del_tensor(name)

    def swap_tensors(
        self, names: Iterable[str], values: Iterable[Tensor], allow_missing: bool = False
    ) -> list[Tensor]:
        """Put each value at its dotted path; returns what was there."""
        names, values = _same_length(names, values)
        return [
            self.swap_tensor(name, value, allow_missing=allow_missing)
            for name, value in zip(names, values)
        ]

    def swap_tensors_dict(
        self, named_tensors: dict[str, Tensor], allow_missing: bool = False
    ) -> tuple[dict[str, Tensor], list[str]]:
        """Put each value at its dotted path, all or none (the old values are put back when
        one fails, or a path is missing and not allow_missing); returns the old values and
        the paths that were missing."""
        old: dict[str, Tensor] = {}
        missing: list[str] = []

        def undo() -> None:
            for name, tensor in old.items():
                self.swap_tensor(name, tensor, allow_missing=True)

        try:
            for name, tensor in named_tensors.items():
                old[name] = self.swap_tensor(name, tensor, allow_missing=True)
                if old[name] is _MISSING:
                    missing.append(name)
        except Exception:
            undo()
            raise
        if missing and not allow_missing:
            undo()
            raise RuntimeError(f"Missing key(s): {', '.join(map(repr, missing))}.")
        return old, missing

    def check_keys(self, keys: Iterable[str]) -> tuple[list[str], list[str]]:
        """(missing, unexpected): the module's tensor names not in keys, and keys that are
        not its tensor names, each sorted."""
        keys = set(keys)
        valid = {name for name, _ in self.named_tensors(remove_duplicate=False)}
        return sorted(valid - keys), sorted(keys - valid)

    def named_parameters(self, remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """The module's named_parameters."""
        yield from self.module.named_parameters(remove_duplicate=remove_duplicate)

    def named_buffers(self, remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """The module's named_buffers."""
        yield from self.module.named_buffers(remove_duplicate=remove_duplicate)

    def named_tensors(self, remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """The module's parameters, then its buffers, by name."""
        yield from self.named_parameters(remove_duplicate=remove_duplicate)
        yield from self.named_buffers(remove_duplicate=remove_duplicate)

    def named_modules(self, remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """The module's named_modules."""
        yield from self.module.named_modules(remove_duplicate=remove_duplicate)
