"""numtorch.compile's forward: traced once per guard set, replayed as generated code with
its backward behind one CompiledFunctionBackward node; checked bit for bit against eager
(the op database with new values on each replay, models, training steps), the guards
that retrace, the fallbacks, and autograd's errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from opdb import float_arg_positions, get_path, ops_with_samples, resolve, samples
from twolibs import assert_close, tensor_leaves, to_nt

import numtorch as nt
import numtorch.nn.functional as F
from numtorch._dynamo.exc import Unsupported
from numtorch._dynamo.utils import counters


@pytest.fixture(autouse=True)
def _fresh():
    nt._dynamo.reset()
    counters.clear()
    yield
    nt._dynamo.reset()


def _graphs() -> int:
    return counters["stats"]["unique_graphs"]


def _np(t):
    return None if t is None else t.detach().cpu().numpy().copy()


def _same(a, b, what: str = "") -> None:
    if a is None or b is None:
        assert a is None and b is None, what
        return
    assert a.dtype == b.dtype and a.shape == b.shape, what
    assert np.array_equal(a, b, equal_nan=True), f"{what}: {a} != {b}"


# ------------------------------------------------------------------ the op database
def _perturbed(a):
    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
        return (a * 1.25 + 0.125).astype(a.dtype)
    if isinstance(a, (list, tuple)):
        return type(a)(_perturbed(x) for x in a)
    if isinstance(a, dict):
        return {k: _perturbed(v) for k, v in a.items()}
    return a


def _run(fn, op, args, kwargs, read=_np, ones: bool = False) -> list:
    """``read`` of fn's outputs on the sample, then of the gradients (None where unused) of
    <v, outputs> for its float inputs (v random, or ones)."""
    args, kwargs = to_nt(args), to_nt(kwargs)
    paths = float_arg_positions(args) if op.ndiff else []
    if op.grad_args is not None:
        paths = [p for p in paths if p[0] in op.grad_args]
    ins = [get_path(args, p).requires_grad_(True) for p in paths]
    nt.manual_seed(0)
    outs = list(tensor_leaves(fn(*args, **kwargs), nt.Tensor))
    res = [read(o) for o in outs]
    diff = [o for o in outs if o.requires_grad]
    if diff and ins:
        rng = np.random.default_rng(1)
        vs = [
            nt.ones_like(o) if ones else nt.tensor(rng.standard_normal(o.shape)).to(o.dtype)
            for o in diff
        ]
        grads = nt.autograd.grad(diff, ins, vs, allow_unused=True)
        res += [read(g) for g in grads]
    return res


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in ops_with_samples()])
def test_replays_are_bit_identical_to_eager_on_new_values(op):
    """Traced on a sample, replayed on other values of the same shapes: the outputs and
    the gradients are eager's, bit for bit (or the call runs eagerly)."""
    api = resolve(nt, op.api)
    for dtype in ("float64", "float32"):
        for s in samples(op, dtype):
            args, kwargs = _perturbed(s.args), _perturbed(s.kwargs)
            fn = lambda *a, **k: api(*a, **k)  # noqa: E731 - one compiled callable per sample
            try:
                eager = _run(fn, op, args, kwargs)
            except Exception:  # noqa: BLE001 - a sample eager refuses is not compiled either
                continue
            compiled = nt.compile(fn)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _run(compiled, op, s.args, s.kwargs)  # the traced call
                replayed = _run(compiled, op, args, kwargs)
            assert len(replayed) == len(eager)
            for e, r in zip(eager, replayed):
                _same(e, r, f"{op.name} {s}")


def _strides(fn, op, args, kwargs) -> list:
    """(shape, strides) of fn's outputs on the sample and of the gradients of <v, outputs>."""
    return _run(fn, op, args, kwargs, lambda t: t if t is None else (t.shape, t.stride()), True)


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in ops_with_samples()])
def test_replays_lay_out_results_as_eager(op):
    """A replay's outputs and gradients have eager's strides (a program leaves out layout
    calls it decided at its trace that run_kernel would not need)."""
    api = resolve(nt, op.api)
    for dtype in ("float64", "float32"):
        for s in samples(op, dtype):
            fn = lambda *a, **k: api(*a, **k)  # noqa: E731 - one compiled callable per sample
            try:
                eager = _strides(fn, op, s.args, s.kwargs)
            except Exception:  # noqa: BLE001 - a sample eager refuses is not compiled either
                continue
            compiled = nt.compile(fn)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _strides(compiled, op, s.args, s.kwargs)  # the traced call
                assert _strides(compiled, op, s.args, s.kwargs) == eager, f"{op.name} {s}"


