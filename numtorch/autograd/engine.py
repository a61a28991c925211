"""The backward engine: a graph task per call, dependency counts, a ready queue.

Iterative throughout, so graphs of any depth run without recursion.
"""

from __future__ import annotations

import heapq
import math
import threading
import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from .._core import upcalls
from .._core.device import _cuda_used, gpu_of
from .._core.dtype import from_np
from .._core.interpreter import FORWARD, Kind
from .._core.state import anomaly, compiled_nodes, state
from .._core.state import graph_tasks as _running
from .._core.tensor import Size, Tensor, _make, bump_version
from ..ops.creation import ones, ones_like, zeros_like
from . import anomaly_mode
from . import node as node_module
from .grad_layout import copy_obeying, first_grad
from .grad_mode import set_grad_enabled
from .node import _ACCUMULATE_SEQ, AccumulateGrad, GradientEdge, Node, _fit, _make_step, edge_of
from .saved import SavedValues
from .task import _task_ids


class GraphTask:
    __slots__ = (
        "deps",
        "exec_info",
        "targets",
        "captures",
        "keep_graph",
        "create_graph",
        "accumulate",
        "current",
        "check_nan",
        "buffers",
        "user_grads",
        "kept",
    )

    def __init__(self, keep_graph, create_graph, accumulate):
        self.current = None  # the node executing now (torch._C._current_autograd_node)
        self.check_nan = False  # anomaly mode's NaN check, read as execute starts
        self.keep_graph = keep_graph
        self.create_graph = create_graph
        self.accumulate = accumulate
        self.deps: dict = {}
        self.exec_info: set | None = None
        self.captures: dict = {}
        self.targets: set = set()
        self.buffers: dict = {}  # node -> the gradients waiting for it (execute's)
        self.user_grads: set = set()  # ids of the root gradients (the caller holds them)
        # what a node saved, freed under create_graph: the graph the formulas record keeps
        # it (and the history it holds) alive in PyTorch while the gradients flow on
        self.kept: list = []


class _FinalCallbacks(threading.local):
    """Per thread: the callbacks queued for each backward pass now running, innermost last."""

    def __init__(self) -> None:
        self.stack: list = []


_final = _FinalCallbacks()


def queue_callback(callback) -> None:
    """Run ``callback()`` once the innermost backward pass running on this thread has
    finished (``Variable._execution_engine.queue_callback``)."""
    if not _final.stack:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _final.stack[-1].append(callback)


def _run_final_callbacks(callbacks: list, task: GraphTask) -> None:
    """A graph task's last step, with the task still current: its queued callbacks, in
    order, those they queue included; under the task's grad mode. The node PyTorch reports
    as current is the one the enclosing pass was running (None at the top)."""
    task.current = _running[-2][0].current if len(_running) > 1 else None
    with set_grad_enabled(task.create_graph):
        i = 0
        while i < len(callbacks):  # (a callback may queue more)
            callbacks[i]()
            i += 1


def _compute_dependencies(task: GraphTask, roots) -> None:
    deps = task.deps
    if len(roots) == 1:  # (a graph has no cycle: a node is first met once, the root never)
        stack = [roots[0][0]] if roots[0][0] is not None else []
        while stack:
            for nxt, _ in stack.pop().next_functions:
                if nxt is not None:
                    c = deps.get(nxt)
                    if c is None:
                        deps[nxt] = 1
                        stack.append(nxt)
                    else:
                        deps[nxt] = c + 1
        return
    stack = list(dict.fromkeys(n for n, _ in roots if n is not None))
    seen = set(stack)
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)


