"""Point-to-point messages (send, recv, isend, irecv, batch_isend_irecv) and the barriers."""

from __future__ import annotations

import time

from . import _mpi
from ._buffers import array, as_bytes, check_tensor, contiguous, peer, source, write
from ._collectives import enter, start
from ._groups import member
from ._types import DistBackendError
from ._work import Work, _seconds, poll


def _isend(tensor, dst, group, tag, group_dst):
    pg = enter("send", group, 6, tensor=tensor)  # under send/isend
    if pg is None:
        return None
    to = peer(pg, dst, group_dst, "destination")
    data = as_bytes(array(tensor, "send"))
    req = pg._comm.Isend(data, to, tag)
    return Work([req], timeout=pg._timeout, what="send", finish=lambda: data, result=[tensor])


def _irecv(tensor, src, group, tag, group_src):
    pg = enter("recv", group, 6, tensor=tensor)  # under recv/irecv
    if pg is None:
        return None
    sender = source(pg, src, group_src, _mpi.MPI().ANY_SOURCE)
    a = array(tensor, "recv_")
    buf = contiguous(a)
    req = pg._comm.Irecv(as_bytes(buf), sender, tag)
    work = Work([req], timeout=pg._timeout, what="recv", result=[tensor])

    def finish():
        write(a, buf)
        work._source = pg._ranks[work._statuses[0].Get_source()]

    work._finish = finish
    return work


def isend(tensor, dst=None, group=None, tag: int = 0, group_dst=None):
    return _isend(tensor, dst, group, tag, group_dst)


def irecv(tensor, src=None, group=None, tag: int = 0, group_src=None):
    return _irecv(tensor, src, group, tag, group_src)


def send(tensor, dst=None, group=None, tag: int = 0, group_dst=None) -> None:
    work = _isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag: int = 0, group_src=None) -> int:
    work = _irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work._source


class P2POp:
    """One isend or irecv for batch_isend_irecv."""

    def __init__(self, op, tensor, peer=None, group=None, tag: int = 0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError(
                "Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                "``torch.distributed.irecv``."
            )
        check_tensor(tensor, "tensor")
        self.op, self.tensor, self.peer, self.group = op, tensor, peer, group
        self.tag, self.group_peer = tag, group_peer

    def __repr__(self) -> str:
        return f"P2POp(op={self.op.__name__}, tensor={tuple(self.tensor.shape)}, peer={self.peer})"


def batch_isend_irecv(p2p_op_list) -> list:
    """Start every operation of the list; returns their Works."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError(
            "Invalid ``p2p_op_list``. Each op is expected to to be of type "
            "``torch.distributed.P2POp``."
        )
    groups = {id(p.group) for p in p2p_op_list}
    if len(groups) > 1:
        raise ValueError("All ops need to use the same group.")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(_isend(p.tensor, p.peer, p.group, p.tag, p.group_peer))
        else:
            works.append(_irecv(p.tensor, p.peer, p.group, p.tag, p.group_peer))
    return [w for w in works if w is not None]


def barrier(group=None, async_op: bool = False, device_ids=None, timeout=None):
    pg = member(group, "barrier")
    if pg is None:
        return None
    return start(pg, [pg._comm.Ibarrier()], "barrier", None, async_op, [], timeout)


def monitored_barrier(group=None, timeout=None, wait_all_ranks: bool = False) -> None:
    """A barrier in which rank 0 hears from every other rank under ``timeout`` and names the
    ranks that did not arrive; the others then wait for rank 0's release."""
    pg = member(group, "monitored_barrier")
    if pg is None:
        return None
    seconds = _seconds(pg._timeout if timeout is None else timeout)
    ctl, me, tag = pg._ctl, pg.rank(), 7
    if me != 0:
        poll([ctl.Isend(b"", 0, tag)], seconds, "monitored_barrier")
        poll([ctl.Irecv(bytearray(1), 0, tag)], seconds, "monitored_barrier")
        return None
    pending = {r: ctl.Irecv(bytearray(1), r, tag) for r in range(1, pg.size())}
    deadline = time.monotonic() + seconds
    while pending and time.monotonic() < deadline:
        for r in [r for r, q in pending.items() if q.Test()]:
            del pending[r]
        time.sleep(1e-4)
    if pending:
        ms = int(seconds * 1000)
        missing = sorted(pending)
        if wait_all_ranks:
            raise DistBackendError(
                f"Ranks {', '.join(map(str, missing))} failed to pass monitoredBarrier in {ms} ms"
            )
        raise DistBackendError(f"Rank {missing[0]} failed to pass monitoredBarrier in {ms} ms")
    poll([ctl.Isend(b"\x00", r, tag) for r in range(1, pg.size())], seconds, "monitored_barrier")
    return None
