"""numtorch.utils.benchmark: Timer runs statements as PyTorch's does, and Measurement and
Compare print exactly as PyTorch's on the same times (no timing assertions)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch.utils.benchmark as tb

import numtorch as nt
import numtorch.utils.benchmark as nb


def test_the_package_face():
    assert nt.utils.benchmark is nb
    assert nb.Timer.__module__ == "numtorch.utils.benchmark.utils.timer"


@pytest.mark.parametrize("name", ["__init__", "timeit", "blocked_autorange", "adaptive_autorange"])
def test_signatures_are_pytorchs(name):
    def params(cls):
        return [
            (p.name, str(p.default) if p.name != "timer" else None, p.kind)  # Language.PYTHON
            for p in inspect.signature(getattr(cls, name)).parameters.values()
        ]

    assert params(nb.Timer) == params(tb.Timer)


def test_timeit_runs_the_statement_with_its_globals():
    calls = []
    m = nb.Timer("calls.append(x)", setup="x = 3", globals={"calls": calls}).timeit(number=50)
    assert calls == [3] * (2 + 50)  # a warmup of max(50 // 100, 2) runs, then the 50
    assert m.number_per_run == 50 and len(m.raw_times) == 1 and len(m.times) == 1
    assert m.times[0] == pytest.approx(m.raw_times[0] / 50) and m.times[0] > 0
    assert m.stmt == "calls.append(x)" and m.setup == "x = 3" and m.num_threads == 1


def test_torch_in_the_statement_is_numtorch_unless_given():
    seen = []
    nb.Timer("seen.append(torch)", globals={"seen": seen}).timeit(number=1)
    assert seen[-1] is nt
    nb.Timer("seen.append(torch)", globals={"seen": seen, "torch": 5}).timeit(number=1)
    assert seen[-1] == 5
    g = {"x": nt.ones(3)}
    nb.Timer("torch.add(x, 1)", globals=g).timeit(number=3)
    assert set(g) == {"x"}  # the caller's dict is not changed


def test_block_strings_are_dedented():
    t = nb.Timer(
        """
        y = x * 2
        z = y + 1
        """,
        setup="""
        x = 1
        """,
    )
    m = t.timeit(number=2)
    assert m.stmt == "y = x * 2\nz = y + 1" and m.setup == "x = 1"


def _check_statistics(m):
    times = np.array(m.times)
    assert len(times) == len(m.raw_times) >= 1 and (times > 0).all()
    np.testing.assert_allclose(times, np.array(m.raw_times) / m.number_per_run)
    assert m.mean == pytest.approx(times.mean())
    assert m.median == pytest.approx(np.median(times))
    q25, q75 = np.quantile(times, [0.25, 0.75])
    assert m.iqr == pytest.approx(q75 - q25) and m.iqr >= 0
    assert 1 <= m.significant_figures <= 4


def test_blocked_autorange():
    calls = []
    m = nb.Timer("calls.append(1)", globals={"calls": calls}).blocked_autorange(min_run_time=0.01)
    assert m.number_per_run in {10**k for k in range(10)}
    assert sum(m.raw_times) >= 0.01
    assert len(calls) >= m.number_per_run * len(m.raw_times)
    _check_statistics(m)


def test_blocked_autorange_calls_back_per_replicate():
    seen = []
    m = nb.Timer("pass").blocked_autorange(
        callback=lambda n, t: seen.append((n, t)), min_run_time=0.005
    )
    assert seen == [(m.number_per_run, t) for t in m.raw_times]


def test_adaptive_autorange():
    m = nb.Timer("sum(range(10))", label="sum", description="n=10").adaptive_autorange(
        threshold=0.5, min_run_time=0.005, max_run_time=0.5
    )
    assert len(m.raw_times) >= 4 or sum(m.raw_times) > 0.5
    _check_statistics(m)
    assert m.label == "sum" and m.description == "n=10" and m.title == "sum"


def test_errors():
    with pytest.raises(ValueError, match="Currently only a `str` stmt is supported."):
        nb.Timer(lambda: None)
    with pytest.raises(ValueError, match="Invalid language `rust`."):
        nb.Timer("pass", language="rust")
    with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
        nb.Timer("pass", global_setup="#include <x>")
    with pytest.raises(NotImplementedError, match="See `Timer.blocked_autorange.`"):
        nb.Timer("pass").repeat()
    with pytest.raises(NotImplementedError, match="See `Timer.blocked_autorange.`"):
        nb.Timer("pass").autorange()
    with pytest.raises(NameError):
        nb.Timer("undefined_name").timeit(number=1)


# ------------------------------------------------------------------ printing, against torch
SPECS = [
    {"stmt": "x + 1", "setup": "pass"},
    {
        "stmt": "x + 1",
        "setup": "y = 2",
        "label": "add",
        "sub_label": "float",
        "description": "n=10",
    },
    {
        "stmt": "y = x * 2\nz = y + 1",
        "setup": "a = 1\nb = 2",
        "sub_label": "two lines",
        "num_threads": 4,
    },
    {"stmt": "f(x)", "setup": "pass", "sub_label": "s", "description": "long\ntext"},
]
TIMES = {
    "one": [2.5e-4],
    "two": [1.2e-6, 1.3e-6],
    "three": [3.0e-3, 3.1e-3, 2.9e-3],
    "steady": [1.00e-5, 1.01e-5, 0.99e-5, 1.02e-5, 1.00e-5],
    "noisy": [1e-5, 2e-5, 1.1e-5, 3e-5, 0.9e-5, 1.2e-5],
    "fluctuating": [1e-4, 1.15e-4, 1e-4, 1.1e-4, 0.95e-4],
    "seconds": [2.0, 2.5, 3.0, 2.2],
    "ns": [3e-8, 3.2e-8, 3.1e-8, 2.9e-8],
}


def _pair(lib, number, times, spec):
    return lib.Measurement(number, list(times), lib.TaskSpec(**spec))


@pytest.mark.parametrize("times", TIMES)
@pytest.mark.parametrize("spec", range(len(SPECS)))
def test_measurement_prints_as_pytorchs(times, spec):
    ours = repr(_pair(nb, 100, TIMES[times], SPECS[spec]))
    theirs = repr(_pair(tb, 100, TIMES[times], SPECS[spec]))
    header, _, body = ours.partition("\n")
    assert header.startswith("<numtorch.utils.benchmark.utils.common.Measurement object at 0x")
    assert body == theirs.partition("\n")[2]


def test_measurement_statistics_are_pytorchs():
    for times in TIMES.values():
        ours, theirs = _pair(nb, 10, times, SPECS[1]), _pair(tb, 10, times, SPECS[1])
        for name in ("median", "mean", "iqr"):
            assert getattr(ours, name) == pytest.approx(getattr(theirs, name), rel=1e-12)
        assert ours.has_warnings == theirs.has_warnings
        assert ours.significant_figures == theirs.significant_figures
        assert ours.title == theirs.title and ours.as_row_name == theirs.as_row_name
        assert ours.env == theirs.env


def test_merge_joins_replicates():
    a = nb.Measurement(10, [1e-3, 2e-3], nb.TaskSpec("x", "pass"))
    b = nb.Measurement(100, [5e-3], nb.TaskSpec("x", "pass"))
    c = nb.Measurement(10, [1e-3], nb.TaskSpec("y", "pass"))
    merged = nb.Measurement.merge([a, b, c])
    assert [m.stmt for m in merged] == ["x", "y"]
    assert merged[0].number_per_run == 1 and merged[0].times == pytest.approx([1e-4, 2e-4, 5e-5])


def _table_measurements(lib):
    rng = np.random.default_rng(0)
    out = []
    for label in ("add", "mul"):
        for sub in ("float", "int"):
            for desc in ("n=1", "n=10", "n=100"):
                for threads in (1, 4):
                    spec = {
                        "stmt": "x + 1",
                        "setup": "pass",
                        "label": label,
                        "sub_label": sub,
                        "description": desc,
                        "num_threads": threads,
                    }
                    out.append(_pair(lib, 100, rng.uniform(1e-5, 3e-4, 5), spec))
    big = {"stmt": "g(x)", "setup": "pass", "label": "add", "description": "n=1"}
    out.append(_pair(lib, 10, [5e-3, 5e-3, 9e-3, 4e-3, 5.1e-3], big))
    out.append(_pair(lib, 10, [5.2e-3], big))  # a replicate: merged into the same cell
    for env, stmt, desc in (("e1", "a", "x"), ("e2", "a", "x"), ("e2", "b", "y")):
        spec = {"stmt": stmt, "setup": "pass", "label": "envs", "env": env, "description": desc}
        out.append(_pair(lib, 100, [1e-4, 2e-4, 1.5e-4], spec))
    return out


@pytest.mark.parametrize(
    "options",
    [
        (),
        ("trim_significant_figures",),
        ("highlight_warnings",),
        ("colorize",),
        ("trim_significant_figures", "highlight_warnings", "colorize"),
        ("rowwise",),
    ],
)
def test_compare_prints_as_pytorchs(options):
    tables = []
    for lib in (nb, tb):
        c = lib.Compare(_table_measurements(lib))
        for o in options:
            c.colorize(rowwise=True) if o == "rowwise" else getattr(c, o)()
        tables.append(str(c))
    assert tables[0] == tables[1]


def test_compare_checks_its_inputs():
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        nb.Compare([1])
