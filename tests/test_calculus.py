"""diff, trapezoid/trapz and cumulative_trapezoid against PyTorch at edge values (inf, nan,
empty and one-point dims, integer and bool inputs) and their argument errors."""

import math

import numpy as np
import pytest
from twolibs import arr, assert_same, assert_same_error, grad_prog, ints

EDGE = np.array([[0.0, -1.5, math.inf, 2.0], [math.nan, 3.0, -math.inf, 1e300]])


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, y: L.diff(y),
        lambda L, y: L.diff(y, 2, 0),
        lambda L, y: y.diff(n=3),
        lambda L, y: L.trapezoid(y),
        lambda L, y: L.trapezoid(y, dx=-2.5, dim=0),
        lambda L, y: L.trapz(y, L.tensor([0.0, -1.0, 2.0, 2.0], dtype=y.dtype)),
        lambda L, y: L.cumulative_trapezoid(y),
        lambda L, y: L.cumulative_trapezoid(y, y, dim=0),
    ],
)
def test_edge_values(prog):
    assert_same(prog, EDGE)


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, y: L.diff(y),
        lambda L, y: L.diff(y, prepend=L.tensor([[True], [False]])),
        lambda L, y: L.diff(y, n=7),
        lambda L, y: L.trapezoid(y),
        lambda L, y: L.trapezoid(y, L.tensor([0, 1, 3, 4, 9, 10])),
        lambda L, y: L.trapezoid(y, dx=2),
        lambda L, y: L.cumulative_trapezoid(y, dx=3),
        lambda L, y: L.trapezoid(y[:, :0]),
        lambda L, y: L.trapezoid(y[:, :1], dx=4),
        lambda L, y: L.cumulative_trapezoid(y[:, :1]),
    ],
)
def test_integer_inputs(prog):
    assert_same(prog, ints(2, 6))


def test_bool_diff():
    assert_same(lambda L, y: L.diff(y > 2, n=2), ints(3, 5))


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, y: L.trapezoid(y, L.tensor([0.0, 1.0, 3.0]), dim=-1).sum(),
        lambda L, y: L.cumulative_trapezoid(y, dx=0.5, dim=0).sum(),
        lambda L, y: L.diff(y, 2, prepend=y[:, :1] * 2).pow(2).sum(),
    ],
)
def test_gradients(prog):
    assert_same(grad_prog(prog), arr(4, 3))


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, y: L.diff(y, n=-1),
        lambda L, y: L.diff(y[0, 0]),
        lambda L, y: L.diff(y, dim=2),
        lambda L, y: L.diff(y, prepend=y[0]),
        lambda L, y: L.diff(y, dim=0, append=y[:, :2]),
        lambda L, y: L.diff(y, prepend=2.0),
        lambda L, y: L.trapezoid(y > 0),
        lambda L, y: L.cumulative_trapezoid(y > 0),
        lambda L, y: L.trapezoid(y, 2.0),
        lambda L, y: L.trapezoid(y, y, dx=1),
        lambda L, y: L.trapz(y, 2.0),
        lambda L, y: L.cumulative_trapezoid(y, 2.0),
        lambda L, y: L.trapezoid(y, y[0, :2]),
        lambda L, y: L.cumulative_trapezoid(y, y[0, :2]),
        lambda L, y: L.trapezoid(y[0, 0]),
        lambda L, y: L.cumulative_trapezoid(y[0, 0]),
    ],
)
def test_errors(prog):
    assert_same_error(prog, arr(4, 3))
