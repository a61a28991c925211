"""How a ReduceOp reduces an array on MPI: the checks PyTorch makes, the MPI operation, and
the dtype the reduction runs in."""

from __future__ import annotations

import numpy as np

from . import _mpi
from ._types import ReduceOp, red_op_type

_INTEGRAL_ONLY = (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR)
_NO_COMPLEX = (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT, *_INTEGRAL_ONLY)
_TORCH_INT_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char"}
_TORCH_INT_NAMES |= {"uint8": "Byte", "bool": "Bool", "uint16": "UInt16", "uint32": "UInt32"}
_MPI_NATIVE = "?bBhHiIlLqQfdFD"  # NumPy type codes MPI reduces directly
_BOOL_OPS = {
    ReduceOp.SUM: "LOR",
    ReduceOp.MAX: "LOR",
    ReduceOp.BOR: "LOR",
    ReduceOp.PRODUCT: "LAND",
    ReduceOp.MIN: "LAND",
    ReduceOp.BAND: "LAND",
    ReduceOp.BXOR: "LXOR",
}
_OPS = {
    ReduceOp.SUM: "SUM",
    ReduceOp.AVG: "SUM",
    ReduceOp.PRODUCT: "PROD",
    ReduceOp.MIN: "MIN",
    ReduceOp.MAX: "MAX",
    ReduceOp.BAND: "BAND",
    ReduceOp.BOR: "BOR",
    ReduceOp.BXOR: "BXOR",
}


class Plan:
    """``dtype``: the dtype MPI reduces in (float32 for float16/bfloat16, which MPI lacks);
    ``op``: the MPI operation; ``avg``: divide by the group's size afterwards."""

    def __init__(self, dtype, op, avg: bool) -> None:
        self.dtype, self.op, self.avg = dtype, op, avg

    def send(self, a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(a, dtype=self.dtype)

    def result(self, values: np.ndarray, size: int, dtype) -> np.ndarray:
        if self.avg:
            values = values / size
        return values.astype(dtype, copy=False)


_OPTIONS = {
    "all_reduce": "AllreduceOptions",
    "reduce": "ReduceOptions",
    "reduce_scatter": "ReduceScatterOptions",
    "reduce_scatter_tensor": "ReduceScatterOptions",
}


def _premul_sum(op, what: str) -> Exception:
    """PyTorch's errors for PREMUL_SUM off NCCL: the bare enum member does not convert to a
    c10d ReduceOp (a TypeError from its bindings), a ReduceOp holding it fails in gloo."""
    if isinstance(op, ReduceOp):
        return RuntimeError("Cannot use ReduceOp.PREMUL_SUM with Gloo")
    options = _OPTIONS[what]
    return TypeError(
        "(): incompatible function arguments. The following argument types are supported:\n"
        f"    1. (self: torch._C._distributed_c10d.{options}, arg0: "
        "torch._C._distributed_c10d.ReduceOp) -> None\n\n"
        f"Invoked with: <torch.distributed.distributed_c10d.{options} object at "
        f"{id(op):#x}>, <RedOpType.PREMUL_SUM: 8>"
    )


def plan(dtype: np.dtype, op, what: str = "all_reduce") -> Plan:
    given, op = op, red_op_type(op)
    if op == ReduceOp.PREMUL_SUM:
        raise _premul_sum(given, what)
    kind = dtype.kind
    if kind == "c" and op in _NO_COMPLEX:
        raise ValueError(f"{what} does not support {op} on complex tensors")
    if op in _INTEGRAL_ONLY and kind not in "biu":
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    if op == ReduceOp.AVG and kind in "biu":
        name = _TORCH_INT_NAMES.get(dtype.name, dtype.name)
        raise RuntimeError(f"result type Float can't be cast to the desired output type {name}")
    MPI = _mpi.MPI()
    if kind == "b":
        return Plan(dtype, getattr(MPI, _BOOL_OPS[op]), False)
    work = (
        dtype if dtype.char in _MPI_NATIVE else np.dtype("complex64" if kind == "c" else "float32")
    )
    return Plan(work, getattr(MPI, _OPS[op]), op == ReduceOp.AVG)
