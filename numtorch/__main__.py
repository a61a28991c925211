"""``python -m numtorch run script.py [args]`` and ``python -m numtorch run -m module [args]``:
run a PyTorch program unmodified, with numtorch installed as ``torch``."""

from __future__ import annotations

import os
import runpy
import sys

from ._install import install_as_torch

USAGE = "usage: python -m numtorch run (script.py | -m module) [args ...]"


def _children_stand_in_too() -> None:
    """Python processes this program starts import numtorch as torch as well
    (``_standin/sitecustomize.py``)."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_standin")
    path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = here + (os.pathsep + path if path else "")
    os.environ["NUMTORCH_AS_TORCH"] = "1"


def main(argv: list[str] | None = None) -> int:
    """Runs the program ``argv`` names as Python would (``sys.argv``, ``sys.path[0]``,
    ``__main__``), with ``import torch`` giving numtorch; returns the exit status for a
    command-line error (the program's own exit status leaves as its SystemExit)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] != ["run"] or len(argv) < 2 or argv[1:] == ["-m"]:
        print(USAGE, file=sys.stderr)
        return 2
    install_as_torch()
    _children_stand_in_too()
    if argv[1] == "-m":
        module, args = argv[2], argv[3:]
        sys.argv = [module, *args]  # runpy puts the module's file in argv[0], as -m does
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        script, args = argv[1], argv[2:]
        sys.argv = [script, *args]
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        # Python gives __main__ an absolute __file__ (warnings and tracebacks show it)
        runpy.run_path(os.path.abspath(script), run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
