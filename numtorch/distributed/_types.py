"""PyTorch's small distributed types: Backend, ReduceOp, the errors and the default timeout."""

from __future__ import annotations

import enum
from datetime import timedelta

default_pg_timeout = timedelta(minutes=30)


class DistError(RuntimeError):
    """An error in the distributed package."""


class DistBackendError(DistError):
    """An error in a backend's collective or point-to-point operation (e.g. a timeout)."""


class DistNetworkError(DistError):
    """A network error."""


class DistStoreError(DistError):
    """An error in a store (PyTorch's rendezvous key-value store)."""


class QueueEmptyError(DistStoreError):
    """A store's queue was empty."""


class Backend(str):
    """A backend's name, lower-cased: ``Backend("GLOO") == "gloo"``."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    FAKE = "fake"
    backend_list = [UNDEFINED, GLOO, NCCL, XCCL, UCC, MPI, FAKE]
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL, "xpu": XCCL}
    backend_capability = {
        GLOO: ["cpu", "cuda"],
        NCCL: ["cuda"],
        XCCL: ["xpu"],
        UCC: ["cpu", "cuda"],
        MPI: ["cpu", "cuda"],
        FAKE: ["cpu", "cuda", "hpu"],
    }
    backend_type_map: dict = {}

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return value

    @classmethod
    def register_backend(cls, name, func, extended_api=False, devices=None):
        raise RuntimeError("numtorch.distributed runs its backends on MPI; none can be added")


class ReduceOp:
    """The reduction of all_reduce, reduce and reduce_scatter."""

    class RedOpType(enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8

        def __str__(self) -> str:
            return f"RedOpType.{self.name}"

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM

    def __init__(self, op: RedOpType) -> None:
        op = ReduceOp.RedOpType(op)
        if op == ReduceOp.PREMUL_SUM:
            raise RuntimeError(_PREMUL_SUM_ASSERT)
        self.op = op
        self.factor = None

    def __eq__(self, other) -> bool:
        other = other.op if isinstance(other, ReduceOp) else other
        return self.op == other

    def __hash__(self) -> int:
        return hash(self.op)


_PREMUL_SUM_ASSERT = (
    'op_ != PREMUL_SUM INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/torch/csrc/'
    'distributed/c10d/Types.hpp":54, please report a bug to PyTorch. Use '
    "`torch.distributed._make_nccl_premul_sum` to create an instance of ReduceOp with "
    "PREMUL_SUM"
)


def _make_nccl_premul_sum(factor) -> ReduceOp:
    """A PREMUL_SUM ReduceOp multiplying by ``factor`` before the sum (NCCL only)."""
    op = ReduceOp.__new__(ReduceOp)
    op.op, op.factor = ReduceOp.PREMUL_SUM, factor
    return op


def red_op_type(op) -> ReduceOp.RedOpType:
    """The RedOpType of an op argument (a RedOpType or a ReduceOp)."""
    op = op.op if isinstance(op, ReduceOp) else op
    if not isinstance(op, ReduceOp.RedOpType):
        raise TypeError(f"op must be a torch.distributed.ReduceOp, got {op!r}")
    return op


# Kept for old programs, as PyTorch keeps it.
class reduce_op:
    SUM = ReduceOp.SUM
    PRODUCT = ReduceOp.PRODUCT
    MIN = ReduceOp.MIN
    MAX = ReduceOp.MAX
