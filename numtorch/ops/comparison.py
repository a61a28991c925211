"""Comparisons, logical ops, closeness and where: elementwise ops with a bool result or
a bool condition (predicates of one tensor, such as ``isnan``, are in ``unary``)."""

from __future__ import annotations

import numpy as np

from .._core import dtype as dt
from .._core import scalars
from .._core.dispatch import dispatch
from .._core.inplace import (
    check_operands,
    check_overlap,
    check_sample_broadcast,
    check_write,
    run_inplace,
)
from .._core.methods import tensor_method, tensor_methods
from .._core.no_kernel import NoKernel
from .._core.op import ErrorInput, default_node_name
from .._core.policy import BatchedWrite, InplacePolicy
from .._core.pyargs import refuse
from .._core.state import state
from .._core.tensor import Tensor
from .._opdb.samples import S
from ._batching import front, logical_cast, lrank, pad_to
from ._families import (
    BINARY_SHAPES,
    FLOATS_INT,
    FLOATS_INT_BOOL,
    LINEAR,
    UNARY_SHAPES,
    comparison,
    elementwise_op,
    promote,
    tensor_only_methods,
    unary,
    unary_samples,
)
from .creation import zeros_like

_BOOL = np.dtype(np.bool_)


# ------------------------------------------------------------------ where
def _promote_where(arrays, attrs=None):
    """The condition stays bool; input and other promote together."""
    cond = arrays[0]
    if hasattr(cond, "dtype") and cond.dtype != _BOOL:
        raise RuntimeError(
            "where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{_dtype_name(cond)}"
        )
    operands = list(arrays[1:])
    try:
        vals, odt = promote(operands, attrs)
    except OverflowError:  # (NumPy's refusal of a Python int: PyTorch's check below)
        vals, odt = None, next(a.dtype for a in operands if hasattr(a, "dtype"))
    if type(operands[0]) is int or type(operands[1]) is int:  # (PyTorch's Scalar arguments)
        checked = scalars.checked_operands(operands, odt)
        if vals is None:
            vals, odt = promote(checked, attrs)
    return [cond, *vals], odt


def _where(xp, condition, input, other):
    if xp is np and type(condition) is np.ndarray and condition.size >= _SELECT_MIN:
        out = _bit_select(condition, input, other)
        if out is not None:
            return out
    return xp.where(condition, input, other)


# np.where branches per element, and a condition with no pattern (a ReLU mask) makes the
# branch mispredict half the time: 4-5x slower than a pass of arithmetic. Selecting bit
# patterns through an all-ones/all-zeros mask is exact (NaN payloads and signed zeros
# included) and branch-free; it covers the large arrays of one numeric dtype.
_SELECT_MIN = 1 << 15
_SIGNED = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def _bit_select(condition, input, other):
    """where(condition, input, other) for arrays of one numeric dtype (or a +0 scalar)
    as the broadcast shape's bit patterns; None where this does not apply."""
    arrays = [a for a in (input, other) if isinstance(a, np.ndarray)]
    if (
        not arrays
        or arrays[0].dtype.kind not in "fiu"
        or any(a.dtype != arrays[0].dtype for a in arrays)
    ):
        return None
    dtype = arrays[0].dtype
    bits = _SIGNED.get(dtype.itemsize)
    if bits is None or not all(
        isinstance(a, np.ndarray) or _is_plus_zero(a) for a in (input, other)
    ):
        return None
    if np.result_type(input, other) != dtype:  # an int array and 0.0 make floats
        return None
    shape = np.broadcast_shapes(condition.shape, *(a.shape for a in arrays))
    # A mask of all-ones/all-zeros int8 (-True is all ones), sign-extended to the dtype's
    # width inside each bitwise loop: the mask is a quarter of a pass at float32.
    cond = np.broadcast_to(condition, shape).view(np.int8)
    if isinstance(input, np.ndarray):
        mask = np.negative(cond)
        out = np.bitwise_and(input.view(bits), mask, dtype=bits)
        if isinstance(other, np.ndarray):
            np.invert(mask, out=mask)
            np.bitwise_or(out, np.bitwise_and(other.view(bits), mask, dtype=bits), out=out)
    else:
        out = np.bitwise_and(other.view(bits), np.subtract(cond, np.int8(1)), dtype=bits)
    return out.view(dtype)


def _is_plus_zero(x) -> bool:
    return (
        isinstance(x, (int, float))
        and not isinstance(x, bool)
        and x == 0
        and (not isinstance(x, float) or str(x) == "0.0")
    )


def _where_samples(make):
    b = np.bool_
    for sc, sa, sb in [
        ((3,), (3,), (3,)),
        ((2, 3), (2, 3), (2, 3)),
        ((2, 3), (3,), (2, 1)),
        ((), (2, 3), ()),
        ((2, 1), (1, 3), (3,)),
        ((0, 3), (3,), (0, 3)),
        ((), (), ()),
    ]:
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


