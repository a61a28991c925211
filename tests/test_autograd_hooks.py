"""Autograd hooks against PyTorch: saved-tensor hooks, hook result checks, AccumulateGrad
hooks, post-accumulate-grad hooks, multi-grad hooks and gradient edges."""

from __future__ import annotations

import pytest
from twolibs import assert_same, assert_same_error, run_both

F32 = {"rtol": 1e-6, "atol": 1e-7}


def _g(t):
    return None if t is None else t.detach().clone()


# ------------------------------------------------------------------ saved tensor hooks
def test_saved_tensors_hooks_pack_at_save_unpack_in_backward():
    def prog(T):
        log = []

        def pack(t):
            log.append(("pack", t.requires_grad, T.is_grad_enabled()))
            return ("box", t * 1)

        def unpack(box):
            log.append("unpack")
            return box[1]

        x = T.tensor([0.5, 1.0], requires_grad=True)
        with T.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x.sin()
            log.append("fwd")
            z = y.exp()
        w = z.sum() * 1  # recorded outside: no pack
        log.append("bwd")
        w.backward()
        return log, x.grad

    assert_same(prog, **F32)


def test_saved_tensors_hooks_nest_and_restore():
    def prog(T):
        log = []
        G = T.autograd.graph
        outer = G.saved_tensors_hooks(lambda t: log.append("outer") or t, lambda t: t)
        inner = G.saved_tensors_hooks(lambda t: log.append("inner") or t, lambda t: t)
        x = T.tensor([0.5, 1.0], requires_grad=True)
        with outer:
            a = x.exp()
            with inner:
                b = a.sin()
            c = b.tanh()
        d = c.cos()
        d.sum().backward()
        return log, x.grad

    assert_same(prog, **F32)


def test_unpacked_copy_is_used_and_versions_are_not_checked():
    def prog(T):
        x = T.tensor([0.5, 1.0], requires_grad=True)
        a = x * 2
        with T.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            b = a.sin()
        with T.no_grad():
            a.mul_(3)  # the packed clone keeps the saved value
        b.sum().backward()
        return x.grad

    assert_same(prog, **F32)


def test_saved_leaf_keeps_its_gradient_path_for_double_backward():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        with T.autograd.graph.saved_tensors_hooks(lambda t: t.detach() * 1, lambda t: t):
            y = (x * x * x).sum()
        (g,) = T.autograd.grad(y, x, create_graph=True)
        (gg,) = T.autograd.grad(g.sum(), x)
        return g, gg

    assert_same(prog, **F32)


def test_save_on_cpu():
    def prog(T):
        x = T.tensor([0.5, 1.0], requires_grad=True)
        with T.autograd.graph.save_on_cpu(pin_memory=False):
            y = (x.exp() * x).sum()
        y.backward()
        return x.grad

    assert_same(prog, **F32)


def _unpack_not_tensor(T):
    x = T.tensor([0.5, 1.0], requires_grad=True)
    with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
        y = x.sin()
    y.sum().backward()


def _pack_inplace(T):
    x = T.tensor([0.5, 1.0], requires_grad=True)
    with T.autograd.graph.saved_tensors_hooks(lambda t: t.mul_(1), lambda t: t):
        (x * 1).sin()


def _disabled(T):
    with T.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
        with T.autograd.graph.save_on_cpu():
            pass


def _freed(T):
    x = T.tensor([0.5, 1.0], requires_grad=True)
    with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = x.sin().sum()
    y.backward()
    y.backward()


def _disable_inside_hooks(T):
    with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        with T.autograd.graph.disable_saved_tensors_hooks("not while hooks are on"):
            pass


def _func_grad_with_hooks(T):
    with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        T.func.grad(lambda t: t.sin().sum())(T.tensor([0.5, 1.0]))


def _hooks_inside_func_grad(T):
    def f(t):
        with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            return t.sin().sum()

    T.func.grad(f)(T.tensor([0.5, 1.0]))


@pytest.mark.parametrize(
    "prog",
    [
        _unpack_not_tensor,
        _pack_inplace,
        _disabled,
        _freed,
        _disable_inside_hooks,
        _func_grad_with_hooks,
        _hooks_inside_func_grad,
    ],
)
def test_saved_tensors_hooks_errors(prog):
    assert_same_error(prog)


