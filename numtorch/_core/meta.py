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

from . import dtype as dt
from . import meta_funcs  # noqa: F401 (answers more NumPy functions on meta arrays)
from .layout import column_major, contiguous, follow_inputs, number_first_contiguous, preserve
from .messages import kernel_failure
from .meta_array import META_XP, MetaArray, NoData, c_strides, dense_strides

_NO_FAKE = (
    "attempted to run this operator with Meta tensors, but there was no fake impl or Meta "
    "kernel registered. You may have run into this message while using an operator with PT2 "
    "compilation APIs (torch.compile/torch.export); in order to use this operator with those "
    "APIs you'll need to add a fake impl. Please see the following for next steps:  "
    "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html"
)


def no_rule(op) -> NotImplementedError:
    """PyTorch's error for an op with no Meta kernel."""
    return NotImplementedError(f"aten::{op.name}: {_NO_FAKE}")


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
        msg = kernel_failure(arrays[: op.nin], attrs, e)
        if msg is None:
            raise
        raise RuntimeError(msg) from None
    if op.nout == 1:
        out = _as_meta(out)
        if odt is not None and out.dtype != odt:
            out = out.astype(odt)
        return _laid_out(op.layout, out, inputs)
    return tuple(_laid_out(op.layout, _as_meta(o), inputs) for o in out)


def _probe(a):
    """A one-element stand-in with ``a``'s rank and dtype, holding ones (valid for every
    elementwise kernel's checks: no zero divisor, no negative count)."""
    return np.ones((1,) * a.ndim, a.dtype) if type(a) is MetaArray else a


def by_kernel_or_probes(op, arrays: list, attrs: dict):
    """The elementwise family's rule: ``by_kernel``, or where the kernel reads values (a
    sign fix, a range check, a polynomial's degree), the kernel run on one-element probes
    for the dtype and the operands' broadcast shape."""
    try:
        return by_kernel(op, arrays, attrs)
    except NoData:
        pass
    shapes = [a.shape for a in arrays[: op.nin] if type(a) is MetaArray or hasattr(a, "ndim")]
    shape = np.broadcast_shapes(*shapes)
    probes = [_probe(a) for a in arrays]
    if op.prepare is not None:
        probes, odt = op.prepare(probes, attrs)
    else:
        odt = None
    with np.errstate(all="ignore"):
        out = op.kernel(np, *probes, **attrs)
    outs = out if op.nout != 1 else (out,)
    res = tuple(
        _laid_out(op.layout, MetaArray(shape, odt or np.asarray(o).dtype), arrays) for o in outs
    )
    return res if op.nout != 1 else res[0]


def by_kernel_or_input_shaped(op, arrays: list, attrs: dict) -> MetaArray:
    """An op whose result is shaped as its input (scatter_reduce, index_put, put):
    ``by_kernel``, or where the kernel reads values past its checks, the input's
    metadata, its values' checks skipped as PyTorch's meta kernels skip them."""
    try:
        return by_kernel(op, arrays, attrs)
    except NoData:
        a = arrays[0]
        return _laid_out(op.layout, MetaArray(a.shape, a.dtype), arrays)


def kernel_checks(op, arrays: list, attrs: dict) -> None:
    """The errors of the op's kernel run on meta arrays, its checks of shapes and dtypes
    (values unread): PyTorch's meta function's, which precede its overlap check
    (``Overlap.first``)."""
    try:
        by_kernel(op, arrays, attrs)
    except NoData:
        pass


def like_input(op, arrays: list, attrs: dict) -> MetaArray:
    """The first input's metadata (an in-place fill or draw: nothing to compute)."""
    a = arrays[0]
    return MetaArray(a.shape, a.dtype, a.strides)


_NONZERO = (
    "The register_meta function for torch.nonzero() raises unimplemented by default, as a "
    "correct data-independent implementation does not exist. This implementation returns a "
    "fake value, assuming all elements of the tensor are non-zero. To enable this "
    "registration, please set "
    "'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero' to True."
)


