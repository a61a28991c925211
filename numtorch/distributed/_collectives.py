"""The collectives on tensors, in place as PyTorch's, on MPI's non-blocking calls."""

from __future__ import annotations

import numpy as np

from . import _mpi
from ._buffers import (
    array,
    as_bytes,
    check_root_list,
    check_tensor,
    check_tensor_list,
    contiguous,
    group_rank,
    root_of,
    write,
)
from ._groups import member, resolve, warn_not_member
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


def enter(what: str, group, stacklevel: int = 5, **arguments):
    """PyTorch's checks of a collective's tensor arguments, in the order given (a name that
    ends in ``list`` names a list of tensors), then its group: None, after PyTorch's
    warning (at the user's line: ``stacklevel``), where this rank is not in it."""
    for name, value in arguments.items():
        (check_tensor_list if name.endswith("list") else check_tensor)(value, name)
    return member(group, what, stacklevel=stacklevel)


def _from_root(tensor, rank, group_rank_, group, what: str):
    """A broadcast's or reduce's group and root (either rank must be given; PyTorch checks
    it before the tensor); (None, 0), after PyTorch's warning, outside the group."""
    pg = resolve(group)
    root = group_rank(pg, rank, group_rank_, "root") if pg is not None else 0
    check_tensor(tensor, "tensor")
    if pg is None:
        warn_not_member(what, stacklevel=4)
    return pg, root


def _reduced(a: np.ndarray, recv: np.ndarray, p, pg):
    """Writes a reduction's result (``recv``, in the plan's dtype) into ``a``."""

    def finish():
        write(a, p.result(recv, pg.size(), a.dtype))

    return finish


def _optional_list(tensors, name: str) -> list:
    """A tensor list only the root passes (None or empty elsewhere)."""
    if tensors:
        check_tensor_list(tensors, name)
        return tensors
    return []


def _per_rank(tensors, pg, aten: str, what: str) -> list[np.ndarray]:
    """The arrays of a list with one tensor a rank of ``pg`` (PyTorch's length check)."""
    _list_length(tensors, pg.size(), what)
    return [array(t, aten) for t in tensors]


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
    pg = enter("all_reduce", group, tensor=tensor)
    if pg is None:
        return None
    a = array(tensor, "allreduce_")
    p = plan(a.dtype, op, "all_reduce")
    send = p.send(a)
    if send is a:  # the tensor's own memory: reduce in place, no buffer, no copy back
        recv = a
        req = pg._comm.Iallreduce(_mpi.MPI().IN_PLACE, a, p.op)
    else:
        recv = np.empty_like(send)
        req = pg._comm.Iallreduce(send, recv, p.op)
    return start(pg, [req], "all_reduce", _reduced(a, recv, p, pg), async_op, [tensor])


def broadcast(tensor, src=None, group=None, async_op: bool = False, group_src=None):
    pg, root = _from_root(tensor, src, group_src, group, "broadcast")
    if pg is None:
        return None
    a = array(tensor, "broadcast_")
    buf = contiguous(a)
    req = pg._comm.Ibcast(as_bytes(buf), root)
    return start(pg, [req], "broadcast", lambda: write(a, buf), async_op, [tensor])


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op: bool = False, group_dst=None):
    pg, root = _from_root(tensor, dst, group_dst, group, "reduce")
    if pg is None:
        return None
    a = array(tensor, "reduce_")
    p = plan(a.dtype, op, "reduce")
    send = p.send(a)
    mine = pg.rank() == root
    recv = np.empty_like(send) if mine else None
    finish = _reduced(a, recv, p, pg) if mine else None
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
    pg = enter("all_gather", group, tensor_list=tensor_list, tensor=tensor)
    if pg is None:
        return None
    a = array(tensor, "allgather_")
    outs = _per_rank(tensor_list, pg, "allgather_", "allgather")
    _same(outs, a, "ProcessGroupGloo::allgather")
    send = as_bytes(a)
    recv = np.empty(send.size * pg.size(), np.uint8)
    req = pg._comm.Iallgather(send, recv)
    return start(pg, [req], "all_gather", _gathered(outs, recv), async_op, tensor_list)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    pg = enter(
        "all_gather_into_tensor", group, input_tensor=input_tensor, output_tensor=output_tensor
    )
    if pg is None:
        return None
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


