"""The MPI transport: mpi4py loaded on first use, and the mpiexec that came with it.

numtorch imports without mpi4py; ``numtorch.distributed`` reports itself unavailable then,
and only init_process_group and the launcher need it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import sysconfig

_MPI = None


def available() -> bool:
    return importlib.util.find_spec("mpi4py") is not None


def MPI():
    """mpi4py's MPI module (initializes MPI on first call)."""
    global _MPI
    if _MPI is None:
        if not available():
            raise RuntimeError(
                "numtorch.distributed needs mpi4py and an MPI library: "
                'pip install "numtorch[distributed]"'
            )
        import mpi4py

        mpi4py.rc.thread_level = "multiple"
        from mpi4py import MPI as mpi

        _MPI = mpi
    return _MPI


def mpiexec() -> str:
    """The mpiexec next to this interpreter (the mpich wheel installs it into the scripts
    directory of the environment that holds mpi4py), else the one on PATH."""
    dirs = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    for d in dirs:
        path = os.path.join(d, "mpiexec")
        if os.access(path, os.X_OK):
            return path
    found = shutil.which("mpiexec")
    if found is None:
        raise RuntimeError(
            "mpiexec was not found next to the Python interpreter nor on PATH: "
            'pip install "numtorch[distributed]" installs MPICH with it'
        )
    return found
