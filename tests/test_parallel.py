"""Intra-op parallelism: large kernels cut into slabs give the same bits on any number of
threads as on one, and PyTorch's values; errors, NumPy's error state, nested calls and
forked processes behave as in one thread. The C heap's tuning at import."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import numtorch as nt
from numtorch._core import heap, parallel

N = parallel.WORK


@pytest.fixture
def threads():
    """Set the intra-op thread count for a test; restored after it."""
    before = parallel._threads[0]
    yield parallel.set_threads
    parallel.set_threads(before)


@pytest.fixture
def low_work(monkeypatch):
    """Cut kernels from a few thousand elements on, so small arrays show the slabs."""
    monkeypatch.setattr(parallel, "WORK", 1 << 12)
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 1 << 9)


@pytest.fixture
def slabs_run(monkeypatch):
    """The number of slabbed kernel calls made while the test runs."""
    calls = []
    run = parallel.run
    monkeypatch.setattr(parallel, "run", lambda body, n: (calls.append(n), run(body, n))[1])
    return calls


def _big(*shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# each case: a function of one module (numtorch or torch) and the arrays it takes
CASES = {
    "softmax last": (lambda T, x: T.softmax(x, -1), [(256, 32, 32)]),
    "softmax first": (lambda T, x: T.softmax(x, 0), [(64, 48, 32)]),
    "log_softmax middle": (lambda T, x: T.log_softmax(x, 1), [(64, 48, 32)]),
    "softmax transposed": (lambda T, x: T.softmax(x.mT, -1), [(64, 48, 32)]),
    "exp": (lambda T, x: x.exp(), [(300, 301)]),
    "tanh float32": (lambda T, x: x.float().tanh(), [(300, 301)]),
    "sum one dim": (lambda T, x: x.sum(1), [(256, 32, 32)]),
    "sum two dims": (lambda T, x: x.sum((0, 2)), [(32, 256, 32)]),
    "sum keepdim": (lambda T, x: x.sum(0, keepdim=True), [(64, 40, 32)]),
    "sum float32": (lambda T, x: x.float().sum(-1), [(1024, 128)]),
    "norm dims": (lambda T, x: T.linalg.vector_norm(x, dim=(1, 2)), [(256, 32, 32)]),
    "outer products": (lambda T, a, b: a * b, [(8, 64, 1), (8, 1, 4096)]),
    "outer products by einsum": (lambda T, a, b: a * b, [(8, 64, 1), (8, 1, 784)]),
    "broadcast mul": (lambda T, a, b: a * b, [(512, 256), (256,)]),
}


@pytest.mark.parametrize("name", CASES)
def test_slabs_give_one_threads_bits_and_torchs_values(name, threads, slabs_run, low_work):
    f, shapes = CASES[name]
    arrays = [_big(*s, seed=k) for k, s in enumerate(shapes)]
    results = []
    for n in (1, 2, 3):
        threads(n)
        results.append(f(nt, *(nt.tensor(a) for a in arrays)).numpy())
    assert slabs_run and min(slabs_run) > 1  # (the kernel was cut)
    for r in results[1:]:
        assert r.dtype == results[0].dtype and r.shape == results[0].shape
        np.testing.assert_array_equal(r, results[0])
    expected = f(torch, *(torch.tensor(a) for a in arrays)).numpy()
    tol = 1e-5 if expected.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(results[0], expected, rtol=tol, atol=tol)


def test_small_kernels_stay_in_the_caller(threads, slabs_run):
    threads(2)
    x = nt.tensor(_big(N // 16))  # (below the work of any kernel)
    x.exp(), x.sum(), nt.softmax(x, 0), x * x
    assert slabs_run == []
    nt.softmax(nt.tensor(_big(N // 64, 16)), -1)  # (softmax weighs 8 passes)
    assert slabs_run == [2]


def test_kernels_with_nothing_to_cut_along_stay_in_the_caller(threads, slabs_run, low_work):
    threads(2)
    y = nt.tensor(_big(300, 301))
    y.t().sin(), y.sum(), nt.softmax(y[0], 0)  # (not C-contiguous; no kept axis)
    assert slabs_run == []


def test_the_error_of_any_slab_is_raised_after_all_finished(threads):
    threads(3)
    done = []

    def body(i, n):
        if i == 2:
            raise ValueError("slab 2")
        done.append(i)

    with pytest.raises(ValueError, match="slab 2"):
        parallel.run(body, 3)
    assert sorted(done) == [0, 1]


def test_a_kernel_called_from_a_slab_runs_whole(threads):
    threads(2)
    seen = []
    parallel.run(lambda i, n: seen.append(parallel.slabs(4 * N, 100)), 2)
    assert sorted(seen) == [1, 2]  # the caller's slab may cut again; a worker's may not


def test_numpys_error_state_reaches_the_workers(threads, low_work):
    threads(2)
    x = np.full(2 * N, 1000.0)
    with np.errstate(all="raise"):
        with pytest.raises(FloatingPointError):
            parallel.ufunc(np.exp, x)
        # numtorch's kernels make inf silently, as PyTorch's, on every thread
        assert np.isinf(nt.tensor(x).exp().numpy()).all()


def _child(queue) -> None:
    x = nt.tensor(_big(N))
    queue.put(float(x.exp().sum()))


def test_a_forked_process_starts_its_own_workers(threads, low_work):
    threads(2)
    nt.tensor(_big(N)).exp()  # the parent's workers exist
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    p = ctx.Process(target=_child, args=(queue,))
    p.start()
    try:
        got = queue.get(timeout=60)
    finally:
        p.join(timeout=60)
        if p.is_alive():
            p.kill()
            p.join()
    assert got == pytest.approx(float(np.exp(_big(N)).sum()), rel=1e-12)


def test_set_num_threads_sets_the_slab_count(threads):
    before = nt.get_num_threads()
    try:
        nt.set_num_threads(1)
        assert parallel.slabs(4 * N, 100) == 1
        nt.set_num_threads(3)
        assert parallel.slabs(4 * N, 100) == 3
        assert parallel.slabs(4 * N, 2) == 2  # (no more slabs than rows)
        assert parallel.slabs(N // 2, 100, passes=2) == 2  # (work: elements times passes)
    finally:
        nt.set_num_threads(before)


def _tuned(env: dict) -> str:
    code = "import numtorch._core.heap as h; print(h.TUNED)"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}, **env}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    ).stdout.strip()


@pytest.mark.skipif(not heap._glibc(), reason="malloc's thresholds are glibc's")
def test_the_heap_is_tuned_unless_the_user_set_it():
    assert _tuned({}) == "True"
    assert _tuned({"MALLOC_TRIM_THRESHOLD_": "1000000"}) == "False"
    assert _tuned({"NUMTORCH_MALLOC_TUNING": "0"}) == "False"


@pytest.mark.parametrize("value", ["1", "2,1", "64", "0", "abc"])
def test_openmps_thread_count_is_the_default_as_in_torch(value):
    code = "import {0}; print({0}.get_num_threads())"
    env = {**os.environ, "OMP_NUM_THREADS": value}
    got = [
        subprocess.run(
            [sys.executable, "-c", code.format(lib)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout.strip()
        for lib in ("numtorch", "torch")
    ]
    assert got[0] == got[1]
    if value[0] == "1":
        assert got[0] == "1"
