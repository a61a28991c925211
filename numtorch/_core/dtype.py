"""Dtypes and PyTorch's type-promotion rules."""

from __future__ import annotations

import math
import warnings

import ml_dtypes
import numpy as np


class dtype:
    """A tensor element type; wraps a NumPy dtype."""

    __slots__ = (
        "name",
        "np",
        "is_floating_point",
        "is_complex",
        "is_signed",
        "itemsize",
        "_kind",
        "scalar_name",
        "cpp_name",
    )

    def __init__(
        self, name: str, np_dtype, kind: int, scalar_name: str, cpp_name: str, signed: bool = True
    ):
        self.name = name
        self.scalar_name = scalar_name  # PyTorch's ScalarType name in messages: "Float"
        self.cpp_name = cpp_name  # the C++ type in PyTorch's messages: "float", "long int"
        self.np = np.dtype(np_dtype)
        self._kind = kind  # 0 bool, 1 integer, 2 floating, 3 complex
        self.is_floating_point = kind == 2
        self.is_complex = kind == 3
        self.is_signed = signed and self.np.kind != "u" and kind != 0
        self.itemsize = self.np.itemsize

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    @property
    def tensor_type(self) -> str:
        """The legacy tensor type name, ``Tensor.type()``: "torch.FloatTensor"."""
        return f"torch.{self.scalar_name}Tensor"

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self) -> dtype:
        return {complex32: float16, complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self) -> dtype:
        if self in FLOAT8:
            raise RuntimeError(f"Unknown Complex ScalarType for {self.scalar_name}")
        return {
            float32: complex64,
            float64: complex128,
            float16: complex32,
            bfloat16: complex64,
        }.get(self, self)


bool_ = dtype("bool", np.bool_, 0, "Bool", "bool")
uint8 = dtype("uint8", np.uint8, 1, "Byte", "unsigned char")
int8 = dtype("int8", np.int8, 1, "Char", "signed char")
int16 = dtype("int16", np.int16, 1, "Short", "short int")
int32 = dtype("int32", np.int32, 1, "Int", "int")
int64 = dtype("int64", np.int64, 1, "Long", "long int")
float16 = dtype("float16", np.float16, 2, "Half", "c10::Half")
float32 = dtype("float32", np.float32, 2, "Float", "float")
float64 = dtype("float64", np.float64, 2, "Double", "double")
# The reduced floats of ml_dtypes. PyTorch's CPU kernels compute bfloat16 in float32 and round
# the result once; float8 dtypes are for storage (casts, copies, views), not arithmetic.
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, 2, "BFloat16", "c10::BFloat16")
float8_e4m3fn = dtype(
    "float8_e4m3fn", ml_dtypes.float8_e4m3fn, 2, "Float8_e4m3fn", "c10::Float8_e4m3fn"
)
float8_e5m2 = dtype("float8_e5m2", ml_dtypes.float8_e5m2, 2, "Float8_e5m2", "c10::Float8_e5m2")
float8_e4m3fnuz = dtype(
    "float8_e4m3fnuz", ml_dtypes.float8_e4m3fnuz, 2, "Float8_e4m3fnuz", "c10::Float8_e4m3fnuz"
)
float8_e5m2fnuz = dtype(
    "float8_e5m2fnuz", ml_dtypes.float8_e5m2fnuz, 2, "Float8_e5m2fnuz", "c10::Float8_e5m2fnuz"
)
float8_e8m0fnu = dtype(
    "float8_e8m0fnu",
    ml_dtypes.float8_e8m0fnu,
    2,
    "Float8_e8m0fnu",
    "c10::Float8_e8m0fnu",
    signed=False,
)
complex64 = dtype("complex64", np.complex64, 3, "ComplexFloat", "c10::complex<float>")
complex128 = dtype("complex128", np.complex128, 3, "ComplexDouble", "c10::complex<double>")
# ml_dtypes' complex32 (two float16s): PyTorch's CPU kernels compute it in complex64 and round
# the result once, as they do bfloat16 in float32; most of them refuse it.
complex32 = dtype("complex32", ml_dtypes.complex32, 3, "ComplexHalf", "c10::complex<c10::Half>")

