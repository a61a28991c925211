"""Run on 3 ranks: point-to-point messages and the object collectives."""

import sys

import numpy as np

import numtorch as torch
import numtorch.distributed as dist

dist.init_process_group(backend="mpi")
R, N = dist.get_rank(), dist.get_world_size()
assert dist.get_backend() == "mpi"
checks = 0


def check(got, want):
    global checks
    assert got == want, (got, want)
    checks += 1


def values(t):
    return t.tolist()


# send/recv in a ring; recv with no src reports the sender
right, left = (R + 1) % N, (R - 1) % N
if R % 2 == 0:
    dist.send(torch.arange(4.0) + R, right)
    t = torch.zeros(4)
    check(dist.recv(t), left)
else:
    t = torch.zeros(4)
    check(dist.recv(t, src=left), left)
    dist.send(torch.arange(4.0) + R, dst=right)
check(values(t), [float(left + i) for i in range(4)])

# isend/irecv with tags into a strided view, int64
buf = torch.zeros(3, 2, dtype=torch.int64)
rq = dist.irecv(buf[:, 1], src=left, tag=5)
sq = dist.isend(torch.tensor([R, 10 * R, 100 * R]), dst=right, tag=5)
sq.wait()
rq.wait()
check(rq.is_completed(), True)
check(values(buf), [[0, left], [0, 10 * left], [0, 100 * left]])

# batch_isend_irecv: every rank sends to every other rank
ops, got = [], {}
for peer in range(N):
    if peer != R:
        got[peer] = torch.zeros(2, dtype=torch.float64)
        ops.append(dist.P2POp(dist.isend, torch.tensor([R, peer], dtype=torch.float64), peer))
        ops.append(dist.P2POp(dist.irecv, got[peer], peer))
for w in dist.batch_isend_irecv(ops):
    w.wait()
for peer, t in got.items():
    check(values(t), [float(peer), float(R)])

# objects
objs = [None] * N
dist.all_gather_object(objs, {"rank": R, "t": [R] * R})
check(objs, [{"rank": r, "t": [r] * r} for r in range(N)])
lst = ["a", 1, {"x": 2}] if R == 1 else [None, None, None]
dist.broadcast_object_list(lst, src=1)
check(lst, ["a", 1, {"x": 2}])
gl = [None] * N if R == 2 else None
dist.gather_object(("from", R), gl, dst=2)
if R == 2:
    check(gl, [("from", r) for r in range(N)])
out = [None]
dist.scatter_object_list(out, [f"for {r}" * (r + 1) for r in range(N)] if R == 0 else None, src=0)
check(out, [f"for {R}" * (R + 1)])
if R == 0:
    dist.send_object_list([np.arange(3), "tail"], dst=2)
elif R == 2:
    box = [None, None]
    check(dist.recv_object_list(box), 0)
    check(box[0].tolist() + [box[1]], [0, 1, 2, "tail"])
# tensors pickle through the object collectives
objs = [None] * N
dist.all_gather_object(objs, torch.tensor([float(R)]))
check([o.tolist() for o in objs], [[float(r)] for r in range(N)])
dist.monitored_barrier()
dist.monitored_barrier(wait_all_ranks=True)
dist.destroy_process_group()
sys.stdout.write(f"rank {R}: {checks} checks\n")  # one write: lines do not interleave
