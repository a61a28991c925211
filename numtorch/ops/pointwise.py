"""Elementwise ops: arithmetic and unary math."""

from __future__ import annotations

from ._families import LINEAR, binary, unary


def _add(xp, a, b, *, alpha=1):
    return a + b if alpha == 1 else a + alpha * b


def _sub(xp, a, b, *, alpha=1):
    return a - b if alpha == 1 else a - alpha * b


add = binary(
    "add", _add, (lambda g: g, lambda g, alpha: g if alpha == 1 else g * alpha), LINEAR,
)  # fmt: skip
sub = binary(
    "sub", _sub, (lambda g: g, lambda g, alpha: -g if alpha == 1 else g * -alpha), LINEAR,
)  # fmt: skip
mul = binary(
    "mul", lambda xp, a, b: a * b,
    (lambda g, b: g * b, lambda g, a: g * a),
    lambda ta, tb, a, b: ta * b + a * tb,
)  # fmt: skip
neg = unary("neg", lambda xp, x: -x, lambda g: -g, LINEAR, floating=False)
exp = unary("exp", lambda xp, x: xp.exp(x), lambda g, result: g * result, lambda t, result: t * result)
