"""torch.utils._pytree: flatten nested tuples, lists, dicts and namedtuples to their leaves,
map over the leaves, and rebuild."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._core.pytree import LEAF, TreeSpec, _children, _is_node, tree_unflatten

__all__ = [
    "TreeSpec",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_structure",
    "tree_unflatten",
]


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, Any]:
    """(leaves, spec); a subtree for which is_leaf is true counts as one leaf."""
    if not _is_node(tree) or (is_leaf is not None and is_leaf(tree)):
        return [tree], LEAF
    items, keys = _children(tree)
    leaves, specs = [], []
    for child in items:
        sub, spec = tree_flatten(child, is_leaf)
        leaves.extend(sub)
        specs.append(spec)
    return leaves, TreeSpec(type(tree), keys, specs)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of a pytree, in flattening order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """The spec of a pytree."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(
    func: Callable, tree: Any, *rests: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Any:
    """A pytree of the same structure with func applied to each leaf (and to the matching
    leaves of each tree in rests)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = []
    for rest in rests:
        other, other_spec = tree_flatten(rest, is_leaf)
        if other_spec != spec:
            raise ValueError(f"Tree structure mismatch:\n{other_spec}\nvs.\n{spec}")
        others.append(other)
    return tree_unflatten([func(*xs) for xs in zip(leaves, *others)], spec)
