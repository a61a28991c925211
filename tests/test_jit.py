"""numtorch.jit against torch.jit: scripted and traced functions and modules compute what
the originals compute (values and gradients), the deprecation warnings, the annotations,
fork/wait, freeze, and the refusal of TorchScript archives."""

from __future__ import annotations

import typing
import warnings

import numpy as np
import pytest
import torch
from twolibs import arr, assert_close, assert_same, assert_same_error, to_nt, to_torch

import numtorch as nt


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return fn(*args, **kwargs)


def _warnings_of(fn) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return sorted({(w.category.__name__, str(w.message)) for w in caught})  # (torch repeats some)


def _mlp(L):
    L.manual_seed(0)
    return L.nn.Sequential(
        L.nn.Linear(3, 4, dtype=L.float64), L.nn.Tanh(), L.nn.Linear(4, 2, dtype=L.float64)
    )


def _poly(x, y):
    return (x * y + x.sin()).sum(-1)


def _twin_mlps():
    a, b = _mlp(nt), _mlp(torch)
    b.load_state_dict({k: to_torch(v.numpy()) for k, v in a.state_dict().items()})
    return a, b


@pytest.mark.parametrize("how", ["script", "trace"])
def test_functions_compute_what_the_original_does(how):
    x, y = arr(2, 3), arr(2, 3, seed=1)

    def prog(L, x, y):
        jit = L.jit
        f = _quiet(jit.script, _poly) if how == "script" else _quiet(jit.trace, _poly, (x, y))
        first = f(x, y)
        return first, f(x * 2, y), f(x[:1], y[:1])  # other values, another shape

    assert_same(prog, x, y)


@pytest.mark.parametrize("how", ["script", "trace"])
def test_modules_share_parameters_and_train_like_the_original(how):
    x = arr(5, 3)
    mods = _twin_mlps()
    results = []
    for L, m in zip((nt, torch), mods):
        xt = L.tensor(x)
        s = _quiet(L.jit.script, m) if how == "script" else _quiet(L.jit.trace, m, xt)
        assert isinstance(s, L.jit.ScriptModule) and isinstance(s, L.nn.Module)
        assert dict(s.named_parameters())["0.weight"] is m[0].weight
        assert list(s.state_dict()) == list(m.state_dict())
        out = s(xt)
        out.pow(2).sum().backward()
        results.append((out, m[0].weight.grad, s(xt[:2])))
    assert_close(*results)


def test_result_types():
    m = _mlp(nt)
    s = _quiet(nt.jit.script, m)
    assert type(s).__name__ == "RecursiveScriptModule" == type(s[0]).__name__
    assert isinstance(s[0], nt.jit.RecursiveScriptModule) and s.original_name == "Sequential"
    assert repr(s) == repr(_quiet(torch.jit.script, _mlp(torch)))
    t = _quiet(nt.jit.trace, m, nt.ones(1, 3, dtype=nt.float64))
    assert isinstance(t, nt.jit.TopLevelTracedModule) and isinstance(t[0], nt.jit.TracedModule)
    assert type(t[0]).__name__ == "TracedModule"
    f = _quiet(nt.jit.script, _poly)
    assert isinstance(f, nt.jit.ScriptFunction) and f.name == "_poly"
    assert _quiet(nt.jit.script, f) is f and _quiet(nt.jit.script, s) is s


