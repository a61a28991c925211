"""Process groups on MPI communicators: init_process_group, new_group and the queries."""

from __future__ import annotations

import os
import sys
import warnings
from datetime import timedelta

from . import _mpi
from ._types import Backend, default_pg_timeout
from ._work import poll

NOT_INITIALIZED = (
    "Default process group has not been initialized, please make sure to call init_process_group."
)


class ProcessGroup:
    """A set of ranks and the MPI communicator that connects them."""

    def __init__(self, comm, ranks: list[int], backend: str, timeout: timedelta, name: str):
        self._comm = comm
        self._ranks = ranks
        self._backend = backend
        self._timeout = timeout
        self._name = name
        self._ctl = comm.Dup()  # the library's own messages (monitored_barrier, objects)

    def _free(self) -> None:
        if self._comm is not None:
            self._comm.Free()
            self._ctl.Free()
            self._comm = self._ctl = None

    def rank(self) -> int:
        return self._comm.Get_rank()

    def size(self) -> int:
        return len(self._ranks)

    def name(self) -> str:
        return self._backend

    @property
    def group_name(self) -> str:
        return self._name

    @property
    def group_desc(self) -> str:
        return "default_pg" if self._name == "0" else "undefined"

    def __repr__(self) -> str:
        return f"<numtorch.distributed.ProcessGroup {self._name} ranks={self._ranks}>"


class _WorldMeta(type):
    @property
    def WORLD(cls):
        return _state.world


class GroupMember(metaclass=_WorldMeta):
    """PyTorch's markers: ``WORLD`` (the default group) and ``NON_GROUP_MEMBER``."""

    NON_GROUP_MEMBER = -100


class group(metaclass=_WorldMeta):
    """``group.WORLD``: the default process group (None before init_process_group)."""


class _State:
    world: ProcessGroup | None = None
    groups: list = []
    count = 0


_state = _State()


def is_initialized() -> bool:
    return _state.world is not None


def default_group() -> ProcessGroup:
    if _state.world is None:
        raise ValueError(NOT_INITIALIZED)
    return _state.world


def resolve(group) -> ProcessGroup | None:
    """The group an argument names: None is the default group; a non-member gets None."""
    if group is None:
        return default_group()
    default_group()
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    return group


def _world_from_env(name: str, given: int) -> int:
    value = os.environ.get(name)
    return given if given != -1 or value is None else int(value)


def _abort_on_uncaught(exc_type, exc, tb) -> None:
    """An uncaught exception on one rank prints its traceback and ends the whole job: the
    rank leaves without MPI_Finalize, so mpiexec ends the other ranks (MPI_Abort would cut
    the traceback off before mpiexec forwards it)."""
    import traceback

    traceback.print_exception(exc_type, exc, tb)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(1)


_MPI_LAUNCH_VARIABLES = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK")
_ENV_ERROR = (
    "Error initializing torch.distributed using env:// rendezvous: environment variable "
    "{} expected, but not set"
)


def _launched_by_mpi() -> bool:
    """Whether mpiexec (MPICH's Hydra, Open MPI, PMIx) started this process."""
    return any(name in os.environ for name in _MPI_LAUNCH_VARIABLES)


def _env_rendezvous(init_method, rank: int, world_size: int) -> None:
    """A process that no mpiexec started rendezvouses as PyTorch's ``env://`` does: the
    rank, the world size and rank 0's address must be given, else PyTorch's error."""
    if init_method not in (None, "env://"):
        return
    needed = [
        ("RANK", rank == -1),
        ("WORLD_SIZE", world_size == -1),
        ("MASTER_ADDR", True),
        ("MASTER_PORT", True),
    ]
    for name, from_env in needed:
        if from_env and name not in os.environ:
            raise ValueError(_ENV_ERROR.format(name))


class _ExitGuard:
    """``sys.exit(n)`` with n != 0 on one rank ends the whole job, as an uncaught exception
    does: the rank leaves without MPI_Finalize (which would let the other ranks wait on it
    until their timeout), so mpiexec ends them. ``sys.exit(0)`` and a normal end finalize."""

    def __init__(self) -> None:
        self.code = None
        self.exit = None

    def install(self) -> None:
        import atexit

        if self.exit is None:
            self.exit = sys.exit
            sys.exit = self.record
            # mpi4py registered its MPI_Finalize at import; handlers run last-in first-out
            atexit.register(self.leave)

    def remove(self) -> None:
        import atexit

        if self.exit is not None:
            if sys.exit is self.record:
                sys.exit = self.exit
            self.exit = None
            atexit.unregister(self.leave)

    def record(self, status=None):
        import threading

        if threading.current_thread() is threading.main_thread():  # elsewhere: ends a thread
            self.code = status
        self.exit(status)

    def leave(self) -> None:
        code = self.code
        if code is None or code == 0:
            return
        if not isinstance(code, int):  # sys.exit("message") prints it and exits with 1
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


