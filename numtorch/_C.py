"""torch._C: the engine's private entry points that PyTorch code calls by these names."""

from __future__ import annotations

from .autograd.task import _set_multithreading_enabled
from .autograd.task import current_autograd_node as _current_autograd_node
from .autograd.task import (
    current_graph_task_execution_order as _current_graph_task_execution_order,
)
from .autograd.task import current_graph_task_id as _current_graph_task_id
from .autograd.task import is_multithreading_enabled as _is_multithreading_enabled
from .autograd.task import will_engine_execute_node as _will_engine_execute_node

__all__ = [
    "_current_autograd_node",
    "_current_graph_task_execution_order",
    "_current_graph_task_id",
    "_is_multithreading_enabled",
    "_set_multithreading_enabled",
    "_will_engine_execute_node",
]
