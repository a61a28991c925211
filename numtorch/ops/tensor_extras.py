"""Tensor queries and utilities that are not ops: PyTorch's ``is_*`` predicates and
properties (``itemsize``, ``nbytes``, ``layout``, the backend flags of a CPU tensor),
memory facts (``storage_offset``, ``dim_order``, ``const_data_ptr``, pinning and
sharing), element-wise Python callables (``apply_``, ``map_``, ``map2_``), the deprecated
out-of-place ``resize``/``resize_as``, ``set_`` and ``as_subclass``; the ``torch.*`` forms of
the predicates, and ``torch.typename``."""

from __future__ import annotations

import warnings

import numpy as np

from .._core import dtype as dt
from .._core import upcalls
from .._core.dispatch import dispatch
from .._core.layout import strided
from .._core.meta import by_kernel
from .._core.methods import tensor_methods
from .._core.op import defop
from .._core.state import state
from .._core.tensor import Tensor, bump_version
from .._opdb.samples import S
from ._families import COMPLEX_TOO
from .strided import array_offset, as_strided


# ------------------------------------------------------------------ predicates
def is_nonzero(input: Tensor) -> bool:
    """Whether the single value of ``input`` is not zero (NaN is not zero)."""
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item() != 0)


def is_same_size(input: Tensor, other: Tensor) -> bool:
    """Whether the two tensors have the same shape."""
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input: Tensor) -> bool:
    """Whether ``input``'s dtype is signed (floats and complex included; bool is not)."""
    return input.dtype.is_signed


def is_inference(input: Tensor) -> bool:
    """Whether ``input`` was made in inference mode."""
    return input.is_inference()


def get_device(input: Tensor) -> int:
    """The index of ``input``'s device (-1 for the CPU)."""
    return input.get_device()


def typename(obj) -> str:
    """A tensor's legacy type name (``torch.FloatTensor``); otherwise the object's (or its
    class's) module-qualified name, without ``builtins``."""
    if isinstance(obj, Tensor):
        return obj.type()
    if hasattr(obj, "__qualname__"):
        module, name = getattr(obj, "__module__", "") or "", obj.__qualname__
    elif hasattr(obj, "__name__"):
        module, name = getattr(obj, "__module__", "") or "", obj.__name__
    else:
        module, name = type(obj).__module__, type(obj).__qualname__
    return name if module in ("", "builtins") else f"{module}.{name}"


# ------------------------------------------------------------------ memory
def _storage_offset(self: Tensor) -> int:
    """Where self's first element sits in its storage, in elements."""
    return array_offset(self._data)


def _dim_order(self: Tensor, *, ambiguity_check: bool | list = False) -> tuple:
    """The dims from outermost to innermost in memory (a stable sort by stride: equal
    strides keep their order); ``ambiguity_check`` refuses a layout two orders describe."""
    if not isinstance(ambiguity_check, (bool, list)):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    st = self.stride()
    order = tuple(sorted(range(len(st)), key=lambda d: -st[d]))
    if ambiguity_check is not False:
        shape = self.shape
        if any(n == 1 for n in shape) or len(set(st)) != len(st):
            raise RuntimeError(
                "The tensor does not have unique dim order, or cannot map to exact one of the "
                "given memory formats."
            )
    return order


def _is_pinned(self: Tensor, device=None) -> bool:
    return self.__dict__.get("_pinned", False)


def _pin_memory(self: Tensor, device=None) -> Tensor:
    """A copy of a CPU tensor in page-locked memory (a flag here: NumPy memory serves the
    GPU's copies as it is); the tensor itself when already pinned."""
    from .._core.device import is_cuda_available

    if not is_cuda_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if self.device.type != "cpu":
        raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
    if _is_pinned(self):
        return self
    out = self.clone()
    out._pinned = True
    return out


def _share_memory_(self: Tensor) -> Tensor:
    """Moves the storage to shared memory; a NumPy buffer serves every process that
    inherits it, so only the flag changes."""
    self._shared = True
    return self


def _is_shared(self: Tensor) -> bool:
    return getattr(self, "_shared", False)


