"""The eager engine against PyTorch: each program runs unchanged on both libraries."""

from __future__ import annotations

import sys
import threading
import warnings

import numpy as np
import pytest
import torch
from twolibs import assert_close, assert_same, assert_same_error, assert_same_outcome, run_both

import numtorch as nt
from numtorch._core.op import defop

# The engine's programs (float32, torch's default dtype, unless they say otherwise) are
# compared at these tolerances unless a test passes its own.
F32 = {"rtol": 1e-6, "atol": 1e-7}


# ------------------------------------------------------------------ accumulation
def test_grad_accumulates_across_backward_calls():
    def prog(T):
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (x * x).sum().backward()
        (x * 3).sum().backward()
        return x.grad

    assert_same(prog, **F32)


def test_gradients_to_the_same_input_are_summed():
    def prog(T):
        x = T.tensor([1.0, -2.0, 0.5], requires_grad=True)
        y = x * x + x.exp() * x + x
        y.sum().backward()
        return x.grad

    assert_same(prog, **F32)


def test_broadcast_gradients_are_reduced_to_input_shape():
    def prog(T):
        a = T.tensor([[1.0], [2.0]], requires_grad=True)
        b = T.tensor([3.0, 4.0, 5.0], requires_grad=True)
        c = T.tensor(2.0, requires_grad=True)
        ((a * b + c) * (a + b)).sum().backward()
        return [a.grad, b.grad, c.grad]

    assert_same(prog, **F32)


def test_mixed_dtype_gradient_is_cast_to_input_dtype():
    def prog(T):
        a = T.tensor([1.0, 2.0], requires_grad=True)
        b = T.tensor([3.0, 4.0], dtype=T.float64, requires_grad=True)
        (a * b).sum().backward()
        return [a.grad, b.grad, str(a.grad.dtype), str(b.grad.dtype)]

    assert_same(prog, rtol=1e-7, atol=0)


def test_retain_graph_allows_second_backward():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        return x.grad

    assert_same(prog, **F32)


def test_backward_on_leaf_and_gradient_argument():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.backward(T.tensor([0.5, -1.0]))
        x.backward(T.tensor([1.0, 1.0]))
        return x.grad

    assert_same(prog, **F32)


@pytest.mark.parametrize("hooked", ["a", "b", "c"])
@pytest.mark.parametrize("post", [False, True])
def test_hooks_see_the_leaves_accumulated_before_them(hooked, post):
    """Leaves made ready together accumulate in PyTorch's order: a leaf's hook (a tensor
    hook, or a post-accumulate-grad hook) sees the .grad of the leaves that went before it,
    and not of those after; a weight used twice accumulates its summed gradient."""

    def prog(T):
        a = T.tensor([1.0, 2.0], requires_grad=True)
        b = T.tensor([3.0, 4.0], requires_grad=True)
        c = T.tensor([5.0, 6.0], requires_grad=True)
        leaves = {"a": a, "b": b, "c": c}
        seen = []

        def hook(_):
            seen.append([None if v.grad is None else v.grad.tolist() for v in leaves.values()])

        t = leaves[hooked]
        t.register_post_accumulate_grad_hook(hook) if post else t.register_hook(hook)
        for _ in range(2):
            ((a * b) * c + a * b).sum().backward()
        return seen

    assert_same(prog, **F32)


# ------------------------------------------------------------------ errors, word for word
def test_error_backward_through_freed_graph():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward()
        y.backward()

    assert_same_error(prog)


def test_error_saved_tensor_modified_inplace():
    def prog(T):
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.exp()
        z = y * y
        y.add_(1)
        z.sum().backward()

    assert_same_error(prog)


_M = [[2.0, 0.5, 0.1], [0.3, 1.5, 0.2], [0.1, 0.4, 3.0]]


