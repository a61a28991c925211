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


# ------------------------------------------------------------------ gradient
GRID = np.array(
    [[0.0, 1.0, 4.0, 9.0, 16.0], [1.0, -2.0, math.inf, 3.0, math.nan], [2.0, 2.0, 2.0, 2.0, 2.0]]
)


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_spacings(edge_order):
    coords = (np.array([0.0, 0.5, 2.0]), np.array([-1.0, 0.0, 0.5, 3.0, 3.5]))

    def progs(L, y, cx, cy):
        g = L.gradient
        return (
            g(y, edge_order=edge_order),
            g(y, spacing=2.5, edge_order=edge_order),
            g(y, spacing=[0.5, -2.0], edge_order=edge_order),
            g(y, spacing=(3,), dim=1, edge_order=edge_order),
            g(y, spacing=4, dim=-1, edge_order=edge_order),
            g(y, dim=(1, 0), edge_order=edge_order),
            g(y, spacing=[cx, cy], edge_order=edge_order),
            g(y, spacing=(cy,), dim=1, edge_order=edge_order),
        )

    assert_same(progs, GRID, *coords)
    assert_same(progs, GRID.astype(np.float32), *(c.astype(np.float32) for c in coords))
    assert_same(lambda L, y: L.gradient(y, edge_order=edge_order), ints(3, 4))
    assert_same(lambda L, y: L.gradient(y, spacing=2, edge_order=edge_order), ints(3, 4))
    assert_same(lambda L, y: L.gradient(y), np.array(2.0))


def test_gradient_derivatives():
    y = arr(4, 5)
    cx = np.array([0.0, 0.3, 1.0, 2.5])

    def grads(L, y, cx):
        y.requires_grad_(True)
        cx.requires_grad_(True)
        gx, gy = L.gradient(y, spacing=[cx, L.arange(5.0, dtype=y.dtype) ** 2], edge_order=2)
        return L.autograd.grad((gx * gx).sum() + (gy * y).sum(), (y, cx))

    assert_same(grads, y, cx)
    assert_same(grad_prog(lambda L, y: L.gradient(y, spacing=0.5)[1].square().sum()), y)


def test_gradient_errors():
    y = arr(3, 4)
    for prog in (
        lambda L, y: L.gradient(y, spacing=[1.0, 2.0, 3.0]),
        lambda L, y: L.gradient(y, spacing=[1.0, 2.0], dim=1),
        lambda L, y: L.gradient(y, edge_order=3),
        lambda L, y: L.gradient(y[:1]),
        lambda L, y: L.gradient(y[:, :2], dim=1, edge_order=2),
        lambda L, y: L.gradient(y, spacing=[L.ones(3), L.ones(1, 4)]),
        lambda L, y: L.gradient(y, spacing=[L.ones(3), 2.0]),
        lambda L, y: L.gradient(y.to(L.uint8)),
        lambda L, y: L.gradient(y, dim=2),
        lambda L, y: L.gradient(y, dim=(0, 0)),
    ):
        assert_same_error(prog, y)


def test_gradient_complex_and_its_derivatives():
    """Complex input: values and conjugate Wirtinger gradients as PyTorch's."""
    z = np.array([1 + 2j, -0.5 + 1j, 3 - 1j, 0.25 + 0.5j])

    def uniform(L, z):
        z.requires_grad_(True)
        (d,) = L.gradient(z, spacing=0.5, edge_order=2)
        return d, L.autograd.grad((d * d.conj()).real.sum(), z)

    def coordinates(L, z, c):
        z.requires_grad_(True)
        (d,) = L.gradient(z, spacing=(c,))
        return d, L.autograd.grad(d.abs().sum(), z)

    assert_same(uniform, z)
    assert_same(coordinates, z, np.array([0.0, 1.0, 1.5, 3.0]))