def _compute_exec_info(task: GraphTask, roots, targets: set) -> None:
    """Mark the nodes on some path from a root to a capture target, counting each node's
    dependencies on the way (what ``_compute_dependencies`` does, in the same walk)."""
    deps = task.deps
    needed: set = set()
    # Iterative post-order: a node is needed if it is a target or any child is needed. Each
    # node's edges are read once (its iterator resumes where it stopped): one count per edge.
    visited = set()
    for root, _ in roots:
        if root is None or root in visited:
            continue
        stack = [(root, iter(root.next_functions))]
        visited.add(root)
        while stack:
            node, it = stack[-1]
            for nxt, _ in it:
                if nxt is not None:
                    deps[nxt] = deps.get(nxt, 0) + 1
                    if nxt not in visited:
                        visited.add(nxt)
                        stack.append((nxt, iter(nxt.next_functions)))
                        break
            else:
                stack.pop()
                for n, _ in node.next_functions:
                    if n in needed or n in targets:
                        needed.add(node)
                        break
    if task.accumulate:
        needed |= {t for t in targets if isinstance(t, AccumulateGrad)}
    task.exec_info = needed
    task.targets = targets


def validate_outputs(node: Node, grads: list) -> list:
    """Sum broadcast gradients to each input's shape and cast to its dtype (for nodes whose
    apply does not, e.g. a custom Function's)."""
    meta = node._edge_meta()
    return [_fit(g, m) for g, m in zip(grads, meta)]


def run_hooks(hooks, grad):
    for h in list(hooks):
        r = h(grad)
        if r is not None:
            grad = _check_hook_result(h, grad, r)
    return grad


def _hook_name(hook) -> str:
    return getattr(hook, "__name__", "<unknown>")