# (op of x, which output is written in place, or None: the result) for the ops whose node
# keeps their outputs, as PyTorch's does (issue 35)
SAVED_OUTPUTS = {
    "exp": (lambda T, x: x.exp(), None),
    "tanh": (lambda T, x: x.tanh(), None),
    "sigmoid": (lambda T, x: x.sigmoid(), None),
    "exp-complex": (lambda T, x: (x * (1 + 1j)).exp(), None),
    "pinv": (lambda T, x: T.linalg.pinv(x), None),
    "pinverse": (lambda T, x: T.pinverse(x), None),
    "inv": (lambda T, x: T.linalg.inv(x), None),
    "slogdet-sign": (lambda T, x: T.linalg.slogdet(x), 0),
    "slogdet-logabsdet": (lambda T, x: T.linalg.slogdet(x), 1),
    "det": (lambda T, x: T.linalg.det(x), None),
    "cholesky": (lambda T, x: T.linalg.cholesky(x @ x.mT), None),
    "eigvalsh": (lambda T, x: T.linalg.eigvalsh(x + x.mT), None),
    "eigh-values": (lambda T, x: T.linalg.eigh(x + x.mT), 0),
    "solve_triangular": (
        lambda T, x: T.linalg.solve_triangular(x.triu(), x.tril(), upper=True),
        None,
    ),
    "sort-values": (lambda T, x: x.sort(1), 0),
    "topk-values": (lambda T, x: x.topk(2, 1), 0),
    "max-values": (lambda T, x: x.max(1), 0),
    "softmax": (lambda T, x: x.softmax(0), None),
}


@pytest.mark.parametrize("name", list(SAVED_OUTPUTS))
def test_error_saved_output_modified_inplace(name):
    """An output the node keeps, written in place before backward: PyTorch's text, which
    names the tensor's type and shape, the node and output, and the two versions; an output
    it does not keep (sort's values, slogdet's logabsdet): the gradient."""
    f, k = SAVED_OUTPUTS[name]

    def prog(T):
        x = T.tensor(_M, dtype=T.float64, requires_grad=True)
        out = f(T, x)
        outs = list(out) if isinstance(out, tuple) else [out]
        (outs[0] if k is None else outs[k]).mul_(2)
        loss = sum(o.abs().sum() for o in outs if o.dtype.is_floating_point or o.is_complex())
        loss.backward()
        return x.grad

    assert_same_outcome(prog)


def test_error_saved_leaf_modified_inplace():
    def prog(T):
        x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        w = T.tensor([[1.0, 2.0], [3.0, 4.0]])
        y = x * w
        w.add_(1)
        y.sum().backward()

    assert_same_error(prog)


def test_error_inplace_on_leaf_requiring_grad():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        x.add_(1)

    assert_same_error(prog)


def test_error_no_grad_fn():
    def prog(T):
        x = T.tensor([1.0, 2.0])
        (x * 2).sum().backward()

    assert_same_error(prog)


def test_error_implicit_grad_for_non_scalar():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        (x * 2).backward()

    assert_same_error(prog)


def test_error_unused_input():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = T.tensor([1.0, 2.0], requires_grad=True)
        T.autograd.grad((x * 2).sum(), [x, y])

    assert_same_error(prog)


def test_error_input_does_not_require_grad():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = T.tensor([1.0, 2.0])
        T.autograd.grad((x * 2).sum(), [x, y])

    assert_same_error(prog)


def test_error_grad_output_shape_mismatch():
    def prog(T):
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        T.autograd.grad(x * 2, x, T.tensor([1.0, 2.0]))

    assert_same_error(prog)


def test_error_requires_grad_on_integer_tensor():
    def prog(T):
        T.tensor([1, 2]).requires_grad_()

    assert_same_error(prog)


def test_allow_unused_and_materialize_grads():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = T.tensor([3.0], requires_grad=True)
        a = T.autograd.grad((x * 2).sum(), [x, y], allow_unused=True, retain_graph=True)
        b = T.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True)
        return [a[0], a[1], b[0], b[1]]

    assert_same(prog, **F32)


# ------------------------------------------------------------------ graph structure
def test_node_names_next_functions_and_metadata():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = T.tensor([3.0, 4.0])
        z = (x * y + 1).exp().sum()
        fn = z.grad_fn
        names = [fn.name(), fn.next_functions[0][0].name()]
        mul = fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]
        names.append(mul.name())
        names.append([None if n is None else n.name() for n, _ in mul.next_functions])
        fn.metadata["k"] = 1
        return names, fn.metadata["k"], type(fn.metadata).__name__

    assert_same(prog)


