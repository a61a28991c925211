"""Autocast's thread-local state and its casts (under ``torch.autocast``).

An op declares how autocast treats it with its ``autocast`` fact (``Op.autocast``):
``LOWER`` runs it on floating inputs cast to the region's lower precision dtype, ``FP32`` on
them cast to float32, ``PROMOTE`` on them cast to their widest floating dtype (PyTorch's
CPU lists: lower_precision_fp, fp32, promote), ``KEEP`` on them as they are (PyTorch's op is
one kernel in no list, where numtorch's composite is written with ops that are). A fact may
also be a function of the call, ``(inputs, attrs) -> policy or None``, where PyTorch runs a
different overload by the mode or the shapes. ``_core/autocast.py`` switches the casting of
primitives on and off; a composite with a fact casts through ``casting_fn``. ``out=`` and
in-place forms are never cast (PyTorch registers autocast for the functional overloads only).
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable

from . import dtype as dt
from .tensor import Tensor

LOWER = "lower"  # PyTorch's lower_precision_fp ops
FP32 = "fp32"  # its fp32 ops
PROMOTE = "promote"  # its promote ops
KEEP = "keep"  # an op in no list whose numtorch composite is written with ops in one
POLICIES = (LOWER, FP32, PROMOTE, KEEP)
Policy = str | Callable[[tuple, dict], str | None]

# The device types PyTorch's device strings know, in the order its error names them.
DEVICE_TYPES = (
    "cpu cuda ipu xpu mkldnn opengl opencl ideep hip ve fpga maia xla lazy vulkan mps meta hpu "
    "mtia privateuseone"
).split()
# The device types with autocast, and each one's default lower precision dtype.
_DEFAULTS = {
    "cpu": dt.bfloat16,
    "cuda": dt.float16,
    "ipu": dt.float16,
    "xpu": dt.float16,
    "maia": dt.bfloat16,
    "xla": dt.bfloat16,
    "mps": dt.float16,
    "hpu": dt.bfloat16,
    "mtia": dt.float16,
    "privateuseone": dt.float16,
}


class _Autocast(threading.local):
    """This thread's autocast state (PyTorch's is thread-local)."""

    def __init__(self):
        self.enabled: dict[str, bool] = {}
        self.dtype: dict = dict(_DEFAULTS)
        self.cache_enabled = True
        self.nesting = 0
        self.cache: dict[int, tuple[Tensor, Tensor]] = {}  # id(weight) -> (weight, its cast)


tls = _Autocast()
# Whether the casting is in (autocast is on in some thread): composites check this first.
ACTIVE = [False]


def device_type_of(device_type: str) -> str:
    """A device string's type, with PyTorch's error for an unknown one."""
    if not isinstance(device_type, str):
        raise TypeError(
            "is_autocast_enabled(): argument 'device_type' (position 1) must be str, not "
            f"{type(device_type).__name__}"
        )
    kind = device_type.split(":")[0]
    if kind not in DEVICE_TYPES:
        raise RuntimeError(
            f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device "
            f"string: {device_type}"
        )
    return kind


def is_available(device_type: str) -> bool:
    """Whether autocast exists for a device type."""
    return device_type_of(device_type) in _DEFAULTS


def is_enabled(device_type: str) -> bool:
    return tls.enabled.get(device_type_of(device_type), False)


def get_dtype(device_type: str):
    kind = device_type_of(device_type)
    if kind not in tls.dtype:
        raise RuntimeError("unsupported scalarType")
    return tls.dtype[kind]


def set_dtype(device_type: str, dtype) -> None:
    kind = device_type_of(device_type)
    if kind not in _DEFAULTS:
        raise RuntimeError("unsupported scalarType")
    tls.dtype[kind] = dtype


def clear_cache() -> None:
    """Forget the casts of weights made so far."""
    tls.cache.clear()


def device_of(args) -> str | None:
    """The device type of the first tensor among the arguments (or in a list)."""
    for a in args:
        if isinstance(a, Tensor):
            return a.device.type
        if isinstance(a, (list, tuple)):
            d = device_of(a)
            if d is not None:
                return d
    return None


def _eligible(a, device: str) -> bool:
    """A tensor autocast casts: floating, not float64, on the region's device."""
    if not isinstance(a, Tensor):
        return False
    d = a.dtype
    return d.is_floating_point and d is not dt.float64 and a.device.type == device


