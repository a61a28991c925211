"""The backward engine: a graph task per call, dependency counts, a ready queue.

Iterative throughout, so graphs of any depth run without recursion.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from .._core import upcalls
from .._core.state import anomaly, state
from .._core.tensor import Tensor
from ..ops.creation import ones_like, zeros_like
from . import anomaly_mode
from .graph import AccumulateGrad, GradientEdge, Node, _running, _task_ids, edge_of


class _GraphTask:
    __slots__ = (
        "deps", "exec_info", "targets", "captures", "keep_graph", "create_graph", "accumulate",
    )  # fmt: skip

    def __init__(self, keep_graph, create_graph, accumulate):
        self.keep_graph = keep_graph
        self.create_graph = create_graph
        self.accumulate = accumulate
        self.deps: dict = {}
        self.exec_info: set | None = None
        self.captures: dict = {}
        self.targets: set = set()


def _compute_dependencies(task: _GraphTask, roots) -> None:
    deps = task.deps
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


def _compute_exec_info(task: _GraphTask, roots, targets: set) -> None:
    """Mark the nodes on some path from a root to a capture target."""
    needed: set = set()
    # Iterative post-order: a node is needed if it is a target or any child is needed.
    visited = set()
    for root, _ in roots:
        if root is None or root in visited:
            continue
        stack = [(root, iter(root.next_functions))]
        visited.add(root)
        while stack:
            node, it = stack[-1]
            advanced = False
            for nxt, _ in it:
                if nxt is not None and nxt not in visited:
                    visited.add(nxt)
                    stack.append((nxt, iter(nxt.next_functions)))
                    advanced = True
                    break
            if advanced:
                continue
            stack.pop()
            if any(n in needed or n in targets for n, _ in node.next_functions):
                needed.add(node)
    if task.accumulate:
        needed |= {t for t in targets if isinstance(t, AccumulateGrad)}
    task.exec_info = needed
    task.targets = targets


def _validate(node: Node, grads: list) -> list:
    """Sum broadcast gradients to each input's shape and cast to its dtype."""
    flat_meta = node._edge_meta()
    for j, g in enumerate(grads):
        if g is None:
            continue
        shape, dtype = flat_meta[j]
        if type(g) is Tensor:
            gshape, gdtype = g._data.shape, g._data.dtype
        else:  # a transform's wrapper: its logical shape
            gshape, gdtype = tuple(g.shape), g.dtype.np
        if gshape != shape:
            from ..ops.reduction import sum_to_size

            g = sum_to_size.fn(g, shape)
        if gdtype != dtype:
            from .._core.dtype import from_np

            g = g.to(from_np(dtype))
        grads[j] = g
    return grads


def _run_hooks(hooks, grad):
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


def _accumulate(buf: list, i: int, g) -> None:
    cur = buf[i]
    buf[i] = g if cur is None else cur + g


def _execute(task: _GraphTask, roots, root_grads) -> None:
    from .grad_mode import set_grad_enabled

    buffers: dict = {}
    ready: list = []
    counter = 0
    exec_info = task.exec_info
    targets = task.targets
    captures = task.captures
    deps = task.deps
    push, pop = heapq.heappush, heapq.heappop
    track, check_nan = anomaly.enabled, anomaly.enabled and anomaly.check_nan
    for (node, nr), g in zip(roots, root_grads):
        if node is None:
            continue
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node.num_outputs
        _accumulate(buf, nr, g)
    for node in buffers:
        if deps.get(node, 0) == 0:
            push(ready, (-node._seq, counter, node))
            counter += 1
    with set_grad_enabled(task.create_graph):
        while ready:
            node = pop(ready)[2]
            if track:
                state.current_node = node
            grads = buffers.pop(node)
            is_leaf = type(node) is AccumulateGrad
            if is_leaf and node.variable._hooks and grads[0] is not None:
                grads[0] = _run_hooks(node.variable._hooks, grads[0])
            if node._hooked:
                _run_tensor_prehooks(node, grads)
            if captures and node in captures:
                for nr, slot in captures[node]:
                    slot[0] = grads[nr] if slot[0] is None else slot[0] + grads[nr]
            if exec_info is not None and node not in exec_info:
                continue
            if node._pre_hooks:
                grads = _run_node_prehooks(node, grads)
            if is_leaf:
                if task.accumulate:
                    _accumulate_grad(node.variable, grads[0], task.create_graph)
                if node._post_hooks:
                    _run_node_posthooks(node, [], grads)
                continue
            nexts = node.next_functions
            if exec_info is None:
                wanted = [n is not None for n, _ in nexts]
            else:
                wanted = [n is not None and (n in exec_info or n in targets) for n, _ in nexts]
            if True in wanted:
                outs = _validate(node, node.apply(grads, wanted))
            else:
                outs = [None] * len(nexts)
            if node._post_hooks:
                outs = _run_node_posthooks(node, outs, grads)
            if check_nan:
                anomaly_mode.check_nan(node, outs)
            if not task.keep_graph and node.saved:
                node.saved = None
            for (nxt, nr), g in zip(nexts, outs):
                if nxt is None:
                    continue
                buf = buffers.get(nxt)
                if buf is None:
                    buf = buffers[nxt] = [None] * nxt.num_outputs
                if g is not None:
                    cur = buf[nr]
                    buf[nr] = g if cur is None else cur + g
                d = deps[nxt] - 1
                deps[nxt] = d
                if d == 0:
                    push(ready, (-nxt._seq, counter, nxt))
                    counter += 1


