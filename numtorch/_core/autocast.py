"""Switching autocast on and off for this thread, and the casting implementations.

While a region is on in any thread, each primitive with an ``autocast`` fact has ``op.impl``
set to a function that casts its inputs (where autocast is on for their device in this
thread) and runs it as the dispatcher would. The dispatcher already consults ``op.impl`` at
level 0, so an op call costs nothing more while autocast is off.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from . import upcalls
from .aten import _requires_grad
from .aten import _run as _run_unrecorded
from .autocast_state import ACTIVE, cast_args, device_of, device_type_of, policy_of, tls
from .op import REGISTRY
from .state import state

# The threads with autocast on for some device; while any is, the ops' casting impls are in.
_on_threads: set[int] = set()


def set_enabled(device_type: str, enabled: bool) -> None:
    """Turn autocast on or off for a device type in this thread."""
    tls.enabled[device_type_of(device_type)] = bool(enabled)
    me = threading.get_ident()
    if any(tls.enabled.values()):
        _on_threads.add(me)
    else:
        _on_threads.discard(me)
    _install(bool(_on_threads))


def _install(on: bool) -> None:
    """Put the casting impls into the ops with a fact, or take them out."""
    if on == ACTIVE[0]:
        return
    for op in REGISTRY.values():
        if op.autocast is not None and not op.composite:
            op.impl = _casting_impl(op) if on else None
    ACTIVE[0] = on


def _casting_impl(op) -> Callable:
    """The level-0 implementation of an op with a fact while autocast is in: its inputs
    cast by its policy where autocast is on for their device, then the op as usual."""
    policy = op.autocast

    def impl(args: tuple, attrs: dict):
        device = device_of(args)
        if device is not None and tls.enabled.get(device):
            chosen = policy_of(policy, args, attrs)
            if chosen is not None:
                args = cast_args(chosen, args, device)
        if state.modes:
            return upcalls.dispatch_mode(op, args, attrs)
        res = _run_unrecorded(op, args, attrs)
        if op.ndiff and state.grad_enabled and _requires_grad(op, args):
            upcalls.record(op, args, attrs, res)
        return res

    impl.autocast_casting = True  # (what numtorch.compile's tracer names when it stops)
    return impl
