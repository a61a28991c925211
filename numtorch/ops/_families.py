"""Generators for families of ops: elementwise (unary, binary, comparison) and views.

Each turns a kernel and its formulas into a whole ``Op`` with type promotion, default
samples, ``out=``, the batch rule and Tensor methods, so that most ops are one short
call. (Reductions have theirs, ``reduction``, beside the reduction helpers it uses.)
"""

from __future__ import annotations

import enum
from collections.abc import Callable

import numpy as np

from .._core import dtype as dt
from .._core import scalars
from .._core.device import xp_of
from .._core.layout import follow_inputs
from .._core.messages import broadcast_mismatch
from .._core.meta import by_kernel, by_kernel_or_probes
from .._core.meta_array import MetaArray
from .._core.op import ELEMENTWISE, LINEAR, ErrorInput, Op, defop
from .._core.tensor import Tensor
from .._opdb.samples import S
from ._batching import elementwise

_nd = np.ndarray
_ARRAYS = (np.ndarray, MetaArray)


def _arr(a) -> bool:
    """Whether an operand is an array (NumPy's, a meta or a GPU array), not a Python scalar."""
    t = type(a)
    if t is _nd:
        return True
    if t in _SCALARS:  # (hasattr's failing lookup on a number costs an exception)
        return False
    return isinstance(a, _ARRAYS) or hasattr(a, "__cuda_array_interface__")


_SCALARS = frozenset((int, float, bool, complex, type(None)))


def cj(x):
    """The complex conjugate of a tensor or a Python number (a real one is itself): the
    factor conjugate Wirtinger formulas take of a derivative."""
    if type(x) is Tensor and x._data.dtype.kind in "fiub":
        return x  # (what conj gives a plain real tensor, without its dispatch; complex32's
        # NumPy kind is "W", bfloat16's "V")
    if isinstance(x, Tensor):
        return x.conj()
    return x.conjugate() if isinstance(x, complex) else x  # (a symbolic size stays one)


# ------------------------------------------------------------------ type promotion
def _operand(a):
    return (dt.from_np(a.dtype), a.ndim) if _arr(a) or hasattr(a, "dtype") else a


_RESULT_TYPES: dict = {}


def _key(a):
    return (a.dtype, a.ndim == 0) if _arr(a) else type(a)


def promote(arrays, attrs=None):
    """Cast array operands to PyTorch's result type; scalars stay weak."""
    a0 = arrays[0]
    same = True
    for a in arrays:
        if not isinstance(a, _nd) or a.dtype != a0.dtype:  # GPU arrays: the general path
            same = False
            break
    if same:
        return arrays, None
    if len(arrays) == 2:  # a float array and a Python int or float: the array's dtype
        a, b = arrays
        if type(a) is _nd and (type(b) is float or type(b) is int):
            d = a.dtype
            if d.kind == "f" and d.num < 256:
                return arrays, d
        elif type(b) is _nd and (type(a) is float or type(a) is int):
            d = b.dtype
            if d.kind == "f" and d.num < 256:  # (the number first: an array of that dtype)
                return [np.asarray(a, dtype=d), b], d
    key = (dt._default[0], *(_key(a) for a in arrays if a is not None))
    npd = _RESULT_TYPES.get(key)
    if npd is None:
        npd = _RESULT_TYPES[key] = dt.result_type(
            *(_operand(a) for a in arrays if a is not None)
        ).np
    out = [dt.cast(a, npd) if _arr(a) and a.dtype != npd else a for a in arrays]
    if not _arr(out[0]):
        # A scalar first operand: make it an array so the kernel sees the result dtype (on
        # the device of the array operands; a reduced float's, float32, which it computes in).
        gpu = next((a for a in out if _arr(a) and type(a) is not _nd), None)
        xp = np if gpu is None else xp_of(gpu)
        wide = dt.WIDE.get(npd, npd)  # (a fill on the device: no copy from the host)
        out[0] = np.asarray(out[0], dtype=wide) if xp is np else xp.full((), out[0], wide)
    return out, npd


