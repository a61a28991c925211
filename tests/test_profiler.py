"""The profiler (torch.profiler, torch.autograd.profiler) against PyTorch's on the same
programs: event names and counts, nesting, the table's columns, Chrome traces,
schedules, memory and input shapes; and that profiling leaves nothing behind."""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest
import torch
from twolibs import arr, to_lib

import numtorch as nt
from numtorch._core import aten, upcalls
from numtorch._core.state import state
from numtorch.autograd import engine
from numtorch.utils._python_dispatch import TorchDispatchMode

LIBS = {"numtorch": nt, "torch": torch}


def _program(lib, prof_mod):
    """A small model's forward (inside a record_function) and backward."""
    x = to_lib(lib, arr(4, 3), requires_grad=True)
    w = to_lib(lib, arr(3, 2, seed=1), requires_grad=True)
    with prof_mod.record_function("model"):
        y = lib.mm(x * 2, w).relu().sum()
    y.backward()


def _profiled(lib, **kw):
    with lib.autograd.profiler.profile(**kw) as p:
        _program(lib, lib.autograd.profiler)
    return p


@pytest.fixture(scope="module")
def both():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            name: _profiled(lib, record_shapes=True, profile_memory=True)
            for name, lib in LIBS.items()
        }


def _names(events) -> list:
    return [e.name for e in events]


def test_forward_op_names_match_torch(both):
    children = {
        k: _names(next(e for e in p.function_events if e.name == "model").cpu_children)
        for k, p in both.items()
    }
    assert (
        children["numtorch"]
        == children["torch"]
        == ["aten::mul", "aten::mm", "aten::relu", "aten::sum"]
    )


def test_backward_node_events_match_torch(both):
    def nodes(p):
        counts = {}
        for e in p.key_averages():
            if "Backward" in e.key or "AccumulateGrad" in e.key:
                counts[e.key] = e.count
        return counts

    ours, theirs = nodes(both["numtorch"]), nodes(both["torch"])
    assert ours == theirs
    assert ours["autograd::engine::evaluate_function: MulBackward0"] == 1
    assert ours["torch::autograd::AccumulateGrad"] == 2


def test_backward_node_contains_its_ops(both):
    events = both["numtorch"].function_events
    node = next(e for e in events if e.name == "MmBackward0")
    assert node.cpu_parent.name == "autograd::engine::evaluate_function: MmBackward0"
    assert _names(node.cpu_children) == [
        "aten::transpose",
        "aten::mm",
        "aten::transpose",
        "aten::mm",
    ]
    assert node.sequence_nr >= 0


def test_self_and_total_times_add_up(both):
    events = both["numtorch"].function_events
    assert len(events) > 20
    for e in events:
        assert 0 <= e.self_cpu_time_total <= e.cpu_time_total
        children = sum(c.cpu_time_total for c in e.cpu_children)
        assert e.cpu_time_total >= children
        assert e.self_cpu_time_total == pytest.approx(e.cpu_time_total - children)
        for c in e.cpu_children:
            assert e.time_range.start <= c.time_range.start <= c.time_range.end <= e.time_range.end
    total = events.self_cpu_time_total
    assert total == pytest.approx(sum(e.self_cpu_time_total for e in events))
    avg = both["numtorch"].key_averages()
    assert sum(a.count for a in avg) == len(events)
    assert avg.self_cpu_time_total == pytest.approx(total)
    mm = next(a for a in avg if a.key == "aten::mm")
    assert mm.cpu_time == pytest.approx(mm.cpu_time_total / 3)


def _header_lines(table: str) -> list:
    lines = table.splitlines()
    return lines[:3]


