"""utils.checkpoint against PyTorch: gradients equal to the un-checkpointed program and to
torch's, how often the region runs, that its intermediate values are not kept, the random
state replayed for dropout, context_fn, nesting, early stop, checkpoint_sequential, and
the errors and warnings with torch's texts."""

from __future__ import annotations

import gc
import warnings
import weakref

import numpy as np
import pytest
import torch
from twolibs import arr, assert_close, assert_same, assert_same_error, outcome, run_both

import numtorch as nt

F32 = {"rtol": 1e-5, "atol": 1e-6}


def ckpt(T, fn, *args, **kw):
    return T.utils.checkpoint.checkpoint(fn, *args, **kw)


def _mlp_params(T):
    return [
        T.tensor(arr(*s, seed=i), requires_grad=True)
        for i, s in enumerate([(4, 3), (4,), (2, 4), (2,)])
    ]


def _mlp(T, x, w1, b1, w2, b2, calls=None):
    if calls is not None:
        calls.append(1)
    h = T.nn.functional.linear(x, w1, b1).tanh()
    return T.nn.functional.linear(h * h.sigmoid(), w2, b2)


def _grads(ts):
    return [None if t.grad is None else t.grad.clone() for t in ts]


# ------------------------------------------------------------------ gradients and calls
@pytest.mark.parametrize("use_reentrant", [False, True])
def test_mlp_gradients_and_forward_calls(use_reentrant):
    def prog(T):
        x = T.tensor(arr(5, 3, seed=9), requires_grad=True)
        ps = _mlp_params(T)
        calls = []
        out = ckpt(T, _mlp, T, x, *ps, calls, use_reentrant=use_reentrant)
        after_forward = len(calls)
        (out**2).sum().backward()
        checkpointed = _grads([x, *ps])
        for t in (x, *ps):
            t.grad = None
        (_mlp(T, x, *ps) ** 2).sum().backward()
        return out, after_forward, len(calls), checkpointed, _grads([x, *ps])

    nt_res, th_res = run_both(prog)
    assert nt_res[1:3] == (1, 2)
    assert_close(nt_res[3], nt_res[4])
    assert_close(nt_res, th_res)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_sequential_module(use_reentrant):
    def prog(T):
        T.manual_seed(0)
        model = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.Tanh(), T.nn.Linear(4, 2))
        with T.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(T.tensor(arr(*p.shape, seed=i)))
        x = T.tensor(arr(2, 3, seed=5).astype(np.float32), requires_grad=True)
        out = ckpt(T, model, x, use_reentrant=use_reentrant)
        out.sum().backward()
        return out, x.grad, [p.grad for p in model.parameters()]

    assert_same(prog, **F32)


def test_autograd_grad_and_double_backward():
    def prog(T):
        x = T.tensor(arr(5, 3, seed=9), requires_grad=True)
        ps = _mlp_params(T)
        calls = []
        out = ckpt(T, _mlp, T, x, *ps, calls, use_reentrant=False)
        gs = T.autograd.grad((out**2).sum(), [x, *ps], create_graph=True)
        n1 = len(calls)
        sum(g.sum() for g in gs).backward()
        return gs, len(calls) - n1, n1, _grads([x, *ps])

    nt_res, th_res = run_both(prog)
    assert_close(nt_res, th_res)
    ref = run_both(lambda T: _double_backward_without_checkpoint(T))[0]
    assert_close(nt_res[3], ref)


def _double_backward_without_checkpoint(T):
    x = T.tensor(arr(5, 3, seed=9), requires_grad=True)
    ps = _mlp_params(T)
    gs = T.autograd.grad((_mlp(T, x, *ps) ** 2).sum(), [x, *ps], create_graph=True)
    sum(g.sum() for g in gs).backward()
    return _grads([x, *ps])


def test_retain_graph_recomputes_for_each_backward():
    def prog(T):
        x = T.tensor(arr(4), requires_grad=True)
        calls = []
        y = ckpt(T, lambda a: (calls.append(1), a.sin().exp())[1], x, use_reentrant=False)
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        return len(calls), x.grad

    assert_same(prog)