def _check_hook_result(hook, original, result):
    """A hook's replacement for a gradient: PyTorch's checks, then the result."""
    if result is None:
        return original
    if original is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(result, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    if result.dtype != original.dtype:
        raise RuntimeError(
            f"hook '{_hook_name(hook)}' has changed the type of value (was "
            f"torch.{original.dtype.scalar_name}Tensor got torch.{result.dtype.scalar_name}Tensor)"
        )
    if tuple(result.shape) != tuple(original.shape):
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")
    return result


def _check_hook_results(hook, originals: list, results) -> list:
    if len(results) != len(originals):
        raise RuntimeError(
            f"hook '{_hook_name(hook)}' has returned an incorrect number of values (got "
            f"{len(results)}, but expected {len(originals)})"
        )
    # a None in a node hook's tuple makes that gradient None
    return [
        None if r is None else _check_hook_result(hook, o, r) for o, r in zip(originals, results)
    ]


_apply = Node.apply
_LEAF_PRIORITY = -_ACCUMULATE_SEQ  # a leaf's place in the ready queue


class _Entry:
    """A ready-queue entry's node, after its priority: entries of equal priority (leaves)
    compare equal (neither is less), so ``heapq`` pops them in the order PyTorch's
    ``std::priority_queue`` does (the same sift-up and sift-down), not first in first out."""

    __slots__ = ("node",)

    def __init__(self, node) -> None:
        self.node = node

    def __lt__(self, other) -> bool:
        return False


def add_to_buffer(buf: list, i: int, g) -> None:
    cur = buf[i]
    buf[i] = g if cur is None else cur + g


def _device_queue(ready: list, queues: dict, node, buf: list) -> list:
    """The ready queue of the device of a node's first output (PyTorch #135633): ``ready``
    for the CPU, else that device's queue. The device is read from the gradient buffer
    (the engine gives each gradient its output's device) and kept on the node."""
    dev = None
    for g in buf:
        if g is not None:
            dev = g.device
            break
    if dev is None or dev.type == "cpu":
        return ready
    node._device = dev
    q = queues.get(dev)
    if q is None:
        q = queues[dev] = []
    return q


def _pop_next(ready: list, queues: dict):
    """The next node: the highest priority among the heads of all device queues (one
    thread runs them all, in the order a single queue would)."""
    best, dev = (ready if ready else None), None
    for d, q in queues.items():
        if best is None or q[0] < best[0]:
            best, dev = q, d
    node = heapq.heappop(best)[1].node
    if dev is not None and not best:
        del queues[dev]  # only non-empty device queues stay
    return node


def execute(task: GraphTask, roots, root_grads) -> None:
    buffers: dict = {}
    task.buffers = buffers
    ready: list = []  # the CPU queue
    queues: dict = {}  # device -> the ready queue of a non-CPU device
    devices = _cuda_used[0]
    deps = task.deps
    push, pop = heapq.heappush, heapq.heappop
    task.check_nan = anomaly.enabled and anomaly.check_nan
    for (node, nr), g in zip(roots, root_grads):
        if node is None:
            continue
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * len(node._out_meta)
        add_to_buffer(buf, nr, g)
    for node, buf in buffers.items():
        if deps.get(node, 0) == 0:
            q = _device_queue(ready, queues, node, buf) if devices else ready
            push(q, (-node._seq, _Entry(node)))
    # a leaf whose accumulation runs no user code accumulates without the node step's checks
    plain = task.accumulate and task.exec_info is None
    # a node without hooks takes its step inline (captures, the exec_info skip and the
    # wanted edges included) where the task checks no NaN and nobody (the profiler) swapped
    # the step
    inline = not task.check_nan and _run_node is _plain_run_node
    exec_info = task.exec_info
    captures = task.captures
    targets = task.targets
    drop = not task.keep_graph
    create_graph = task.create_graph
    steps = node_module._STEPS
    with set_grad_enabled(create_graph):
        node = None  # the next node where no queue is needed to know it (see below)
        while True:
            if node is None:
                if queues:
                    node = _pop_next(ready, queues)
                elif ready:
                    node = pop(ready)[1].node
                else:
                    break
            if plain and type(node) is AccumulateGrad and _plain_leaf(node):
                task.current = node
                accumulate_grad(node.variable, buffers.pop(node)[0], create_graph)
                node = None
                continue
            if (
                inline
                and not node._any_hooks
                and type(node).apply is _apply
                and type(node) is not AccumulateGrad
            ):
                # (_run_node's step for such a node)
                task.current = node
                grads = buffers.pop(node)
                if captures and node in captures:
                    for nr, slot in captures[node]:
                        slot[0] = grads[nr] if slot[0] is None else slot[0] + grads[nr]
                if exec_info is None:
                    step = steps.get(node._op)  # (node.apply's call, inline)
                    if step is None:
                        step = _make_step(node._op)
                    outs = step(node, grads, None)
                elif node not in exec_info:
                    node = None
                    continue
                else:
                    wanted = []  # (wanted_edges, inline)
                    for n, _ in node.next_functions:
                        wanted.append(n is not None and (n in exec_info or n in targets))
                    if True in wanted:
                        outs = node.apply(grads, wanted)
                    else:
                        outs = [None] * len(wanted)
                if not node._fits:
                    outs = validate_outputs(node, outs)
                if drop and node.saved and type(node.saved) is not SavedValues:
                    if create_graph:
                        task.kept.append(node.saved)
                    node.saved = None
            else:
                outs = _run_node(task, node, buffers.pop(node))
            nexts = node.next_functions
            node = None
            if outs is None:
                continue
            # The first node made ready is held back: if it is the only one and the queue is
            # empty, the queue would hand it out next, so it runs next without it.
            held = None
            many = False
            # A plain leaf made ready runs at once, where the queue would hand it out next:
            # nothing in the queue goes before a leaf, and no leaf with hooks was queued
            # here (equal priorities: the queue's order among them shows)
            # (a dispatch mode or the profiler sees the accumulations themselves: their
            # order among the leaves is then the queue's)
            early = (
                plain
                and inline
                and not devices
                and not state.modes
                and (not ready or ready[0][0] > _LEAF_PRIORITY)
            )
            for (nxt, nr), g in zip(nexts, outs):
                if nxt is None:
                    continue
                d = deps[nxt] - 1
                deps[nxt] = d
                if early and d == 0 and type(nxt) is AccumulateGrad:
                    if _plain_leaf(nxt):
                        buf = buffers.pop(nxt, None)
                        if buf is not None and buf[0] is not None:
                            g = buf[0] if g is None else buf[0] + g
                        task.current = nxt
                        accumulate_grad(nxt.variable, g, create_graph)
                        continue
                    early = False
                buf = buffers.get(nxt)
                if buf is None:
                    buf = buffers[nxt] = [None] * len(nxt._out_meta)
                if g is not None:
                    cur = buf[nr]
                    buf[nr] = g if cur is None else cur + g
                if d == 0:  # (leaves too: they run next, in the queue's order)
                    if early and nxt._seq >= _ACCUMULATE_SEQ:
                        early = False  # (a node numbered as a leaf or past them: the queue's)
                    if devices:
                        push(_device_queue(ready, queues, nxt, buf), (-nxt._seq, _Entry(nxt)))
                    elif held is None and not many:
                        held = nxt
                    else:
                        if held is not None:
                            push(ready, (-held._seq, _Entry(held)))
                            held = None
                        many = True
                        push(ready, (-nxt._seq, _Entry(nxt)))
            if held is not None:
                if ready:
                    push(ready, (-held._seq, _Entry(held)))
                else:
                    node = held


def _run_node(task: GraphTask, node: Node, grads: list) -> list | None:
    """One node's step in a graph task, in PyTorch's order: its pre-hooks and captures
    (``_before_apply``), then the node's backward (the gradients the task needs only), its
    post-hooks, anomaly mode's NaN check, and its saved tensors freed. Returns the
    gradients for the node's edges, or None where nothing flows on (a leaf, a node the task
    does not run)."""
    task.current = node
    exec_info = task.exec_info
    if node._any_hooks or type(node) is AccumulateGrad or exec_info is not None or task.captures:
        grads = _before_apply(task, node, grads)
        if grads is None:
            return None
    nexts = node.next_functions
    if exec_info is None and type(node).apply is _apply:  # (it reads its edges itself)
        outs = node.apply(grads, None)
        if not node._fits:
            outs = validate_outputs(node, outs)
    elif True in (wanted := wanted_edges(nexts, exec_info, task.targets)):
        outs = node.apply(grads, wanted)
        if not node._fits:
            outs = validate_outputs(node, outs)
    else:
        outs = [None] * len(nexts)
    if node._post_hooks:
        outs = run_node_posthooks(node, outs, grads)
    if task.check_nan:
        anomaly_mode.check_nan(node, outs)
    if not task.keep_graph and node.saved and type(node.saved) is not SavedValues:
        if task.create_graph:
            task.kept.append(node.saved)
        node.saved = None  # (release inline)
    return outs


_plain_run_node = _run_node


def _before_apply(task: GraphTask, node: Node, grads: list) -> list | None:
    """A node's step before its backward: a leaf's tensor hooks, the tensor pre-hooks, the
    gradients the task captures there, the node's pre-hooks; then a leaf's accumulation and
    post-hooks. Returns the gradients for the backward, or None where the step ends (a
    leaf, a node the task does not run)."""
    is_leaf = type(node) is AccumulateGrad
    captures = task.captures
    exec_info = task.exec_info
    if is_leaf and node.variable._hooks:
        # an undefined gradient (None) too, where the task runs the leaf
        runs = exec_info is None or node in exec_info or (captures and node in captures)
        if grads[0] is not None or runs:
            grads[0] = run_hooks(node.variable._hooks, grads[0])
    if node._hooked:
        run_tensor_prehooks(node, grads)
    if captures and node in captures:
        for nr, slot in captures[node]:
            slot[0] = grads[nr] if slot[0] is None else slot[0] + grads[nr]
    if exec_info is not None and node not in exec_info:
        return None
    if node._pre_hooks:
        grads = run_node_prehooks(node, grads)
    if is_leaf:
        if task.accumulate:
            accumulate_grad(node.variable, grads[0], task.create_graph)
        if node._post_hooks:
            run_node_posthooks(node, [], grads)
        return None
    return grads


def wanted_edges(nexts, exec_info, targets) -> list:
    """Which of a node's edges lead to a node the task runs (a gradient to compute)."""
    if exec_info is None:
        return [n is not None for n, _ in nexts]
    return [n is not None and (n in exec_info or n in targets) for n, _ in nexts]


def run_tensor_prehooks(node: Node, grads: list) -> None:
    """Tensor hooks may replace a gradient; retain_grad hooks only observe it."""
    if node._tensor_pre_hooks:  # called with None for an output that got no gradient
        for nr, hooks in node._tensor_pre_hooks.items():
            grads[nr] = run_hooks(hooks, grads[nr])
    if node._retain_hooks:
        for nr, hook in list(node._retain_hooks.items()):
            if grads[nr] is not None:
                hook(grads[nr])


def run_node_prehooks(node: Node, grads: list) -> list:
    for h in list(node._pre_hooks):
        r = h(tuple(grads))
        if r is not None:
            grads = _check_hook_results(h, grads, r)
    return grads


def run_node_posthooks(node: Node, outs: list, grads: list) -> list:
    for h in list(node._post_hooks):
        r = h(tuple(outs), tuple(grads))
        if r is not None:
            outs = _check_hook_results(h, outs, r)
    return outs


def _one_step(node) -> bool:
    """A graph of one node whose edges all go to distinct leaves without hooks (a compiled
    function's): the engine's schedule is that node, then each leaf."""
    if node is None or node._any_hooks or not node._fits or type(node) is AccumulateGrad:
        return False  # (a custom Function's backward may ask the engine about its task)
    if anomaly.enabled or _cuda_used[0] or state.modes:  # (modes: the queue's order shows)
        return False
    seen = set()
    for nxt, _ in node.next_functions:
        if nxt is None:
            continue
        if type(nxt) is not AccumulateGrad or nxt in seen or not _plain_leaf(nxt):
            return False
        seen.add(nxt)
    return True


def _run_one_step(root, grad, keep_graph: bool, create_graph: bool, callbacks: list) -> None:
    """execute for a graph that ``_one_step`` accepts: the node's step, then its leaves'
    accumulation, without the task's buffers and queue."""
    node, nr = root
    task = GraphTask(keep_graph, create_graph, True)
    grads = [None] * len(node._out_meta)
    grads[nr] = grad
    _running.append((task, [root], next(_task_ids)))
    enabled = state.grad_enabled
    state.grad_enabled = create_graph
    try:
        outs = _run_node(task, node, grads)
        for (nxt, _), g in zip(node.next_functions, outs):
            if nxt is not None and g is not None:
                accumulate_grad(nxt.variable, g, create_graph)
        if callbacks:
            _run_final_callbacks(callbacks, task)
    finally:
        state.grad_enabled = enabled
        _running.pop()


def _plain_leaf(node: AccumulateGrad) -> bool:
    """A leaf whose accumulation runs no user code."""
    if node._any_hooks or node._hooked:
        return False
    var = node.variable
    return not var._hooks and not var.__dict__.get("_post_acc_hooks")


_SAME = object()  # no grad_dtype set: the variable's dtype


def accumulate_grad(var: Tensor, g, create_graph: bool) -> None:
    if g is None:
        return
    if type(g) is not Tensor or type(var) is not Tensor:  # (plain tensors: both at level 0)
        while g._level > var._level and g._interp.kind in FORWARD:
            g = g._inner  # a leaf outside the dual level keeps the primal gradient
        if g._level == var._level and g._level:  # a dual leaf: its gradient carries a tangent
            var._grad = g if var._grad is None else var._grad + g
            return
        if g._level:
            raise RuntimeError(
                "numtorch: backward() inside a transform cannot accumulate a batched or "
                "transformed gradient into .grad; use autograd.grad instead"
            )
    vd = var.__dict__
    want = vd.get("_grad_dtype", _SAME) if vd else _SAME  # grad_dtype
    if want is _SAME and type(var) is Tensor and type(g) is Tensor:  # (compared as NumPy's)
        if g._data.dtype != var._data.dtype:
            g = g.to(var.dtype)
    elif want is _SAME:
        if g.dtype != var.dtype:
            g = g.to(var.dtype)
    elif want is not None and g.dtype != want:
        g = g.to(want)
    if var._grad is None:
        if state.modes or create_graph:  # PyTorch's calls (under create_graph: CopyBackwards)
            var._grad = first_grad(var, g, create_graph)
        else:  # (the copy PyTorch's .grad equals, laid out as it)
            var._grad = _make(copy_obeying(g._data, var._data))
    elif create_graph:
        var._grad = var._grad + g
    else:  # grad mode is off: in place, even into a .grad that requires grad
        acc = var._grad
        gd = acc._data
        if gd.shape != g._data.shape or not gd.flags.writeable:
            var._grad = acc + g
        elif state.modes:
            acc.add_(g)  # (modes see aten.add_)
        else:
            if type(gd) is np.ndarray:
                gd += g._data
            else:
                with gpu_of(gd):
                    gd += g._data
            bump_version(acc)
    post = vd.get("_post_acc_hooks") if vd else None
    if post:
        for h in list(post):
            r = h(var)
            if r is not None:
                raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")


def _make_grads(outputs: Sequence[Tensor], grad_outputs, is_batched=False) -> list:
    res = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None and type(out) is Tensor and not is_batched:  # (a loss: the commonest)
            d = out._data
            if (
                type(d) is np.ndarray
                and d.size == 1
                and d.dtype.kind == "f"
                and d.dtype.num < 256
                and out._rg
                and not (state.modes or state.stack)
            ):
                res.append(_make(np.array(1, d.dtype) if not d.ndim else np.ones(d.shape, d.dtype)))
                continue
        if isinstance(out, GradientEdge):
            shape, dtype = _edge_meta(out)
            needs = True
        elif isinstance(out, Tensor):
            shape, dtype, needs = out.shape, out.dtype, out._rg
        else:
            raise AssertionError("Expected output to be a torch.Tensor")
        if g is None:
            if needs:
                if math.prod(shape) != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not dtype.is_floating_point:
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar outputs but got "
                        f"{dtype}"
                    )
                d = out._data if type(out) is Tensor else None
                if d is not None and not (state.modes or state.stack) and type(d) is np.ndarray:
                    # (one element: no layout to keep)
                    g = _make(np.array(1, d.dtype) if not d.ndim else np.ones(d.shape, d.dtype))
                else:
                    g = ones_like(out) if isinstance(out, Tensor) else ones(shape, dtype=dtype)
        elif isinstance(g, Tensor):
            gshape = g.shape
            if is_batched:  # (the first gradient's shape; g[0] raises PyTorch's errors)
                gshape = gshape[1:] if gshape and gshape[0] else g[0].shape
            if gshape != shape:
                if is_batched:  # torch prints the first gradient's shape less its first dim
                    raise RuntimeError(
                        "If `is_grads_batched=True`, we interpret the first dimension of each "
                        "grad_output as the batch dimension. The sizes of the remaining "
                        "dimensions are expected to match the shape of corresponding output, but "
                        f"a mismatch was detected: grad_output[{i}] has a shape of "
                        f"{gshape[1:]} and output[{i}] has a shape of {Size(shape)}. If you "
                        "only want some tensors in `grad_output` to be considered batched, "
                        "consider using vmap."
                    )
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                    f"output[{i}] has a shape of {Size(shape)}."
                )
            if dtype.is_complex != g.dtype.is_complex:
                raise RuntimeError(
                    "For complex Tensors, both grad_output and output are required to have the "
                    f"same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} "
                    f"and output[{i}] has a dtype of {dtype}."
                )
        else:
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        res.append(g)
    return res


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    if isinstance(x, (Tensor, GradientEdge)):
        return (x,)
    return tuple(x)


