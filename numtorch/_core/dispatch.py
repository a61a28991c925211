"""The one dispatcher every op call goes through, and the transform levels.

``dispatch(op, args, attrs)`` finds the highest transform level among the
arguments; a level above 0 hands the call to that level's interpreter, which
unwraps its own wrappers and calls ``dispatch`` again on the inner values.
At level 0 it runs the kernel on arrays and, when grad mode is on and an input
requires grad, records a node on the eager tape.
"""

from __future__ import annotations

import numpy as np

from . import autocast_state, scalars, upcalls
from . import dtype as dt
from . import tensor as tensor_module
from .device import _cuda_used, array_module, xp_of
from .interpreter import Kind, WrapperTensor, raise_escaped
from .lift import catch_up
from .messages import kernel_failure
from .meta import run_meta
from .meta_array import META_XP
from .state import state
from .tensor import DetachedInference, InferenceVersion, Tensor, _make, _new

_EMPTY: dict = {}
_ndarray = np.ndarray


def _max_level(args) -> int:
    """The highest transform level among the arguments; a wrapper whose transform has
    returned is an error."""
    lvl = 0
    for a in args:
        if type(a) is Tensor:
            view = a._view
            if view is not None and view[0]._level:  # a view behind its root's levels
                lvl = _caught_up(a, 0, lvl)
        elif a is None or type(a) in _NUMBERS:
            continue
        elif isinstance(a, WrapperTensor):
            interp = a._interp  # (its level, without the property's call)
            lv = interp.level
            view = a._view
            if view is not None:  # (behind its root's levels: a root of a higher level)
                r = view[0]
                if (
                    isinstance(r, WrapperTensor)
                    and r._interp is not interp
                    and r._interp.level > lv
                ):
                    lvl = _caught_up(a, lv, lvl)
                    continue
            if not interp.alive:
                raise_escaped(a)
            if lv > lvl:
                lvl = lv
        elif isinstance(a, Tensor):  # (a subclass at level 0: Parameter)
            view = a._view
            if view is not None and view[0]._level:
                lvl = _caught_up(a, 0, lvl)
        elif isinstance(a, (list, tuple)):
            lv = _max_level(a)
            if lv > lvl:
                lvl = lv
    return lvl


def _caught_up(a, lv: int, lvl: int) -> int:
    """The highest level so far (``lvl``), after a, a view behind its root's levels (at
    level ``lv``), took them."""
    if a._view[0]._level > lv:
        lv = catch_up(a)
    if lv:
        if not a._interp.alive:
            raise_escaped(a)
        if lv > lvl:
            return lv
    return lvl


# op -> the names of its Number attributes (declared with a number for its default), the
# ones a 0-d tensor may be given for (``scalars.number_attrs``: where another attribute holds
# a tensor, it reads none)
_NUMBER_ATTRS: dict = {}


def _number_attrs(op) -> tuple:
    n = _NUMBER_ATTRS[op] = tuple(a for a, d, _ in op.attrs if type(d) in (int, float, complex))
    return n


