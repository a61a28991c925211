"""Nodes of the eager tape: one per recorded op call, plus AccumulateGrad for leaves."""

from __future__ import annotations

import heapq
import itertools
import threading
import weakref
from typing import NamedTuple

from .._core import upcalls
from .._core.device import CPU, _cuda_used, device_of
from .._core.dispatch import INTERNAL_OVERLAP, internal_overlap
from .._core.dtype import from_np
from .._core.inplace import _array, short_name
from .._core.op import default_node_name
from .._core.state import anomaly
from .._core.state import graph_tasks as _running
from .._core.tensor import Tensor, _new
from ..ops.creation import zeros, zeros_like
from ..ops.views import apply_chain, dim_order, like_root, view_scatter
from . import anomaly_mode
from .grad_mode import _Mode

_seq = itertools.count()
_ACCUMULATE_SEQ = 1 << 62  # leaves accumulate as soon as they are ready
UINT64_MAX = (1 << 64) - 1  # what PyTorch reports as an AccumulateGrad's sequence number

FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


class Node:
    """A backward function (torch.autograd.graph.Node)."""

    __slots__ = (
        "op", "attrs", "saved", "next_functions", "_seq", "in_meta", "_out_meta", "__weakref__",
        "__dict__",
    )  # fmt: skip
    # Rarely set; kept out of the slots so that recording a node stays cheap.
    _metadata = None
    _pre_hooks = None
    _post_hooks = None
    _tensor_pre_hooks = None
    _retain_hooks = None
    _hooked = False  # set once a tensor hook or retain_grad lives on this node
    _any_hooks = False  # set once any hook is registered on or through this node
    _compiler = None  # numtorch.compile's compiler for a backward pass from this output
    _device = None  # a non-CPU device the engine found for the node's first output
    _lazy = False  # True for a class whose name depends on the call (see _resolve_name)
    _name = "Node"  # PyTorch's name of the node (the class name, less a "torch::autograd::")
    _fits = True  # apply sums and casts each gradient to its input (else the engine does)
    _opaque = False  # compiled autograd calls it as it is (numtorch.compile's node)

    def __init__(self):
        self._seq = next(_seq)
        self.saved = None

    def name(self) -> str:
        return self._name

    def __getattr__(self, attr: str):
        """``_saved_<name>`` / ``_raw_saved_<name>``: what the node saved, by PyTorch's names."""
        if attr.startswith("_saved_"):
            return _saved_value(self, attr[7:])
        if attr.startswith("_raw_saved_"):
            op = getattr(self, "op", None)  # (none on an AccumulateGrad)
            key = None if op is None else _saved_names(op).get(attr[11:])
            if key is not None and key in _tensor_keys(self):
                return SavedTensor(self, key)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")

    def __dir__(self):
        names = list(super().__dir__())
        if getattr(self, "op", None) is not None:
            table = _saved_names(self.op)
            names += ["_saved_" + n for n in table]
            tensors = _tensor_keys(self)
            names += ["_raw_saved_" + n for n, k in table.items() if k in tensors]
        return names

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def _sequence_nr(self) -> int:
        return self._seq

    def _set_sequence_nr(self, n: int) -> None:
        self._seq = n

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) -> new grad_inputs or None, after the node runs."""
        if self._post_hooks is None:
            self._post_hooks = []
            self._any_hooks = True
        return _Handle(self._post_hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) -> new grad_outputs or None, before the node runs."""
        if self._pre_hooks is None:
            self._pre_hooks = []
            self._any_hooks = True
        return _Handle(self._pre_hooks, fn)

    @property
    def num_outputs(self) -> int:
        return len(self._out_meta)

    @property
    def _input_metadata(self) -> tuple:
        """Shape, dtype and device of each gradient this node takes (one per forward
        output), as torch's ``grad_fn._input_metadata``."""
        return tuple(
            _InputMetadata(shape, from_np(dt), _node_device(self)) for shape, dt in self._out_meta
        )

    def apply(self, grads: list, wanted) -> list:
        """Input gradients (flattened, one per edge) from output gradients, each summed to
        its input's shape and cast to its dtype; computes only the ``wanted`` ones."""
        op = self.op
        if op.ndiff == 1:
            g = grads[0] if grads[0] is not None else _zeros_for(self, 0)
        elif op.undefined_grads:
            g = tuple(grads)
        else:
            like = next((x for x in grads if x is not None), None)  # the device to use
            g = tuple(
                g if g is not None else _zeros_for(self, i, like) for i, g in enumerate(grads)
            )
        saved = self.saved
        if saved is None:
            raise RuntimeError(FREED)
        attrs = self.attrs
        meta = self.in_meta
        env = None  # values fetched so far, each unpacked once
        out = []
        j = 0  # the edge the next gradient is for
        for i, fn, names, is_list in _PLANS.get(op) or _plan(op):
            if is_list:
                n = len(meta[i])
            elif meta[i] is None and not op.number_edges:
                continue  # a number operand has no edge
            else:
                n = 1
            if not (wanted[j] if n == 1 else any(wanted[j : j + n])):
                out.extend([None] * n)
                j += n
                continue
            if names is None:  # the formula needs g alone
                r = fn(g=g)
            else:
                if env is None:
                    env = {"g": g}
                kw = {}
                for k in names:
                    v = env.get(k, env)
                    if v is env:
                        v = saved[k] if k in saved else attrs[k]
                        if isinstance(v, Saved):
                            v = v.unpack(self)
                        env[k] = v
                    kw[k] = v
                r = fn(**kw)
            if is_list:
                out.extend(_fit(x, m) for x, m in zip(r, meta[i]))
            else:
                m = meta[i]
                if m is not None and r is not None:
                    d = r._data if type(r) is Tensor else None
                    if d is None or d.shape != m[0] or d.dtype != m[1]:
                        r = _fit(r, m)
                out.append(r)
            j += n
        return out

    def _edge_meta(self) -> list:
        """(shape, dtype) of the input behind each edge, in ``next_functions`` order."""
        op = self.op
        meta = self.in_meta
        if op.recorder is not None:  # the op built its node: an edge per input, lists flattened
            return [m for i, x in enumerate(meta) for m in (x if i in op.list_inputs else (x,))]
        if op.dense and (op.number_edges or None not in meta):
            return meta
        out = []
        for i, fn in enumerate(op.vjps):
            if fn is None:
                continue
            m = meta[i]
            if i in op.list_inputs:
                out.extend(m)
            elif m is not None or op.number_edges:
                out.append(m)
        return out


