"""The dtypes PyTorch's CPU kernels do not implement, and what they raise then.

NumPy computes many ops in dtypes PyTorch refuses (a complex ``maximum``, a bool
``argmax``), or fails with its own TypeError. One table says, per op, which kinds of input
dtype PyTorch rejects and with which exception and text (``{}`` is the dtype's name,
``'ComplexDouble'``); ``defop`` puts the check in front of the op's type promotion, so
only the listed ops pay for it, and it runs before anything is computed or written.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import dtype as dt

_NI, _RT = NotImplementedError, RuntimeError
_COMPLEX, _BOOL, _INTS = "c", "b", "iu"


def _kernel(name: str) -> tuple:
    return (_NI, f'"{name}" not implemented for ' + "'{}'")


def _rule(text: str, exc=_RT) -> tuple:
    return (exc, text)


_CLAMP = _rule("clamp is not supported for complex types", _NI)

# op name -> {dtype kinds: (exception type, text)}
GAPS: dict[str, dict[str, tuple]] = {
    # comparisons and orderings: no complex
    **{n: {_COMPLEX: _kernel(f"{n}_cpu")} for n in ("gt", "ge", "lt", "le")},
    **{
        n: {_COMPLEX: _rule(f"{n} not implemented for complex tensors.")}
        for n in ("maximum", "minimum", "fmax", "fmin")
    },
    "clamp": {_COMPLEX: _CLAMP},
    "clamp_min": {_COMPLEX: _kernel("maximum_cpu")},
    "clamp_max": {_COMPLEX: _kernel("minimum_cpu")},
    "relu": {_COMPLEX: _CLAMP},
    "hardtanh": {_COMPLEX: _CLAMP},
    "floor_divide": {_COMPLEX: _kernel("div_floor_cpu")},
    **{
        n: {_COMPLEX: _kernel(f"{n}_cpu")}
        for n in ("remainder", "fmod", "atan2", "hypot", "copysign", "xlogy", "logaddexp2")
    },
    # rounding and real-line functions
    **{n: {_COMPLEX: _rule(f"{n} is not supported for complex inputs", _NI)} for n in ("floor", "ceil", "trunc")},
    "round": {_COMPLEX: _kernel("round_vml_cpu")},
    "frac": {_COMPLEX: _kernel("frac_cpu")},
    "sign": {
        _COMPLEX: _rule(
            "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
            "torch.sgn instead.",
            _NI,
        )
    },
    "signbit": {_COMPLEX: _rule("signbit is not implemented for complex tensors.", _NI)},
    **{n: {_COMPLEX: _rule(f"{n} does not support complex inputs.")} for n in ("isposinf", "isneginf")},
    **{n: {_COMPLEX: _rule(f"{n} is not supported for complex tensors.")} for n in ("deg2rad", "rad2deg")},
    **{n: {_COMPLEX: _kernel(f"{n}_vml_cpu")} for n in ("erf", "erfc", "erfinv")},
    "logit": {_COMPLEX: _kernel("logit_cpu")},
    # activations
    "elu": {_COMPLEX: _kernel("elu_cpu")},
    "gelu": {_COMPLEX: _kernel("GeluKernelImpl")},
    "softshrink": {_COMPLEX: _kernel("softshrink_check")},
    **{
        n: {_COMPLEX: _kernel(f"{n}_cpu")}
        for n in (
            "mish", "hardswish", "hardshrink", "softplus", "log_sigmoid", "leaky_relu",
            "threshold",
        )
    },  # fmt: skip
    # reductions, scans, selections
    "amax": {_COMPLEX: _kernel("max_values_cpu")},
    "amin": {_COMPLEX: _kernel("min_values_cpu")},
    **{n: {_COMPLEX: _rule(f"{n}(): does not support complex input")} for n in ("max", "min")},
    **{
        n: {
            _COMPLEX: _rule(f"{n}(): does not support complex input"),
            _BOOL: _rule(f"{n}(): does not support bool input"),
        }
        for n in ("argmax", "argmin")
    },
    **{n: {_COMPLEX: _kernel(f"{n}_cpu")} for n in ("cummax", "cummin")},
    **{n: {_COMPLEX: _rule("nansum on CPU does not support complex inputs")} for n in ("nansum", "nanmean")},
    **{n: {_COMPLEX: _rule(" Sort does not support complex dtypes on CPU")} for n in ("sort", "argsort")},
    "topk": {
        _COMPLEX: _rule(" topk does not support complex dtypes on CPU"),
        _BOOL: _rule("topk does not support bool dtypes on CPU"),
    },
    **{n: {_COMPLEX + _BOOL: _kernel(f"{n}_cpu")} for n in ("kthvalue", "median")},
    "logcumsumexp": {_BOOL + _INTS: _kernel("logcumsumexp_out_cpu")},
    "trace": {_BOOL: _kernel("trace")},
    "bmm": {_BOOL: _kernel("bmm")},
    "linalg_cross": {_BOOL: _kernel("cross")},
}  # fmt: skip


_KINDS = {
    "c": (np.complex64, np.complex128),
    "b": (np.bool_,),
    "i": (np.int8, np.int16, np.int32, np.int64),
    "u": (np.uint8, np.uint16, np.uint32, np.uint64),
}


def guard(name: str, prepare: Callable | None) -> Callable | None:
    """``prepare`` behind the check of op ``name``'s dtype gaps (``prepare`` itself when
    PyTorch has none for it). The check is a dict lookup per array operand."""
    gaps = GAPS.get(name)
    if gaps is None:
        return prepare
    rules = {np.dtype(t): rule for kinds, rule in gaps.items() for k in kinds for t in _KINDS[k]}
    nd = np.ndarray

    def checked(arrays, attrs=None):
        for a in arrays:
            d = a.dtype if type(a) is nd else getattr(a, "dtype", None)  # GPU arrays too
            rule = rules.get(d) if d is not None else None
            if rule is not None:
                raise rule[0](rule[1].format(dt.from_np(d).scalar_name))
        return (arrays, None) if prepare is None else prepare(arrays, attrs)

    return checked
