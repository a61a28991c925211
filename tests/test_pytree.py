"""torch.utils._pytree against PyTorch's: flatten, leaves, map over several trees, is_leaf,
and the round trip through unflatten."""

from __future__ import annotations

from collections import namedtuple

import pytest

import numtorch.utils._pytree as nt_pytree

torch_pytree = pytest.importorskip("torch.utils._pytree")

Point = namedtuple("Point", "x y")
TREES = [
    1,
    (1, [2, 3], {"b": 4, "a": (5,)}),
    {"k": Point(1, [2, None])},
    [],
]


@pytest.mark.parametrize("tree", TREES)
def test_leaves_and_round_trip(tree):
    assert nt_pytree.tree_leaves(tree) == torch_pytree.tree_leaves(tree)
    leaves, spec = nt_pytree.tree_flatten(tree)
    assert nt_pytree.tree_unflatten(leaves, spec) == tree


@pytest.mark.parametrize("tree", TREES)
def test_map(tree):
    def f(v):
        return None if v is None else v * 10

    assert nt_pytree.tree_map(f, tree) == torch_pytree.tree_map(f, tree)


def test_map_over_several_trees_and_is_leaf():
    a, b = (1, [2, 3]), (10, [20, 30])
    add = lambda u, v: u + v  # noqa: E731
    assert nt_pytree.tree_map(add, a, b) == torch_pytree.tree_map(add, a, b)
    is_list = lambda v: isinstance(v, list)  # noqa: E731
    length = lambda v: len(v) if isinstance(v, list) else v  # noqa: E731
    assert nt_pytree.tree_map(length, a, is_leaf=is_list) == torch_pytree.tree_map(
        length, a, is_leaf=is_list
    )
    assert nt_pytree.tree_leaves(a, is_leaf=is_list) == torch_pytree.tree_leaves(a, is_leaf=is_list)
    with pytest.raises(ValueError):
        nt_pytree.tree_map(add, a, (1, 2))