where_p = elementwise_op(
    "where",
    _where,
    (
        None,
        lambda g, condition: where(condition, g, 0),
        lambda g, condition: where(condition, 0, g),
    ),
    LINEAR,
    prepare=_promote_where,
    samples=_where_samples,
    error_samples=_where_errors,
    dtypes=FLOATS_INT,
    number_edges=True,  # a number operand is a 0-d tensor in PyTorch
    # ``where`` below; Tensor.where(condition, y) takes self second
    methods=False,
    inplace=False,
    float8=True,  # (PyTorch copies float8)
    complex32=True,
    checked_scalars=("input", "other"),
)
_raw_where = where_p.fn


def where(condition: Tensor, input=None, other=None, *, out: Tensor | None = None):
    """Elements of ``input`` where ``condition`` holds, else of ``other``.

    With only ``condition``, the indices of its nonzero elements as a tuple.
    """
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    if input is None or other is None or not isinstance(condition, Tensor):
        given = (condition, input, other)
        refuse("torch.where", given[: 3 if other is not None else 2], {})
    return _raw_where(condition, input, other, out=out)


def _tensor_where(self: Tensor, condition: Tensor, y) -> Tensor:
    """``self.where(condition, y)`` is ``torch.where(condition, self, y)``."""
    return _raw_where(condition, self, y)


# ------------------------------------------------------------------ in-place forms
def _written(op):
    """The op a comparison's in-place form runs: op's values in self's dtype. As PyTorch's,
    its node (``LtBackward0`` for a number ``other``, ``LtBackward1`` for a tensor) gives
    self and other zero gradients, and its tangent is zero."""
    name = default_node_name(op.name)[:-1]

    def prepare(arrays, attrs=None):
        dtype = arrays[0].dtype
        return op.prepare(arrays, attrs)[0], dtype

    def rule(vmap, args, bdims, attrs):
        """The elementwise rule, but self keeps its dtype (the write's)."""
        (self, other), (sb, ob) = args, bdims
        rank = max(lrank(self, sb), lrank(other, ob) if isinstance(other, Tensor) else 0)
        new = [a if b is None else pad_to(front(a, b), rank) for a, b in zip(args, bdims)]
        if isinstance(other, Tensor) and other.dtype != self.dtype:
            other = logical_cast(op, args, bdims, attrs, new)[1]
            new[1] = other if ob is None else pad_to(front(other, ob), rank)
        return dispatch(write, tuple(new), attrs), 0

    write = elementwise_op(
        op.name,
        op.kernel,
        (lambda g: zeros_like(g), lambda g: zeros_like(g)),
        lambda result: zeros_like(result),
        prepare=prepare,
        batch_rule=rule,
        methods=False,
        out=False,
        register=False,
        node_name=lambda other: name + str(int(other is not None)),
        conversion=True,  # (an integer self leaves autograd)
        inplace_policy=op.inplace_policy,
        float8=op.float8,
        complex32=op.complex32,
    )
    return write


def _inplace_predicate(op, names: tuple, write=None) -> None:
    """``self.<name>_(...)``: the predicate's values written into self in self's dtype. The
    result carries no gradient from self or the other operand: self's new history has a
    zero gradient (and a zero tangent in self's dtype), as in PyTorch. A comparison writes
    through its own op, ``write`` (its node's name is PyTorch's); the others through
    ``copy_``."""

    def method(self: Tensor, *args, **kwargs) -> Tensor:
        if "out" in kwargs:
            raise TypeError(f"{op.name}_() got an unexpected keyword argument 'out'")
        check_operands(self, args, op)
        check_overlap(op, self, args)
        if state.stack:
            check_sample_broadcast(self, args, op)
        if write is not None and not kwargs and len(args) == 1:
            return run_inplace(write, self, args, {})
        result = op.fn(self, *args, **kwargs)
        check_write(self, result, op)
        return self.copy_(result)

    method.__name__ = op.name + "_"
    method.inplace_of = op
    tensor_method(method, *names)


def _predicate(name: str, kernel, make=comparison, **kw):
    """A predicate op with its in-place Tensor methods (``<method>_`` of each method)."""
    methods = kw.get("methods", (name,))
    op = make(name, kernel, inplace=False, **kw)
    write = _written(op) if make is comparison else None
    _inplace_predicate(op, tuple(m + "_" for m in methods), write)
    if kw.get("numbers") == "none":
        tensor_only_methods(op, tuple(m + "_" for m in methods))
    return op


# ------------------------------------------------------------------ comparisons
_OTHER = {"numbers": "other"}  # (PyTorch's comparisons take a number as other only)
eq_p = _predicate(
    "eq",
    lambda xp, input, other: input == other,
    float8=True,  # (PyTorch compares float8 for equality)
    **_OTHER,
    complex32=True,
)
eq = eq_p.fn
ne_p = _predicate(
    "ne",
    lambda xp, input, other: input != other,
    methods=("ne", "not_equal"),
    float8=True,
    **_OTHER,
    complex32=True,
)
gt_p = _predicate(
    "gt",
    lambda xp, input, other: input > other,
    methods=("gt", "greater"),
    **_OTHER,
    no_kernel=NoKernel("c", "gt_cpu"),
)
ge_p = _predicate(
    "ge",
    lambda xp, input, other: input >= other,
    methods=("ge", "greater_equal"),
    **_OTHER,
    no_kernel=NoKernel("c", "ge_cpu"),
)
lt_p = _predicate(
    "lt",
    lambda xp, input, other: input < other,
    methods=("lt", "less"),
    **_OTHER,
    no_kernel=NoKernel("c", "lt_cpu"),
)
le_p = _predicate(
    "le",
    lambda xp, input, other: input <= other,
    methods=("le", "less_equal"),
    **_OTHER,
    no_kernel=NoKernel("c", "le_cpu"),
)


