"""The Tensor: a backend array plus autograd state.

Most methods are installed by the op declarations (see ``_core/methods.py``);
this module holds what is about the tensor object itself.
"""

from __future__ import annotations

import operator
import threading

import numpy as np

from . import dtype as dt
from . import upcalls
from .device import CPU, copy_array, device_of, host_to_gpu, pending_checks, run_pending_checks
from .device import device as _Device
from .layout import empty_strides
from .memory_format import CHANNELS_LAST
from .meta_array import MetaArray
from .state import state


class Size(tuple):
    """A tensor shape (torch.Size); its items are ints (or objects with ``__index__``)."""

    __slots__ = ()

    def __new__(cls, sizes=()):
        items = tuple(sizes)
        for v in items:
            if type(v) is not int:
                return _checked(cls, items)
        return tuple.__new__(cls, items)

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(map(str, self))}])"

    __str__ = __repr__

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return _size(r) if isinstance(i, slice) else r

    # As torch.Size, whose C type has sequence slots only: a tuple on either side
    # concatenates and an int repeats, giving a Size (of ints); anything else goes to the
    # other operand's reflected method, then fails with the sequence slots' texts. The
    # texts are PyTorch's; its Tensor's reflected methods decline a Size (numtorch's do
    # not know tuples), so a Tensor goes straight to them.
    def __add__(self, other):
        if isinstance(other, tuple):
            return _sized(tuple.__add__(self, other))
        out = _reflected(other, "__radd__", self)
        if out is NotImplemented:
            raise TypeError(f"can only concatenate tuple (not {_type_name(other)}) to torch.Size")
        return out

    def __radd__(self, other):
        if isinstance(other, tuple):
            return _sized(tuple.__add__(other, self))
        return NotImplemented

    def __mul__(self, n):
        if type(n) is not int:
            out = _reflected(n, "__rmul__", self)
            if out is not NotImplemented:
                return out
            n = _repeats(n)
        return _size(tuple.__mul__(self, n))

    def __rmul__(self, n):
        if type(n) is not int:
            if isinstance(n, _SEQUENCES):
                return NotImplemented  # Python repeats n, which refuses a Size
            n = _repeats(n)
        return _size(tuple.__mul__(self, n))

    def __reduce__(self):
        return (Size, (tuple(self),))


_SEQUENCES = (str, bytes, bytearray, list, tuple)


_new_size = tuple.__new__  # (Size, shape): a Size without the check, for shapes of arrays


def _size(items) -> Size:
    """A Size of items known to be sizes (no check)."""
    return tuple.__new__(Size, items)


def _checked(cls: type, items: tuple) -> Size:
    """``torch.Size(items)``: each item an int, or converted by its
    ``__index__`` (a NumPy integer is kept, as PyTorch keeps it)."""
    out = []
    for i, v in enumerate(items):
        if type(v) is bool:
            v = int(v)
        elif not isinstance(v, (int, np.integer)):
            try:
                v = operator.index(v)
            except TypeError:
                raise TypeError(
                    f"torch.Size() takes an iterable of 'int' (item {i} is '{type(v).__name__}')"
                ) from None
        out.append(v)
    return tuple.__new__(cls, out)


def _reflected(other, name: str, size: Size):
    """``other``'s reflected operator on a Size, where it has a numeric one."""
    method = getattr(type(other), name, None)
    if method is None or isinstance(other, (Tensor, *_SEQUENCES)):
        return NotImplemented
    if name == "__rmul__" and isinstance(other, np.generic):
        return NotImplemented  # a NumPy scalar repeats a sequence
    return method(other, size)


def _type_name(obj) -> str:
    """The name CPython's own messages give a type (its ``tp_name``: ``numpy.bool``)."""
    t = type(obj)
    if t.__flags__ & _HEAPTYPE or t.__module__ == "builtins":
        return t.__name__
    return f"{t.__module__}.{t.__qualname__}"


_HEAPTYPE = 1 << 9


def _repeats(n) -> int:
    try:
        return operator.index(n)
    except TypeError:
        raise TypeError(f"can't multiply sequence by non-int of type '{_type_name(n)}'") from None