@pytest.mark.parametrize("memory", [False, True])
def test_table_header_equals_torch(memory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tables = {
            k: _profiled(lib, profile_memory=memory)
            .key_averages()
            .table(sort_by="count", row_limit=5)
            for k, lib in LIBS.items()
        }
    assert _header_lines(tables["numtorch"]) == _header_lines(tables["torch"])
    for t in tables.values():
        assert re.fullmatch(r"Self CPU time total: \d+\.\d{3}(us|ms|s)", t.splitlines()[-1])
        assert len(t.splitlines()) == 3 + 5 + 2


def test_table_with_input_shapes_has_torch_columns(both):
    def columns(p):
        head = p.key_averages(group_by_input_shape=True).table(row_limit=3).splitlines()[1]
        return re.split(r"\s{2,}", head.strip())

    ours = columns(both["numtorch"])
    assert ours == columns(both["torch"])
    assert ours[-1] == "Input Shapes" and "Self CPU Mem" in ours


def test_table_options(both):
    t = (
        both["numtorch"]
        .key_averages()
        .table(
            sort_by="self_cpu_time_total", row_limit=100, header="TITLE", top_level_events_only=True
        )
    )
    lines = t.splitlines()
    assert lines[1] == "TITLE"
    assert lines[3] == "This report only display top-level ops statistics"
    rows = lines[7:-2]
    assert {r.split()[0] for r in rows} == {"model", "aten::ones_like"} | {
        "autograd::engine::evaluate_function:"
    }
    ms = both["numtorch"].key_averages().table(time_unit="ms", row_limit=1).splitlines()
    assert re.search(r"\d+\.\d{3}ms", ms[3])


def test_input_shapes_equal_torch(both):
    def shapes(p):
        named = ("aten::mul", "aten::mm", "aten::relu")
        return [(e.name, e.input_shapes) for e in p.function_events if e.name in named]

    ours, theirs = shapes(both["numtorch"]), shapes(both["torch"])
    assert (
        ours[:3]
        == theirs[:3]
        == [
            ("aten::mul", [[4, 3], []]),
            ("aten::mm", [[4, 3], [3, 2]]),
            ("aten::relu", [[4, 2]]),
        ]
    )
    assert sorted(ours) == sorted(theirs)  # (backward's two mm calls in either order)


def test_memory_columns(both):
    def mem(p, key):
        return next(a for a in p.key_averages() if a.key == key)

    for key in ("aten::mm", "aten::relu"):
        ours, theirs = mem(both["numtorch"], key), mem(both["torch"], key)
        assert ours.cpu_memory_usage == theirs.cpu_memory_usage > 0
    model = mem(both["numtorch"], "model")
    assert model.cpu_memory_usage > 0 and model.self_cpu_memory_usage == 0
    table = both["numtorch"].key_averages().table(sort_by="cpu_memory_usage", row_limit=2)
    assert "CPU Mem" in table and " B " in table


def test_memory_and_shapes_off_by_default():
    p = _profiled(nt)
    assert all(e.cpu_memory_usage == 0 and e.input_shapes == [] for e in p.function_events)
    assert "CPU Mem" not in p.table()


def test_chrome_trace_is_valid_json(both, tmp_path):
    path = tmp_path / "trace.json"
    both["numtorch"].export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    assert len(events) == len(both["numtorch"].function_events)
    for ev in events:
        assert ev["ph"] == "X"
        assert isinstance(ev["ts"], float) and ev["dur"] >= 0
        assert isinstance(ev["pid"], int) and isinstance(ev["tid"], int)
    mm = [ev for ev in events if ev["name"] == "aten::mm"]
    assert len(mm) == 3 and mm[0]["args"]["Input Dims"] == [[4, 3], [3, 2]]
    model = next(ev for ev in events if ev["name"] == "model")
    assert model["cat"] == "user_annotation"
    assert model["ts"] <= mm[0]["ts"] and mm[0]["ts"] + mm[0]["dur"] <= model["ts"] + model["dur"]


def _dispatcher_state():
    return (
        upcalls.dispatch_mode,
        type(state.modes),
        engine._run_node,
        engine.accumulate_grad,
        upcalls.factory_mode,
    )


ORIGINAL = (
    aten.call_modes,
    list,
    engine._run_node,
    engine.accumulate_grad,
    upcalls._plain_factory,
)


def test_profiling_off_leaves_dispatcher_untouched():
    assert _dispatcher_state() == ORIGINAL
    _profiled(nt)
    assert _dispatcher_state() == ORIGINAL
    with pytest.raises(ValueError, match="inside"):
        with nt.profiler.profile():
            nt.ones(2) * 2
            raise ValueError("inside")
    assert _dispatcher_state() == ORIGINAL
    assert state.modes == []
    with nt.autograd.profiler.record_function("idle"):  # no profiler: nothing happens
        assert (nt.ones(2) + 1).tolist() == [2.0, 2.0]


def test_nested_profilers_and_record_function_decorator():
    @nt.autograd.profiler.record_function("inner")
    def f(x):
        return x.exp()

    with nt.autograd.profiler.profile() as outer:
        f(nt.ones(2))
        with nt.autograd.profiler.profile() as inner:
            f(f(nt.ones(2)))
        assert _dispatcher_state()[1] is not list  # still on: the outer one runs
    assert _dispatcher_state() == ORIGINAL
    assert _names(inner.function_events).count("inner") == 2
    assert _names(outer.function_events).count("inner") == 3
    e = next(e for e in inner.function_events if e.name == "inner")
    assert _names(e.cpu_children) == ["aten::exp"]


def test_dispatch_modes_still_see_ops_while_profiling():
    seen = []

    class Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with nt.autograd.profiler.profile() as p:
        with Count():
            y = nt.ones(2) * 3
    assert seen == ["aten.mul.Tensor"]
    assert y.tolist() == [3.0, 3.0]
    assert [e.name for e in p.function_events if e.cpu_parent is None] == [
        "aten::ones",
        "aten::mul",
    ]


def test_inplace_ops_are_named_with_underscore():
    x = nt.ones(3)
    with nt.autograd.profiler.profile(profile_memory=True) as p:
        x.add_(1)
    (e,) = p.function_events
    assert e.name == "aten::add_" and e.cpu_memory_usage == 0
    assert x.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize(
    "kw",
    [
        dict(wait=1, warmup=1, active=2),
        dict(wait=1, warmup=1, active=2, repeat=2),
        dict(wait=0, warmup=2, active=1, repeat=1, skip_first=3),
        dict(wait=5, warmup=1, active=3, skip_first=2, skip_first_wait=1),
    ],
)
def test_schedule_equals_torch(kw):
    ours, theirs = nt.profiler.schedule(**kw), torch.profiler.schedule(**kw)
    assert [ours(i).name for i in range(40)] == [theirs(i).name for i in range(40)]


def test_schedule_errors_equal_torch():
    for kw in (dict(wait=0, warmup=0, active=0), dict(wait=-1, warmup=1, active=1)):
        with pytest.raises(AssertionError) as ours:
            nt.profiler.schedule(**kw)
        with pytest.raises(AssertionError) as theirs:
            torch.profiler.schedule(**kw)
        assert str(ours.value) == str(theirs.value)
    with pytest.warns(UserWarning, match="won't be using warmup"):
        nt.profiler.schedule(wait=1, warmup=0, active=1)


def _stepped(lib, kw, steps=12):
    ready = []

    def on_ready(p):
        names = {e.name for e in p.events()}
        ready.append((p.step_num, sorted(n for n in names if n.startswith("ProfilerStep"))))

    x = to_lib(lib, arr(3), requires_grad=True)
    with lib.profiler.profile(schedule=lib.profiler.schedule(**kw), on_trace_ready=on_ready) as p:
        for _ in range(steps):
            (x * 2).sum().backward()
            p.step()
    return ready


@pytest.mark.parametrize(
    "kw",
    [
        dict(wait=1, warmup=1, active=2, repeat=2),
        dict(wait=0, warmup=1, active=1),
        dict(wait=2, warmup=1, active=3, skip_first=1),
    ],
)
def test_on_trace_ready_at_torchs_steps(kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = _stepped(nt, kw), _stepped(torch, kw)
    assert ours == theirs and ours


def test_profile_without_schedule_and_trace_handler(tmp_path):
    x = nt.ones(2, 2)
    with nt.profiler.profile(
        activities=[nt.profiler.ProfilerActivity.CPU],
        on_trace_ready=nt.profiler.tensorboard_trace_handler(str(tmp_path / "tb"), "w0"),
    ) as p:
        nt.mm(x, x)
    assert _names(p.events()) == ["aten::mm"]
    (f,) = (tmp_path / "tb").iterdir()
    assert f.name.startswith("w0.") and f.name.endswith(".pt.trace.json")
    assert json.loads(f.read_text())["traceEvents"][0]["name"] == "aten::mm"
    assert nt.profiler.supported_activities() == {nt.profiler.ProfilerActivity.CPU}
    assert [a.name for a in nt.profiler.ProfilerAction] == [
        a.name for a in torch.profiler.ProfilerAction if a.name != "DEVICE_STOPPED"
    ]


def test_with_stack_and_export_stacks(tmp_path):
    with nt.profiler.profile(with_stack=True) as p:
        nt.ones(2).exp()
    e = next(e for e in p.events() if e.name == "aten::exp")
    assert e.stack and "test_profiler.py" in e.stack[0]
    path = tmp_path / "stacks.txt"
    p.export_stacks(str(path))
    lines = path.read_text().splitlines()
    assert lines and all(re.fullmatch(r"\S+ \d+", line) for line in lines)
    with pytest.raises(ValueError, match="metric should be one of"):
        p.export_stacks(str(path), "bogus")
    table = p.key_averages(group_by_stack_n=2).table()
    assert "Source Location" in table


def test_legacy_options():
    with pytest.warns(FutureWarning, match="use_cuda"):
        p = nt.autograd.profiler.profile(use_cuda=True)
    assert p.use_device is None
    with nt.autograd.profiler.profile(enabled=False) as q:
        assert q is None
    with nt.autograd.profiler.emit_nvtx(), nt.autograd.profiler.emit_itt():
        y = nt.ones(2) * 2
    assert y.tolist() == [2.0, 2.0]
    unfinished = nt.autograd.profiler.profile()
    assert repr(unfinished) == "<unfinished torch.autograd.profile>"
    with pytest.raises(AssertionError, match="Expected profiling results"):
        unfinished.table()
    p = _profiled(nt)
    assert p.total_average().count == len(p.function_events)
    assert p.self_cpu_time_total == pytest.approx(p.function_events.self_cpu_time_total)
    assert str(p) == p.function_events.table()
    assert np.isfinite(p.total_average().cpu_time_total)


def _top_level(lib, program) -> list:
    with lib.profiler.profile() as p:
        program(lib)
    return [(e.name, _names(e.cpu_children)) for e in p.events() if e.cpu_parent is None]


def _factories(lib):
    lib.ones(2, 3)
    lib.zeros(2)
    lib.randn(3)
    lib.empty(2)
    lib.full((2,), 1.0)
    lib.rand(2)
    lib.arange(5)


def test_factory_calls_are_named_as_torch_names_them():
    ours = [name for name, _ in _top_level(nt, _factories)]
    theirs = [name for name, _ in _top_level(torch, _factories)]
    assert ours == theirs == [
        "aten::ones", "aten::zeros", "aten::randn", "aten::empty", "aten::full", "aten::rand",
        "aten::arange",
    ]  # fmt: skip


def test_custom_function_forward_is_a_range_named_for_its_class():
    def program(lib):
        class MyFn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = to_lib(lib, arr(3), requires_grad=True)
        MyFn.apply(x).sum().backward()

    ours, theirs = (dict(_top_level(lib, program)) for lib in (nt, torch))
    assert ours["MyFn"] == theirs["MyFn"] == ["aten::mul"]
    assert "autograd::engine::evaluate_function: MyFnBackward" in ours