def _order_of_execution(T, reorder: bool):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    a = x * 2
    b = x * 3
    order = []
    for t, name in [(a, "a"), (b, "b")]:
        t.grad_fn.register_prehook(lambda g, name=name: order.append(name))
    if reorder:
        a.grad_fn._set_sequence_nr(b.grad_fn._sequence_nr() + 1)
    (a + b).sum().backward()
    return order


@pytest.mark.parametrize("reorder", [False, True])
def test_ready_queue_runs_the_node_created_last_first(reorder):
    order = assert_same(_order_of_execution, reorder)
    assert order == (["a", "b"] if reorder else ["b", "a"])


def test_sequence_numbers_grow_in_creation_order():
    x = nt.tensor([1.0], requires_grad=True)
    a, b = x * 2, x * 3
    assert b.grad_fn._sequence_nr() > a.grad_fn._sequence_nr()


def test_exec_info_prunes_unneeded_formulas():
    calls = []

    def vjp_a(g, b):
        calls.append("da")
        return g * b

    def vjp_b(g, a):
        calls.append("db")
        return g * a

    op = defop("counting_mul", lambda xp, a, b: a * b, vjp=(vjp_a, vjp_b), jvp=None, register=False)
    x = nt.tensor([1.0, 2.0], requires_grad=True)
    w = nt.tensor([3.0, 4.0], requires_grad=True)
    (gx,) = nt.autograd.grad(op.fn(x, w).sum(), x)
    assert calls == ["da"]
    np.testing.assert_allclose(gx.numpy(), [3.0, 4.0])
    calls.clear()
    op.fn(x, w).sum().backward(inputs=[w])
    assert calls == ["db"] and x.grad is None
    np.testing.assert_allclose(w.grad.numpy(), [1.0, 2.0])


def test_grad_with_respect_to_intermediate():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        h = x * x
        y = (h * 3).sum() + h.sum()
        return list(T.autograd.grad(y, [h, x]))

    assert_same(prog, **F32)


def test_backward_inputs_accumulates_only_requested():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        w = T.tensor([3.0, 4.0], requires_grad=True)
        h = x * w
        h.retain_grad()
        (h * h).sum().backward(inputs=[x])
        return [x.grad, w.grad, h.grad]

    assert_same(prog, **F32)


# ------------------------------------------------------------------ higher order
def test_third_order_derivative():
    def prog(T):
        x = T.tensor([0.5, -1.5, 2.0], requires_grad=True)
        y = (x * x * x * x.exp()).sum()
        (g1,) = T.autograd.grad(y, x, create_graph=True)
        (g2,) = T.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = T.autograd.grad(g2.sum(), x)
        return [g1, g2, g3]

    assert_same(prog, **F32)


def test_grad_under_create_graph_is_a_new_differentiable_tensor():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        (x * x * x).sum().backward(create_graph=True)
        g = x.grad
        out = [g.requires_grad, g.grad_fn is not None]
        (g2,) = T.autograd.grad(g.sum(), x)
        return out, g2.numpy().tolist()

    assert_same(prog, rtol=0, atol=0)


def test_deep_graph_has_no_recursion_limit():
    x = nt.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + 1.0
    y.backward()
    assert x.grad.item() == 1.0
    assert sys.getrecursionlimit() < 100_000


# ------------------------------------------------------------------ hooks
def test_tensor_hooks_and_retain_grad():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        x.register_hook(lambda g: g * 10)
        h = x * x
        h.retain_grad()
        h.register_hook(lambda g: seen.append(g.clone()) or g * 2)
        h.sum().backward()
        return [x.grad, h.grad, seen[0]]

    assert_same(prog, **F32)


def test_hook_handle_removal():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        handle = x.register_hook(lambda g: g * 10)
        handle.remove()
        (x * 1.0).sum().backward()
        return x.grad

    assert_same(prog, **F32)


def test_retain_grad_follows_inplace():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        h = x * 2
        h.retain_grad()
        h.mul_(3)
        (h * h).sum().backward()
        return [x.grad, h.grad]

    assert_same(prog, **F32)


# ------------------------------------------------------------------ in-place and views
def test_inplace_rebases_history():
    def prog(T):
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        y.mul_(x)
        y.add_(1)
        y.exp_()
        y.sum().backward()
        return [x.grad, y.grad_fn.name()]

    assert_same(prog, rtol=1e-6, atol=0)


