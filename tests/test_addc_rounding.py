"""addcmul and addcdiv round as PyTorch's CPU kernels do: ``self + (value * t1) * t2`` with
the last multiply-add fused (one rounding, numtorch.ops._fma), ``self + (value * t1) / t2``,
float16 in float32; their derivative formulas in PyTorch's order too. To the last bit in
float32 and below; float64's fused multiply-add is not emulated (its cost), so a float64
addcmul is one rounding of the fused result, or where x * y overflows and x * y + z does not,
infinite."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
import torch
from twolibs import assert_same, run_both

import numtorch as nt
from numtorch.ops._fma import fma

_EDGES = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e308, -1e308, 1e-308, 5e-324]
_EDGES += [2.0**-500, 3.0, 1 / 3]


def _bits_equal(got, want) -> None:
    """Equal values with equal signs (zeros too); NaN where the other has NaN."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all()
    same = (got == want) & (np.signbit(got) == np.signbit(want))
    bad = ~(same | nan)
    assert not bad.any(), f"{bad.sum()} differ, first at {np.argmax(bad)}"


def _as_torch(got, want, dtype: str, op: str, product) -> None:
    """Bits equal, or for float64 addcmul torch's fused result within the rounding of the
    product (``product``: value * t1 * t2) and of the sum (the same infinities and NaN,
    but where the product alone overflows; see the module doc)."""
    if dtype != "float64" or op != "addcmul":
        _bits_equal(got, want)
        return
    got, want, product = np.asarray(got), np.asarray(want), np.abs(product)
    finite = np.isfinite(want) & np.isfinite(got)
    other = ~finite & ~(np.isfinite(want) & np.isinf(product))
    _bits_equal(got[other], want[other])
    bound = np.spacing(np.abs(want[finite])) + np.spacing(product[finite]) / 2
    assert (np.abs(got[finite] - want[finite]) <= bound).all()


def _data(dtype: str, n: int = 4001, seed: int = 0) -> list[np.ndarray]:
    """Three operands over a wide range of exponents (float64: 1e-40 to 1e40)."""
    rng = np.random.default_rng(seed)
    span = 40 if dtype == "float64" else 4
    return [rng.standard_normal(n) * 10.0 ** rng.uniform(-span, span, n) for _ in range(3)]


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("value", [-2.5, 0.3, 1])
def test_every_bit_as_torch(op, dtype, value):
    def prog(L, a, b, c):
        a, b, c = (x.to(getattr(L, dtype)) for x in (a, b, c))
        return getattr(L, op)(a, b, c, value=value).double()

    a, b, c = _data(dtype)
    with np.errstate(all="ignore"):
        _as_torch(*run_both(prog, a, b, c), dtype, op, value * b * c)


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("value", [-2.5, 1, 0.0])
def test_every_bit_as_torch_at_the_edges(op, dtype, value):
    """Signed zeros, infinities, NaN, and products that overflow or underflow in between."""
    a, b, c = (np.array(x) for x in zip(*itertools.product(_EDGES, repeat=3)))

    def prog(L, a, b, c):
        a, b, c = (x.to(getattr(L, dtype)) for x in (a, b, c))
        return getattr(L, op)(a, b, c, value=value).double()

    with np.errstate(all="ignore"):
        _as_torch(*run_both(prog, a, b, c), dtype, op, value * b * c)