def test_scripted_module_runs_its_helper_methods():
    class Net(nt.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = 3.0
            self.lin = nt.nn.Linear(2, 2)

        def helper(self, x):
            return x * self.scale

        def forward(self, x):
            return self.helper(self.lin(x))

    net = Net()
    x = nt.ones(1, 2)
    s = _quiet(nt.jit.script, net)
    assert nt.equal(s(x), net(x)) and s.scale == 3.0


@pytest.mark.parametrize(
    "name",
    ["script", "trace", "trace_module", "fork", "wait", "freeze", "optimize_for_inference"],
)
def test_deprecation_warnings_match_torch(name):
    def calls(L):
        m = L.nn.Linear(2, 2).eval()
        x = L.ones(1, 2)
        scripted = _quiet(L.jit.script, m)
        fut = _quiet(L.jit.fork, L.sin, x)
        return {
            "script": lambda: L.jit.script(m),
            "trace": lambda: L.jit.trace(L.sin, x),
            "trace_module": lambda: L.jit.trace_module(m, {"forward": x}),
            "fork": lambda: L.jit.fork(L.sin, x),
            "wait": lambda: L.jit.wait(fut),
            "freeze": lambda: L.jit.freeze(scripted),
            "optimize_for_inference": lambda: L.jit.optimize_for_inference(scripted),
        }[name]

    assert _warnings_of(calls(nt)) == _warnings_of(calls(torch))


def test_tracing_runs_the_example_and_reports_is_tracing():
    seen = []

    def f(x):
        seen.append(nt.jit.is_tracing())
        return x + 1

    g = _quiet(nt.jit.trace, f, nt.zeros(2))
    assert seen == [True] and not nt.jit.is_tracing() and not nt.jit.is_scripting()
    assert nt.equal(g(nt.ones(2)), nt.full((2,), 2.0))

    def prog(L):
        return _quiet(L.jit.trace, lambda x: x.no_such_method(), L.ones(2))

    assert_same_error(prog)


def test_trace_errors_match_torch():
    def bad_method(L):
        m = L.nn.Linear(2, 2)
        return _quiet(L.jit.trace, m.extra_repr, L.ones(1, 2))

    def no_inputs(L):
        return _quiet(L.jit.trace, L.nn.Linear(2, 2))

    def not_a_module(L):
        return _quiet(L.jit.trace_module, L.sin, {"forward": L.ones(2)})

    for prog in (bad_method, no_inputs, not_a_module):
        assert_same_error(prog)


def test_trace_takes_keyword_inputs_and_the_already_scripted():
    m = nt.nn.Linear(2, 2)
    x = nt.ones(1, 2)
    t = _quiet(nt.jit.trace, m, example_kwarg_inputs={"input": x})
    assert nt.equal(t(x), m(x))
    s = _quiet(nt.jit.script, m)
    with pytest.warns(UserWarning, match="tracing it is a no-op"):
        assert _quiet(nt.jit.trace, s, x) is s


def test_annotations_run_eagerly():
    class M(nt.nn.Module):
        @nt.jit.export
        def exported(self):
            return 1

        @nt.jit.ignore
        def ignored(self):
            return 2

        @nt.jit.unused
        def unused(self):
            return 3

        @nt.jit.ignore(drop=False)
        def kept(self):
            return 4

    m = M()
    assert (m.exported(), m.ignored(), m.unused(), m.kept()) == (1, 2, 3, 4)
    assert nt.jit.annotate(list[int], []) == [] and nt.jit.Final is torch.jit.Final
    d = {"a": nt.ones(1)}
    for v, t in [
        ([1, 2], list[int]),
        ([1, "a"], list[int]),
        (d, dict[str, nt.Tensor]),
        (None, typing.Optional[int]),  # noqa: UP045 - the typing form torch.jit reads
        ((1, 2.0), tuple[int, float]),
    ]:
        tv = {k: torch.ones(1) for k in v} if isinstance(v, dict) else v
        tt = dict[str, torch.Tensor] if isinstance(v, dict) else t
        assert nt.jit.isinstance(v, t) == torch.jit.isinstance(tv, tt)
    with pytest.raises(RuntimeError, match="must be a bool or a function but got 3"):
        nt.jit.ignore(3)
    with pytest.raises(RuntimeError, match="interface must be applied to a class"):
        _quiet(nt.jit.interface, len)


def test_fork_runs_now_and_wait_returns_its_value():
    x = arr(3)

    def prog(L, x):
        fut = _quiet(L.jit.fork, L.mul, x, 2)
        return _quiet(L.jit.wait, fut), fut.wait(), fut.done()

    assert_same(prog, x)
    assert_same_error(lambda L: _quiet(L.jit.fork, lambda: [][1]))


def test_freeze_checks_like_torch():
    def unscripted(L):
        return _quiet(L.jit.freeze, L.nn.Linear(2, 2))

    def training(L):
        return _quiet(L.jit.freeze, _quiet(L.jit.script, L.nn.Linear(2, 2)))

    def unscripted_optimize(L):
        return _quiet(L.jit.optimize_for_inference, L.nn.Linear(2, 2))

    for prog in (unscripted, training, unscripted_optimize):
        assert_same_error(prog)
    s = _quiet(nt.jit.script, nt.nn.Linear(2, 2))
    frozen = _quiet(nt.jit.optimize_for_inference, s)
    assert isinstance(frozen, nt.jit.ScriptModule) and not frozen.training


def test_save_and_load_are_refused_with_a_clear_error(tmp_path):
    s = _quiet(nt.jit.script, nt.nn.Linear(2, 2))
    text = "TorchScript serialization is not supported by numtorch"
    for call in (
        lambda: nt.jit.save(s, tmp_path / "m.pt"),
        lambda: nt.jit.load(tmp_path / "m.pt"),
        lambda: s.save(tmp_path / "m.pt"),
    ):
        with pytest.raises(RuntimeError, match=text):
            call()


def test_scripted_gradients_match_finite_differences_free_torch():
    x = arr(4, 3)
    m = _mlp(nt)
    s = _quiet(nt.jit.script, m)
    xt = to_nt(x, requires_grad=True)
    (g,) = nt.autograd.grad(s(xt).sum(), xt)
    xe = to_nt(x, requires_grad=True)
    (ge,) = nt.autograd.grad(m(xe).sum(), xe)
    np.testing.assert_allclose(g.numpy(), ge.numpy(), rtol=1e-12)