def dispatch(op, args: tuple, attrs: dict = _EMPTY):
    """Run an op on the given inputs (see module doc)."""
    tls = state.__dict__  # (this thread's state: one thread-local read, then dict reads)
    stack = tls["stack"]
    if stack:
        if attrs:
            numbers = _NUMBER_ATTRS.get(op)
            if numbers is None:
                numbers = _number_attrs(op)
            for n in numbers:
                if isinstance(attrs.get(n), WrapperTensor):
                    # a transform's tensor given for a number is read, as PyTorch's parser
                    # reads it (.item(): vmap refuses it)
                    attrs = scalars.number_attrs(op, attrs, Tensor) or attrs
                    break
        if op.autocast is not None and autocast_state.ACTIVE[0]:  # (casts seen by the levels)
            args = autocast_state.cast_above(op, args, attrs)
        lvl = _max_level(args)
        if op.random:
            ceiling = state.random_ceiling
            for interp in reversed(stack):
                if interp.kind is Kind.VMAP and interp.level < ceiling:
                    lvl = max(lvl, interp.level)
                    break
        if lvl:
            return stack[lvl - 1].process(op, args, attrs)
        if stack[0].sees_all:  # (a tracer: always the bottom level)
            return stack[0].process(op, args, attrs)
    if op.impl is not None:  # a tensor-level implementation (autograd.Function)
        return op.impl(args, attrs)
    if tls["modes"]:  # TorchDispatchModes (numtorch._core.aten)
        return upcalls.dispatch_mode(op, args, attrs)
    rg = False
    arrays = []
    # The stored flag, except for a view made stale by an in-place write into its base,
    # whose flag may change (``_rg``); a stale view that requires grad refreshes in record.
    # (A root laid out anew by t_, stale like a view, has no _base but always requires grad.)
    for a in args:
        if isinstance(a, Tensor):
            arrays.append(a._data)
            if a._rg_bit or a._base is not None and a._view_ver != a._ver.v and a._rg:
                rg = True
        elif op.list_inputs and isinstance(a, (list, tuple)):
            sub = []
            for t in a:
                if isinstance(t, Tensor):
                    sub.append(t._data)
                    if t._rg_bit or t._base is not None and t._view_ver != t._ver.v and t._rg:
                        rg = True
                else:
                    sub.append(t)
            arrays.append(sub)
        else:
            arrays.append(a)
    outs = run_kernel(op, arrays, attrs)
    if op.nout == 1:
        res = _make_view(args[0], outs, op, attrs) if op.view else _make(outs)
    elif op.view:
        res = make_views(args[0], outs, op, attrs)
    else:
        res = tuple(_make(o) for o in outs)
    if rg and op.ndiff and tls["grad_enabled"]:
        (op.level0_recorder or upcalls.recorder(op))(args, attrs, res)
    return res


def binary_method(op, attrs: dict, general, ufunc=None):
    """The Tensor method ``general(self, other)`` (one that dispatches ``op``) with a short
    path for its commonest call: no levels or modes, and CPU operands of one NumPy float or
    integer dtype (or a Python number that keeps it), which need no promotion. The short
    path runs dispatch's kernel (or ``ufunc``, the same arithmetic for such operands),
    layout rule and recording; any other call (in an autocast region, for an op autocast
    casts), or a kernel that raises, takes ``general``."""
    kernel, lay, ndiff = op.kernel, op.layout, op.ndiff
    casts = op.autocast is not None  # (autocast casts its operands: general's call does)

    def method(self, other):
        if type(self) is not Tensor:
            return general(self, other)
        tls = state.__dict__  # (one thread-local read)
        stack = tls["stack"]
        # under transforms, plain operands no level holds (no view behind its root's levels,
        # no tracer that sees every call) are the level-0 call dispatch would make
        if stack and (stack[0].sees_all or self._view is not None and self._view[0]._level):
            return general(self, other)
        if tls["modes"] or casts and autocast_state.ACTIVE[0]:
            return general(self, other)
        a = self._data
        d = a.dtype
        kind = d.kind
        to = type(other)
        if to is Tensor:
            b = other._data
            short = type(b) is _ndarray and b.dtype is d
            if stack and short and other._view is not None and other._view[0]._level:
                return general(self, other)
        else:
            b = other
            short = to is int or to is float and kind == "f"
        # (ml_dtypes' float8 and bfloat16, numbered from 256, take dispatch's reduced path)
        if not (short and type(a) is _ndarray and kind in "fiu" and d.num < 256):
            return general(self, other)
        try:
            out = kernel(np, a, b, **attrs) if ufunc is None else ufunc(a, b)
        except Exception:  # (dispatch gives PyTorch's error, or converts and retries)
            return general(self, other)
        if type(out) is not _ndarray:  # (a NumPy scalar, from 0-d operands)
            out = _as_array(np, out)
        elif lay is not None and (out.ndim > 1 or out.base is not None):
            out = lay(out, (a, b), attrs)
        res = _new(Tensor)  # (_make, inline)
        res._data = out
        res._rg_bit = False
        res._grad_fn = None
        res._ver = tensor_module._fresh_version()
        res._base = None
        # (the slots first: a thread's grad mode costs more to read; then dispatch's test of
        # whether an input requires grad, a stale view's included, operand by operand)
        if (
            ndiff
            and (
                self._rg_bit
                or self._base is not None
                or to is Tensor
                and (other._rg_bit or other._base is not None)
            )
            and tls["grad_enabled"]
            and (
                self._rg_bit
                or self._base is not None
                and self._view_ver != self._ver.v
                and self._rg
                or to is Tensor
                and (
                    other._rg_bit
                    or other._base is not None
                    and other._view_ver != other._ver.v
                    and other._rg
                )
            )
        ):
            (op.level0_recorder or upcalls.recorder(op))((self, other), attrs, res)
        return res

    return method