def _sized(items: tuple) -> Size:
    """``torch.Size(items)`` with its check that each element is an int."""
    return Size(items)


class VersionCounter:
    """Shared by a tensor and its views; bumped by every in-place write. ``born`` is the
    storage's birth: the serial of the last transform level entered before it was made (a
    level whose serial is not above it was active then, if it still is); unset for one made
    while no level was active (see ``births_recorded``)."""

    # No slots and no __init__: making a counter runs no Python code (every tensor gets
    # one); ``v`` reads the class's 0 until the first write gives the counter its own.
    v = 0


def _init_born(self: VersionCounter) -> None:
    self.born = births[0]


# The serial of the last transform level entered, and how many levels are active, in all
# threads (a tensor another thread makes meanwhile counts as made inside them).
births = [0, 0]
_births_lock = threading.Lock()


def births_recorded(serial: int | None) -> None:
    """A level with this serial was entered (None: a level exited). While any level is
    active, a new storage records its birth; with none, making a tensor costs nothing more
    (the counter's constructor is swapped)."""
    with _births_lock:
        if serial is None:
            births[1] -= 1
            if not births[1]:
                del VersionCounter.__init__
            return
        births[0] = serial
        births[1] += 1
        if births[1] == 1:
            VersionCounter.__init__ = _init_born


def born(ver: VersionCounter) -> int:
    """The birth of a storage (0: made while no transform level was active)."""
    return getattr(ver, "born", 0)


class InferenceVersion(VersionCounter):
    """The counter of an inference tensor (made in inference mode) and of its views: its
    type is what marks them; PyTorch tracks no version for them."""

    __slots__ = ()


class DetachedInference(InferenceVersion):
    """An inference tensor's detached alias (``detach()``, ``.data =``): an inference
    tensor that PyTorch counts versions of and writes into in place outside inference mode
    too (not into its views: they are plain inference tensors)."""

    __slots__ = ()


def new_version() -> VersionCounter:
    """A new tensor's counter: an inference tensor's in inference mode."""
    return InferenceVersion() if state.inference else VersionCounter()


# The counter a new tensor gets: while no thread is in inference mode a plain one, without
# reading the thread's mode (``inference_entered`` swaps in ``new_version`` meanwhile).
_fresh_version = VersionCounter
_inference_threads = [0]
_inference_lock = threading.Lock()


def inference_entered(entered: bool) -> None:
    """A thread entered inference mode (``entered``) or left it."""
    global _fresh_version
    with _inference_lock:
        _inference_threads[0] += 1 if entered else -1
        _fresh_version = new_version if _inference_threads[0] else VersionCounter


INFERENCE_WRITE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details."
)


class ZeroVersion(VersionCounter):
    """The counter of a ZeroTensor (``torch._efficientzerotensor``) and of its views and
    detached aliases: its type marks them immutable."""

    __slots__ = ()


ZERO_WRITE = (
    "ZeroTensors are immutable. Please use the materialized zero tensor obtained using "
    ".clone() if you want a mutable tensor."
)


def check_writable(t: Tensor, zero_text: str | None = ZERO_WRITE) -> None:
    """PyTorch's refusal of an in-place write (before anything is written) into an
    inference tensor outside inference mode, or into a ZeroTensor (``zero_text``: the
    writer's text; None: a write PyTorch allows, as a resize)."""
    v = t._ver
    if type(v) is VersionCounter:
        return
    if type(v) is InferenceVersion and not state.inference:
        raise RuntimeError(INFERENCE_WRITE)
    if type(v) is ZeroVersion and zero_text is not None:
        raise RuntimeError(zero_text)


def bump_version(t: Tensor, n: int = 1) -> None:
    """Count ``n`` in-place writes to t's memory (its views' too: they share the counter)."""
    t._ver.v += n