class _Handle:
    """A removable hook handle."""

    _ids = itertools.count()

    def __init__(self, container, fn, key=None):
        self.id = next(self._ids)
        self._container = container
        self._key = key
        self._fn = fn
        if isinstance(container, dict):
            container.setdefault(key, []).append(fn)
        else:
            container.append(fn)

    def remove(self) -> None:
        c = self._container[self._key] if isinstance(self._container, dict) else self._container
        if self._fn in c:
            c.remove(self._fn)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


RemovableHandle = _Handle


_PLANS: dict = {}


def _plan(op) -> tuple:
    """(input index, vjp formula, the names it needs besides g or None, list input?) per
    differentiable input of op, made once."""
    plan = _PLANS.get(op)
    if plan is None:
        plan = _PLANS[op] = tuple(
            (i, fn, None if names == ("g",) else names, i in op.list_inputs)
            for i, (fn, names) in enumerate(zip(op.vjps, op.vjp_args))
            if fn is not None
        )
    return plan


def _fit(g, meta):
    """A gradient summed to its input's shape and cast to its dtype (``meta``)."""
    if g is None or meta is None:
        return g
    shape, dtype = meta[0], meta[1]
    if type(g) is Tensor:
        gshape, gdtype = g._data.shape, g._data.dtype
    else:  # a transform's wrapper: its logical shape
        gshape, gdtype = tuple(g.shape), g.dtype.np
    if gshape != shape:
        from ..ops.reduction import sum_to_size

        g = sum_to_size.fn(g, shape)
    if gdtype != dtype:
        g = g.to(from_np(dtype))
    return g


def _zeros_for(node: Node, i: int, like=None):
    """The zero gradient of output i (on ``like``'s device, the other gradients')."""
    shape, dtype = node._out_meta[i]
    if like is None or not _cuda_used[0]:
        return zeros(shape, dtype=from_np(dtype))
    return zeros(shape, dtype=from_np(dtype), device=like.device)


_OWN = "own"  # Saved.src of a node's own output saved by a transform


