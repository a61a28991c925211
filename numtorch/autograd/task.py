"""The running graph task, as a backward pass's code sees it: the node executing now, the
task's id, whether it will run a node, its execution order; the multithreading flag; and
hooks on several tensors' gradients (register_multi_grad_hook)."""

from __future__ import annotations

import heapq
import itertools
import threading

from .._core.state import graph_tasks as _running
from .grad_mode import _Mode
from .node import Node, RemovableHandle, _Handle, edge_of

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
