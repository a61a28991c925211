"""Generators for families of ops: unary, binary, comparison, reduction, view.

Each turns a kernel and its formulas into a whole ``Op`` with type promotion,
default samples and Tensor methods, so that most ops are one short call.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._core import dtype as dt
from .._core.op import LINEAR, Op, _inplace_method, _sizes_method, defop, tensor_method
from ..testing.samples import S
from ._batching import elementwise

_nd = np.ndarray


def method(op: Op, *names: str, sizes: bool = False) -> Op:
    """Declare op as Tensor methods (default: its name); prefer ``defop(methods=...)``."""
    tensor_method(_sizes_method(op) if sizes else op.fn, *(names or (op.name,)))
    return op


def inplace(op: Op, *names: str) -> Op:
    """Declare op's in-place Tensor methods; prefer ``defop(inplace=...)``."""
    tensor_method(_inplace_method(op), *(names or (op.name + "_",)))
    return op


# ------------------------------------------------------------------ type promotion
def _operand(a):
    return (dt.from_np(a.dtype), a.ndim) if isinstance(a, _nd) or hasattr(a, "dtype") else a


_RESULT_TYPES: dict = {}


def _key(a):
    return (a.dtype, a.ndim == 0) if isinstance(a, _nd) else type(a)


def promote(arrays, attrs=None):
    """Cast array operands to PyTorch's result type; scalars stay weak."""
    a0 = arrays[0]
    same = True
    for a in arrays:
        if not isinstance(a, _nd) or a.dtype != a0.dtype:
            same = False
            break
    if same:
        return arrays, None
    key = (dt._default[0], *(_key(a) for a in arrays if a is not None))
    npd = _RESULT_TYPES.get(key)
    if npd is None:
        npd = _RESULT_TYPES[key] = dt.result_type(
            *(_operand(a) for a in arrays if a is not None)
        ).np
    out = [a.astype(npd) if isinstance(a, _nd) and a.dtype != npd else a for a in arrays]
    if not isinstance(out[0], _nd):
        # A scalar first operand: make it an array so the kernel sees the result dtype.
        out[0] = np.asarray(out[0], dtype=npd)
    return out, npd


def promote_float(arrays, attrs=None):
    """Promote, then integers and bools go to the default float dtype."""
    arrays, odt = promote(arrays, attrs)
    a = arrays[0]
    kind = a.dtype.kind if isinstance(a, _nd) else ""
    if kind in "biu":
        f = dt.get_default_dtype().np
        arrays = [x.astype(f) if isinstance(x, _nd) else x for x in arrays]
        return arrays, f
    return arrays, odt


def to_float(arrays, attrs=None):
    """Unary: integer and bool inputs compute in the default float dtype."""
    a = arrays[0]
    if a.dtype.kind in "biu":
        f = dt.get_default_dtype().np
        return [a.astype(f), *arrays[1:]], f
    return arrays, None


def compare(arrays, attrs=None):
    arrays, _ = promote(arrays, attrs)
    return arrays, np.dtype(np.bool_)


# ------------------------------------------------------------------ samples
UNARY_SHAPES = ((), (5,), (2, 3), (0, 3), (2, 1, 3))
BINARY_SHAPES = (
    ((3,), (3,)),
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((2, 1), (1, 3)),
    ((), (2, 3)),
    ((2, 3), ()),
    ((0, 3), (3,)),
)


def unary_samples(low=-2.0, high=2.0, shapes=UNARY_SHAPES):
    def samples(make):
        for s in shapes:
            yield S((make(s, low, high),))

    return samples


def binary_samples(
    low=-2.0, high=2.0, *, scalars=(2.5,), exclude_zero_b=False, low_b=None, high_b=None
):
    lb = low if low_b is None else low_b
    hb = high if high_b is None else high_b

    def samples(make):
        for sa, sb in BINARY_SHAPES:
            yield S((make(sa, low, high), make(sb, lb, hb, exclude_zero=exclude_zero_b)))
        for c in scalars:
            if make.is_float or isinstance(c, int):
                yield S((make((2, 3), low, high), c))

    return samples


# ------------------------------------------------------------------ generators
def _elementwise(name, kernel, vjp, jvp, prepare, samples, dtypes, has_inplace, kw) -> Op:
    """Shared tail of the elementwise generators: defaults, the op, its methods."""
    kw.setdefault("samples", samples)
    kw.setdefault("out", True)
    kw.setdefault("batch_rule", elementwise())
    op = defop(
        name, kernel, vjp=vjp, jvp=jvp, prepare=prepare,
        test={"dtypes": dtypes, **kw.pop("test", {})}, **kw,
    )  # fmt: skip
    method(op)
    if has_inplace:
        inplace(op)
    return op


def unary(
    name: str,
    kernel: Callable,
    vjp: Callable | None,
    jvp: Callable | str | None,
    *,
    floating: bool = True,
    low: float = -2.0,
    high: float = 2.0,
    dtypes=("float32", "float64"),
    has_inplace: bool = True,
    **kw,
) -> Op:
    """An elementwise op of one tensor; ``floating`` ops turn ints into floats."""
    return _elementwise(
        name, kernel, (vjp,) if vjp is not None else None, jvp, to_float if floating else None,
        unary_samples(low, high), dtypes, has_inplace, kw,
    )  # fmt: skip


def binary(
    name: str,
    kernel: Callable,
    vjp: tuple | None,
    jvp: Callable | str | None,
    *,
    floating: bool = False,
    low: float = -2.0,
    high: float = 2.0,
    dtypes=("float32", "float64"),
    has_inplace: bool = True,
    sample_kw: dict | None = None,
    **kw,
) -> Op:
    """An elementwise op of two broadcasting operands (tensors or scalars)."""
    return _elementwise(
        name, kernel, vjp, jvp, kw.pop("prepare", promote_float if floating else promote),
        binary_samples(low, high, **(sample_kw or {})), dtypes, has_inplace, kw,
    )  # fmt: skip


def comparison(name: str, kernel: Callable, **kw) -> Op:
    """An elementwise predicate of two operands: bool output, no gradient."""
    kw.setdefault("samples", binary_samples(-2, 2))
    kw.setdefault("test", {"dtypes": ("float32", "float64", "int64")})
    kw.setdefault("batch_rule", elementwise())
    op = defop(name, kernel, prepare=compare, **kw)
    method(op)
    return op


__all__ = [
    "LINEAR",
    "binary",
    "binary_samples",
    "compare",
    "comparison",
    "inplace",
    "method",
    "promote",
    "promote_float",
    "to_float",
    "unary",
    "unary_samples",
]
