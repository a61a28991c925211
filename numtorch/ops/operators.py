"""Python's operators on tensors (``+``, ``@``, ``<``, ``~``...), declared as Tensor methods."""

from __future__ import annotations

from collections.abc import Callable

from .._core.dispatch import dispatch
from .._core.inplace import run_inplace
from .._core.methods import tensor_method, tensor_methods
from .._core.op import Op
from .._core.tensor import Tensor
from . import binary, comparison, linalg, unary

_ALPHA = {"alpha": 1}
_NUMBER = (Tensor, int, float, complex, bool)


def _forward(op: Op) -> Callable:
    fn = op.fn
    return lambda self, other: fn(self, other)


def _checked(op: Op, reflected: bool) -> Callable:
    """``op(self, other)`` (``op(other, self)`` if reflected), or NotImplemented for an
    ``other`` that is no tensor or number, so that Python tries the other operand."""
    fn = op.fn

    def operator(self, other):
        if not isinstance(other, _NUMBER):
            return NotImplemented
        return fn(other, self) if reflected else fn(self, other)

    return operator


def _inplace(op: Op, attrs: dict) -> Callable:
    return lambda self, other: run_inplace(op, self, (other,), attrs)


# + - * and unary minus: the hottest operators dispatch directly. Reflected ones record
# PyTorch's graph: ``2 + x`` is add(x, 2) (the tensor in slot 0) and ``2 - x`` is rsub(x, 2).
add_p, sub_p, mul_p, rsub_p = binary.add_p, binary.sub_p, binary.mul_p, binary.rsub_p
tensor_methods(
    {
        "__add__": lambda self, other: dispatch(add_p, (self, other), _ALPHA),
        "__radd__": lambda self, other: dispatch(add_p, (self, other), _ALPHA),
        "__sub__": lambda self, other: dispatch(sub_p, (self, other), _ALPHA),
        "__rsub__": lambda self, other: dispatch(rsub_p, (self, other), _ALPHA),
        "__mul__": lambda self, other: dispatch(mul_p, (self, other), {}),
        "__rmul__": lambda self, other: dispatch(mul_p, (self, other), {}),
        "__neg__": lambda self: dispatch(unary.neg_p, (self,), {}),
        "__pos__": lambda self: self,
        "__iadd__": _inplace(add_p, _ALPHA),
        "__isub__": _inplace(sub_p, _ALPHA),
        "__imul__": _inplace(mul_p, {}),
    }
)

# dunder: (op, whether it has an in-place form)
for _dunder, (_op, _has_inplace) in {
    "truediv": (binary.div_p, True),
    "floordiv": (binary.floor_divide_p, True),
    "mod": (binary.remainder_p, True),
    "pow": (binary.pow_p, True),
    "matmul": (linalg.matmul_p, False),
    "and": (binary.bitwise_and_p, True),
    "or": (binary.bitwise_or_p, True),
    "xor": (binary.bitwise_xor_p, True),
    "lshift": (binary.bitwise_left_shift_p, True),
    "rshift": (binary.bitwise_right_shift_p, True),
}.items():
    tensor_method(_forward(_op), f"__{_dunder}__")
    if _dunder != "truediv":  # see _rtruediv
        tensor_method(_checked(_op, reflected=True), f"__r{_dunder}__")
    if _has_inplace:
        tensor_method(getattr(Tensor, _op.name + "_"), f"__i{_dunder}__")


def _rtruediv(self, other):
    """``number / tensor`` as PyTorch evaluates it: ``reciprocal(tensor) * number`` (so its
    rounding and its graph, MulBackward0, are PyTorch's)."""
    if not isinstance(other, _NUMBER):
        return NotImplemented
    if isinstance(other, Tensor):
        return binary.div(other, self)
    return dispatch(mul_p, (unary.reciprocal(self), other), {})


tensor_method(_rtruediv, "__rtruediv__")
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    tensor_method(_checked(getattr(comparison, _name + "_p"), reflected=False), f"__{_name}__")
tensor_methods({"__abs__": unary.abs_p.fn, "__invert__": unary.bitwise_not_p.fn})