def broadcast_first(arrays, attrs=None) -> None:
    """PyTorch's error for operands that do not broadcast (a ``NoKernel.first`` check: the
    shapes are checked before the dtype picks a kernel)."""
    text = broadcast_mismatch([a.shape for a in arrays if _arr(a)])
    if text is not None:
        raise RuntimeError(text)


def promote_float(arrays, attrs=None):
    """Promote, then integers and bools go to the default float dtype."""
    arrays, odt = promote(arrays, attrs)
    a = arrays[0]
    kind = a.dtype.kind if _arr(a) else ""
    if kind in "biu":
        f = dt.get_default_dtype().np
        arrays = [x.astype(f) if _arr(x) else x for x in arrays]
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
    """Comparisons: operands promote together, the result is bool. A Python int wraps into
    an integer operand's dtype, as PyTorch converts it (``int8 < 1000`` compares with -24)."""
    arrays, _ = promote(arrays, attrs)
    if type(arrays[1]) is int or type(arrays[0]) is int:
        a = arrays[0]
        if type(a) is not _nd or a.dtype.kind in "iu":  # (only an integer array wraps it)
            arrays = scalars.wrapped_operands(arrays)
    return arrays, np.dtype(np.bool_)


def promote_integral(name: str) -> Callable:
    """Promotion for ops on integers and bools only (bitwise): a float operand, tensor or
    Python number, is an error naming the CPU kernel ``<name>_cpu``, as in PyTorch."""

    def prepare(arrays, attrs=None):
        for a in arrays:
            if hasattr(a, "dtype") and a.dtype.kind not in "biu":
                raise dt.not_implemented(f"{name}_cpu", a)
            if isinstance(a, float):
                raise dt.not_implemented(f"{name}_cpu", dt.float32)
        return promote(arrays, attrs)

    return prepare


# ------------------------------------------------------------------ samples
# The dtypes an op's generic tests run in (``test={"dtypes": ...}``).
FLOATS = ("float32", "float64")
FLOATS_INT = (*FLOATS, "int64")
FLOATS_INT_BOOL = (*FLOATS_INT, "bool")
COMPLEX = ("complex64", "complex128")
COMPLEX_TOO = {"dtypes": (*FLOATS, *COMPLEX)}  # test flags of an op PyTorch runs on complex


def _as_tuple(x) -> tuple:
    return () if x is None else x if isinstance(x, tuple) else (x,)


def _with_bfloat16(kw: dict) -> None:
    """A unary or binary op's test dtypes take bfloat16 too where they take float32 (its
    PyTorch CPU kernel has a BFloat16 version), unless ``bfloat16=False`` or ``no_bfloat16``
    says otherwise."""
    dtypes = kw.get("dtypes", FLOATS)
    if kw.get("no_bfloat16"):
        return
    if kw.pop("bfloat16", True) and "float32" in dtypes and "bfloat16" not in dtypes:
        kw["dtypes"] = (*dtypes, "bfloat16")


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


def unary_samples(low=-2.0, high=2.0, *, exclude_zero=False, shapes=UNARY_SHAPES):
    """One tensor per shape (0-d, empty, size-1 axes), values in [low, high]."""

    def samples(make):
        for s in shapes:
            yield S((make(s, low, high, exclude_zero=exclude_zero),))

    return samples


def binary_samples(
    low=-2.0, high=2.0, *, scalars=(2.5,), rscalars=(), low_b=None, high_b=None, nonzero_b=False
):
    """Broadcasting pairs of BINARY_SHAPES, ``other`` in [low_b, high_b] (default: [low, high])
    and nonzero if asked; then Python numbers as ``other`` (``scalars``) and as ``input``
    (``rscalars``), float ones for float dtypes only."""
    lb = low if low_b is None else low_b
    hb = high if high_b is None else high_b

    def samples(make):
        for sa, sb in BINARY_SHAPES:
            yield S((make(sa, low, high), make(sb, lb, hb, exclude_zero=nonzero_b)))
        for c in scalars:
            if make.is_float or isinstance(c, int):
                yield S((make((2, 3), low, high), c), name="scalar other")
        for c in rscalars:
            if make.is_float or isinstance(c, int):
                yield S((c, make((2, 3), lb, hb, exclude_zero=nonzero_b)), name="scalar input")

    return samples


