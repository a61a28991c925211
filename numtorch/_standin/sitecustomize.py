"""Child interpreters of ``python -m numtorch run`` (subprocesses, multiprocessing's spawn,
pytest-xdist workers) stand numtorch in for torch as their parent does.

``run`` puts this folder first on ``PYTHONPATH`` and sets ``NUMTORCH_AS_TORCH=1``; Python
imports ``sitecustomize`` at start-up. The ``sitecustomize`` this one shadows still runs.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

if os.environ.get("NUMTORCH_AS_TORCH") == "1":
    import numtorch

    numtorch.install_as_torch()

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.machinery.PathFinder.find_spec(
    "sitecustomize", [p for p in sys.path if os.path.abspath(p or ".") != _here]
)
if _spec is not None and _spec.loader is not None:
    _shadowed = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_shadowed)