class Saved:
    """A tensor saved for backward, with the version it was saved at."""

    __slots__ = ("t", "version", "is_output", "data", "nr", "src")

    def __init__(self, t: Tensor, is_output: bool):
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

    def unpack(self, node: Node) -> Tensor:
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
        return t

    def _raise_modified(self, node: Node, current: int):
        if self.is_output:  # an integer output (indices) has no history to name
            data, fn, nr = self.data, node, self.nr
            view_fn = getattr(self, "src", None)  # written in place as a view: the view's
            view_fn = view_fn and view_fn()  # node after the write, while it lives (PyTorch's)
            if view_fn is not None:
                fn, nr = view_fn, 0
            if data.dtype.kind not in "fc":
                fn = None
            typ, shape = from_np(data.dtype).scalar_name, data.shape
        else:  # a transform's saved inner tensor: src is its wrapper's history
            t = self.t
            src = getattr(self, "src", None)
            if src is _OWN:
                fn, nr = node, 0
            else:  # the history it has now (PyTorch's text names its latest writer)
                w = t if src is None else src
                # (a view written through its base is regenerated first, as PyTorch's)
                stale = w._view is not None and w._view_ver != w._ver.v and w._creation is None
                fn, nr = w.grad_fn if stale else w._grad_fn, w._out_nr
            typ, shape = t.dtype.scalar_name, t.shape
        typ = f"{typ}Tensor"
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
            f"inplace operation: [torch.{typ} [{sizes}]]{where} is at version {current}; "
            f"expected version {self.version} instead. Hint: {hint}"
        )


class _HookedSaved(Saved):
    """A saved tensor packed by saved_tensors_hooks: ``data`` is what the pack hook
    returned, ``t`` the unpack hook, ``nr`` where the unpacked tensor's gradient goes."""

    __slots__ = ()

    def unpack(self, node: Node) -> Tensor:
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
        accum = accumulate_node(t) if fn is None and t._rg else None
        saved.nr = (fn, t._out_nr, t._rg, weakref.ref(accum) if accum is not None else None)
    saved.t = unpack
    saved.data = packed
    saved.__class__ = _HookedSaved


class SavedTensor:
    """One tensor a node saved (torch._C._autograd.SavedTensor), as
    ``grad_fn._raw_saved_<name>`` gives it."""

    __slots__ = ("_node", "_key")

    def __init__(self, node: Node, key: str) -> None:
        self._node = node
        self._key = key

    def _saved(self, freed: str) -> Saved:
        if self._node.saved is None:
            raise RuntimeError(freed)
        return self._node.saved[self._key]

    def unpack(self) -> Tensor:
        return self._saved(FREED).unpack(self._node)

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


class AccumulateGrad(Node):
    """The sink of a leaf tensor: adds incoming gradients into ``variable.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor):
        self._seq = _ACCUMULATE_SEQ
        self.saved = None
        self.variable = variable
        self.next_functions = ()
        if anomaly.enabled:
            anomaly_mode.store(self)

    _name = "torch::autograd::AccumulateGrad"

    def _sequence_nr(self) -> int:
        return UINT64_MAX  # as PyTorch reports it; the engine still runs leaves first

    _out_meta = (None,)  # one gradient, the variable's

    @property
    def _input_metadata(self) -> tuple:
        v = self.variable
        return (_InputMetadata(v.shape, v.dtype, v.device),)


class _InputMetadata:
    """What the engine knows of one gradient a node takes (torch._C._autograd._InputMetadata)."""

    __slots__ = ("shape", "dtype", "device")
    is_nested_tensor = False
    is_cpp_nested_tensor = False

    def __init__(self, shape, dtype, device) -> None:
        self.shape = list(shape)
        self.dtype = dtype
        self.device = device

    def __repr__(self) -> str:
        return f"_InputMetadata(shape={self.shape}, dtype={self.dtype}, device={self.device})"


def _node_device(node: Node):
    """The device of a node's outputs: the CPU unless a device array shows otherwise."""
    if node._device is not None:
        return node._device
    if _cuda_used[0] and node.saved:
        for v in node.saved.values():
            if type(v) is Saved:  # a saved output keeps its array, an input its tensor
                return device_of(v.data) if v.is_output else v.t.device
    return CPU


