"""Pytrees: nested tuples, lists, dicts and namedtuples, flattened to leaves.

A spec records the containers; ``None`` and everything else is a leaf.
"""

from __future__ import annotations

from typing import Any


class _Leaf:
    __slots__ = ()

    def __repr__(self) -> str:
        return "*"


LEAF = _Leaf()  # the spec of a leaf


class TreeSpec:
    """The shape of a pytree: container type, its keys (dicts) and child specs."""

    __slots__ = ("kind", "keys", "children")

    def __init__(self, kind, keys, children):
        self.kind = kind
        self.keys = keys
        self.children = children

    @property
    def num_leaves(self) -> int:
        return sum(1 if c is LEAF else c.num_leaves for c in self.children)

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, TreeSpec)
            and self.kind is other.kind
            and self.keys == other.keys
            and self.children == other.children
        )

    def __repr__(self, indent: int = 0) -> str:
        parts = [
            ("" if i == 0 else " " * (indent + 2)) + ("*" if c is LEAF else c.__repr__(indent + 2))
            for i, c in enumerate(self.children)
        ]
        keys = list(self.keys) if self.keys is not None else None
        body = ",\n".join(parts)
        return f"TreeSpec({self.kind.__name__}, {keys}, [{body}])"


def _is_node(x) -> bool:
    return isinstance(x, (tuple, list, dict))


def _children(x) -> tuple[list, Any]:
    if isinstance(x, dict):
        keys = tuple(x)
        return [x[k] for k in keys], keys
    return list(x), None


def tree_flatten(tree) -> tuple[list, Any]:
    """(leaves, spec); a leaf's spec is ``LEAF``."""
    if not _is_node(tree):
        return [tree], LEAF
    items, keys = _children(tree)
    leaves, specs = [], []
    for c in items:
        sub, spec = tree_flatten(c)
        leaves.extend(sub)
        specs.append(spec)
    return leaves, TreeSpec(type(tree), keys, specs)


def tree_unflatten(leaves, spec):
    it = iter(leaves)
    return _build(it, spec)


def _build(it, spec):
    if spec is LEAF:
        return next(it)
    vals = [_build(it, c) for c in spec.children]
    if spec.keys is not None:
        return spec.kind(zip(spec.keys, vals))
    if hasattr(spec.kind, "_fields"):  # namedtuple
        return spec.kind(*vals)
    return spec.kind(vals)


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix, spec) -> list | None:
    """Flatten ``prefix`` to one entry per leaf of ``spec`` (a leaf of prefix covers a
    whole subtree); None when the structures do not match."""
    if not _is_node(prefix):
        return [prefix] * (1 if spec is LEAF else spec.num_leaves)
    if spec is LEAF:
        return None
    items, keys = _children(prefix)
    same = type(prefix) is spec.kind or type(prefix) is tuple and issubclass(spec.kind, tuple)
    if not same:
        return None
    if keys is not None and (spec.keys is None or set(keys) != set(spec.keys)):
        return None
    if keys is not None:
        items = [prefix[k] for k in spec.keys]
    if len(items) != len(spec.children):
        return None
    out: list = []
    for p, c in zip(items, spec.children):
        sub = broadcast_prefix(p, c)
        if sub is None:
            return None
        out.extend(sub)
    return out


def tree_pprint(spec) -> str:
    """The structure as Python would print it, with ``*`` for each leaf (torch's
    treespec_pprint)."""
    if spec is LEAF:
        return "*"
    return repr(tree_unflatten([LEAF] * spec.num_leaves, spec))
