"""Nodes of the eager tape (torch.autograd.graph.Node): a node's backward over its saved
values, its hooks and metadata; AccumulateGrad, a leaf's sink; CopySlices, a base's history
after an in-place write through a view; and the edges into them."""

from __future__ import annotations

import itertools
import weakref
from typing import NamedTuple

import numpy as np

from .._core.autocast_state import ACTIVE as AUTOCAST
from .._core.device import CPU, _cuda_used, device_of
from .._core.dtype import from_np, is_complex_np
from .._core.inplace import _array
from .._core.interpreter import WrapperTensor
from .._core.out import INTERNAL_OVERLAP, internal_overlap
from .._core.state import anomaly, graph_tasks, state
from .._core.tensor import Tensor, _make, _new
from ..ops.creation import zeros, zeros_like
from ..ops.views import apply_chain, dim_order, like_root, view_scatter
from . import anomaly_mode
from .saved import FREED, Saved, SavedTensor, _SavedInnerOutputs, _SavedTuple
from .saved_names import _saved_names, _saved_value, _tensor_keys, base_key

_SavedOutputs = (_SavedTuple, _SavedInnerOutputs)  # all outputs of a multi-output op
_seq = itertools.count()
_ACCUMULATE_SEQ = 1 << 62  # leaves accumulate as soon as they are ready
UINT64_MAX = (1 << 64) - 1  # what PyTorch reports as an AccumulateGrad's sequence number
# Hooks registered on a node or a leaf so far: a compiled step that holds its backward
# (numtorch.compile) guards on it, as it cannot see hooks added after its trace
HOOKS_ADDED = [0]