def _as_subclass(self: Tensor, cls) -> Tensor:
    """A tensor of class ``cls`` sharing self's data (and its autograd history)."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"as_subclass(): argument 'cls' must be a subclass of Tensor (got {cls!r})")
    out = self.view_as(self)
    out.__class__ = cls
    return out


# ------------------------------------------------------------------ Python callables
def _refuse_grad(self: Tensor, name: str) -> None:
    if self.requires_grad:
        raise RuntimeError(
            f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() "
            "instead."
        )


def _write_each(self: Tensor, fn, others=()) -> Tensor:
    data = self._data
    if self.device.type != "cpu":
        raise TypeError(f"{fn.__name__}_ is only implemented on CPU tensors")
    cast = bool if data.dtype == np.bool_ else int if data.dtype.kind in "iu" else None
    arrays = [np.broadcast_to(o._data, data.shape) for o in others]
    for idx in np.ndindex(data.shape):
        v = fn(data[idx].item(), *(a[idx].item() for a in arrays))
        if cast is not bool and not isinstance(v, (bool, int, float, np.number)):
            raise TypeError(f"must be real number, not {type(v).__name__}")
        data[idx] = cast(v) if cast is not None else v
    bump_version(self)
    return self


def _check_other(self: Tensor, other: Tensor, name: str, what: str) -> None:
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument '{what}' must be Tensor, not {type(other).__name__}")
    if other.dtype != self.dtype:
        raise TypeError(f"{name}: expected {self.type()} for '{what}' (got {other.type()})")


def _apply_(self: Tensor, callable) -> Tensor:
    """Replace each element ``v`` with ``callable(v)`` (CPU tensors, no autograd)."""
    _refuse_grad(self, "apply_")
    return _write_each(self, callable)


def _map_(self: Tensor, tensor: Tensor, callable) -> Tensor:
    """Replace each element ``v`` with ``callable(v, w)``, ``w`` the element of ``tensor``
    broadcast to self's shape."""
    _refuse_grad(self, "map_")
    _check_other(self, tensor, "map_", "other")
    return _write_each(self, callable, (tensor,))


def _map2_(self: Tensor, x: Tensor, y: Tensor, callable) -> Tensor:
    """map_ with two tensors: ``callable(v, a, b)``."""
    _refuse_grad(self, "map2_")
    _check_other(self, x, "map2_", "x")
    _check_other(self, y, "map2_", "y")
    return _write_each(self, callable, (x, y))


# ------------------------------------------------------------------ deprecated and set_
def _resize(self: Tensor, *sizes) -> Tensor:
    """The deprecated out-of-place resize: the same elements in a new shape."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    if len(sizes) == 1 and not isinstance(sizes[0], int):
        sizes = tuple(sizes[0])
    return _reshaped(self, tuple(int(s) for s in sizes))


def _resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """The deprecated out-of-place resize_as."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return _reshaped(self, tuple(tensor.shape))


def _reshaped(self: Tensor, sizes: tuple) -> Tensor:
    n = 1
    for s in sizes:
        n *= s
    if n != self.numel():
        shown = "x".join(str(s) for s in sizes)
        have = "x".join(str(s) for s in self.shape)
        raise RuntimeError(
            f"requested resize to {shown} ({n} elements in total), but the given tensor has a "
            f"size of {have} ({self.numel()} elements). autograd's resize can only change the "
            "shape of a given tensor, while preserving the number of elements. "
        )
    return self.contiguous().view(sizes)


def _set_(self: Tensor, source=None, storage_offset: int = 0, size=None, stride=None) -> Tensor:
    """self takes ``source``'s memory (its shape and strides, or ``size``/``stride`` from
    ``storage_offset`` on); with no source, an empty tensor."""
    if self._rg and self.is_leaf and state.grad_enabled:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    if source is None:
        self._data = self._data[:0].reshape(0) if self._data.size else self._data.reshape(0)
        bump_version(self)
        return self
    if not isinstance(source, Tensor):
        raise TypeError(f"set_(): argument 'source' must be Tensor, not {type(source).__name__}")
    if source.dtype != self.dtype:
        raise RuntimeError(
            f"Could not set tensor of type {_c_name(source.dtype)} to a tensor of type "
            f"{_c_name(self.dtype)}"
        )
    if size is None:
        data = source._data
    else:
        stride = stride if stride is not None else _contiguous_strides(tuple(size))
        data = as_strided(source.detach(), tuple(size), tuple(stride), storage_offset)._data
    self._data = data
    bump_version(self)
    return self


def _contiguous_strides(size: tuple) -> tuple:
    out, step = [0] * len(size), 1
    for i in range(len(size) - 1, -1, -1):
        out[i] = step
        step *= max(size[i], 1)
    return tuple(out)


