"""The ``*_object`` collectives: picklable Python objects as byte messages."""

from __future__ import annotations

import io
import pickle

import numpy as np

from . import _mpi
from ._buffers import check_root_list, peer, root_of, source
from ._groups import member
from ._work import poll


def _dumps(obj) -> np.ndarray:
    f = io.BytesIO()
    pickle.Pickler(f).dump(obj)
    return np.frombuffer(f.getvalue(), np.uint8)


def _loads(data: np.ndarray):
    return pickle.loads(data.tobytes())


def _wait(pg, requests, what: str) -> None:
    poll(requests, pg._timeout.total_seconds(), what)


def _offsets(sizes) -> list[int]:
    return [int(o) for o in np.concatenate([[0], np.cumsum(sizes)[:-1]])]


def all_gather_object(object_list, obj, group=None) -> None:
    pg = member(group, "all_gather_object")
    if pg is None:
        return None
    data = _dumps(obj)
    sizes = np.empty(pg.size(), np.int64)
    _wait(pg, [pg._ctl.Iallgather(np.array([data.size], np.int64), sizes)], "all_gather_object")
    recv = np.empty(int(sizes.sum()), np.uint8)
    spec = [recv, (sizes.tolist(), _offsets(sizes)), _byte()]
    _wait(pg, [pg._ctl.Iallgatherv(data, spec)], "all_gather_object")
    for i, (off, n) in enumerate(zip(_offsets(sizes), sizes)):
        object_list[i] = _loads(recv[off : off + n])
    return None


def _rooted(group, rank, group_rank_, what: str):
    """The group, the root and whether this rank is it; (None, 0, False) outside the group."""
    pg = member(group, what, stacklevel=5)
    if pg is None:
        return None, 0, False
    root = root_of(pg, rank, group_rank_)
    return pg, root, pg.rank() == root


def _byte():
    return _mpi.MPI().BYTE


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None) -> None:
    pg, root, mine = _rooted(group, dst, group_dst, "gather_object")
    if pg is None:
        return None
    check_root_list(mine, object_gather_list is not None, "gather_list", "destination")
    data = _dumps(obj)
    sizes = np.empty(pg.size(), np.int64) if mine else None
    _wait(pg, [pg._ctl.Igather(np.array([data.size], np.int64), sizes, root)], "gather_object")
    spec = None
    if mine:
        recv = np.empty(int(sizes.sum()), np.uint8)
        spec = [recv, (sizes.tolist(), _offsets(sizes)), _byte()]
    _wait(pg, [pg._ctl.Igatherv(data, spec, root)], "gather_object")
    if mine:
        for i, (off, n) in enumerate(zip(_offsets(sizes), sizes)):
            object_gather_list[i] = _loads(recv[off : off + n])
    return None


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None) -> None:
    pg, root, mine = _rooted(group, src, group_src, "broadcast_object_list")
    if pg is None:
        return None
    data = _dumps(list(object_list)) if mine else None
    size = np.array([data.size if mine else 0], np.int64)
    _wait(pg, [pg._ctl.Ibcast(size, root)], "broadcast_object_list")
    buf = data if mine else np.empty(int(size[0]), np.uint8)
    _wait(pg, [pg._ctl.Ibcast(buf, root)], "broadcast_object_list")
    if not mine:
        object_list[:] = _loads(buf)
    return None


def scatter_object_list(
    scatter_object_output_list, scatter_object_input_list=None, src=None, group=None, group_src=None
) -> None:
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError(
            "Expected argument scatter_object_output_list to be a list of size at least 1."
        )
    pg, root, mine = _rooted(group, src, group_src, "scatter_object_list")
    if pg is None:
        return None
    sizes, send = None, None
    if mine:
        pieces = [_dumps(o) for o in scatter_object_input_list]
        sizes = np.array([p.size for p in pieces], np.int64)
        send = [np.concatenate(pieces), (sizes.tolist(), _offsets(sizes)), _byte()]
    n = np.empty(1, np.int64)
    _wait(pg, [pg._ctl.Iscatter(sizes, n, root)], "scatter_object_list")
    recv = np.empty(int(n[0]), np.uint8)
    _wait(pg, [pg._ctl.Iscatterv(send, recv, root)], "scatter_object_list")
    scatter_object_output_list[0] = _loads(recv)
    return None


def send_object_list(
    object_list, dst=None, group=None, device=None, group_dst=None, use_batch=False
):
    pg = member(group, "send_object_list")
    if pg is None:
        return None
    to = peer(pg, dst, group_dst, "destination")
    data = _dumps(list(object_list))
    _wait(pg, [pg._ctl.Isend(np.array([data.size], np.int64), to, 11)], "send_object_list")
    _wait(pg, [pg._ctl.Isend(data, to, 12)], "send_object_list")
    return None


def recv_object_list(
    object_list, src=None, group=None, device=None, group_src=None, use_batch=False
):
    """Receive the list ``send_object_list`` sent into ``object_list``; returns the sender's
    rank."""
    MPI = _mpi.MPI()
    pg = member(group, "recv_object_list")
    if pg is None:
        return -1
    size = np.empty(1, np.int64)
    status = MPI.Status()
    req = pg._ctl.Irecv(size, source(pg, src, group_src, MPI.ANY_SOURCE), 11)
    poll([req], pg._timeout.total_seconds(), "recv_object_list", [status])
    sender = status.Get_source()
    buf = np.empty(int(size[0]), np.uint8)
    _wait(pg, [pg._ctl.Irecv(buf, sender, 12)], "recv_object_list")
    object_list[:] = _loads(buf)
    return pg._ranks[sender]