_exit_guard = _ExitGuard()


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: timedelta | None = None,
    world_size: int = -1,
    rank: int = -1,
    store=None,
    group_name: str = "",
    pg_options=None,
    device_id=None,
) -> None:
    """Join the default process group: rank and size come from MPI (mpiexec, numtorchrun);
    ``rank``/``world_size`` or RANK/WORLD_SIZE, where given, must agree with them."""
    if _state.world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    backend = Backend.GLOO if backend is None else Backend(backend)
    if backend == Backend.NCCL:
        raise RuntimeError("Distributed package doesn't have NCCL built in")
    if backend not in (Backend.GLOO, Backend.MPI):
        raise AssertionError(f"Unknown backend type {backend}")
    if timeout is None:
        timeout = default_pg_timeout
    if not isinstance(timeout, timedelta):
        raise TypeError(
            f"Expected timeout argument to be of type datetime.timedelta, got {timeout}"
        )
    if backend != Backend.MPI and not _launched_by_mpi():
        _env_rendezvous(init_method, rank, world_size)
    MPI = _mpi.MPI()
    world = MPI.COMM_WORLD
    size, me = world.Get_size(), world.Get_rank()
    want_size = _world_from_env("WORLD_SIZE", world_size)
    want_rank = _world_from_env("RANK", rank)
    if want_size not in (-1, size) or want_rank not in (-1, me):
        raise RuntimeError(
            f"numtorch.distributed takes ranks from MPI: this process is rank {me} of {size}, "
            f"but rank {want_rank} of {want_size} was asked for; start the ranks with "
            "`numtorchrun --nproc-per-node N script.py` or `mpiexec -n N python script.py`"
        )
    comm = world.Dup()
    _state.world = ProcessGroup(comm, list(range(size)), backend, timeout, group_name or "0")
    _state.groups = [_state.world]
    _state.count = 1
    sys.excepthook = _abort_on_uncaught
    _exit_guard.install()


def destroy_process_group(group=None) -> None:
    if group is None and _state.world is None:
        raise AssertionError("Process group cannot be None")
    if group is None or group is _state.world:
        for g in _state.groups:
            g._free()
        _state.world, _state.groups, _state.count = None, [], 0
        if sys.excepthook is _abort_on_uncaught:
            sys.excepthook = sys.__excepthook__
        _exit_guard.remove()
        return
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    group._free()
    _state.groups.remove(group)


def new_group(
    ranks=None,
    timeout=None,
    backend=None,
    pg_options=None,
    use_local_synchronization: bool = False,
    group_desc=None,
    device_id=None,
    sort_ranks: bool = True,
):
    """A sub-group on an MPI sub-communicator; every rank of the world must call it. Ranks
    outside the group get ``GroupMember.NON_GROUP_MEMBER``."""
    world = default_group()
    size = world.size()
    ranks = list(range(size)) if ranks is None or len(ranks) == 0 else list(ranks)
    if len(ranks) > size:
        raise ValueError(
            "the new group's world size should be less or equal to the world size set by "
            "init_process_group"
        )
    for r in ranks:
        if r < 0 or r >= size:
            raise ValueError(
                "The new group's rank should be within the world_size set by init_process_group"
            )
    if sort_ranks:
        ranks = sorted(ranks)
    timeout = world._timeout if timeout is None else timeout
    backend = world._backend if backend is None else Backend(backend)
    MPI = _mpi.MPI()
    me = world.rank()
    # Everyone arrives (under the timeout) before the blocking split.
    poll([world._comm.Ibarrier()], timeout.total_seconds(), "new_group")
    member = me in ranks
    comm = world._comm.Split(0 if member else MPI.UNDEFINED, ranks.index(me) if member else 0)
    _state.count += 1
    if not member:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(comm, ranks, backend, timeout, str(_state.count - 1))
    _state.groups.append(pg)
    return pg


def new_subgroups_by_enumeration(
    ranks_per_subgroup_list, timeout=None, backend=None, pg_options=None, group_desc=None
):
    """One group per list of ranks; returns (the group holding this rank, all groups)."""
    me = get_rank()
    cur, groups = None, []
    for ranks in ranks_per_subgroup_list:
        g = new_group(ranks, timeout=timeout, backend=backend)
        groups.append(g)
        if me in ranks:
            cur = g
    return cur, groups


def new_subgroups(
    group_size=None, group=None, timeout=None, backend=None, pg_options=None, group_desc=None
):
    """Consecutive groups of ``group_size`` ranks."""
    size = get_world_size()
    if group_size is None:
        group_size = size
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    if size % group_size != 0:
        raise ValueError("The world size must be divisible by 'group_size'")
    lists = [list(range(s, s + group_size)) for s in range(0, size, group_size)]
    return new_subgroups_by_enumeration(lists, timeout=timeout, backend=backend)


def get_rank(group=None) -> int:
    pg = resolve(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group=None) -> int:
    pg = resolve(group)
    return -1 if pg is None else pg.size()


def get_backend(group=None) -> str:
    pg = resolve(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return Backend(pg._backend)


def get_process_group_ranks(group) -> list[int]:
    return list(resolve(group)._ranks)


def get_global_rank(group, group_rank: int) -> int:
    pg = resolve(group)
    if group_rank < 0 or group_rank >= pg.size():
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg._ranks[group_rank]


def get_group_rank(group, global_rank: int) -> int:
    pg = resolve(group)
    if global_rank not in pg._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._ranks.index(global_rank)


def get_pg_count() -> int:
    return _state.count


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError(
        "LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
        "`get_node_local_rank` to work, assuming you are not running in a multi-device "
        "context and want the code to run locally instead."
    )


def is_torchelastic_launched() -> bool:
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def warn_not_member(what: str, stacklevel: int = 3) -> None:
    warnings.warn(
        f"Running {what} on global rank {get_rank()} which does not belong to the given group.",
        stacklevel=stacklevel,
    )


def member(group, what: str, stacklevel: int = 4) -> ProcessGroup | None:
    """The process group ``group`` names; None, after PyTorch's warning, where this rank is
    not in it (the caller, a collective named ``what``, then returns without a message)."""
    pg = resolve(group)
    if pg is None:
        warn_not_member(what, stacklevel=stacklevel)
    return pg