def _run_tensor_prehooks(node: Node, grads: list) -> None:
    """Tensor hooks may replace a gradient; retain_grad hooks only observe it."""
    if node._tensor_pre_hooks:  # called with None for an output that got no gradient
        for nr, hooks in node._tensor_pre_hooks.items():
            grads[nr] = _run_hooks(hooks, grads[nr])
    if node._retain_hooks:
        for nr, hook in list(node._retain_hooks.items()):
            if grads[nr] is not None:
                hook(grads[nr])


def _run_node_prehooks(node: Node, grads: list) -> list:
    for h in list(node._pre_hooks):
        r = h(tuple(grads))
        if r is not None:
            grads = _check_hook_results(h, grads, r)
    return grads


def _run_node_posthooks(node: Node, outs: list, grads: list) -> list:
    for h in list(node._post_hooks):
        r = h(tuple(outs), tuple(grads))
        if r is not None:
            outs = _check_hook_results(h, outs, r)
    return outs


def _accumulate_grad(var: Tensor, g, create_graph: bool) -> None:
    if g is None:
        return
    while g._level > var._level and g._interp.is_forward:
        g = g._inner  # a leaf outside the dual level keeps the primal gradient
    if g._level == var._level and g._level:  # a dual leaf: its gradient carries a tangent
        var._grad = g if var._grad is None else var._grad + g
        return
    if g._level:
        raise RuntimeError(
            "numtorch: backward() inside a transform cannot accumulate a batched or "
            "transformed gradient into .grad; use autograd.grad instead"
        )
    if var._grad is None:
        if create_graph:
            var._grad = g
        else:
            from .._core.tensor import _make

            var._grad = _make(g._data.copy())
    elif create_graph or var._grad._rg:
        var._grad = var._grad + g
    else:
        gd = var._grad._data
        if gd.shape == g.shape and gd.flags.writeable:
            gd += g._data
            var._grad._ver.v += 1
        else:
            var._grad = var._grad + g
    post = var.__dict__.get("_post_acc_hooks")
    if post:
        for h in list(post):
            r = h(var)
            if r is not None:
                raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")


def _make_grads(outputs: Sequence[Tensor], grad_outputs, is_batched=False) -> list:
    res = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if out._rg:
                if out.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not out.dtype.is_floating_point:
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar outputs but got "
                        f"{out.dtype}"
                    )
                g = ones_like(out)
        elif isinstance(g, Tensor):
            if not is_batched and g.shape != out.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                    f"output[{i}] has a shape of {out.shape}."
                )
        else:
            raise TypeError(f"grad_outputs must be a Tensor or None, got {type(g).__name__}")
        res.append(g)
    return res


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    if isinstance(x, (Tensor, GradientEdge)):
        return (x,)
    return tuple(x)


def _roots(outputs: tuple) -> list:
    roots = []
    for i, out in enumerate(outputs):
        if not out._rg:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        roots.append(edge_of(out))
    return roots