class CopySlices(Node):
    """The history of a base after an in-place op on one of its views (PyTorch's
    CopySlices): edges to the base's previous history and to the in-place op's other
    inputs; the op's gradient for its self lands in the view's region of the base's."""

    __slots__ = ("fn", "chain", "order")
    _name = "torch::autograd::CopySlices"

    @property
    def saved(self):  # the wrapped node's: freed with it, and the freed-graph error
        return self.fn.saved

    @saved.setter
    def saved(self, value) -> None:
        self.fn.saved = value

    def apply(self, grads: list, wanted) -> list:
        g = grads[0] if grads[0] is not None else _zeros_for(self, 0)
        g = like_root(g, self.order)  # the chain replays on the base's layout
        fn, chain = self.fn, self.chain
        region = apply_chain(g, chain)
        if 0 in _array(region).strides and internal_overlap(_array(region)):
            # a write through an expanded view: PyTorch's copy into the region is refused
            raise RuntimeError(INTERNAL_OVERLAP)
        res = fn.apply([region], wanted)
        if wanted[0]:
            own = res[0]
            if own is None:
                own = zeros_like(region)
            elif tuple(own.shape) != tuple(region.shape):
                own = own.sum_to_size(region.shape)
            res[0] = view_scatter.fn(g, own, chain, self.order)
        return res

    def _edge_meta(self) -> list:
        return [self._out_meta[0], *self.fn._edge_meta()[1:]]


def copy_slices(root: Tensor, fn: Node, chain: tuple) -> CopySlices:
    """A CopySlices node for ``fn`` (the in-place op's node, whose input 0 was the view)
    writing into ``root`` through the view ``chain``."""
    node = _new(CopySlices)
    node._seq = next(_seq)
    node.op = fn.op
    node.attrs = {"chain": chain}
    node.fn = fn
    node.chain = chain
    node.order = dim_order(root)
    node.next_functions = (_edge(root) if root._rg else _NO_EDGE, *fn.next_functions[1:])
    fn.next_functions = (_NO_EDGE, *fn.next_functions[1:])  # (the view's old node may go)
    node.in_meta = None
    node._out_meta = ((root._data.shape, root._data.dtype),)
    if anomaly.enabled:
        anomaly_mode.store(node)
    return node


def accumulate_node(t: Tensor) -> AccumulateGrad:
    ref = t._accum
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(t)
        t._accum = weakref.ref(node)
    return node


def edge_of(t: Tensor):
    """The (node, output_nr) a gradient for t flows into, or (None, 0)."""
    if not t._rg:
        return (None, 0)
    fn = t.grad_fn
    if fn is None:
        return (accumulate_node(t), 0)
    return (fn, t._out_nr)


class GradientEdge(NamedTuple):
    """Where the gradient of a tensor is computed: ``(node, output_nr)``."""

    node: Node
    output_nr: int
    ownership_token: Node | None = None


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The GradientEdge of ``tensor``; ``grad(loss, get_gradient_edge(x))`` is ``grad(loss, x)``."""
    if not tensor._rg:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients"
        )
    node, nr = edge_of(tensor)
    return GradientEdge(node, nr)


_task_ids = itertools.count()


def current_autograd_node() -> Node | None:
    """The node whose backward runs now (torch._C._current_autograd_node), else None."""
    return _running[-1][0].current if _running else None


def current_graph_task_id() -> int:
    """The id of the graph task running now (torch._C._current_graph_task_id), else -1."""
    return _running[-1][2] if _running else -1


def will_engine_execute_node(node) -> bool:
    """Whether the running graph task will execute ``node``
    (torch._C._will_engine_execute_node)."""
    if not isinstance(node, Node):
        raise RuntimeError(
            f"_will_engine_execute_node expects an grad_fn, but got {type(node).__name__}"
        )
    if not _running:
        raise RuntimeError(
            "_get_should_execute_nodes should only be called during the backward pass"
        )
    task, roots, _ = _running[-1]
    # PyTorch's nodes_in_graph: reached by an edge, or a root under its several-roots node
    if node not in task.deps and not (len(roots) > 1 and any(node is n for n, _ in roots)):
        return False
    if task.exec_info is None:
        return True
    if node not in task.exec_info and node not in task.targets:
        return False
    if not node.next_functions and node in task.captures:
        raise RuntimeError(
            "A leaf node was passed to _will_engine_execute_node but we are currently running "
            "autograd.grad(). This is currently not supported."
        )
    return True


def current_graph_task_execution_order() -> list:
    """The nodes the running graph task executes, in the engine's order
    (torch._C._current_graph_task_execution_order)."""
    if not _running:
        raise RuntimeError(
            "_current_graph_task_execution_order should only be called during the backward pass"
        )
    if _multithreading.enabled:
        raise RuntimeError(
            "get_current_graph_task_execution_order expects the current backward to be executed "
            "with multithreading disabled, e.g. by running:\n\n>>> with "
            "torch.autograd.set_multithreading_enabled(False):\n...     torch.autograd.grad(...)\n"
        )
    task, roots, _ = _running[-1]
    info, targets = task.exec_info, task.targets
    # the dependency counts as the task began (the task's own are consumed as it runs)
    deps: dict = {}
    nodes = list(dict.fromkeys(n for n, _ in roots if n is not None))
    stack, seen = list(nodes), set(nodes)
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is not None:
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
    heap, counter, out = [], itertools.count(), []
    for n in nodes:
        if not deps.get(n):
            heapq.heappush(heap, (-n._seq, next(counter), n))
    while heap:
        node = heapq.heappop(heap)[2]
        out.append(node)
        for nxt, _ in node.next_functions:
            if nxt is None or (info is not None and nxt not in info and nxt not in targets):
                continue
            deps[nxt] -= 1
            if deps[nxt] == 0:
                heapq.heappush(heap, (-nxt._seq, next(counter), nxt))
    return out


class _Multithreading(threading.local):
    enabled = True


_multithreading = _Multithreading()


def is_multithreading_enabled() -> bool:
    return _multithreading.enabled


def _set_multithreading_enabled(mode: bool) -> None:
    _multithreading.enabled = bool(mode)


class set_multithreading_enabled(_Mode):  # noqa: N801 - PyTorch's name
    """Enable or disable multithreaded backward, now or for a with-block (thread-local).
    numtorch's engine runs on the calling thread either way; the flag is recorded."""

    def __init__(self, mode: bool) -> None:
        self.prev = _multithreading.enabled
        _multithreading.enabled = bool(mode)
        self.mode = mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _multithreading.enabled = self.prev

    def clone(self) -> set_multithreading_enabled:
        return self.__class__(self.mode)