def test_most_of_the_op_database_replays_as_generated_code():
    compiled = eager = 0
    for op in ops_with_samples():
        if op.view:  # (a view's output shares its input's memory: eager keeps that)
            continue
        api = resolve(nt, op.api)
        for s in samples(op, "float64")[:1]:
            fn = nt.compile(lambda *a, _api=api, **k: _api(*a, **k))
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fn(*to_nt(s.args), **to_nt(s.kwargs))
            except Exception:  # noqa: BLE001
                continue
            ran = [e for e in fn.entries.values() if e is not None]
            compiled += bool(ran)
            eager += not ran
    assert compiled > 10 * eager, (compiled, eager)


# ------------------------------------------------------------------ models
def _mlp(lib, seed=0):
    lib.manual_seed(seed)
    return lib.nn.Sequential(
        lib.nn.Linear(6, 8), lib.nn.ReLU(), lib.nn.Linear(8, 8), lib.nn.Tanh(), lib.nn.Linear(8, 1)
    )


def _grads(model) -> list:
    return [_np(p.grad) for p in model.parameters()]


def test_a_compiled_module_replays_forward_and_backward_as_eager():
    model = _mlp(nt)
    compiled = nt.compile(model)
    y = nt.randn(5, 1)
    for i in range(4):
        x = nt.randn(5, 6)
        out = compiled(x)
        name = out.grad_fn.name()
        F.mse_loss(out, y).backward()
        got = _grads(model)
        model.zero_grad()
        ref = model(x)
        F.mse_loss(ref, y).backward()
        _same(_np(out), _np(ref))
        for g, e in zip(got, _grads(model)):
            _same(g, e)
        model.zero_grad()
        assert name == ("CompiledFunctionBackward" if i else "AddmmBackward0")
    assert _graphs() == 1


def _train(compiled: bool, steps=4, device="cpu"):
    nt.manual_seed(0)
    model = nt.nn.Sequential(
        nt.nn.Linear(4, 8),
        nt.nn.BatchNorm1d(8),
        nt.nn.ReLU(),
        nt.nn.Dropout(0.3),
        nt.nn.Linear(8, 1),
    ).to(device)
    opt = nt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = lambda x, y: F.mse_loss(model(x), y)  # noqa: E731
    step_loss = nt.compile(loss_fn) if compiled else loss_fn
    losses = []
    for _ in range(steps):
        x, y = nt.randn(6, 4, device=device), nt.randn(6, 1, device=device)
        opt.zero_grad()
        loss = step_loss(x, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    bn = model[1]
    state = [_np(t) for t in (*model.parameters(), bn.running_mean, bn.running_var)]
    return losses, state, bn.num_batches_tracked.item(), bn.running_mean._version


def test_a_training_step_with_batchnorm_and_dropout_trains_as_eager(dev):
    eager = _train(False, device=dev)
    compiled = _train(True, device=dev)
    assert eager[0] == compiled[0]
    for e, c in zip(eager[1], compiled[1]):
        _same(e, c)
    assert eager[2:] == compiled[2:]  # the buffers' updates and versions
    assert _graphs() == 1


def _cnn(device: str):
    nt.manual_seed(0)
    nn = nt.nn
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(4, 4, 3),
        nn.Flatten(),
        nn.Linear(4, 3),
    ).to(device, nt.float64)


def _cnn_step(model, x, t) -> list:
    """The model's outputs and its parameters' gradients after one backward of the loss."""
    model.zero_grad()
    out = model(x)
    F.cross_entropy(out, t).backward()
    return [_np(out)] + [_np(p.grad) for p in model.parameters()]