def test_nested_checkpoints():
    def prog(T):
        x = T.tensor(arr(4), requires_grad=True)
        log = []

        def inner(a):
            log.append("inner")
            return a.sin().cos()

        def outer(a):
            log.append("outer")
            b = a.exp()
            return ckpt(T, inner, b, use_reentrant=False) * b

        y = ckpt(T, outer, x, use_reentrant=False)
        log.append("backward")
        y.sum().backward()
        return log, x.grad

    assert_same(prog)


def test_kwargs_and_non_tensor_outputs():
    def prog(T):
        x = T.tensor(arr(3), requires_grad=True)

        def fn(a, *, scale, name):
            return {"y": a.sin() * scale, "n": len(name), "none": None}, (a.cos(), 7)

        d, (c, k) = ckpt(T, fn, x, use_reentrant=False, scale=3.0, name="abc")
        (d["y"].sum() + c.sum()).backward()
        return d["y"], d["n"], d["none"], c, k, x.grad

    assert_same(prog)


def test_non_tensor_and_non_grad_inputs():
    def prog(T):
        x = T.tensor(arr(3), requires_grad=True)
        c = T.tensor(arr(3, seed=1))
        y = ckpt(T, lambda a, k, b, p: (a * b).pow(p) * k, x, 2.0, c, 2, use_reentrant=False)
        y.sum().backward()
        return y, x.grad, c.grad

    assert_same(prog)


def test_under_no_grad_runs_once_without_graph():
    def prog(T):
        x = T.tensor(arr(3), requires_grad=True)
        calls = []
        with T.no_grad():
            y = ckpt(T, lambda a: (calls.append(1), a.sin())[1], x, use_reentrant=False)
        return y, y.requires_grad, len(calls)

    assert_same(prog)


# ------------------------------------------------------------------ memory
def test_intermediates_are_not_kept():
    """The region's intermediate tensors die after the forward; without the checkpoint
    the graph keeps them alive."""

    def prog(T, checkpointed):
        x = T.tensor(arr(4), requires_grad=True)
        refs = []

        def fn(a):
            h = a.sin()
            refs.append(weakref.ref(h))
            return (h * h).exp()

        y = ckpt(T, fn, x, use_reentrant=False) if checkpointed else fn(x)
        gc.collect()
        alive = refs[0]() is not None
        y.sum().backward()
        return alive, x.grad

    for lib in (nt, torch):
        assert prog(lib, True)[0] is False
        assert prog(lib, False)[0] is True
    assert_same(prog, True)


def test_only_the_inputs_are_saved_outside():
    """An outer saved_tensors_hooks sees the checkpoint's inputs only (they are what it
    keeps), then the region's saved tensors are packed by the checkpoint itself."""

    def prog(T):
        x = T.tensor(arr(4), requires_grad=True)
        w = T.tensor(arr(4, seed=1), requires_grad=True)
        packed = []

        def pack(t):
            packed.append(tuple(t.shape))
            return t

        with T.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y = ckpt(T, lambda a, b: (a * b).sin().exp() * b, x, w, use_reentrant=False)
            n = len(packed)
            z = y * y
        z.sum().backward()
        return n, packed, x.grad, w.grad

    assert_same(prog)


def test_recomputed_tensors_are_released_after_unpack():
    """Even with retain_graph=True, a recomputed tensor is dropped once it is unpacked."""

    def prog(T):
        x = T.tensor(arr(4), requires_grad=True)
        y = ckpt(T, lambda a: a.sin().exp(), x, use_reentrant=False)
        y.sum().backward(retain_graph=True)
        gc.collect()
        frames = [o for o in gc.get_objects() if type(o).__name__ in ("_Frame", "_CheckpointFrame")]
        sizes = [len(d) for f in frames for d in f.recomputed.values()]
        del y
        return sizes

    for lib in (nt, torch):
        sizes = prog(lib)
        assert sizes and all(n == 0 for n in sizes)


