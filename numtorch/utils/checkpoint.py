"""torch.utils.checkpoint: trade compute for memory by running a region of the forward
again in backward instead of keeping its intermediate values.

``use_reentrant=False`` (recommended) replaces every tensor the region saves for backward
by a placeholder (``saved_tensors_hooks``); the first unpack of one in a backward pass
runs the region again, from its saved inputs, to get all of them back. It works with
``autograd.grad``, ``create_graph=True``, nesting and keyword arguments.
``use_reentrant=True`` runs the region under no_grad as an ``autograd.Function`` whose
backward reruns it with grad and calls ``backward`` on the result.
"""

from __future__ import annotations

import contextlib
import itertools
import warnings
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager as ContextManager
from typing import Any

from .._core.device import is_cuda_available
from .._core.state import graph_tasks as _running
from .._core.state import is_grad_enabled
from .._core.tensor import Tensor
from ..autograd.engine import _is_checkpoint_valid, backward
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.saved import Saved, saved_tensors_hooks
from ..ops import creation

__all__ = [
    "CheckpointError",
    "CheckpointFunction",
    "DefaultDeviceType",
    "GraphExecGroup",
    "check_backward_validity",
    "checkpoint",
    "checkpoint_sequential",
    "detach_variable",
    "get_device_states",
    "noop_context_fn",
    "set_checkpoint_debug_enabled",
    "set_checkpoint_early_stop",
    "set_device_states",
]

_DEFAULT_DETERMINISM_MODE = "default"
_checkpoint_debug_enabled: bool | None = None
_enable_checkpoint_early_stop: bool | None = None


