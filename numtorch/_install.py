"""``install_as_torch``: ``import torch`` (and ``functorch``), with every submodule, resolves to
numtorch's own module objects in this process, through an import hook placed first on
``sys.meta_path``; an installed PyTorch is never reached."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import pathlib
import re
import sys
from types import ModuleType

from .version import __version__ as _torch_compat_version

# (the name programs import, numtorch's module that stands in for it, the version
# importlib.metadata reports for that distribution or None); a package joins by one line.
STAND_INS: tuple[tuple[str, str, str | None], ...] = (
    ("torch", "numtorch", _torch_compat_version),
    ("functorch", "numtorch.functorch", None),  # functorch ships inside torch's wheel
)


def _stand_in_name(fullname: str) -> tuple[str, str] | None:
    """(the imported top-level name, numtorch's module name) for a name numtorch stands in
    for, else None."""
    for alias, target, _ in STAND_INS:
        if fullname == alias or fullname.startswith(alias + "."):
            return alias, target + fullname[len(alias) :]
    return None


def _import_stand_in(fullname: str, alias: str, real: str) -> ModuleType:
    try:
        return importlib.import_module(real)
    except ModuleNotFoundError as e:
        if e.name is None or not (real == e.name or real.startswith(e.name + ".")):
            raise  # the module exists; something it imports is missing
        raise ModuleNotFoundError(
            f"No module named '{fullname}' (numtorch stands in for {alias} and has no '{real}')",
            name=fullname,
        ) from None


class _AliasLoader(importlib.abc.Loader):
    """Loads an already imported numtorch module under the name the program asked for."""

    def __init__(self, module: ModuleType):
        self._module = module
        self._spec = module.__spec__

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return self._module

    def exec_module(self, module: ModuleType) -> None:
        # the import system stamped the alias's spec on it; numtorch's module keeps its own
        module.__spec__ = self._spec


class _StandInDistribution(importlib.metadata.Distribution):
    """The metadata importlib.metadata reads for a distribution numtorch stands in for."""

    def __init__(self, name: str, version: str):
        self._metadata = (
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
            f"Summary: numtorch standing in for {name}\n"
        )

    def read_text(self, filename: str) -> str | None:
        return self._metadata if filename in ("METADATA", "PKG-INFO") else None

    def locate_file(self, path: str) -> pathlib.Path:
        return pathlib.Path(__file__).parent / path


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class StandInFinder(importlib.metadata.DistributionFinder):
    """Finds numtorch's module for ``torch``/``torch.*`` (and the other STAND_INS names),
    and the ``torch`` distribution's metadata; never lets those names reach another finder."""

    def find_spec(self, fullname: str, path=None, target=None):
        names = _stand_in_name(fullname)
        if names is None:
            return None
        module = _import_stand_in(fullname, *names)
        return importlib.machinery.ModuleSpec(
            fullname, _AliasLoader(module), is_package=hasattr(module, "__path__")
        )

    def find_distributions(self, context=None):
        if context is None or context.name is None:
            return iter(())
        wanted = _normalized(context.name)
        return iter(
            _StandInDistribution(alias, version)
            for alias, _, version in STAND_INS
            if version is not None and _normalized(alias) == wanted
        )


def _foreign_import(alias: str, target: str) -> str | None:
    """The name of an ``alias`` module already imported from somewhere other than numtorch."""
    names = [n for n in list(sys.modules) if n == alias or n.startswith(alias + ".")]
    for name in sorted(names):  # the package itself first
        if getattr(sys.modules[name], "__name__", None) != target + name[len(alias) :]:
            return name
    return None


def install_as_torch() -> None:
    """Makes ``import torch`` and every ``torch.*`` import in this process give numtorch's
    modules (``torch is numtorch``, ``torch.nn.functional is numtorch.nn.functional``), and
    ``importlib.metadata.version("torch")`` numtorch's torch-compatible version. Calling it
    again changes nothing; it raises RuntimeError if a real torch is already imported."""
    for alias, target, _ in STAND_INS:
        foreign = _foreign_import(alias, target)
        if foreign is not None:
            origin = getattr(sys.modules[foreign], "__file__", None) or "an unknown location"
            raise RuntimeError(
                f"install_as_torch: '{foreign}' is already imported (from {origin}), so "
                f"numtorch cannot stand in for {alias}; call numtorch.install_as_torch() "
                f"before anything imports {alias}"
            )
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, StandInFinder)]
    sys.meta_path.insert(0, StandInFinder())