def test_views_share_memory_and_version():
    x = nt.zeros(2, 3)
    v = x.reshape(6)
    e = x.expand(4, 2, 3)
    v.add_(1)
    assert x._version == v._version == e._version == 1
    assert x.sum().item() == 6.0 and v._base is x


def test_inplace_through_view_rebases_base_history():
    def prog(T):
        x = T.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        base = x * 1.0
        v = base.reshape(2, 2)
        v.mul_(x.reshape(2, 2))
        y = (base * T.tensor([1.0, 2.0, 3.0, 4.0])).sum()
        y.backward()
        return [x.grad, base.grad_fn.name()]

    ours = assert_same(prog, rtol=1e-7, atol=0)
    assert ours[1] == "torch::autograd::CopySlices"


def test_inplace_into_view_of_non_grad_base():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        out = T.zeros(2, 2)
        out.reshape(4).reshape(2, 2).mul_(0.5)
        row = out.reshape(4)
        sibling = out.reshape(2, 2)
        row.add_((x * x).expand(2, 2).reshape(4))
        return [T.autograd.grad((sibling * sibling).sum(), x)[0], sibling.requires_grad]

    ours, theirs = run_both(prog)
    assert_close(ours, theirs, rtol=1e-7, atol=0)
    assert theirs[1] is True


def test_error_inplace_on_view_of_leaf():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        x.reshape(2, 1).mul_(2)

    assert_same_error(prog)


def test_inplace_under_no_grad_on_leaf_is_allowed():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        with T.no_grad():
            x.mul_(2)
        (x * x).sum().backward()
        return [x.grad, x._version]

    assert_same(prog, rtol=1e-7, atol=0)


# ------------------------------------------------------------------ grad modes
def test_grad_modes_as_context_and_decorator():
    def prog(T):
        x = T.tensor([1.0], requires_grad=True)
        out = []
        with T.no_grad():
            out.append((x * 2).requires_grad)
            with T.enable_grad():
                out.append((x * 2).requires_grad)
        with T.set_grad_enabled(False):
            out.append(T.is_grad_enabled())
        out.append(T.is_grad_enabled())

        @T.no_grad()
        def f(y):
            return (y * 2).requires_grad

        out.append(f(x))
        with T.inference_mode():
            out.append((x * 2).requires_grad)
        T.set_grad_enabled(False)
        out.append(T.is_grad_enabled())
        T.set_grad_enabled(True)
        return out

    assert_same(prog)


def test_grad_mode_is_thread_local():
    results = []

    def worker():
        results.append(nt.is_grad_enabled())

    with nt.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert results == [True]


def test_detach_shares_memory_and_stops_gradient():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        d = x.detach()
        y = (x * d).sum()
        y.backward()
        return [x.grad, d.requires_grad]

    ours, theirs = run_both(prog)
    assert_close(ours, theirs, rtol=1e-7, atol=0)
    assert theirs[1] is False


def test_same_output_twice_and_multi_output_roots():
    def prog(T):
        x = T.tensor([1.0, -2.0, 0.5], dtype=T.float64, requires_grad=True)
        s = (x * 2).sum()
        v, m = T.var_mean(x * x)
        return [T.autograd.grad([s, s], [x])[0], T.autograd.grad([v, m], [x])[0]]

    assert_same(prog, **F32)


SETITEM_PROGRAMS = {
    "basic_slice": lambda T, x, w: _assign(T.zeros(3, 4), (slice(None), 1), x[:3] * w[0]),
    "int_row": lambda T, x, w: _assign((x.reshape(2, 2) * 1).repeat(2, 2), 1, w),
    "step_slice": lambda T, x, w: _assign(T.ones(4, 4) * x[0], (slice(None, None, 2), 0), w[:2]),
    "advanced": lambda T, x, w: _assign(x * 2, T.tensor([0, 2]), w[1:3]),
    "mask": lambda T, x, w: _assign(x * 1, x > 0, 0.0),
    "scalar_tensor": lambda T, x, w: _assign(T.zeros(2, 2), (0, 1), (x * w).sum()),
    "nested_view": lambda T, x, w: _nested(T, x, w),
}


def _assign(base, index, value):
    base[index] = value
    return base


