"""A training step compiled whole: numtorch.compile over a bare loop (the forward,
``loss.backward()``, each parameter updated in place under no_grad, ``p.grad = None``),
whose backward becomes part of the traced program. Checked bit for bit against the same
step run eagerly, and against PyTorch (values, errors, compiled autograd's counters)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch._dynamo.compiled_autograd as tca

import numtorch as nt
from numtorch._dynamo import compiled_autograd as ca
from numtorch._dynamo.exc import Unsupported
from numtorch._dynamo.utils import counters


@pytest.fixture(autouse=True)
def _fresh():
    nt._dynamo.reset()
    counters.clear()
    yield
    nt._dynamo.reset()


def _data(n: int, width: int = 5) -> tuple:
    rng = np.random.default_rng(n)
    return rng.standard_normal((n, width)).astype("f4"), rng.standard_normal((n, 1)).astype("f4")


def _bare(lib, *, retain=False, twice=False, zero=True, hook=False, lr=0.1):
    """A model and its bare-loop step ``step(x, y) -> loss``."""
    nn = lib.nn
    model = nn.Sequential(nn.Linear(5, 5), nn.Tanh(), nn.Linear(5, 1))
    params = list(model.parameters())
    rng = np.random.default_rng(0)
    with lib.no_grad():  # the same weights in both libraries
        for p in params:
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype("f4") / 2))
    calls = []
    if hook:
        params[0].register_hook(lambda g: calls.append(1))

    def step(x, y):
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward(retain_graph=retain)
        if twice:
            loss.backward()
        with lib.no_grad():
            for p in params:
                p.sub_(lr * p.grad)
                if zero:
                    p.grad = None
        return loss

    step.params, step.calls, step.model = params, calls, model
    return step


def _train(lib, sizes, compile_=None, ca_dynamic=None, **kw) -> tuple:
    """The parameters and losses after a step at each of ``sizes`` (``compile_``: the
    keywords of numtorch.compile; ``ca_dynamic``: compiled autograd enabled, so dynamic)."""
    step = _bare(lib, **kw)
    run = step if compile_ is None else lib.compile(step, **compile_)
    enable = ca._enable if lib is nt else tca._enable
    identity = (lambda g: g) if lib is nt else torch.compile(backend="eager")
    losses = []
    with enable(identity, dynamic=ca_dynamic) if ca_dynamic is not None else _nothing():
        for n in sizes:
            x, y = _data(n)
            loss = run(lib.tensor(x), lib.tensor(y))
            losses.append(loss.detach().numpy().copy())
    params = [p.detach().numpy().copy() for p in step.params]
    return params, losses, step


class _nothing:  # noqa: N801 - a context manager
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _same_bits(a: list, b: list) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and x.shape == y.shape
        assert np.array_equal(x, y), f"{x} != {y}"


@pytest.mark.parametrize("ca_dynamic", [None, True, False], ids=["plain", "ca", "ca-static"])
def test_a_bare_loop_step_is_one_program_with_eagers_bits(ca_dynamic):
    sizes = [4] * 5
    eager, eager_losses, _ = _train(nt, sizes)
    got, losses, step = _train(nt, sizes, {"fullgraph": True}, ca_dynamic)
    _same_bits(eager, got)
    _same_bits(eager_losses, losses)
    assert all(p.grad is None for p in step.params)
    # one trace, its backward captured once; the other steps replay the program
    assert counters["stats"]["unique_graphs"] == 1
    assert counters["compiled_autograd"]["captures"] == 1
    assert not counters["graph_break"]
    theirs, their_losses, _ = _train(torch, sizes)
    for g, t in zip(got + losses, theirs + their_losses):
        np.testing.assert_allclose(g, t, rtol=1e-5, atol=1e-6)


def test_the_step_leaves_the_gradients_when_it_does_not_clear_them():
    # .grad accumulates across steps: the first step's program sets it, the next steps
    # (their .grad no longer None) are guarded apart
    sizes = [3] * 4
    eager, _, eager_step = _train(nt, sizes, zero=False)
    got, _, step = _train(nt, sizes, {}, zero=False)
    _same_bits(eager, got)
    _same_bits([p.grad.numpy() for p in eager_step.params], [p.grad.numpy() for p in step.params])
    theirs, _, their_step = _train(torch, sizes, zero=False)
    for g, t in zip(step.params, their_step.params):
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_two_backwards_in_the_step_accumulate_as_eager():
    # the first retains the graph, the second accumulates into the .grad the first made
    sizes = [3] * 4
    eager, eager_losses, _ = _train(nt, sizes, retain=True, twice=True)
    got, losses, _ = _train(nt, sizes, {"fullgraph": True}, retain=True, twice=True)
    _same_bits(eager, got)
    _same_bits(eager_losses, losses)
    theirs, _, _ = _train(torch, sizes, retain=True, twice=True)
    for g, t in zip(got, theirs):
        np.testing.assert_allclose(g, t, rtol=1e-5, atol=1e-6)


def _backward_again(lib, compiled: bool, retain: bool):
    """The error of a second backward of the loss a step returned (or None)."""
    step = _bare(lib, retain=retain)
    run = nt.compile(step) if compiled else step
    x, y = _data(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a retained graph: the step runs eagerly)
        for _ in range(3):
            loss = run(lib.tensor(x), lib.tensor(y))
    try:
        loss.backward()
    except RuntimeError as e:
        return str(e)
    return None


@pytest.mark.parametrize("retain", [False, True], ids=["freed", "retained"])
def test_a_second_backward_of_the_returned_loss_raises_eagers_error(retain):
    # freed by the step's backward; or retained, its saved weights since updated in place
    eager = _backward_again(nt, False, retain)
    assert eager is not None
    assert _backward_again(nt, True, retain) == eager
    theirs = _backward_again(torch, False, retain)
    assert theirs.split(":")[0] == eager.split(":")[0]


def test_a_new_size_retraces_and_compiled_autograd_counts_as_pytorch():
    # a static step: each size is a guard set of its own; compiled autograd (static) counts
    # the first capture and, at the first new size, one dynamic one, as PyTorch's
    sizes = [2, 2, 3, 3, 4, 2]
    eager, eager_losses, _ = _train(nt, sizes)
    got, losses, _ = _train(nt, sizes, {"dynamic": False}, ca_dynamic=False)
    _same_bits(eager, got)
    _same_bits(eager_losses, losses)
    assert counters["stats"]["unique_graphs"] == 3
    ours = counters["compiled_autograd"]["captures"]
    torch._dynamo.reset()
    tca.reset()
    torch._dynamo.utils.counters.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _train(torch, sizes, {"dynamic": False, "backend": "eager"}, ca_dynamic=False)
    assert ours == torch._dynamo.utils.counters["compiled_autograd"]["captures"] == 2


@pytest.mark.parametrize("dynamic", [None, True])
def test_steps_at_changing_sizes_keep_eagers_bits(dynamic):
    sizes = [2, 3, 4, 3, 5, 2]
    eager, eager_losses, _ = _train(nt, sizes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a dynamic trace runs its backward eagerly)
        got, losses, _ = _train(nt, sizes, {"dynamic": dynamic})
    _same_bits(eager, got)
    _same_bits(eager_losses, losses)


def test_a_hook_on_a_parameter_runs_the_step_eagerly_with_its_calls():
    sizes = [3] * 3
    eager, _, eager_step = _train(nt, sizes, hook=True)
    with pytest.raises(Unsupported, match="hooks"):
        _train(nt, sizes, {"fullgraph": True}, hook=True)
    nt._dynamo.reset()
    with pytest.warns(UserWarning, match="hooks"):
        got, _, step = _train(nt, sizes, {}, hook=True)
    _same_bits(eager, got)
    assert len(step.calls) == len(eager_step.calls) == 3


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_a_step_with_an_optimizer_inside_runs_eagerly_with_eagers_bits(momentum):
    # the optimizer's state (momentum buffers made at its first step) lives outside what a
    # program replays: the step runs eagerly, as it is
    def train(compiled: bool) -> list:
        step = _bare(nt)
        params = step.params
        opt = nt.optim.SGD(params, lr=0.1, momentum=momentum)
        x, y = (nt.tensor(a) for a in _data(3))

        def opt_step():
            opt.zero_grad()
            loss = nt.nn.functional.mse_loss(step.model(x), y)
            loss.backward()
            opt.step()
            return loss.detach()

        run = nt.compile(opt_step) if compiled else opt_step
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(4):
                run()
        if compiled:
            assert any("optimizer's step" in str(w.message) for w in caught)
        return [p.detach().numpy().copy() for p in params]

    _same_bits(train(False), train(True))


def _models():
    nn, F = nt.nn, nt.nn.functional
    cnn = (
        lambda: nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(64, 3),
        ),
        lambda: (nt.randn(5, 1, 8, 8), nt.randint(0, 3, (5,))),
        F.cross_entropy,
    )
    norms = (
        lambda: nn.Sequential(
            nn.Linear(4, 8),
            nn.BatchNorm1d(8),
            nn.ReLU(),
            nn.Dropout(0.3),
            nn.Linear(8, 8),
            nn.LayerNorm(8),
            nn.GELU(),
            nn.Linear(8, 2),
        ),
        lambda: (nt.randn(6, 4), nt.randint(0, 2, (6,))),
        F.cross_entropy,
    )
    embedding = (
        lambda: nn.Sequential(nn.Embedding(10, 4), nn.Flatten(), nn.Linear(12, 1)),
        lambda: (nt.randint(0, 10, (5, 3)), nt.randn(5, 1)),
        F.mse_loss,
    )
    return {"cnn": cnn, "batchnorm, dropout, layernorm": norms, "embedding": embedding}


@pytest.mark.parametrize("name", list(_models()))
def test_bare_loop_steps_of_other_models_are_one_program_with_eagers_bits(name):
    make, data, loss_fn = _models()[name]
    results = []
    for compiled in (False, True):
        nt.manual_seed(0)
        model = make()
        params = list(model.parameters())
        x, y = data()

        def step():
            loss = loss_fn(model(x), y)
            loss.backward()
            with nt.no_grad():
                for p in params:
                    p.sub_(0.05 * p.grad)
                    p.grad = None
            return loss.detach()

        run = nt.compile(step, fullgraph=True) if compiled else step
        nt.manual_seed(1)  # (dropout's draws: the replays draw as eager does)
        losses = [run().numpy() for _ in range(4)]
        results.append([*losses, *(t.detach().numpy().copy() for t in model.state_dict().values())])
    _same_bits(*results)
    assert counters["stats"]["unique_graphs"] == 1


@pytest.mark.parametrize("kind", ["tensor hook", "post-accumulate hook"])
def test_a_hook_added_after_the_trace_is_called_as_eager(kind):
    # the program holds the backward, not the hooks: one added later sends the step back to
    # a trace (here: eager, for a step with a hooked parameter)
    def train(compiled: bool) -> tuple:
        step = _bare(nt)
        run = nt.compile(step) if compiled else step
        x, y = (nt.tensor(a) for a in _data(3))
        calls = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (the hooked step runs eagerly)
            for i in range(5):
                if i == 2:
                    p = step.params[1]
                    if kind == "tensor hook":
                        p.register_hook(lambda g: calls.append(g.numpy().copy()))
                    else:
                        p.register_post_accumulate_grad_hook(
                            lambda t: calls.append(t.grad.numpy().copy())
                        )
                run(x, y)
        return [p.detach().numpy().copy() for p in step.params], calls

    (eager, eager_calls), (got, calls) = train(False), train(True)
    _same_bits(eager, got)
    assert len(calls) == len(eager_calls) == 3
    _same_bits(eager_calls, calls)