def comparison_samples(make):
    """Broadcasting pairs, ties, and Python numbers of each kind as ``other``."""
    for sa, sb in BINARY_SHAPES:
        yield S((make(sa), make(sb)))
    a, b = make((2, 3)), make((2, 3))
    b[0] = a[0]
    yield S((a, b), name="ties")
    if make.dtype.kind != "b":
        yield S((make((2, 3)), 1), name="int scalar")
        yield S((make((2, 3)), 0.5), name="float scalar")
    else:
        yield S((make((2, 3)), True), name="bool scalar")


def integral_errors(name: str, nin: int) -> Callable:
    """Error samples of an ``integral`` op: float tensors, and a float Python number."""

    def errors(make):
        floats = tuple(make((3,), dtype=np.float32) for _ in range(nin))
        message = f"\"{name}_cpu\" not implemented for 'Float'"
        yield ErrorInput(S(floats), NotImplementedError, message)
        if nin == 2:
            yield ErrorInput(S((make((3,), dtype=np.int64), 2.5)), NotImplementedError, message)

    return errors


class Promotion(enum.Enum):
    """The dtype an elementwise op computes in, from its operands' promoted dtype."""

    OWN = "own"  # that dtype
    FLOAT = "float"  # integer and bool operands compute in the default float dtype
    INTEGRAL = "integral"  # integer and bool only: a float operand is an error (bitwise ops)


# ------------------------------------------------------------------ generators
# A kernel decorator: inf and nan come out silently, as in PyTorch, whatever NumPy's error
# state (no RuntimeWarning, no FloatingPointError under np.seterr(all="raise")). Costs about
# a microsecond a call, so only kernels that make inf/nan from finite inputs (division,
# logarithms, overflow, domain errors) take it. A decorator only: never ``with silent:``.
silent = np.errstate(all="ignore")


def elementwise_op(
    name: str,
    kernel: Callable,
    vjp: Callable | tuple | None = None,
    jvp: Callable | str | None = None,
    *,
    prepare: Callable | None = promote,
    dtypes: tuple[str, ...] = FLOATS,
    test: dict | None = None,
    ieee: bool = False,
    numbers: str = "both",
    complex: bool | None = None,
    **kw,
) -> Op:
    """An elementwise op of any number of broadcasting operands, with the family's defaults:
    PyTorch's type promotion, ``out=``, the elementwise batch rule, the Tensor method and
    the in-place form of each method name (``methods=("ne", "not_equal")`` gives ``ne_``
    and ``not_equal_`` too; ``inplace=False`` turns the in-place forms off, ``methods=False``
    both). ``dtypes`` are the dtypes the generic tests run in. ``jvp=ELEMENTWISE`` derives
    the tangent from the vjp formulas. ``ieee``: the kernel makes inf/nan from finite
    inputs, silently (``silent``). ``numbers``: which of two operands may be a Python
    number, as PyTorch's signatures say: "both", "other" (not the input) or "none" (tensors
    only). ``complex``: whether PyTorch computes complex operands (the generic tests then
    run in complex dtypes too); default: for an op on floats that no ``no_kernel`` refuses
    complex operands."""
    if ieee:
        kernel = silent(kernel)
    kw.setdefault("out", True)
    kw.setdefault("batch_rule", elementwise())
    kw.setdefault("layout", follow_inputs)
    kw.setdefault("meta", by_kernel_or_probes)
    methods = kw.setdefault("methods", True)
    if kw.get("inplace", True) is True:
        kw["inplace"] = tuple(m + "_" for m in methods) if isinstance(methods, tuple) else methods
    if complex is None:
        refused = any("c" in k.kinds for k in _as_tuple(kw.get("no_kernel")))
        complex = not refused and any(d.startswith("float") for d in dtypes)
    if complex:
        dtypes = (*dtypes, *COMPLEX)  # PyTorch has a complex kernel: test it
    op = defop(
        name,
        kernel,
        vjp=vjp,
        jvp=jvp,
        prepare=prepare,
        test={"dtypes": dtypes, **(test or {})},
        out_overlap_check=True,
        broadcasts=True,
        **kw,
    )
    if numbers != "both" or op.nin == 1:  # (a one-operand op's input is always a tensor)
        op.prepare = _refuse_numbers(op, op.prepare, numbers == "none" or op.nin == 1)
        inplace = kw["inplace"]
        if numbers == "none" and op.nin > 1:
            tensor_only_methods(op, _names(methods, name) + _names(inplace, name + "_"))
    return op