def test_a_compiled_cnn_on_either_device_is_eager_there_and_on_the_cpu(dev):
    """Forward and backward of a compiled conv/batchnorm/pool model: eager's on the same
    device bit for bit, and eager's on the CPU (float64) to rounding."""
    rng = np.random.default_rng(0)
    compiled, eager, cpu = nt.compile(_cnn(dev)), _cnn(dev), _cnn("cpu")
    for i in range(3):
        x, t = rng.standard_normal((5, 1, 6, 6)), rng.integers(0, 3, 5)
        on = nt.tensor(x, device=dev), nt.tensor(t, device=dev)
        got = _cnn_step(compiled, *on)
        assert all(p.grad.device.type == nt.device(dev).type for p in compiled.parameters())
        for c, e in zip(got, _cnn_step(eager, *on)):
            _same(c, e, f"step {i}")
        assert_close(got, _cnn_step(cpu, nt.tensor(x), nt.tensor(t)), rtol=1e-12, atol=1e-14)
    assert _graphs() == 1


def test_on_a_gpu_an_output_left_out_of_backward_gets_zeros_there(cuda):
    w = nt.randn(3, 3, device="cuda", requires_grad=True)

    def f(x):
        h = x @ w
        return h, h.sin()

    compiled = nt.compile(f)
    for _ in range(3):
        x = nt.randn(2, 3, device="cuda")
        outs = []
        for fn in (compiled, f):
            a, b = fn(x)
            (g,) = nt.autograd.grad(b.sum(), w)
            outs.append((_np(a), _np(b), _np(g)))
        for c, e in zip(*outs):
            _same(c, e)
    assert _graphs() == 1


def test_eval_mode_is_another_guard_set():
    model = nt.nn.Sequential(nt.nn.Linear(3, 3), nt.nn.Dropout(0.5))
    compiled = nt.compile(model)
    x = nt.randn(4, 3)
    compiled(x)
    model.eval()
    out = compiled(x)
    _same(_np(out), _np(model[0](x)))
    model.train()
    compiled(x)
    assert _graphs() == 2


# ------------------------------------------------------------------ guards
def test_what_retraces_and_what_does_not():
    w = nt.randn(3, requires_grad=True)

    def f(x, scale=2.0):
        return (x * w).sum() * scale

    c = nt.compile(f)
    x = nt.randn(4, 3)
    c(x)
    c(nt.randn(4, 3))  # new values: a replay
    assert _graphs() == 1
    c(nt.randn(5, 3))  # a shape
    c(nt.randn(5, 3, dtype=nt.float64))  # a dtype
    c(nt.randn(4, 3), scale=3.0)  # a constant
    c(nt.randn(4, 3).requires_grad_())  # requires_grad
    c(nt.randn(3, 4).t())  # strides
    with nt.no_grad():
        assert c(x).grad_fn is None  # grad mode
    assert _graphs() == 7
    w2 = w
    w = nt.ones(3, requires_grad=True)  # the closure variable now holds another tensor
    out = c(x)
    _same(_np(out), _np((x * w).sum() * 2.0))
    w.data = nt.zeros(3)  # new data, the same tensor: read afresh
    _same(_np(c(x)), np.zeros((), np.float32))
    del w2


def test_a_call_on_the_same_tensors_sees_their_changed_state():
    # the same tensor objects at each call (a call on the same arrays reuses the last
    # call's key): requires_grad turned off, then new data of another shape
    x = nt.randn(4, 3)
    w = nt.randn(3, requires_grad=True)
    c = nt.compile(lambda x: (x * w).sum())
    assert c(x).requires_grad and c(x).requires_grad
    w.requires_grad_(False)
    assert not c(x).requires_grad
    x.data = nt.ones(2, 3)
    _same(_np(c(x)), _np((x * w).sum()))
    assert _graphs() == 3


GLOBAL_SCALE = 2.0


def _scaled(x):
    return x * GLOBAL_SCALE


def test_a_global_number_the_function_reads_is_guarded():
    global GLOBAL_SCALE
    c = nt.compile(_scaled)
    x = nt.ones(2)
    assert c(x).tolist() == [2.0, 2.0]
    GLOBAL_SCALE = 3.0
    try:
        assert c(x).tolist() == [3.0, 3.0]
    finally:
        GLOBAL_SCALE = 2.0


