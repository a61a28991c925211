"""The one dispatcher every op call goes through, and the transform levels.

``dispatch(op, args, attrs)`` finds the highest transform level among the
arguments; a level above 0 hands the call to that level's interpreter, which
unwraps its own wrappers and calls ``dispatch`` again on the inner values.
At level 0 it runs the kernel on arrays and, when grad mode is on and an input
requires grad, records a node on the eager tape.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from . import dtype as dt
from . import upcalls
from .device import _cuda_used
from .state import state
from .tensor import Tensor, ViewTensor, _make, _new

_EMPTY: dict = {}
_ndarray = np.ndarray


class Interpreter:
    """A transform on the stack. Subclasses implement ``process``."""

    level = 0
    alive = False
    is_vmap = False
    is_forward = False  # forward mode (dual tensors)
    functorch = True  # a torch.func transform (forward_ad's dual level is not one)
    sees_all = False  # it gets op calls with no transform's tensor too (a tracer, at level 1)
    transparent = False  # its tensors' autograd state is their inner tensors' (a tracer)

    def process(self, op, args: tuple, attrs: dict):
        raise NotImplementedError

    def side_effect(self, what: str) -> None:
        """A change of state outside tensors (a generator reseeded) while this interpreter
        sees all calls: a tracer's program cannot replay it."""

    def factory(self, fn, args: tuple, kwargs: dict):
        """A factory function's call (zeros, arange, ...) while this interpreter sees all
        calls (a tracer); others never get one."""
        return fn(*args, **kwargs)

    def commit(self, target, result, op=None) -> None:
        """An in-place write where target or result belongs to this level."""
        raise NotImplementedError(f"in-place ops under {type(self).__name__}")

    def __enter__(self):
        state.stack.append(self)
        self.level = len(state.stack)
        self.alive = True
        return self

    def __exit__(self, *exc):
        top = state.stack.pop()
        assert top is self, "transform levels must exit in order"
        self.alive = False
        return False


_VMAP_READ = (
    "vmap: It looks like you're either (1) calling .item() on a Tensor or (2) attempting to "
    "use a Tensor in some data-dependent control flow or (3) encountering this error in "
    "PyTorch internals. For (1): we don't support vmap over calling .item() on a Tensor, "
    "please try to rewrite what you're doing with other operations. For (2): we don't "
    "support data-dependent control flow in vmap yet, please file an issue at "
    "https://github.com/pytorch/pytorch/issues . For (3): please file an issue."
)


class WrapperTensor(Tensor):
    """A tensor belonging to a transform level; shows the logical tensor."""

    __slots__ = ("_inner", "_interp")

    @classmethod
    def _new(cls, inner: Tensor, interp: Interpreter):
        """A wrapper around ``inner`` at ``interp``'s level (no autograd state of its own)."""
        w = _new(cls)
        w._inner = inner
        w._interp = interp
        w._rg = False
        w._grad_fn = None
        w._base = None
        w._ver = inner._ver
        return w

    @property
    def _level(self) -> int:
        return self._interp.level

    @property
    def _data(self):
        # Reached at level 0 only by a wrapper whose transform has returned.
        if not self._interp.alive:
            _raise_escaped(self)
        raise RuntimeError(
            f"{type(self).__name__} has no storage of its own; it belongs to a transform"
        )

    @property
    def shape(self):
        return self._inner.shape

    def dim(self) -> int:
        return self._inner.dim()

    ndimension = dim

    @property
    def ndim(self) -> int:
        return self._inner.dim()

    def numel(self) -> int:
        return self._inner.numel()

    nelement = numel

    @property
    def dtype(self):
        return self._inner.dtype

    @property
    def device(self):
        return self._inner.device

    def size(self, dim=None):
        return self._inner.size(dim)

    def stride(self, dim=None):
        return self._inner.stride(dim)

    def is_contiguous(self, memory_format=None) -> bool:
        return self._inner.is_contiguous()

    def __len__(self) -> int:
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # Values read out of a wrapper are its inner tensor's (vmap forbids them: read through
    # another transform's wrapper, PyTorch's error does not know whether it was a read or
    # control flow).
    def _readable(self) -> Tensor:
        t = self._inner
        while isinstance(t, WrapperTensor):
            if t._interp.is_vmap:
                raise RuntimeError(_VMAP_READ)
            t = t._inner
        return self._inner

    def item(self):
        return self._readable().item()

    def __float__(self) -> float:
        return float(self._readable())

    def __int__(self) -> int:
        return int(self._readable())

    def __complex__(self) -> complex:
        return complex(self._readable())

    def __index__(self) -> int:
        return self._readable().__index__()

    def __bool__(self) -> bool:
        return bool(self._readable())

    def tolist(self):
        return self._inner.tolist()

    def numpy(self, *, force: bool = False):
        if self._rg and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        return self._inner.numpy(force=True)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(lvl={self._level}, value={self._inner!r})"

    __str__ = __repr__


