"""``out[key] += values`` with repeated entries summed (``ufunc.at``), for every dtype on a
GPU too: CuPy's scatter-add has atomics for int32, uint32, uint64 and the floats only."""

from __future__ import annotations

import numpy as np

# the dtypes CuPy's add.at takes as they are
_NATIVE = frozenset(("int32", "uint32", "uint64", "float16", "float32", "float64"))


def add_at(xp, out, key, values) -> None:
    """``xp.add.at(out, key, values)``: in place, duplicates accumulate; on a GPU, int64
    adds as uint64 (the same bits modulo 2**64), complex as its real and imaginary parts,
    narrower integers and bool through an int32 sum."""
    name = out.dtype.name
    if xp is np or name in _NATIVE:
        xp.add.at(out, key, values)
        return
    values = _as_array(xp, values, out.dtype)
    if name == "int64":
        xp.add.at(out.view(xp.uint64), key, values.view(xp.uint64))
    elif out.dtype.kind == "c":
        xp.add.at(out.real, key, values.real)
        xp.add.at(out.imag, key, values.imag)
    else:
        total = xp.zeros(out.shape, xp.int32)
        xp.add.at(total, key, values.astype(xp.int32))
        if name == "bool":
            out |= total != 0
        else:  # (int32's sum modulo 2**32, then the low bits: PyTorch's wrapping sum)
            out[...] = (out.astype(xp.int32) + total).astype(out.dtype)


def _as_array(xp, values, dtype):
    """``values`` (an array or a number) as an array of ``dtype`` on the device."""
    if isinstance(values, (bool, int, float, complex, np.generic)):
        return xp.full((), values, dtype=dtype)  # (filled there, not copied)
    return values.astype(dtype, copy=False)