# A transform wrapper's fields: its value one level down, its level's interpreter, and a
# batch dim (vmap) or a tangent (forward mode).
WRAPPER_SLOTS = ("_inner", "_interp", "_bdim", "_tangent")
_FUNCTORCH_KINDS = ("VMAP", "GRAD", "JVP")  # (interpreter.FUNCTORCH, which imports this module)
_REQUIRES_GRAD_IN_TRANSFORM = (
    "You are attempting to call Tensor.requires_grad_() (or perhaps using "
    "torch.autograd.functional.* APIs) inside of a function being transformed by a functorch "
    "transform. This is unsupported, please attempt to use the functorch transforms (e.g. "
    "grad, vjp, jacrev, jacfwd, hessian) or call requires_grad_() outside of a function "
    "being transformed instead."
)


class Tensor:
    """A multi-dimensional array with autograd state (level 0).

    Transform wrappers subclass it and override the array-facing properties.
    """

    # Hot attributes live in slots; rare ones (grad, hooks, names) in __dict__
    # with class-level defaults, so that creating a tensor writes five fields.
    # ``_rg_bit`` is the requires-grad flag as stored; ``_rg`` reads it for everyone but
    # the dispatcher's loop, after regenerating a stale view's history.
    # The transform wrappers' fields are slots here too (unset on a plain tensor), so that
    # a plain tensor can be lifted into a level in place (its class assigned).
    __slots__ = (
        "_data",
        "_rg_bit",
        "_grad_fn",
        "_ver",
        "_base",
        *WRAPPER_SLOTS,
        "__dict__",
        "__weakref__",
    )
    _level = 0
    _out_nr = 0
    _hooks = None
    _inplace_error = None  # why an in-place write into this tensor is refused
    _conj = False  # the conjugate bit (ops/complex.py)
    _retains_grad = False
    _accum = None  # weakref to this leaf's AccumulateGrad node
    _view = None  # (root base, chain of (op, attrs)) for views
    _creation = None  # how a view was made, when in-place writes into it are refused
    _view_ver = 0
    _grad = None
    _is_param = False
    _lifted = False  # a wrapper made by lifting a plain tensor into a level (_core/lift.py)
    _internal = True  # see __init_subclass__
    __array_priority__ = 1000

    def __init__(self, *args, device=None):
        """The legacy constructor: ``Tensor(sequence)`` or ``Tensor(*sizes)``, float32."""
        if len(args) == 1 and not isinstance(args[0], int):
            data = args[0]
            data = data.numpy(force=True) if isinstance(data, Tensor) else data
            _init(self, np.array(data, dtype=np.float32))
        else:
            _init(self, np.zeros(tuple(int(a) for a in args), np.float32))

    # ----------------------------------------------------------- metadata
    @property
    def shape(self) -> Size:
        return _new_size(Size, self._data.shape)

    def size(self, dim: int | None = None):
        if dim is None:
            return _new_size(Size, self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return self._data.size

    nelement = numel

    @property
    def dtype(self) -> dt.dtype:
        return dt.from_np(self._data.dtype)

    @property
    def device(self):
        return device_of(self._data)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_meta(self) -> bool:
        return type(self._data) is MetaArray

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    def element_size(self) -> int:
        return self._data.itemsize

    def stride(self, dim: int | None = None):
        a = self._data
        if a.size == 0 and not any(a.strides):  # NumPy gives an empty array no strides
            st = empty_strides(a.shape)
        else:
            st = tuple(s // a.itemsize for s in a.strides)
        return st if dim is None else st[_wrap_dim(dim, self._data.ndim)]

    def is_contiguous(self, memory_format=None) -> bool:
        if memory_format in CHANNELS_LAST:
            rank, order = CHANNELS_LAST[memory_format]
            return self.dim() == rank and bool(self._data.transpose(order).flags.c_contiguous)
        return bool(self._data.flags.c_contiguous)

    def data_ptr(self) -> int:
        return self._data.__array_interface__["data"][0] if self.device == CPU else 0

    def get_device(self) -> int:
        d = self.device
        return d.index if d.type == "cuda" else -1

    @property
    def is_leaf(self) -> bool:
        _freshen(self, True)
        return self._grad_fn is None

    # ----------------------------------------------------------- autograd state
    @property
    def _rg(self) -> bool:
        """Whether the tensor requires grad; a view whose base was written in place since
        it was last used first takes its history from the base's (PyTorch's CopySlices)."""
        if self._view is not None and self._view_ver != self._ver.v:
            upcalls.refresh_view(self)
        return self._rg_bit

    @_rg.setter
    def _rg(self, value: bool) -> None:
        self._rg_bit = value

    @property
    def requires_grad(self) -> bool:
        if self._view is not None and self._view_ver != self._ver.v:
            if self._creation is not None:
                # As PyTorch: the base's flag, with no regeneration (that refuses the view).
                return self._rg_bit or self._view[0].requires_grad
            upcalls.refresh_view(self)
        return self._rg_bit

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._set_requires_grad(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if any(i.kind.name in _FUNCTORCH_KINDS and not i.legacy for i in state.stack):
            raise RuntimeError(_REQUIRES_GRAD_IN_TRANSFORM)
        return self._set_requires_grad(requires_grad)

    def _set_requires_grad(self, requires_grad: bool = True) -> Tensor:
        """requires_grad_ (also inside a transform: numtorch's own calls)."""
        if requires_grad and isinstance(self._ver, InferenceVersion) and not state.inference:
            raise RuntimeError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not "
                "allowed."
            )
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want "
                    "to use a computed variable in a subgraph that doesn't require "
                    "differentiation use var_no_grad = var.detach()."
                )
            return self
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._rg = bool(requires_grad)
        return self

    @property
    def grad_fn(self):
        _freshen(self, True)
        fn = self._grad_fn
        if fn is not None and fn._lazy:  # a node whose name depends on the call: find it
            fn.name()
        return fn

    @property
    def grad(self):
        return self._grad

    @property
    def grad_dtype(self):
        """The dtype .grad accumulates in (default: the tensor's; None: any). Leaves only."""
        if self._grad_fn is not None:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        return self.__dict__.get("_grad_dtype", self.dtype)

    @grad_dtype.setter
    def grad_dtype(self, value) -> None:
        if self._grad_fn is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if value is not None and not isinstance(value, type(self.dtype)):
            raise RuntimeError(
                f"grad_dtype must be a torch.dtype or None, but got {type(value).__name__}"
            )
        self.__dict__["_grad_dtype"] = value

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            want = self.__dict__.get("_grad_dtype", self.dtype)
            if want is not None and value.dtype != want:
                raise RuntimeError(
                    "attempting to assign a gradient with dtype "
                    f"'{value.dtype.cpp_name}' to a tensor with grad_dtype "
                    f"'{want.scalar_name}'. The gradient must match the tensor's "
                    "grad_dtype (defaults to the tensor's dtype). You can set the tensor's "
                    "grad_dtype attribute with a specific dtype, or None to allow any dtype. "
                    "Set grad_dtype with caution. Diverging the dtypes of a tensor and its "
                    "gradient may break downstream systems that assume they match."
                )
            dev, vdev = self.device, value.device
            if dev.type != vdev.type:
                raise RuntimeError(
                    f"attempting to assign a gradient with device type '{vdev.type}' to a "
                    f"tensor with device type '{dev.type}'. Please ensure that the gradient "
                    "and the tensor are on the same device"
                )
            if dev != vdev:
                raise RuntimeError(
                    "attempting to assign a gradient located on device with index "
                    f"'{vdev.index}' to a tensor located on device with index '{dev.index}'. "
                    "Please ensure that the gradient and the tensor are on the same device"
                )
            if value.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a "
                    f"tensor of size '{list(self.shape)}'. Please ensure that the gradient "
                    "and the tensor are the same size"
                )
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def _version(self) -> int:
        if type(self._ver) is InferenceVersion:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._ver.v

    @property
    def data(self) -> Tensor:
        # As PyTorch's variable_data: the memory is shared, the version counter is not, so
        # writes through .data stay invisible to autograd's saved-tensor checks. Its
        # storage's birth is the tensor's (a transform sees a captured tensor's alias).
        t = _make(self._data)
        if hasattr(self._ver, "born"):
            t._ver.born = self._ver.born
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        self._data = value._data
        if isinstance(value._ver, InferenceVersion):
            self._ver = DetachedInference()

    @property
    def output_nr(self) -> int:
        return self._out_nr

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    @property
    def _is_view(self) -> bool:
        return self._base is not None

    def is_inference(self) -> bool:
        return isinstance(self._ver, InferenceVersion)

    def _is_zerotensor(self) -> bool:
        return type(self._ver) is ZeroVersion

    # ----------------------------------------------------------- conversion
    def numpy(self, *, force: bool = False) -> np.ndarray:
        if self._rg and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        if type(self._ver) is ZeroVersion and not force:
            raise RuntimeError(
                " Cannot convert a ZeroTensor to numpy. Set force=True if you need the zero array."
            )
        data = self._data
        if type(data) is MetaArray:
            if force:  # (numtorch's own reads of values)
                raise NotImplementedError("Cannot copy out of meta tensor; no data!")
            raise TypeError(
                "can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the "
                "tensor to host memory first."
            )
        if isinstance(data, np.ndarray):
            return data
        run_pending_checks()
        return data.get()

    def __array__(self, dtype=None, copy=None):
        a = self.numpy(force=True)
        return a if dtype is None else a.astype(dtype, copy=False)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        # NumPy's result of a ufunc on a tensor comes back a tensor, as in PyTorch (whose
        # bool results come back uint8)
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        return _make(array)

    def _check_single(self, what: str) -> None:
        if self._data.size == 1 and type(self._data) is MetaArray:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        if self._data.size != 1:
            if what == "item":
                raise RuntimeError(
                    f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
                )
            # int(), float(), complex(): Python's number protocol, a ValueError in PyTorch
            raise ValueError("only one element tensors can be converted to Python scalars")

    def item(self):
        self._check_single("item")
        if pending_checks:
            _synchronize(self._data)
        return dt.widen(self._data.reshape(())).item()

    def tolist(self):
        if type(self._data) is MetaArray:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        if type(self._ver) is ZeroVersion:  # (PyTorch's ZeroTensor has no storage)
            raise RuntimeError("tolist() shouldn't be called on a tensor with unallocated storage")
        return dt.widen(np.asarray(self.numpy(force=True))).tolist()

    def __float__(self) -> float:
        self._check_single("float")
        if pending_checks:
            _synchronize(self._data)
        return float(self._data.reshape(()))

    def __int__(self) -> int:
        self._check_single("int")
        if pending_checks:
            _synchronize(self._data)
        return int(self._data.reshape(()))

    def __complex__(self) -> complex:
        self._check_single("complex")
        if pending_checks:
            _synchronize(self._data)
        return complex(self._data.reshape(()))

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        if pending_checks:
            _synchronize(self._data)
        return int(self._data.reshape(()))

    def __bool__(self) -> bool:
        if type(self._data) is MetaArray:
            self._check_single("bool")
        if self._data.size != 1:
            many = "more than one value" if self._data.size else "no values"
            raise RuntimeError(f"Boolean value of Tensor with {many} is ambiguous")
        if pending_checks:
            _synchronize(self._data)
        return bool(self._data.reshape(()))

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self) -> int:
        return id(self)

    def __contains__(self, element) -> bool:
        return bool((self == element).any())

    def __reversed__(self):
        return self.flip(0)

    def __repr__(self) -> str:
        from .printing import tensor_repr

        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        # As PyTorch's: a 0-dim tensor of PyTorch's own class formats as its number (a
        # subclass such as Parameter, and any other tensor, as object does: str, and a
        # TypeError for a non-empty spec).
        if self._internal and self.dim() == 0:
            return self.detach().item().__format__(spec)
        return object.__format__(self, spec)

    def __init_subclass__(cls, internal: bool = False, **kwargs):
        """``internal``: a class numtorch uses where PyTorch has a plain Tensor (views,
        transform wrappers); their subclasses are too. A class deriving from Tensor
        directly without it (Parameter, a user's subclass) is a subclass to PyTorch."""
        super().__init_subclass__(**kwargs)
        cls._internal = internal or (
            Tensor not in cls.__bases__
            and all(b._internal for b in cls.__bases__ if issubclass(b, Tensor))
        )

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol at the moment.  If you were attempting to deepcopy a "
                "module, this may be because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001"
            )
        new = _make(copy_array(self._data))
        new._rg = self._rg
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = new
        return new

    def __reduce_ex__(self, proto):
        dev = self.device
        if dev.type == "cuda":  # the data travels through the host; the device is kept
            return (_rebuild, (self.numpy(force=True), self._rg, str(dev)))
        return (_rebuild, (self.numpy(force=True), self._rg))

    def __setstate__(self, state):  # pragma: no cover - pickling goes through _rebuild
        pass

    # ----------------------------------------------------------- autograd entry points
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        upcalls.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook):
        return upcalls.register_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        return upcalls.register_post_accumulate_grad_hook(self, hook)

    def retain_grad(self) -> None:
        upcalls.retain_grad(self)

    def detach(self) -> Tensor:
        if state.modes or self._level:  # the op: modes see aten.detach (a wrapper's own
            return upcalls.detach_op(self)  # method is the usual path; this, an unbound call)
        return _wrap_view_of(self, self._data)

    def detach_(self) -> Tensor:
        if self._base is not None and self._rg:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view "
                "is set as True, gradients are views of DDP buckets, and hence detach_() "
                "cannot be called on these gradients. To fix this error, please refer to "
                "the Optimizer.zero_grad() function in torch/optim/optimizer.py as the "
                "solution."
            )
        if self._base is None and self._view is not None:
            # a root laid out anew in place (t_): no longer on its old layout's history
            del self._view
        self._grad_fn = None
        self._rg = False
        return self


