"""The collectives on tensors, in place as PyTorch's, on MPI's non-blocking calls."""

from __future__ import annotations

import numpy as np

from . import _mpi
from ._buffers import (
    array,
    as_bytes,
    check_tensor,
    check_tensor_list,
    contiguous,
    group_rank,
    write,
)
from ._groups import resolve, warn_not_member
from ._reduce import plan
from ._types import ReduceOp
from ._work import Work


def start(pg, requests, what: str, finish=None, async_op: bool = False, result=None, timeout=None):
    """A Work for started requests: returned when ``async_op``, else waited on (None)."""
    work = Work(
        requests,
        timeout=pg._timeout if timeout is None else timeout,
        what=what,
        finish=finish,
        result=result,
    )
    if async_op:
        return work
    work.wait()
    return None


def _same(arrays, like: np.ndarray, what: str) -> None:
    for i, a in enumerate(arrays):
        if a.size != like.size or a.dtype != like.dtype:
            raise RuntimeError(
                f"{what}: invalid tensor at index {i} (expected {like.size} elements of "
                f"{like.dtype}, got {a.size} of {a.dtype})"
            )


def _list_length(tensors, size: int, what: str) -> None:
    if len(tensors) != size:
        raise RuntimeError(
            f"ProcessGroupGloo::{what}: invalid output tensor list at index 0 (expected "
            f"length {size}, got {len(tensors)})"
        )


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    check_tensor(tensor, "tensor")
    pg = resolve(group)
    if pg is None:
        return warn_not_member("all_reduce")
    a = array(tensor, "allreduce_")
    p = plan(a.dtype, op, "all_reduce")
    send = p.send(a)
    if send is a:  # the tensor's own memory: reduce in place, no buffer, no copy back
        recv = a
        req = pg._comm.Iallreduce(_mpi.MPI().IN_PLACE, a, p.op)
    else:
        recv = np.empty_like(send)
        req = pg._comm.Iallreduce(send, recv, p.op)

    def finish():
        write(a, p.result(recv, pg.size(), a.dtype))

    return start(pg, [req], "all_reduce", finish, async_op, [tensor])


def broadcast(tensor, src=None, group=None, async_op: bool = False, group_src=None):
    pg = resolve(group)
    root = group_rank(pg, src, group_src, "root") if pg is not None else 0
    check_tensor(tensor, "tensor")
    if pg is None:
        return warn_not_member("broadcast")
    a = array(tensor, "broadcast_")
    buf = contiguous(a)
    req = pg._comm.Ibcast(as_bytes(buf), root)
    return start(pg, [req], "broadcast", lambda: write(a, buf), async_op, [tensor])


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op: bool = False, group_dst=None):
    pg = resolve(group)
    root = group_rank(pg, dst, group_dst, "root") if pg is not None else 0
    check_tensor(tensor, "tensor")
    if pg is None:
        return warn_not_member("reduce")
    a = array(tensor, "reduce_")
    p = plan(a.dtype, op, "reduce")
    send = p.send(a)
    mine = pg.rank() == root
    recv = np.empty_like(send) if mine else None

    def finish():
        if mine:
            write(a, p.result(recv, pg.size(), a.dtype))

    req = pg._comm.Ireduce(send, recv, p.op, root)
    return start(pg, [req], "reduce", finish, async_op, [tensor])


def _gathered(pieces, recv: np.ndarray):
    """Write the rows of a gathered byte array into ``pieces`` (arrays)."""

    def finish():
        rows = recv.reshape(len(pieces), -1)
        for a, row in zip(pieces, rows):
            write(a, row.view(a.dtype))

    return finish