class untraced:  # noqa: N801 - a context manager used as a function
    """Op calls inside are not a tracer's to record: autograd's own bookkeeping (a view's
    grad_fn regenerated from its base), not the traced function's computation."""

    __slots__ = ("tracer",)

    def __enter__(self) -> None:
        st = state.stack
        self.tracer = st[0] if st and st[0].sees_all else None
        if self.tracer is not None:
            self.tracer.sees_all = False

    def __exit__(self, *exc) -> None:
        if self.tracer is not None:
            self.tracer.sees_all = True


def side_effect(what: str) -> None:
    """Tell a tracer at work of a change of state outside tensors (see Interpreter)."""
    st = state.stack
    if st and st[0].sees_all:
        st[0].side_effect(what)


def factory(fn):
    """A factory function a tracer records as one call (its arguments are Python values)."""

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if state.stack and state.stack[0].sees_all:
            return state.stack[0].factory(fn, args, kwargs)
        return fn(*args, **kwargs)

    return call


def values_hidden(t: Tensor) -> bool:
    """Whether a transform hides t's values from Python control flow. A tracer does not:
    a value read while it traces sends that part back to eager code, which reads it."""
    return t._level > 0 and not t._interp.sees_all


def _max_level(args) -> int:
    """The highest transform level among the arguments; a wrapper whose transform has
    returned is an error."""
    lvl = 0
    for a in args:
        if isinstance(a, Tensor):
            lv = a._level
            if lv:
                if not a._interp.alive:
                    _raise_escaped(a)
                if lv > lvl:
                    lvl = lv
        elif isinstance(a, (list, tuple)):
            lv = _max_level(a)
            if lv > lvl:
                lvl = lv
    return lvl


def _raise_escaped(a) -> None:
    raise RuntimeError(
        f"a {type(a).__name__} escaped the transform that created it and was used after the "
        "transform returned"
    )


def dispatch(op, args: tuple, attrs: dict = _EMPTY):
    """Run an op on the given inputs (see module doc)."""
    if state.stack:
        lvl = _max_level(args)
        if op.random:
            ceiling = state.random_ceiling
            for interp in reversed(state.stack):
                if interp.is_vmap and interp.level < ceiling:
                    lvl = max(lvl, interp.level)
                    break
        if not lvl and state.stack[0].sees_all:  # (a tracer: always the bottom level)
            lvl = 1
        if lvl:
            return state.stack[lvl - 1].process(op, args, attrs)
    if op.impl is not None:  # a tensor-level implementation (autograd.Function)
        return op.impl(args, attrs)
    if state.modes:  # TorchDispatchModes (numtorch._core.aten)
        return upcalls.dispatch_mode(op, args, attrs)
    rg = False
    arrays = []
    for a in args:
        if isinstance(a, Tensor):
            arrays.append(a._data)
            if a._rg:
                rg = True
        elif op.list_inputs and isinstance(a, (list, tuple)):
            sub = []
            for t in a:
                if isinstance(t, Tensor):
                    sub.append(t._data)
                    if t._rg:
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
    if rg and op.ndiff and state.grad_enabled:
        upcalls.record(op, args, attrs, res)
    return res


def _make_view(src: Tensor, arr, op, attrs, multi: bool = False) -> Tensor:
    """The output of a view op: shares memory and the version counter with src."""
    if arr.size and not np.may_share_memory(arr, src._data):
        return _make(arr)
    t = _new(ViewTensor)
    t._data = arr
    t._rg = False
    t._grad_fn = None
    t._ver = src._ver
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
    if not state.grad_enabled:
        t._creation = NO_GRAD_MODE
    elif multi:
        t._creation = MULTI_OUTPUT
    elif src._creation is not None:
        t._creation = src._creation


