"""DP-SGD and plain DDP step times at 1 and 2 ranks, at a fixed global batch, with the
share of each step spent waiting on all-reduces (OMP_NUM_THREADS=1 per rank).

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
GLOBAL_BATCH = 256
STEPS = 10


def _rank_main() -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    import dp_sgd_ranks as ranks

    import numtorch as torch
    import numtorch.distributed as dist
    import numtorch.nn.functional as F
    from numtorch.distributed import _work
    from numtorch.nn.parallel import DistributedDataParallel as DDP

    waited = [0.0]
    wait = _work.Work.wait

    def timed_wait(self, timeout=None):
        start = time.perf_counter()
        try:
            return wait(self, timeout)
        finally:
            waited[0] += time.perf_counter() - start

    _work.Work.wait = timed_wait
    dist.init_process_group("gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    (x, y), _ = ranks.dp.load_digits(0)
    args = ranks.dp.parse(["--batch-size", str(GLOBAL_BATCH)])
    n = len(y)
    rows = {}

    def timed(name, step):
        step()  # warm up
        dist.barrier()
        waited[0] = 0.0
        start = time.perf_counter()
        for _ in range(STEPS):
            step()
        wall = (time.perf_counter() - start) / STEPS
        rows[name] = (wall, waited[0] / STEPS / wall)

    torch.manual_seed(0)
    model = ranks.dp.DigitCNN()
    gen = torch.Generator().manual_seed(0)
    timed(
        "DP-SGD",
        lambda: ranks.private_step(model, x, y, args, GLOBAL_BATCH / n, n, gen, rank, size),
    )
    ddp = DDP(ranks.dp.DigitCNN())
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    share = GLOBAL_BATCH // size
    xb, yb = x[rank * share : (rank + 1) * share], y[rank * share : (rank + 1) * share]

    def ddp_step():
        opt.zero_grad()
        F.cross_entropy(ddp(xb), yb).backward()
        opt.step()

    timed("DDP", ddp_step)
    if rank == 0:
        print(json.dumps({"ranks": size, **rows}), flush=True)
    dist.destroy_process_group()


def main() -> None:
    from numtorch.distributed import _mpi

    env = dict(os.environ, OMP_NUM_THREADS="1", BENCH_DISTRIBUTED_RANK="1")
    env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}"
    results = {}
    for n in (1, 2):
        cmd = ["timeout", "600", _mpi.mpiexec(), "-n", str(n), "-hosts", "localhost"]
        out = subprocess.run(
            [*cmd, sys.executable, __file__], env=env, capture_output=True, text=True, check=True
        ).stdout
        results[n] = json.loads(next(line for line in out.splitlines() if line.startswith("{")))
    print(f"global batch {GLOBAL_BATCH}, {STEPS} steps, OMP_NUM_THREADS=1 per rank")
    print(f"{'':8} {'1 rank':>16} {'2 ranks':>16} {'speed-up':>9}")
    for name in ("DP-SGD", "DDP"):
        (t1, s1), (t2, s2) = results[1][name], results[2][name]
        print(
            f"{name:8} {t1 * 1e3:8.1f} ms ({s1:3.0%}) {t2 * 1e3:8.1f} ms ({s2:3.0%}) "
            f"{t1 / t2:8.2f}x"
        )
    print("(in parentheses: the share of the step spent waiting on collectives)")


if __name__ == "__main__":
    _rank_main() if os.environ.get("BENCH_DISTRIBUTED_RANK") else main()