def _nested(T, x, w):
    base = T.zeros(4, 4) + x[3]
    row = base[1]
    row[1:3] = x[:2] * w[:2]
    row.mul_(w[3])
    return base * base.sum()


@pytest.mark.parametrize("name", sorted(SETITEM_PROGRAMS))
def test_setitem_and_inplace_through_views_match_torch(name):
    def prog(T):
        x = T.tensor([0.5, -1.0, 2.0, 1.5], requires_grad=True)
        w = T.tensor([3.0, -2.0, 0.25, 1.25], requires_grad=True)
        out = SETITEM_PROGRAMS[name](T, x, w)
        v = T.arange(out.numel(), dtype=out.dtype).reshape(out.shape)
        gx, gw = T.autograd.grad((out * v).sum(), [x, w], allow_unused=True, materialize_grads=True)
        return [out, gx, gw]

    assert_same(prog, **F32)


def test_grad_dtype_sets_the_dtype_leaves_accumulate_in_as_pytorch():
    def prog(L):
        x = L.ones(2, requires_grad=True)
        before = x.grad_dtype
        x.grad_dtype = L.float64
        (x * 2).sum().backward()
        (x * 3).sum().backward()
        w = L.ones(2, requires_grad=True)
        w.grad_dtype = None
        w.grad = L.ones(2, dtype=L.float64)
        return str(before), str(x.grad_dtype), x.grad, str(w.grad_dtype), w.grad

    assert_same(prog)
    for lib in (nt, torch):
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="grad_dtype can only be set on leaf tensors"):
            (x * 2).grad_dtype = lib.float64
        with pytest.raises(RuntimeError, match="grad_dtype can only be accessed on leaf"):
            _ = (x * 2).grad_dtype
        with pytest.raises(RuntimeError, match="must be a torch.dtype or None, but got str"):
            x.grad_dtype = "a"
        x.grad_dtype = lib.float64
        with pytest.raises(RuntimeError, match="to a tensor with grad_dtype 'Double'"):
            x.grad = lib.ones(2)


# ------------------------------------------------------------------ non-differentiable inputs
def _gamma_grad(L, alpha, out, which):
    """_standard_gamma_grad with ``which`` of its inputs requiring grad."""
    alpha = alpha.requires_grad_() if "alpha" in which else alpha
    out = out.requires_grad_() if "out" in which else out
    return L._standard_gamma_grad(alpha, out)


@pytest.mark.parametrize("which", [("out",), ("alpha",), ("alpha", "out")])
def test_a_non_differentiable_input_alone_does_not_make_the_result_require_grad(which):
    """As in PyTorch: a result requires grad when an input with a derivative formula does
    (a not_implemented one included), never because of a non_differentiable input alone
    (_standard_gamma_grad's ``output``)."""
    alpha, out = np.array([1.5, 2.0, 3.0]), np.array([0.7, 1.9, 2.5])

    def prog(L, alpha, out):
        r = _gamma_grad(L, alpha, out, which)
        return r.requires_grad, r.is_leaf, type(r.grad_fn).__name__, r.detach()

    assert_same(prog, alpha, out, rtol=1e-3)  # (PyTorch's values are approximations)
    assert_same_error(lambda L, a, o: _gamma_grad(L, a, o, which).sum().backward(), alpha, out)


def test_a_non_differentiable_input_under_the_transforms():
    alpha, out = np.array([1.5, 2.0]), np.array([0.7, 1.9])

    def under_grad(L, a, o):
        return L.func.grad(lambda y: L._standard_gamma_grad(a, y).sum())(o)

    def under_vmap_grad(L, a, o):
        f = L.func.grad(lambda y: L._standard_gamma_grad(a, y).sum())
        return L.func.vmap(f)(o.expand(3, 2))

    def in_grad_mode(L, a, o):
        with L.enable_grad():
            r = L._standard_gamma_grad(a, o.requires_grad_())
        return r.requires_grad

    for prog in (under_grad, under_vmap_grad, in_grad_mode):
        assert_same(prog, alpha, out)