def run_kernel(op, arrays: list, attrs: dict):
    """Type promotion, the kernel, and normalization of its outputs to arrays."""
    xp = np
    if _cuda_used[0]:
        xp = _backend(arrays)
    odt = None
    inputs = arrays
    if op.prepare is not None:
        arrays, odt = op.prepare(arrays, attrs)
    if xp is not np:
        arrays = _on_gpu(xp, arrays)
    try:
        out = op.kernel(xp, *arrays, **attrs)
    except (ValueError, MemoryError) as e:
        msg = _broadcast_message(arrays[: op.nin], e) or alloc_message(
            e, _result_shape(arrays[: op.nin], attrs)
        )
        if msg is None:
            raise
        raise RuntimeError(msg) from None
    except TypeError as e:
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


def _backend(arrays):
    """CuPy if an array (or an array in a list input) is on the GPU, else NumPy."""
    for a in arrays:
        if isinstance(a, (list, tuple)):
            xp = _backend(a)
            if xp is not np:
                return xp
        elif type(a) is not _ndarray and hasattr(a, "__cuda_array_interface__"):
            from .device import xp_of

            return xp_of(a)
    return np


def _on_gpu(xp, arrays: list) -> list:
    """Inputs of a GPU kernel on the GPU. A 0-d CPU array (a Python number, or a CPU scalar
    tensor, which PyTorch accepts beside CUDA tensors) moves, and so do CPU index arrays
    (PyTorch indexes a CUDA tensor with CPU indices); any other CPU array is an error."""
    out = []
    for a in arrays:
        if type(a) is _ndarray:
            if a.ndim and a.dtype.kind not in "biu":
                raise RuntimeError(
                    "Expected all tensors to be on the same device, but found at least two "
                    "devices, cuda:0 and cpu!"
                )
            a = xp.asarray(a)
        elif isinstance(a, (list, tuple)):
            a = type(a)(_on_gpu(xp, list(a)))
        out.append(a)
    return out


def _as_array(xp, out):
    """A kernel's result as an array: a GPU array stays one (a factory kernel has no input
    to say which backend it used)."""
    if hasattr(out, "__cuda_array_interface__"):
        return out
    return xp.asarray(out)


def _shapes(inputs) -> list:
    return [a.shape for a in inputs if hasattr(a, "shape") and not isinstance(a, (list, tuple))]


def _broadcast_message(inputs, error: Exception) -> str | None:
    """PyTorch's text for operands that do not broadcast, when NumPy's broadcasting is what
    failed (None otherwise)."""
    if not str(error).startswith(
        ("operands could not be broadcast together with shapes", "shape mismatch: objects cannot")
    ):
        return None
    return broadcast_mismatch(_shapes(inputs))


def _result_shape(inputs, attrs) -> tuple:
    """The shape an op meant to allocate, for its error: the ``size`` it was asked for
    (factories, expand), else the shape its inputs broadcast to."""
    size = attrs.get("size")
    if isinstance(size, tuple) and all(isinstance(s, int) and s >= 0 for s in size):
        return size
    return _broadcast_shape(inputs)


def _broadcast_shape(inputs) -> tuple:
    """The shape the inputs broadcast to (the largest one's where they do not)."""
    shapes = _shapes(inputs)
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        return max(shapes, key=lambda s: math.prod(s), default=())


_MAX_BYTES = 2**63 - 1


def alloc_message(error: Exception, shape) -> str | None:
    """PyTorch's text for a tensor of ``shape`` too large to allocate, when NumPy's
    allocation is what failed (None otherwise): a size in bytes past int64 overflows,
    anything else is the allocator's refusal."""
    if isinstance(error, MemoryError) and hasattr(error, "_total_size"):
        return alloc_failed(error._total_size)
    if isinstance(error, ValueError) and str(error).startswith(
        ("array is too big", "Maximum allowed size exceeded", "iterator is too large")
    ):
        if math.prod(shape) > _MAX_BYTES:
            return "numel: integer multiplication overflow"
        return size_overflow(shape)
    return None


def alloc_failed(nbytes: int) -> str:
    """PyTorch's CPU allocator's text for a refused allocation of ``nbytes``."""
    return (
        "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
        f"memory: you tried to allocate {nbytes} bytes. Error code 12 (Cannot allocate memory)"
    )