def _may_share(a, b) -> bool:
    """Whether two device arrays may share memory (CuPy's test for CuPy arrays)."""
    return getattr(xp_of(a), "may_share_memory", np.may_share_memory)(a, b)


def _make_view(src: Tensor, arr, op, attrs, multi: bool = False) -> Tensor:
    """The output of a view op: shares memory and the version counter with src."""
    sd = src._data
    base = getattr(arr, "base", None)
    # (a NumPy view of src, or of src's own base, shares its memory: no overlap test needed)
    if (base is None or (base is not sd and base is not getattr(sd, "base", sd))) and (
        arr.size
        and not (np.may_share_memory(arr, sd) if type(arr) is _ndarray else _may_share(arr, sd))
    ):
        return _make(arr)
    t = _new(Tensor)
    t._data = arr
    t._rg_bit = False
    t._grad_fn = None
    t._ver = src._ver if type(src._ver) is not DetachedInference else InferenceVersion()
    link_view(t, src, op, attrs, multi)
    return t


def make_views(src: Tensor, outs, op, attrs) -> tuple:
    """The outputs of a view op with several (split): each linked to src as the view that
    gives it."""
    return tuple(
        _make_view(src, o, v, va, True) for o, (v, va) in zip(outs, op.pieces(src.shape, attrs))
    )


# A view's ``_creation`` (PyTorch's CreationMeta) when in-place writes into it are refused
# while autograd is involved: one of several views an op returned, or a view made in no_grad.
MULTI_OUTPUT = "multi_output"
NO_GRAD_MODE = "no_grad"


def link_view(t: Tensor, src: Tensor, op, attrs, multi: bool = False) -> None:
    """Make t the view ``op(src)``: its root base and the chain of view ops from it, and how
    it was made (a view of a view keeps its base's ``_creation`` unless made in no_grad)."""
    if src._view is None:
        t._base = src
        t._view = (src, ((op, attrs),))
    else:
        root, chain = src._view
        t._base = root
        t._view = (root, chain + ((op, attrs),))
    t._view_ver = src._ver.v
    if src._conj:  # a view of a conjugate keeps the conjugate bit
        t._conj = True
    if not state.grad_enabled:
        t._creation = NO_GRAD_MODE
    elif multi:
        t._creation = MULTI_OUTPUT
    elif src._creation is not None:
        t._creation = src._creation


def run_kernel(op, arrays: list, attrs: dict):
    """Type promotion, the kernel, and normalization of its outputs to arrays."""
    if _cuda_used[0]:
        xp = _backend(arrays)
        if xp is META_XP:
            return run_meta(op, arrays, attrs)
        if xp is not np:
            return _run_gpu(op, xp, arrays, attrs)
    if not op.view:
        custom = False
        for a in arrays:  # (_custom_dtypes, inline for NumPy arrays and numbers)
            if type(a) is _ndarray:
                if a.dtype.num < 256:
                    continue
            elif a is None or type(a) in _NUMBERS:
                continue
            custom = _custom_dtypes(arrays)
            break
        if (custom or attrs and "dtype" in attrs) and _reduced_call(arrays, op.nin, attrs):
            return _run_reduced(op, arrays, attrs)
    odt = None
    inputs = arrays
    if op.prepare is not None:
        arrays, odt = op.prepare(arrays, attrs)
    return _run(op, np, arrays, attrs, odt, inputs)


