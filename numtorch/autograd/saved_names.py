"""What a node saved, by PyTorch's names: ``grad_fn._saved_<name>`` and
``grad_fn._raw_saved_<name>`` (the result, inputs, attributes, ``<input>_sym_sizes``)."""

from __future__ import annotations

from .._core import dtype as dt
from ..ops.creation import tensor
from .saved import FREED, Saved, _SavedList

_SAVED_NAMES: dict = {}
# PyTorch's names for inputs where the rule (``input``, ``x`` and ``a`` are PyTorch's
# ``self``, ``b`` its ``other``, other names the same) does not give them:
# {op name: {numtorch name (an input or attribute): PyTorch name}}.
SAVED_NAME_EXCEPTIONS: dict = {
    "matmul": {"other": "mat2"},  # as mm, matmul's common case
    "dot": {"other": "tensor"},
    "getitem": {"shape": "self_sym_sizes"},
}
_INPUT_NAMES = {"input": "self", "x": "self", "a": "self", "b": "other"}


def _torch_input_name(op, name: str) -> str:
    special = SAVED_NAME_EXCEPTIONS.get(op.name)
    if special and name in special:
        return special[name]
    return _INPUT_NAMES.get(name, name)


def _saved_names(op) -> dict:
    """{PyTorch's saved name: numtorch's key} for what op's nodes save: the result, inputs,
    the attributes its formulas name, and ``<input>_sym_sizes`` for every input whose shape
    or value is saved (derivable from the input's metadata)."""
    table = _SAVED_NAMES.get(op)
    if table is None:
        table = {}
        attr_names = {a[0] for a in op.attrs}
        for args in op.vjp_args:
            for n in args:
                if n == "g":
                    continue
                if n == "result":
                    table["result"] = n
                elif n in attr_names:
                    table[SAVED_NAME_EXCEPTIONS.get(op.name, {}).get(n, n)] = n
                elif n in op.inputs:
                    t = _torch_input_name(op, n)
                    table[t] = n
                    table.setdefault(t + "_sym_sizes", n + "_shape")
                elif n.endswith("_shape"):
                    table[_torch_input_name(op, n[:-6]) + "_sym_sizes"] = n
        if "result" in table and type(op.nout) is int and op.nout > 1:
            del table["result"]  # each output by PyTorch's name: "result:<k>"
            for k in range(op.nout):
                name = op.out_names[k] if op.out_names else f"result{k}"
                table[name] = f"result:{k}"
        _SAVED_NAMES[op] = table
    return table


def base_key(key: str) -> str:
    """The saved dict's key of a name's key ("result" for one output's "result:1")."""
    return key.partition(":")[0]


def _tensor_keys(node) -> set:
    saved = node.saved
    if not saved:
        return set()
    return {k for k, v in saved.items() if isinstance(v, Saved) and not isinstance(v, _SavedList)}


def _saved_value(node, torch_name: str):
    op = getattr(node, "_op", None)
    key = None if op is None else _saved_names(op).get(torch_name)
    if key is None:
        raise AttributeError(
            f"'{type(node).__name__}' object has no attribute '_saved_{torch_name}'"
        )
    if key.endswith("_shape") and key not in op.inputs:  # sizes outlive the saved tensors
        m = node.in_meta[op.inputs.index(key[:-6])]
        if isinstance(m, list):
            return [None if x is None else tuple(x[0]) for x in m]
        return None if m is None else tuple(m[0])
    if key in node.attrs or key in {a[0] for a in op.attrs}:
        return _attribute(op, key, node.attrs.get(key, {a[0]: a[1] for a in op.attrs}.get(key)))
    saved = node.saved
    if saved is None:
        raise RuntimeError(FREED)
    key, _, k = key.partition(":")
    if key not in saved:  # an input that needed no gradient was not saved
        return None
    v = saved[key]
    if k:  # one of the outputs
        return v.unpack(node)[int(k)] if isinstance(v, Saved) else v[int(k)]
    if isinstance(v, Saved):
        v = v.unpack(node)
        return tuple(v) if type(v) is list else v  # (a Tensor[]: a _SavedList's tensors)
    if type(v) in _WRAPPED and op.number_edges:  # a number PyTorch wraps as a 0-d tensor
        return _wrapped(v)
    return tuple(v) if type(v) is list else v


_UINT64 = 1 << 64
_WRAPPED = {bool: "bool", int: "int64", float: "float64", complex: "complex128"}


def _wrapped(v):
    """A Python number as PyTorch's wrapped 0-d tensor (int64, float64, ...)."""
    return tensor(v, dtype=getattr(dt, _WRAPPED[type(v)]))


def _attribute(op, key: str, v):
    """A saved attribute as PyTorch's binding shows it: int[] and SymInt[] as tuples,
    ``dim`` as a tuple where aten's is an int[], and an int64 or SymInt (alone or in a
    list) as an unsigned 64-bit number, so -1 is 2**64 - 1; a Scalar (a checked scalar, or an
    attribute whose default is a float: hardtanh's ``min_val``) keeps its value."""
    if key in op.checked_scalars or "-" + key in op.checked_scalars:
        return v
    if any(name == key and type(default) is float for name, default, _ in op.attrs):
        return v
    if type(v) is int and key == "dim" and op.aten_dim_list:
        v = (v,)
    return _int64(v)


def _int64(v):
    if type(v) is int:
        return v + _UINT64 if v < 0 else v
    if type(v) in (tuple, list):
        return tuple(_int64(x) for x in v)
    return v