def _will_execute(node) -> bool:
    """Whether the innermost running graph task runs ``node`` (for multi-grad hooks)."""
    task, roots, _ = _running[-1]
    if node not in task.deps and all(node is not n for n, _ in roots):
        return False
    return task.exec_info is None or node in task.exec_info or node in task.targets


class _MultiHandle(_Handle):
    def __init__(self, handles: tuple) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


def register_multi_grad_hook(tensors, fn, *, mode: str = "all") -> RemovableHandle:
    """fn(grads) once the gradients of all ``tensors`` this backward computes are ready
    (mode "all", None for the others), or fn(grad) on the first one (mode "any")."""
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    lock = threading.Lock()
    if mode == "all":
        nodes = [edge_of(t)[0] for t in tensors]
        state: dict = {}  # graph task -> [calls so far, calls expected, buffer]

        def inner(idx):
            def hook(grad):
                task = _running[-1][2]
                with lock:
                    st = state.get(task)
                    if st is None:
                        expected = sum(n is not None and _will_execute(n) for n in nodes)
                        st = state[task] = [0, expected, [None] * len(nodes)]
                    st[0] += 1
                    st[2][idx] = grad
                    done = st[0] == st[1]
                    if done:
                        del state[task]
                if done:
                    fn(st[2])

            return hook

        handles = tuple(t.register_hook(inner(i)) for i, t in enumerate(tensors))
    else:
        ran: set = set()

        def hook(grad):
            task = _running[-1][2]
            with lock:
                if task in ran:
                    return
                ran.add(task)
            fn(grad)

        handles = tuple(t.register_hook(hook) for t in tensors if t._rg)
    return _MultiHandle(handles)


# ------------------------------------------------------------------ node classes
_CLASSES: dict = {}


def node_class(name: str) -> type:
    """The Node subclass for PyTorch's node name ``name`` (one per name, made once); a
    ``torch::autograd::X`` name gives a class named ``X``."""
    cls = _CLASSES.get(name)
    if cls is None:
        cls = type(name.rsplit("::", 1)[-1], (Node,), {"__slots__": (), "_name": name})
        cls.__module__ = "torch.autograd.graph"
        _CLASSES[name] = cls
    return cls


def _node_cls(op) -> type:
    """The class op's nodes are made of, cached on the op: its named class, or for a name
    that depends on the call, a class that finds its name (and final class) on first use."""
    if callable(op.node_name):
        default = default_node_name(op.name)
        cls = type(default, (Node,), {"__slots__": (), "_lazy": True, "name": _resolve_name})
        cls.__module__ = "torch.autograd.graph"
    else:
        cls = node_class(op.node_name or default_node_name(op.name))
    op.node_cls = cls
    return cls


def _resolve_name(self: Node) -> str:
    """A call-dependent name: op.node_name applied to the call (see ``_name_env``); the node
    then becomes an instance of that name's class."""
    fn = self.op.node_name
    name = fn(**_name_env(self, fn))
    self.__class__ = node_class(name)
    return name


