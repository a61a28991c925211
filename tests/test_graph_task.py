"""The graph-task API (torch._C): the running node, the task id, the execution order,
_will_engine_execute_node, set_multithreading_enabled, and nodes' _input_metadata,
against torch."""

from __future__ import annotations

import pytest
import torch
from twolibs import arr, assert_same_error

import numtorch as nt
from numtorch.autograd import engine

LIBS = (nt, torch)


def diamond(lib):
    """a, b leaves; c = a * b; d = c.exp(); e = c.sin(); f = (d + e).sum()."""
    a = lib.tensor(arr(2, seed=0), requires_grad=True)
    b = lib.tensor(arr(2, seed=1), requires_grad=True)
    c = a * b
    d = c.exp()
    e = c.sin()
    return a, b, c, d, e, (d + e).sum()


def names(nodes):
    return [n.name() for n in nodes]


def test_outside_backward():
    for lib in LIBS:
        assert lib._C._current_autograd_node() is None
        assert lib._C._current_graph_task_id() == -1
    assert_same_error(lambda lib: lib._C._current_graph_task_execution_order())
    assert_same_error(lambda lib: lib._C._will_engine_execute_node(diamond(lib)[3].grad_fn))
    assert_same_error(lambda lib: lib._C._will_engine_execute_node(1))


def test_running_node_and_task_id_in_hooks():
    seen = {}
    for lib in LIBS:
        log = seen[lib] = []
        a, b, c, d, e, f = diamond(lib)

        def tensor_hook(g, lib=lib, log=log):
            node = lib._C._current_autograd_node()
            log.append(("tensor", node.name(), lib._C._current_graph_task_id()))

        def node_prehook(grads, lib=lib, log=log, e=e):
            log.append(("pre", lib._C._current_autograd_node() is e.grad_fn))

        def node_hook(gi, go, lib=lib, log=log, c=c):
            log.append(("post", lib._C._current_autograd_node() is c.grad_fn))

        d.register_hook(tensor_hook)
        e.grad_fn.register_prehook(node_prehook)
        c.grad_fn.register_hook(node_hook)
        f.backward(retain_graph=True)
        f.backward()
        assert lib._C._current_autograd_node() is None
    ids = [e[2] for e in seen[nt] if e[0] == "tensor"]
    ref = [e[2] for e in seen[torch] if e[0] == "tensor"]
    assert ids[1] - ids[0] == ref[1] - ref[0] == 1
    strip = [e[:2] for e in seen[nt]]
    assert strip == [e[:2] for e in seen[torch]]


def test_nested_backward_in_a_hook_restores_the_outer_node_and_id():
    seen = {}
    for lib in LIBS:
        log = seen[lib] = []
        x = lib.tensor(arr(3), requires_grad=True)
        y = x.exp()
        z = y.sum()

        def hook(g, lib=lib, log=log, x=x):
            outer = (lib._C._current_autograd_node().name(), lib._C._current_graph_task_id())
            with lib.enable_grad():
                w = (x * 3).sum()

            def inner_hook(g2):
                log.append(("inner", lib._C._current_autograd_node().name()))
                log.append(lib._C._current_graph_task_id() != outer[1])

            w.grad_fn.register_prehook(lambda gs: inner_hook(gs))
            lib.autograd.grad(w, x)
            log.append(("outer", lib._C._current_autograd_node().name()))
            log.append(lib._C._current_graph_task_id() == outer[1])

        y.register_hook(hook)
        z.backward()
    assert seen[nt] == seen[torch]


def execution_orders(lib):
    out = []

    def show(g):
        out.append(names(lib._C._current_graph_task_execution_order()))

    with lib.autograd.set_multithreading_enabled(False):
        a, b, c, d, e, f = diamond(lib)
        f.register_hook(show)
        f.backward(retain_graph=True)
        lib.autograd.grad(f, [c], retain_graph=True)
        lib.autograd.grad(f, [a], retain_graph=True)
        lib.autograd.grad(f, [a, b], retain_graph=True)
        f.backward(inputs=[b], retain_graph=True)
        d2, e2 = d.sum(), e.sum()
        e2.register_hook(show)  # the root that runs first
        lib.autograd.grad([d2, e2], [a], retain_graph=True)
        lib.autograd.backward([d2, e2])
    return out


def test_execution_order_equals_torch():
    assert execution_orders(nt) == execution_orders(torch)


def test_execution_order_needs_multithreading_disabled():
    def prog(lib):
        x = lib.tensor(arr(2), requires_grad=True)
        y = x.exp()
        y.register_hook(lambda g: lib._C._current_graph_task_execution_order())
        y.sum().backward()

    assert_same_error(prog)