def test_disable_saved_tensors_hooks_restores():
    def prog(T):
        G = T.autograd.graph
        with G.disable_saved_tensors_hooks("a"):
            with G.disable_saved_tensors_hooks("b"):
                pass
            try:
                with G.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
            except RuntimeError as e:
                msg = str(e)
        with G.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass
        return msg

    assert_same(prog)


# ------------------------------------------------------------------ hook results checked
def _leaf_hook_size(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)

    def hook(g):
        return T.ones(3)

    x.register_hook(hook)
    (x * 2).sum().backward()


def _nonleaf_hook_dtype(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    h.register_hook(lambda g: g.double())
    h.sum().backward()


def _hook_not_tensor(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: 3)
    (x * 2).sum().backward()


def _prehook_count(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    h = x.exp()
    h.grad_fn.register_prehook(lambda go: (go[0], go[0]))
    h.sum().backward()


def _prehook_size(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    h = x.exp()
    h.grad_fn.register_prehook(lambda go: (T.ones(3),))
    h.sum().backward()


def _posthook_count(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    h = x.exp()
    h.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0]))
    h.sum().backward()


def _posthook_size(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    h = x * x.detach()
    h.grad_fn.register_hook(lambda gi, go: (T.ones(3), None))
    h.sum().backward()


def _posthook_replaces_none(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    h = x * x.detach()
    h.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0]))
    h.sum().backward()