FLOAT8 = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)
ALL = (
    bool_,
    uint8,
    int8,
    int16,
    int32,
    int64,
    float16,
    float32,
    float64,
    complex64,
    complex128,
    bfloat16,
    *FLOAT8,
    complex32,
)
# NumPy dtypes of the reduced floats: their arrays compute in float32 (complex32's in complex64:
# ``widen``, ``WIDE``)
BF16 = bfloat16.np
F32 = np.dtype(np.float32)
C32 = complex32.np
C64 = np.dtype(np.complex64)
F16 = np.dtype(np.float16)
FLOAT8_NP = frozenset(d.np for d in FLOAT8)
REDUCED_NP = frozenset((BF16, *FLOAT8_NP, C32))
WIDE = {d: F32 for d in REDUCED_NP} | {C32: C64}  # the NumPy dtype each computes in
_FROM_NP = {d.np: d for d in ALL}
_NAMES = {d.name: d for d in ALL}
_TENSOR_TYPES = {d.tensor_type: d for d in ALL}


def _by_name(name: str) -> dtype:
    return _NAMES[name]


def of(d) -> dtype:
    """The dtype of a numtorch dtype, a NumPy dtype, or anything with a ``dtype``."""
    if isinstance(d, dtype):
        return d
    d = getattr(d, "dtype", d)
    return d if isinstance(d, dtype) else from_np(np.dtype(d))


