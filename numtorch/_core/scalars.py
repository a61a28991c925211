"""Python integers converted into a tensor's integer dtype, as PyTorch converts them.

PyTorch first reads a Python int as a Scalar (int64, or uint64 up to 2**64 - 1; beyond,
its OverflowError). Then an op either converts it with an overflow check (``fill_``,
``full``, ``masked_fill``, ``index_fill``, clamp's bounds, every attribute such as
``alpha``: a RuntimeError naming the C++ type; an unsigned type also takes the negatives
down to ``-max``, wrapped) or, as elementwise arithmetic and comparisons do, wraps it
into the dtype (``int8 + 1000`` adds -24). NumPy refuses such ints with its own
OverflowError, so kernels run as they are and these rules apply only when NumPy
overflows (``_run`` catches it) or, for comparisons, where NumPy compares exactly."""

from __future__ import annotations

import numpy as np

_CPP = {
    "int8": "int8_t",
    "uint8": "uint8_t",
    "int16": "int16_t",
    "int32": "int",
    "int64": "int64_t",
}


def scalar(v: int) -> int:
    """``v`` read as PyTorch's Scalar: its OverflowError beyond int64/uint64."""
    if v < -(2**63):
        raise OverflowError("can't convert negative int to unsigned")
    if v >= 2**64:
        raise OverflowError("int too big to convert")
    return v


def wrap(v: int, dtype: np.dtype) -> int:
    """``v`` wrapped into integer ``dtype`` (two's complement), as a C cast."""
    if dtype.kind == "b":
        return v != 0
    bits = dtype.itemsize * 8
    v &= (1 << bits) - 1
    if dtype.kind == "i" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def checked(v: int, dtype: np.dtype, name: str | None = None) -> int:
    """``v`` converted into integer ``dtype`` with PyTorch's overflow check (its text
    names the C++ type, or ``name``); bool takes any int."""
    if dtype.kind == "b":
        return v != 0
    info = np.iinfo(dtype)
    low = -int(info.max) if dtype.kind == "u" else int(info.min)
    if not low <= v <= int(info.max):
        raise RuntimeError(
            f"value cannot be converted to type {name or _CPP[dtype.name]} without overflow"
        )
    return wrap(v, dtype)


def _is_int(v) -> bool:
    return type(v) is int or (isinstance(v, int) and not isinstance(v, bool))


def wrapped_operands(arrays: list) -> list:
    """Operands with their Python ints wrapped into the integer dtype of the array
    operands (elementwise arithmetic and comparisons)."""
    target = next((a.dtype for a in arrays if isinstance(a, np.ndarray)), None)
    if target is None or target.kind not in "iu":
        return arrays
    return [wrap(scalar(a), target) if _is_int(a) else a for a in arrays]


def checked_operands(arrays: list, target) -> list:
    """Operands with their Python ints converted into the integer dtype ``target`` with
    PyTorch's overflow check (a Scalar argument, as ``where``'s); others as they are."""
    target = np.dtype(target)
    if target.kind not in "biu":
        return arrays
    return [checked(scalar(a), target) if _is_int(a) else a for a in arrays]


def on_overflow(op, arrays: list, attrs: dict, target: np.dtype | None = None):
    """(arrays, attrs) with the Python ints converted as PyTorch converts them into
    ``target`` (the dtype the kernel writes: its first array operand's, else its
    ``dtype`` attribute), after NumPy overflowed on one; PyTorch's errors. The inputs
    and attributes the op names in ``checked_scalars`` are checked (``-alpha``: alpha's
    negation is), other inputs wrap;
    None where the kernel's overflow is none of these."""
    if target is None:
        d = attrs.get("dtype")
        target = getattr(d, "np", d)
    if target is None:
        target = next((a.dtype for a in arrays if isinstance(a, np.ndarray)), None)
    ints = [a for a in (*arrays, *attrs.values()) if _is_int(a)]
    for v in ints:
        scalar(v)
    if target is None or np.dtype(target).kind not in "biu":
        return None
    target = np.dtype(target)
    check = op.checked_scalars
    arrays = [
        ((checked if n in check else wrap)(a, target) if _is_int(a) else a)
        for n, a in zip(op.inputs, arrays)
    ]
    attrs = {k: _attr(k, v, check, target) for k, v in attrs.items()}
    return arrays, attrs


def _attr(name: str, v, check: tuple, target: np.dtype):
    """An attribute converted: checked (``-name``: PyTorch checks its negation, as sub's
    alpha, which it adds negated), else as it is."""
    if not _is_int(v):
        return v
    if name in check:
        return checked(v, target)
    if "-" + name in check:
        return wrap(-checked(-v, target), target)
    return v


def tensor_data(data, npd: np.dtype):
    """``data`` (nested lists of numbers) for ``torch.tensor(data, dtype=...)`` where NumPy
    overflowed: its ints converted as PyTorch converts them, or PyTorch's error (an int
    beyond int64: ``ValueError``)."""
    npd = np.dtype(npd)

    def convert(d):
        if isinstance(d, (list, tuple)):
            return [convert(x) for x in d]
        if not _is_int(d):
            return d
        if not -(2**63) <= d < 2**63:
            raise ValueError("Overflow when unpacking long long")
        return checked(d, npd, npd.name) if npd.kind in "biu" else d

    return convert(data)


_HALF_MAX = 65504.0  # float16's largest finite value


def check_complex32(v, name: str = "c10::complex<c10::Half>") -> None:
    """PyTorch's overflow check converting the number ``v`` into complex32 (``name``: the
    C++ type its text names): a finite part beyond float16's range (inf and nan pass)."""
    if not isinstance(v, (int, float, complex)):
        return
    for part in (v.real, v.imag) if isinstance(v, complex) else (v,):
        if abs(part) > _HALF_MAX and part - part == 0:  # (finite)
            raise RuntimeError(f"value cannot be converted to type {name} without overflow")


def checked_complex32(op, arrays: list, attrs: dict) -> None:
    """The numbers an op converts with its overflow check (``Op.checked_scalars``: inputs
    by name and attributes; ``-alpha`` is alpha's), checked against complex32's range."""
    for name in op.checked_scalars:
        name = name.lstrip("-")
        if name in attrs:
            check_complex32(attrs[name])
        elif name in op.inputs:
            check_complex32(arrays[op.inputs.index(name)])


def number_attrs(op, attrs: dict, tensor_type: type) -> dict | None:
    """``attrs`` with each 0-d tensor read as its number, as PyTorch's parser reads a tensor
    given for a Number (``alpha=torch.tensor(2.)``); None when no attribute is a tensor.
    A tensor that requires grad or has dims is refused with PyTorch's TypeError."""
    # a Number attribute is one declared with a number for its default (alpha=1, value=1)
    numbers = {n for n, d, _ in op.attrs if type(d) in (int, float, complex)}
    given = [n for n, v in attrs.items() if isinstance(v, tensor_type)]
    if not given or not numbers.issuperset(given):
        return None
    out = {}
    for name, v in attrs.items():
        if name in given:
            if v.dim() or v.requires_grad:
                raise TypeError(f"{op.name}(): argument '{name}' must be Number, not Tensor")
            v = v.item()
        out[name] = v
    return out