def value_sized(op, arrays: list, attrs: dict):
    """The rule of an op whose output's size is its input's values (masked_select,
    unique, bincount): PyTorch's error for an op with no fake implementation, raised
    before any device check."""
    raise no_rule(op)


def nonzero_sized(op, arrays: list, attrs: dict):
    """nonzero's (and argwhere's) rule: PyTorch's refusal of a data-dependent size."""
    raise NotImplementedError(_NONZERO)


# (PyTorch refuses these before it compares devices)
value_sized.mixes_devices = nonzero_sized.mixes_devices = True


def mixed_devices(rule: Callable, on: int = 0) -> Callable:
    """``rule`` for an op PyTorch runs with meta and CPU operands mixed (mm, matmul, an
    index given on the CPU): the result is made on the device of operand ``on``, as
    PyTorch's meta function allocates it (``new_empty`` of that operand)."""

    def mixed(op, arrays: list, attrs: dict):
        cpu = type(arrays[on]) is np.ndarray
        arrays = [META_XP.asarray(a) if type(a) is np.ndarray and a.ndim else a for a in arrays]
        out = rule(op, arrays, attrs)
        if cpu and type(out) is MetaArray:
            return np.empty(out.shape, out.dtype)  # (PyTorch allocates it, uninitialized)
        return out

    mixed.mixes_devices = True
    return mixed


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


def _recast(a: MetaArray, dtype) -> MetaArray:
    """``a``'s layout in another dtype (its byte strides rescaled)."""
    d = np.dtype(dtype)
    return MetaArray(a.shape, d, tuple(s * d.itemsize // a.itemsize for s in a.strides))


def _reduced_operands(arrays: list, attrs: dict) -> bool:
    for a in arrays:
        if (type(a) is MetaArray or type(a) is np.ndarray) and a.dtype in dt.REDUCED_NP:
            return True
        if isinstance(a, (list, tuple)) and _reduced_operands(a, {}):
            return True
    return getattr(attrs.get("dtype"), "np", None) in dt.REDUCED_NP


def _reduced(op, rule: Callable, arrays: list, attrs: dict):
    """A rule on bfloat16, float8 or complex32 operands (or ``dtype=`` asking for one) as
    PyTorch's kernels compute them: in float32 (complex64), a result of that dtype being
    the reduced one, unless another float operand decides the promotion."""
    ins = [a for a in arrays[: op.nin] if type(a) is MetaArray or type(a) is np.ndarray]
    kinds = {a.dtype for a in ins if a.dtype in dt.REDUCED_NP}
    reduced = next(iter(kinds), None)
    asked = attrs.get("dtype")
    if asked is not None and getattr(asked, "np", None) in dt.REDUCED_NP:
        reduced = asked.np
        attrs = {**attrs, "dtype": dt.from_np(dt.WIDE[reduced])}
    elif asked is not None:
        reduced = None
    if reduced == dt.BF16 and op.no_bfloat16:
        raise dt.not_implemented(op.no_bfloat16, dt.bfloat16)
    mixed = len(kinds) > 1 or any(
        a.dtype.kind in "fc" and a.dtype not in dt.REDUCED_NP for a in ins
    )
    wide = [
        _recast(a, dt.WIDE[a.dtype]) if type(a) is MetaArray and a.dtype in dt.REDUCED_NP else a
        for a in arrays
    ]
    out = rule(op, wide, attrs)
    if reduced is None or mixed:
        return out

    def narrow(o):
        if type(o) is MetaArray and o.dtype == dt.WIDE[reduced]:
            return _recast(o, reduced)
        return o

    return narrow(out) if op.nout == 1 else tuple(narrow(o) for o in out)


def run_meta(op, arrays: list, attrs: dict):
    """An op call with a meta operand: the op's metadata rule (see module doc)."""
    rule: Callable | None = op.meta
    if rule is None:
        raise no_rule(op)
    if not getattr(rule, "mixes_devices", False):
        _devices_agree(arrays[: op.nin])
    try:
        if not op.view and _reduced_operands(arrays[: op.nin], attrs):
            return _reduced(op, rule, arrays, attrs)
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