_C_NAMES = {
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "bool": "bool",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def _c_name(d: dt.dtype) -> str:
    return _C_NAMES.get(str(d).removeprefix("torch."), str(d))


# ------------------------------------------------------------------ CPU facts
def _false(self: Tensor) -> bool:
    return False


def _device_flag(kind: str):
    return property(lambda self: self.device.type == kind)


def _is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """Whether self views the same memory as ``tensor`` with the same shape and strides."""
    a, b = self._data, tensor._data
    return (
        a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
        and a.shape == b.shape
        and a.strides == b.strides
        and a.dtype == b.dtype
    )


def _module_load(self: Tensor, other: Tensor, assign: bool = False) -> Tensor:
    """How ``load_state_dict`` (swapping tensors) turns ``other`` into the new value of self:
    ``other.detach()`` when assigning, else ``self.copy_(other).detach()``."""
    return other.detach() if assign else self.copy_(other).detach()


_REINFORCE = """reinforce() was removed.
Use torch.distributions instead.
See https://pytorch.org/docs/main/distributions.html

Instead of:

probs = policy_network(state)
action = probs.multinomial()
next_state, reward = env.step(action)
action.reinforce(reward)
action.backward()

Use:

probs = policy_network(state)
# NOTE: categorical is equivalent to what used to be called multinomial
m = torch.distributions.Categorical(probs)
action = m.sample()
next_state, reward = env.step(action)
loss = -m.log_prob(action) * reward
loss.backward()
"""


def _dlpack(self: Tensor, **kwargs):
    """The DLPack capsule of self's memory (``np.from_dlpack``/``torch.from_dlpack`` read it)."""
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    return self._data.__dlpack__(**kwargs)


def _reinforce(self: Tensor, reward) -> None:
    raise RuntimeError(_REINFORCE)


def _volatile(self: Tensor) -> bool:
    warnings.warn("volatile was removed (Variable.volatile is always False)", stacklevel=2)
    return False


_NOT_HERE = (
    "is_sparse is_sparse_csr is_quantized is_mkldnn is_nested is_xla is_xpu is_mps "
    "is_ipu is_maia is_mtia is_vulkan"
).split()

tensor_methods(
    {
        "itemsize": property(lambda self: self._data.itemsize),
        "nbytes": property(lambda self: self._data.itemsize * self._data.size),
        "is_cpu": _device_flag("cpu"),
        **{name: property(_false) for name in _NOT_HERE},
        "layout": property(lambda self: strided),
        "name": property(lambda self: None),
        "is_nonzero": is_nonzero,
        "is_same_size": is_same_size,
        "is_signed": is_signed,
        "storage_offset": _storage_offset,
        "dim_order": _dim_order,
        "const_data_ptr": lambda self: self.data_ptr(),
        "is_pinned": _is_pinned,
        "pin_memory": _pin_memory,
        "share_memory_": _share_memory_,
        "is_shared": _is_shared,
        "as_subclass": _as_subclass,
        "apply_": _apply_,
        "map_": _map_,
        "map2_": _map2_,
        "resize": _resize,
        "resize_as": _resize_as,
        "set_": _set_,
        "is_set_to": _is_set_to,
        "module_load": _module_load,
        "to_dense": lambda self, dtype=None, *, masked_grad=None: (
            self if dtype is None else self.to(dtype)
        ),
        "reinforce": _reinforce,
        "volatile": property(_volatile),
        "__dlpack__": _dlpack,
        "__dlpack_device__": lambda self: self._data.__dlpack_device__(),
    }
)


def _detach_kernel(xp, input):
    return input  # (the same memory: a new tensor over it)


def _same_batch(vmap, args, bdims, attrs):
    return args[0].detach(), bdims[0]


# Tensor.detach itself makes no op call at level 0; under dispatch modes it calls this op,
# so that the modes see ``aten.detach`` where PyTorch's do (the engine's calls included).
detach_p = defop(
    "detach",
    _detach_kernel,
    api="Tensor.detach",
    batch_rule=_same_batch,
    samples=lambda make: [
        S((make((2, 3)),)),
        S((make(()),)),
        S((make((3, 2)).T,), name="transposed"),
    ],
    layout=None,
    test=COMPLEX_TOO,
    float8=True,
    complex32=True,
    meta=by_kernel,
)


def _detach_op(t: Tensor) -> Tensor:
    """``t.detach()`` as an op call: the result, which shares t's version counter where it
    is t's memory (as PyTorch's detach does)."""
    out = dispatch(detach_p, (t,))
    if isinstance(out, Tensor) and not (out._level or t._level) and out._data is t._data:
        out._ver = t._ver
    return out


upcalls.provide(detach_op=_detach_op)


def detach(input: Tensor) -> Tensor:
    """``input.detach()``."""
    return input.detach()


def detach_(input: Tensor) -> Tensor:
    """``input.detach_()``."""
    return input.detach_()


def from_dlpack(ext_tensor) -> Tensor:
    """A tensor sharing the memory of an object that exports DLPack (``__dlpack__``)."""
    from .creation import from_numpy

    return from_numpy(np.from_dlpack(ext_tensor))


def to_dlpack(tensor: Tensor):
    """A DLPack capsule of ``tensor``'s memory."""
    return _dlpack(tensor)


def is_storage(obj) -> bool:
    """Whether obj is a storage object: numtorch has none (tensors hold NumPy arrays)."""
    return False


def init_num_threads() -> None:
    """Initialises the thread pools of the calling thread: NumPy's need nothing."""
