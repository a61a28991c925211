"""Run on 2 ranks: rank 1 raises while rank 0 waits in a collective (30 min timeout); the
job ends at once with rank 1's traceback."""

import numtorch as torch
import numtorch.distributed as dist

dist.init_process_group("gloo")
if dist.get_rank() == 1:
    raise ValueError("rank 1 gives up")
dist.all_reduce(torch.ones(2))
print("rank 0 passed the all_reduce", flush=True)
