"""Node classes by PyTorch's node names (``MulBackward0``): one Node subclass per name,
and for an op whose name depends on the call, a class that finds its name on first use."""

from __future__ import annotations

from .._core.op import default_node_name
from .node import Node

_CLASSES: dict = {}


def node_class(name: str) -> type:
    """The Node subclass for PyTorch's node name ``name`` (one per name, made once); a
    ``torch::autograd::X`` name gives a class named ``X``."""
    cls = _CLASSES.get(name)
    if cls is None:
        cls = type(name.rsplit("::", 1)[-1], (Node,), {"__slots__": (), "_name": name})
        cls.__module__ = "torch.autograd.graph"
        _CLASSES[name] = cls
    return cls


def _node_cls(op) -> type:
    """The class op's nodes are made of, cached on the op: its named class, or for a name
    that depends on the call, a class that finds its name (and final class) on first use."""
    if callable(op.node_name):
        default = default_node_name(op.name)
        cls = type(default, (Node,), {"__slots__": (), "_lazy": True, "name": _resolve_name})
        cls.__module__ = "torch.autograd.graph"
    else:
        cls = node_class(op.node_name or default_node_name(op.name))
    op.node_cls = cls
    return cls


def _resolve_name(self: Node) -> str:
    """A call-dependent name: op.node_name applied to the call (see ``_name_env``); the node
    then becomes an instance of that name's class."""
    fn = self._op.node_name
    name = fn(**_name_env(self, fn))
    self.__class__ = node_class(name)
    return name


def _name_params(fn) -> tuple:
    import inspect

    params = fn.__dict__.get("_params")
    if params is None:
        params = fn._params = tuple(inspect.signature(fn).parameters)
    return params


def _name_env(node: Node, fn) -> dict:
    """The values a node_name function names: attributes by name, inputs by name (a
    tensor input as its shape, a list input as a list of shapes, a number as None),
    ``<input>_contiguous``: whether it was C-contiguous, and ``inplace``: whether the node
    is an in-place write's (False, True, or the method's name, ``zero_``: Node._inplace)."""
    params = _name_params(fn)
    op = node._op
    defaults = {n: d for n, d, _ in op.attrs}
    env = {}
    for n in params:
        if n == "inplace":
            env[n] = node._inplace
        elif n.endswith("_contiguous") and n[:-11] in op.inputs:
            m = node.in_meta[op.inputs.index(n[:-11])]
            env[n] = m is None or len(m) < 3 or m[2]
        elif n in op.inputs:
            m = node.in_meta[op.inputs.index(n)]
            if isinstance(m, list):
                env[n] = [None if x is None else tuple(x[0]) for x in m]
            else:
                env[n] = None if m is None else tuple(m[0])
        else:
            env[n] = node.attrs.get(n, defaults.get(n))
    return env