def _name_params(fn) -> tuple:
    import inspect

    params = fn.__dict__.get("_params")
    if params is None:
        params = fn._params = tuple(inspect.signature(fn).parameters)
    return params


def _name_env(node: Node, fn) -> dict:
    """The values a node_name function names: attributes by name, inputs by name (a
    tensor input as its shape, a list input as a list of shapes, a number as None), and
    ``<input>_contiguous``: whether it was C-contiguous."""
    params = _name_params(fn)
    op = node.op
    defaults = {n: d for n, d, _ in op.attrs}
    env = {}
    for n in params:
        if n.endswith("_contiguous") and n[:-11] in op.inputs:
            m = node.in_meta[op.inputs.index(n[:-11])]
            env[n] = m is None or len(m) < 3 or m[2]
        elif n in op.inputs:
            m = node.in_meta[op.inputs.index(n)]
            if isinstance(m, list):
                env[n] = [None if x is None else tuple(x[0]) for x in m]
            else:
                env[n] = None if m is None else tuple(m[0])
        else:
            env[n] = node.attrs.get(n, defaults.get(n))
    return env


# ------------------------------------------------------------------ saved values by PyTorch's names
_SAVED_NAMES: dict = {}
# PyTorch's names for inputs where the rule (``input``, ``x`` and ``a`` are PyTorch's
# ``self``, ``b`` its ``other``, other names the same) does not give them:
# {op name: {numtorch name (an input or attribute): PyTorch name}}.
SAVED_NAME_EXCEPTIONS: dict = {
    "matmul": {"other": "mat2"},  # as mm, matmul's common case
    "dot": {"other": "tensor"},
    "getitem": {"shape": "self_sym_sizes"},
}
_INPUT_NAMES = {"input": "self", "x": "self", "a": "self", "b": "other"}


def _torch_input_name(op, name: str) -> str:
    special = SAVED_NAME_EXCEPTIONS.get(op.name)
    if special and name in special:
        return special[name]
    return _INPUT_NAMES.get(name, name)


def _saved_names(op) -> dict:
    """{PyTorch's saved name: numtorch's key} for what op's nodes save: the result, inputs,
    the attributes its formulas name, and ``<input>_sym_sizes`` for every input whose shape
    or value is saved (derivable from the input's metadata)."""
    table = _SAVED_NAMES.get(op)
    if table is None:
        table = {}
        attr_names = {a[0] for a in op.attrs}
        for args in op.vjp_args:
            for n in args:
                if n == "g":
                    continue
                if n == "result":
                    table["result"] = n
                elif n in attr_names:
                    table[SAVED_NAME_EXCEPTIONS.get(op.name, {}).get(n, n)] = n
                elif n in op.inputs:
                    t = _torch_input_name(op, n)
                    table[t] = n
                    table.setdefault(t + "_sym_sizes", n + "_shape")
                elif n.endswith("_shape"):
                    table[_torch_input_name(op, n[:-6]) + "_sym_sizes"] = n
        _SAVED_NAMES[op] = table
    return table


def _tensor_keys(node: Node) -> set:
    saved = node.saved
    if not saved:
        return set()
    return {k for k, v in saved.items() if isinstance(v, Saved) and not isinstance(v, _SavedList)}


def _saved_value(node: Node, torch_name: str):
    op = getattr(node, "op", None)
    key = None if op is None else _saved_names(op).get(torch_name)
    if key is None:
        raise AttributeError(
            f"'{type(node).__name__}' object has no attribute '_saved_{torch_name}'"
        )
    if key.endswith("_shape") and key not in op.inputs:  # sizes outlive the saved tensors
        m = node.in_meta[op.inputs.index(key[:-6])]
        if isinstance(m, list):
            return [None if x is None else tuple(x[0]) for x in m]
        return None if m is None else tuple(m[0])
    if key in node.attrs or key in {a[0] for a in op.attrs}:
        return node.attrs.get(key, {a[0]: a[1] for a in op.attrs}.get(key))
    saved = node.saved
    if saved is None:
        raise RuntimeError(FREED)
    if key not in saved:  # an input that needed no gradient was not saved
        return None
    v = saved[key]
    if isinstance(v, Saved):
        return v.unpack(node)
    return v


def _edge(t: Tensor):
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._out_nr)
    return (accumulate_node(t), 0)