# ------------------------------------------------------------------ random state
def _dropout_net(T, x, w):
    return T.nn.functional.dropout((x @ w).tanh(), p=0.5, training=True) @ w


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_dropout_replays_the_forward_mask(use_reentrant):
    def prog(T, checkpointed, preserve):
        T.manual_seed(3)
        x = T.tensor(arr(6, 4, seed=1), requires_grad=True)
        w = T.tensor(arr(4, 4, seed=2), requires_grad=True)
        if checkpointed:
            y = ckpt(
                T,
                _dropout_net,
                T,
                x,
                w,
                use_reentrant=use_reentrant,
                preserve_rng_state=preserve,
            )
        else:
            y = _dropout_net(T, x, w)
        y.sum().backward()
        after = T.rand(3)  # the surrounding random state is restored after recomputation
        return y, x.grad, w.grad, after

    for lib in (nt, torch):
        plain = [t.detach().numpy() for t in prog(lib, False, True)]
        for got, want in zip(prog(lib, True, True), plain):
            np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-12)
        y, gx, gw, after = (t.detach().numpy() for t in prog(lib, True, False))
        np.testing.assert_allclose(y, plain[0], rtol=1e-12)
        assert not np.allclose(gx, plain[1])  # another mask in the recomputation
        assert not np.allclose(after, plain[3])  # which drew from the surrounding state


# ------------------------------------------------------------------ context_fn, early stop
def test_context_fn_wraps_forward_and_recomputation():
    def prog(T):
        log = []

        class Ctx:
            def __init__(self, name):
                self.name = name

            def __enter__(self):
                log.append(("enter", self.name, T.is_grad_enabled()))

            def __exit__(self, *exc):
                log.append(("exit", self.name))

        x = T.tensor(arr(3), requires_grad=True)

        def fn(a):
            log.append("fn")
            return a.sin().cos()

        y = ckpt(T, fn, x, use_reentrant=False, context_fn=lambda: (Ctx("fwd"), Ctx("re")))
        log.append("backward")
        y.sum().backward()
        return log, x.grad

    assert_same(prog)


@pytest.mark.parametrize("early_stop", [True, False])
def test_early_stop(early_stop):
    def prog(T, by_context):
        log = []
        x = T.tensor(arr(3), requires_grad=True)

        def fn(a):
            log.append("a")
            h = a.sin()
            log.append("b")
            y = h.cos()
            log.append("c")
            return y + 1

        if by_context:
            with T.utils.checkpoint.set_checkpoint_early_stop(early_stop):
                y = ckpt(T, fn, x, use_reentrant=False)
        else:
            y = ckpt(T, fn, x, use_reentrant=False, early_stop=early_stop)
        y.sum().backward()
        return log, x.grad

    assert_same(prog, False)
    assert_same(prog, True)
    # early stop: the recomputation ends once the last saved tensor is back
    assert run_both(prog, False)[0][0] == ["a", "b", "c", "a", "b"] + ["c"] * (not early_stop)


def test_backward_inside_the_checkpointed_function():
    def prog(T):
        x = T.tensor(arr(3), requires_grad=True)

        def fn(a):
            y = a.sin()
            z = y.cos()
            (gx,) = T.autograd.grad(z.sum(), a)
            return a.cos() * gx

        out = ckpt(T, fn, x, use_reentrant=False)
        out.sum().backward()
        return out, x.grad

    assert_same(prog)


# ------------------------------------------------------------------ checkpoint_sequential
@pytest.mark.parametrize("segments", [1, 2, 3])
@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_sequential(segments, use_reentrant):
    def prog(T):
        T.manual_seed(0)
        layers = [
            T.nn.Linear(3, 3),
            T.nn.Tanh(),
            T.nn.Linear(3, 3),
            T.nn.Sigmoid(),
            T.nn.Linear(3, 2),
        ]
        calls = []
        for i, m in enumerate(layers):
            m.register_forward_hook(lambda mod, inp, out, i=i: calls.append(i))
        model = T.nn.Sequential(*layers)
        with T.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(T.tensor(arr(*p.shape, seed=i)))
        x = T.tensor(arr(2, 3, seed=7).astype(np.float32), requires_grad=True)
        out = T.utils.checkpoint.checkpoint_sequential(
            model, segments, x, use_reentrant=use_reentrant
        )
        out.sum().backward()
        return out, calls, x.grad, [p.grad for p in model.parameters()]

    assert_same(prog, **F32)


def test_checkpoint_sequential_list_of_functions():
    def prog(T):
        x = T.tensor(arr(4), requires_grad=True)
        fns = [T.sin, T.exp, T.cos, lambda t: t * 2]
        y = T.utils.checkpoint.checkpoint_sequential(fns, 2, x, use_reentrant=False)
        y.sum().backward()
        return y, x.grad

    assert_same(prog)