def will_execute(lib):
    out = []
    a, b, c, d, e, f = diamond(lib)
    nodes = [f.grad_fn, d.grad_fn, e.grad_fn, c.grad_fn]

    def hook(g):
        out.append([lib._C._will_engine_execute_node(n) for n in nodes])
        try:  # a leaf's AccumulateGrad: True, False, or an error under autograd.grad
            out.append(lib._C._will_engine_execute_node(c.grad_fn.next_functions[0][0]))
        except RuntimeError as err:
            out.append(str(err))

    d.register_hook(hook)
    f.backward(retain_graph=True)
    lib.autograd.grad(f, [c], retain_graph=True)
    lib.autograd.grad(f, [a], retain_graph=True)
    f.backward(inputs=[b], retain_graph=True)
    lib.autograd.grad(f, [d], retain_graph=True, allow_unused=True)
    lib.autograd.backward([d.sum(), e.sum()])
    return out


def test_will_engine_execute_node_equals_torch():
    assert will_execute(nt) == will_execute(torch)


def test_set_multithreading_enabled_forms():
    for lib in LIBS:
        C = lib._C
        assert C._is_multithreading_enabled()
        with lib.autograd.set_multithreading_enabled(False):
            assert not C._is_multithreading_enabled()
        assert C._is_multithreading_enabled()
        lib.autograd.set_multithreading_enabled(False)
        assert not C._is_multithreading_enabled()
        lib.autograd.set_multithreading_enabled(True)

        @lib.autograd.set_multithreading_enabled(False)
        def f():
            return C._is_multithreading_enabled()

        assert f() is False
        lib.autograd.set_multithreading_enabled(True)


def metadata(lib):
    x = lib.tensor(arr(3, 4), requires_grad=True)
    mx = x.max(1)
    nodes = [
        x.exp().grad_fn,
        x.sum().grad_fn,
        mx.values.grad_fn,
        x.to(lib.float32).grad_fn,
        x.exp().grad_fn.next_functions[0][0],
    ]
    return [
        [(m.shape, str(m.dtype), str(m.device), m.is_nested_tensor) for m in n._input_metadata]
        for n in nodes
    ]


def test_input_metadata_equals_torch():
    assert metadata(nt) == metadata(torch)


class _FakeCuda:
    type = "cuda"

    def __hash__(self):
        return 1

    def __eq__(self, other):
        return isinstance(other, _FakeCuda)


class _FakeGrad:
    device = _FakeCuda()


def test_ready_queue_by_device_of_the_first_output():
    """A node whose gradient lives on another device waits in that device's queue; the
    next node is the highest priority among the queue heads."""
    x = nt.tensor(arr(3), requires_grad=True)
    cpu_node, gpu_node = x.exp().grad_fn, x.sin().grad_fn
    ready, queues = [], {}
    assert engine._device_queue(ready, queues, cpu_node, [None, x]) is ready
    q = engine._device_queue(ready, queues, gpu_node, [_FakeGrad()])
    assert q is not ready and queues == {_FakeCuda(): q} and gpu_node._device.type == "cuda"
    ready.append((-cpu_node._seq, engine._Entry(cpu_node)))
    q.append((-gpu_node._seq, engine._Entry(gpu_node)))
    assert engine._pop_next(ready, queues) is gpu_node  # created last: runs first
    assert queues == {}  # an emptied device queue is dropped
    assert engine._pop_next(ready, queues) is cpu_node
    assert gpu_node._input_metadata[0].device.type == "cuda"


@pytest.mark.parametrize("create_graph", [False, True])
def test_cpu_order_is_unchanged(create_graph):
    """The order nodes run in (seen from their pre-hooks) equals torch's."""
    orders = {}
    for lib in LIBS:
        log = orders[lib] = []
        a, b, c, d, e, f = diamond(lib)
        g = (c * 2 + d * e).sum() + f
        stack, seen = [g.grad_fn], set()
        while stack:
            n = stack.pop()
            if n is None or n in seen:
                continue
            seen.add(n)
            n.register_prehook(lambda gs, n=n, log=log: log.append(n.name()))
            stack.extend(m for m, _ in n.next_functions)
        g.backward(create_graph=create_graph)
    assert orders[nt] == orders[torch]


def _leaf_order(lib, n, mixed):
    """The order n leaves accumulate in (seen from post-accumulate-grad hooks) when one
    node's backward makes them ready together; ``mixed``: with other nodes between them."""
    leaves = [lib.tensor(arr(2, seed=k), requires_grad=True) for k in range(n)]
    order = []
    for k, t in enumerate(leaves):
        t.register_post_accumulate_grad_hook(lambda _, k=k: order.append(k))
    parts = [t.exp() if mixed and k % 3 == 1 else t for k, t in enumerate(leaves)]
    (lib.cat(parts) * 2).sum().backward()
    return order


@pytest.mark.parametrize("mixed", [False, True])
def test_leaves_ready_together_accumulate_in_torch_order(mixed):
    """Leaves share one priority: PyTorch's ready queue (a binary heap) runs them in its
    heap's order, not first in first out (4 leaves: 0, 2, 1, 3)."""
    for n in range(1, 9):
        assert _leaf_order(nt, n, mixed) == _leaf_order(torch, n, mixed), n
    assert _leaf_order(torch, 4, False) == [0, 2, 1, 3]