def test_not_implemented_derivatives_still_require_grad():
    """histogram's bins have no derivative in PyTorch, but a not_implemented one: the
    result requires grad and backward raises."""
    x = np.linspace(-1.0, 1.0, 7)
    bins = np.array([-1.0, 0.0, 0.5, 1.0])

    def hist(L, x, bins):
        return L.histogram(x, bins.requires_grad_())

    def hist_dd(L, x, bins):
        return L.histogramdd(x.reshape(7, 1), [bins.requires_grad_()])

    def flags(r):
        edges = r.bin_edges if isinstance(r.bin_edges, (list, tuple)) else [r.bin_edges]
        return r.hist.requires_grad, [e.requires_grad for e in edges]

    for f in (hist, hist_dd):
        assert_same(lambda L, x, b: flags(f(L, x, b)), x, bins)
        assert_same_error(lambda L, x, b: f(L, x, b).hist.sum().backward(), x, bins)


# ------------------------------------------------------------------ end-of-backward callbacks
def _engine(L):
    return L.autograd.Variable._execution_engine


class _Log(list):
    """What the hooks and callbacks saw, with graph task ids numbered from 0 in order of
    appearance (the two libraries count tasks from different starts)."""

    def __init__(self, L):
        super().__init__()
        self.L, self.ids = L, {}

    def task(self):
        return self.ids.setdefault(self.L._C._current_graph_task_id(), len(self.ids))

    def callback(self, name, *tensors):
        L = self.L

        def run():
            grads = [None if t.grad is None else t.grad.tolist() for t in tensors]
            node = L._C._current_autograd_node()
            self.append((name, self.task(), L.is_grad_enabled(), node is None, grads))

        return run


def _ddp_like(L, passes, **backward_kw):
    """DDP's pattern: post-accumulate-grad hooks queue one callback per pass; a callback
    queues another; they run after every gradient is in .grad."""
    log = _Log(L)
    w = L.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
    b = L.tensor([0.5, -0.5], requires_grad=True)
    queued = []

    def finish():
        log.callback("finish", w, b)()
        _engine(L).queue_callback(log.callback("after finish", w, b))

    def post(t):
        log.append(("post", t.shape[0] if t.dim() == 1 else "w", log.task()))
        if not queued:
            queued.append(True)
            _engine(L).queue_callback(finish)

    for p in (w, b):
        p.register_post_accumulate_grad_hook(post)
    x = L.tensor([[1.0, -1.0], [2.0, 0.5]])
    y = L.tanh(x @ w + b).pow(2).sum()
    y.register_hook(lambda g: log.append(("y hook", log.task())))
    for _ in range(passes):
        queued.clear()
        y.backward(**backward_kw)
    return list(log), w.grad, b.grad


def test_callbacks_run_after_every_hook_in_order():
    assert_same(lambda L: _ddp_like(L, 1), **F32)


def test_callbacks_run_once_per_pass_with_retain_graph():
    assert_same(lambda L: _ddp_like(L, 3, retain_graph=True), **F32)


def test_callbacks_run_under_the_pass_grad_mode():
    with warnings.catch_warnings():  # (create_graph=True with backward(): a cycle warning)
        warnings.simplefilter("ignore")
        torch_result = _ddp_like(torch, 1, create_graph=True)
        ours = _ddp_like(nt, 1, create_graph=True)
    assert [e[:4] for e in ours[0]] == [e[:4] for e in torch_result[0]]
    assert ours[0][-1][2] is True  # grad mode on in the callbacks


def test_callbacks_run_for_autograd_grad_too():
    def prog(L):
        log = _Log(L)
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.register_hook(lambda g: _engine(L).queue_callback(log.callback("cb", x)))
        (g,) = L.autograd.grad(y, x)
        return list(log), g

    assert_same(prog)


def test_queue_callback_outside_a_backward_pass_raises():
    assert_same_error(lambda L: _engine(L).queue_callback(lambda: None))


@pytest.mark.parametrize("args", [(), (1, 2)], ids=["none", "two"])
def test_queue_callback_takes_one_argument(args):
    assert_same_error(lambda L: _engine(L).queue_callback(*args))


def _hook_then_callbacks(L, what):
    log = _Log(L)
    x = L.tensor([1.0, 2.0], requires_grad=True)

    def fail():
        raise ValueError("callback failed")

    def hook(g):
        E = _engine(L)
        E.queue_callback(log.callback("first", x))
        if what == "callback":
            E.queue_callback(fail)
        E.queue_callback(log.callback("never" if what != "none" else "last", x))
        if what == "hook":
            raise KeyError("hook failed")
        if what == "not callable":
            E.queue_callback(3)  # accepted; calling it fails

    y = (x * 3).sum()
    y.register_hook(hook)
    try:
        y.backward()
    except Exception as e:
        log.append((type(e).__name__, str(e)))
    (x * 2).sum().backward()  # a failed pass leaves nothing queued for the next one
    return list(log), x.grad


