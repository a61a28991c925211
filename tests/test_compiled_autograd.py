"""Compiled autograd (numtorch._dynamo.compiled_autograd): gradients bit-identical to the
eager engine across the op database, the cache and its counters as PyTorch's on the same
programs, hooks in eager's order, dynamic sizes, the engine's errors, and fallbacks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch._dynamo.compiled_autograd as tca
from opdb import float_arg_positions, get_path, ops_with_samples, resolve, samples
from twolibs import tensor_leaves, to_nt

import numtorch as nt
from numtorch._dynamo import compiled_autograd as ca
from numtorch._dynamo.utils import counters


@pytest.fixture(autouse=True)
def _fresh_cache():
    ca.reset()
    counters.clear()
    ca._warned.clear()
    yield
    ca.reset()


def _identity(graph):
    return graph


def _same(a, b, what: str) -> None:
    if a is None or b is None:
        assert a is None and b is None, what
        return
    a, b = a.numpy(force=True), b.numpy(force=True)
    assert a.dtype == b.dtype and a.shape == b.shape, what
    assert np.array_equal(a, b, equal_nan=True), f"{what}: {a} != {b}"


# ------------------------------------------------------------------ the op database
GRAD = [pytest.param(op, id=op.name) for op in ops_with_samples() if op.ndiff]


def _op_grads(op, s):
    """Gradients of <v, op(sample)> for the sample's float inputs, by autograd.grad and
    through .grad (a fresh graph each call)."""
    paths = float_arg_positions(s.args)
    if op.grad_args is not None:
        paths = [p for p in paths if p[0] in op.grad_args]
    args = to_nt(s.args)
    ins = [get_path(args, p).requires_grad_(True) for p in paths]
    out = resolve(nt, op.api)(*args, **to_nt(s.kwargs))
    outs = [
        o for o in tensor_leaves(out, nt.Tensor) if o.dtype.is_floating_point and o.requires_grad
    ]
    if not outs:
        return None
    rng = np.random.default_rng(1)
    vs = [nt.tensor(rng.standard_normal(o.shape)).to(o.dtype) for o in outs]
    grads = nt.autograd.grad(outs, ins, vs, allow_unused=True, retain_graph=True)
    loss = sum(((o * v).sum() for o, v in zip(outs, vs)), nt.zeros(()))
    loss.backward()
    return [*grads, *(i.grad for i in ins)]


@pytest.mark.parametrize("op", GRAD)
def test_gradients_are_bit_identical_to_eager(op):
    for dtype in ("float64", "float32"):
        for s in samples(op, dtype):
            try:
                eager = _op_grads(op, s)
            except Exception:  # noqa: BLE001 - a sample eager refuses is not compiled either
                continue
            if eager is None:
                continue
            with ca._enable(_identity):
                captured = _op_grads(op, s)  # the capture run
                replayed = _op_grads(op, s)  # the generated code
            for e, c, r in zip(eager, captured, replayed):
                _same(e, c, f"{op.name} {s} (capture)")
                _same(e, r, f"{op.name} {s} (replay)")


@pytest.mark.parametrize("op", GRAD)
def test_gradients_are_laid_out_as_eager(op):
    # (a program leaves out layout calls it decided at its capture run_kernel would skip)
    for s in samples(op, "float32"):
        try:
            eager = _op_grads(op, s)
        except Exception:  # noqa: BLE001 - a sample eager refuses is not compiled either
            continue
        if eager is None:
            continue
        with ca._enable(_identity):
            captured = _op_grads(op, s)
            replayed = _op_grads(op, s)
        for e, c, r in zip(eager, captured, replayed):
            if e is not None:
                assert e.stride() == c.stride() == r.stride(), f"{op.name} {s}"


# ------------------------------------------------------------------ counters as PyTorch's
def _program(lib, n=3, dim=0, p=2.0, grad_first=False, hook=False):
    x = lib.arange(1.0, 1.0 + 2 * n, dtype=lib.float64).reshape(2, n).requires_grad_()
    if grad_first:
        x.grad = lib.zeros_like(x)
    y = (x.sin() ** p).sum(dim)
    if hook:
        y.register_hook(lambda g: g * 2)
    y.sum().backward()
    return x.grad


def _captures(lib, runs, dynamic=True) -> tuple:
    if lib is torch:
        tca.reset()
        torch._dynamo.utils.counters.clear()
        enable, count = tca._enable, torch._dynamo.utils.counters
    else:
        ca.reset()
        counters.clear()
        enable, count = ca._enable, counters
    grads = []
    with enable(_identity if lib is nt else torch.compile(backend="eager"), dynamic=dynamic):
        for kw in runs:
            grads.append(_program(lib, **kw))
    return count["compiled_autograd"].get("captures", 0), grads


CACHE_CASES = {
    "same program": [{}, {}],
    "another sum dim": [{}, {"dim": 1}, {"dim": 1}],
    "another exponent": [{}, {"p": 3.0}],
    "grad defined": [{}, {"grad_first": True}],
    "new hook closures": [{"hook": True}, {"hook": True}],
    "a hook added": [{}, {"hook": True}],
    "new sizes, dynamic": [{"n": 3}, {"n": 4}, {"n": 5}],
}


@pytest.mark.parametrize("case", CACHE_CASES)
def test_captures_count_as_pytorch(case):
    runs = CACHE_CASES[case]
    ours, got = _captures(nt, runs)
    theirs, want = _captures(torch, runs)
    assert ours == theirs
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)


def test_a_size_change_recaptures_once_then_reuses_when_static():
    runs = [{"n": 3}, {"n": 4}, {"n": 5}, {"n": 3}]
    ours, _ = _captures(nt, runs, dynamic=False)
    theirs, _ = _captures(torch, runs, dynamic=False)
    assert ours == theirs == 2
    assert counters["compiled_autograd"]["compiles"] == 2


def _retained_captures(lib, dynamic, sizes) -> tuple:
    """Captures of a backward repeated four times on one retained graph (the first into
    a None .grad, the others accumulating), at each of ``sizes``; and the gradients
    (``dynamic`` None: eagerly)."""
    if lib is torch:
        tca.reset()
        torch._dynamo.utils.counters.clear()
        enable, count = tca._enable, torch._dynamo.utils.counters
        compiler = torch.compile(backend="eager")
    else:
        ca.reset()
        counters.clear()
        enable, count, compiler = ca._enable, counters, _identity
    grads = []
    with enable(compiler, dynamic) if dynamic is not None else warnings.catch_warnings():
        for n in sizes:
            x = lib.arange(1.0, 1.0 + 2 * n, dtype=lib.float64).reshape(2, n).requires_grad_()
            y = (x.sin() ** 2 * x).sum()
            for _ in range(4):
                y.backward(retain_graph=True)
            grads.append(x.grad)
    return count["compiled_autograd"].get("captures", 0), grads


@pytest.mark.parametrize("dynamic", [True, False])
@pytest.mark.parametrize("sizes", [[3], [3, 3], [3, 4, 5]], ids=["once", "again", "new sizes"])
def test_a_retained_graph_backward_repeated_captures_as_pytorch(dynamic, sizes):
    # a .grad that is None and one that is not are two graphs; a static graph's first new
    # size is one more capture of each, then it serves every size
    ours, got = _retained_captures(nt, dynamic, sizes)
    theirs, want = _retained_captures(torch, dynamic, sizes)
    assert ours == theirs == (2 if dynamic or len(set(sizes)) == 1 else 4)
    _, eager = _retained_captures(nt, None, sizes)
    for g, e, w in zip(got, eager, want):
        _same(g, e, "compiled against eager")
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)


# A pass that meets a graph again is matched against a template of it (_match) instead
# of walked: changes after the template is made must count and compute as PyTorch's.
TEMPLATE_CASES = {
    "same program": [{}],
    "another sum dim": [{"dim": 1}, {"dim": 1}, {}],
    "another exponent": [{"p": 3.0}, {}],
    "grad defined": [{"grad_first": True}, {}, {"grad_first": True}],
    "a hook added": [{"hook": True}, {}],
    "new sizes": [{"n": 4}, {"n": 3}, {"n": 4}, {"n": 5}],
}


@pytest.mark.parametrize("dynamic", [True, False])
@pytest.mark.parametrize("case", TEMPLATE_CASES)
def test_a_graph_met_again_counts_and_computes_as_pytorch(case, dynamic):
    runs = [{}, {}, {}, *TEMPLATE_CASES[case]]
    ours, got = _captures(nt, runs, dynamic)
    theirs, want = _captures(torch, runs, dynamic)
    assert ours == theirs
    for g, kw, w in zip(got, runs, want):
        _same(g, _program(nt, **kw), "compiled against eager")
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)


def test_a_graph_met_again_is_not_walked(monkeypatch):
    walks = []
    walk = ca.walk
    monkeypatch.setattr(ca, "walk", lambda *a, **k: walks.append(1) or walk(*a, **k))
    with ca._enable(_identity):
        for _ in range(5):
            _program(nt)
    assert len(walks) == 2  # the capture, and the hit that makes the template


def _chain(lib, change=None, n=40):
    """Gradients of a chain of adds, each also reading a leaf (a template checks such a
    run of equal nodes in C), with one change at its middle."""
    x = lib.ones(3, dtype=lib.float64, requires_grad=True)
    z = lib.full((3,), 2.0, dtype=lib.float64, requires_grad=True)
    y = x
    for k in range(n):
        if k == n // 2 and change == "alpha":
            y = lib.add(y, x, alpha=2)
        elif k == n // 2 and change == "other leaf":
            y = y + z
        elif k == n // 2 and change == "other op":
            y = y * x
        else:
            y = y + x
        if k == n // 2 and change == "hook":
            y.register_hook(lambda g: g * 3)
    y.sum().backward()
    return x.grad, z.grad


@pytest.mark.parametrize(
    "change, n",
    [(None, 40), ("alpha", 40), ("other leaf", 40), ("other op", 40), ("hook", 40),
     (None, 41), (None, 17)],
)  # fmt: skip
def test_a_chain_met_again_with_a_change_computes_as_eager(change, n):
    tca.reset()
    torch._dynamo.utils.counters.clear()
    results = {}
    for lib, enable, count in (
        (nt, ca._enable(_identity), counters),
        (torch, tca._enable(torch.compile(backend="eager")), torch._dynamo.utils.counters),
    ):
        with enable:
            for _ in range(3):
                _chain(lib)
            got = _chain(lib, change, n)
            again = _chain(lib)
        results[lib] = (count["compiled_autograd"]["captures"], got, again)
    ours, got, again = results[nt]
    assert ours == results[torch][0]
    for g, e, w in zip(got, _chain(nt, change, n), results[torch][1]):
        _same(g, e, "compiled against eager")
        if w is not None:
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)
    for g, e in zip(again, _chain(nt)):
        _same(g, e, "the chain met again")


def _saved_program(lib, k: int, stale: bool, twice: bool) -> None:
    x = lib.arange(1.0, 7.0, dtype=lib.float64).requires_grad_()
    a = x * 1.5
    y = (a.sin() * x).sum()
    if stale:
        a.mul_(2)
    y.backward()
    if twice:
        y.backward()


@pytest.mark.parametrize(
    "stale, twice, error",
    [
        (True, False, "modified by an inplace operation"),
        (False, True, "backward through the graph a second time"),
    ],
    ids=["stale saved tensor", "freed graph"],
)
def test_a_graph_met_again_raises_eagers_errors(stale, twice, error):
    for lib, enable in (
        (nt, ca._enable(_identity)),
        (torch, tca._enable(torch.compile(backend="eager"))),
    ):
        with enable:
            for k in range(3):
                _saved_program(lib, k, False, False)
            with pytest.raises(RuntimeError, match=error):
                _saved_program(lib, 3, stale, twice)


def _layout_program(lib, layouts):
    """x @ w backward for each layout of w (row- or column-major): w's gradient and x's."""
    rng = np.random.default_rng(0)
    xa, wa = rng.standard_normal((50, 37)), rng.standard_normal((37, 41))
    out = []
    for column_major in layouts:
        x = lib.tensor(xa).requires_grad_()
        w = lib.tensor(np.ascontiguousarray(wa.T)).t() if column_major else lib.tensor(wa)
        w = w.detach().requires_grad_()
        (x @ w).tanh().sum().backward()
        out += [w.grad, x.grad]
    return out


@pytest.mark.parametrize("dynamic", [True, False])
def test_a_new_layout_of_a_saved_factor_counts_as_pytorch_and_stays_exact(dynamic):
    # matmul's backward branches on a column-major factor (as PyTorch's mm backward): the
    # program made for one layout must not serve another; PyTorch counts a new layout as
    # it counts a new size (a recapture only of a static graph)
    layouts = [False, True, True, False]
    eager = _layout_program(nt, layouts)
    ca.reset()
    counters.clear()
    with ca._enable(_identity, dynamic=dynamic):
        got = _layout_program(nt, layouts)
    tca.reset()
    torch._dynamo.utils.counters.clear()
    with tca._enable(torch.compile(backend="eager"), dynamic=dynamic):
        want = _layout_program(torch, layouts)
    theirs = torch._dynamo.utils.counters["compiled_autograd"]["captures"]
    assert counters["compiled_autograd"]["captures"] == theirs == (1 if dynamic else 2)
    for g, e, w in zip(got, eager, want):
        assert g.stride() == e.stride() and np.array_equal(g.numpy(), e.numpy())
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-9)  # (another BLAS)


def test_new_sizes_of_a_dynamic_graph_reuse_its_compiled_source():
    from numtorch._dynamo import _codegen

    def grads(n):
        x = nt.arange(3.0 * n).reshape(n, 3).requires_grad_()
        w = nt.linspace(-1, 1, 6).reshape(3, 2).requires_grad_()
        (x @ w).tanh().sum().backward()
        return x.grad, w.grad

    _codegen._CODE.clear()
    with ca._enable(_identity):
        got = [grads(n) for n in (3, 4, 5, 6)]
    assert counters["compiled_autograd"]["captures"] == 1
    # the first size's program, and one text for the symbolic captures at 4 and 5, which
    # serves 6
    assert len(_codegen._CODE) == 2
    for n, pair in zip((3, 4, 5, 6), got):
        for g, e in zip(pair, grads(n)):
            np.testing.assert_array_equal(g.numpy(), e.numpy())


def test_the_cache_outlives_the_context_until_reset():
    with ca._enable(_identity):
        _program(nt)
    with ca._enable(_identity):
        _program(nt)
    assert counters["compiled_autograd"]["captures"] == 1
    ca.reset()
    with ca._enable(_identity):
        _program(nt)
    assert counters["compiled_autograd"]["captures"] == 2


def test_compiler_fn_gets_the_graph_and_its_callable_runs():
    seen = []

    def compiler(graph):
        seen.append(graph)
        return lambda inputs, walk: graph(inputs, walk)

    with ca._enable(compiler):
        a = _program(nt)
        b = _program(nt)
    assert len(seen) == 1 and "def compiled(inputs, nodes, m=None):" in seen[0].code
    assert [name for name, _ in seen[0].nodes][:2] == ["SumBackward0", "SumBackward1"]
    _same(a, b, "replay")
    _same(a, _program(nt), "eager")


# ------------------------------------------------------------------ hooks and the engine
def _hooked(lib, log):
    x = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([0.5, 0.25, 2.0], dtype=lib.float64, requires_grad=True)
    x.register_hook(lambda g: log.append(("x", g.tolist())))
    w.register_post_accumulate_grad_hook(lambda t: log.append(("w.post", t.grad.tolist())))
    h = x * w
    h.retain_grad()
    h.register_hook(lambda g: (log.append(("h", g.tolist())), g * 3)[1])
    y = h.exp().sum()
    y.grad_fn.register_prehook(lambda gs: log.append(("pre", len(gs))))
    h.grad_fn.register_hook(lambda gi, go: log.append(("post", len(gi), len(go))))
    y.backward()
    return x.grad, w.grad, h.grad


def test_hooks_run_in_eager_order_with_the_same_effect():
    logs = [[], [], []]
    eager = _hooked(nt, logs[0])
    with ca._enable(_identity):
        captured = _hooked(nt, logs[1])
        replayed = _hooked(nt, logs[2])
    assert logs[0] == logs[1] == logs[2] and len(logs[0]) == 5
    for e, c, r in zip(eager, captured, replayed):
        _same(e, c, "capture")
        _same(e, r, "replay")
    tlog: list = []
    _hooked(torch, tlog)
    assert [e[0] for e in tlog] == [e[0] for e in logs[0]]


def _two_branches(lib, log, b_first: bool):
    """Two branches whose nodes the engine runs in creation order, newest first."""
    x = lib.tensor([0.5, 1.0], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([2.0, 3.0], dtype=lib.float64, requires_grad=True)
    w.register_hook(lambda g: log.append("w"))
    if b_first:
        b = w.exp()
        a = x.sin()
    else:
        a = x.sin()
        b = w.exp()
    a.register_hook(lambda g: log.append("a"))
    b.register_hook(lambda g: log.append("b"))
    (a * b).sum().backward()
    return x.grad, w.grad


@pytest.mark.parametrize("b_first", [False, True])
def test_nodes_run_in_eagers_order_whichever_branch_is_newer(b_first):
    logs = [[], [], []]
    eager = _two_branches(nt, logs[0], b_first)
    with ca._enable(_identity):
        _two_branches(nt, logs[1], not b_first)  # the other order, captured first
        captured = _two_branches(nt, logs[2], b_first)
        replayed = _two_branches(nt, logs[2], b_first)
    tlog: list = []
    _two_branches(torch, tlog, b_first)
    assert logs[2] == logs[0] * 2 and logs[0] == tlog
    for e, c, r in zip(eager, captured, replayed):
        _same(e, c, "capture")
        _same(e, r, "replay")


def _grad_call(lib, **kw):
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    z = lib.tensor([3.0], dtype=lib.float64, requires_grad=True)
    y = (x * x).sum()
    return lib.autograd.grad(y, (x, z), **kw)


def test_autograd_grad_inputs_and_allow_unused():
    with ca._enable(_identity):
        for _ in range(2):
            gx, gz = _grad_call(nt, allow_unused=True)
            assert gz is None and gx.tolist() == [2.0, 4.0]
            with pytest.raises(RuntimeError, match="appears to not have been used"):
                _grad_call(nt)


def test_freed_graph_and_stale_saved_tensor_errors_are_eagers():
    with ca._enable(_identity):
        for _ in range(2):
            x = nt.tensor([1.0, 2.0], requires_grad=True)
            y = (x.exp() * 2).sum()
            y.backward(retain_graph=True)
            y.backward()
            with pytest.raises(RuntimeError, match="backward through the graph a second time"):
                y.backward()
            a = x * 1
            b = a.exp()
            b.add_(1)
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                b.sum().backward()


def test_create_graph_runs_eagerly_and_anomaly_mode_falls_back_with_one_warning():
    x = nt.tensor([0.5, 1.5], dtype=nt.float64, requires_grad=True)
    with ca._enable(_identity):
        (g,) = nt.autograd.grad((x**3).sum(), x, create_graph=True)
        (gg,) = nt.autograd.grad(g.sum(), x)
        assert gg.tolist() == [3.0, 9.0]
        assert counters["compiled_autograd"]["captures"] == 1  # only the second pass
        with nt.autograd.detect_anomaly(), warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            (x**2).sum().backward()
            (x**2).sum().backward()
        assert [str(m.message) for m in w if "compiled autograd" in str(m.message)] == [
            "compiled autograd: anomaly mode is on; running this backward pass eagerly"
        ]


def test_custom_function_falls_back_to_eager():
    class Cube(nt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x**2 if float(x.sum()) > 0 else g

    x = nt.tensor([1.0, 2.0], dtype=nt.float64, requires_grad=True)
    with ca._enable(_identity), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(2):
            x.grad = None
            Cube.apply(x).sum().backward()
            assert x.grad.tolist() == [3.0, 12.0]
    assert counters["compiled_autograd"]["captures"] == 0
    texts = [str(m.message) for m in w if "compiled autograd" in str(m.message)]
    assert texts == [
        "compiled autograd: the graph has a custom autograd.Function; running this backward "
        "pass eagerly"
    ]


def test_in_place_into_a_view_runs_as_an_opaque_call():
    def run():
        x = nt.tensor([1.0, 2.0, 3.0], dtype=nt.float64, requires_grad=True)
        y = x * 2
        y[1:].mul_(y[:2].exp())
        y.sum().backward()
        return x.grad

    eager = run()
    with ca._enable(_identity):
        _same(eager, run(), "capture")
        _same(eager, run(), "replay")
    assert counters["compiled_autograd"]["captures"] == 1


# ------------------------------------------------------------------ numtorch.compile
def _train(lib, wrap, steps=3):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 1))
    for p in model.parameters():
        p.data = lib.from_numpy(np.linspace(-1, 1, p.numel()).reshape(p.shape).astype("f"))
    m = wrap(model)
    opt = lib.optim.SGD(m.parameters(), lr=0.1)
    x = lib.from_numpy(np.linspace(-2, 2, 20, dtype="f").reshape(5, 4))
    y = lib.from_numpy(np.linspace(0, 1, 5, dtype="f").reshape(5, 1))
    for _ in range(steps):
        opt.zero_grad()
        loss = ((m(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    return [p.detach().numpy().copy() for p in model.parameters()], m


def test_a_compiled_module_trains_as_eager_with_its_backward_compiled():
    eager, _ = _train(nt, lambda m: m)
    compiled, m = _train(nt, nt.compile)
    for e, c in zip(eager, compiled):
        assert np.array_equal(e, c)
    assert counters["compiled_autograd"]["captures"] == 1
    theirs, tm = _train(torch, torch.compile)
    assert list(m.state_dict()) == list(tm.state_dict())
    assert repr(m) == repr(tm)
    for c, t in zip(compiled, theirs):
        np.testing.assert_allclose(c, t, rtol=1e-5, atol=1e-6)


def test_a_compiled_step_function_compiles_the_backward_inside_it():
    x = nt.tensor([0.5, -1.0, 2.0], dtype=nt.float64, requires_grad=True)

    @nt.compile(backend="eager", dynamic=False)
    def step():
        x.grad = None
        (x.sin() * x).sum().backward()
        return x.grad.clone()

    first, second = step(), step()
    expect = (x.detach().sin() + x.detach() * x.detach().cos()).numpy()
    assert np.array_equal(first.numpy(), second.numpy())
    np.testing.assert_allclose(first.numpy(), expect, rtol=1e-15)
    assert counters["compiled_autograd"]["captures"] == 1


def test_enable_with_compile_as_the_compiler_function():
    with ca._enable(nt.compile):
        a = _program(nt)
        b = _program(nt)
    _same(a, b, "replay")
    assert counters["compiled_autograd"]["compiles"] == 1


@pytest.mark.parametrize(
    "kwargs",
    [{"mode": "fast"}, {"backend": "nope"}, {"mode": "default", "options": {}}, {"model": 3}],
    ids=["mode", "backend", "mode and options", "not callable"],
)
def test_compile_argument_errors_are_pytorchs(kwargs):
    args = {"model": lambda x: x, **kwargs}
    with pytest.raises(Exception) as ours:
        nt.compile(**args)
    with pytest.raises(Exception) as theirs:
        torch.compile(**args)
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert str(ours.value) == str(theirs.value)


def test_compile_disable_returns_the_function():
    def f(x):
        return x

    assert nt.compile(f, disable=True) is f


def test_a_cuda_backward_compiles_bit_identical_to_eager(cuda):
    def run():
        nt.manual_seed(0)
        x = nt.randn(8, 16, device="cuda")
        w = nt.randn(16, 4, device="cuda", requires_grad=True)
        b = nt.zeros(4, device="cuda", requires_grad=True)
        h = (x @ w + b).relu() * 0.5
        h[:, 1:].mul_(h[:, :3].exp())  # an in-place write into a view: a CopySlices node
        (h * h).mean().backward()
        return w.grad, b.grad

    eager = run()
    with ca._enable(_identity):
        for _ in range(2):
            for e, c in zip(eager, run()):
                assert c.device.type == "cuda"
                _same(e, c, "cuda")
    assert counters["compiled_autograd"]["captures"] == 1


def _conv_grads(device: str) -> list:
    """Gradients of a conv/norm/pool model's loss (float64) with respect to its input and
    parameters, on ``device``."""
    nt.manual_seed(0)
    nn = nt.nn
    model = nn.Sequential(
        nn.Conv2d(2, 3, 3, padding=1),
        nn.GroupNorm(1, 3),
        nn.Tanh(),
        nn.AvgPool2d(2),
        nn.Flatten(),
        nn.Linear(12, 2),
    ).to(device, nt.float64)
    g = np.random.default_rng(4)
    x = nt.tensor(g.standard_normal((3, 2, 4, 4)), device=device, requires_grad=True)
    t = nt.tensor(g.integers(0, 2, 3), device=device)
    nt.nn.functional.cross_entropy(model(x), t).backward()
    return [x.grad, *(p.grad for p in model.parameters())]


def test_a_model_backward_compiles_as_eager_on_either_device(dev):
    """Captured then replayed on ``dev``: eager's gradients there bit for bit, on that
    device, and the CPU's to rounding."""
    eager = _conv_grads(dev)
    with ca._enable(_identity):
        for _ in range(2):
            got = _conv_grads(dev)
            for e, c in zip(eager, got):
                assert c.device.type == nt.device(dev).type
                _same(e, c, dev)
    assert counters["compiled_autograd"]["captures"] == 1
    cpu = _conv_grads("cpu")
    for c, e in zip(got, cpu):
        np.testing.assert_allclose(c.numpy(force=True), e.numpy(), rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------------ random programs
def _leaves_np(out):
    if isinstance(out, nt.Tensor):
        return [out.numpy(force=True)]
    if isinstance(out, (tuple, list)):
        return [a for o in out for a in _leaves_np(o)]
    return [out]


def compiled_mismatch(seed: int) -> str | None:
    """A random program's backward (tests/progfuzz.py) under compiled autograd, captured and
    replayed, against numtorch's eager engine: the same values bit for bit, or the same
    error. The difference, or None."""
    import progfuzz

    p = progfuzz.generate(seed)
    if "backward" not in progfuzz.modes_for(p):
        return None
    text = progfuzz.script(p, "backward")
    eager = progfuzz._outcome(progfuzz._exec(text)["run"], nt)
    ca.reset()
    with ca._enable(_identity):
        runs = [progfuzz._outcome(progfuzz._exec(text)["run"], nt) for _ in range(2)]
    for run in runs:
        if isinstance(eager, progfuzz.Raised) or isinstance(run, progfuzz.Raised):
            if eager != run:
                return f"seed {seed}: eager {eager!r}, compiled {run!r}\n{text}"
            continue
        for a, b in zip(_leaves_np(eager), _leaves_np(run)):
            if isinstance(a, np.ndarray) and not (
                a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
            ):
                return f"seed {seed}: eager {a!r}, compiled {b!r}\n{text}"
    return None


@pytest.mark.parametrize("block", range(4))
def test_random_programs_compile_bit_identical_to_eager(block):
    bad = [m for s in range(block * 100, block * 100 + 100) if (m := compiled_mismatch(s))]
    assert not bad, "\n\n".join(bad[:3])


if __name__ == "__main__":  # python tests/test_compiled_autograd.py SECONDS: fresh seeds
    import random
    import sys
    import time

    t0, n = time.time(), 0
    while time.time() - t0 < float(sys.argv[1] if len(sys.argv) > 1 else 60):
        n += 1
        if m := compiled_mismatch(random.randrange(1 << 40)):
            print(m, "\n")
    print(f"{n} programs")


def _two_roots(lib):
    a = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
    b = lib.tensor([2.0, -1.0], dtype=lib.float64, requires_grad=True)
    u, v = (a * b).exp(), a.sin() + b
    lib.autograd.backward((u.sum(), v), (None, lib.ones(2, dtype=lib.float64)), inputs=[a])
    return a.grad, b.grad


def test_several_roots_and_backward_inputs_accumulate_as_eager():
    eager = _two_roots(nt)
    with ca._enable(_identity):
        captured, replayed = _two_roots(nt), _two_roots(nt)
    for e, c, r in zip(eager, captured, replayed):
        _same(e, c, "capture")
        _same(e, r, "replay")
    assert eager[1] is None
    np.testing.assert_allclose(eager[0].numpy(), _two_roots(torch)[0].numpy(), rtol=1e-15)


def test_a_graph_at_a_new_rank_is_captured_apart_from_its_generic_program():
    """x * n for x of shapes (3,), (2, 3), (2, 1), then 0-d: the same graph, whose program
    made alike at the earlier sizes reads sizes of a rank the 0-d call lacks. The call is
    captured on its own and its gradients are eager's, bit for bit."""
    rng = np.random.default_rng(0)
    shapes = [((3,), (3,)), ((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3))]

    def grad_of(xa, na, v):
        x = nt.tensor(xa, requires_grad=True)
        out = x * nt.tensor(na)
        (out * nt.tensor(v)).sum().backward()
        return x.grad

    for sx, sn in shapes:
        xa, na = rng.standard_normal(sx), rng.integers(0, 5, sn)
        v = rng.standard_normal(np.broadcast_shapes(sx, sn))
        want = grad_of(xa, na, v)
        with ca._enable(_identity):
            got = [grad_of(xa, na, v) for _ in range(3)]
        for g in got:
            _same(g, want, f"x {sx} * n {sn}")