def kernel_call(op, *arrays, **attrs):
    """What ``run_kernel`` gives for CPU arrays of NumPy's float32/float64 and Python
    numbers (type promotion, the kernel, its result's dtype and layout), with none of its
    checks for other operands: for array formulas (``op.on_arrays``) whose operands are
    known to be such."""
    odt = None
    inputs = arrays
    if op.prepare is not None:
        arrays, odt = op.prepare(list(arrays), attrs)
    return _run(op, np, arrays, attrs, odt, inputs)


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def bare_arrays(*tensors: Tensor) -> list | None:
    """The tensors' arrays where an op on them may run as a bare kernel call, observed by
    nothing and recording nothing: no transform level, dispatch mode, profiler or autocast
    region; plain-valued CPU float32/float64 tensors of one dtype, none of which records
    (none requires grad, or grad mode is off). Else None. (With ``kernel_call``: an op run
    as its kernel alone.)"""
    if state.stack or state.modes or autocast_state.ACTIVE[0]:
        return None
    records = state.grad_enabled
    arrays = []
    d = None
    for t in tensors:
        if not isinstance(t, Tensor) or t._level or t._conj:
            return None
        a = t._data
        if type(a) is not _ndarray:
            return None
        if d is None:
            d = a.dtype
            if d not in _FLOATS:
                return None
        elif a.dtype is not d:
            return None
        # (dispatch's test of whether an input requires grad, a stale view's included)
        if records and (t._rg_bit or t._base is not None and t._view_ver != t._ver.v and t._rg):
            return None
        arrays.append(a)
    return arrays


def _run_gpu(op, xp, arrays: list, attrs: dict):
    """run_kernel for operands on a GPU, with their GPU current (CuPy's kernels run on the
    current GPU and refuse operands of another)."""
    idx = _gpu_index(arrays, None)
    if idx is None or idx == xp.cuda.runtime.getDevice():
        return _gpu_kernel(op, xp, arrays, attrs, idx)
    with xp.cuda.Device(idx):
        return _gpu_kernel(op, xp, arrays, attrs, idx)


def _gpu_kernel(op, xp, arrays: list, attrs: dict, idx):
    if not op.view and _reduced_call(arrays, op.nin, attrs):
        return _run_reduced(op, arrays, attrs)
    odt = None
    inputs = arrays
    if op.prepare is not None:
        arrays, odt = op.prepare(arrays, attrs)
    arrays = _on_gpu(xp, arrays, idx or 0)
    return _run(op, xp, arrays, attrs, odt, inputs)


def _gpu_index(arrays, idx):
    """The GPU of the operands on one (``idx``: the one seen so far); PyTorch's error for
    operands on two GPUs."""
    for a in arrays:
        t = type(a)
        if t is _ndarray or t in _NUMBERS or a is None:
            continue
        if t is list or t is tuple:
            idx = _gpu_index(a, idx)
            continue
        dev = getattr(a, "device", None)
        i = getattr(dev, "id", None)
        if i is None:
            continue
        if idx is None:
            idx = i
        elif i != idx:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two "
                f"devices, cuda:{idx} and cuda:{i}!"
            )
    return idx


