"""Many independent jobs on Dask (README, "Many independent jobs on Dask"): a learning-rate
sweep, an ensemble trained with its optimizers, and Jacobians at many points, run on a
``LocalCluster`` of two worker processes on 127.0.0.1 and compared with the same jobs run
here. numtorch's tensors, modules, optimizers, schedulers and ``func`` transforms travel to
the workers and back by pickle.

The cluster runs in a child process (this file run as a script) under a hard timeout; its
process group is killed afterwards, so no worker outlives the test."""

from __future__ import annotations

import inspect
import os
import pickle
import signal
import subprocess
import sys
import time
import types

import pytest

import numtorch as nt
from numtorch import func, nn

pytest.importorskip("distributed")  # (the test extra installs it; see pyproject.toml)

TIMEOUT_S = 90  # the whole child: cluster start, the jobs, shutdown
N_STEPS = 20


def data():
    g = nt.Generator().manual_seed(0)
    x = nt.randn(64, 3, generator=g, dtype=nt.float64)
    return x, (x @ nt.tensor([1.0, -2.0, 0.5], dtype=nt.float64)).sin().unsqueeze(1)


def model(seed: int) -> nn.Module:
    nt.manual_seed(seed)
    return nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1)).double()


def sweep_job(lr: float) -> float:
    """One point of a sweep: train with this learning rate, return the final loss."""
    x, y = data()
    net = model(0)
    opt = nt.optim.SGD(net.parameters(), lr=lr, momentum=0.9)
    for _ in range(N_STEPS):
        opt.zero_grad()
        loss = nn.functional.mse_loss(net(x), y)
        loss.backward()
        opt.step()
    return loss.item()


def ensemble_job(member: tuple) -> types.SimpleNamespace:
    """Continue training a member shipped with its optimizer and scheduler; send them back
    as one object (Dask serializes a returned tuple's items one by one: the optimizer would
    come back holding copies of the module's parameters)."""
    net, opt, sched = member
    x, y = data()
    for _ in range(N_STEPS):
        opt.zero_grad()
        nn.functional.mse_loss(net(x), y).backward()
        opt.step()
        sched.step()
    return types.SimpleNamespace(net=net, opt=opt, sched=sched)


def energy(p):
    return (p.sin() * p.roll(1)).sum() + (p * p).sum().sqrt()


def members() -> list:
    out = []
    for seed in range(4):
        net = model(seed)
        opt = nt.optim.Adam(net.parameters(), lr=1e-2)
        out.append((net, opt, nt.optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.5)))
    return out


def points() -> list:
    g = nt.Generator().manual_seed(1)
    return [nt.randn(5, generator=g, dtype=nt.float64) for _ in range(6)]


LRS = [0.01, 0.03, 0.1, 0.3]


def run_jobs(submit_map) -> dict:
    """The three kinds of job through ``submit_map(fn, items) -> results``."""
    jac = func.jacrev(energy)
    hess = func.hessian(energy)
    return {
        "sweep": submit_map(sweep_job, LRS),
        "ensemble": submit_map(ensemble_job, members()),
        "jacobian": submit_map(jac, points()),
        "hessian": submit_map(hess, points()),
        "batched": submit_map(func.vmap(jac), [nt.stack(points())]),
    }


def main(out_path: str) -> None:
    """The child: a two-process LocalCluster, ``client.map`` and ``get_executor``."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2,
            processes=True,
            host="127.0.0.1",
            threads_per_worker=1,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        pids = list(client.run(os.getpid).values())

        def on_cluster(fn, items):
            if fn is sweep_job:  # concurrent.futures style
                with client.get_executor(pure=False) as ex:
                    return list(ex.map(fn, items))
            return client.gather(client.map(fn, items, pure=False))

        results = run_jobs(on_cluster)
    with open(out_path, "wb") as f:
        pickle.dump({"results": results, "worker_pids": pids, "pid": os.getpid()}, f)


@pytest.mark.parametrize(
    "namespace", [nt, nt.linalg, nt.special, nt.fft, nn.functional], ids=lambda m: m.__name__
)
def test_public_functions_pickle_by_reference(namespace):
    """A job may name any public function (``client.map(numtorch.linalg.det, ...)``): each
    pickles as a reference to itself."""
    names = [
        n
        for n in dir(namespace)
        if not n.startswith("_") and inspect.isfunction(getattr(namespace, n))
    ]
    assert len(names) > 10
    for n in names:
        fn = getattr(namespace, n)
        assert pickle.loads(pickle.dumps(fn)) is fn, n
        assert len(pickle.dumps(fn)) < 100, n  # by reference, not by value


def test_transforms_of_module_level_functions_pickle():
    cloudpickle = pytest.importorskip("cloudpickle")  # (what Dask serializes functions with)
    p = points()[0]
    for transform in (func.grad, func.jacrev, func.jacfwd, func.hessian, func.vmap):
        fn = pickle.loads(cloudpickle.dumps(transform(energy)))
        arg = nt.stack([p, p]) if transform is func.vmap else p
        assert nt.equal(fn(arg), transform(energy)(arg))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_independent_jobs_on_a_local_cluster(tmp_path):
    out = tmp_path / "results.pkl"
    root = os.path.dirname(os.path.dirname(nt.__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    env["OMP_NUM_THREADS"] = "1"
    child = subprocess.Popen(
        [sys.executable, __file__, str(out)],
        env=env,
        start_new_session=True,  # its own process group: the workers go with it
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        log, _ = child.communicate(timeout=TIMEOUT_S)
    finally:
        try:
            os.killpg(child.pid, signal.SIGKILL)  # whatever is left of the group
        except ProcessLookupError:
            pass
        child.wait()
    assert child.returncode == 0, log.decode()[-4000:]
    with open(out, "rb") as f:
        got = pickle.load(f)
    # both workers ran in processes of their own, and none outlives the cluster
    assert len(set(got["worker_pids"])) == 2 and got["pid"] not in got["worker_pids"]
    deadline = time.monotonic() + 5
    while any(map(_alive, got["worker_pids"])) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(map(_alive, got["worker_pids"]))

    here = run_jobs(lambda fn, items: [fn(i) for i in items])
    res = got["results"]
    assert res["sweep"] == here["sweep"]  # the same float64 arithmetic, bit for bit
    assert len(set(res["sweep"])) == len(LRS)
    for name in ("jacobian", "hessian", "batched"):
        for a, b in zip(res[name], here[name], strict=True):
            assert a.dtype == b.dtype and nt.equal(a, b)
    for member, member0 in zip(res["ensemble"], here["ensemble"], strict=True):
        net, opt, sched = member.net, member.opt, member.sched
        net0, opt0, sched0 = member0.net, member0.opt, member0.sched
        for p, p0 in zip(net.parameters(), net0.parameters(), strict=True):
            assert nt.equal(p, p0)
        # the optimizer came back holding the returned module's parameters
        assert [id(p) for p in opt.param_groups[0]["params"]] == [id(p) for p in net.parameters()]
        state, state0 = opt.state_dict()["state"], opt0.state_dict()["state"]
        assert state.keys() == state0.keys()
        for k in state:
            assert nt.equal(state[k]["exp_avg_sq"], state0[k]["exp_avg_sq"])
        assert sched.get_last_lr() == sched0.get_last_lr() == [1e-2 * 0.5**4]


if __name__ == "__main__":
    main(sys.argv[1])