def _inputs_tuple(inputs, fn: str) -> tuple:
    """``inputs`` of backward()/grad() as a tuple (a dict gives its values)."""
    if type(inputs) is dict:
        inputs = tuple(inputs.values())
    elif isinstance(inputs, Mapping):
        raise TypeError(
            f"`inputs` argument to `{fn}()` must be a dict, not {type(inputs).__name__}. "
            "Other Mapping types are not supported."
        )
    else:
        inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError(f"`inputs` argument to `{fn}()` cannot be empty.")
    return inputs


def _edge_meta(edge: GradientEdge) -> tuple:
    """(shape, dtype) of the gradient that flows into a gradient edge."""
    node = edge.node
    if isinstance(node, AccumulateGrad):
        return node.variable.shape, node.variable.dtype
    shape, dtype = node._out_meta[edge.output_nr]
    return tuple(shape), from_np(dtype)


def _roots(outputs: tuple) -> list:
    roots = []
    for i, out in enumerate(outputs):
        if isinstance(out, GradientEdge):
            roots.append((out.node, out.output_nr))
            continue
        if not out._rg:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        if type(out) is Tensor and out._view is None and out._grad_fn is not None:
            # (edge_of less grad_fn's naming of a node whose name depends on the call: the
            # engine never reads it, and whoever reads the node's name names it then)
            roots.append((out._grad_fn, out._out_nr))
        else:
            roots.append(edge_of(out))
    return roots


