"""DP-SGD and plain DDP step times at 1 and 2 ranks, at a fixed global batch, with the
share of each step spent waiting on collectives (OMP_NUM_THREADS=1 per rank).

The workloads:

* DP-SGD: examples/dp_sgd.py's DigitCNN at that example's own expected batch size (64,
  Poisson-sampled), the step of examples/dp_sgd_ranks.py: per-sample gradients by
  vmap(grad), clipping, the clipped sums all-reduced, noise added once.
* DDP: the network of PyTorch's MNIST example (examples/mnist: two 3x3 convolutions,
  32 and 64 channels, max pooling, dropout, 9216 -> 128 -> 10; 1.2M parameters) at that
  example's batch size, 64 images of 28x28, SGD; DDP's default buckets.

Each rank also reports its CPU time per step outside the collective waits (the compute
plus numtorch's fixed per-step cost): on a machine that other work shares, the wall times
lose their meaning and that column says what the ranks themselves needed.

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
DDP_BATCH = 64  # PyTorch's examples/mnist default batch size
ROUNDS = 5  # each row is the fastest round: other work on a shared machine only slows
WORKLOADS = {
    "DP-SGD": f"DigitCNN (examples/dp_sgd.py), expected batch {DP_BATCH}",
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


def _rank_main() -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    import dp_sgd_ranks as ranks

    import numtorch as torch
    import numtorch.distributed as dist
    import numtorch.nn.functional as F
    from numtorch.distributed import _work
    from numtorch.nn.parallel import DistributedDataParallel as DDP

    waited = [0.0, 0.0]  # wall, CPU
    wait = _work.Work.wait

    def timed_wait(self, timeout=None):
        start, cpu = time.perf_counter(), time.process_time()
        try:
            return wait(self, timeout)
        finally:
            waited[0] += time.perf_counter() - start
            waited[1] += time.process_time() - cpu

    _work.Work.wait = timed_wait
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
    args = ranks.dp.parse(["--batch-size", str(DP_BATCH)])
    n = len(y)
    torch.manual_seed(0)
    model = ranks.dp.DigitCNN()
    gen = torch.Generator().manual_seed(0)

    def dp_step():
        ranks.private_step(model, x, y, args, DP_BATCH / n, n, gen, rank, size)

    timed("DP-SGD", dp_step, 30)
    if size == 1:
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


def main() -> None:
    from numtorch.distributed import _mpi

    env = dict(os.environ, OMP_NUM_THREADS="1", BENCH_DISTRIBUTED_RANK="1")
    env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}"
    results = {}
    load = os.getloadavg()[0]
    for n in (1, 2):
        cmd = ["timeout", "600", _mpi.mpiexec(), "-n", str(n), "-hosts", "localhost"]
        out = subprocess.run(
            [*cmd, sys.executable, __file__], env=env, capture_output=True, text=True, check=True
        ).stdout
        results[n] = json.loads(next(line for line in out.splitlines() if line.startswith("{")))
    print(f"fixed global batch, OMP_NUM_THREADS=1 per rank, {os.cpu_count()} cores, load "
          f"average {load:.1f} before the runs; per step, the fastest of {ROUNDS} rounds "
          "(DP-SGD 30 steps a round, DDP 8)")  # fmt: skip
    for name, what in WORKLOADS.items():
        print(f"  {name}: {what}")
    print(f"{'':8} {'1 rank':>16} {'2 ranks':>16} {'speed-up':>9}   CPU/step outside waits")
    for name in WORKLOADS:
        (t1, s1, c1), (t2, s2, c2) = results[1][name], results[2][name]
        print(
            f"{name:8} {t1 * 1e3:8.1f} ms ({s1:3.0%}) {t2 * 1e3:8.1f} ms ({s2:3.0%}) "
            f"{t1 / t2:8.2f}x   {c1 * 1e3:.1f} ms -> {c2 * 1e3:.1f} ms per rank"
        )
    print("(in parentheses: the share of the step spent waiting on collectives)")
    fixed, each = results[1]["per-sample grads"]
    print(
        f"DP-SGD's per-sample gradients (vmap(grad) and clipping) cost {fixed * 1e3:.1f} ms a "
        f"call plus {each * 1e3:.3f} ms an example: at 2 ranks each rank still pays the "
        f"{fixed * 1e3:.1f} ms for its {DP_BATCH // 2} examples"
    )


if __name__ == "__main__":
    _rank_main() if os.environ.get("BENCH_DISTRIBUTED_RANK") else main()