def test_a_cancellation_is_exactly_zero():
    """The fuzzer's case: at y = 0.4 (float32), y + (-2.5 * y) * y is exactly 0 (y / it is
    NaN), where -2.5 * (y * y) leaves -2.98e-08."""

    def prog(L, y):
        z = L.addcmul(y, y, y, value=-2.5)
        return z, y / z

    ours, theirs = run_both(prog, np.array([0.4], dtype=np.float32))
    assert ours[0].item() == 0.0 == theirs[0].item()
    _bits_equal(ours[1].numpy(), theirs[1].numpy())


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("value", [-2.5, 0.3, 1])
def test_derivatives_every_bit_as_torch(op, value):
    """jvp (every tangent, and one at a time) and vjp in float32."""
    rng = np.random.default_rng(1)
    a, b, c, ta, tb, tc, g = (rng.standard_normal(2001).astype(np.float32) for _ in range(7))
    c[np.abs(c) < 0.1] = 0.5

    def results(L):
        A, B, C, TA, TB, TC, G = (L.tensor(x) for x in (a, b, c, ta, tb, tc, g))

        def f(x, y, z):
            return getattr(L, op)(x, y, z, value=value)

        out = [L.func.jvp(f, (A, B, C), (TA, TB, TC))[1]]
        out.append(L.func.jvp(lambda y: f(A, y, C), (B,), (TB,))[1])
        out.append(L.func.jvp(lambda z: f(A, B, z), (C,), (TC,))[1])
        return out + list(L.func.vjp(f, A, B, C)[1](G))

    for got, want in zip(results(nt), results(torch)):
        _bits_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("which", [0, 1, 2])
def test_a_tangent_of_one_operand_broadcasts_to_the_result(op, which):
    """The tangent has the result's shape where the operand with a tangent is smaller."""
    shapes = [(1, 1), (2,), (3, 1)]
    args = [np.linspace(0.5, 2.0, int(np.prod(s))).reshape(s) for s in shapes]

    def prog(L, *xs):
        def f(x):
            ys = list(xs)
            ys[which] = x
            return getattr(L, op)(*ys, value=0.5)

        return L.func.jvp(f, (xs[which],), (L.ones_like(xs[which]),))

    assert_same(prog, *args)


def test_fma_on_the_device(cuda):
    """The float32 path (with its halfway sums) gives the CPU's bits on device arrays."""
    x, y, z = _halfway_operands()

    def prog(L):
        dev = {} if L is torch else {"device": cuda}
        a, b, c = (L.tensor(v, **dev) for v in (x, y, z))
        return L.addcmul(c, a, b).double().cpu()

    _bits_equal(*run_both(prog))


def _halfway_operands(n: int = 1000):
    """float32 x, y, z whose fused x * y + z is all the product's float32 rounding error
    (z the product's negated float32), and one whose float64 sum lies exactly halfway
    between two float32 numbers though the exact one is below (rounded to even, wrong)."""
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((2, n)).astype(np.float32)
    z = -(x * y)  # (float32: the product's rounding error is what is left)
    # (1 + 2**-15) 2**-24 (1 - 2**-15) + (1 + 2**-23) = 1 + 2**-23 + 2**-24 - 2**-54
    x[0], y[0], z[0] = (1 + 2.0**-15) * 2.0**-24, 1 - 2.0**-15, 1 + 2.0**-23
    return x, y, z


def _round32(exact: Fraction) -> np.float32:
    """exact rounded once to float32 (the nearest of the candidates around its float64)."""
    f = np.float32(float(exact))
    near = [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]
    return min(near, key=lambda c: (abs(Fraction(float(c)) - exact), int(c.view(np.uint32)) & 1))


def test_fma_rounds_once():
    """float32: against exact rational arithmetic, on products whose rounding an unfused
    sum would lose (z the product's negated float32)."""
    x, y, z = _halfway_operands()
    got = fma(np, x, y, z)
    want = [
        _round32(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)))
        for a, b, c in zip(x, y, z)
    ]
    _bits_equal(got, want)
    assert got[0] == np.float32(1 + 2.0**-23)
    assert np.count_nonzero(got) > 900  # (the unfused float32 sum is exactly 0 everywhere)


def test_addcmul_of_0d_operands_rounds_a_halfway_sum_once():
    """A 0-d float32 addcmul whose float64 sum lies halfway between two float32 numbers (the
    case the fused rounding corrects) gives torch's bits."""
    x, y, z = (np.array(v[0]) for v in _halfway_operands(1))
    got, want = run_both(lambda T, a, b, c: T.addcmul(c, a, b), x, y, z)
    assert got.shape == () and want.shape == ()
    _bits_equal(got, want)
    assert got == np.float32(1 + 2.0**-23)