def not_implemented(kernel: str, d) -> NotImplementedError:
    """PyTorch's error for a kernel with no version for the dtype of ``d`` (a dtype, an
    array or a tensor): ``"abs_cpu" not implemented for 'Bool'``."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{of(d).scalar_name}'")


def from_tensor_type(name: str) -> dtype:
    """The dtype of a legacy tensor type name ("torch.FloatTensor")."""
    return _TENSOR_TYPES[name]


def from_np(np_dtype) -> dtype:
    """The numtorch dtype of a NumPy dtype."""
    try:
        return _FROM_NP[np_dtype]
    except KeyError:
        raise TypeError(f"numtorch has no dtype for numpy {np_dtype}") from None


_default = [float32]


def get_default_dtype() -> dtype:
    return _default[0]


def set_default_dtype(d: dtype) -> None:
    if d not in (float32, float64, float16, bfloat16):
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


def default_complex() -> dtype:
    return complex128 if _default[0] is float64 else complex64


def to_dtype(d) -> dtype:
    """Accept a numtorch dtype, a NumPy dtype, or a Python type."""
    if isinstance(d, dtype):
        return d
    if d is float:
        return float64
    if d is int:
        return int64
    if d is bool:
        return bool_
    if d is complex:
        return complex128
    return from_np(np.dtype(d))


def _join(a: dtype, b: dtype) -> dtype:
    """The smallest dtype holding both (torch.promote_types)."""
    if a is b:
        return a
    if a in FLOAT8 or b in FLOAT8:
        raise RuntimeError(
            "Promotion for Float8 Types is not supported, attempted to promote "
            f"{a.scalar_name} and {b.scalar_name}"
        )
    if {a, b} == {float16, bfloat16}:
        return float32
    if a._kind != b._kind:
        hi, lo = (a, b) if a._kind > b._kind else (b, a)
        if hi._kind == 3 and lo._kind == 2:  # the complex of the floats' join
            return _join(hi.to_real(), lo).to_complex()
        if hi is float16 and lo._kind == 1 and lo.itemsize > 1:
            return float16
        return hi
    if a._kind == 1 and (a is uint8) != (b is uint8):
        other = b if a is uint8 else a
        return int16 if other is int8 else other
    return a if a.itemsize >= b.itemsize else b


promote_types = _join


def _scalar_kind(x) -> int:
    if isinstance(x, bool):
        return 0
    if isinstance(x, int):
        return 1
    if isinstance(x, float):
        return 2
    if isinstance(x, complex):
        return 3
    raise TypeError(f"unsupported scalar {type(x).__name__}")


def result_type(*operands) -> dtype:
    """PyTorch's result type of tensors (dtype, ndim) and Python scalars.

    Operands are given as (dtype, ndim) pairs for tensors or as Python numbers.
    Dimensioned tensors outrank zero-dim tensors, which outrank scalars, unless
    a lower-priority operand is of a higher category (bool < int < float < complex).
    """
    dim_t = zero_t = None
    scalar_kind = -1
    for op in operands:
        if isinstance(op, tuple):
            d, nd = op
            if nd:
                dim_t = d if dim_t is None else _join(dim_t, d)
            else:
                zero_t = d if zero_t is None else _join(zero_t, d)
        else:
            scalar_kind = max(scalar_kind, _scalar_kind(op))
    res = dim_t
    if zero_t is not None and (res is None or zero_t._kind > res._kind):
        # (a complex one keeps a dimensioned float's precision: PyTorch's combine_categories)
        res = (
            res.to_complex() if zero_t._kind == 3 and res is not None and res._kind == 2 else zero_t
        )
    if scalar_kind >= 0 and (res is None or scalar_kind > res._kind):
        if scalar_kind == 3:
            if res is not None and res is float64:
                return complex128
            if res is float16:
                return complex32
            return default_complex()
        if scalar_kind == 2:
            return get_default_dtype()
        if res is None:
            return int64 if scalar_kind == 1 else bool_
        return res if scalar_kind <= res._kind else int64
    return res


# ------------------------------------------------------------------ reduced floats
_E4M3FN_MAX = 448.0


_DISCARDS_IMAG = "Casting complex values to real discards the imaginary part"
_warned_discard: list = []


def real_for(a, npd):
    """Array ``a`` ready to be cast to ``npd`` by a copy: a complex value going to a real
    non-bool dtype keeps its real part, with PyTorch's warning (once per process, as its
    TORCH_WARN_ONCE)."""
    if a.dtype.kind != "c" or np.dtype(npd).kind in "cbW":
        return a
    if not _warned_discard:
        _warned_discard.append(True)
        warnings.warn(_DISCARDS_IMAG, UserWarning, stacklevel=4)
    return a.real


_COMPLEX32_EXPERIMENTAL = (
    "ComplexHalf support is experimental and many operators don't support it yet."
)
_warned_complex32: list = []


def warn_complex32() -> None:
    """PyTorch's warning where a complex32 tensor is allocated (once per process, as its
    TORCH_WARN_ONCE)."""
    if not _warned_complex32:
        _warned_complex32.append(True)
        warnings.warn(_COMPLEX32_EXPERIMENTAL, UserWarning, stacklevel=4)


def cast(a, npd):
    """Array ``a`` as NumPy dtype ``npd``, converted as PyTorch converts. To a reduced float
    (bfloat16, float8, complex32) PyTorch goes through float32 (complex64: so a float64 or
    int64 value rounds twice), float8_e4m3fn saturates at its largest finite value (inf too),
    float8_e5m2's nan is 0x7F, and float8_e8m0fnu takes the magnitude (zero is its smallest
    code). From complex32 it converts the complex64 value."""
    npd = np.dtype(npd)
    if npd == C32:
        warn_complex32()
    if a.dtype == npd:
        return a.astype(npd)
    if a.dtype == C32:
        a = a.astype(C64)
    if npd == F16 and a.dtype.itemsize > 4:  # (float64 to c10::Half goes through float)
        a = a.astype(C64 if a.dtype.kind == "c" else F32)
    if npd not in REDUCED_NP:
        return a.astype(npd)
    if npd == C32:
        return (a if a.dtype == C64 else a.astype(np.complex128).astype(C64)).astype(C32)
    if a.dtype != F32:
        a = (a.real if a.dtype.kind == "c" else a).astype(F32)
    if npd == float8_e4m3fn.np:
        return np.clip(a, -_E4M3FN_MAX, _E4M3FN_MAX).astype(npd)
    if npd == float8_e5m2.np:
        out = a.astype(npd)
        out.view(np.uint8)[np.isnan(a)] = 0x7F
        return out
    if npd == float8_e8m0fnu.np:
        out = np.abs(a).astype(npd)
        out.view(np.uint8)[a == 0] = 0
        return out
    return a.astype(npd)


def is_complex_np(npd) -> bool:
    """Whether a NumPy dtype is complex (complex32's too, which NumPy counts as kind "W")."""
    return npd.kind == "c" or npd == C32


def part(xp, a, imag: bool = False):
    """The real (or imaginary) part of a complex array as a view (complex32's as float16)."""
    if a.dtype == C32:
        return a[..., None].view(np.float16)[..., int(imag)]
    return xp.imag(a) if imag else xp.real(a)


def as_strided(xp, a, shape, strides, **kw):
    """``xp.lib.stride_tricks.as_strided``, also for complex32 (whose array interface NumPy
    cannot read back: strided as int32 bits)."""
    if a.dtype == C32:
        return xp.lib.stride_tricks.as_strided(a.view(np.int32), shape, strides, **kw).view(C32)
    return xp.lib.stride_tricks.as_strided(a, shape, strides, **kw)


def is_reduced(a) -> bool:
    """Whether an array (or a list of them) holds a reduced float (bfloat16, float8)."""
    if isinstance(a, (list, tuple)):
        return any(is_reduced(x) for x in a)
    d = getattr(a, "dtype", None)
    return d is not None and d in REDUCED_NP


def inexact(npd) -> bool:
    """Whether a NumPy dtype is floating or complex (a reduced float's too), as autograd
    asks of a result: can it have a gradient."""
    return npd.kind in "fc" or npd in REDUCED_NP


def widen(a):
    """Reduced-float arrays (also in lists) as float32 (complex32's as complex64), anything
    else as it is: the dtype PyTorch's CPU kernels compute bfloat16 in."""
    if isinstance(a, (list, tuple)):
        return type(a)(widen(x) for x in a)
    d = getattr(a, "dtype", None)
    return a.astype(WIDE[d]) if d is not None and d in REDUCED_NP else a


def can_cast(frm: dtype, to: dtype) -> bool:
    """torch.can_cast: no cast to a lower category."""
    return frm._kind <= to._kind


_EPS = {"float8_e5m2fnuz": 0.125}  # PyTorch's numeric_limits epsilon differs from ml_dtypes'


def _info_dtype(cls: str, args: tuple, kwargs: dict, default=None) -> dtype:
    """The dtype argument of finfo/iinfo, checked as PyTorch's argument parser does."""
    if len(args) + len(kwargs) > 1:
        raise TypeError(f"{cls}() takes at most 1 argument ({len(args) + len(kwargs)} given)")
    t = args[0] if args else kwargs.get("type", default)
    if t is None or set(kwargs) - {"type"}:
        raise TypeError(f'{cls}() missing 1 required positional arguments: "type"')
    if t is float or t is int or t is bool or t is complex:  # the parser reads these as dtypes
        return to_dtype(t)
    if not isinstance(t, dtype):
        raise TypeError(
            f"{cls}(): argument 'type' (position 1) must be torch.dtype, not {type(t).__name__}"
        )
    return t


def _g(v) -> str:
    return f"{v:g}"  # (C++'s stream format of a double, as PyTorch's repr shows it)


class _Info:
    __hash__ = None  # PyTorch's are unhashable

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.__dict__ == self.__dict__


class finfo(_Info):
    """Machine limits of a floating dtype (torch.finfo); no dtype: the default one."""

    def __init__(self, *args, **kwargs):
        d = _info_dtype("finfo", args, kwargs, get_default_dtype())
        if d._kind < 2:
            raise TypeError(
                "torch.finfo() requires a floating point input type. Use torch.iinfo to "
                "handle 'torch.finfo'"
            )
        d = d.to_real()
        fi = ml_dtypes.finfo(d.np) if d.np in REDUCED_NP else np.finfo(d.np)
        eps = _EPS.get(d.name, float(fi.eps))
        resolution = 10.0 ** -math.floor(-math.log10(eps))  # (c10's digits10, as a double)
        self.bits = fi.bits
        self.eps = eps
        self.max = float(fi.max)
        self.min = float(fi.min)
        self.tiny = self.smallest_normal = float(fi.tiny)
        self.resolution = resolution
        self.dtype = d.name

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={_g(self.resolution)}, min={_g(self.min)}, max={_g(self.max)}, "
            f"eps={_g(self.eps)}, smallest_normal={_g(self.smallest_normal)}, "
            f"tiny={_g(self.tiny)}, dtype={self.dtype})"
        )


class iinfo(_Info):
    """Machine limits of an integer dtype (torch.iinfo)."""

    def __init__(self, *args, **kwargs):
        d = _info_dtype("iinfo", args, kwargs)
        if d is bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if d._kind != 1:
            raise TypeError(
                "torch.iinfo() requires an integer input type. Use torch.finfo to handle "
                "'torch.iinfo'"
            )
        ii = np.iinfo(d.np)
        self.bits = ii.bits
        self.max = int(ii.max)
        self.min = int(ii.min)
        self.dtype = d.name

    def __repr__(self) -> str:
        return f"iinfo(min={_g(self.min)}, max={_g(self.max)}, dtype={self.dtype})"