def size_overflow(shape) -> str:
    """PyTorch's text for a shape whose size in bytes does not fit in an int64."""
    return f"Storage size calculation overflowed with sizes={list(shape)}"


def check_alloc(shape, itemsize: int) -> None:
    """Raise PyTorch's RuntimeError for a tensor of ``shape`` whose bytes overflow int64."""
    if math.prod(shape) * itemsize > _MAX_BYTES:
        raise RuntimeError(size_overflow(shape))


def broadcast_mismatch(shapes) -> str | None:
    """PyTorch's error text for shapes that do not broadcast, None if they do: the shapes
    fold left to right, and a pair fails at its rightmost mismatch."""
    shape: tuple = ()
    for s in shapes:
        n = max(len(shape), len(s))
        sa, sb = (1,) * (n - len(shape)) + tuple(shape), (1,) * (n - len(s)) + tuple(s)
        for i in range(n - 1, -1, -1):
            if sa[i] != sb[i] and sa[i] != 1 and sb[i] != 1:
                return (
                    f"The size of tensor a ({sa[i]}) must match the size of tensor b ({sb[i]}) "
                    f"at non-singleton dimension {i}"
                )
        shape = tuple(y if x == 1 else x for x, y in zip(sa, sb))
    return None


INTERNAL_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


def internal_overlap(a) -> bool:
    """PyTorch's has_internal_overlap is YES: a non-empty array with a stride-0 dim of
    size > 1 (PyTorch lets the harder cases through)."""
    return a.size > 0 and any(s == 0 and n > 1 for n, s in zip(a.shape, a.strides))


def write_out(out, result, op=None, inputs=()):
    """Copy a result into an ``out=`` tensor (or tuple of tensors) and return it; ``op``
    and its ``inputs`` for PyTorch's check of an input partly overlapping ``out``."""
    if isinstance(out, (tuple, list)):
        for o, r in zip(out, result):
            write_out(o, r)
        return out
    if state.grad_enabled and (out._rg or result._rg):
        raise RuntimeError(
            f"{_op_label(result)}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    data = out._data
    if 0 in data.strides and internal_overlap(data):
        raise RuntimeError(INTERNAL_OVERLAP)
    if op is not None and op.out_overlap_check:
        for a in inputs:
            for t in a if isinstance(a, (list, tuple)) else (a,):
                if (
                    isinstance(t, Tensor)
                    and t._ver is out._ver
                    and not t._level
                    and partial_overlap(out._data, t._data)
                ):
                    raise RuntimeError(OVERLAP)
    rd, od = result.dtype, out.dtype
    if rd != od and rd._kind > od._kind:
        raise RuntimeError(
            f"result type {rd.scalar_name} can't be cast to the desired output type "
            f"{od.scalar_name}"
        )
    if out._data.shape != result._data.shape:
        out._data = np.empty(result._data.shape, out._data.dtype)
    out._data[...] = result._data
    out._ver.v += 1
    return out


OVERLAP = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer "
    "to a single memory location. Please clone() the tensor before performing the operation."
)


def partial_overlap(a, b) -> bool:
    """PyTorch's partial overlap of two arrays: both dense (else it does not tell), sharing
    some bytes but not all of them in the same layout."""
    if a is b or type(a) is not np.ndarray or type(b) is not np.ndarray or not a.size or not b.size:
        return False
    if not np.may_share_memory(a, b) or not (_dense(a) and _dense(b)):
        return False
    a0, b0 = a.ctypes.data, b.ctypes.data
    a1, b1 = a0 + a.nbytes, b0 + b.nbytes
    if a0 == b0 and a1 == b1:
        return a.strides != b.strides
    return a0 < b1 and b0 < a1


def _dense(a) -> bool:
    """PyTorch's non-overlapping and dense: the elements fill one block, in some dim order."""
    if a.flags.c_contiguous or a.flags.f_contiguous:
        return True
    expect = a.itemsize
    for stride, n in sorted((s, n) for s, n in zip(a.strides, a.shape) if n != 1):
        if stride != expect:
            return False
        expect *= n
    return True


def _op_label(t) -> str:
    fn = t._grad_fn
    return fn.op.name if fn is not None and hasattr(fn, "op") else "op"