_NO_EDGE = (None, 0)
_NOTHING_SAVED: dict = {}  # shared by the nodes that save nothing: never written to


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


def _add_names(names: dict | None, more) -> dict:
    """The names a node saves, in a fixed order (a dict as an ordered set): packing hooks
    see the same sequence in every run."""
    if names is None:
        return dict.fromkeys(more)
    names.update(dict.fromkeys(more))
    return names


def record(op, args: tuple, attrs: dict, outputs, inner=None) -> None:
    """Attach a node computing op's vjp to its outputs.

    At level 0 the node saves the arguments and outputs themselves. A grad level passes
    ``inner = (inner_args, inner_outputs)``: the node saves those (one level down), so its
    formulas run on them and record at the lower levels.

    As in PyTorch, a node has an edge per differentiable tensor input (``(None, 0)`` when
    that input needs no gradient) and none for non-differentiable inputs or numbers
    (but for ``op.number_edges`` ops, where a number stands for a wrapped 0-d tensor).
    """
    if op.recorder is not None:  # the op builds its own node (autograd.Function's ctx)
        return op.recorder(args, attrs, outputs, inner)
    node = _new(op.node_cls or _node_cls(op))
    node._seq = next(_seq)
    node.op = op
    node.attrs = attrs
    if inner is None and not op.list_inputs:
        names = _link_inputs(node, op, args)
    else:
        names = _link_inputs_general(node, op, args, inner)
    if op.nout == 1:
        m = (outputs._data.shape, outputs._data.dtype) if not outputs._level else _meta(outputs)
        if m[1].kind in "fc":
            outputs._grad_fn = node
            outputs._rg = True
        elif not op.conversion and _any_requires_grad(args):
            # PyTorch refuses a non-float result of a node (a conversion's, or a copy_ into
            # an integer tensor's, just leaves autograd)
            raise RuntimeError(f"Autograd not support dtype: {from_np(m[1]).scalar_name}")
        node._out_meta = (m,)
    else:
        out_meta = []
        for k, o in enumerate(outputs[: op.ndiff]):
            m = (o._data.shape, o._data.dtype) if not o._level else _meta(o)
            out_meta.append(m)
            if m[1].kind in "fc":
                o._grad_fn = node
                o._rg = True
                if k:
                    o._out_nr = k
        node._out_meta = tuple(out_meta)
    node.saved = _save(op, names, args, outputs, inner) if names else _NOTHING_SAVED
    if anomaly.enabled:
        anomaly_mode.store(node)


def _any_requires_grad(args) -> bool:
    return any(
        _any_requires_grad(a) if isinstance(a, (list, tuple)) else isinstance(a, Tensor) and a._rg
        for a in args
    )


def _link_inputs(node: Node, op, args: tuple) -> dict | None:
    """Edges and input metadata of a level-0 node with no list inputs (the common case);
    returns the names to save."""
    link = _LINKERS.get(op)
    if link is None:
        link = _LINKERS[op] = _make_linker(op)
    return link(node, args)


_LINKERS: dict = {}


def _make_linker(op):
    """``_link_inputs`` unrolled for op's inputs (generated once per op: recording is the
    hottest path there is, and a loop over the inputs costs a third of it)."""
    n = len(op.vjps)
    named = callable(op.node_name) and _name_params(op.node_name)
    lines = ["def link(node, args):", f"    {''.join(f'a{i}, ' for i in range(n))}= args"]
    lines.append("    names = None\n    skipped = False")
    for i, (f, save) in enumerate(zip(op.vjps, op.saves)):
        a = f"a{i}"
        lines += [
            f"    if isinstance({a}, Tensor):",
            f"        if {a}._level:",
            f"            m{i} = _meta({a})",
            "        else:",
            f"            d = {a}._data",
            # (a name that depends on an input's layout: its C-contiguity too)
            f"            m{i} = (d.shape, d.dtype, d.flags.c_contiguous)"
            if named and f"{op.inputs[i]}_contiguous" in named
            else f"            m{i} = (d.shape, d.dtype)",
        ]
        if f is not None:
            lines += [
                f"        if {a}._rg:",
                f"            fn = {a}._grad_fn",
                f"            e{i} = (fn, {a}._out_nr) if fn is not None else (_acc({a}), 0)",
            ]
            if save:
                lines.append(f"            names = _add_names(names, {tuple(save)!r})")
            lines += ["        else:", f"            e{i} = _NO_EDGE"]
        lines += ["    else:", f"        m{i} = None"]
        if f is not None:
            if op.number_edges:
                lines.append(f"        e{i} = _NO_EDGE")
            else:
                lines += [f"        e{i} = _SKIP", "        skipped = True"]
    edges = "".join(f"e{i}, " for i, f in enumerate(op.vjps) if f is not None)
    lines += [
        f"    edges = ({edges})",
        "    node.next_functions = edges if not skipped else tuple(e for e in edges if e is not _SKIP)",
        f"    node.in_meta = [{', '.join(f'm{i}' for i in range(n))}]",
        "    return names",
    ]
    env = {
        "Tensor": Tensor, "_meta": _meta, "_acc": accumulate_node, "_add_names": _add_names,
        "_NO_EDGE": _NO_EDGE, "_SKIP": _SKIP,
    }  # fmt: skip
    exec("\n".join(lines), env)
    return env["link"]