# ------------------------------------------------------------------ errors and warnings
def _same_error_by_name(prog, *args):
    """Both raise an exception of the same class name (CheckpointError is each library's
    own class) and the same text."""
    got, want = outcome(prog, nt, *args), outcome(prog, torch, *args)
    assert got.type.__name__ == want.type.__name__, (got, want)
    assert got.text == want.text, f"numtorch: {got.text}\ntorch: {want.text}"


def test_determinism_check_different_shapes():
    def prog(T):
        state = {"n": 3}
        x = T.tensor(arr(4), requires_grad=True)

        def fn(a):
            b = a[: state["n"]].sin()
            state["n"] = 2
            return b.exp()

        ckpt(T, fn, x, use_reentrant=False).sum().backward()

    _same_error_by_name(prog)


def test_determinism_check_none_skips_the_metadata_check():
    def prog(T):
        state = {"s": 1.0}
        x = T.tensor(arr(4), requires_grad=True)

        def fn(a):
            b = (a * state["s"]).sin()
            state["s"] = 2.0
            return b.exp()

        ckpt(T, fn, x, use_reentrant=False, determinism_check="none").sum().backward()
        return x.grad

    assert_same(prog)


def test_determinism_check_fewer_tensors_saved():
    def prog(T):
        state = {"first": True}
        x = T.tensor(arr(4), requires_grad=True)

        def fn(a):
            b = a.sin()
            if state.pop("first", False):
                b = b.exp()
            return b * 2

        ckpt(T, fn, x, use_reentrant=False).sum().backward()

    _same_error_by_name(prog)


def test_more_tensors_saved_without_early_stop():
    def prog(T):
        state = {"first": True}
        x = T.tensor(arr(4), requires_grad=True)

        def fn(a):
            b = a.sin()
            if not state.pop("first", False):
                b = b.exp()
            return b * 2

        ckpt(T, fn, x, use_reentrant=False, early_stop=False).sum().backward()

    _same_error_by_name(prog)