def _cast(a, to, device: str):
    """``a`` cast to ``to`` if autocast casts it; a float32 leaf weight's cast to the lower
    dtype is cached for the region."""
    if not _eligible(a, device) or a.dtype is to:
        return a
    cacheable = (
        tls.cache_enabled
        and to is tls.dtype.get(device)
        and a.dtype is dt.float32
        and a.requires_grad
        and a.is_leaf
        and a._base is None
    )
    if not cacheable:
        return a.to(to)
    hit = tls.cache.get(id(a))
    if hit is not None and hit[0] is a:
        return hit[1]
    out = a.to(to)
    tls.cache[id(a)] = (a, out)
    return out


def policy_of(policy: Policy | None, args: tuple, attrs: dict) -> str | None:
    """The policy a fact gives for one call."""
    return policy(args, attrs) if callable(policy) else policy


def _target(policy: str, args, device: str):
    """The dtype a policy casts the eligible inputs to (None: no cast)."""
    if policy == KEEP:
        return None
    lower = tls.dtype[device]
    if policy == LOWER:
        return lower
    if policy == FP32:
        return dt.float32
    current = lower
    for a in _tensors(args):
        if _eligible(a, device) and current is lower and a.dtype is not lower:
            if a.dtype is not dt.float32:
                raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
            current = dt.float32
    return current


def _tensors(args):
    for a in args:
        if isinstance(a, (list, tuple)):
            yield from (t for t in a if isinstance(t, Tensor))
        elif isinstance(a, Tensor):
            yield a


def cast_args(policy: str, args: tuple, device: str) -> tuple:
    """The arguments with each eligible tensor (in lists too) cast as the policy says."""
    to = _target(policy, args, device)
    if to is None:
        return args
    out = []
    for a in args:
        if isinstance(a, (list, tuple)):
            a = type(a)(_cast(t, to, device) for t in a)
        else:
            a = _cast(a, to, device)
        out.append(a)
    return tuple(out)


def casting_fn(fn: Callable, policy: Policy) -> Callable:
    """A composite's function that casts its tensor arguments by the policy while autocast
    is on for their device, then runs with autocast off for it (PyTorch's autocast kernel
    runs the op below itself); with ``out=`` it runs uncast, with autocast off."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def run(*args, **kwargs):
        if not ACTIVE[0]:
            return fn(*args, **kwargs)
        device = device_of(args) or device_of(tuple(kwargs.values()))
        if device is None or not tls.enabled.get(device):
            return fn(*args, **kwargs)
        bound = sig.bind(*args, **kwargs)
        if bound.arguments.get("out") is None:
            values = tuple(bound.arguments.values())
            chosen = policy_of(policy, values, bound.arguments)
            if chosen is None:
                return fn(*args, **kwargs)
            for name, v in zip(bound.arguments, cast_args(chosen, values, device)):
                bound.arguments[name] = v
        return uncast(fn, *bound.args, **bound.kwargs)

    return run


def uncast(fn: Callable, *args, **kwargs):
    """``fn(*args, **kwargs)`` with autocast off in this thread (an ``out=`` or in-place
    form, or an op below its autocast kernel)."""
    was = pause()
    try:
        return fn(*args, **kwargs)
    finally:
        resume(was)


def pause() -> dict[str, bool]:
    """Turn autocast off for every device in this thread; what ``resume`` restores."""
    was = dict(tls.enabled)
    tls.enabled.clear()
    return was


def resume(was: dict[str, bool]) -> None:
    tls.enabled.clear()
    tls.enabled.update(was)


def cast_above(op, args: tuple, attrs: dict) -> tuple:
    """An op's arguments cast by its policy before the transform levels see them (so each
    level records or batches the casts), where autocast is on for their device."""
    device = device_of(args)
    if device is None or not tls.enabled.get(device):
        return args
    policy = policy_of(op.autocast, args, attrs)
    return args if policy is None else cast_args(policy, args, device)
