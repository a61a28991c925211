"""Run on 3 ranks: every collective, ReduceOp and dtype against NumPy's arithmetic on the
inputs every rank can rebuild (rank r's input is a known function of r)."""

import sys
import warnings

import numpy as np

import numtorch as torch
import numtorch.distributed as dist

dist.init_process_group("gloo")
R, N = dist.get_rank(), dist.get_world_size()
assert N == 3 and dist.get_backend() == "gloo" and dist.is_initialized()
checks = 0


def data(r, dtype, n=5):
    """Rank r's input: distinct per rank, small enough for products and exact sums."""
    base = np.array([r + 1, 2 - r, 3 * r - 1, 4, r % 2 + 1], dtype=np.int64)[:n]
    return base.astype(dtype) if np.dtype(dtype).kind != "f" else base.astype(dtype) / 2


def check(got, want):
    global checks
    got = got.numpy() if isinstance(got, torch.Tensor) else np.asarray(got)
    assert got.dtype == np.asarray(want).dtype, (got.dtype, np.asarray(want).dtype)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    checks += 1


REDUCE = {
    "SUM": lambda xs: np.sum(xs, 0),
    "PRODUCT": lambda xs: np.prod(xs, 0),
    "MIN": lambda xs: np.min(xs, 0),
    "MAX": lambda xs: np.max(xs, 0),
    "AVG": lambda xs: np.mean(xs, 0),
    "BAND": lambda xs: np.bitwise_and.reduce(xs, 0),
    "BOR": lambda xs: np.bitwise_or.reduce(xs, 0),
    "BXOR": lambda xs: np.bitwise_xor.reduce(xs, 0),
}
FLOAT_OPS = ["SUM", "PRODUCT", "MIN", "MAX", "AVG"]
INT_OPS = ["SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]


def expected(name, dtype, ranks):
    return REDUCE[name](np.stack([data(r, dtype) for r in ranks])).astype(dtype)


for dtype in ["float32", "float64", "int64"]:
    ops = INT_OPS if dtype == "int64" else FLOAT_OPS
    for name in ops:
        op = getattr(dist.ReduceOp, name)
        for async_op in (False, True):
            t = torch.from_numpy(data(R, dtype))
            work = dist.all_reduce(t, op=op, async_op=async_op)
            if async_op:
                assert work.wait() and work.is_completed()
                assert work.result()[0] is t
            else:
                assert work is None
            check(t, expected(name, dtype, range(N)))
            # reduce: only dst holds the result, the others keep their input
            t = torch.from_numpy(data(R, dtype))
            w = dist.reduce(t, dst=2, op=op, async_op=async_op)
            if async_op:
                w.get_future().wait()
            check(t, expected(name, dtype, range(N)) if R == 2 else data(R, dtype))
            # reduce_scatter_tensor: rank r gets the reduced rows of block r
            inp = torch.from_numpy(np.concatenate([data(R, dtype, 4) * (j + 1) for j in range(N)]))
            out = torch.zeros(4, dtype=inp.dtype)
            w = dist.reduce_scatter_tensor(out, inp, op=op, async_op=async_op)
            if async_op:
                w.wait()
            want = REDUCE[name](np.stack([data(r, dtype, 4) * (R + 1) for r in range(N)]))
            check(out, want.astype(dtype))
            # reduce_scatter (list form)
            ins = [torch.from_numpy(data(R, dtype, 3) + j) for j in range(N)]
            out = torch.zeros(3, dtype=ins[0].dtype)
            w = dist.reduce_scatter(out, ins, op=op, async_op=async_op)
            if async_op:
                w.wait()
            want = REDUCE[name](np.stack([data(r, dtype, 3) + R for r in range(N)]))
            check(out, want.astype(dtype))

    # broadcast from rank 1, into a non-contiguous view of a bigger tensor
    base = torch.from_numpy(np.zeros((5, 2), dtype)) + R
    dist.broadcast(base[:, 0], src=1)
    check(base[:, 0], np.full(5, 1, dtype))
    check(base[:, 1], np.full(5, R, dtype))
    t = torch.from_numpy(data(R, dtype))
    dist.broadcast(t, src=2, async_op=True).wait()
    check(t, data(2, dtype))
    # all_reduce into a strided view writes through to its base
    base = torch.from_numpy(np.stack([data(R, dtype), data(R, dtype)], 1).copy())
    dist.all_reduce(base[:, 1])
    check(base[:, 1], expected("SUM", dtype, range(N)))
    check(base[:, 0], data(R, dtype))

    # all_gather, all_gather_into_tensor, gather, scatter
    outs = [torch.zeros(5, dtype=torch.from_numpy(data(0, dtype)).dtype) for _ in range(N)]
    dist.all_gather(outs, torch.from_numpy(data(R, dtype)))
    for r in range(N):
        check(outs[r], data(r, dtype))
    out = torch.from_numpy(np.zeros((N, 5), dtype))
    dist.all_gather_into_tensor(out, torch.from_numpy(data(R, dtype)), async_op=True).wait()
    check(out, np.stack([data(r, dtype) for r in range(N)]))
    gl = [torch.from_numpy(np.zeros(5, dtype)) for _ in range(N)] if R == 1 else None
    dist.gather(torch.from_numpy(data(R, dtype)), gl, dst=1)
    if R == 1:
        for r in range(N):
            check(gl[r], data(r, dtype))
    sl = [torch.from_numpy(data(j, dtype) * 3) for j in range(N)] if R == 2 else None
    t = torch.from_numpy(np.zeros(5, dtype))
    dist.scatter(t, sl, src=2)
    check(t, data(R, dtype) * 3)

    # all_to_all and all_to_all_single (uneven splits: rank r sends j+1 rows to rank j)
    ins = [torch.from_numpy(np.full(2, 10 * R + j, dtype)) for j in range(N)]
    outs = [torch.from_numpy(np.zeros(2, dtype)) for _ in range(N)]
    dist.all_to_all(outs, ins)
    for j in range(N):
        check(outs[j], np.full(2, 10 * j + R, dtype))
    send = np.concatenate([np.full((j + 1, 2), 10 * R + j, dtype) for j in range(N)])
    recv = torch.from_numpy(np.zeros(((R + 1) * N, 2), dtype))
    dist.all_to_all_single(
        recv, torch.from_numpy(send), [R + 1] * N, [j + 1 for j in range(N)], async_op=True
    ).wait()
    check(recv, np.concatenate([np.full((R + 1, 2), 10 * j + R, dtype) for j in range(N)]))
    recv = torch.from_numpy(np.zeros(N, dtype))
    dist.all_to_all_single(recv, torch.from_numpy(np.arange(N).astype(dtype) + 10 * R))
    check(recv, (np.arange(N) * 10 + R).astype(dtype))

# complex and bool reductions
z = torch.tensor([1 + 2j, R - 1j], dtype=torch.complex128)
dist.all_reduce(z)
check(z, np.array([3 + 6j, 3 - 3j]))
b = torch.tensor([R == 0, True, False])
dist.all_reduce(b, op=dist.ReduceOp.MAX)
check(b, np.array([True, True, False]))

# groups: ranks 0 and 2 on a sub-communicator; rank 1 is outside it
g = dist.new_group([2, 0])
if R == 1:
    assert g == dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(g) == -1
    t = torch.ones(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert dist.all_reduce(t, group=g) is None
    assert "does not belong to the given group" in str(caught[0].message)
    check(t, np.ones(2, np.float32))
    outside = {  # every family of call, each warning at this line's caller (here)
        "broadcast": lambda: dist.broadcast(t, 0, group=g),
        "reduce": lambda: dist.reduce(t, 0, group=g),
        "all_gather": lambda: dist.all_gather([t, t], t, group=g),
        "gather": lambda: dist.gather(t, group=g),
        "scatter": lambda: dist.scatter(t, group=g),
        "send": lambda: dist.send(t, 0, group=g),
        "recv": lambda: dist.recv(t, 0, group=g),
        "gather_object": lambda: dist.gather_object(1, group=g),
        "broadcast_object_list": lambda: dist.broadcast_object_list([1], 0, group=g),
        "barrier": lambda: dist.barrier(group=g),
    }
    for what, call in outside.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert call() == (-1 if what == "recv" else None)
        assert len(caught) == 1 and f"Running {what} on global rank 1" in str(caught[0].message)
        assert caught[0].filename == __file__, (what, caught[0].filename)
        checks += 1
else:
    assert dist.get_world_size(g) == 2 and dist.get_rank(g) == R // 2
    assert dist.get_process_group_ranks(g) == [0, 2] and dist.get_global_rank(g, 1) == 2
    assert dist.get_group_rank(g, 2) == 1 and dist.get_backend(g) == "gloo"
    for dtype in ["float32", "float64", "int64"]:
        for name in ["SUM", "MAX"]:
            t = torch.from_numpy(data(R, dtype))
            dist.all_reduce(t, op=getattr(dist.ReduceOp, name), group=g, async_op=True).wait()
            check(t, expected(name, dtype, [0, 2]))
        t = torch.from_numpy(data(R, dtype))
        dist.broadcast(t, src=2, group=g)  # a global rank
        check(t, data(2, dtype))
        t = torch.from_numpy(data(R, dtype))
        dist.broadcast(t, group=g, group_src=0)  # a rank within the group
        check(t, data(0, dtype))
    outs = [torch.zeros(5) for _ in range(2)]
    dist.all_gather(outs, torch.from_numpy(data(R, "float32")), group=g)
    check(outs[1], data(2, "float32"))
dist.barrier()
dist.barrier(async_op=True).wait()
dist.destroy_process_group()
assert not dist.is_initialized()
sys.stdout.write(f"rank {R}: {checks} checks\n")  # one write: lines do not interleave
