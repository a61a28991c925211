"""Values a node saves for its backward: saved tensors checked against the version they
were saved at, their kinds (an output, all outputs, a list, no tensor at all), and the
saved-tensor hooks that pack and unpack them (torch.autograd.graph.saved_tensors_hooks)."""

from __future__ import annotations

import weakref

from .._core.device import device_of
from .._core.dtype import from_np, inexact
from .._core.inplace import short_name
from .._core.state import anomaly, state
from .._core.tensor import InferenceVersion, Tensor, _new
from ..ops._type_string import type_string
from ..ops.view_chains import view_replay_p

FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`."
)

_OWN = "own"  # Saved.src of a node's own output saved by a transform


class Saved:
    """A tensor saved for backward, with the version it was saved at."""

    __slots__ = ("t", "version", "is_output", "data", "nr", "src")

    def __init__(self, t: Tensor, is_output: bool):
        if isinstance(t._ver, InferenceVersion):
            raise RuntimeError(INFERENCE_SAVED)
        self.version = t._ver.v
        self.is_output = is_output
        if is_output:  # no strong reference to the output: it would keep its node alive
            self.t = t._ver
            self.data = t._data
            self.nr = t._out_nr
        else:
            self.t = t
        if _pack_stack:
            _pack(self, t)

    def unpack(self, node) -> Tensor:
        counter = self.t if self.is_output else self.t._ver
        if counter.v != self.version:
            self._raise_modified(node, counter.v)
        if not self.is_output:
            return self.t
        t = _new(Tensor)
        t._data = self.data
        t._ver = self.t
        t._base = None
        t._grad_fn = node
        t._rg = True
        if self.nr:
            t._out_nr = self.nr
        if state.modes:  # PyTorch's unpacking of an output detaches it: modes see that
            t.detach()
        return t

    def _raise_modified(self, node, current: int):
        if self.is_output:  # an integer or non-differentiable output has no history to name
            data, fn, nr = self.data, node, self.nr
            view_fn = getattr(self, "src", None)  # written in place as a view: the view's
            view_fn = view_fn and view_fn()  # node after the write, while it lives (PyTorch's)
            if view_fn is not None:
                fn, nr = view_fn, 0
            if not inexact(data.dtype) or self.nr is None:
                fn = None
            typ, shape = type_string(from_np(data.dtype), device_of(data).type), data.shape
        else:  # a transform's saved inner tensor: src is its wrapper's history
            t = self.t
            src = getattr(self, "src", None)
            if src is _OWN or type(src) is weakref.ref:
                fn, nr = node, getattr(self, "nr", 0)  # (nr: which of its outputs)
                if nr is None or not (t.dtype.is_floating_point or t.dtype.is_complex):
                    fn = None  # (an output without history: indices)
                elif src is not _OWN and src() is not None:  # written as a view: as above
                    fn, nr = src(), 0
            else:  # the history it has now (PyTorch's text names its latest writer)
                w = t if src is None else src
                # (a view written through its base is regenerated first, as PyTorch's)
                stale = w._view is not None and w._view_ver != w._ver.v and w._creation is None
                fn, nr = w._grad_fn, w._out_nr
                if stale and _returned(w):  # (regenerating it would use the escaped wrapper)
                    fn, nr = _regenerated(w), 0
                elif stale:
                    fn, nr = w.grad_fn, w._out_nr
            typ, shape = type_string(t.dtype, t.device.type), t.shape
        sizes = ", ".join(str(s) for s in shape)
        where = f", which is output {nr} of {short_name(fn)}," if fn is not None else ""
        hint = (
            "the backtrace further above shows the operation that failed to compute its "
            "gradient. The variable in question was changed in there or anywhere later. Good "
            "luck!"
            if anomaly.enabled
            else "enable anomaly detection to find the operation that failed to compute its "
            "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
        )
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{typ} [{sizes}]]{where} is at version {current}; "
            f"expected version {self.version} instead. Hint: {hint}"
        )


def _returned(t: Tensor) -> bool:
    """Whether t is a wrapper whose transform has returned (a vjp_fn called after vjp)."""
    return bool(t._level) and not t._interp.alive


def _regenerated(view: Tensor):
    """The short name of the node a stale view's grad_fn would be regenerated as (the
    chain replayed from its root, where the root has history), without regenerating it;
    else its node as it is."""
    root = view._view[0]
    if root._view is not None:
        root = root._view[0]
    if not root._rg:
        return view._grad_fn
    return short_name(view_replay_p.node_name)


class _HookedSaved(Saved):
    """A saved tensor packed by saved_tensors_hooks: ``data`` is what the pack hook
    returned, ``t`` the unpack hook, ``nr`` where the unpacked tensor's gradient goes."""

    __slots__ = ()

    def unpack(self, node) -> Tensor:
        data = self.t(self.data)
        if not isinstance(data, Tensor):
            raise TypeError(
                "Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                f"type {type(data).__name__}"
            )
        t = _new(Tensor)
        t._data = data._data
        t._ver = data._ver
        t._base = None
        if self.is_output:
            fn, nr, rg, accum = node, self.nr, True, None
        else:
            fn, nr, rg, accum = self.nr
        t._grad_fn = fn
        t._rg = rg
        if nr:
            t._out_nr = nr
        if accum is not None:
            t._accum = accum
        return t


# Default saved-tensor hooks: (pack, unpack) pairs, innermost last; the error message
# while disable_saved_tensors_hooks is active.
_pack_stack: list = []
_hooks_disabled: list = [None]


def _pack(saved: Saved, t: Tensor, hooks: tuple | None = None) -> None:
    from .grad_mode import no_grad

    pack, unpack = hooks or _pack_stack[-1]
    version = t._ver.v
    with no_grad():
        packed = pack(t)
    if t._ver.v != version:
        raise RuntimeError(
            "A saved tensor pack hook is modifying its input in place. Tensors provided as "
            "input to pack hook cannot be modified by in-place operations as this can lead to "
            "unexpected side-effects. Please open an issue if you need to perform in-place "
            "operations on the input to a pack hook."
        )
    if saved.is_output:
        saved.nr = t._out_nr
    else:
        fn = t._grad_fn
        # a leaf's AccumulateGrad, as a weak reference: the one its unpacked tensor shares
        # while the leaf's lives (else the unpacked tensor makes its own)
        accum = t._accum if fn is None and t._rg else None
        saved.nr = (fn, t._out_nr, t._rg, accum)
    saved.t = unpack
    saved.data = packed
    saved.__class__ = _HookedSaved


class SavedTensor:
    """One tensor a node saved (torch._C._autograd.SavedTensor), as
    ``grad_fn._raw_saved_<name>`` gives it."""

    __slots__ = ("_node", "_key")

    def __init__(self, node, key: str) -> None:
        self._node = node
        self._key = key

    def _saved(self, freed: str) -> Saved:
        if self._node.saved is None:
            raise RuntimeError(freed)
        key, _, k = self._key.partition(":")  # ("result:1": one of the outputs)
        saved = self._node.saved[key]
        return saved.t[int(k)] if k else saved

    def unpack(self) -> Tensor:
        t = self._saved(FREED).unpack(self._node)
        if ":" in self._key and not (t.dtype.is_floating_point or t.dtype.is_complex):
            t._grad_fn = None  # (an integer output, such as indices, has no history)
            t._rg = False
        return t

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        """Pack the saved tensor now with pack_hook; unpack_hook gives it back when used."""
        saved = self._saved(
            "Calling register_hooks on a saved tensor after it has been freed. Saved "
            "intermediate values of the graph are freed when you call .backward() or "
            "autograd.grad(). Specify retain_graph=True if you need to backward through the "
            "graph a second time or if you need to access saved variables after calling "
            "backward."
        )
        if isinstance(saved, _HookedSaved):
            raise RuntimeError(
                "Calling register_hooks on a saved tensor whose hooks have already been set. "
                "Hint: only one pair of hooks is allowed at a time."
            )
        _pack(saved, saved.unpack(self._node), (pack_hook, unpack_hook))


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Pack/unpack hooks for the tensors saved for backward by ops recorded inside."""

    def __init__(self, pack_hook, unpack_hook) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if _hooks_disabled[-1] is not None:
            raise RuntimeError(_hooks_disabled[-1])
        _pack_stack.append((self.pack_hook, self.unpack_hook))

    def __exit__(self, *exc) -> None:
        _pack_stack.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """Saved tensors kept on the CPU (where numtorch keeps them already)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(lambda t: t.detach(), lambda t: t)


class disable_saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Using saved_tensors_hooks inside raises RuntimeError(error_message)."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        if _pack_stack:
            raise RuntimeError(self.error_message)
        _hooks_disabled.append(self.error_message)

    def __exit__(self, *exc) -> None:
        _hooks_disabled.pop()

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with disable_saved_tensors_hooks(self.error_message):
                return fn(*args, **kwargs)

        return wrapper


class _SavedTuple(Saved):
    """All outputs of a multi-output op; only floating ones carry the node."""

    __slots__ = ()

    def __init__(self, outs, ndiff: int):
        self.t = [Saved(o, True) for o in outs]
        for s in self.t[ndiff:]:
            s.nr = None  # (not differentiable: no node's output)
        self.is_output = True

    def unpack(self, node):
        return _Outputs(self.t, node)


class _SavedInnerOutputs(Saved):
    """All inner outputs of a multi-output op that a transform's node saved (one level
    down), each version-checked where a formula reads it, as ``_SavedTuple``'s."""

    __slots__ = ()

    def __init__(self, outs, ndiff: int):
        self.t = []
        for i, o in enumerate(outs):
            s = Saved(o, False)
            s.src, s.nr = _OWN, i if i < ndiff else None  # (None: no node's output)
            self.t.append(s)
        self.is_output = False

    def unpack(self, node):
        return _Outputs(self.t, node)


class _Outputs(tuple):
    """The outputs a node saved, each unpacked (and its version checked) when a formula
    reads it: a formula that reads only the indices of (values, indices) does not fail
    after an in-place write into the values, as in PyTorch (which saves only those)."""

    __slots__ = ()

    def __new__(cls, saved, node):
        return super().__new__(cls, [(s, node) for s in saved])

    def __getitem__(self, k):
        if isinstance(k, slice):
            return tuple(self[i] for i in range(*k.indices(len(self))))
        s, node = super().__getitem__(k)
        t = s.unpack(node)
        if s.is_output and not (t.dtype.is_floating_point or t.dtype.is_complex):
            t._grad_fn = None
            t._rg = False
        return t

    def __iter__(self):
        return (self[i] for i in range(len(self)))


class _SavedList(Saved):
    __slots__ = ()

    def __init__(self, ts):
        self.t = [Saved(t, False) if isinstance(t, Tensor) else t for t in ts]
        self.is_output = False

    def unpack(self, node):
        return [s.unpack(node) if isinstance(s, Saved) else s for s in self.t]


class SavedValues(dict):
    """What a node saved when none of it is a tensor (shapes, numbers): a backward pass that
    does not retain the graph frees saved tensors only, so such a node runs again (PyTorch
    releases its SavedVariables and keeps the rest, e.g. SumBackward0's sizes)."""

    __slots__ = ()


def release(node) -> None:
    """Free what a node saved, as a non-retaining backward pass does: its saved tensors (a
    later use raises FREED); saved shapes and numbers alone stay."""
    if node.saved and type(node.saved) is not SavedValues:
        node.saved = None