class CheckpointError(RuntimeError):
    """The recomputation did not reproduce what the original forward saved."""


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None):
    """Override the ``debug`` flag of every checkpoint inside (None: defer to it)."""
    global _checkpoint_debug_enabled
    prev = _checkpoint_debug_enabled
    _checkpoint_debug_enabled = enabled
    try:
        yield
    finally:
        _checkpoint_debug_enabled = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Whether checkpoints run inside stop recomputing once they have what they need."""
    global _enable_checkpoint_early_stop
    prev = _enable_checkpoint_early_stop
    _enable_checkpoint_early_stop = enable
    try:
        yield
    finally:
        _enable_checkpoint_early_stop = prev


def noop_context_fn() -> tuple[ContextManager, ContextManager]:
    """The default ``context_fn``: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """The tensors of a tuple detached, keeping their requires_grad."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    out = []
    for inp in inputs:
        if isinstance(inp, Tensor):
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            inp = x
        out.append(inp)
    return tuple(out)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """Warn when no tensor input requires grad (the checkpoint then has no gradients)."""
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn(
            "None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2
        )


# ------------------------------------------------------------------ random state
class DefaultDeviceType:
    """The device type whose random state a checkpoint keeps when no argument is on an
    accelerator."""

    _default_device_type: str | None = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        if not DefaultDeviceType._default_device_type:
            DefaultDeviceType._default_device_type = "cuda" if is_cuda_available() else "cpu"
        return DefaultDeviceType._default_device_type


def _device_types(args) -> list[str]:
    return sorted({a.device.type for a in args if isinstance(a, Tensor)} - {"cpu"})


def get_device_states(*args) -> tuple[list[str], list[Tensor]]:
    """The random states of the (non-CPU) devices the tensor arguments live on."""
    devices = _device_types(args)
    return devices, [creation._default(d).get_state() for d in devices]


def set_device_states(devices, states, *, device_type=None) -> None:
    """Restore states from ``get_device_states``."""
    for d, s in zip(devices, states):
        creation._default(d).set_state(s)


def _rng_snapshot(args) -> tuple:
    devices, states = get_device_states(*args)
    return creation.get_rng_state(), devices, states


@contextlib.contextmanager
def _replay_rng(snapshot):
    """Run with the random state of ``snapshot``; restore the surrounding one after."""
    if snapshot is None:
        yield
        return
    cpu, devices, states = snapshot
    outer_cpu, outer = creation.get_rng_state(), [creation._default(d).get_state() for d in devices]
    creation.set_rng_state(cpu)
    set_device_states(devices, states)
    try:
        yield
    finally:
        creation.set_rng_state(outer_cpu)
        set_device_states(devices, outer)


# ------------------------------------------------------------------ use_reentrant=True
class CheckpointFunction(Function):
    """The reentrant checkpoint: forward under no_grad, backward reruns and backwards."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.rng = _rng_snapshot(args) if preserve_rng_state else None
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if not _is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with "
                ".grad() or passing an `inputs` parameter to .backward(). To resolve this "
                "error, you can either set use_reentrant=False, or call .backward() "
                "without passing the `inputs` argument."
            )
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with _replay_rng(ctx.rng):
            detached = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [
            (o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad
        ]
        if not pairs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(t.grad if isinstance(t, Tensor) else None for t in detached)


# ------------------------------------------------------------------ use_reentrant=False
_DEBUG_TIP = (
    "\nTip: To see a more detailed error message, either pass `debug=True` to\n"
    "`torch.utils.checkpoint.checkpoint(...)` or wrap the code block\n"
    "with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to\n"
    "enable checkpoint\u2011debug mode globally.\n\n"
    "If this error occurs under torch.compile with automatic_dynamic_shapes enabled,\n"
    "it may be because the recomputation selected a different compiled graph than the\n"
    "forward pass (e.g., a dynamic graph instead of the original static graph).\n"
    "To fix this, either:\n"
    "  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as\n"
    "    dynamic upfront, avoiding the static-to-dynamic transition.\n"
    "  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache\n"
    "    reordering, which can change which graph is checked first between forward\n"
    "    and recompute.\n"
    "See https://github.com/pytorch/pytorch/issues/166926 for more details and\n"
    "workaround examples.\n"
)


def _default_meta(x: Tensor) -> dict:
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_METADATA_FNS: dict[str, Callable] = {_DEFAULT_DETERMINISM_MODE: _default_meta, "none": None}


class _StopRecomputationError(Exception):
    pass


class _Handle:
    """The key of one recomputed tensor in one backward pass (cleared once unpacked)."""

    __slots__ = ("__weakref__",)


class _Holder:
    """What the region's nodes keep instead of a saved tensor."""

    __slots__ = ("handles", "__weakref__")

    def __init__(self) -> None:
        self.handles: dict = {}


_unique_ids = itertools.count(-1, -1)


class GraphExecGroup:
    """Backward calls inside one instance of this context recompute each checkpointed
    region at most once (they must not use the same saved activation twice)."""

    _current: GraphExecGroup | None = None

    def __enter__(self) -> GraphExecGroup:
        if GraphExecGroup._current is not None:
            raise RuntimeError(
                "GraphExecGroup contexts cannot be nested. Already inside group "
                f"{GraphExecGroup._current}"
            )
        GraphExecGroup._current = self
        return self

    def __exit__(self, *exc) -> None:
        GraphExecGroup._current = None

    @classmethod
    def _get_current_group(cls) -> GraphExecGroup | None:
        return cls._current


def _graph_task_id():
    """What one recomputation serves: the GraphExecGroup, else the running backward pass
    (a fresh id when a saved tensor is unpacked outside both)."""
    if GraphExecGroup._current is not None:
        return GraphExecGroup._current
    return _running[-1][2] if _running else next(_unique_ids)


class _Frame:
    """One checkpointed call: its saved inputs, the placeholders its nodes hold, and per
    backward pass the tensors the recomputation produced."""

    def __init__(self, recompute_fn, early_stop: bool, metadata_fn) -> None:
        self.recompute_fn = recompute_fn
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.saved_args: list = []
        self.weak_holders: list = []
        self.x_metadatas: list = []
        self.recomputed: defaultdict = defaultdict(weakref.WeakKeyDictionary)
        self.recomp_counter: defaultdict = defaultdict(int)
        self.is_recomputed: defaultdict = defaultdict(bool)
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, args) -> None:
        # A Saved input is packed by an enclosing checkpoint's hooks, if any (nesting).
        self.saved_args = [Saved(a, False) if isinstance(a, Tensor) else a for a in args]

    def get_inputs(self) -> list:
        return [a.unpack(None) if isinstance(a, Saved) else a for a in self.saved_args]

    def check_recomputed_tensors_match(self, gid) -> None:
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n"
                f"{_DEBUG_TIP}"
            )
        if self.metadata_fn is None:
            return
        different = []
        for idx, ref in enumerate(self.weak_holders):
            holder = ref()
            if holder is None:
                continue
            x = self.recomputed[gid][holder.handles[gid]]
            meta = self.metadata_fn(x)
            if self.x_metadatas[idx] != meta:
                different.append((idx, self.x_metadatas[idx], meta))
        if different:
            listed = "".join(
                f"tensor at position {idx}:\nsaved metadata: {saved}\nrecomputed metadata: {meta}\n"
                for idx, saved, meta in different
            )
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                f"different metadata than during the forward pass.\n{listed}.\n{_DEBUG_TIP}"
            )