def test_a_replaced_parameter_or_a_new_attribute_retraces():
    model = nt.nn.Linear(3, 2)
    c = nt.compile(model)
    x = nt.randn(4, 3)
    c(x)
    model.weight = nt.nn.Parameter(nt.ones(2, 3))
    _same(_np(c(x)), _np(model(x)))
    model.bias.data = nt.zeros(2)
    _same(_np(c(x)), _np(model(x)))
    assert _graphs() == 2


def test_after_the_recompile_limit_calls_run_eagerly():
    c = nt.compile(lambda x: x + 1, dynamic=False)
    for n in range(1, 10):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = c(nt.zeros(n))
        assert out.tolist() == [1.0] * n
    assert _graphs() == 8
    assert any("recompile limit" in str(x.message) for x in w)


# ------------------------------------------------------------------ dynamic dims
_SIZES = [
    [(4, 3), (5, 3), (6, 3), (1, 3), (0, 3), (7, 3)],  # 0 and 1 are specialized
    [(4, 3), (4, 5), (6, 5), (7, 6), (2, 2)],  # each dim marked when it changes
    [(n, 3) for n in range(2, 14)],  # past the recompile limit
]


@pytest.mark.parametrize("dynamic", [None, True, False])
@pytest.mark.parametrize("sizes", _SIZES)
def test_graphs_per_size_as_pytorchs_automatic_dynamic(dynamic, sizes):
    import torch
    from torch._dynamo.utils import counters as theirs

    def graphs(lib, counts):
        lib._dynamo.reset()
        counts.clear()
        c = lib.compile(lambda x: (x * 2).sin().sum(), backend="eager", dynamic=dynamic)
        seen = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (the recompile limit's)
            for size in sizes:
                c(lib.ones(*size))
                seen.append(counts["stats"]["unique_graphs"])
        return seen

    try:
        assert graphs(nt, counters) == graphs(torch, theirs)
    finally:
        torch._dynamo.reset()


def test_mark_dynamic_dims_share_one_graph_as_in_pytorch():
    import torch
    from torch._dynamo.utils import counters as theirs

    def graphs(lib, counts):
        lib._dynamo.reset()
        counts.clear()
        c = lib.compile(lambda x: x.cos().sum(), backend="eager", dynamic=False)
        seen = []
        for n in (4, 5, 6, 1):
            x = lib.ones(n, 3)
            lib._dynamo.mark_dynamic(x, 0)
            c(x)
            seen.append(counts["stats"]["unique_graphs"])
        return seen

    try:
        assert graphs(nt, counters) == graphs(torch, theirs) == [1, 1, 1, 2]
    finally:
        torch._dynamo.reset()


def test_each_new_size_of_a_dynamic_dim_trains_as_eager():
    # Poisson-sampled batches (DP-SGD's): more sizes than the recompile limit, one graph
    # after the first change, each size traced once and replayed after
    sizes = [5, 7, 5, 9, 4, 7, 6, 8, 10, 11, 3, 12, 5, 9, 2, 13]

    def train(compiled: bool):
        nt.manual_seed(0)
        model = nt.nn.Sequential(
            nt.nn.Linear(4, 8), nt.nn.BatchNorm1d(8), nt.nn.ReLU(), nt.nn.Linear(8, 1)
        )
        opt = nt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        step = nt.compile(model) if compiled else model
        names, losses = [], []
        for n in sizes:
            x, y = nt.randn(n, 4), nt.randn(n, 1)
            opt.zero_grad()
            out = step(x)
            names.append(out.grad_fn.name())
            loss = F.mse_loss(out, y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, [_np(t) for t in model.state_dict().values()], names

    eager = train(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no recompile limit, no eager fallback
        compiled = train(True)
    assert eager[0] == compiled[0]
    for e, c in zip(eager[1], compiled[1]):
        _same(e, c)
    assert _graphs() == 2
    replayed = [n in sizes[:i] for i, n in enumerate(sizes)]
    assert compiled[2] == ["CompiledFunctionBackward" if r else "AddmmBackward0" for r in replayed]


# ------------------------------------------------------------------ fallbacks
def test_data_dependent_python_finishes_eagerly_with_one_warning():
    def f(x):
        return x * 2 if x.sum() > 0 else x * 3

    c = nt.compile(f)
    with pytest.warns(UserWarning, match="read in Python"):
        assert c(nt.ones(2)).tolist() == [2.0, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert c(-nt.ones(2)).tolist() == [-3.0, -3.0]
        assert c(nt.ones(2)).tolist() == [2.0, 2.0]
    assert _graphs() == 0
    assert sum(counters["graph_break"].values()) == 1


@pytest.mark.parametrize("dynamic", [True, None])
def test_a_graph_that_breaks_is_not_traced_again_at_new_sizes_of_its_dynamic_dims(dynamic):
    calls = []  # whether each call of f is traced (the tracer is on the interpreter stack)

    def f(x):
        calls.append(bool(nt._core.state.state.stack))
        return x * 2 if x.sum() > 0 else x * 3

    c = nt.compile(f, dynamic=dynamic)
    with pytest.warns(UserWarning, match="read in Python"):
        c(nt.ones(2))
    traced = sum(calls)
    for n in (3, 4, 5, 6):  # (automatic dynamic marks dim 0 at the second size)
        assert c(-nt.ones(n)).tolist() == [-3.0] * n
        assert c(nt.ones(n)).tolist() == [2.0] * n
    retraced = sum(calls) - traced
    assert retraced == (0 if dynamic else 1)  # (the size that makes the dim dynamic)
    assert sum(counters["graph_break"].values()) == 1 + retraced


def test_fullgraph_refuses_what_it_cannot_trace():
    c = nt.compile(lambda x: x * 2 if x.sum() > 0 else x, fullgraph=True)
    with pytest.raises(Unsupported, match="read in Python"):
        c(nt.ones(2))


def test_a_module_with_hooks_runs_eagerly_and_its_hooks_run():
    model = nt.nn.Linear(2, 2)
    calls = []
    model.register_forward_hook(lambda m, i, o: calls.append(1))
    c = nt.compile(model)
    for _ in range(3):
        c(nt.ones(1, 2))
    assert len(calls) == 3 and _graphs() == 0


def test_a_backward_inside_the_function_runs():
    x = nt.tensor([0.5, -1.0, 2.0], dtype=nt.float64, requires_grad=True)

    @nt.compile
    def step():
        x.grad = None
        (x.sin() * x).sum().backward()
        return x.grad.clone()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first, second = step(), step()
    expect = (x.detach().sin() + x.detach() * x.detach().cos()).numpy()
    np.testing.assert_allclose(first.numpy(), expect, rtol=1e-15)
    _same(first.numpy(), second.numpy())


def test_an_output_that_aliases_an_input_runs_eagerly():
    c = nt.compile(lambda x: x)
    x = nt.ones(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert c(x) is x and c(x) is x


def test_under_a_transform_the_function_runs_eagerly():
    c = nt.compile(lambda x: (x.sin() ** 2).sum())
    x = nt.randn(3, dtype=nt.float64)
    g = nt.func.grad(c)(x)
    np.testing.assert_allclose(g.numpy(), np.sin(2 * x.numpy()), rtol=1e-12)
    per_sample = nt.func.vmap(nt.func.grad(c))(nt.randn(4, 3, dtype=nt.float64))
    assert per_sample.shape == (4, 3)


# ------------------------------------------------------------------ autograd's errors
def _compiled_exp():
    c = nt.compile(lambda x: (x.exp() * 2).sum())
    x = nt.randn(3, requires_grad=True)
    c(x)  # the traced call
    return c, x


def test_a_second_backward_raises_eagers_error_unless_retained():
    c, x = _compiled_exp()
    out = c(x)
    out.backward(retain_graph=True)
    out.backward()
    _same(_np(x.grad), 4 * np.exp(x.detach().numpy()))
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        out.backward()


def test_an_input_modified_in_place_before_backward_raises_eagers_error():
    c = nt.compile(lambda x, w: (x * w).sum())
    w = nt.randn(3, requires_grad=True)
    x = nt.randn(3)
    c(x, w)
    out = c(x, w)
    x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_an_output_modified_in_place_before_backward_raises_eagers_error():
    c = nt.compile(lambda x: x.exp())
    x = nt.randn(3, requires_grad=True)
    c(x)
    out = c(x)
    out.mul_(2)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
        out.sum().backward()


def test_double_backward_is_refused_as_pytorch_refuses_it():
    c, x = _compiled_exp()
    out = c(x)
    with pytest.raises(RuntimeError, match="does not currently support double backward"):
        nt.autograd.grad(out, x, create_graph=True)


def test_tensor_hooks_on_parameters_run_after_the_compiled_node():
    model = nt.nn.Linear(3, 1)
    seen = []
    model.weight.register_hook(lambda g: seen.append(g.clone()) or g * 2)
    c = nt.compile(model)
    x = nt.randn(2, 3)
    c(x).sum().backward()
    model.zero_grad()
    c(x).sum().backward()
    _same(_np(seen[0]), _np(seen[1]))
    _same(_np(model.weight.grad), 2 * _np(seen[1]))


def test_per_sample_gradients_under_vmap_of_grad_are_traced_and_replayed():
    """vmap(grad(...)) over functional_call inside a compiled function: the batch rules'
    calls on untraced parameters reach the tracer below the transforms."""
    nt.manual_seed(0)
    model = nt.nn.Sequential(
        nt.nn.Conv2d(1, 3, 3), nt.nn.ReLU(), nt.nn.Flatten(), nt.nn.Linear(12, 2)
    )
    gen = nt.Generator().manual_seed(0)

    def clipped_noisy(x, y):
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, xi, yi):
            out = nt.func.functional_call(model, p, (xi.unsqueeze(0),))
            return F.cross_entropy(out, yi.unsqueeze(0))

        grads = nt.func.vmap(nt.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
        norms = nt.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in grads.values()))
        scale = (1.0 / (norms + 1e-6)).clamp(max=1.0)
        return {
            k: (g * scale.view(-1, *[1] * (g.dim() - 1))).sum(0)
            + nt.normal(0.0, 0.1, g.shape[1:], generator=gen)
            for k, g in grads.items()
        }

    compiled = nt.compile(clipped_noisy)
    for i in range(3):
        x, y = nt.randn(5, 1, 4, 4), nt.randint(0, 2, (5,))
        state = gen.get_state()
        got = compiled(x, y)
        gen.set_state(state)
        want = clipped_noisy(x, y)
        for k in want:
            _same(_np(got[k]), _np(want[k]), f"call {i} {k}")
    assert _graphs() == 1 and not counters["graph_break"]


def test_writes_into_inputs_and_their_views_replay_with_eagers_versions():
    def f(x, buf):
        buf.view(-1)[:2].add_(x.sum())  # through a view of a buffer the function gets
        x.mul_(2)
        return buf * 1.0

    c = nt.compile(f)
    for _ in range(3):
        x, buf = nt.ones(3), nt.zeros(2, 2)
        ex, ebuf = nt.ones(3), nt.zeros(2, 2)
        _same(_np(c(x, buf)), _np(f(ex, ebuf)))
        _same(_np(x), _np(ex))
        _same(_np(buf), _np(ebuf))
        assert (x._version, buf._version) == (ex._version, ebuf._version)
    assert _graphs() == 1


def test_outputs_that_alias_inputs_or_each_other_run_eagerly():
    x = nt.randn(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = nt.compile(lambda x: x[1:])
        c(x)
        assert c(x)._base is x
        c2 = nt.compile(lambda x: (lambda h: (h, h.view(2, 2)))(x * 2))
        c2(x)
        h, v = c2(x)
        h.add_(1)
        _same(_np(v).reshape(-1), _np(h))
    assert _graphs() == 0


def test_modes_and_module_numbers_are_guards():
    class Scaled(nt.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = 2.0

        def forward(self, x):
            return x * self.scale

    m = Scaled()
    c = nt.compile(m)
    x = nt.ones(2)
    assert c(x).tolist() == [2.0, 2.0]
    m.scale = 3.0
    assert c(x).tolist() == [3.0, 3.0]
    with nt.inference_mode():
        assert c(x).is_inference() == m(x).is_inference()
    nt.set_default_dtype(nt.float64)
    try:
        f = nt.compile(lambda x: x + nt.zeros(2))
        assert f(x).dtype == nt.float64 and f(x).dtype == nt.float64
    finally:
        nt.set_default_dtype(nt.float32)
    assert f(x).dtype == nt.float32
    with nt.autograd.detect_anomaly(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert c(x).tolist() == [3.0, 3.0]


def test_factory_calls_are_part_of_the_program():
    def f(x):
        n = x.shape[0]
        h = nt.zeros(n, 3) + nt.arange(3) * nt.tensor(0.5) + nt.full((1, 3), 2.0)
        return h @ nt.eye(3) + x + nt.linspace(0, 1, 3) + nt.ones(3, dtype=nt.float64)

    c = nt.compile(f)
    for n in (2, 2, 4, 4):
        x = nt.randn(n, 3)
        _same(_np(c(x)), _np(f(x)))
    assert _graphs() == 2 and not counters["graph_break"]
    data = np.array([1.0, 2.0], np.float32)
    g = nt.compile(lambda x: x + nt.tensor(data))  # an array: a value no guard covers
    with pytest.warns(UserWarning, match="tensor\\(\\) of tensors or arrays"):
        g(nt.zeros(2))
    data[0] = 5.0
    assert g(nt.zeros(2)).tolist() == [5.0, 2.0]


# ------------------------------------------------------------------ random programs
def _outcome(fn, X, B, W, grad: bool):
    """fn's output on tensors over X and B, then (when ``grad``) the inputs' gradients of
    <W, output>; or the error, as (type, text)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = nt.tensor(X, requires_grad=grad)
            b = nt.tensor(B, requires_grad=grad and B.dtype.kind == "f")
            y = fn(x, b)
            res = [_np(y)]
            if grad and y.requires_grad:
                (y * nt.tensor(W).to(y.dtype)).sum().backward()
                res += [_np(x.grad), _np(b.grad)]
            return res
    except Exception as e:  # noqa: BLE001 - compared by type and text
        return (type(e), str(e))


def compile_mismatch(seed: int, cls: str | None = "base") -> str | None:
    """A random program (tests/progfuzz.py) under numtorch.compile, traced on its inputs
    and replayed on other values of the same shapes, against eager: the same values bit
    for bit (or the same error). The difference, or None."""
    import progfuzz

    p = progfuzz.generate(seed, cls=cls)
    f = progfuzz._exec(progfuzz.script(p, "forward"))["f"]
    grad = "backward" in progfuzz.modes_for(p)
    inputs = [(p.X, p.B), (_perturbed(p.X), _perturbed(p.B))]
    if seed % 2:  # the program under vmap, inside the compiled function
        dims = p.in_dims
        XB, BB = progfuzz._batched(p.X, dims[0], seed), progfuzz._batched(p.B, dims[1], seed + 1)
        g = f
        f = lambda lib, x, b: lib.func.vmap(lambda x, b: g(lib, x, b), in_dims=dims)(x, b)  # noqa: E731
        inputs = [(XB, BB), (_perturbed(XB), _perturbed(BB))]
    compiled = nt.compile(lambda x, b: f(nt, x, b))
    for X, B in inputs:
        y = _outcome(lambda x, b: f(nt, x, b), X, B, None, False)
        w = np.random.default_rng(seed).standard_normal(y[0].shape) if isinstance(y, list) else None
        eager = _outcome(lambda x, b: f(nt, x, b), X, B, w, grad)
        got = _outcome(compiled, X, B, w, grad)
        if isinstance(eager, tuple) or isinstance(got, tuple):
            if eager != got:
                return f"seed {seed}: eager {eager!r}, compiled {got!r}"
            continue
        for e, c in zip(eager, got, strict=True):
            if (e is None) != (c is None) or (
                e is not None
                and not (e.dtype == c.dtype and e.shape == c.shape and np.array_equal(e, c, True))
            ):
                return f"seed {seed}: eager {e!r}, compiled {c!r}\n{progfuzz.body_text(p)}"
    return None


def _program_classes() -> list:
    import progfuzz_classes

    return ["base", *progfuzz_classes.CLASSES]


@pytest.mark.parametrize("cls", _program_classes())
@pytest.mark.parametrize("block", range(4))
def test_random_programs_replay_bit_identical_to_eager(cls, block):
    """Each class of tests/progfuzz_classes.py (aliasing in-place writes, writes into fresh
    tensors, clamp ties, non-finite inputs, bad arguments: errors included) as the base."""
    seeds = range(block * 100, block * 100 + 100)
    bad = [m for s in seeds if (m := compile_mismatch(s, cls))]
    assert not bad, "\n\n".join(bad[:3])


def _raised(fn, *args):
    with pytest.raises(Exception) as e, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn(*args)
    return type(e.value), str(e.value)


def test_an_out_call_with_grad_raises_eagers_error_compiled():
    """A traced value's autograd state is its real tensor's: out='s refusal of autograd
    (named after the op) is raised as eager raises it."""
    import torch

    def f(lib, x):
        o = lib.empty_like(x)
        lib.sin(x, out=o)
        return o.cos()

    want = _raised(lambda: f(torch, torch.ones(2, requires_grad=True)))
    x = nt.ones(2, requires_grad=True)
    got = _raised(nt.compile(lambda x: f(nt, x)), x)
    assert (got[0].__name__, got[1]) == (want[0].__name__, want[1])
    assert got == _raised(lambda: f(nt, x))


def test_vmaps_level_in_an_error_is_counted_as_eager_counts_it():
    """The tracer below a vmap is no level of PyTorch's: the error names level 1."""
    import torch

    def f(lib, x):
        return lib.func.vmap(lambda r: lib.zeros(2).index_copy_(0, lib.tensor([0, 1]), r))(x)

    want = _raised(lambda: f(torch, torch.ones(3, 2)))
    got = _raised(nt.compile(lambda x: f(nt, x)), nt.ones(3, 2))
    assert "at level 1." in want[1]
    assert (got[0].__name__, got[1]) == (want[0].__name__, want[1])


def test_a_traced_value_shows_python_a_tensor():
    """An operator's TypeError, type(t).__name__ and print show eager's Tensor."""
    import torch

    want = _raised(lambda: torch.ones(2) + "1")
    got = _raised(nt.compile(lambda x: x + "1"), nt.ones(2))
    assert (got[0].__name__, got[1]) == (want[0].__name__, want[1])
    names = []
    nt.compile(lambda x: names.append((type(x).__name__, repr(x))) or x * 2)(nt.ones(2))
    assert names == [("Tensor", repr(nt.ones(2)))]


def test_reseeding_inside_the_function_runs_it_eagerly():
    def f(x):
        nt.manual_seed(3)
        return x + nt.randn(3)

    c = nt.compile(f)
    with pytest.warns(UserWarning, match="generator seeded"):
        first = c(nt.zeros(3))
    second = c(nt.zeros(3))
    _same(_np(first), _np(second))
    _same(_np(second), _np(f(nt.zeros(3))))
    assert _graphs() == 0


def test_a_bounds_check_that_reads_an_index_stops_the_trace_with_eagers_error():
    def f(x):
        return nt.func.vmap(lambda r: r.index_select(-1, nt.tensor([0, 0])))(x)

    with pytest.raises(RuntimeError) as eager:
        f(nt.zeros(4, 0))
    with pytest.raises(RuntimeError) as compiled, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nt.compile(f)(nt.zeros(4, 0))
    assert str(compiled.value) == str(eager.value)


@pytest.mark.parametrize("direct", [True, False], ids=["both used", "through the other"])
def test_arguments_whose_histories_meet_get_eagers_gradients(direct):
    """b = x * 2 passed beside x: the compiled node returns a's and b's gradients, and the
    engine carries b's on through b's history to x."""

    def f(a, b):
        return (a * b).sum() if direct else (b * b).exp().sum()

    c = nt.compile(f)
    for _ in range(3):
        x = nt.randn(3, dtype=nt.float64, requires_grad=True)
        y = x * 2
        got = nt.autograd.grad(c(x, y), [x])[0]
        want = nt.autograd.grad(f(x, y), [x])[0]
        _same(_np(got), _np(want))
    assert _graphs() == 1