def _run(op, xp, arrays: list, attrs: dict, odt, inputs: list):
    """The kernel on prepared arrays, its result in dtype ``odt`` (if given) and laid out
    by the op's layout rule (which sees the unprepared ``inputs``)."""
    try:
        out = op.kernel(xp, *arrays, **attrs)
    except OverflowError:
        # NumPy refused a Python int: PyTorch's conversion (checked or wrapped), then again
        converted = scalars.on_overflow(op, arrays, attrs)
        if converted is None:
            raise
        out = op.kernel(xp, *converted[0], **converted[1])
    except (ValueError, MemoryError) as e:
        msg = kernel_failure(arrays[: op.nin], attrs, e)
        if msg is None:
            raise
        raise RuntimeError(msg) from None
    except TypeError as e:
        numbers = scalars.number_attrs(op, attrs, Tensor) if attrs else None
        if numbers is not None:  # a 0-d tensor given for a number: PyTorch reads its value
            return _run(op, xp, arrays, numbers, odt, inputs)
        if "not supported for the input types" not in str(e):
            raise
        # NumPy has no loop for these dtypes: PyTorch's words for a kernel without them
        a = next(a for a in arrays if hasattr(a, "dtype"))
        raise dt.not_implemented(f"{op.name}_cpu", a) from None
    if op.nout == 1:
        if type(out) is not _ndarray:
            out = _as_array(xp, out)
        if odt is not None and out.dtype != odt:
            out = out.astype(odt)
        lay = op.layout
        # (every rule keeps as it is a result of at most one dim that owns its memory)
        if lay is not None and (out.ndim > 1 or out.base is not None):
            out = lay(out, inputs, attrs)
        return out
    outs = []
    lay = op.layout
    for o in out:
        if type(o) is not _ndarray:
            o = _as_array(xp, o)
        if lay is not None and (o.ndim > 1 or o.base is not None):
            o = lay(o, inputs, attrs)
        outs.append(o)
    return tuple(outs)


def _custom_dtypes(arrays: list) -> bool:
    """Whether an operand may hold a dtype NumPy does not define (ml_dtypes' reduced floats
    are numbered from 256): anything but a NumPy array of NumPy's own dtypes or a number."""
    for a in arrays:
        t = type(a)
        if t is _ndarray:
            if a.dtype.num >= 256:
                return True
        elif t is list or t is tuple:  # (cat's and stack's operands)
            if _custom_dtypes(a):
                return True
        elif t not in _NUMBERS and a is not None:
            return True
    return False


_NUMBERS = frozenset((int, float, bool, complex))


def _reduced_call(arrays: list, nin: int, attrs: dict) -> bool:
    """Whether an operand holds a reduced float (bfloat16, float8: NumPy dtypes of
    ml_dtypes, numbered from 256) or ``dtype=`` asks for one. The common call, NumPy arrays
    of NumPy's own dtypes, costs one comparison per operand."""
    for a in arrays[:nin]:
        if type(a) is _ndarray:
            if a.dtype.num >= 256 and a.dtype in dt.REDUCED_NP:
                return True
        elif isinstance(a, (list, tuple)) or hasattr(a, "dtype"):
            if dt.is_reduced(a):
                return True
    d = attrs.get("dtype") if attrs else None
    return d is not None and getattr(d, "np", None) in dt.REDUCED_NP


