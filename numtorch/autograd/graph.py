"""torch.autograd.graph: the public face of the eager tape.

The tape itself lives in its own modules: nodes and edges in ``node``, saved values and
their hooks in ``saved`` (by PyTorch's names in ``saved_names``), recording in ``record``,
node classes in ``node_classes``, the running graph task in ``task``. This module gives
PyTorch's names, and the few internals that compiled autograd reads by this module.
"""

from __future__ import annotations

from .._core.state import graph_tasks as _running  # noqa: F401 - read by numtorch._dynamo
from .._core.tensor import _new as _new
from .node import _ACCUMULATE_SEQ as _ACCUMULATE_SEQ
from .node import AccumulateGrad as AccumulateGrad
from .node import CopySlices as CopySlices
from .node import GradientEdge, Node, get_gradient_edge
from .node import RemovableHandle as RemovableHandle
from .node import _seq as _seq
from .node import edge_of as edge_of
from .saved import FREED as FREED
from .saved import Saved as Saved
from .saved import SavedTensor as SavedTensor
from .saved import SavedValues as SavedValues
from .saved import _SavedList as _SavedList
from .saved import _SavedTuple as _SavedTuple
from .saved import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks
from .task import _task_ids as _task_ids
from .task import register_multi_grad_hook
from .task import set_multithreading_enabled as set_multithreading_enabled

# PyTorch's names (the others above are internals that numtorch._dynamo reads here)
__all__ = [
    "GradientEdge",
    "Node",
    "disable_saved_tensors_hooks",
    "get_gradient_edge",
    "register_multi_grad_hook",
    "save_on_cpu",
    "saved_tensors_hooks",
]
