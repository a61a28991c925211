"""numtorchrun: torchrun's command line, starting the ranks through MPI's mpiexec.

``numtorchrun --nproc-per-node 2 train.py --lr 0.1`` (or ``python -m numtorch.distributed.run``)
runs ``python train.py --lr 0.1`` as ranks 0 and 1 on this machine over loopback, with
torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK,
MASTER_ADDR, MASTER_PORT). A rank that fails ends the job; the exit status is its status.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import subprocess
import sys

from ._mpi import mpiexec

_LOOPBACK = ("localhost", "127.0.0.1", "::1")
_OMP_WARNING = (
    "\n*****************************************\n"
    "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to "
    "avoid your system being overloaded, please further tune the variable for optimal "
    "performance in your application as needed. \n"
    "*****************************************"
)


def _flag(parser, name: str, **kw) -> None:
    """A torchrun flag, spelled with dashes or underscores."""
    names = [f"--{name}"]
    if "-" in name:
        names.append("--" + name.replace("-", "_"))
    parser.add_argument(*names, **kw)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="numtorchrun",
        description="Start a training script's ranks through mpiexec, with torchrun's flags.",
    )
    _flag(p, "nproc-per-node", default="1", help="ranks on this node: an int, 'cpu' or 'auto'")
    _flag(p, "nnodes", default="1", help="nodes (one node: 1 or 1:1)")
    _flag(p, "node-rank", type=int, default=0, help="this node's rank (0)")
    _flag(p, "master-addr", default="127.0.0.1", help="rank 0's address (loopback)")
    _flag(p, "master-port", type=int, default=29500, help="rank 0's port")
    _flag(p, "standalone", action="store_true", help="one node, a free local port")
    p.add_argument("-m", "--module", action="store_true", help="run the script as a module")
    _flag(p, "no-python", action="store_true", help="run the script as a program")
    p.add_argument("training_script", help="the script (or module) each rank runs")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def _nproc(value: str) -> int:
    if value in ("cpu", "auto", "gpu"):
        return os.cpu_count() or 1
    n = int(value)
    if n < 1:
        raise ValueError(f"--nproc-per-node must be positive, got {n}")
    return n


def _one_node(args) -> None:
    if args.nnodes not in ("1", "1:1") or args.node_rank != 0:
        raise SystemExit(
            "numtorchrun: this launcher runs one node over loopback (--nnodes 1 --node-rank 0); "
            f"got --nnodes {args.nnodes} --node-rank {args.node_rank}"
        )
    if args.master_addr not in _LOOPBACK and not args.master_addr.startswith("127."):
        raise SystemExit(
            f"numtorchrun: --master-addr {args.master_addr} is not a loopback address; the "
            "ranks run on this machine only"
        )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def command(argv: list[str] | None = None) -> list[str]:
    """The mpiexec command line that starts the ranks (one section per rank, each with its
    own RANK and LOCAL_RANK)."""
    args = parser().parse_args(argv)
    if args.standalone:
        args.nnodes, args.node_rank, args.master_addr = "1", 0, "127.0.0.1"
        args.master_port = _free_port()
    _one_node(args)
    n = _nproc(args.nproc_per_node)
    if args.no_python:
        program = [args.training_script]
    elif args.module:
        program = [sys.executable, "-u", "-m", args.training_script]
    else:
        program = [sys.executable, "-u", args.training_script]
    program += args.training_script_args
    common = {
        "WORLD_SIZE": n,
        "LOCAL_WORLD_SIZE": n,
        "GROUP_RANK": 0,
        "GROUP_WORLD_SIZE": 1,
        "MASTER_ADDR": args.master_addr,
        "MASTER_PORT": args.master_port,
        "TORCHELASTIC_RUN_ID": "numtorchrun",
    }
    if n > 1 and "OMP_NUM_THREADS" not in os.environ:  # (torchrun's default and warning)
        logging.getLogger(__name__).warning(_OMP_WARNING)
        common["OMP_NUM_THREADS"] = 1
    cmd = [mpiexec(), "-hosts", "localhost"]
    for name, value in common.items():
        cmd += ["-genv", name, str(value)]
    for rank in range(n):
        if rank:
            cmd.append(":")
        cmd += ["-n", "1"]
        for name in ("RANK", "LOCAL_RANK", "ROLE_RANK"):
            cmd += ["-env", name, str(rank)]
        cmd += program
    return cmd


def main(argv: list[str] | None = None) -> int:
    cmd = command(argv)
    try:
        return subprocess.call(cmd)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
