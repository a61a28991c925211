"""numtorch.distributed on MPI: collectives, point-to-point, objects, timeouts and the
launcher, run as real ranks under ``timeout 120 mpiexec -n N`` over loopback, and the
single-process behaviour (errors before init, PyTorch's error texts) against torch."""

from __future__ import annotations

import json
import logging
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
import warnings

import pytest
import tomllib
import torch
import torch.distributed as tdist
from twolibs import assert_same_outcome

import numtorch as nt
import numtorch.distributed as dist
from numtorch.distributed import _mpi, run

ROOT = pathlib.Path(__file__).resolve().parents[1]
PROGS = pathlib.Path(__file__).parent / "dist_progs"


def launch(argv: list[str], limit: int = 120) -> subprocess.CompletedProcess:
    """Run a command that starts ranks under ``timeout``, in its own process group: on a
    timeout the group is killed, and afterwards no process of it may be left."""
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    env["OMP_NUM_THREADS"] = "1"
    p = subprocess.Popen(
        ["timeout", str(limit), *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
        start_new_session=True,
    )
    try:
        out, err = p.communicate(timeout=limit + 10)
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
            left = True
        except ProcessLookupError:
            left = False
        p.wait()
    assert not left, "processes of the job were left behind"
    return subprocess.CompletedProcess(argv, p.returncode, out, err)


def mpiexec(prog: str, n: int, *args: str) -> subprocess.CompletedProcess:
    cmd = [_mpi.mpiexec(), "-n", str(n), "-hosts", "localhost", sys.executable, str(PROGS / prog)]
    return launch([*cmd, *args])


def _ok(res: subprocess.CompletedProcess) -> str:
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def _checks(out: str, n: int) -> list[int]:
    """Each rank's count of checks (the ranks' lines may interleave in mpiexec's output)."""
    found = sorted((int(r), int(c)) for r, c in re.findall(r"rank (\d+): (\d+) checks", out))
    assert [r for r, _ in found] == list(range(n)), out
    return [c for _, c in found]


# ------------------------------------------------------------------ launched ranks
def test_collectives_every_reduce_op_and_dtype_against_numpy_on_3_ranks():
    counts = _checks(_ok(mpiexec("collectives.py", 3)), 3)
    assert min(counts) >= 190


def test_point_to_point_and_object_collectives_on_3_ranks():
    counts = _checks(_ok(mpiexec("p2p_objects.py", 3)), 3)
    assert counts == [10, 10, 13]


def test_a_rank_past_the_timeout_makes_the_others_raise():
    start = time.monotonic()
    out = _ok(mpiexec("timeouts.py", 2))
    for what in ("all_reduce", "barrier", "recv", "all_gather_object", "work"):
        assert f"{what} timed out" in out
    assert "monitored_barrier named rank 1" in out
    assert time.monotonic() - start < 30


def test_a_failing_rank_ends_the_job_with_its_traceback():
    start = time.monotonic()
    res = mpiexec("fails.py", 2)
    assert res.returncode == 1
    assert "ValueError: rank 1 gives up" in res.stderr
    assert 'fails.py", line 9' in res.stderr
    assert "rank 0 passed" not in res.stdout
    assert time.monotonic() - start < 30


@pytest.mark.parametrize("code", [3, 0])
def test_a_rank_calling_sys_exit_ends_the_job_with_its_status(code):
    start = time.monotonic()
    res = mpiexec("exits.py", 2, str(code))
    assert res.returncode == code, res.stdout + res.stderr
    assert ("rank 0 passed" in res.stdout) is False
    assert ("rank 0 finished" in res.stdout) is (code == 0)
    assert time.monotonic() - start < 30


def _launched(res) -> list[dict]:
    rows = [json.loads(line) for line in _ok(res).splitlines() if line.startswith("{")]
    return sorted(rows, key=lambda r: r["rank"])


def test_launcher_with_torchruns_flags():
    flags = "--nproc-per-node 2 --nnodes 1 --node-rank 0 --master-addr 127.0.0.1"
    cmd = [sys.executable, "-m", "numtorch.distributed.run", *flags.split()]
    cmd += ["--master_port=29533", str(PROGS / "launched.py"), "--lr", "0.1"]
    rows = _launched(launch(cmd))
    assert [r["rank"] for r in rows] == [0, 1]
    for r, row in enumerate(rows):
        assert row["env"] == {
            "RANK": str(r),
            "LOCAL_RANK": str(r),
            "WORLD_SIZE": "2",
            "LOCAL_WORLD_SIZE": "2",
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": "29533",
        }
        assert row["size"] == 2 and row["sum"] == 1.0 and row["argv"] == ["--lr", "0.1"]
        assert row["elastic"] is True and row["local"] == r


def test_launcher_standalone_picks_a_free_port():
    cmd = [sys.executable, "-m", "numtorch.distributed.run", "--standalone"]
    rows = _launched(launch([*cmd, "--nproc_per_node=3", str(PROGS / "launched.py")]))
    assert [r["rank"] for r in rows] == [0, 1, 2] and {r["sum"] for r in rows} == {3.0}
    assert len({r["env"]["MASTER_PORT"] for r in rows}) == 1


def test_launcher_command_line():
    cmd = run.command(["--nproc-per-node", "2", "-m", "pkg.train", "--x", "1"])
    assert cmd[:3] == [_mpi.mpiexec(), "-hosts", "localhost"]
    sections = " ".join(cmd).split(" : ")
    assert len(sections) == 2
    assert sections[1].endswith(
        f"-env RANK 1 -env LOCAL_RANK 1 -env ROLE_RANK 1 {sys.executable} -u -m pkg.train --x 1"
    )
    with pytest.raises(SystemExit, match="one node over loopback"):
        run.command(["--nnodes", "2", "x.py"])


def test_launcher_sets_one_openmp_thread_per_rank_as_torchrun(monkeypatch, caplog):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    with caplog.at_level(logging.WARNING):
        cmd = " ".join(run.command(["--nproc-per-node", "2", "x.py"]))
    assert "-genv OMP_NUM_THREADS 1" in cmd
    assert "Setting OMP_NUM_THREADS environment variable for each process to be 1" in caplog.text
    one = " ".join(run.command(["--nproc-per-node", "1", "x.py"]))
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    mine = " ".join(run.command(["--nproc-per-node", "2", "x.py"]))
    assert "OMP_NUM_THREADS" not in one and "OMP_NUM_THREADS" not in mine
    with pytest.raises(SystemExit, match="not a loopback address"):
        run.command(["--master-addr", "10.1.2.3", "x.py"])


# ------------------------------------------------------------------ packaging
def test_mpiexec_comes_with_the_mpich_wheel_and_the_extras_name_it():
    path = pathlib.Path(_mpi.mpiexec())
    assert path.parent in {pathlib.Path(sys.executable).parent, pathlib.Path(sys.prefix) / "bin"}
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = meta["optional-dependencies"]
    assert {d.split(">")[0] for d in extras["distributed"]} == {"mpi4py", "mpich"}
    assert "numtorch[distributed]" in extras["test"]
    module, _, func = meta["scripts"]["numtorchrun"].partition(":")
    assert module == "numtorch.distributed.run" and callable(getattr(run, func))


# ------------------------------------------------------------------ one process, against torch
def _before_init(T):
    d = T.distributed
    calls = [
        d.get_rank,
        d.get_world_size,
        d.get_backend,
        d.barrier,
        lambda: d.all_reduce(T.ones(2)),
        lambda: d.broadcast(T.ones(2), 0),
        lambda: d.new_group([0]),
        lambda: d.all_gather_object([None], 1),
        d.destroy_process_group,
    ]
    out = []
    for call in calls:
        try:
            call()
        except Exception as e:
            out.append((type(e).__name__, str(e)))
    return out, d.is_initialized(), d.group.WORLD, d.GroupMember.WORLD


def test_errors_before_init_match_torch():
    assert _before_init(nt) == _before_init(torch)
    assert dist.is_available() and dist.is_mpi_available() and dist.is_gloo_available()
    assert not dist.is_nccl_available()


def test_backend_and_reduce_op_names_match_torch():
    for name in ["gloo", "MPI", "Nccl", "custom"]:
        assert dist.Backend(name) == tdist.Backend(name)
    for name in ["GLOO", "NCCL", "MPI", "UCC", "UNDEFINED", "XCCL", "FAKE"]:
        assert getattr(dist.Backend, name) == getattr(tdist.Backend, name)
    for name, op in tdist.ReduceOp.RedOpType.__members__.items():
        assert int(getattr(dist.ReduceOp, name)) == int(op) and str(
            getattr(dist.ReduceOp, name)
        ) == str(op)
    assert dist.default_pg_timeout == tdist.default_pg_timeout
    assert dist.GroupMember.NON_GROUP_MEMBER == tdist.GroupMember.NON_GROUP_MEMBER


@pytest.fixture
def world_of_one(monkeypatch):
    """numtorch on MPI's singleton world and torch on gloo with a HashStore, both of size 1."""
    for name, value in _ENV_OF_ONE.items():
        monkeypatch.setenv(name, value)
    dist.init_process_group("gloo")
    tdist.init_process_group("gloo", store=tdist.HashStore(), rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()
        tdist.destroy_process_group()


_ENV_OF_ONE = {"RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29533"}
_MPI_LAUNCH = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK")


_ENVIRONMENTS = [  # the env:// variables set, init_process_group's keywords
    ((), {}),
    (("RANK",), {}),
    (("WORLD_SIZE",), {}),
    (("RANK", "WORLD_SIZE"), {}),
    (("RANK", "WORLD_SIZE", "MASTER_ADDR"), {}),
    ((), {"rank": 0, "world_size": 1}),
    (("MASTER_ADDR",), {"rank": 0, "world_size": 1}),
]


@pytest.mark.parametrize("names, kwargs", _ENVIRONMENTS)
def test_a_process_not_started_by_mpiexec_needs_torchs_env_rendezvous(monkeypatch, names, kwargs):
    """Without mpiexec, init_process_group("gloo") wants env://'s variables as PyTorch does;
    with them all (the fixture world_of_one) it runs on MPI's singleton world."""
    for name in [*_ENV_OF_ONE, *_MPI_LAUNCH]:
        monkeypatch.delenv(name, raising=False)
    for name in names:
        monkeypatch.setenv(name, _ENV_OF_ONE[name])

    def init(T):
        T.distributed.init_process_group("gloo", **kwargs)

    assert_same_outcome(init)
    assert not dist.is_initialized()


def _reductions(T):
    d, out = T.distributed, []
    for dtype in (T.float32, T.int64, T.complex64):
        for name in ["SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "AVG"]:
            t = T.tensor([1, 2, 3]).to(dtype)
            try:
                d.all_reduce(t, op=getattr(d.ReduceOp, name))
                out.append(t)
            except Exception as e:
                out.append((type(e).__name__, str(e)))
    return out


def _premul_sum(T):
    """PREMUL_SUM off NCCL, each reducing collective; object addresses masked."""
    d, out = T.distributed, []
    calls = [
        lambda: d.all_reduce(T.ones(2), op=d.ReduceOp.PREMUL_SUM),
        lambda: d.reduce(T.ones(2), 0, op=d.ReduceOp.PREMUL_SUM),
        lambda: d.reduce_scatter([T.ones(1)], [T.ones(1)], op=d.ReduceOp.PREMUL_SUM),
        lambda: d.reduce_scatter_tensor(T.ones(1), T.ones(1), op=d.ReduceOp.PREMUL_SUM),
        lambda: d.all_reduce(T.ones(2), op=d.ReduceOp(d.ReduceOp.PREMUL_SUM)),
        lambda: d.all_reduce(T.ones(2), op=d._make_nccl_premul_sum(2.0)),
    ]
    for call in calls:
        try:
            call()
            out.append(None)
        except Exception as e:
            out.append((type(e).__name__, re.sub("0x[0-9a-f]+", "0x?", str(e))))
    return out


def _misuse(T):
    d, out = T.distributed, []
    calls = [
        lambda: d.init_process_group("gloo"),
        lambda: d.all_reduce([T.ones(2)]),
        lambda: d.all_gather([T.ones(2)], [T.ones(2)]),
        lambda: d.send(T.ones(2), 0),
        lambda: d.new_group([0, 1]),
        lambda: d.P2POp(d.send, T.ones(2), 0),
        lambda: d.gather(T.ones(2), [T.ones(2)], dst=0, group_dst=0),
    ]
    for call in calls:
        try:
            call()
            out.append(None)
        except Exception as e:
            out.append((type(e).__name__, str(e)))
    return out


def _queries(T):
    d = T.distributed
    g = d.new_group([0])
    return (d.get_rank(), d.get_world_size(), d.get_backend(), d.get_rank(g), d.get_world_size(g))


def test_one_rank_reductions_errors_and_queries_match_torch(world_of_one):
    assert_same_outcome(_reductions)
    assert _misuse(nt) == _misuse(torch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch's reduce_scatter_tensor
        assert _premul_sum(nt) == _premul_sum(torch)
    assert _queries(nt) == _queries(torch)
    w = dist.all_reduce(nt.ones(2), async_op=True)
    assert w.wait() and w.is_completed() and w.get_future().wait()[0].tolist() == [1.0, 1.0]


def test_nccl_without_a_gpu_raises_torchs_error(monkeypatch):
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "29531")

    def prog(T):
        T.distributed.init_process_group("nccl", rank=0, world_size=1)

    with pytest.warns(UserWarning):
        assert_same_outcome(prog)


def test_collectives_under_transforms(world_of_one):
    def under_vmap(T):
        return T.func.vmap(lambda v: (T.distributed.all_reduce(v), v)[1])(T.ones(2, 3))

    def under_grad(T):
        return T.func.grad(lambda v: (T.distributed.all_reduce(v), (v * v).sum())[1])(T.ones(3))

    assert_same_outcome(under_vmap)
    assert_same_outcome(under_grad)


# ------------------------------------------------------------------ DistributedDataParallel
def test_ddp_training_no_sync_buffers_join_unused_and_hooks_on_2_ranks():
    assert _checks(_ok(mpiexec("ddp.py", 2)), 2) == [48, 48]


# PyTorch's DDP tutorial program (its torchrun form, ``elastic_ddp.py``, on the CPU with
# "gloo"), unchanged but for the import lines, which name numtorch.
TOY = """import numtorch as torch
import numtorch.distributed as dist
import numtorch.nn as nn
import numtorch.optim as optim

from numtorch.nn.parallel import DistributedDataParallel as DDP


class ToyModel(nn.Module):
    def __init__(self):
        super(ToyModel, self).__init__()
        self.net1 = nn.Linear(10, 10)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(10, 5)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


def demo_basic():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    print(f"Start running basic DDP example on rank {rank}.")

    # create model
    model = ToyModel()
    ddp_model = DDP(model)

    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)

    optimizer.zero_grad()
    outputs = ddp_model(torch.randn(20, 10))
    labels = torch.randn(20, 5)
    loss_fn(outputs, labels).backward()
    optimizer.step()
    dist.destroy_process_group()
    print(f"Finished running basic DDP example on rank {rank}.")


if __name__ == "__main__":
    demo_basic()
"""


def test_pytorch_ddp_tutorial_toy_model_runs_with_the_launcher(tmp_path):
    prog = tmp_path / "elastic_ddp.py"
    prog.write_text(TOY)
    cmd = [sys.executable, "-m", "numtorch.distributed.run", "--nproc-per-node", "2", str(prog)]
    out = _ok(launch(cmd))
    for r in range(2):
        assert f"Start running basic DDP example on rank {r}." in out
        assert f"Finished running basic DDP example on rank {r}." in out


def _ddp_misuse(T):
    from_nn = T.nn.parallel.DistributedDataParallel
    out = []
    frozen = T.nn.Linear(2, 2).requires_grad_(False)
    for call in [
        lambda: from_nn(T.nn.Linear(2, 2), device_ids=[0, 1]),
        lambda: from_nn(T.nn.Linear(2, 2), device_ids=[0]),
        lambda: from_nn(frozen),
    ]:
        try:
            call()
            out.append(None)
        except Exception as e:
            out.append((type(e).__name__, str(e)))

    class Two(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = T.nn.Linear(2, 2), T.nn.Linear(2, 2)

        def forward(self, x):
            return self.a(x)

    T.manual_seed(0)
    m = from_nn(Two().double())
    x = T.ones(1, 2, dtype=T.float64)
    m(x).sum().backward()
    out.append(m.module.b.weight.grad)
    try:
        m(x)
    except RuntimeError as e:
        out.append(str(e))
    m = from_nn(Two().double(), find_unused_parameters=True)
    m(x).sum().backward()
    out += [m.module.b.weight.grad, m.module.a.weight.grad.tolist()]
    return out


def test_ddp_errors_and_unused_parameters_match_torch(world_of_one):
    assert_same_outcome(lambda T: T.nn.parallel.DistributedDataParallel.__name__)
    assert _ddp_misuse(nt) == _ddp_misuse(torch)
    with pytest.raises(TypeError, match="must be callable"):
        nt.nn.parallel.DistributedDataParallel(nt.nn.Linear(2, 2)).register_comm_hook(None, 3)


def test_ddp_before_init_matches_torch():
    def before(T):
        return T.nn.parallel.DistributedDataParallel(T.nn.Linear(2, 2))

    assert_same_outcome(before)


def test_differentiable_collectives_gradients_on_2_ranks():
    assert _checks(_ok(mpiexec("dnn.py", 2)), 2) == [14, 14]


def test_dp_sgd_split_over_2_ranks_equals_one_process_with_the_same_noise():
    assert _checks(_ok(mpiexec("dp_ranks.py", 2)), 2) == [6, 6]
