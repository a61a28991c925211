"""DP-SGD and plain DDP step times at 1 and 2 ranks, at a fixed global batch, with the
share of each step spent waiting on collectives (OMP_NUM_THREADS=1 per rank).

The workloads:

* DP-SGD: examples/dp_sgd.py's DigitCNN, the step of examples/dp_sgd_ranks.py: per-sample
  gradients by vmap(grad), clipping, the clipped sums all-reduced, noise added once; at
  that example's own expected batch (64, Poisson-sampled) and at Abadi et al.'s MNIST lot
  of 600 (DP-SGD trains on large lots: the noise is shared by the lot).
* DDP: the network of PyTorch's MNIST example (examples/mnist: two 3x3 convolutions,
  32 and 64 channels, max pooling, dropout, 9216 -> 128 -> 10; 1.2M parameters) at that
  example's batch size, 64 images of 28x28, SGD; DDP's default buckets.

Each rank also reports its CPU time per step outside the collective waits (the compute
plus numtorch's fixed per-step cost): on a machine that other work shares, the wall times
lose their meaning and that column says what the ranks themselves needed.

The same programs run once more on PyTorch with its gloo backend (where torch is installed,
as the test extra installs it): the script's numtorch imports resolve to torch, as a
PyTorch user's own script would read. That says what a second rank can give these steps
at all on this machine.

    python benchmarks/bench_distributed.py            # launches the ranks itself
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
DP_BATCH = 64  # examples/dp_sgd.py's default (expected) batch size
DP_LOT = 600  # Abadi et al. (2016), "Deep Learning with Differential Privacy": MNIST lots
DDP_BATCH = 64  # PyTorch's examples/mnist default batch size
ROUNDS = 5  # each row is the fastest round: other work on a shared machine only slows
WORKLOADS = {
    "DP-SGD": f"DigitCNN (examples/dp_sgd.py), expected batch {DP_BATCH}",
    f"DP-SGD {DP_LOT}": f"the same, expected lot {DP_LOT}",
    "DDP": f"PyTorch's MNIST example CNN, 1.2M parameters, batch {DDP_BATCH}",
}


def _mnist_net():
    """The network of PyTorch's examples/mnist."""
    import numtorch.nn.functional as F
    from numtorch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = self.dropout1(x).flatten(1)
            x = self.dropout2(F.relu(self.fc1(x)))
            return F.log_softmax(self.fc2(x), dim=1)

    return Net()


def _per_sample_cost(dp, model, x, y) -> list[float]:
    """CPU time of vmap(grad) per-sample gradients and clipping at 1 and at DP_BATCH
    examples (best of 20): the fixed cost of a call and the cost of one more example."""

    def cpu(batch: int) -> float:
        best = float("inf")
        for _ in range(20):
            start = time.process_time()
            dp.clip(dp.per_sample_grads(model, x[:batch], y[:batch]), 1.0)
            best = min(best, time.process_time() - start)
        return best

    one, full = cpu(1), cpu(DP_BATCH)
    return [one, (full - one) / (DP_BATCH - 1)]


def _as_numtorch() -> None:
    """Make this process's numtorch imports resolve to PyTorch (the reference runs)."""
    import importlib

    for name in ("torch", "torch.distributed", "torch.func", "torch.nn.functional"):
        importlib.import_module(name)
    for name, module in list(sys.modules.items()):
        if name == "torch" or name.startswith("torch."):
            sys.modules["numtorch" + name[len("torch") :]] = module
    # torch's env:// rendezvous, from the MPI launcher's rank and size
    os.environ.setdefault("RANK", os.environ["PMI_RANK"])
    os.environ.setdefault("WORLD_SIZE", os.environ["PMI_SIZE"])


def _timed_waits(reference: bool) -> list[float]:
    """[wall, CPU] seconds spent in ``Work.wait`` since the last reset (numtorch only)."""
    waited = [0.0, 0.0]
    if reference:
        return waited
    from numtorch.distributed import _work

    wait = _work.Work.wait

    def timed_wait(self, timeout=None):
        start, cpu = time.perf_counter(), time.process_time()
        try:
            return wait(self, timeout)
        finally:
            waited[0] += time.perf_counter() - start
            waited[1] += time.process_time() - cpu

    _work.Work.wait = timed_wait
    return waited