# ------------------------------------------------------------------ logical ops
def _to_bool(arrays, attrs=None):
    """Logical ops: operands of any dtypes, a bool result."""
    return arrays, _BOOL


def _logical_samples(make):
    for sa, sb in BINARY_SHAPES:
        x, y = np.asarray(make(sa, -1, 1)), np.asarray(make(sb, -1, 1))
        if x.dtype.kind != "b" and x.ndim:
            x[..., :1] = 0
        yield S((x, y))
    yield S((make((2, 3), -1, 1), np.asarray(make((2, 3), dtype=np.bool_))), name="mixed dtypes")


_LOGICAL = {
    "prepare": _to_bool,
    "samples": _logical_samples,
    "numbers": "none",
    "inplace_policy": InplacePolicy(batched=BatchedWrite.ARITHMETIC),
}


def _truth(a):
    """``a`` as truth values a logical ufunc accepts: CuPy's have no complex loops."""
    return a != 0 if a.dtype.kind == "c" else a


logical_and_p = _predicate(
    "logical_and",
    lambda xp, input, other: xp.logical_and(_truth(input), _truth(other)),
    **_LOGICAL,
)
logical_or_p = _predicate(
    "logical_or",
    lambda xp, input, other: xp.logical_or(_truth(input), _truth(other)),
    **_LOGICAL,
)
logical_xor_p = _predicate(
    "logical_xor",
    lambda xp, input, other: xp.logical_xor(_truth(input), _truth(other)),
    **_LOGICAL,
)
logical_not_p = _predicate(
    "logical_not",
    lambda xp, input: xp.logical_not(_truth(input)),
    unary,
    prepare=_to_bool,
    samples=unary_samples(-1, 1, shapes=UNARY_SHAPES[:4]),
    dtypes=FLOATS_INT_BOOL,
)


# ------------------------------------------------------------------ closeness
def _dtype_name(a) -> str:
    return dt.of(a).scalar_name


def _isclose(xp, input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if input.dtype != other.dtype:
        raise RuntimeError(f"{_dtype_name(input)} did not match {_dtype_name(other)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    close = input == other
    if input.dtype.kind == "b":
        return close
    if input.dtype.kind in "iu":
        input, other = input.astype(xp.float64), other.astype(xp.float64)
    if equal_nan:
        close = close | (xp.isnan(input) & xp.isnan(other))
    with np.errstate(invalid="ignore"):  # inf - inf: PyTorch warns about nothing
        err = xp.abs(input - other)
    return close | (xp.isfinite(err) & (err <= atol + rtol * xp.abs(other)))


def _isclose_samples(make):
    a = make((2, 3))
    yield S((a, a + (a * 1e-6 if make.is_float else 0)))
    yield S((make((2, 3)), make((3,))))
    yield S((make(()), make((2, 3))), {"rtol": 0.5, "atol": 0.5})
    yield S((make((0, 3)), make((3,))))
    if make.is_float:
        x = np.array([np.nan, np.inf, -np.inf, 1.0, np.nan, 1.0], dtype=make.dtype)
        y = np.array([np.nan, np.inf, np.inf, np.inf, 1.0, 1.0 + 1e-3], dtype=make.dtype)
        yield S((x, y))
        yield S((x, y), {"equal_nan": True, "rtol": 1e-2})
        yield S((x, y, 0.0, 1e-2))


def _isclose_errors(make):
    yield ErrorInput(
        S((make((3,)), make((3,), dtype=np.float64))), RuntimeError, "Float did not match Double"
    )
    yield ErrorInput(
        S((make((3,)), make((3,))), {"rtol": -1}), RuntimeError, "rtol must be greater"
    )
    yield ErrorInput(
        S((make((3,)), make((3,))), {"atol": -1}), RuntimeError, "atol must be greater"
    )
    yield ErrorInput(
        S((make((3,)), 2)), TypeError, r"argument 'other' \(position 2\) must be Tensor, not int"
    )


isclose_p = comparison(
    "isclose",
    _isclose,
    prepare=None,
    samples=_isclose_samples,
    error_samples=_isclose_errors,
    dtypes=FLOATS_INT,
    out=False,
    inplace=False,
    numbers="none",
    complex32=True,
)
isclose = isclose_p.fn


def allclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """Whether every element of ``input`` is close to ``other`` (see ``isclose``)."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input: Tensor, other: Tensor) -> bool:
    """Whether the two tensors have the same shape and the same elements."""
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(eq(input, other)._data.all())


tensor_methods({"where": _tensor_where, "allclose": allclose, "equal": equal})