def _recomputation_hooks(frame_ref, gid) -> saved_tensors_hooks:
    """While recomputing: hand each saved tensor to the placeholder it replaces."""

    def pack(x):
        x = x.detach() if x.requires_grad else x
        frame = frame_ref()
        idx = frame.recomp_counter[gid]
        frame.recomp_counter[gid] += 1
        if idx >= len(frame.weak_holders):
            if not frame.forward_completed:  # a backward inside the checkpointed forward
                frame.ignore_saved_mismatch = True
                return x
            raise CheckpointError(
                "torch.utils.checkpoint: trying to save more tensors during recomputation "
                f"than during the original forward pass.\n{_DEBUG_TIP}"
            )
        holder = frame.weak_holders[idx]()
        if holder is not None:  # else freed already by a backward pass that used it
            handle = holder.handles[gid] = _Handle()
            frame.recomputed[gid][handle] = x
        if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
            raise _StopRecomputationError
        return x

    return saved_tensors_hooks(pack, lambda x: x)


def _checkpoint_hooks(frame: _Frame) -> saved_tensors_hooks:
    """During the checkpointed forward: save a placeholder instead of each tensor."""

    def pack(x):
        holder = _Holder()
        frame.weak_holders.append(weakref.ref(holder))
        if frame.metadata_fn is not None:
            frame.x_metadatas.append(frame.metadata_fn(x))
        return holder

    def unpack(holder):
        gid = _graph_task_id()
        if not frame.is_recomputed[gid]:
            args = frame.get_inputs()
            try:
                with _recomputation_hooks(weakref.ref(frame), gid), enable_grad():
                    frame.recompute_fn(*args)
            except _StopRecomputationError:
                pass
            frame.is_recomputed[gid] = True
            frame.check_recomputed_tensors_match(gid)
        handle = holder.handles.get(gid)
        if handle is None:
            extra = (
                "Performing two backward calls that overlap (i.e. require the same saved "
                "activation in order to compute gradients) is not allowed while under the "
                "torch.utils.checkpoint.GraphExecGroup context. "
                if GraphExecGroup._current is not None
                else ""
            )
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                f"already unpacked once. {extra}If you are calling ctx.saved_tensors in "
                "backward, make sure to do so only once. Otherwise please open an issue with "
                "details on your use case."
            )
        holder.handles[gid] = None
        return frame.recomputed[gid].pop(handle)

    return saved_tensors_hooks(pack, unpack)


def _checkpoint_without_reentrant(
    fn, preserve_rng_state, context_fn, determinism_check, debug, early_stop, args, kwargs
):
    debug = _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug
    if debug and context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    if determinism_check not in _METADATA_FNS:
        raise ValueError(
            f"determinism_check should be one of {list(_METADATA_FNS)}, but got {determinism_check}"
        )
    forward_context, recompute_context = context_fn()
    snapshot = _rng_snapshot(args) if preserve_rng_state else None

    def recompute_fn(*inputs) -> None:
        with _replay_rng(snapshot), recompute_context:
            fn(*inputs, **kwargs)

    if _enable_checkpoint_early_stop is not None:
        early_stop = _enable_checkpoint_early_stop
    frame = _Frame(recompute_fn, early_stop, _METADATA_FNS[determinism_check])
    if not is_grad_enabled():
        return fn(*args, **kwargs)
    frame.save_inputs(args)
    suppressed = True
    with _checkpoint_hooks(frame), forward_context:
        ret = fn(*args, **kwargs)
        suppressed = False
    if suppressed:
        raise RuntimeError(
            "torch.utils.checkpoint: the forward context provided by context_fn suppressed an "
            "exception raised during the checkpointed forward. This is not supported because "
            "checkpoint cannot return a value for a failed forward."
        )
    frame.forward_completed = True
    return ret


# ------------------------------------------------------------------ public entry points
def checkpoint(
    function,
    *args,
    use_reentrant: bool | None = None,
    context_fn: Callable[[], tuple[ContextManager, ContextManager]] = noop_context_fn,
    determinism_check: str = _DEFAULT_DETERMINISM_MODE,
    debug: bool = False,
    early_stop: bool = True,
    **kwargs,
):
    """``function(*args, **kwargs)``, keeping only its inputs for backward and running it
    again there to get the values its backward needs."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for "
            "more details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(
        function, preserve, context_fn, determinism_check, debug, early_stop, args, kwargs
    )


def checkpoint_sequential(functions, segments: int, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (a Sequential or a list of modules/functions) one after another on
    ``input``, checkpointing all but the last of ``segments`` equal chunks."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should "
            "be passed explicitly. In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is recommended, but if you need to preserve "
            "the current default behavior, you can pass use_reentrant=True. Refer to docs for "
            "more details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))

    def run(start: int, end: int):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    from ..nn import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(
            run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve
        )
    return run(end + 1, len(functions) - 1)(input)
