"""Run on 2 ranks: rank 1 calls ``sys.exit(code)`` (the first argument) after init. A
nonzero code ends the job at once with that status while rank 0 waits in a collective (30
min timeout); code 0 lets rank 0 finish its own work."""

import sys
import time

import numtorch as torch
import numtorch.distributed as dist

code = int(sys.argv[1])
dist.init_process_group("gloo")
if dist.get_rank() == 1:
    sys.exit(code)
if code:
    dist.all_reduce(torch.ones(2))
    print("rank 0 passed the all_reduce", flush=True)
else:
    time.sleep(0.5)  # rank 1 has left meanwhile
    print("rank 0 finished", flush=True)