def run_backward(outputs, grad_outputs, keep_graph, create_graph, inputs=None, accumulate=True):
    """Run a graph task; returns captured gradients for `inputs` (or None)."""
    outputs = _as_tuple(outputs)
    grad_outputs = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(
            f"grad requires one grad_output per output ({len(grad_outputs)} given for "
            f"{len(outputs)} outputs)"
        )
    roots = _roots(outputs)
    grads = _make_grads(outputs, grad_outputs)
    task = _GraphTask(keep_graph, create_graph, accumulate)
    _compute_dependencies(task, roots)
    slots = None
    if inputs is not None:
        slots = []
        targets = set()
        for t in inputs:
            if isinstance(t, GradientEdge):
                node, nr = t.node, t.output_nr
            else:
                node, nr = edge_of(t) if t._rg else (None, 0)
            slot = [None]
            slots.append(slot)
            if node is None:
                continue
            targets.add(node)
            if not accumulate or not isinstance(node, AccumulateGrad):
                task.captures.setdefault(node, []).append((nr, slot))
        _compute_exec_info(task, roots, targets)
    _running.append((task, roots, next(_task_ids)))
    try:
        if anomaly.enabled:
            anomaly_mode.run(_execute, task, roots, grads)
        else:
            _execute(task, roots, grads)
    finally:
        _running.pop()
    return slots


def backward(
    tensors,
    grad_tensors=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables=None,
    inputs=None,
) -> None:
    """Accumulate gradients of `tensors` into the leaves' ``.grad``."""
    if grad_variables is not None:
        grad_tensors = grad_variables
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        for t in inputs:
            if not isinstance(t, GradientEdge) and not t._rg:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
    slots = run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs)
    if inputs is not None:
        # Non-leaf inputs: accumulate the captured gradient into their .grad.
        for t, slot in zip(inputs, slots):
            if isinstance(t, Tensor) and not t.is_leaf and slot[0] is not None:
                _accumulate_grad(t, slot[0], create_graph)


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
    if retain_graph is None:
        retain_graph = create_graph
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("grad requires non-empty inputs.")
    for t in inputs:
        if not isinstance(t, GradientEdge) and not t._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if is_grads_batched:
        return _batched_grad(
            outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
            materialize_grads,
        )  # fmt: skip
    slots = run_backward(outputs, grad_outputs, retain_graph, create_graph, inputs, False)
    res = []
    for i, (t, slot) in enumerate(zip(inputs, slots)):
        g = slot[0]
        if g is None:
            if materialize_grads:
                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
        res.append(g)
    return tuple(res)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, mat):
    """grad with a leading batch dimension on every grad_output: one vmapped backward pass."""
    outputs = _as_tuple(outputs)
    grad_outputs = _as_tuple(grad_outputs)
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if isinstance(g, Tensor) and (g.dim() == 0 or tuple(g.shape[1:]) != tuple(out.shape)):
            raise RuntimeError(
                f"If `is_grads_batched=True`, we interpret the first dimension of each "
                f"grad_output as the batch dimension. The sizes of the remaining dimensions are "
                f"expected to match the shape of corresponding output, but a mismatch was "
                f"detected: grad_output[{i}] has a shape of {g.shape[2:]} and output[{i}] has a "
                f"shape of {out.shape}. If you only want some tensors in `grad_output` to be "
                f"considered batched, consider using vmap."
            )
    in_dims = tuple(0 if isinstance(g, Tensor) else None for g in grad_outputs)

    def one(*gos):
        return grad(
            outputs, inputs, gos, retain_graph=True, create_graph=create_graph,
            allow_unused=allow_unused, materialize_grads=mat,
        )  # fmt: skip

    res = upcalls.vmap_call(one, in_dims, 0, "error", None, grad_outputs, {}, none_ok=True)
    if not retain_graph:
        for out in outputs:
            _free_graph(out)
    return res


def _free_graph(out: Tensor) -> None:
    """Release saved values below ``out`` (what a non-retaining backward pass does)."""
    stack, seen = [out.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if node.saved:
            node.saved = None
        stack.extend(n for n, _ in node.next_functions)


upcalls.provide(backward=backward)
