"""Ops on the meta device: each op's metadata rule (``Op.meta``) computes its outputs'
shape, dtype and strides from its inputs', without data.

A rule is ``rule(op, arrays, attrs) -> MetaArray | tuple`` on the op's operands as the
kernel gets them (``MetaArray``s, numbers, lists). ``by_kernel`` is the rule the family
generators derive (elementwise, reductions, views) and ops declare whose kernel reads only
shapes and dtypes: it runs the kernel on the meta device's array module, where every array
is a ``MetaArray``. ``like_input`` gives the first input's metadata (in-place fills and
draws). An op without a rule raises PyTorch's ``NotImplementedError`` for a missing Meta
kernel, and never computes anything of its output's size.

``output_meta(op, args, kwargs)`` is the same rules as a function: the metadata an op
call's outputs would have, from its inputs' (the shape propagation compiled code needs).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .layout import column_major, contiguous, follow_inputs, number_first_contiguous, preserve
from .messages import alloc_message, broadcast_message, result_shape
from .meta_array import META_XP, MetaArray, NoData, c_strides, dense_strides

_WHY = (
    "This could be because the operator doesn't exist for this backend, or was omitted "
    "during the selective/custom build process (if using custom build)."
)


def no_rule(op) -> NotImplementedError:
    """PyTorch's error for an op with no Meta kernel."""
    return NotImplementedError(
        f"Could not run 'aten::{op.name}' with arguments from the 'Meta' backend. {_WHY}"
    )


def _as_meta(out):
    if type(out) is MetaArray or type(out) is np.ndarray:
        return out  # (an array a kernel made on another device: full_like(..., device=))
    if isinstance(out, (int, float, bool, complex, np.generic)):
        return META_XP.asarray(out)  # (a number or a 0-d probe: its metadata only)
    raise NoData("a kernel returned data")


def _laid_out(layout, out: MetaArray, inputs: list) -> MetaArray:
    """``out`` with the strides the op's layout rule (``_core/layout.py``) gives it."""
    if layout is None or out.ndim < 2 or type(out) is not MetaArray:
        return out
    if layout is follow_inputs or layout is number_first_contiguous:
        if layout is number_first_contiguous and not hasattr(inputs[0], "shape"):
            operands = []
        else:
            operands = [(a.shape, a.strides) for a in inputs if type(a) is MetaArray and a.ndim]
    elif layout is preserve:
        a = inputs[0]
        operands = [(a.shape, a.strides)] if getattr(a, "shape", None) == out.shape else []
    elif layout is column_major:
        st = c_strides(out.shape[:-2] + out.shape[-1:] + out.shape[-2:-1], out.itemsize)
        return MetaArray(out.shape, out.dtype, st[:-2] + (st[-1], st[-2]))
    elif layout is contiguous:
        operands = []
    else:
        return out
    if not operands:
        return MetaArray(out.shape, out.dtype)
    return MetaArray(out.shape, out.dtype, dense_strides(out.shape, operands, out.itemsize))


def by_kernel(op, arrays: list, attrs: dict):
    """The op's own kernel run on meta arrays: promotion, then the kernel, its result in
    the promoted dtype and laid out by the op's layout rule."""
    inputs = arrays
    odt = None
    if op.prepare is not None:
        arrays, odt = op.prepare(arrays, attrs)
    try:
        out = op.kernel(META_XP, *arrays, **attrs)
    except (ValueError, MemoryError) as e:
        msg = broadcast_message(arrays[: op.nin], e) or alloc_message(
            e, result_shape(arrays[: op.nin], attrs)
        )
        if msg is None:
            raise
        raise RuntimeError(msg) from None
    if op.nout == 1:
        out = _as_meta(out)
        if odt is not None and out.dtype != odt:
            out = out.astype(odt)
        return _laid_out(op.layout, out, inputs)
    return tuple(_laid_out(op.layout, _as_meta(o), inputs) for o in out)


def like_input(op, arrays: list, attrs: dict) -> MetaArray:
    """The first input's metadata (an in-place fill or draw: nothing to compute)."""
    a = arrays[0]
    return MetaArray(a.shape, a.dtype, a.strides)


def _devices_agree(arrays: list) -> None:
    """PyTorch's error for a meta operand beside a CPU tensor (a CPU 0-d tensor is a
    number to PyTorch, and may be mixed)."""
    first = None
    for a in arrays:
        for x in a if isinstance(a, (list, tuple)) else (a,):
            if type(x) is MetaArray:
                first = first or "meta"
                if first != "meta":
                    raise RuntimeError("Tensor on device meta is not on the expected device cpu!")
            elif type(x) is np.ndarray and x.ndim:
                first = first or "cpu"
                if first != "cpu":
                    raise RuntimeError("Tensor on device cpu is not on the expected device meta!")


def run_meta(op, arrays: list, attrs: dict):
    """An op call with a meta operand: the op's metadata rule (see module doc)."""
    rule: Callable | None = op.meta
    if rule is None:
        raise no_rule(op)
    _devices_agree(arrays[: op.nin])
    try:
        return rule(op, arrays, attrs)
    except NoData as e:
        raise no_rule(op) from e


def output_meta(op, args: tuple, kwargs: dict | None = None):
    """The outputs an op call would give, as meta tensors (shape, dtype, strides,
    requires_grad), from its inputs' metadata: tensors on any device stand for their
    metadata, and no data is read or made."""
    from .tensor import Tensor

    def meta(a):
        if isinstance(a, Tensor) and a.device.type != "meta":
            return a.to("meta")
        if isinstance(a, (list, tuple)):
            return type(a)(meta(x) for x in a)
        return a

    return op.fn(*(meta(a) for a in args), **{k: meta(v) for k, v in (kwargs or {}).items()})
