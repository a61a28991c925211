"""numtorch.distributed: PyTorch's torch.distributed on MPI (mpi4py and an MPI library).

Ranks come from MPI: start them with ``numtorchrun --nproc-per-node N script.py`` (or
``python -m numtorch.distributed.run``) or ``mpiexec -n N python script.py``. The "gloo" and
"mpi" backends both run on MPI's communicators; every wait has the process group's timeout.
"""

# ruff: noqa: F401
from . import _mpi
from ._collectives import (
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    all_to_all_single,
    broadcast,
    gather,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
)
from ._grad_bucket import GradBucket
from ._groups import (
    GroupMember,
    ProcessGroup,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_node_local_rank,
    get_pg_count,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_initialized,
    is_torchelastic_launched,
    new_group,
    new_subgroups,
    new_subgroups_by_enumeration,
)
from ._objects import (
    all_gather_object,
    broadcast_object_list,
    gather_object,
    recv_object_list,
    scatter_object_list,
    send_object_list,
)
from ._p2p import P2POp, barrier, batch_isend_irecv, irecv, isend, monitored_barrier, recv, send
from ._types import (
    Backend,
    DistBackendError,
    DistError,
    DistNetworkError,
    DistStoreError,
    QueueEmptyError,
    ReduceOp,
    _make_nccl_premul_sum,
    default_pg_timeout,
    reduce_op,
)
from ._work import Work


def is_available() -> bool:
    """Whether the distributed package can run here (mpi4py is installed)."""
    return _mpi.available()


def is_mpi_available() -> bool:
    return _mpi.available()


def is_gloo_available() -> bool:
    """ "gloo" runs on the MPI transport."""
    return _mpi.available()


def is_nccl_available() -> bool:
    return False


def is_ucc_available() -> bool:
    return False


def is_xccl_available() -> bool:
    return False


def is_backend_available(backend: str) -> bool:
    return Backend(backend) in (Backend.GLOO, Backend.MPI) and _mpi.available()


def supports_complex(reduceOp) -> bool:
    """Whether a ReduceOp reduces complex tensors."""
    denied = (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT, ReduceOp.BAND, ReduceOp.BOR)
    return reduceOp not in (*denied, ReduceOp.BXOR)
