"""Python's operators on tensors (``+``, ``@``, ``<``, ``~``...), declared as Tensor methods."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._core.dispatch import binary_method, dispatch
from .._core.inplace import run_inplace
from .._core.methods import tensor_method, tensor_methods
from .._core.op import Op
from .._core.tensor import Tensor
from . import binary, comparison, linalg, unary
from .linalg.products import matmul_arrays

_ALPHA = {"alpha": 1}
_NUMBER = (Tensor, int, float, complex, bool)
_PLAIN = frozenset(_NUMBER)  # operand types taken as they are, with one set lookup


def _operand(other, tensors_only: bool):
    """``other`` as PyTorch's operators read it: a tensor or a Python number, a NumPy
    scalar as its Python number; NotImplemented for anything else (a list, a string, an
    array, an object of another library; ``tensors_only``: anything but a tensor)."""
    if isinstance(other, Tensor):
        return other
    if tensors_only:
        return NotImplemented
    if isinstance(other, np.generic):
        if isinstance(other, np.integer):
            return int(other)
        if isinstance(other, (np.number, np.bool_)):
            # PyTorch reads a NumPy bool as a float too, and a complex as its real part
            # (with NumPy's ComplexWarning)
            return float(other)
        return NotImplemented
    return other if isinstance(other, _NUMBER) else NotImplemented


# Python's symbols for the operators whose refusal it words with the operands' type names
_SYMBOLS = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "truediv": "/",
    "floordiv": "//",
    "mod": "%",
    "pow": "** or pow()",
    "matmul": "@",
    "and": "&",
    "or": "|",
    "xor": "^",
    "lshift": "<<",
    "rshift": ">>",
}
_ORDERINGS = {"lt": ("<", "gt"), "le": ("<=", "ge"), "gt": (">", "lt"), "ge": (">=", "le")}


def _declined(self, other, name: str | None):
    """NotImplemented for an operand the operator ``name`` does not take; for a transform's
    wrapper, which PyTorch's refusal calls a Tensor, the other operand's reflected method
    or Python's TypeError worded so."""
    if name is None or self._level == 0:
        return NotImplemented
    if name == "mul" and isinstance(other, (str, bytes, bytearray, list, tuple)):
        return NotImplemented  # (Python repeats the sequence: its own errors)
    if name in _ORDERINGS:
        symbol, reflected = _ORDERINGS[name]
        text = f"'{symbol}' not supported between instances of 'Tensor' and '%s'"
    elif name in _SYMBOLS:
        symbol, reflected = _SYMBOLS[name], "r" + name
        text = f"unsupported operand type(s) for {symbol}: 'Tensor' and '%s'"
    else:
        return NotImplemented
    method = getattr(type(other), f"__{reflected}__", None)
    if method is not None:
        out = method(other, self)
        if out is not NotImplemented:
            return out
    raise TypeError(text % type(other).__name__)


def _operator(call: Callable, tensors_only: bool = False, name: str | None = None) -> Callable:
    """``call(self, other)``, or NotImplemented for an operand PyTorch's operators do not
    take, so that Python tries the other operand's reflected method and then raises its
    own TypeError (``name``: the operator, whose refusal is worded for a wrapper)."""

    def operator(self, other):
        if type(other) not in _PLAIN or tensors_only and type(other) is not Tensor:
            given, other = other, _operand(other, tensors_only)
            if other is NotImplemented:
                return _declined(self, given, name)
        return call(self, other)

    return operator


def _reflected(op: Op) -> Callable:
    fn = op.fn
    return lambda self, other: fn(other, self)


def _inplace(op: Op, attrs: dict) -> Callable:
    return lambda self, other: run_inplace(op, self, (other,), attrs)


def _short(op: Op, attrs: dict, ufunc=None, name: str | None = None) -> Callable:
    """An operator that dispatches ``op``, with dispatch's short path for plain operands."""
    general = _operator(lambda self, other: dispatch(op, (self, other), attrs), name=name)
    return binary_method(op, attrs, general, ufunc)


# + - * and unary minus: the hottest operators dispatch directly. Reflected ones record
# PyTorch's graph: ``2 + x`` is add(x, 2) (the tensor in slot 0) and ``2 - x`` is rsub(x, 2).
add_p, sub_p, mul_p, rsub_p = binary.add_p, binary.sub_p, binary.mul_p, binary.rsub_p
tensor_methods(
    {
        "__add__": _short(add_p, _ALPHA, np.add, "add"),
        "__radd__": _short(add_p, _ALPHA, np.add),
        "__sub__": _short(sub_p, _ALPHA, np.subtract, "sub"),
        "__rsub__": _operator(lambda self, other: dispatch(rsub_p, (self, other), _ALPHA)),
        "__mul__": _short(mul_p, {}, name="mul"),
        "__rmul__": _short(mul_p, {}),
        "__neg__": lambda self: dispatch(unary.neg_p, (self,), {}),
        "__pos__": lambda self: self,
        "__iadd__": _operator(_inplace(add_p, _ALPHA)),
        "__isub__": _operator(_inplace(sub_p, _ALPHA)),
        "__imul__": _operator(_inplace(mul_p, {})),
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
    _matmul = _dunder == "matmul"
    _fn = _op.fn
    _method = _operator(lambda self, other, fn=_fn: fn(self, other), _matmul, _dunder)
    if _matmul:  # (x @ w, a layer's product: dispatch's short path for plain factors)
        _method = binary_method(_op, {}, _method, matmul_arrays)
    tensor_method(_method, f"__{_dunder}__")
    if _dunder != "truediv":  # see _rtruediv
        tensor_method(_operator(_reflected(_op), _matmul), f"__r{_dunder}__")
    if _has_inplace:
        tensor_method(_operator(getattr(Tensor, _op.name + "_")), f"__i{_dunder}__")


def _rtruediv(self, other):
    """``other / tensor`` as PyTorch evaluates it: ``reciprocal(tensor) * other`` (so its
    rounding and its graph, MulBackward0, are PyTorch's; any other operand meets Python's
    ``*``, and a TypeError there is NotImplemented)."""
    if isinstance(other, Tensor):
        return binary.div(other, self)
    if isinstance(other, _NUMBER):
        return dispatch(mul_p, (unary.reciprocal(self), other), {})
    try:
        return unary.reciprocal(self) * other
    except TypeError:
        return NotImplemented


tensor_method(_rtruediv, "__rtruediv__")
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    _fn = getattr(comparison, _name + "_p").fn
    tensor_method(
        _operator(lambda self, other, fn=_fn: fn(self, other), name=_name), f"__{_name}__"
    )
tensor_methods({"__abs__": unary.abs_p.fn, "__invert__": unary.bitwise_not_p.fn})
