"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""

from __future__ import annotations

import operator
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain

from ..._core.tensor import Tensor
from ..parameter import Parameter
from .module import Module, _addindent


def _abs_index(idx, size: int) -> int:
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx % size if size else idx


class _Indexed(Module):
    """Modules held under the keys '0', '1', ...; shared by Sequential and ModuleList."""

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def _renumber(self, modules) -> None:
        self._modules.clear()
        for i, m in enumerate(modules):
            self._modules[str(i)] = m

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return list(self._modules.values())[_abs_index(idx, len(self))]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, str(_abs_index(idx, len(self))), module)

    def __delitem__(self, idx) -> None:
        mods = list(self._modules.values())
        if isinstance(idx, slice):
            del mods[idx]
        else:
            del mods[_abs_index(idx, len(self))]
        self._renumber(mods)

    def insert(self, index: int, module: Module) -> _Indexed:
        n = len(self._modules)
        index = operator.index(index)
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        index = index + n if index < 0 else index
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._renumber(mods)
        return self

    def append(self, module: Module) -> _Indexed:
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key: int | slice = -1):
        v = self[key]
        del self[key]
        return v


class Container(Module):
    """Deprecated (as in PyTorch): a Module holding the modules given as keyword
    arguments."""

    def __init__(self, **kwargs) -> None:
        warnings.warn(
            "`nn.Container` is deprecated. All of its functionality is now implemented in "
            "`nn.Module`. Subclass that instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class Sequential(_Indexed):
    """Modules applied in order, each to the previous one's output."""

    def __init__(self, *args: Module):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return super().__getitem__(idx)

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules)[_abs_index(idx, len(self))]
        setattr(self, key, module)

    def __delitem__(self, idx) -> None:
        keys = list(self._modules)
        for key in keys[idx] if isinstance(idx, slice) else [keys[_abs_index(idx, len(self))]]:
            delattr(self, key)
        self._renumber(list(self._modules.values()))

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                "add operator supports only objects of Sequential class, but "
                f"{type(other)} is given."
            )
        return Sequential(*self, *other)

    def __iadd__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                "add operator supports only objects of Sequential class, but "
                f"{type(other)} is given."
            )
        for m in list(other):
            self.append(m)
        return self

    def __mul__(self, other: int) -> Sequential:
        self._check_factor(other)
        return Sequential(*(list(self) * other))

    __rmul__ = __mul__

    def __imul__(self, other: int) -> Sequential:
        self._check_factor(other)
        for m in list(self) * (other - 1):
            self.append(m)
        return self

    @staticmethod
    def _check_factor(other) -> None:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(other)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {Sequential}")

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        for m in sequential:
            self.append(m)
        return self

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(_Indexed):
    """A list of submodules, registered under '0', '1', ..."""

    def __init__(self, modules: Iterable[Module] | None = None):
        super().__init__()
        if modules is not None:
            self += modules

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return ModuleList(chain(self, other))

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        if not isinstance(modules, Iterable):
            raise TypeError(
                "ModuleList.extend should be called with an iterable, but got "
                + type(modules).__name__
            )
        for m in modules:
            self.append(m)
        return self

    def __repr__(self) -> str:
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        runs: list[list] = []  # [first index, last index, repr]
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = [
            _addindent(f"({a}): {r}" if a == b else f"({a}-{b}): {b - a + 1} x {r}", 2)
            for a, b, r in runs
        ]
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


def _pairs(kind: str, values, sort_plain: bool, call: str | None = None) -> Iterable[tuple]:
    """The (key, value) pairs of a mapping or of an iterable of pairs, with PyTorch's
    errors for update()."""
    if not isinstance(values, Iterable):
        raise TypeError(
            f"{call or kind}.update should be called with an iterable of key/value pairs, but got "
            + type(values).__name__
        )
    if isinstance(values, (OrderedDict, ModuleDict, ParameterDict)):
        return list(values.items())
    if isinstance(values, Mapping):
        return sorted(values.items()) if sort_plain else list(values.items())
    out = []
    for j, pair in enumerate(values):
        if not isinstance(pair, Iterable):
            raise TypeError(
                f"{kind} update sequence element #{j} should be Iterable; is" + type(pair).__name__
            )
        pair = list(pair)
        if len(pair) != 2:
            raise ValueError(
                f"{kind} update sequence element #{j} has length {len(pair)}; 2 is required"
            )
        out.append(tuple(pair))
    return out


class ModuleDict(Module):
    """A dict of submodules."""

    def __init__(self, modules: Mapping[str, Module] | None = None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules) -> None:
        for key, module in _pairs("ModuleDict", modules, sort_plain=False):
            self[key] = module


def _as_parameter(value):
    return (
        Parameter(value)
        if isinstance(value, Tensor) and not isinstance(value, Parameter)
        else value
    )


def _describe(p, type_name: bool) -> str:
    """A ParameterList/Dict entry as printed (the dict names the tensor type, the list its
    dtype)."""
    if not isinstance(p, Tensor):
        return "Object of type: " + type(p).__name__
    size = "x".join(str(s) for s in p.size())
    dev = f" ({p.device})" if p.device.type == "cuda" else ""
    kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
    return f"{kind} containing: [{p.type() if type_name else p.dtype} of size {size}{dev}]"


class ParameterList(Module):
    """A list of parameters (a tensor assigned to it becomes a Parameter)."""

    def __init__(self, values: Iterable | None = None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = ParameterList()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, str(_abs_index(idx, len(self))))

    def __setitem__(self, idx: int, param) -> None:
        setattr(self, str(_abs_index(idx, len(self))), _as_parameter(param))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator:
        return (self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable) -> ParameterList:
        return self.extend(parameters)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value) -> ParameterList:
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable) -> ParameterList:
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(
                "ParameterList.extend should be called with an iterable, but got "
                + type(values).__name__
            )
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        return "\n".join(f"  ({k}): {_describe(p, False)}" for k, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """A dict of parameters with string keys (a tensor assigned to it becomes a
    Parameter)."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _key_to_attr(key) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is not a string "
                f"(type is '{type(key).__name__}'). Open an issue on github if you need "
                "non-string keys."
            )
        return key

    def __getitem__(self, key: str):
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value) -> None:
        self._keys[key] = None
        setattr(self, self._key_to_attr(key), _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for k in list(self._keys):
            del self[k]

    def pop(self, key: str):
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple:
        k = list(self._keys)[-1]
        v = self[k]
        del self[k]
        return k, v

    def get(self, key: str, default=None):
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default=None) -> ParameterDict:
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return [(k, self[k]) for k in self._keys]

    def values(self):
        return [self[k] for k in self._keys]

    def update(self, parameters) -> None:
        for key, value in _pairs(
            "ParameterDict", parameters, sort_plain=True, call="ParametersDict"
        ):
            self[key] = value

    def extra_repr(self) -> str:
        return "\n".join(f"  ({k}): {_describe(p, True)}" for k, p in self.items())

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        out = self.copy()
        out.update(other)
        return out

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        out = other.copy()
        out.update(self)
        return out

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self