def _run_reduced(op, arrays: list, attrs: dict):
    """A kernel on bfloat16, float8 or complex32 operands, or asked for such a result
    (``dtype=``), run as PyTorch's CPU kernels run: in float32 (complex32 in complex64), each
    such result rounded once to the reduced dtype (``dt.cast``; a complex32 kernel's real
    result to float16), unless ``dtype=`` asked for another. Where no operand has another
    float dtype, the reduced operands are widened before type promotion (an elementwise op's
    integer and bool operands are first rounded to the reduced dtype, as PyTorch casts them
    to the common dtype; for complex32 every operand, numbers too); otherwise promotion goes
    first and decides (bfloat16 and float16 make float32). float8 operands are refused by ops
    whose PyTorch kernel takes none (``Op.float8``), complex32 ones by ops whose kernel has
    no ComplexHalf version (``Op.complex32``), a bfloat16 result by ops whose kernel has no
    BFloat16 version (``Op.no_bfloat16``)."""
    reduced = _reduced_dtype(arrays[: op.nin])
    inputs = arrays
    asked = attrs.get("dtype")
    if asked is not None and getattr(asked, "np", None) in dt.REDUCED_NP:
        reduced = asked.np
        attrs = {**attrs, "dtype": dt.from_np(dt.WIDE[reduced])}
    elif asked is not None:
        reduced = None  # an explicit result dtype: the kernel's own
    f8 = _float8_dtype(arrays[: op.nin])
    if f8 is not None:
        if op.broadcasts:  # PyTorch's promotion error first (float8 promotes with nothing)
            dt.result_type(*(_operand(a) for a in arrays[: op.nin] if a is not None))
        if op.float8 is not True:
            raise dt.not_implemented(op.float8 or f"{op.name}_cpu", f8)
    c32 = reduced == dt.C32
    if op.number_opmath and op.nin == 2 and _cpu_scalar(arrays[1]) and np.ndim(arrays[0]):
        if not c32:
            arrays = [arrays[0], float(arrays[1]), *arrays[2:]]  # (PyTorch's opmath scalar)
    mixed = any(_other_float(a) for a in arrays[: op.nin]) or _two_reduced(arrays[: op.nin])
    if c32 and op.checked_scalars and not op.complex32_unchecked:
        scalars.checked_complex32(op, arrays, attrs)
    if not mixed:
        if c32 and op.complex32 is not True:
            _refuse_complex32(op, arrays, attrs)
        if op.broadcasts and reduced is not None:
            numbers = not op.number_opmath
            arrays = [_round_to(a, reduced, numbers) for a in arrays[: op.nin]] + arrays[op.nin :]
        arrays = [dt.widen(a) for a in arrays]
    odt = None
    if op.prepare is not None:
        arrays, odt = op.prepare(arrays, attrs)
    if odt is not None and odt in dt.REDUCED_NP:
        reduced, odt = odt, dt.WIDE[odt]
    elif mixed and asked is None:  # promotion decided: reduced only if operands still are
        reduced = _reduced_dtype(arrays[: op.nin])
    if mixed and reduced == dt.C32:
        if op.complex32 is not True:
            _refuse_complex32(op, inputs, attrs)
        if op.broadcasts:
            arrays = [_round_to(a, reduced, True) for a in arrays[: op.nin]] + arrays[op.nin :]
    if reduced == dt.BF16 and op.no_bfloat16:
        raise dt.not_implemented(op.no_bfloat16, dt.bfloat16)
    arrays = [dt.widen(a) for a in arrays]
    out = _run(op, np, arrays, attrs, odt, inputs)
    if reduced is None:
        return out
    if op.nout == 1:
        return _narrow(out, reduced)
    return tuple(_narrow(o, reduced) for o in out)


def _narrow(out, reduced):
    """A kernel's result as the reduced dtype it computed in float32 (complex64) for; a
    complex32 kernel's float32 result (abs) is float16's."""
    if out.dtype == dt.F32:
        return dt.cast(out, np.float16 if reduced == dt.C32 else reduced)
    if out.dtype == dt.C64 and reduced == dt.C32:
        return dt.cast(out, reduced)
    return out


def _refuse_complex32(op, arrays, attrs):
    """PyTorch's refusal of complex32 by an op whose CPU kernel has no ComplexHalf version:
    the op's own ``no_kernel`` text where it refuses complex dtypes, else the kernel's name
    (``Op.complex32``, default ``<name>_cpu``). A function there names the kernel for the
    call, raises PyTorch's own error, or gives True where the call runs (an empty product,
    a power of 0 or 1). Without a fact, an op whose ``no_kernel`` refuses complex dtypes
    only where PyTorch reaches the kernel (``NoKernel.when``) runs where it reaches none."""
    for nk in op.no_kernel:
        nk.check(arrays, attrs)
    fact = op.complex32
    if fact is False and any("c" in nk.kinds and nk.inputs is None for nk in op.no_kernel):
        return  # (the complex refusal passed: no kernel is reached, an empty amax)
    if callable(fact):
        fact = fact(arrays, attrs)
        if fact is True:
            return
    raise dt.not_implemented(fact or f"{op.name}_cpu", dt.complex32)


def _two_reduced(arrays) -> bool:
    """Whether operands hold reduced floats of two dtypes (complex32 and bfloat16)."""
    seen = None
    for a in arrays:
        for x in a if isinstance(a, list | tuple) else (a,):
            d = getattr(x, "dtype", None)
            if d is not None and d in dt.REDUCED_NP:
                if seen is not None and d != seen:
                    return True
                seen = d
    return False