@pytest.mark.parametrize("what", ["none", "callback", "hook", "not callable"])
def test_a_failure_ends_the_callbacks(what):
    assert_same(lambda L: _hook_then_callbacks(L, what))


def test_callbacks_belong_to_the_innermost_pass():
    def prog(L):
        log = _Log(L)
        x = L.tensor([1.0, 2.0], requires_grad=True)
        z = L.tensor([3.0], requires_grad=True)

        def outer_hook(g):
            _engine(L).queue_callback(log.callback("outer", x, z))
            with L.enable_grad():
                w = (z * z).sum()
            w.register_hook(lambda g: _engine(L).queue_callback(log.callback("inner", x, z)))
            w.backward()
            log.append(("inner pass returned", log.task()))

        y = (x * 2).sum()
        y.register_hook(outer_hook)
        y.backward()
        return list(log)  # (the inner callbacks see the outer pass's node as current)

    assert_same(prog)


def test_a_callback_may_run_another_backward_pass():
    def prog(L):
        log = _Log(L)
        x = L.tensor([1.0, 2.0], requires_grad=True)
        z = L.tensor([3.0], requires_grad=True)

        def again():
            with L.enable_grad():
                w = (z * z).sum()
            w.register_hook(lambda g: _engine(L).queue_callback(log.callback("nested", z)))
            w.backward()
            log.callback("again done", x, z)()

        y = (x * 2).sum()
        y.register_hook(lambda g: _engine(L).queue_callback(again))
        y.backward()
        return list(log)

    assert_same(prog)


def test_callbacks_run_in_the_thread_that_ran_the_pass():
    def prog(L):
        log = []
        x = L.tensor([1.0, 2.0], requires_grad=True)

        def elsewhere():  # another thread is not inside the pass
            try:
                _engine(L).queue_callback(lambda: None)
            except RuntimeError as e:
                log.append(str(e))

        def hook(g):
            _engine(L).queue_callback(lambda: log.append(threading.current_thread().name))
            t = threading.Thread(target=elsewhere)
            t.start()
            t.join()

        y = (x * 2).sum()
        y.register_hook(hook)
        runner = threading.Thread(target=y.backward, name="runner")
        runner.start()
        runner.join()
        return log

    assert_same(prog)


def test_callbacks_run_under_compiled_autograd():
    from numtorch._dynamo import compiled_autograd as ca
    from numtorch._dynamo.utils import counters

    def prog(L, compiled):
        log = _Log(L)
        x = L.tensor([1.0, 2.0], requires_grad=True)
        x.register_post_accumulate_grad_hook(
            lambda t: _engine(L).queue_callback(log.callback("cb", t))
        )
        y = (x * x).sum()
        if compiled:
            ca.reset()  # (a fresh cache: this pass is captured)
            before = counters["compiled_autograd"]["captures"]
            with ca._enable(lambda graph: graph):
                y.backward()
            assert counters["compiled_autograd"]["captures"] == before + 1
            ca.reset()
        else:
            y.backward()
        return list(log), x.grad

    assert_close(prog(nt, True), prog(nt, False))
    assert_close(prog(nt, True), prog(torch, False))


def test_variable_is_every_tensor():
    def prog(L):
        V = L.autograd.Variable
        a = L.tensor([1.0, 2.0], requires_grad=True)
        h = a * 2
        v = V(h)
        w = V(h, requires_grad=True)
        v.add_(1)  # shares h's data
        return (
            isinstance(a, V),
            isinstance(3, V),
            issubclass(L.Tensor, V),
            v.requires_grad,
            v.grad_fn is None,
            w.requires_grad and w.is_leaf,
            h.tolist(),
            V().tolist(),
            _engine(L).is_checkpoint_valid(),
        )

    assert_same(prog)
    assert_same_error(lambda L: L.autograd.Variable(3))
    assert_same_error(lambda L: L.autograd.Variable([1.0]))