def _names(names, default: str) -> tuple:
    return (default,) if names is True else tuple(names or ())


_NUMBER = (int, float, complex)  # (bool is an int)


def _refuse_numbers(op: Op, prepare: Callable | None, tensors_only: bool) -> Callable:
    """``prepare`` after PyTorch's TypeError for a Python number where op's signatures take
    a tensor only: the input, or (``tensors_only``) either operand (the function's text:
    see ``tensor_only_methods`` for the methods')."""
    a, b = (*op.inputs, None)[:2]
    overloads = "".join(
        f" * (Tensor {a}, {kind} {b}, *, Tensor out = None)\n" for kind in ("Tensor", "Number")
    )

    def check(arrays, attrs=None):
        x = arrays[0]
        if isinstance(x, _NUMBER):
            if tensors_only:
                raise TypeError(
                    f"{op.name}(): argument '{a}' (position 1) must be Tensor, not "
                    f"{type(x).__name__}"
                )
            raise TypeError(
                f"{op.name}() received an invalid combination of arguments - got "
                f"({type(x).__name__}, Tensor), but expected one of:\n{overloads}"
            )
        if tensors_only and b is not None and isinstance(y := arrays[1], _NUMBER):
            raise TypeError(
                f"{op.name}(): argument '{b}' (position 2) must be Tensor, not {type(y).__name__}"
            )
        return (arrays, None) if prepare is None else prepare(arrays, attrs)

    return check


def tensor_only_methods(op: Op, names: tuple) -> None:
    """Tensor methods ``names`` of a tensors-only op refuse a Python number ``other`` with
    PyTorch's text for a method (its position 1)."""
    b = op.inputs[1]
    for n in names:
        setattr(Tensor, n, _tensor_other(getattr(Tensor, n), n, b))


def _tensor_other(fn: Callable, name: str, b: str) -> Callable:
    def method(self, *args, **kwargs):
        other = args[0] if args else kwargs.get(b)
        if isinstance(other, _NUMBER):
            where = " (position 1)" if args else ""  # (PyTorch names no position of a keyword)
            raise TypeError(
                f"{name}(): argument '{b}'{where} must be Tensor, not {type(other).__name__}"
            )
        return fn(self, *args, **kwargs)

    method.__name__ = name
    return method


def unary(
    name: str,
    kernel: Callable,
    vjp: Callable | None = None,
    jvp: Callable | str | None = None,
    *,
    promotion: Promotion = Promotion.FLOAT,
    low: float = -2.0,
    high: float = 2.0,
    exclude_zero: bool = False,
    vml: bool = False,
    **kw,
) -> Op:
    """An elementwise op of one tensor, computing in the dtype ``promotion`` says.
    Default samples: UNARY_SHAPES in [low, high], nonzero if ``exclude_zero``.
    ``bfloat16=False``: not tested in bfloat16 (``no_bfloat16=<kernel>``: refused in it).
    ``vml``: PyTorch's CPU kernel is its VML one (exp, log, sin, ...), whose refusal of
    complex32 names ``<name>_vml_cpu``."""
    _with_bfloat16(kw)
    if vml:
        kw.setdefault("complex32", f"{name}_vml_cpu")
    if promotion is Promotion.INTEGRAL:
        kw.setdefault("error_samples", integral_errors(name, 1))
    kw.setdefault(
        "prepare",
        {
            Promotion.OWN: None,
            Promotion.FLOAT: to_float,
            Promotion.INTEGRAL: promote_integral(name),
        }[promotion],
    )
    kw.setdefault("samples", unary_samples(low, high, exclude_zero=exclude_zero))
    return elementwise_op(name, kernel, vjp, jvp, **kw)


