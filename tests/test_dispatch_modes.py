"""TorchDispatchMode: the ops a mode sees (forward and backward), results it changes, and
nesting, against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.utils._python_dispatch as torch_pd
from twolibs import arr, assert_same, assert_same_error

import numtorch as nt
import numtorch.utils._python_dispatch as nt_pd
from numtorch._core.aten import aten

PD = {nt: nt_pd, torch: torch_pd}


def logging_mode(lib, log, tag=None):
    class Log(PD[lib].TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            log.append(str(func) if tag is None else (tag, str(func)))
            return func(*args, **(kwargs or {}))

    return Log()


def leaves(lib, *shapes):
    return [lib.tensor(arr(*s, seed=i), requires_grad=True) for i, s in enumerate(shapes)]


PROGRAMS = {
    "mul": lambda lib, x, w: x * x,
    "mul_scalar": lambda lib, x, w: x * 2,
    "rmul": lambda lib, x, w: 2 * x,
    "add": lambda lib, x, w: x + x,
    "add_alpha": lambda lib, x, w: lib.add(x, x, alpha=2),
    "radd": lambda lib, x, w: 1 + x,
    "sub": lambda lib, x, w: x - 1,
    "rsub": lambda lib, x, w: 1 - x,
    "div": lambda lib, x, w: x / 2,
    "div_mode": lambda lib, x, w: lib.div(x, x + 3, rounding_mode="floor"),
    "pow": lambda lib, x, w: x**2,
    "pow_tensor": lambda lib, x, w: x.abs() ** x,
    "sum": lambda lib, x, w: x.sum(),
    "sum_dim": lambda lib, x, w: x.sum(1),
    "sum_keepdim": lambda lib, x, w: x.sum(1, keepdim=True),
    "mean": lambda lib, x, w: x.mean(),
    "mean_dim": lambda lib, x, w: x.mean(0),
    "mm": lambda lib, x, w: lib.mm(x, w),
    "matmul": lambda lib, x, w: x @ w,
    "mv": lambda lib, x, w: x @ w[:, 0].detach(),
    "unary": lambda lib, x, w: x.exp().relu().tanh().sigmoid().neg().abs().sin(),
    "views": lambda lib, x, w: x.t().transpose(0, 1).permute(1, 0).t().view(12).unsqueeze(0),
    "reshape": lambda lib, x, w: x.reshape(12),
    "compare": lambda lib, x, w: [x == 0, x == x, x < x, x > 0],
    "where": lambda lib, x, w: lib.where(x > 0, x, x * 2),
    "softmax": lambda lib, x, w: (x.softmax(1), x.log_softmax(1)),
    "mlp": lambda lib, x, w: ((x * 2).exp() @ w).relu().sum(),
    "cat": lambda lib, x, w: lib.cat([x, x]),
    "clone_expand": lambda lib, x, w: x.clone()[0].expand(2, 4),
    "index": lambda lib, x, w: (x[1], x[1:], x[None], x[:, -1], x[:, None]),
    "to": lambda lib, x, w: (x.to(lib.float32), x.amax(), x.amax(1)),
    "var": lambda lib, x, w: (x.var(), x.std()),
    "likes": lambda lib, x, w: (lib.zeros_like(x), lib.ones_like(x), lib.full_like(x, 3.0)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_forward_op_names_equal_torch(name):
    logs = {}
    for lib in (nt, torch):
        x, w = leaves(lib, (3, 4), (4, 2))
        log = logs[lib] = []
        with logging_mode(lib, log):
            PROGRAMS[name](lib, x, w)
    assert logs[nt] == logs[torch]


def test_inplace_methods_are_seen_as_inplace_overloads():
    """x.add_(y) is aten.add_.Tensor (mutable schema); values and gradients are those
    without the mode."""
    logs, results = {}, {}
    for lib in (nt, torch):
        log = logs[lib] = []
        mutable = []

        class Log(PD[lib].TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                log.append(str(func))
                mutable.append(func._schema.is_mutable)
                return func(*args, **(kwargs or {}))

        (w,) = leaves(lib, (3, 4))
        with Log():
            h = w * 1
            h.mul_(2)
            h.exp_()
            h = h.add(w, alpha=3)
            h.clamp_(min=0.5)
            h = h * 1
            h.sub_(w, alpha=2).relu_()
            h.sum().backward()
        results[lib] = (h, w.grad)
        logs[lib] = log[: log.index("aten.sum.default")], mutable[: log.index("aten.sum.default")]
    assert logs[nt] == logs[torch]
    assert_same(lambda lib: results[lib])


def test_calling_an_inplace_overload_writes_its_first_argument():
    def prog(lib):
        x = lib.ones(3)
        out = lib.ops.aten.add_.Tensor(x, lib.full((3,), 2.0))
        return out is x, x, lib.ops.aten.mul_.Tensor(x, 3) is x, x

    assert_same(prog)


def test_handler_args_and_kwargs_follow_torch():
    seen = {}
    for lib in (nt, torch):

        class Args(PD[lib].TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                show = tuple(tuple(a.shape) if isinstance(a, lib.Tensor) else a for a in args)
                kw = {k: str(v) for k, v in (kwargs or {}).items()}
                seen.setdefault(lib, []).append((str(func), show, kw, types))
                return func(*args, **(kwargs or {}))

        x = lib.ones(3, 4)
        with Args():
            x * 2
            2 * x
            1 - x
            lib.add(x, x, alpha=2)
            x.sum(1, keepdim=True)
            x.sum()
            x.clamp(min=0)
            x.transpose(0, 1)
            x[:, 2]
            x[:, None]
            x.softmax(1)
            x.amax()
            x.to(lib.float64)
    assert seen[nt] == seen[torch]


def test_func_names_and_packet():
    log = []

    class Grab(nt_pd.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            log.append(func)
            return func(*args, **(kwargs or {}))

    x = nt.ones(2)
    with Grab():
        x * x
        x.sum()
    mul, total = log
    assert (str(mul), mul.name(), mul.__name__) == (
        "aten.mul.Tensor",
        "aten::mul.Tensor",
        "mul.Tensor",
    )
    assert (str(total), total.name()) == ("aten.sum.default", "aten::sum")
    assert str(mul.overloadpacket) == "aten.mul" and mul.overloadpacket is aten.mul
    assert mul is aten.mul.Tensor and mul is nt.ops.aten.mul.Tensor
    assert repr(mul) == "<OpOverload(op='aten.mul', overload='Tensor')>"
    assert repr(mul.overloadpacket) == "<OpOverloadPacket(op='aten.mul')>"
    np.testing.assert_array_equal(aten.mul.Tensor(x, 3).numpy(), [3.0, 3.0])


def test_calling_aten_overloads_directly():
    def prog(lib):
        a = lib.ops.aten
        x = lib.arange(6.0).reshape(2, 3)
        return (
            a.mul.Tensor(x, 3),
            a.sum.dim_IntList(x, [1]),
            a.view.default(x, [6]),
            a._softmax.default(x, 1, False),
            a.rsub.Scalar(x, 1),
            a.pow.Tensor_Scalar(x, 2),
            a.mm(x, x.t()),
        )

    assert_same(prog, rtol=1e-6)


def test_reshape_is_seen_as_view_and_runs_as_reshape():
    log = []

    class Grab(nt_pd.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            log.append(func)
            return func(*args, **(kwargs or {}))

    x = nt.arange(6.0).reshape(2, 3).t()  # not viewable as (6,): reshape copies
    with Grab():
        y = x.reshape(6)
    assert log == [nt.ops.aten.view.default] and log[0]._op.name == "reshape"
    np.testing.assert_array_equal(y.numpy(), [0, 3, 1, 4, 2, 5])


def test_backward_ops_go_through_the_mode_with_the_running_node():
    seen = {}
    for lib in (nt, torch):

        class Where(PD[lib].TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                node = lib._C._current_autograd_node()
                seen.setdefault(lib, []).append((node and node.name(), str(func)))
                return func(*args, **(kwargs or {}))

        x, y = leaves(lib, (3,), (3,))
        z = (x * y).exp().sum()
        with Where():
            z.backward()
    # the implicit gradient, then the ops the formulas run, under the node running them
    for lib in (nt, torch):
        assert seen[lib][0] == (None, "aten.ones_like.default")
        ops = [f for n, f in seen[lib] if n == "MulBackward0"]
        assert ops == ["aten.mul.Tensor", "aten.mul.Tensor"]
        assert ("ExpBackward0", "aten.mul.Tensor") in seen[lib]
    assert nt._C._current_autograd_node() is None


def zeroing_mode(lib):
    class Zero(PD[lib].TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if func is lib.ops.aten.mul.Tensor:
                return lib.zeros_like(out)
            return out

    return Zero()


@pytest.mark.parametrize("during", ["forward", "both"])
def test_a_mode_that_changes_results_changes_values_and_gradients(during):
    res = {}
    for lib in (nt, torch):
        (x,) = leaves(lib, (4,))
        with zeroing_mode(lib):
            y = x * x + x.exp()
            if during == "both":
                y.sum().backward()
        if during == "forward":
            y.sum().backward()
        res[lib] = (y.detach().numpy(), x.grad.numpy(), y.requires_grad, y.grad_fn.name())
    assert res[nt][2:] == res[torch][2:]
    for a, b in zip(res[nt][:2], res[torch][:2]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_ops_inside_a_handler_record_nothing():
    res = {}
    for lib in (nt, torch):
        inner = []

        class Inner(PD[lib].TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                if str(func) == "aten.mul.Tensor":
                    r = args[0] * 3
                    inner.append((r.requires_grad, r.grad_fn is None, lib.is_grad_enabled()))
                out = func(*args, **(kwargs or {}))
                inner.append((out.requires_grad, out.grad_fn is None))
                return out

        (x,) = leaves(lib, (2,))
        with Inner():
            y = x * x
        res[lib] = (inner, y.requires_grad, y.grad_fn.name())
    assert res[nt] == res[torch]


def test_nesting_order_equals_torch():
    logs = {}
    for lib in (nt, torch):
        log = logs[lib] = []
        pd = PD[lib]

        class Outer(pd.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                log.append(("outer", str(func), pd._get_current_dispatch_mode() is None))
                return func(*args, **(kwargs or {}))

        class Inner(pd.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                log.append(("inner", str(func), pd._get_current_dispatch_mode() is outer))
                if str(func) == "aten.mul.Tensor":
                    lib.neg(args[0])  # an op of the handler's own: only the outer mode sees it
                return func(*args, **(kwargs or {}))

        (x,) = leaves(lib, (3,))
        with Outer() as outer, Inner() as inner:
            assert pd._get_current_dispatch_mode() is inner
            assert pd._len_torch_dispatch_stack() == 2
            y = (x * 2).exp().sum()
            log.append("backward")
            y.backward()
        assert pd._get_current_dispatch_mode() is None
    fwd = {lib: logs[lib][: logs[lib].index("backward")] for lib in (nt, torch)}
    assert fwd[nt] == fwd[torch]
    assert fwd[nt][:3] == [
        ("inner", "aten.mul.Tensor", True),
        ("outer", "aten.neg.default", True),
        ("outer", "aten.mul.Tensor", True),
    ]
    # backward: each op goes to the inner mode, then (from its handler) to the outer one
    for lib in (nt, torch):
        back = logs[lib][logs[lib].index("backward") + 1 :]
        starts = [i for i, e in enumerate(back) if e[0] == "inner"] + [len(back)]
        assert starts[0] == 0 and len(starts) > 2
        for i, j in zip(starts, starts[1:]):
            f = back[i][1]
            extra = [("outer", "aten.neg.default", True)] if f == "aten.mul.Tensor" else []
            assert back[i:j] == [("inner", f, True), *extra, ("outer", f, True)]


def test_push_and_pop_mode():
    for lib in (nt, torch):
        pd = PD[lib]
        log = []
        mode = logging_mode(lib, log)
        pd._push_mode(mode)
        try:
            lib.ones(2) + 1
        finally:
            assert pd._pop_mode() is mode
        lib.ones(2) + 1
        assert log[-1] == "aten.add.Tensor" and log.count("aten.add.Tensor") == 1


def test_pop_from_an_empty_stack():
    assert_same_error(lambda lib: PD[lib]._pop_mode())


def test_modes_are_off_outside_the_with_block():
    log = []
    with logging_mode(nt, log):
        pass
    nt.ones(2) * 2
    assert log == [] and nt._core.state.state.modes == []


@pytest.mark.parametrize("name", ["mul.Tensor", "sum.dim_IntList", "max.dim", "exp.default"])
def test_schema_names_and_returns(name):
    def schema(lib):
        packet, overload = name.split(".")
        s = getattr(getattr(lib.ops.aten, packet), overload)._schema
        kw = [a.kwarg_only for a in s.arguments]
        return s.name, s.overload_name, s.is_mutable, len(s.returns), kw, str(s).split("(")[0]

    assert schema(nt) == schema(torch)


def _shapes_mode(lib, log):
    """A mode that logs each op with the shape of its first tensor argument (which tells
    the leaves' accumulations apart)."""

    class Log(PD[lib].TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            first = next((a for a in args if isinstance(a, lib.Tensor)), None)
            log.append((str(func), None if first is None else tuple(first.shape)))
            return func(*args, **(kwargs or {}))

    return Log()


def _twice(z, **kw):
    z.backward(retain_graph=True, **kw)
    z.backward(**kw)


def _grad_set(lib, x, y):
    x.grad = lib.ones(3, dtype=x.dtype)
    return (x * y).sum(), {}


def _retained(lib, x, y):
    z = x.detach() * 2
    z.requires_grad_()
    z.retain_grad()
    return (z * y).sum(), {}


def _column_major(lib, x, y):
    w = lib.tensor(arr(3, 2)).t().detach().requires_grad_()
    return (w * 2).sum(), {}


def _many_leaves(lib, x, y):
    ts = [lib.tensor(arr(k + 1, seed=k), requires_grad=True) for k in range(6)]
    return lib.cat([ts[0], ts[1] * 2, ts[2], ts[3].exp(), ts[4], ts[5]]).sum(), {}


# (label, program(lib, x, y) -> (root, backward's keywords) or a callable doing backward):
# x, y are leaves of shape (3,) and (1, 3)
BACKWARD_PROGRAMS = {
    "leaf used once": lambda L, x, y: ((x * y).sum(), {}),
    "leaf used twice": lambda L, x, y: ((x * x).sum(), {}),
    "grad already set": _grad_set,
    "retain_graph": lambda L, x, y: lambda: _twice((x.exp() * y).sum()),
    "create_graph": lambda L, x, y: ((x.exp() * y).sum(), {"create_graph": True}),
    "create_graph twice": lambda L, x, y: lambda: _twice((x.exp() * y).sum(), create_graph=True),
    "autograd.grad": lambda L, x, y: lambda: L.autograd.grad((x.exp() * y).sum(), [x]),
    "a leaf is the root": lambda L, x, y: (x, {"gradient": L.ones(3, dtype=x.dtype)}),
    "the caller's gradient through add": lambda L, x, y: (
        x + y,
        {"gradient": L.ones(1, 3, dtype=x.dtype)},
    ),
    "one gradient for two leaves": lambda L, x, y: (((x + y) * 2).sum(), {}),
    "an expanded gradient": lambda L, x, y: (x.sum(), {}),
    "a broadcast gradient": lambda L, x, y: ((x + y).sum(), {}),
    "a column-major leaf": _column_major,
    "retain_grad": _retained,
    "many leaves": _many_leaves,
}


@pytest.mark.parametrize("name", sorted(BACKWARD_PROGRAMS))
def test_backward_ops_equal_torch_accumulation_included(name):
    """A mode on during backward sees PyTorch's calls, in PyTorch's order, the leaves'
    AccumulateGrad included: detach (a gradient taken as the leaf's .grad), new_empty_strided
    and copy_ (one copied, laid out as the leaf), add_ (into an existing .grad), add (under
    create_graph), and the detach of each saved output unpacked."""
    logs, grads = {}, {}
    for lib in (nt, torch):
        x = lib.tensor(arr(3), requires_grad=True)
        y = lib.tensor(arr(1, 3, seed=1), requires_grad=True)
        run = BACKWARD_PROGRAMS[name](lib, x, y)
        log = logs[lib] = []
        with _shapes_mode(lib, log):
            if callable(run):
                run()
            else:
                root, kw = run
                root.backward(**kw)
        grads[lib] = [
            None if t.grad is None else (t.grad.detach(), t.grad.stride()) for t in (x, y)
        ]
    assert logs[nt] == logs[torch]
    assert_same(lambda lib: grads[lib])


def test_the_first_gradient_of_a_leaf_is_laid_out_as_torch():
    """Without a mode too: a leaf's .grad has PyTorch's strides (the gradient's own where it
    obeys the leaf's layout, else the leaf's), and under create_graph it is a copy_ node."""
    leaves = {
        "column-major": lambda lib: lib.tensor(arr(3, 2)).t(),
        "row-major": lambda lib: lib.tensor(arr(2, 3)),
        "with gaps": lambda lib: lib.tensor(arr(4, 3))[::2],
        "permuted": lambda lib: lib.tensor(arr(2, 1, 3)).permute(2, 1, 0),
    }
    losses = {
        "sum": lambda w: w.sum(),  # an expanded gradient
        "mul": lambda w: (w * 2).sum(),  # one laid out as w
        "through a transpose": lambda w: (w.transpose(0, -1) * 2).sum(),  # one that is not
    }

    def prog(lib):
        out = {}
        for leaf, make in leaves.items():
            for loss, f in losses.items():
                w = make(lib).detach().requires_grad_()
                f(w).backward()
                out[leaf, loss] = (w.grad.stride(), w.grad.is_contiguous())
            w = make(lib).detach().requires_grad_()
            (w.exp() * 2).sum().backward(create_graph=True)
            out[leaf, "create_graph"] = (w.grad.stride(), w.grad.grad_fn.name(), w.grad._version)
        return out

    assert prog(nt) == prog(torch)