def all_gather(tensor_list, tensor, group=None, async_op=False):
    check_tensor_list(tensor_list, "tensor_list")
    check_tensor(tensor, "tensor")
    pg = resolve(group)
    if pg is None:
        return warn_not_member("all_gather")
    a = array(tensor, "allgather_")
    _list_length(tensor_list, pg.size(), "allgather")
    outs = [array(t, "allgather_") for t in tensor_list]
    _same(outs, a, "ProcessGroupGloo::allgather")
    send = as_bytes(a)
    recv = np.empty(send.size * pg.size(), np.uint8)
    req = pg._comm.Iallgather(send, recv)
    return start(pg, [req], "all_gather", _gathered(outs, recv), async_op, tensor_list)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    check_tensor(input_tensor, "input_tensor")
    check_tensor(output_tensor, "output_tensor")
    pg = resolve(group)
    if pg is None:
        return warn_not_member("all_gather_into_tensor")
    a = array(input_tensor, "_allgather_base_")
    out = array(output_tensor, "_allgather_base_")
    if out.size != a.size * pg.size() or out.dtype != a.dtype:
        raise ValueError(
            "output tensor size must be equal to world_size times input tensor size"
            if out.size != a.size * pg.size()
            else "output tensor must have the same type as input tensor"
        )
    buf = contiguous(out)
    req = pg._comm.Iallgather(as_bytes(a), as_bytes(buf))
    return start(
        pg, [req], "all_gather_into_tensor", lambda: write(out, buf), async_op, [output_tensor]
    )


def gather(tensor, gather_list=None, dst=None, group=None, async_op: bool = False, group_dst=None):
    check_tensor(tensor, "tensor")
    if gather_list:
        check_tensor_list(gather_list, "gather_list")
    else:
        gather_list = []
    pg = resolve(group)
    if pg is None:
        return warn_not_member("gather")
    root = group_rank(pg, dst, group_dst, "root") if dst is not None or group_dst is not None else 0
    mine = pg.rank() == root
    if mine and not gather_list:
        raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    if not mine and gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    a = array(tensor, "gather_")
    send = as_bytes(a)
    outs, recv, finish = [], None, None
    if mine:
        _list_length(gather_list, pg.size(), "gather")
        outs = [array(t, "gather_") for t in gather_list]
        _same(outs, a, "ProcessGroupGloo::gather")
        recv = np.empty(send.size * pg.size(), np.uint8)
        finish = _gathered(outs, recv)
    req = pg._comm.Igather(send, recv, root)
    return start(pg, [req], "gather", finish, async_op, gather_list)


def scatter(
    tensor, scatter_list=None, src=None, group=None, async_op: bool = False, group_src=None
):
    check_tensor(tensor, "tensor")
    if scatter_list:
        check_tensor_list(scatter_list, "scatter_list")
    else:
        scatter_list = []
    pg = resolve(group)
    if pg is None:
        return warn_not_member("scatter")
    root = group_rank(pg, src, group_src, "root") if src is not None or group_src is not None else 0
    mine = pg.rank() == root
    if mine and not scatter_list:
        raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
    if not mine and scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    a = array(tensor, "scatter_")
    send = None
    if mine:
        _list_length(scatter_list, pg.size(), "scatter")
        ins = [array(t, "scatter_") for t in scatter_list]
        _same(ins, a, "ProcessGroupGloo::scatter")
        send = np.concatenate([as_bytes(x) for x in ins])
    buf = contiguous(a)
    req = pg._comm.Iscatter(send, as_bytes(buf), root)
    return start(pg, [req], "scatter", lambda: write(a, buf), async_op, [tensor])


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op: bool = False):
    check_tensor(output, "output")
    check_tensor_list(input_list, "input_list")
    pg = resolve(group)
    if pg is None:
        return warn_not_member("reduce_scatter")
    out = array(output, "reduce_scatter_")
    _list_length(input_list, pg.size(), "reduce_scatter")
    ins = [array(t, "reduce_scatter_") for t in input_list]
    p = plan(out.dtype, op, "reduce_scatter")
    counts = [x.size for x in ins]
    if counts[pg.rank()] != out.size:
        raise RuntimeError("reduce_scatter: output tensor size must match this rank's input")
    send = np.concatenate([p.send(x).reshape(-1) for x in ins]) if ins else p.send(out)
    recv = np.empty(out.size, p.dtype)

    def finish():
        write(out, p.result(recv, pg.size(), out.dtype))

    req = pg._comm.Ireduce_scatter(send, recv, counts, p.op)
    return start(pg, [req], "reduce_scatter", finish, async_op, [output])


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    check_tensor(output, "output")
    check_tensor(input, "input")
    pg = resolve(group)
    if pg is None:
        return warn_not_member("reduce_scatter_tensor")
    out = array(output, "_reduce_scatter_base_")
    a = array(input, "_reduce_scatter_base_")
    if a.size != out.size * pg.size():
        raise ValueError("input tensor must be the same size as output size times world size")
    p = plan(out.dtype, op, "reduce_scatter_tensor")
    send = p.send(a)
    recv = np.empty(out.size, p.dtype)

    def finish():
        write(out, p.result(recv, pg.size(), out.dtype))

    req = pg._comm.Ireduce_scatter_block(send, recv, p.op)
    return start(pg, [req], "reduce_scatter_tensor", finish, async_op, [output])


