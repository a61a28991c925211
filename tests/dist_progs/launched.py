"""Started by the launcher: prints its environment and an all_reduce of the ranks as JSON."""

import json
import os
import sys

import numtorch as torch
import numtorch.distributed as dist

dist.init_process_group(backend="gloo", init_method="env://")
t = torch.tensor([float(dist.get_rank())])
dist.all_reduce(t)
names = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
env = {n: os.environ[n] for n in names}
out = {"env": env, "rank": dist.get_rank(), "size": dist.get_world_size(), "sum": t.item()}
out |= {"argv": sys.argv[1:], "elastic": dist.is_torchelastic_launched()}
out["local"] = dist.get_node_local_rank()
sys.stdout.write(json.dumps(out) + "\n")  # one write: lines do not interleave
sys.stdout.flush()
dist.destroy_process_group()
