"""The instructions of a traced program (the tracers write them, ``_codegen`` turns them
into Python): one record per kind. A ref names a slot (``_Slot``), a list of refs, or a
constant (any other value)."""

from __future__ import annotations

from typing import Any, NamedTuple


class _Slot(int):
    """A reference to a slot (told apart from an int constant)."""

    __slots__ = ()


class Op(NamedTuple):
    """A kernel call: ``outs = op(*refs, **attrs)``."""

    op: Any
    refs: list
    attrs: dict
    outs: list  # the slots of its results
    plain: bool  # the kernel may be called directly (no prepare, no cast)
    scalars: list  # the slots of its 0-d results
    expr: str | None  # from ``_lower``: an expression over ``{0}``, ``{1}``... for the call
    settled: bool = False  # its results need no layout call (a static program's, checked)


class Commit(NamedTuple):
    """An in-place write of ``source`` (a ref) into the value of slot ``target``."""

    target: int
    source: Any
    visible: bool = False  # a write the caller sees (into a forward's input)
    direct: bool = False  # a plain assignment: the target overlaps nothing (a static program)


class Guard(NamedTuple):
    """A decision taken on symbolic sizes (``expr``, over the sizes of ``slots``)."""

    expr: str
    slots: frozenset


class Factory(NamedTuple):
    """A factory function's call (the forward tracer's), its sizes' expressions given."""

    fn: Any
    args: tuple
    kwargs: dict
    out: int


class Call(NamedTuple):
    """A call into eager code (``_codegen.RUNTIME[what]``: hooks, accumulation, a node
    called as it is) on node ``node`` (its index in the walk)."""

    what: str
    node: int
    ins: list  # the slots it takes (None: no value)
    outs: list  # the slots it makes (None: no value)
    extra: Any  # what the runtime function takes besides (accumulate: "new", "add", False)


class Sizes(NamedTuple):
    """The sizes a symbolic backward reads, computed by the forward into slot ``slot``."""

    slot: int
    sizes: list


def made(ins) -> tuple | list:
    """The slots an instruction makes (a kernel call's, a factory's, an eager call's)."""
    t = type(ins)
    if t is Op or t is Call:
        return ins.outs
    if t is Factory:
        return (ins.out,)
    return ()