def binary(
    name: str,
    kernel: Callable,
    vjp: tuple | None = None,
    jvp: Callable | str | None = None,
    *,
    promotion: Promotion = Promotion.OWN,
    low: float = -2.0,
    high: float = 2.0,
    scalars: tuple = (2.5,),
    kernel_name: str | None = None,
    **kw,
) -> Op:
    """An elementwise op of two broadcasting operands (tensors or Python numbers), promoted
    to a common dtype, computing in the dtype ``promotion`` says (an INTEGRAL op's error
    names PyTorch's CPU kernel ``<kernel_name>_cpu``, default: the op's name, as does its
    refusal of complex32). Default
    samples: BINARY_SHAPES in [low, high], then each of ``scalars`` as ``other``.
    ``bfloat16=False``: not tested in bfloat16 (``no_bfloat16=<kernel>``: refused in it)."""
    _with_bfloat16(kw)
    kernel_name = kernel_name or name
    if promotion is Promotion.INTEGRAL:
        kw.setdefault("error_samples", integral_errors(kernel_name, 2))
        kw.setdefault("complex32", f"{kernel_name}_cpu")
    kw.setdefault(
        "prepare",
        {
            Promotion.OWN: promote,
            Promotion.FLOAT: promote_float,
            Promotion.INTEGRAL: promote_integral(kernel_name),
        }[promotion],
    )
    kw.setdefault("samples", binary_samples(low, high, scalars=scalars))
    return elementwise_op(name, kernel, vjp, jvp, **kw)


def comparison(name: str, kernel: Callable, **kw) -> Op:
    """An elementwise predicate of two operands: a bool result, no gradient."""
    kw.setdefault("prepare", compare)
    kw.setdefault("samples", comparison_samples)
    kw.setdefault("dtypes", FLOATS_INT_BOOL)
    return elementwise_op(name, kernel, **kw)


# ------------------------------------------------------------------ views
def view_op(
    name: str,
    kernel: Callable,
    vjp: Callable,
    *,
    batch_rule: Callable,
    samples: Callable,
    error_samples: Callable | None = None,
    methods: tuple[str, ...] | bool = True,
    sizes: bool = False,
    **kw,
) -> Op:
    """A view op: one tensor in, a result sharing its memory out. Linear (the tangent is
    the op applied to the tangent) and a Tensor method of its name unless ``methods``
    says otherwise; ``sizes`` methods take ``*size`` as well as a sequence."""
    kw.setdefault("test", {})
    kw["test"] = {"dtypes": (*FLOATS, *COMPLEX), **kw["test"]}  # views take any dtype
    kw.setdefault("meta", by_kernel)
    return defop(
        name,
        kernel,
        nin=1,
        vjp=vjp,
        jvp=LINEAR,
        view=True,
        batch_rule=batch_rule,
        samples=samples,
        error_samples=error_samples,
        methods=methods,
        sizes=sizes,
        **kw,
    )


__all__ = [
    "ELEMENTWISE",
    "FLOATS",
    "COMPLEX",
    "COMPLEX_TOO",
    "FLOATS_INT",
    "FLOATS_INT_BOOL",
    "LINEAR",
    "Promotion",
    "binary",
    "binary_samples",
    "broadcast_first",
    "cj",
    "compare",
    "comparison",
    "comparison_samples",
    "elementwise_op",
    "integral_errors",
    "promote",
    "promote_float",
    "promote_integral",
    "silent",
    "to_float",
    "unary",
    "unary_samples",
    "view_op",
]