def _postacc_returns(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    x.register_post_accumulate_grad_hook(lambda t: 5)
    (x * 2).sum().backward()


def _postacc_nonleaf(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).register_post_accumulate_grad_hook(lambda t: None)


def _postacc_no_grad(T):
    T.tensor([1.0]).register_post_accumulate_grad_hook(lambda t: None)


@pytest.mark.parametrize(
    "prog",
    [
        _leaf_hook_size,
        _nonleaf_hook_dtype,
        _hook_not_tensor,
        _prehook_count,
        _prehook_size,
        _posthook_count,
        _posthook_size,
        _posthook_replaces_none,
        _postacc_returns,
        _postacc_nonleaf,
        _postacc_no_grad,
    ],
)
def test_hook_result_errors(prog):
    assert_same_error(prog)


def test_hooks_replacing_gradients_with_right_ones():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = T.tensor([3.0, 4.0], requires_grad=True)
        h = x * y
        h.register_hook(lambda g: g * 2)
        h.grad_fn.register_prehook(lambda go: (go[0] + 1,))
        h.grad_fn.register_hook(lambda gi, go: (gi[0] * 10, None))
        h.sum().backward()
        return x.grad, y.grad

    assert_same(prog, **F32)


# ------------------------------------------------------------------ AccumulateGrad hooks
def test_accumulate_grad_node_hooks_run_in_order():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        log = []
        acc = T.autograd.graph.get_gradient_edge(x).node
        acc2 = (x * 1).grad_fn.next_functions[0][0]
        acc.register_hook(lambda gi, go: log.append(("post", gi, [_g(g) for g in go])))
        acc2.register_prehook(lambda go: log.append(("pre", [_g(g) for g in go])))
        x.register_post_accumulate_grad_hook(lambda t: log.append(("postacc", _g(t.grad))))
        x.register_hook(lambda g: log.append(("tensor", _g(g))))
        (x * 2).sum().backward()
        return log, acc.name(), acc is acc2

    assert_same(prog, **F32)


def test_post_accumulate_grad_hook_sees_accumulated_grad_and_removes():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        handle = x.register_post_accumulate_grad_hook(lambda t: seen.append(_g(t.grad)))
        (x * 2).sum().backward()
        (x * 3).sum().backward()
        handle.remove()
        (x * 4).sum().backward()
        T.autograd.grad((x * 5).sum(), x)  # grad() does not accumulate: no call
        return seen, x.grad

    assert_same(prog, **F32)


def test_hook_on_output_without_gradient_gets_none():
    def prog(T):
        x = T.tensor([1.0, 2.0, 4.0], requires_grad=True)
        v, m = T.var_mean(x)
        log = []
        v.register_hook(lambda g: log.append(("v", _g(g))))
        m.register_hook(lambda g: log.append(("m", _g(g))))
        m.backward()
        return log, x.grad

    assert_same(prog, **F32)


# ------------------------------------------------------------------ multi-grad hooks
def test_register_multi_grad_hook_all_and_any():
    def prog(T):
        G = T.autograd.graph
        a = T.tensor([1.0, 2.0], requires_grad=True)
        b = T.tensor([3.0], requires_grad=True)
        c = T.tensor([4.0], requires_grad=True)
        log = []
        h1 = G.register_multi_grad_hook((a, b, c), lambda gs: log.append([_g(g) for g in gs]))
        h2 = G.register_multi_grad_hook((a, b, c), lambda g: log.append(("any", _g(g))), mode="any")
        a.register_hook(lambda g: log.append("a"))
        b.register_hook(lambda g: log.append("b"))
        (a.sum() * b).sum().backward()
        log.append("|")
        (a.sum() * b * c).sum().backward(inputs=[b])
        log.append("|")
        (a.sum() * b * c).sum().backward()
        log.append("|")
        h1.remove()
        h2.remove()
        (a.sum() * b).sum().backward()
        return log

    assert_same(prog, **F32)


def test_register_multi_grad_hook_bad_mode():
    def prog(T):
        x = T.tensor([1.0], requires_grad=True)
        T.autograd.graph.register_multi_grad_hook([x], print, mode="some")

    assert_same_error(prog)


# ------------------------------------------------------------------ gradient edges
def test_get_gradient_edge_accepted_by_grad():
    def prog(T):
        G = T.autograd.graph
        x = T.tensor([1.0, 2.0], requires_grad=True)
        h = x * x
        eh, ex = G.get_gradient_edge(h), G.get_gradient_edge(x)
        out = (h.sum() * 3, eh.output_nr, ex.output_nr, eh.node is h.grad_fn)
        return (
            out,
            T.autograd.grad(h.sum() * 3, eh, retain_graph=True),
            T.autograd.grad(h.sum() * 3, [ex, x]),
        )

    assert_same(prog, **F32)


def test_get_gradient_edge_needs_grad():
    assert_same_error(lambda T: T.autograd.graph.get_gradient_edge(T.tensor([1.0])))


def test_gradient_edges_as_backward_inputs_and_unused():
    def prog(T):
        G = T.autograd.graph
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = T.tensor([3.0, 4.0], requires_grad=True)
        z = T.tensor([5.0], requires_grad=True)
        h = x * y
        (h * h).sum().backward(inputs=[G.get_gradient_edge(x), G.get_gradient_edge(h)])
        unused = T.autograd.grad((x * x).sum(), [G.get_gradient_edge(z)], allow_unused=True)
        return x.grad, y.grad, unused

    assert_same(prog, **F32)


def test_unused_gradient_edge_error():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        z = T.tensor([5.0], requires_grad=True)
        T.autograd.grad((x * x).sum(), [T.autograd.graph.get_gradient_edge(z)])

    assert_same_error(prog)


def _raw_saved(T, y, torch_name, our_key):
    """y.grad_fn._raw_saved_<torch_name>; numtorch's nodes key saved tensors by their vjp
    parameter names, so here the SavedTensor is made from that key."""
    raw = getattr(y.grad_fn, "_raw_saved_" + torch_name, None)
    return raw if raw is not None else T.autograd.graph.SavedTensor(y.grad_fn, our_key)


def test_raw_saved_tensor_register_hooks():
    def prog(T):
        log = []
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = x.sin()
        z = x.exp()
        r = _raw_saved(T, y, "self", "input")
        r.register_hooks(lambda t: log.append("pack") or t * 1, lambda t: log.append("unpack") or t)
        _raw_saved(T, z, "result", "result").register_hooks(lambda t: t * 2, lambda t: t / 2)
        log.append("bwd")
        (y + z).sum().backward()
        return log, x.grad

    assert_same(prog, **F32)


def _raw_twice(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    r = _raw_saved(T, x.sin(), "self", "input")
    r.register_hooks(lambda t: t, lambda t: t)
    r.register_hooks(lambda t: t, lambda t: t)


def _raw_after_free(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x.sin()
    r = _raw_saved(T, y, "self", "input")
    y.sum().backward()
    r.register_hooks(lambda t: t, lambda t: t)


@pytest.mark.parametrize("prog", [_raw_twice, _raw_after_free])
def test_raw_saved_tensor_errors(prog):
    assert_same_error(prog)


def test_a_node_packs_its_saved_tensors_in_torchs_order():
    """mul saves (other, self): the pack hook sees them in that order, in every run."""

    def prog(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, 4.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(
            lambda t: log.append(t.tolist()) or t, lambda t: t
        ):
            x * y
        return log

    ours, theirs = run_both(prog)
    assert ours == theirs == [[3.0, 4.0], [1.0, 2.0]]
