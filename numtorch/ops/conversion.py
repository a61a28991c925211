"""Dtype conversion and copies."""

from __future__ import annotations

import builtins

from .._core import dtype as dt
from .._core.device import device as Device
from .._core.device import resolved
from .._core.layout import preserve
from .._core.memory_format import CHANNELS_LAST, contiguous_format
from .._core.meta import by_kernel
from .._core.methods import tensor_methods
from .._core.op import LINEAR, defop
from .._core.tensor import Tensor
from .._opdb.samples import S
from ._batching import elementwise, front
from ._families import COMPLEX, COMPLEX_TOO, FLOATS_INT


def _to_dtype_samples(make):
    yield S((make((2,)), dt.int64))
    yield S((make((2, 3)), dt.float64))
    yield S((make(()), dt.float64))
    yield S((make((2, 3)), dt.complex128), name="to complex")
    yield S((make((2,)), dt.bool_), name="to bool")


def _to_dtype(xp, x, dtype):
    """x cast to ``dtype`` (complex to bool: nonzero, either part)."""
    return dt.cast(dt.real_for(x, dtype.np), dtype.np)


to_dtype_p = defop(
    "to_dtype",
    _to_dtype,
    nin=1,
    vjp=lambda g: g,
    jvp=LINEAR,
    api="Tensor.to",
    node_name="ToCopyBackward0",
    layout=preserve,  # (_to_copy's empty_like)
    samples=_to_dtype_samples,
    test={"dtypes": (*FLOATS_INT, *COMPLEX)},
    batch_rule=elementwise(),
    conversion=True,  # a non-float result leaves autograd
    float8=True,  # (PyTorch copies float8)
    complex32=True,
    meta=by_kernel,
)
to_dtype = to_dtype_p.fn

_C_ORDER = contiguous_format  # clone's memory_format for Tensor.contiguous


def _clone(xp, x, *, memory_format=None):
    """A copy of x laid out as ``memory_format`` asks; preserve_format (None): as
    empty_like lays out x."""
    if memory_format is _C_ORDER:
        return x.copy(order="C")
    if memory_format in CHANNELS_LAST:
        rank, order = CHANNELS_LAST[memory_format]
        if x.ndim != rank:
            raise RuntimeError(f"required rank {rank} tensor to use {memory_format._name} format")
        inverse = sorted(range(rank), key=order.__getitem__)
        return xp.ascontiguousarray(x.transpose(order)).transpose(inverse)
    return preserve(x.copy(order="K"), (x,))


def _clone_rule(vmap, args, bdims, attrs):
    """PyTorch's: contiguous_format makes each example contiguous, batch first; otherwise
    the batched tensor is cloned whole, its batch dim where it is (so an example's strides
    count the batch's place: samples of a batch at the back are not contiguous)."""
    x, bd = args[0], bdims[0]
    fmt = attrs.get("memory_format")
    if fmt == _C_ORDER:
        return clone(front(x, bd), memory_format=_C_ORDER), 0
    if fmt in CHANNELS_LAST:
        raise RuntimeError(
            "NYI: Tensor.clone(memory_format) inside vmap is only supported with "
            "memory_format torch.preserve_format or torch.contiguous_format (got "
            f"{'ChannelsLast3d' if fmt._name.endswith('3d') else 'ChannelsLast'})"
        )
    return clone(x), bd


clone_p = defop(
    "clone",
    _clone,
    vjp=lambda g: g,
    jvp=LINEAR,
    samples=lambda make: [
        S((make((2, 3)),)),
        S((make(()),)),
        S((make((3, 2)).T,), name="transposed"),
    ],
    batch_rule=_clone_rule,
    methods=True,
    test=COMPLEX_TOO,
    layout=None,
    float8=True,  # (PyTorch copies float8)
    complex32=True,
    meta=by_kernel,
)
clone = clone_p.fn


def _to_device_meta(op, arrays, attrs):
    """Metadata moves to the meta device; nothing comes back from it."""
    if attrs["device"].type != "meta":
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    return arrays[0]


def _to_device(xp, x, device):
    from .._core.device import backend, run_pending_checks, to_gpu

    if device.type == "cuda":
        return to_gpu(x, device.index)
    target = backend(device)
    if target is xp:
        return x
    if hasattr(x, "get"):  # (to the host: a synchronization)
        run_pending_checks()
        return x.get()
    return target.asarray(x)