def _rank_main() -> None:
    reference = os.environ.get("BENCH_DISTRIBUTED_RANK") == "torch"
    if reference:
        _as_numtorch()
    sys.path.insert(0, str(ROOT / "examples"))
    import dp_sgd_ranks as ranks

    import numtorch as torch
    import numtorch.distributed as dist
    import numtorch.nn.functional as F
    from numtorch.nn.parallel import DistributedDataParallel as DDP

    torch.set_num_threads(1)
    waited = _timed_waits(reference)
    dist.init_process_group("gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    rows = {}

    def timed(name, step, steps):
        step()  # warm up
        step()
        best = None
        for _ in range(ROUNDS):
            dist.barrier()
            waited[:] = [0.0, 0.0]
            start, cpu = time.perf_counter(), time.process_time()
            for _ in range(steps):
                step()
            wall = (time.perf_counter() - start) / steps
            busy = (time.process_time() - cpu - waited[1]) / steps
            if best is None or wall < best[0]:
                best = [wall, waited[0] / steps / wall, busy]
        rows[name] = best

    (x, y), _ = ranks.dp.load_digits(0)
    n = len(y)
    for name, batch, steps in (("DP-SGD", DP_BATCH, 30), (f"DP-SGD {DP_LOT}", DP_LOT, 6)):
        args = ranks.dp.parse(["--batch-size", str(batch)])
        torch.manual_seed(0)
        model = ranks.dp.DigitCNN()
        gen = torch.Generator().manual_seed(0)

        def dp_step(model=model, args=args, rate=batch / n, gen=gen):
            ranks.private_step(model, x, y, args, rate, n, gen, rank, size)

        timed(name, dp_step, steps)
    if size == 1 and not reference:
        rows["per-sample grads"] = _per_sample_cost(ranks.dp, model, x, y)

    torch.manual_seed(0)
    ddp = DDP(_mnist_net())
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    share = DDP_BATCH // size
    images = torch.rand(DDP_BATCH, 1, 28, 28, generator=torch.Generator().manual_seed(1))
    labels = torch.randint(0, 10, (DDP_BATCH,), generator=torch.Generator().manual_seed(2))
    xb, yb = images[rank * share : (rank + 1) * share], labels[rank * share : (rank + 1) * share]

    def ddp_step():
        opt.zero_grad()
        F.nll_loss(ddp(xb), yb).backward()
        opt.step()

    timed("DDP", ddp_step, 8)
    if rank == 0:
        print(json.dumps({"ranks": size, **rows}), flush=True)
    dist.destroy_process_group()


def _launch(lib: str) -> dict:
    """{ranks: rows} from runs at 1 and 2 ranks of this script on ``lib``."""
    import socket

    from numtorch.distributed import _mpi

    with socket.socket() as s:  # a free loopback port for torch's rendezvous
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    env = dict(os.environ, OMP_NUM_THREADS="1", BENCH_DISTRIBUTED_RANK=lib)
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
    env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}"
    results = {}
    for n in (1, 2):
        cmd = ["timeout", "600", _mpi.mpiexec(), "-n", str(n), "-hosts", "localhost"]
        out = subprocess.run(
            [*cmd, sys.executable, __file__], env=env, capture_output=True, text=True, check=True
        ).stdout
        results[n] = json.loads(next(line for line in out.splitlines() if line.startswith("{")))
    return results


def main() -> None:
    import importlib.util

    load = os.getloadavg()[0]
    results = _launch("numtorch")
    reference = _launch("torch") if importlib.util.find_spec("torch") else None
    print(f"fixed global batch, OMP_NUM_THREADS=1 per rank, {os.cpu_count()} cores, load "
          f"average {load:.1f} before the runs; per step, the fastest of {ROUNDS} rounds")  # fmt: skip
    for name, what in WORKLOADS.items():
        print(f"  {name}: {what}")
    print(f"{'':10} {'1 rank':>16} {'2 ranks':>16} {'speed-up':>9}   CPU/step outside waits"
          + ("   PyTorch+gloo: 1 rank, 2 ranks, speed-up" if reference else ""))  # fmt: skip
    for name in WORKLOADS:
        (t1, s1, c1), (t2, s2, c2) = results[1][name], results[2][name]
        line = (
            f"{name:10} {t1 * 1e3:8.1f} ms ({s1:3.0%}) {t2 * 1e3:8.1f} ms ({s2:3.0%}) "
            f"{t1 / t2:8.2f}x   {c1 * 1e3:6.1f} ms -> {c2 * 1e3:5.1f} ms per rank"
        )
        if reference:
            r1, r2 = reference[1][name][0], reference[2][name][0]
            line += f"   {r1 * 1e3:8.1f} ms {r2 * 1e3:8.1f} ms {r1 / r2:6.2f}x"
        print(line)
    print("(in parentheses: the share of the step spent waiting on collectives)")
    fixed, each = results[1]["per-sample grads"]
    print(
        f"DP-SGD's per-sample gradients (vmap(grad) and clipping) cost {fixed * 1e3:.1f} ms a "
        f"call plus {each * 1e3:.3f} ms an example: at 2 ranks each rank still pays the "
        f"{fixed * 1e3:.1f} ms for its {DP_BATCH // 2} examples"
    )


if __name__ == "__main__":
    _rank_main() if os.environ.get("BENCH_DISTRIBUTED_RANK") else main()
