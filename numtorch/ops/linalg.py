"""Linear algebra: products, decompositions, solves."""

from __future__ import annotations

from ._families import method, promote
from .._core.op import defop
from ..testing.samples import S


def _matmul_vjp_a(g, a, b):
    if a.dim() == 1 and b.dim() == 1:
        return g * b
    if b.dim() == 1:
        return g.unsqueeze(-1) * b
    if a.dim() == 1:
        return (b @ g.unsqueeze(-1)).squeeze(-1)
    return g @ b.mT


def _matmul_vjp_b(g, a, b):
    if a.dim() == 1 and b.dim() == 1:
        return g * a
    if a.dim() == 1:
        return a.unsqueeze(-1) * g.unsqueeze(-2)
    if b.dim() == 1:
        return (a.mT @ g.unsqueeze(-1)).squeeze(-1)
    return a.mT @ g


def _matmul_samples(make):
    for sa, sb in [
        ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
        ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
        ((2, 1, 2, 3), (5, 3, 2)), ((3,), (5, 3, 4)), ((5, 2, 3), (3,)),
    ]:  # fmt: skip
        yield S((make(sa), make(sb)))


matmul = method(
    defop(
        "matmul", lambda xp, a, b: xp.matmul(a, b), vjp=(_matmul_vjp_a, _matmul_vjp_b),
        jvp=lambda ta, tb, a, b: ta @ b + a @ tb, prepare=promote, samples=_matmul_samples,
    )  # fmt: skip
)
