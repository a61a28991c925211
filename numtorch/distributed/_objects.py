"""The ``*_object`` collectives: picklable Python objects as byte messages."""

from __future__ import annotations

import io
import pickle

import numpy as np

from . import _mpi
from ._buffers import group_rank, not_self
from ._groups import resolve, warn_not_member
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


def _root(pg, rank, group_rank_, name):
    if rank is None and group_rank_ is None:
        return 0
    return group_rank(pg, rank, group_rank_, name)


def all_gather_object(object_list, obj, group=None) -> None:
    pg = resolve(group)
    if pg is None:
        return warn_not_member("all_gather_object")
    data = _dumps(obj)
    sizes = np.empty(pg.size(), np.int64)
    _wait(pg, [pg._ctl.Iallgather(np.array([data.size], np.int64), sizes)], "all_gather_object")
    recv = np.empty(int(sizes.sum()), np.uint8)
    spec = [recv, (sizes.tolist(), _offsets(sizes)), _byte()]
    _wait(pg, [pg._ctl.Iallgatherv(data, spec)], "all_gather_object")
    for i, (off, n) in enumerate(zip(_offsets(sizes), sizes)):
        object_list[i] = _loads(recv[off : off + n])
    return None


def _byte():
    return _mpi.MPI().BYTE


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None) -> None:
    pg = resolve(group)
    if pg is None:
        return warn_not_member("gather_object")
    root = _root(pg, dst, group_dst, "root")
    mine = pg.rank() == root
    if mine and object_gather_list is None:
        raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    if not mine and object_gather_list is not None:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
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
    pg = resolve(group)
    if pg is None:
        return warn_not_member("broadcast_object_list")
    root = _root(pg, src, group_src, "root")
    mine = pg.rank() == root
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
    pg = resolve(group)
    if pg is None:
        return warn_not_member("scatter_object_list")
    root = _root(pg, src, group_src, "root")
    mine = pg.rank() == root
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
    pg = resolve(group)
    if pg is None:
        return warn_not_member("send_object_list")
    peer = group_rank(pg, dst, group_dst, "destination")
    not_self(pg, peer, "destination")
    data = _dumps(list(object_list))
    _wait(pg, [pg._ctl.Isend(np.array([data.size], np.int64), peer, 11)], "send_object_list")
    _wait(pg, [pg._ctl.Isend(data, peer, 12)], "send_object_list")
    return None


def recv_object_list(
    object_list, src=None, group=None, device=None, group_src=None, use_batch=False
):
    """Receive the list ``send_object_list`` sent into ``object_list``; returns the sender's
    rank."""
    MPI = _mpi.MPI()
    pg = resolve(group)
    if pg is None:
        warn_not_member("recv_object_list")
        return -1
    if src is None and group_src is None:
        peer = MPI.ANY_SOURCE
    else:
        peer = group_rank(pg, src, group_src, "source")
        not_self(pg, peer, "source")
    size = np.empty(1, np.int64)
    status = MPI.Status()
    req = pg._ctl.Irecv(size, peer, 11)
    poll([req], pg._timeout.total_seconds(), "recv_object_list", [status])
    sender = status.Get_source()
    buf = np.empty(int(size[0]), np.uint8)
    _wait(pg, [pg._ctl.Irecv(buf, sender, 12)], "recv_object_list")
    object_list[:] = _loads(buf)
    return pg._ranks[sender]