class Node:
    """A backward function (torch.autograd.graph.Node)."""

    __slots__ = (
        "_op",
        "attrs",
        "saved",
        "next_functions",
        "_seq",
        "in_meta",
        "_out_meta",
        "__weakref__",
        "__dict__",
    )
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
    # the node of an in-place write (an op without a derivative names it): True, or the
    # in-place method's name where it is not its op's + "_" (run_inplace's form)
    _inplace = False
    _shows_values = True  # False: its node shows no ``_saved_<name>`` (CopySlices)

    def __init__(self):
        self._seq = next(_seq)
        self.saved = None

    def name(self) -> str:
        return self._name

    def __dir__(self):
        # (the class's _saved_ descriptors serve every op's nodes: this op's names only)
        names = [n for n in super().__dir__() if not n.startswith(("_saved_", "_raw_saved_"))]
        if getattr(self, "_op", None) is not None and type(self)._shows_values:
            table = _saved_names(self._op)
            names += ["_saved_" + n for n in table]
            tensors = _tensor_keys(self)
            names += ["_raw_saved_" + n for n, k in table.items() if base_key(k) in tensors]
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
        HOOKS_ADDED[0] += 1
        return _Handle(self._post_hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) -> new grad_outputs or None, before the node runs."""
        if self._pre_hooks is None:
            self._pre_hooks = []
            self._any_hooks = True
        HOOKS_ADDED[0] += 1
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

    def _undefined(self) -> list:
        """No input gradients, where no output has one; as PyTorch's node, which unpacks
        its saved tensors first, a tensor it saved that was modified since still raises
        (of outputs saved together, those PyTorch's node saves: ``Op.saved_outputs``)."""
        saved = self.saved
        if saved is None:
            raise RuntimeError(FREED)
        for v in saved.values():
            if type(v) is Saved:
                v.unpack(self)
            elif isinstance(v, _SavedOutputs):
                outs = v.unpack(self)
                for k in self._op.saved_outputs:
                    outs[k]  # noqa: B018 - (unpacking checks its version)
        return [None] * len(self.next_functions)

    def apply(self, grads: list, wanted) -> list:
        """Input gradients (flattened, one per edge) from output gradients, each summed to
        its input's shape and cast to its dtype; computes only the ``wanted`` ones (None:
        those whose edge has a node). Where
        no output has a gradient, no input gets one (PyTorch's undefined gradients)."""
        step = _STEPS.get(self._op)
        if step is None:
            step = _make_step(self._op)
        return step(self, grads, wanted)

    def _apply(self, grads: list, wanted) -> list:
        """``apply`` by the plan's loop, for any op (see ``_make_step`` for the unrolled
        forms of the common ones)."""
        op = self._op
        if op.ndiff == 1:
            g = grads[0]
            if g is None:
                return self._undefined()
        elif all(x is None for x in grads):
            return self._undefined()
        elif op.undefined_grads:
            g = tuple(grads)
        else:
            like = next((x for x in grads if x is not None), None)  # the device to use
            g = tuple(
                g if g is not None else _zeros_for(self, i, like) for i, g in enumerate(grads)
            )
        saved = self.saved
        attrs = self.attrs
        meta = self.in_meta
        nexts = self.next_functions if wanted is None else None  # None: each edge with a node
        env = None  # values fetched so far, each unpacked once
        out = []
        unfit = None  # (position, meta) of the gradients to sum or cast to their input
        j = 0  # the edge the next gradient is for
        fast = None  # whether array forms may run (looked up at the first that could)
        for i, fn, names, is_list, afn in _PLANS.get(op) or _plan(op):
            if is_list:
                n = len(meta[i])
                if nexts is None:
                    need = any(wanted[j : j + n])
                else:
                    need = any(e[0] is not None for e in nexts[j : j + n])
            elif meta[i] is None and not op.number_edges:
                continue  # a number operand has no edge
            else:
                n = 1
                need = wanted[j] if nexts is None else nexts[j][0] is not None
            if not need:
                if n == 1:
                    out.append(None)
                else:
                    out.extend([None] * n)
                j += n
                continue
            if saved is None:  # (a node that computes nothing never asks)
                raise RuntimeError(FREED)
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
                r = None
                if afn is not None:
                    if fast is None:
                        fast = _unobserved()
                    # (2: plain tensors only; a transform's gradient is none)
                    if fast == 1 or fast and type(g) is Tensor:
                        r = _on_arrays(afn, kw, fast)
                if r is None:
                    r = fn(**kw)
            if is_list:
                for x, m in zip(r, meta[i]):
                    if x is not None and m is not None:
                        if unfit is None:
                            unfit = []
                        unfit.append((len(out), m))
                    out.append(x)
            else:
                m = meta[i]
                if m is not None and r is not None:
                    d = r._data if type(r) is Tensor else None
                    if d is None or d.shape != m[0] or d.dtype != m[1]:
                        if unfit is None:
                            unfit = []
                        unfit.append((len(out), m))
                out.append(r)
            j += n
        if unfit is not None:  # after all the formulas, as PyTorch's validate_outputs
            for k, m in unfit:
                out[k] = _fit(out[k], m)
        return out

    def _edge_meta(self) -> list:
        """(shape, dtype) of the input behind each edge, in ``next_functions`` order."""
        op = self._op
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


def saved_attr(node: Node, attr: str):
    """``node.<attr>`` for ``_saved_<name>`` / ``_raw_saved_<name>``: what the node saved, by
    PyTorch's names (AttributeError where it saved no such value)."""
    if type(node)._shows_values:
        if attr.startswith("_saved_"):
            return _saved_value(node, attr[7:])
        if attr.startswith("_raw_saved_"):
            op = getattr(node, "_op", None)  # (none on an AccumulateGrad)
            key = None if op is None else _saved_names(op).get(attr[11:])
            if key is not None and base_key(key) in _tensor_keys(node):
                return SavedTensor(node, key)
    raise AttributeError(f"'{type(node).__name__}' object has no attribute '{attr}'")


class _SavedAttr:
    """``_saved_<name>`` / ``_raw_saved_<name>`` of nodes (``saved_attr``): a descriptor on
    Node rather than a ``__getattr__``, which would slow every attribute read of a node."""

    __slots__ = ("attr",)

    def __init__(self, attr: str):
        self.attr = attr

    def __get__(self, node, owner=None):
        if node is None:
            return self
        return saved_attr(node, self.attr)


def show_saved(op) -> None:
    """Give nodes the ``_saved_<name>`` and ``_raw_saved_<name>`` attributes of op's saved
    values (called once per op, before its first node is made)."""
    for n in _saved_names(op):
        for attr in ("_saved_" + n, "_raw_saved_" + n):
            if attr not in Node.__dict__:
                setattr(Node, attr, _SavedAttr(attr))


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
    """(input index, vjp formula, the names it needs besides g or None, list input?, the
    formula's array form or None) per differentiable input of op, made once."""
    plan = _PLANS.get(op)
    if plan is None:
        plan = _PLANS[op] = tuple(
            (
                i,
                fn,
                None if names == ("g",) else names,
                i in op.list_inputs,
                getattr(fn, "on_arrays", None) if ARRAY_FORMS[0] else None,
            )
            for i, (fn, names) in enumerate(zip(op.vjps, op.vjp_args))
            if fn is not None
        )
    return plan


# Whether formulas' array forms run (``op.on_arrays``); tests turn them off to compare.
ARRAY_FORMS = [True]


def use_array_forms(on: bool) -> None:
    """Let formulas' array forms run where nothing observes them (on), or never (off)."""
    ARRAY_FORMS[0] = on
    _PLANS.clear()
    _STEPS.clear()


_STEPS: dict = {}  # op -> the function its nodes' apply runs (see _make_step)
_U = object()  # a value not fetched yet
_PLAIN_VALUES = frozenset((int, float, bool, complex, type(None)))


def _make_step(op):
    """The function op's nodes' ``apply`` runs, made once: for an op with one
    differentiable output and no list input, the plan's loop unrolled into straight code,
    which gives what the loop (``Node._apply``) gives and hands it any call it does not
    cover. Where each formula has an array form (or needs g alone), that code is the array
    forms' path alone: a gradient or saved value that is not a plain CPU float32/float64
    array, a saved-tensor hook, an observable call (``_unobserved`` other than 1), a
    number operand without an edge or an array form that declines goes to the loop, which
    then does everything again (the array forms are pure). Where no formula has an array
    form, it is the loop's tensor path."""
    plan = _plan(op)
    step = Node._apply
    if op.ndiff == 1 and not op.list_inputs and op.recorder is None and plan:
        forms = [afn for _, _, names, _, afn in plan if names is not None]
        if forms and None not in forms:
            step = _unrolled(op, plan, True)
        elif not any(forms):
            step = _unrolled(op, plan, False)
    _STEPS[op] = step
    return step


def _unrolled(op, plan: tuple, arrays: bool):
    """``_make_step``'s straight code for op's plan (``arrays``: the array forms' path)."""
    bail = "return _loop(self, grads, wanted)"
    lines = [
        "def step(self, grads, wanted):",
        "    g = grads[0]",
        "    if g is None:",
        "        return self._undefined()",
        "    meta = self.in_meta",
    ]
    if not op.number_edges:  # (a number operand has no edge: the edges shift)
        lines += [
            f"    if {' or '.join(f'meta[{e[0]}] is None' for e in plan)}:",
            f"        {bail}",
        ]
    if arrays:
        lines += [
            "    if type(g) is not Tensor or g._conj:",
            f"        {bail}",
            "    gd = g._data",
            "    if type(gd) is not _nd or gd.dtype.char not in 'fd':",
            f"        {bail}",
            "    tls = state.__dict__",
            "    if tls['modes'] or tls['stack'] or tls['grad_enabled'] or AUTOCAST[0]:",
            f"        {bail}",
        ]
    lines += [
        "    saved = self.saved",
        "    attrs = self.attrs",
        "    if wanted is None:",
        "        nexts = self.next_functions",
        *(f"        w{k} = nexts[{k}][0] is not None" for k in range(len(plan))),
        "    else:",
        *(f"        w{k} = wanted[{k}]" for k in range(len(plan))),
    ]
    uses: dict = {}
    for _, _, names, _, _ in plan:
        for n in names or ():
            uses[n] = uses.get(n, 0) + 1
    shared = [n for n, c in uses.items() if c > 1 and n != "g"]
    if shared:
        lines.append(f"    {' = '.join(f'v_{n}' for n in shared)} = _U")
    env = {"_loop": Node._apply, "_U": _U, "FREED": FREED}
    for k, (_, fn, names, _, afn) in enumerate(plan):
        env[f"f{k}"], env[f"a{k}"] = fn, afn
        lines += [f"    r{k} = None", f"    if w{k}:", "        if saved is None:"]
        lines.append("            raise RuntimeError(FREED)")
        if names is None:
            lines.append(f"        r{k} = f{k}(g=g)")
            continue
        for n in names:
            if n != "g":
                fetch = _fetch(op, n, arrays, bail)
                if n in shared:
                    lines.append(f"        if v_{n} is _U:")
                    lines += ["    " + ln for ln in fetch]
                else:
                    lines += fetch
        call = ", ".join(("g=gd" if arrays else "g=g") if n == "g" else f"{n}=v_{n}" for n in names)
        if arrays:
            lines += [
                f"        x = a{k}({call})",
                "        if x is NotImplemented:",
                f"            {bail}",
                f"        r{k} = _make(x)",
            ]
        else:
            lines.append(f"        r{k} = f{k}({call})")
    for k, (i, *_) in enumerate(plan):
        lines += [
            f"    if r{k} is not None:",
            f"        m = meta[{i}]",
            "        if m is not None:",
            f"            d = r{k}._data if type(r{k}) is Tensor else None",
            "            if d is None or d.shape != m[0] or d.dtype != m[1]:",
            f"                r{k} = _fit(r{k}, m)",
        ]
    lines.append(f"    return [{', '.join(f'r{k}' for k in range(len(plan)))}]")
    env.update(
        Tensor=Tensor,
        _nd=np.ndarray,
        state=state,
        AUTOCAST=AUTOCAST,
        _Saved=Saved,
        _PLAIN_VALUES=_PLAIN_VALUES,
        _make=_make,
        _fit=_fit,
    )
    exec("\n".join(lines), env)
    step = env["step"]
    step.__source__ = "\n".join(lines)
    return step


def _fetch(op, n: str, arrays: bool, bail: str) -> list:
    """Lines that set ``v_<n>`` to the value the loop gives formula parameter n: a saved
    tensor unpacked (on the array path, its array, version-checked), a saved shape, or an
    attribute (``bail``: the loop's call, for a value the array path does not take)."""
    if n != "result" and (n not in op.inputs):
        if n.endswith("_shape") and n[:-6] in op.inputs:
            return [f"        v_{n} = saved[{n!r}]"]
        lines = [f"        v_{n} = attrs[{n!r}]"]
        if arrays:
            lines += [
                f"        if type(v_{n}) is list or isinstance(v_{n}, Tensor):",
                f"            {bail}",
            ]
        return lines
    if not arrays:
        return [
            f"        v_{n} = saved[{n!r}]",
            f"        if isinstance(v_{n}, _Saved):",
            f"            v_{n} = v_{n}.unpack(self)",
        ]
    return [
        f"        s = saved[{n!r}]",
        "        if type(s) is _Saved:",
        "            if s.is_output:",
        "                if s.t.v != s.version:",
        f"                    {bail}",
        f"                v_{n} = s.data",
        "            else:",
        "                t = s.t",
        "                if t._ver.v != s.version or type(t) is not Tensor or t._conj:",
        f"                    {bail}",
        f"                v_{n} = t._data",
        f"            if type(v_{n}) is not _nd or v_{n}.dtype.char not in 'fd':",
        f"                {bail}",
        "        elif type(s) in _PLAIN_VALUES:",
        f"            v_{n} = s",
        "        else:",
        f"            {bail}",
    ]


def _unobserved() -> int:
    """Whether a formula's op calls are unobservable, so that its array form may run
    instead: no dispatch mode, profiler, autocast region or tracer is active, and (1) no
    graph is being built (grad mode off: a backward pass without create_graph) and no
    transform level is active, or (2) under transform levels, where its tensor operands are
    plain ones that no level holds and that need no graph (a grad level's backward runs its
    formulas so, on inner values); 0: observable."""
    if state.modes or AUTOCAST[0]:
        return 0
    stack = state.stack
    if stack:
        return 0 if stack[0].sees_all else 2
    # (a plain backward that builds a graph: its formulas' operands mostly need one)
    return 0 if state.grad_enabled else 1


def _on_arrays(afn, kw: dict, fast: int):
    """A formula's array form on its arguments (tensors as their arrays), as a tensor; None
    where an argument is not a plain CPU float32/float64 tensor or a number (``fast`` 2:
    one that needs no graph, a view behind no level), or the form does not cover the
    call."""
    akw = {}
    for k, v in kw.items():
        if isinstance(v, Tensor):
            if type(v) is not Tensor or v._conj:
                return None
            if fast == 2 and (
                v._rg_bit
                or v._view is not None
                and (v._view[0]._level or v._view_ver != v._ver.v and v._rg)
            ):
                return None
            v = v._data
            if type(v) is not np.ndarray or v.dtype.char not in "fd":
                return None
        elif k == "g" or type(v) is list:  # (a multi-output node's gradients; tensor lists)
            return None
        akw[k] = v
    r = afn(**akw)
    return None if r is NotImplemented else _make(r)


def _fit(g, meta):
    """A gradient summed to its input's shape and cast to its dtype (``meta``)."""
    if g is None or meta is None:
        return g
    shape, dtype = meta[0], meta[1]
    if type(g) is Tensor:
        gshape, gdtype = g._data.shape, g._data.dtype
    else:  # a transform's wrapper: its logical shape (a Size compares as a tuple)
        gshape, gdtype = g.shape, wrapped_dtype(g)
    if gshape != shape:
        g = _sum_to(g, gshape, shape)
    if gdtype != dtype:
        if is_complex_np(gdtype) and not is_complex_np(dtype):
            g = g.real  # a real input's gradient is the real part (PyTorch's handle_r_to_c)
        g = g.to(from_np(dtype))
    return g


def wrapped_dtype(t: Tensor):
    """The NumPy dtype of a transform's wrapper: its innermost value's, which every wrapper
    shows (``t.dtype.np``, without a property's call per level)."""
    while isinstance(t, WrapperTensor):
        t = t._inner
    return t._data.dtype


def _sum_to(g, gshape: tuple, shape: tuple):
    """A broadcast gradient summed to ``shape`` by PyTorch's calls (``at::sum_to``): a sum
    over the broadcast dims, kept, then a view without the leading ones."""
    lead = len(gshape) - len(shape)
    dims = [*range(lead)]
    dims += [lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1]
    d = g._data if type(g) is Tensor else None
    dt = d.dtype if type(d) is np.ndarray else None
    if (
        dt is not None
        and dt.kind in "fc"
        and dt.itemsize >= 4  # (no reduced or half float: their sums widen)
        and dt.num < 256
        and d.flags.c_contiguous  # (the sum op lays out others' sums as they are)
        and not (state.modes or g._rg or _held(g))
    ):  # a gradient outside autograd that nobody observes: the same sum, in NumPy
        if dims:
            d = np.add.reduce(d, axis=tuple(dims), keepdims=True)  # (ndarray.sum's call)
        return _make(d.reshape(shape) if lead else d)
    if dims:
        g = g.sum(dims, keepdim=True)
    return g.reshape(shape) if lead else g


def _held(t: Tensor) -> bool:
    """Whether a plain tensor's ops may be seen by a transform level: one is a tracer, which
    sees every call, or t is a view behind its root's levels."""
    stack = state.stack
    return bool(stack) and (stack[0].sees_all or t._view is not None and t._view[0]._level > 0)


def _zeros_for(node: Node, i: int, like=None):
    """The zero gradient of output i (on ``like``'s device, the other gradients')."""
    shape, dtype = node._out_meta[i]
    if like is None or not _cuda_used[0]:
        return zeros(shape, dtype=from_np(dtype))
    return zeros(shape, dtype=from_np(dtype), device=like.device)


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

    # _held: the view's node the write replaced (PyTorch's fn keeps it as its edge 0), kept
    # alive until a backward pass that does not retain the graph runs this node
    __slots__ = ("fn", "chain", "order", "_held")
    _name = "torch::autograd::CopySlices"
    _inplace = True

    @property
    def saved(self):  # the wrapped node's: freed with it, and the freed-graph error
        return self.fn.saved

    @saved.setter
    def saved(self, value) -> None:
        self.fn.saved = value

    def apply(self, grads: list, wanted) -> list:
        g = grads[0]
        if g is None:
            return [None] * len(self.next_functions)
        g = like_root(g, self.order)  # the chain replays on the base's layout
        fn, chain = self.fn, self.chain
        region = apply_chain(g, chain)
        if wanted[0] and 0 in _array(region).strides and internal_overlap(_array(region)):
            # a write through an expanded view: PyTorch's copy into the region is refused
            # (made only where the base's gradient is wanted)
            raise RuntimeError(INTERNAL_OVERLAP)
        res = fn.apply([region], wanted)
        if self._held is not None and graph_tasks and not graph_tasks[-1][0].keep_graph:
            self._held = None  # (PyTorch's release_variables drops fn, and its edges)
        if wanted[0]:
            own = res[0]
            if own is None:
                own = zeros_like(region)
            elif tuple(own.shape) != tuple(region.shape):
                own = own.sum_to_size(region.shape)
            res[0] = view_scatter(g, own, chain, self.order)
        return res

    def _edge_meta(self) -> list:
        return [self._out_meta[0], *self.fn._edge_meta()[1:]]

    _shows_values = False  # PyTorch's CopySlices shows none of the wrapped node's saved values


def copy_slices(root: Tensor, fn: Node, chain: tuple) -> CopySlices:
    """A CopySlices node for ``fn`` (the in-place op's node, whose input 0 was the view)
    writing into ``root`` through the view ``chain``."""
    node = _new(CopySlices)
    node._seq = next(_seq)
    node._op = fn._op
    node.attrs = {"chain": chain}
    node.fn = fn
    node.chain = chain
    node.order = dim_order(root)
    node.next_functions = (_edge(root) if root._rg else _NO_EDGE, *fn.next_functions[1:])
    node._held = fn.next_functions[0][0]
    fn.next_functions = (_NO_EDGE, *fn.next_functions[1:])
    node.in_meta = None
    node._out_meta = (_root_meta(root),)
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


def _edge(t: Tensor):
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._out_nr)
    return (accumulate_node(t), 0)


_NO_EDGE = (None, 0)


def _root_meta(root: Tensor) -> tuple:
    """(shape, numpy dtype) of a written base: a transform's wrapper's logical ones."""
    if root._level:
        return (tuple(root.shape), wrapped_dtype(root))
    return (root._data.shape, root._data.dtype)