def _check_inputs(inputs: tuple, accumulate: bool) -> None:
    for t in inputs:
        if isinstance(t, GradientEdge):
            continue
        if not isinstance(t, Tensor):
            raise RuntimeError(
                f"all inputs have to be Tensors or GradientEdges, but got {type(t).__name__}"
            )
        if accumulate:  # backward(inputs=) fills a non-leaf's .grad through retain_grad
            t.retain_grad()
        if not t._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")


def run_backward(outputs, grad_outputs, keep_graph, create_graph, inputs=None, accumulate=True):
    """Run a graph task; returns captured gradients for `inputs` (or None)."""
    outputs = _as_tuple(outputs)
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else _as_tuple(grad_outputs)
    grads = _make_grads(outputs, grad_outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    roots = _roots(outputs)
    if inputs is not None:
        _check_inputs(inputs, accumulate)
    callbacks: list = []  # queue_callback's, for this pass
    _final.stack.append(callbacks)
    try:
        return _run_task(roots, grads, inputs, keep_graph, create_graph, accumulate, callbacks)
    finally:
        _final.stack.pop()


def _run_task(roots, grads, inputs, keep_graph, create_graph, accumulate, callbacks: list):
    """The pass itself: compiled, one step, or the engine's queue; then its callbacks."""
    compiler = state.compiler
    if compiler is None and compiled_nodes:  # the graph may hold numtorch.compile's outputs
        compiler = compiled_nodes
    if compiler is not None and not create_graph:
        slots = upcalls.compiled_backward(compiler, roots, grads, inputs, keep_graph, accumulate)
        if slots is not NotImplemented:
            if callbacks:  # (the compiled pass's own task has ended: one for the callbacks)
                task = GraphTask(keep_graph, False, accumulate)
                _running.append((task, roots, next(_task_ids)))
                try:
                    _run_final_callbacks(callbacks, task)
                finally:
                    _running.pop()
            return slots
    elif inputs is None and accumulate and len(roots) == 1 and _one_step(roots[0][0]):
        _run_one_step(roots[0], grads[0], keep_graph, create_graph, callbacks)
        return None
    task, slots = plan_task(roots, inputs, keep_graph, create_graph, accumulate)
    task.user_grads = {id(g) for g in grads}
    _running.append((task, roots, next(_task_ids)))
    try:
        if anomaly.enabled:
            anomaly_mode.run(execute, task, roots, grads)
        else:
            execute(task, roots, grads)
        if callbacks:
            _run_final_callbacks(callbacks, task)
    finally:
        _running.pop()
    return slots


def plan_task(roots, inputs, keep_graph, create_graph, accumulate) -> tuple:
    """A graph task (dependencies, and for ``inputs`` the nodes to run and the gradients to
    capture) and the capture slots, one per input (None without ``inputs``)."""
    task = GraphTask(keep_graph, create_graph, accumulate)
    slots = None
    if inputs is None:
        _compute_dependencies(task, roots)
    else:
        slots = []
        targets = set()
        for t in inputs:
            if isinstance(t, GradientEdge):
                node, nr = t.node, t.output_nr
            else:
                node, nr = edge_of(t)
            slot = [None]
            slots.append(slot)
            if node is None:
                continue
            targets.add(node)
            if not accumulate:
                task.captures.setdefault(node, []).append((nr, slot))
        _compute_exec_info(task, roots, targets)
    return task, slots


def backward(
    tensors,
    grad_tensors=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables=None,
    inputs=None,
) -> None:
    """Accumulate gradients of `tensors` into the leaves' ``.grad``."""
    if state.stack and any(i.kind in (Kind.VMAP, Kind.GRAD) for i in state.stack):
        raise RuntimeError(
            "backward() called inside a functorch transform. This is not supported, please "
            "use functorch.grad or functorch.vjp instead or call backward() outside of "
            "functorch transforms."
        )
    if grad_variables is not None:
        warnings.warn(
            "`grad_variables` is deprecated. Use `grad_tensors` instead.",
            FutureWarning,
            stacklevel=2,
        )
        if grad_tensors is not None:
            raise RuntimeError(
                "`grad_tensors` and `grad_variables` (deprecated) arguments both passed to "
                "`backward()`. Please only use `grad_tensors`."
            )
        grad_tensors = grad_variables
    if inputs is not None:
        inputs = _inputs_tuple(inputs, "backward")
    if retain_graph is None:
        retain_graph = create_graph
    run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
):
    """Gradients of `outputs` with respect to `inputs`, without touching ``.grad``."""
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    keys = inputs.keys() if type(inputs) is dict else None
    inputs = _inputs_tuple(inputs, "grad")
    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now (defaults to True). To "
            "accumulate gradient for other parts of the graph, please use "
            "torch.autograd.backward.",
            FutureWarning,
            stacklevel=2,
        )
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        res = _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused)
    else:
        slots = run_backward(outputs, grad_outputs, retain_graph, create_graph, inputs, False)
        res = [slot[0] for slot in slots]
        if not allow_unused and None in res:
            raise RuntimeError(
                f"The differentiated Tensor at index {res.index(None)} appears to not have been "
                "used in the graph. Set allow_unused=True if this is the desired behavior."
            )
    if materialize_grads:
        if any(g is None and isinstance(t, GradientEdge) for g, t in zip(res, inputs)):
            raise RuntimeError(
                "materialize_grads cannot be used when the given input is a GradientEdge"
            )
        res = [
            zeros_like(t, requires_grad=create_graph) if g is None else g
            for g, t in zip(res, inputs)
        ]
    res = tuple(res)
    return res if keys is None else dict(zip(keys, res))


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused):
    """grad with a leading batch dimension on every grad_output: one vmapped backward pass."""
    outputs = _as_tuple(outputs)
    gos = (None,) * len(outputs) if grad_outputs is None else _as_tuple(grad_outputs)
    gos = _make_grads(outputs, gos, is_batched=True)

    def vjp(*g_o):  # (one pass of the engine: it frees what it runs, as PyTorch's)
        return grad(
            outputs,
            inputs,
            g_o,
            retain_graph=retain_graph,
            create_graph=create_graph,
            allow_unused=allow_unused,
        )

    in_dims = tuple(0 if isinstance(g, Tensor) else None for g in gos)
    if None not in in_dims:
        in_dims = 0
    res = upcalls.vmap_call(
        vjp, in_dims, 0, "error", None, tuple(gos), {}, none_ok=True, legacy=True
    )
    return list(res)


def _is_checkpoint_valid() -> bool:
    """False inside a backward pass restricted to some inputs (``grad()``, ``inputs=``):
    the reentrant checkpoint cannot run there (torch.autograd._is_checkpoint_valid)."""
    return not _running or _running[-1][0].exec_info is None


upcalls.provide(backward=backward)


def swap_steps(run_node, accumulate) -> tuple:
    """Install the functions the engine calls for each node's step and each leaf's
    accumulation (the profiler's timing wrappers, while it runs); returns the ones they
    replace. The loops look both up at each call, so nothing is checked when none is
    swapped."""
    global _run_node, accumulate_grad
    old = (_run_node, accumulate_grad)
    _run_node, accumulate_grad = run_node, accumulate
    return old
