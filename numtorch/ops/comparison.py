"""Comparisons, logical ops, predicates and where."""

from __future__ import annotations

import numpy as np

from .._core.op import ErrorInput, defop
from .._core.tensor import Tensor
from ..testing.samples import S
from ._families import LINEAR, promote

_BOOL = np.dtype(np.bool_)


# ------------------------------------------------------------------ where
def _promote_where(arrays, attrs=None):
    """The condition stays bool; input and other promote together."""
    cond = arrays[0]
    if hasattr(cond, "dtype") and cond.dtype != _BOOL:
        from .._core import dtype as dt

        name = {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int"}.get(
            dt.from_np(cond.dtype).name, dt.from_np(cond.dtype).name
        )
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype {name}"
        )
    vals, odt = promote(list(arrays[1:]), attrs)
    return [cond, *vals], odt


def _where(xp, condition, input, other):
    return xp.where(condition, input, other)


def _where_samples(make):
    b = np.bool_
    for sc, sa, sb in [
        ((3,), (3,), (3,)), ((2, 3), (2, 3), (2, 3)), ((2, 3), (3,), (2, 1)),
        ((), (2, 3), ()), ((2, 1), (1, 3), (3,)), ((0, 3), (3,), (0, 3)), ((), (), ()),
    ]:  # fmt: skip
        yield S((np.asarray(make(sc, dtype=b)), make(sa), make(sb)))
    yield S((make((2, 3), dtype=b), make((2, 3)), 0.5), name="scalar other")
    yield S((make((2, 3), dtype=b), -1.5, make((3,))), name="scalar input")
    if make.is_float:
        yield S((make((2, 3), dtype=b), 1.0, 0), name="scalars")


def _where_errors(make):
    yield ErrorInput(
        S((make((3,)), make((3,)), make((3,)))),
        RuntimeError,
        "where expected condition to be a boolean tensor, but got a tensor with dtype Float",
    )


where_op = defop(
    "where", _where,
    vjp=(None, lambda g, condition: where(condition, g, 0), lambda g, condition: where(condition, 0, g)),
    jvp=LINEAR, prepare=_promote_where, samples=_where_samples, error_samples=_where_errors,
    out=True, test={"dtypes": ("float32", "float64", "int64")},
)  # fmt: skip


def where(condition: Tensor, input=None, other=None, *, out: Tensor | None = None):
    """Elements of ``input`` where ``condition`` holds, else of ``other``.

    With only ``condition``, the indices of its nonzero elements as a tuple.
    """
    if input is None and other is None:
        import numtorch

        return numtorch.nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError(
            "where() received an invalid combination of arguments - got (Tensor, Tensor), but "
            "expected one of:\n * (Tensor condition)\n * (Tensor condition, Tensor input, Tensor "
            "other, *, Tensor out = None)"
        )
    return where_op.fn(condition, input, other, out=out)


def _tensor_where(self: Tensor, condition: Tensor, y) -> Tensor:
    """``self.where(condition, y)`` is ``torch.where(condition, self, y)``."""
    return where_op.fn(condition, self, y)


API = {"where": where}
TENSOR_METHODS = {"where": _tensor_where}