_SKIP = object()  # an input with no edge (a number, where PyTorch has no wrapped tensor)


def _link_inputs_general(node: Node, op, args: tuple, inner) -> dict | None:
    """Edges and input metadata with list inputs, or on a grad level (where only this
    level's tensors, those unwrapping changes, have edges); returns the names to save."""
    edges, meta = [], []
    names = None
    lists = op.list_inputs
    saves = op.saves
    own = args if inner is None else inner[0]
    i = 0
    for a, f, ia in zip(args, op.vjps, own):
        if i in lists:
            if f is not None:
                sub = [
                    _edge(t)
                    if isinstance(t, Tensor) and t._rg and (inner is None or t is not it)
                    else _NO_EDGE
                    for t, it in zip(a, ia)
                ]
                edges.extend(sub)
                if saves[i] and any(e[0] is not None for e in sub):
                    names = _add_names(names, saves[i])
            meta.append([_meta(t) for t in a])
        elif isinstance(a, Tensor):
            meta.append((a._data.shape, a._data.dtype) if not a._level else _meta(a))
            if f is not None:
                if a._rg and (inner is None or a is not ia):
                    edges.append(_edge(a))
                    if saves[i]:
                        names = _add_names(names, saves[i])
                else:
                    edges.append(_NO_EDGE)
        else:
            meta.append(None)
            if f is not None and op.number_edges:
                edges.append(_NO_EDGE)
        i += 1
    node.next_functions = tuple(edges)
    node.in_meta = meta
    return names


def _save(op, names: dict, args: tuple, outputs, inner) -> dict:
    """What a node keeps for its formulas: saved tensors (version-checked), shapes, values."""
    saved = {}
    tensors = False
    outer = args
    if inner is not None:
        args, outputs = inner
    for n in names:
        if n == "result":
            tensors = True
            if inner is not None or _is_wrapped(outputs):
                # inner outputs hold no reference to this node; a transform's wrapper
                # (a dual tensor) has no storage to save apart from itself
                if op.nout == 1:
                    s = saved[n] = Saved(outputs, False)
                    s.src = _OWN
                else:
                    saved[n] = outputs
            else:
                saved[n] = Saved(outputs, True) if op.nout == 1 else _SavedTuple(outputs)
            continue
        if n.endswith("_shape") and n not in op.inputs:
            v = args[op.inputs.index(n[:-6])]
            saved[n] = [t.shape for t in v] if isinstance(v, (list, tuple)) else v.shape
            continue
        k = op.inputs.index(n)
        v = args[k]
        if isinstance(v, Tensor):
            s = saved[n] = Saved(v, False)
            if inner is not None and isinstance(outer[k], Tensor):  # for its error's text
                s.src = outer[k]
            tensors = True
        elif isinstance(v, (list, tuple)) and any(isinstance(x, Tensor) for x in v):
            saved[n] = _SavedList(v)
            tensors = True
        else:
            saved[n] = v
    return saved if tensors else SavedValues(saved)


def _is_wrapped(outputs) -> bool:
    first = outputs if isinstance(outputs, Tensor) else outputs[0]
    return bool(first._level)


class _SavedTuple(Saved):
    """All outputs of a multi-output op; only floating ones carry the node."""

    __slots__ = ()

    def __init__(self, outs):
        self.t = [Saved(o, True) for o in outs]
        self.is_output = True

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
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
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


def _meta(a):
    """(shape, numpy dtype) of a tensor argument; a wrapper's logical ones."""
    if isinstance(a, Tensor):
        if a._level:
            return (tuple(a.shape), a.dtype.np)
        return (a._data.shape, a._data.dtype)
    return None


upcalls.provide(record=record)