def _displacements(counts):
    return [int(c) for c in np.concatenate([[0], np.cumsum(counts)[:-1]])]


def _alltoallv(pg, send_parts, recv_parts, what, async_op, result):
    """Exchange byte arrays: ``send_parts[j]`` goes to rank j, ``recv_parts[j]`` (arrays to
    write) comes from rank j."""
    MPI = _mpi.MPI()
    scounts = [p.size for p in send_parts]
    rcounts = [p.size * p.itemsize for p in recv_parts]
    send = np.concatenate(send_parts) if send_parts else np.empty(0, np.uint8)
    recv = np.empty(sum(rcounts), np.uint8)
    rdispl = _displacements(rcounts)

    def finish():
        for a, off, n in zip(recv_parts, rdispl, rcounts):
            write(a, recv[off : off + n].view(a.dtype))

    req = pg._comm.Ialltoallv(
        [send, (scounts, _displacements(scounts)), MPI.BYTE],
        [recv, (rcounts, rdispl), MPI.BYTE],
    )
    return start(pg, [req], what, finish, async_op, result)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op: bool = False):
    check_tensor_list(output_tensor_list, "output_tensor_list")
    check_tensor_list(input_tensor_list, "input_tensor_list")
    pg = resolve(group)
    if pg is None:
        return warn_not_member("all_to_all")
    _list_length(output_tensor_list, pg.size(), "alltoall")
    _list_length(input_tensor_list, pg.size(), "alltoall")
    ins = [as_bytes(array(t, "alltoall_")) for t in input_tensor_list]
    outs = [array(t, "alltoall_") for t in output_tensor_list]
    return _alltoallv(pg, ins, outs, "all_to_all", async_op, output_tensor_list)


def _split(a: np.ndarray, sizes, size: int, what: str) -> list[np.ndarray]:
    rows = a.shape[0] if a.ndim else 1
    if not sizes:
        if rows % size:
            raise RuntimeError(f"Tensor's dim 0 does not divide equally across group size ({what})")
        sizes = [rows // size] * size
    if len(sizes) != size or sum(sizes) != rows:
        raise RuntimeError(f"Split sizes doesn't match total dim 0 size ({what})")
    ends = np.cumsum(sizes)
    return [a[e - s : e] for s, e in zip(sizes, ends)]


def all_to_all_single(
    output,
    input,
    output_split_sizes=None,
    input_split_sizes=None,
    group=None,
    async_op: bool = False,
):
    check_tensor(output, "output")
    check_tensor(input, "input")
    pg = resolve(group)
    if pg is None:
        return warn_not_member("all_to_all_single")
    a = array(input, "alltoall_base_")
    out = array(output, "alltoall_base_")
    ins = [as_bytes(x) for x in _split(a, input_split_sizes, pg.size(), "input")]
    outs = _split(out, output_split_sizes, pg.size(), "output")
    return _alltoallv(pg, ins, outs, "all_to_all_single", async_op, [output])