def _synchronize(data) -> None:
    """Before a GPU array is read back (a synchronization): its device's pending checks."""
    if type(data) is not np.ndarray:
        run_pending_checks()


def _freshen(t: Tensor, strict: bool = False) -> None:
    """Regenerate a view's history if an in-place write into its base made it stale (a
    root laid out anew in place, ``t_``, counts as a view of its old layout); ``strict``:
    for its grad_fn, refused for some views even in no_grad mode (``rebase._refresh``)."""
    if t._view is not None and t._view_ver != t._ver.v:
        upcalls.refresh_view(t, strict)


_new = object.__new__


def _init(t: Tensor, data) -> None:
    t._data = data
    t._rg_bit = False
    t._grad_fn = None
    t._ver = _fresh_version()
    t._base = None


def _make(data) -> Tensor:
    """A fresh level-0 tensor over an array (no copy)."""
    t = _new(Tensor)
    t._data = data
    t._rg_bit = False
    t._grad_fn = None
    t._ver = _fresh_version()
    t._base = None
    return t


def _wrap_view_of(src: Tensor, data) -> Tensor:
    """A tensor sharing src's memory and version counter, outside autograd (detach)."""
    t = _new(Tensor)
    t._data = data
    t._rg_bit = False
    t._grad_fn = None
    t._ver = src._ver if type(src._ver) is not InferenceVersion else DetachedInference()
    t._base = None
    return t


def _rebuild(arr, rg, device: str | None = None):
    """A pickled tensor: its data, requires_grad and (when not the CPU) its GPU."""
    arr = np.array(arr)
    t = _make(arr if device is None else host_to_gpu(arr, _Device(device)))
    t._rg_bit = rg
    return t


def _wrap_dim(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


wrap_dim = _wrap_dim


def wrap_dims(dims, ndim: int) -> tuple:
    """An int or a sequence of dims, each wrapped into ``[0, ndim)``."""
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return tuple(_wrap_dim(d, ndim) for d in dims)


def check_unique_dims(dims) -> None:
    """PyTorch's error for a dim listed twice (``dims`` already wrapped)."""
    if len(dims) > 1 and len(set(dims)) != len(dims):
        seen = set()
        for d in dims:
            if d in seen:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
            seen.add(d)