def _operand(a):
    """An operand as ``dt.result_type`` takes it: (dtype, ndim) for an array, else itself."""
    return (dt.from_np(a.dtype), a.ndim) if hasattr(a, "dtype") else a


def _float8_dtype(arrays):
    """The NumPy dtype of the first float8 array among operands (or in a list), or None."""
    for a in arrays:
        for x in a if isinstance(a, list | tuple) else (a,):
            d = getattr(x, "dtype", None)
            if d is not None and d in dt.FLOAT8_NP:
                return d
    return None


def _cpu_scalar(a) -> bool:
    """Whether an operand is a 0-d array of a float dtype other than a reduced float's,
    which PyTorch's mul and div take as a number (``iter.is_cpu_scalar``)."""
    return isinstance(a, np.ndarray) and a.ndim == 0 and _other_float(a)


def _reduced_dtype(arrays):
    """The NumPy dtype of the first reduced-float array among operands (or in a list), or
    None."""
    for a in arrays:
        if isinstance(a, list | tuple):
            a = next((x for x in a if dt.is_reduced(x)), None)
        if a is not None and dt.is_reduced(a):
            return a.dtype
    return None


def _other_float(a) -> bool:
    """Whether an operand (or a list's) is an array of a float or complex dtype other than
    a reduced float's."""
    if isinstance(a, list | tuple):
        return any(_other_float(x) for x in a)
    d = getattr(a, "dtype", None)
    return d is not None and d.kind in "fc" and d not in dt.REDUCED_NP


def _round_to(a, reduced, numbers: bool):
    """An integer array operand of an elementwise op, or (``numbers``) a Python float, as the
    reduced dtype it is cast to before the kernel (PyTorch's common dtype). To complex32
    PyTorch casts every operand: numbers and arrays of any dtype."""
    if reduced == dt.C32:
        if type(a) in _NUMBERS:
            return complex(dt.cast(np.array(a, np.complex128), reduced).astype(dt.C64)[()])
        if getattr(a, "dtype", None) is not None and a.dtype not in (reduced, np.bool_):
            return dt.cast(a, reduced)  # (a bool operand is where's condition, or promotes)
        return a
    if type(a) is float:
        return float(dt.cast(np.array(a), reduced)) if numbers else a
    if getattr(a, "dtype", None) is not None and a.dtype.kind in "iu" and a.ndim:
        return dt.cast(a, reduced)
    return a


def _backend(arrays):
    """CuPy if an array (or an array in a list input) is on the GPU, else NumPy."""
    for a in arrays:
        if isinstance(a, (list, tuple)):
            xp = _backend(a)
            if xp is not np:
                return xp
        elif type(a) is not _ndarray:
            xp = array_module(a)
            if xp is not None:
                return xp
    return np


def _on_gpu(xp, arrays: list, idx: int) -> list:
    """Inputs of a GPU kernel on the GPU (``idx``, the current one). A 0-d CPU array (a
    Python number, or a CPU scalar tensor, which PyTorch accepts beside CUDA tensors) moves,
    and so do CPU index arrays (PyTorch indexes a CUDA tensor with CPU indices); any other
    CPU array is an error."""
    out = []
    for a in arrays:
        if type(a) is _ndarray:
            if a.ndim and a.dtype.kind not in "biu":
                raise RuntimeError(
                    "Expected all tensors to be on the same device, but found at least two "
                    f"devices, cuda:{idx} and cpu!"
                )
            # a 0-d one goes to the kernel as a scalar, as PyTorch passes a CPU scalar: no copy
            a = a[()] if not a.ndim else xp.asarray(a)
        elif isinstance(a, (list, tuple)):
            a = type(a)(_on_gpu(xp, list(a), idx))
        out.append(a)
    return out


def _as_array(xp, out):
    """A kernel's result as an array: a GPU array stays one (a factory kernel has no input
    to say which backend it used)."""
    if array_module(out) is not None:
        return out
    return xp.asarray(out)
