"""Run on 2 ranks: DP-SGD split over the ranks equals one process with the same noise draw."""

import pathlib
import sys

import numpy as np

import numtorch.distributed as dist

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples"))
import dp_sgd_ranks as ranks  # noqa: E402

args = ranks.dp.parse(["--max-steps", "4", "--batch-size", "32"])
dist.init_process_group("gloo")
R, N = dist.get_rank(), dist.get_world_size()
train_set, _ = ranks.dp.load_digits(0)
split = ranks.train(args, train_set, R, N)
alone = ranks.train(args, train_set)
checks = 0
for p, q in zip(split.parameters(), alone.parameters()):
    np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=2e-5, atol=1e-6)
    checks += 1
print(f"rank {R}: {checks} checks", flush=True)
dist.destroy_process_group()