def _rooted(tensor, tensors, name: str, rank, group_rank_, group, what: str, role: str):
    """What gather and scatter share: PyTorch's checks, the group, the root and, on the root,
    the arrays of the list (one a rank). None where this rank is not in the group."""
    check_tensor(tensor, "tensor")
    tensors = _optional_list(tensors, name)
    pg = member(group, what, stacklevel=5)
    if pg is None:
        return None
    root = root_of(pg, rank, group_rank_)
    mine = pg.rank() == root
    check_root_list(mine, bool(tensors), name, role)
    a = array(tensor, f"{what}_")
    arrays = []
    if mine:
        arrays = _per_rank(tensors, pg, f"{what}_", what)
        _same(arrays, a, f"ProcessGroupGloo::{what}")
    return pg, root, mine, a, arrays, tensors


def gather(tensor, gather_list=None, dst=None, group=None, async_op: bool = False, group_dst=None):
    got = _rooted(
        tensor, gather_list, "gather_list", dst, group_dst, group, "gather", "destination"
    )
    if got is None:
        return None
    pg, root, mine, a, outs, gather_list = got
    send = as_bytes(a)
    recv = np.empty(send.size * pg.size(), np.uint8) if mine else None
    finish = _gathered(outs, recv) if mine else None
    req = pg._comm.Igather(send, recv, root)
    return start(pg, [req], "gather", finish, async_op, gather_list)


def scatter(
    tensor, scatter_list=None, src=None, group=None, async_op: bool = False, group_src=None
):
    got = _rooted(tensor, scatter_list, "scatter_list", src, group_src, group, "scatter", "source")
    if got is None:
        return None
    pg, root, mine, a, ins, _ = got
    send = np.concatenate([as_bytes(x) for x in ins]) if mine else None
    buf = contiguous(a)
    req = pg._comm.Iscatter(send, as_bytes(buf), root)
    return start(pg, [req], "scatter", lambda: write(a, buf), async_op, [tensor])


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op: bool = False):
    pg = enter("reduce_scatter", group, output=output, input_list=input_list)
    if pg is None:
        return None
    out = array(output, "reduce_scatter_")
    ins = _per_rank(input_list, pg, "reduce_scatter_", "reduce_scatter")
    p = plan(out.dtype, op, "reduce_scatter")
    counts = [x.size for x in ins]
    if counts[pg.rank()] != out.size:
        raise RuntimeError("reduce_scatter: output tensor size must match this rank's input")
    send = np.concatenate([p.send(x).reshape(-1) for x in ins]) if ins else p.send(out)
    recv = np.empty(out.size, p.dtype)
    finish = _reduced(out, recv, p, pg)
    req = pg._comm.Ireduce_scatter(send, recv, counts, p.op)
    return start(pg, [req], "reduce_scatter", finish, async_op, [output])


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    pg = enter("reduce_scatter_tensor", group, output=output, input=input)
    if pg is None:
        return None
    out = array(output, "_reduce_scatter_base_")
    a = array(input, "_reduce_scatter_base_")
    if a.size != out.size * pg.size():
        raise ValueError("input tensor must be the same size as output size times world size")
    p = plan(out.dtype, op, "reduce_scatter_tensor")
    send = p.send(a)
    recv = np.empty(out.size, p.dtype)
    finish = _reduced(out, recv, p, pg)
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
    pg = enter(
        "all_to_all",
        group,
        output_tensor_list=output_tensor_list,
        input_tensor_list=input_tensor_list,
    )
    if pg is None:
        return None
    outs = _per_rank(output_tensor_list, pg, "alltoall_", "alltoall")
    ins = [as_bytes(x) for x in _per_rank(input_tensor_list, pg, "alltoall_", "alltoall")]
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
    pg = enter("all_to_all_single", group, output=output, input=input)
    if pg is None:
        return None
    a = array(input, "alltoall_base_")
    out = array(output, "alltoall_base_")
    ins = [as_bytes(x) for x in _split(a, input_split_sizes, pg.size(), "input")]
    outs = _split(out, output_split_sizes, pg.size(), "output")
    return _alltoallv(pg, ins, outs, "all_to_all_single", async_op, [output])
