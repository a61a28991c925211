"""Argument normalizers shared by the layers (torch.nn.modules.utils)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import repeat


def _ntuple(n: int, name: str = "parse") -> Callable:
    """A parser that turns an int into an n-tuple and any iterable into a tuple."""

    def parse(x):
        if isinstance(x, Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n: int) -> tuple:
    """(a, b) -> (b, b, a, a) for n=2: a padding tuple in F.pad's last-dim-first order."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _per_dim(base: type, name: str, doc: str, module: str, nds=(1, 2, 3), **attrs) -> list[type]:
    """The classes ``{name}{nd}d`` of a family: subclasses of ``base`` with ``_nd`` set,
    ``doc`` and each attr formatted with nd (a callable attr is called with nd)."""
    out = []
    for nd in nds:
        ns = {"__doc__": doc.format(nd=nd), "__module__": module, "_nd": nd}
        ns.update({k: v(nd) if callable(v) else v for k, v in attrs.items()})
        out.append(type(f"{name}{nd}d", (base,), ns))
    return out