to_device_p = defop(
    "to_device",
    _to_device,
    nin=1,
    vjp=lambda g, x: g.to(x.device),
    jvp=LINEAR,
    samples=None,
    api="Tensor.to",
    node_name="ToCopyBackward0",
    batch_rule=elementwise(),
    float8=True,  # (PyTorch copies float8)
    layout=preserve,  # (_to_copy's empty_like)
    meta=_to_device_meta,
)
to_device = to_device_p.fn


def _contiguous(self, memory_format=None):
    """self when already laid out as ``memory_format`` (default: C order), else a copy
    so laid out (differentiable)."""
    if memory_format in CHANNELS_LAST:
        if self.is_contiguous(memory_format=memory_format):
            return self
        return clone(self, memory_format=memory_format)
    return self if self.is_contiguous() else clone(self, memory_format=_C_ORDER)


def _caster(d):
    def cast(self, memory_format=None):
        return _to(self, d)

    return cast


def to_args(args: tuple, kwargs: dict) -> tuple:
    """(device, dtype, copy) from the argument forms of Tensor.to and Module.to: ``to(dtype)``,
    ``to(device)``, ``to(tensor)``, ``to(device, dtype)``, keywords, a bool non_blocking."""
    kwargs = dict(kwargs)
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments - got {kwargs}")
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, builtins.bool):  # non_blocking
            continue
        elif isinstance(a, (str, int, Device)):
            device = a
        elif a is not None:
            dtype = a
    return device, None if dtype is None else dt.to_dtype(dtype), copy


def _to(self, *args, **kwargs) -> Tensor:
    """Tensor.to(dtype) / to(device) / to(other) / to(device, dtype), copy=False."""
    device, dtype, copy = to_args(args, kwargs)
    out = self
    if dtype is not None and dtype != self.dtype:
        out = to_dtype(self, dtype)
    if device is not None:
        device = resolved(Device("cuda", device) if isinstance(device, int) else Device(device))
        if device != self.device:
            out = to_device(out, device)
    if copy and out is self:
        out = clone(self)
    return out


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """The legacy type name (``torch.FloatTensor``), or a copy as a dtype or legacy type
    (a class such as ``torch.DoubleTensor``, or its name)."""
    if dtype is None:
        name = self.dtype.tensor_type
        return name.replace("torch.", "torch.cuda.") if self.device.type == "cuda" else name
    where = self.device
    if isinstance(dtype, type) and isinstance(getattr(dtype, "dtype", None), dt.dtype):
        where = "cuda" if dtype.is_cuda else "cpu"
        dtype = dtype.dtype
    elif isinstance(dtype, str):
        where = "cuda" if dtype.startswith("torch.cuda.") else "cpu"
        try:
            dtype = dt.from_tensor_type(dtype.replace("torch.cuda.", "torch."))
        except KeyError:
            raise ValueError(f"invalid type: '{dtype}'") from None
    elif not isinstance(dtype, dt.dtype):
        raise ValueError(f"invalid type: '{getattr(dtype, '__name__', dtype)}'")
    return _to(self, where, dtype)


tensor_methods(
    {
        "contiguous": _contiguous,
        "to": _to,
        "type": _type,
        "type_as": lambda self, other: _to(self, other.dtype),
        "cpu": lambda self, memory_format=None: _to(self, "cpu"),
        "cuda": lambda self, device=None, non_blocking=False, memory_format=None: _to(
            self, Device("cuda", device) if isinstance(device, int) else device or "cuda"
        ),
        **{
            name: _caster(d)
            for name, d in [
                ("float", dt.float32),
                ("double", dt.float64),
                ("half", dt.float16),
                ("bfloat16", dt.bfloat16),
                ("long", dt.int64),
                ("int", dt.int32),
                ("short", dt.int16),
                ("char", dt.int8),
                ("byte", dt.uint8),
                ("bool", dt.bool_),
                ("chalf", dt.complex32),
                ("cfloat", dt.complex64),
                ("cdouble", dt.complex128),
            ]
        },
    }
)