ERRORS = {
    "bad_determinism_check": lambda T, x: ckpt(
        T,
        T.sin,
        x,
        use_reentrant=False,
        determinism_check="shapes",
    ),
    "reentrant_kwargs": lambda T, x: ckpt(T, T.sin, x, use_reentrant=True, foo=1, bar=2),
    "reentrant_context_fn": lambda T, x: ckpt(
        T,
        T.sin,
        x,
        use_reentrant=True,
        context_fn=T.utils.checkpoint.noop_context_fn.__call__,
    ),
    "reentrant_debug": lambda T, x: ckpt(T, T.sin, x, use_reentrant=True, debug=True),
    "debug_with_context_fn": lambda T, x: ckpt(
        T,
        T.sin,
        x,
        use_reentrant=False,
        debug=True,
        context_fn=lambda: T.utils.checkpoint.noop_context_fn(),
    ),
    "sequential_kwargs": lambda T, x: T.utils.checkpoint.checkpoint_sequential(
        [T.sin],
        1,
        x,
        use_reentrant=False,
        foo=1,
    ),
    "detach_variable_list": lambda T, x: T.utils.checkpoint.detach_variable([x]),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_argument_errors(case):
    assert_same_error(lambda T: ERRORS[case](T, T.tensor(arr(3), requires_grad=True)))


def test_context_fn_suppressing_the_exception():
    def prog(T):
        import contextlib

        class Swallow:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return True

        def fn(a):
            raise ValueError("boom")

        x = T.tensor(arr(3), requires_grad=True)
        ckpt(
            T, fn, x, use_reentrant=False, context_fn=lambda: (Swallow(), contextlib.nullcontext())
        )

    assert_same_error(prog)


def test_exception_in_the_function_propagates():
    def prog(T):
        def fn(a):
            raise ValueError("boom")

        ckpt(T, fn, T.tensor(arr(3), requires_grad=True), use_reentrant=False)

    assert_same_error(prog)


def test_use_reentrant_none_warns_and_means_true():
    def prog(T):
        x = T.tensor(arr(3), requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = ckpt(T, T.sin, x)
            z = T.utils.checkpoint.checkpoint_sequential([T.sin, T.cos], 2, x)
        return [(c.category.__name__, str(c.message)) for c in w], y, z

    assert_same(prog)


def test_reentrant_with_autograd_grad_raises():
    def prog(T):
        x = T.tensor(arr(3), requires_grad=True)
        y = ckpt(T, lambda a: a.sin().exp(), x, use_reentrant=True)
        return T.autograd.grad(y.sum(), x)

    assert_same_error(prog)


def test_reentrant_with_backward_inputs_raises():
    def prog(T):
        x = T.tensor(arr(3), requires_grad=True)
        y = ckpt(T, lambda a: a.sin().exp(), x, use_reentrant=True)
        y.sum().backward(inputs=[x])

    assert_same_error(prog)


def test_reentrant_warns_when_no_input_requires_grad():
    def prog(T):
        x = T.tensor(arr(3))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = ckpt(T, T.sin, x, use_reentrant=True)
        return [(c.category.__name__, str(c.message)) for c in w], y, y.requires_grad

    assert_same(prog)


def test_reentrant_non_tensor_args_and_outputs():
    def prog(T):
        x = T.tensor(arr(3), requires_grad=True)
        c = T.tensor(arr(3, seed=1))
        calls = []

        def fn(a, k, b):
            calls.append(1)
            return a.sin() * k + b, b * 2

        y, z = ckpt(T, fn, x, 3.0, c, use_reentrant=True)
        (y.sum() + z.sum()).backward()
        return y, z, z.requires_grad, x.grad, len(calls)

    assert_same(prog)


def test_reentrant_no_output_requires_grad_in_backward():
    def prog(T):
        x = T.tensor(arr(3), requires_grad=True)
        state = {"first": True}

        def fn(a):
            if state.pop("first", False):
                return a.sin()
            return a.detach().sin()

        ckpt(T, fn, x, use_reentrant=True).sum().backward()

    assert_same_error(prog)


def test_node_names_of_the_outputs():
    def prog(T):
        x = T.tensor(arr(3), requires_grad=True)
        a = ckpt(T, lambda t: t.sin().exp(), x, use_reentrant=False)
        b = ckpt(T, lambda t: t.sin().exp(), x, use_reentrant=True)
        return a.grad_fn.name(), b.grad_fn.name()

    assert_same(prog)


def test_under_function_transforms():
    """func.grad refuses saved-tensor hooks (so the non-reentrant checkpoint), vmap runs it;
    the reentrant one is an autograd.Function without setup_context."""

    def prog(T, use_reentrant, transform):
        x = T.tensor(arr(4))

        def f(a):
            return a.sin().exp()

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if transform == "grad":
                return T.func.grad(lambda t: ckpt(T, f, t, use_reentrant=use_reentrant).sum())(x)
            return T.func.vmap(lambda t: ckpt(T, f, t, use_reentrant=use_reentrant))(x)

    for use_reentrant in (False, True):
        for transform in ("grad", "vmap"):
            got, want = (
                outcome(prog, nt, use_reentrant, transform),
                outcome(prog, torch, use_reentrant, transform),
            )
            if hasattr(want, "text"):
                assert got == want
            else:
                assert_close(got, want)


def test_unpacking_a_recomputed_tensor_twice():
    def prog(T):
        class Twice(T.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a * 2

            @staticmethod
            def backward(ctx, g):
                _first = ctx.saved_tensors  # the second read below raises
                (a,) = ctx.saved_tensors
                return g * 2

        x = T.tensor(arr(3), requires_grad=True)
        y = ckpt(T, lambda t: Twice.apply(t.sin()), x, use_reentrant=False)
        y.sum().backward()
        return x.grad

    _same_error_by_name(prog)


def test_debug_flag_runs_normally():
    def prog(T):
        x = T.tensor(arr(3), requires_grad=True)
        y = ckpt(T, lambda t: t.sin().exp(), x, use_reentrant=False, debug=True)
        y.sum().backward()
        with T.utils.checkpoint.set_checkpoint_debug_enabled(False):
            z = ckpt(
                T,
                lambda t: t.cos(),
                x,
                use_reentrant=False,
                debug=True,
                context_fn=T.utils.checkpoint.noop_context_fn,
            )
        return y, x.grad, z

    assert_same(prog)


def test_graph_exec_group_recomputes_once():
    def prog(T, grouped):
        import contextlib

        x = T.tensor(arr(3), requires_grad=True)
        calls = []

        def fn(a):
            calls.append(1)
            return a.sin().exp(), a.cos().exp()

        u, v = ckpt(T, fn, x, use_reentrant=False)
        group = T.utils.checkpoint.GraphExecGroup() if grouped else contextlib.nullcontext()
        with group:
            u.sum().backward(retain_graph=True)
            v.sum().backward(retain_graph=True)
        return len(calls), x.grad

    assert_same(prog, False)
    assert_same(prog, True)
    assert run_both(prog, True)[0][0] == 2 and run_both(prog, False)[0][0] == 3


def test_graph_exec_group_overlapping_backward_raises():
    def prog(T):
        x = T.tensor(arr(3), requires_grad=True)
        y = ckpt(T, lambda a: a.sin().exp(), x, use_reentrant=False)
        with T.utils.checkpoint.GraphExecGroup():
            y.sum().backward(retain_graph=True)
            y.sum().backward()

    _same_error_by_name(prog)


def test_graph_exec_group_cannot_nest():
    def prog(T):
        with T.utils.checkpoint.GraphExecGroup(), T.utils.checkpoint.GraphExecGroup():
            pass

    err = [outcome(prog, lib) for lib in (nt, torch)]
    assert err[0].type is err[1].type is RuntimeError
    assert err[0].text.startswith("GraphExecGroup contexts cannot be nested. Already inside group")


def _params(fn):
    import inspect

    return [
        (p.name, p.kind, getattr(p.default, "__name__", p.default))
        for p in inspect.signature(fn).parameters.values()
    ]


@pytest.mark.parametrize(
    "name",
    [
        "checkpoint",
        "checkpoint_sequential",
        "noop_context_fn",
        "detach_variable",
        "check_backward_validity",
        "set_checkpoint_early_stop",
        "set_checkpoint_debug_enabled",
    ],
)
def test_signatures_are_torchs(name):
    assert _params(getattr(nt.utils.checkpoint, name)) == _params(
        getattr(torch.utils.checkpoint, name)
    )


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_input_modified_in_place_after_the_forward(use_reentrant):
    def prog(T):
        x = T.tensor(arr(3), requires_grad=True)
        h = x * 2
        y = ckpt(T, lambda a: a.sin().exp(), h, use_reentrant=use_reentrant)
        with T.no_grad():
            h.add_(1)
        y.sum().backward()

    _same_error_by_name(prog)


@pytest.mark.skipif(not nt.cuda.is_available(), reason="needs a GPU")
@pytest.mark.parametrize("use_reentrant", [False, True])
def test_dropout_on_the_gpu_replays_the_device_random_state(use_reentrant):
    def prog(checkpointed):
        nt.manual_seed(3)
        x = nt.tensor(arr(6, 4, seed=1), device="cuda", requires_grad=True)
        w = nt.tensor(arr(4, 4, seed=2), device="cuda", requires_grad=True)
        y = (
            ckpt(nt, _dropout_net, nt, x, w, use_reentrant=use_reentrant)
            if checkpointed
            else _dropout_net(nt, x, w)
        )
        y.sum().backward()
        after = nt.rand(3, device="cuda")
        return [t.detach().cpu().numpy() for t in (y, x.grad, w.grad, after)]

    for got, want in zip(prog(True), prog(False)):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def _inplace(T, a):
    h = a * 2
    h.relu_()
    return h.exp()


def _setitem(T, a):
    h = a.clone()
    h[0] = h[0] * 3
    return h.sin()


def _no_grad_inside(T, a):
    with T.no_grad():
        s = a.sum()
    return a.sin() * s


REGIONS = {
    "in_place": _inplace,
    "setitem": _setitem,
    "identity": lambda T, a: a,
    "view": lambda T, a: a.t(),
    "view_of_result": lambda T, a: a.exp()[0],
    "two_outputs": lambda T, a: (a.sin(), a.t().exp()),
    "no_grad_inside": _no_grad_inside,
}


@pytest.mark.parametrize("use_reentrant", [False, True])
@pytest.mark.parametrize("region", sorted(REGIONS))
def test_regions(region, use_reentrant):
    def prog(T):
        x = T.tensor(arr(2, 3), requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = ckpt(T, REGIONS[region], T, x, use_reentrant=use_reentrant)
        ys = (y,) if isinstance(y, T.Tensor) else y
        sum((t * t.cos()).sum() for t in ys).backward()
        return y, x.grad

    assert_same(prog)
