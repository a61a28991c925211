"""PyTorch's Python argument parser, as a judge of calls: which of a function's signatures a
call matches, and the TypeError PyTorch raises for a call that matches none, word for word.

The signatures are PyTorch's own (``torch_signatures.json``, written by
``scripts/gen_torch_signatures.py``), keyed by public name: ``torch.clamp``,
``Tensor.clamp_``, ``linalg.solve_triangular``. A public function checks its arguments
cheaply itself and asks ``refuse`` only where that check fails, so the parser costs nothing
on a good call:

    refuse("torch.zeros", args, kwargs)     raises PyTorch's TypeError, or returns the index
                                            of the signature the call matches

``args`` and ``kwargs`` are the call as the user wrote it (a method's without ``self``).
"""

from __future__ import annotations

import functools
import json
import operator
import pathlib
import re
from dataclasses import dataclass

import numpy as np

from . import dtype as dt
from .device import device as _Device
from .dtype import dtype as _Dtype
from .symbolic import SymInt
from .tensor import Size, Tensor, _type_name

_TABLE = pathlib.Path(__file__).with_name("torch_signatures.json")

# parameter kinds: the schema's type (less ``?`` and ``[N]``) -> (kind, PyTorch's name for it)
_KINDS = {
    "Tensor": ("tensor", "Tensor"),
    "Scalar": ("scalar", "Number"),
    "int64_t": ("int", "int"),
    "DeviceIndex": ("int", "int"),
    "SymInt": ("symint", "int"),
    "double": ("float", "float"),
    "c10::complex<double>": ("complex", "complex"),
    "bool": ("bool", "bool"),
    "TensorList": ("tensors", "tuple of Tensors"),
    "c10::List<::std::optional<Tensor>>": ("tensors", "tuple of Tensors"),
    "IntArrayRef": ("ints", "tuple of ints"),
    "SymIntArrayRef": ("symints", "tuple of ints"),
    "ArrayRef<double>": ("floats", "tuple of floats"),
    "ScalarList": ("scalars", "tuple of Scalars"),
    "ScalarType": ("dtype", "torch.dtype"),
    "Layout": ("layout", "torch.layout"),
    "Device": ("device", "torch.device"),
    "MemoryFormat": ("memory_format", "torch.memory_format"),
    "Generator": ("generator", "torch.Generator"),
    "c10::string_view": ("str", "str"),
    "PyObject*": ("object", "object"),
    "Dimname": ("dimname", "name"),
    "DimnameList": ("dimnames", "tuple of names"),
    "Stream": ("object", "Stream"),
}

_POSITION = re.compile(r" \(position \d+\)")

# PyTorch's parser takes NumPy's names for four of its parameters
_NUMPY_NAMES = {
    "dim": ("axis",),
    "keepdim": ("keepdims",),
    "input": ("x", "a", "x1"),
    "other": ("x2",),
}

# the C type names (``tp_name``) PyTorch's messages give numtorch's classes
_TORCH_TYPE_NAMES = {
    "dtype": "torch.dtype",
    "Size": "torch.Size",
    "device": "torch.device",
    "layout": "torch.layout",
    "memory_format": "torch.memory_format",
    "Generator": "torch._C.Generator",
    "CudaGenerator": "torch._C.Generator",  # (one class in PyTorch)
}


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    kind: str
    type_name: str
    size: int  # IntArrayRef[2]: a single int stands for the list
    allow_none: bool
    optional: bool  # has a default
    default: str
    keyword_only: bool


@dataclass(frozen=True, slots=True)
class Signature:
    name: str
    params: tuple[Param, ...]
    hidden: bool
    min_args: int
    max_pos_args: int

    def __str__(self) -> str:
        """As PyTorch's messages list it: ``(Tensor input, *, int dim = -1)``."""
        parts, star = [], False
        for p in self.params:
            if p.keyword_only and not star:
                parts.append("*")
                star = True
            parts.append(f"{p.type_name} {p.name}" + (f" = {p.default}" if p.optional else ""))
        return f"({', '.join(parts)})"


def _param(text: str, keyword_only: bool) -> Param:
    typ, _, rest = text.rpartition(" ")
    name, eq, default = rest.partition("=")
    allow_none = typ.endswith("?")
    typ = typ.rstrip("?")
    size = 0
    if typ.endswith("]"):
        typ, _, n = typ[:-1].partition("[")
        size = int(n)
    kind, type_name = _KINDS[typ]
    return Param(
        name,
        kind,
        type_name,
        size,
        allow_none or default == "None",
        bool(eq),
        default,
        keyword_only,
    )


def _signature(text: str) -> Signature:
    body, _, mark = text.partition("|")
    name, _, inner = body.partition("(")
    params, kw = [], False
    for part in inner[:-1].split(", ") if inner[:-1] else ():
        if part == "*":
            kw = True
        else:
            params.append(_param(part, kw))
    return Signature(
        name,
        tuple(params),
        bool(mark),  # deprecated or hidden
        sum(not p.optional for p in params),
        sum(not p.keyword_only for p in params),
    )


@functools.cache
def _table() -> dict[str, list[str]]:
    return json.loads(_TABLE.read_text())


@functools.cache
def signatures(key: str) -> tuple[Signature, ...]:
    """PyTorch's parser for the public function ``key``, its signatures in its order."""
    return tuple(_signature(s) for s in _table()[key])


def has(key: str) -> bool:
    return key in _table()


# ------------------------------------------------------------------ what a parameter takes
def type_name(obj) -> str:
    """The name PyTorch's messages give obj's type (its C ``tp_name``)."""
    t = type(obj)
    if isinstance(obj, Tensor):
        return t.__name__ if t.__module__.startswith(("numtorch.nn", "__main__")) else "Tensor"
    if t.__module__.startswith("numtorch") or t.__module__ == "torch":
        return _TORCH_TYPE_NAMES.get(t.__name__, t.__name__)
    return _type_name(obj)


def _is_long(o) -> bool:
    return (isinstance(o, int) and not isinstance(o, bool)) or isinstance(o, np.integer)


def _is_index(o) -> bool:
    if isinstance(o, (bool, np.bool_)):
        return False
    if _is_long(o):
        return True
    try:
        operator.index(o)
    except TypeError:
        return False
    return True


def _is_int_or_symint(o) -> bool:
    if isinstance(o, Tensor):
        return o.numel() == 1 and (not o.dtype.is_floating_point and not o.dtype.is_complex)
    return _is_index(o)


def _is_double(o) -> bool:
    if isinstance(o, (float, int, np.number, np.bool_)):
        return True
    return isinstance(o, Tensor) and not o.requires_grad and o.dim() == 0


def _is_scalar(o) -> bool:
    return isinstance(o, complex) or _is_double(o)


def _is_int(o) -> bool:
    if _is_long(o):
        return True
    if isinstance(o, Tensor):
        d = o.dtype
        return (
            not (d.is_floating_point or d.is_complex or d.name == "bool")
            and not o.requires_grad
            and o.dim() == 0
        )
    return False


def _first_of(o, ok) -> tuple[bool, int]:
    """(a tuple or list whose first item is ``ok``, the index of the failing item or -1)."""
    if len(o) == 0 or ok(o[0]):
        return True, -1
    return False, 0


def check(p: Param, o, argnum: int) -> tuple[bool, int]:
    """(whether ``o`` is an argument ``p`` takes, the index of a failing list item or -1),
    as PyTorch's ``FunctionParameter::check``."""
    k = p.kind
    seq = isinstance(o, (tuple, list))
    if k == "tensor":
        return isinstance(o, Tensor), -1
    if k in ("scalar", "complex"):
        return _is_scalar(o), -1
    if k == "float":
        return _is_double(o), -1
    if k == "int":
        return _is_int(o), -1
    if k == "symint":
        return _is_int_or_symint(o), -1
    if k == "bool":
        return isinstance(o, bool), -1
    if k == "ints":
        if seq:
            return _first_of(o, _is_index)
        return p.size > 0 and _is_int_or_symint(o), -1
    if k == "symints":
        if seq:
            return _first_of(o, _is_int_or_symint)
        return p.size > 0 and _is_int_or_symint(o), -1
    if k == "floats":
        if seq:
            return _first_of(o, _is_scalar)
        return p.size > 0 and _is_double(o), -1
    if k == "tensors":
        if not seq:
            return False, -1
        for i, t in enumerate(o):
            if not isinstance(t, Tensor) and t is not None:
                raise TypeError(
                    f"expected Tensor as element {i} in argument {argnum}, but got {type_name(t)}"
                )
        return True, -1
    if k == "scalars":
        return seq and all(_is_scalar(v) for v in o), -1
    if k == "dtype":
        return isinstance(o, _Dtype) or any(o is t for t in (float, int, bool, complex)), -1
    if k == "device":
        return _is_long(o) or isinstance(o, str) or type_name(o) == "torch.device", -1
    if k in ("layout", "memory_format"):
        return type_name(o) == f"torch.{k}", -1
    if k == "generator":
        return type_name(o) == "torch._C.Generator", -1
    if k == "str":
        return isinstance(o, str), -1
    if k == "dimname":
        return o is None or isinstance(o, str), -1
    if k == "dimnames":
        return seq and all(v is None or isinstance(v, str) for v in o), -1
    return True, -1  # object


# ------------------------------------------------------------------ one signature
def _lookup(p: Param, kwargs: dict):
    if p.name in kwargs:
        return kwargs[p.name]
    for alias in _NUMPY_NAMES.get(p.name, ()):
        if alias in kwargs:
            return kwargs[alias]
    return _MISSING


_MISSING = object()


# the functions whose parser takes a Python number for a Tensor parameter (PyTorch's
# ``should_allow_numbers_as_tensors``), by the name its signatures give
_NUMBERS_AS_TENSORS = frozenset(
    f"{base}{tail}"
    for base in ("add", "div", "divide", "mul", "multiply", "sub", "subtract", "true_divide")
    + ("floor_divide",)
    for tail in ("", "_", "_out")
) | {"to", "_to_copy", "copy_", "_conj"}


def parse(sig: Signature, args: tuple, kwargs: dict, raise_: bool) -> bool:
    """Whether the call matches ``sig``; with ``raise_``, PyTorch's TypeError where not."""
    nargs = len(args)
    numbers = sig.name in _NUMBERS_AS_TENSORS
    params = sig.params
    # a lone int-list parameter takes its ints as separate arguments (``view(2, 3)``), when
    # the first is an int
    varargs = (
        sig.max_pos_args == 1
        and params[0].kind in ("ints", "symints")
        and nargs > 0
        and _is_int_or_symint(args[0])
    )
    if nargs > sig.max_pos_args and not varargs:
        if raise_:
            _extra_args(sig, nargs)
        return False
    remaining = len(kwargs)
    pos = 0
    for i, p in enumerate(params):
        is_kwd = False
        if pos < nargs:
            if p.keyword_only:
                if raise_:
                    _extra_args(sig, nargs)
                return False
            o = args[pos]
        else:
            o = _lookup(p, kwargs)
            is_kwd = True
        eligible = varargs and pos == 0 and not is_kwd
        if (o is _MISSING and p.optional) or (o is None and p.allow_none):
            pass
        elif o is _MISSING:
            if raise_:
                _missing_args(sig, i)
            return False
        else:
            ok, failed = check(p, o, i)
            if not ok and numbers and p.kind == "tensor":
                ok = isinstance(o, (int, float, complex))
            if not ok and eligible:
                pos = nargs
                continue
            if not ok:
                if raise_:
                    _wrong_type(sig, p, o, pos, is_kwd, failed, args)
                return False
        if not is_kwd:
            pos += 1
        elif o is not _MISSING:
            remaining -= 1
    if remaining > 0:
        if raise_:
            _extra_kwargs(sig, kwargs, nargs)
        return False
    return True


def _extra_args(sig: Signature, nargs: int):
    lo, hi = sig.min_args, sig.max_pos_args
    if lo != hi:
        raise TypeError(
            f"{sig.name}() takes from {lo} to {hi} positional arguments but {nargs} were given"
        )
    raise TypeError(
        f"{sig.name}() takes {hi} positional argument{'' if hi == 1 else 's'} but {nargs} "
        f"{'was' if nargs == 1 else 'were'} given"
    )


def _missing_args(sig: Signature, idx: int):
    names = [f'"{p.name}"' for p in sig.params[idx:] if not p.optional]
    # (PyTorch's own plural: "1 required positional arguments")
    raise TypeError(
        f"{sig.name}() missing {len(names)} required positional argument"
        f"{'s' if len(names) == 1 else ''}: {', '.join(names)}"
    )


def _wrong_type(sig: Signature, p: Param, o, pos: int, is_kwd: bool, failed: int, args):
    what = f"{sig.name}(): argument '{p.name}'"
    if is_kwd:
        raise TypeError(f"{what} must be {p.type_name}, not {type_name(o)}")
    if failed != -1:
        seq = o if isinstance(o, (tuple, list)) else args
        raise TypeError(
            f"{what} (position {pos + 1}) must be {p.type_name}, but found element of type "
            f"{type_name(seq[failed])} at pos {failed}"
        )
    raise TypeError(f"{what} (position {pos + 1}) must be {p.type_name}, not {type_name(o)}")


def _extra_kwargs(sig: Signature, kwargs: dict, nargs: int):
    names = [p.name for p in sig.params]
    for key in kwargs:
        if key not in names:
            raise TypeError(f"{sig.name}() got an unexpected keyword argument '{key}'")
        if names.index(key) < nargs:
            raise TypeError(f"{sig.name}() got multiple values for argument '{key}'")
    raise TypeError("invalid keyword arguments")


# ------------------------------------------------------------------ the parser
def refuse(key: str, args: tuple, kwargs: dict) -> int:
    """The index of the signature of ``key`` the call matches, or PyTorch's TypeError: a
    function of one signature, or a call only one signature could take by its number of
    arguments, gets that signature's own error; others, the list of signatures."""
    sigs = signatures(key)
    if len(sigs) == 1 and not sigs[0].params and key.startswith("Tensor."):
        name = f"TensorBase.{key[7:]}()"  # (a method of no arguments: Python's own texts)
        if kwargs:
            raise TypeError(f"{name} takes no keyword arguments")
        if args:
            raise TypeError(f"{name} takes no arguments ({len(args)} given)")
    if len(sigs) == 1:
        parse(sigs[0], args, kwargs, True)
        return 0
    for i, sig in enumerate(sigs):
        if parse(sig, args, kwargs, False):
            return i
    n = len(args) + len(kwargs)
    plausible = [s for s in sigs if s.min_args <= n <= len(s.params) and not s.hidden]
    if len(plausible) == 1:
        parse(plausible[0], args, kwargs, True)
    raise TypeError(invalid_combination(sigs[0].name, args, kwargs, sigs))


def judge(key: str, args: tuple, kwargs: dict) -> int:
    """``refuse``, then the unpacking of the matched signature's int lists (its error for
    an item after the first that is not an int). The index of the signature."""
    i = refuse(key, args, kwargs)
    sig = signatures(key)[i]
    pos = 0
    for p in sig.params:
        if not p.keyword_only and pos < len(args):
            v = args[pos]
            pos += 1
        else:
            v = _lookup(p, kwargs)
        if p.kind in ("ints", "symints") and _is_seq(v):
            unpack_ints(sig.name, p.name, v)
    return i


def as_number(t: Tensor):
    """The value of a tensor given for a Number: PyTorch's parser takes one of no dims that
    does not require grad (a TypeError here otherwise, which the parser words)."""
    if t.requires_grad or t.dim() != 0:
        raise TypeError(f"expected a Number, not a Tensor of {t.dim()} dims")
    return t.item()


def unpack_ints(public: str, name: str, values) -> tuple[int, ...]:
    """An int list as PyTorch unpacks it once a signature has matched: Python ints, or its
    error for an item (after the first, which the parser checked) that is not an int."""
    out = []
    for i, v in enumerate(values):
        if not _is_int_or_symint(v) and not isinstance(v, bool):
            raise TypeError(
                f"{public}(): argument '{name}' failed to unpack the object at pos {i + 1} "
                f'with error "type must be tuple of ints,but got {type_name(v)}"'
            )
        out.append(_as_int(v))
    return tuple(out)


def _as_int(v):
    """An int argument as the op takes it: a Python int, or a symbolic size as it is (its
    value taken would put a constant, and a guard, into the program traced)."""
    if type(v) is SymInt:
        return v
    return int(v) if isinstance(v, Tensor) else operator.index(v)


def checked_sizes(key: str, args: tuple, kwargs: dict | None = None) -> tuple[int, ...]:
    """The int list of a call of ``key`` (``view(2, 3)``, ``view((2, 3))``,
    ``zeros(size=(2, 3))``) as Python ints, where a quick look found something other than
    ints: PyTorch's TypeError where its parser or its unpacking refuses the call."""
    kwargs = kwargs or {}
    sig = signatures(key)[refuse(key, args, kwargs)]
    j, p = next((j, p) for j, p in enumerate(sig.params) if p.kind in ("ints", "symints"))
    if p.name in kwargs:
        v = kwargs[p.name]
    elif j == 0 and sig.max_pos_args == 1 and (len(args) > 1 or not _is_seq(args[0])):
        v = args if len(args) > 1 or not p.size else args[0]
    else:
        v = args[j]
    if not _is_seq(v):
        v = (v,) * max(p.size, 1)
    return unpack_ints(sig.name, p.name, v)


def _is_seq(v) -> bool:
    return isinstance(v, (tuple, list))


# ------------------------------------------------------------------ the list of signatures
def invalid_combination(name: str, args: tuple, kwargs: dict, sigs) -> str:
    """PyTorch's "received an invalid combination of arguments" text, with its quirks: its
    keywords in the order of a C++ ``unordered_map<string>``, each signature re-read by
    splitting on spaces (so a parameter with a default never matches), and a signature's
    reasons given only where it has as many parameters as the call has arguments."""
    kw = _unordered(kwargs)
    options = [str(s) for s in sigs if not s.hidden]
    msg = f"{name}() received an invalid combination of arguments - "
    if len(options) == 1:
        tokens = _tokens(options[0])
        unmatched = _unmatched_kwargs(tokens, kw) if kw else []
        if unmatched:
            return msg + "got unrecognized keyword arguments: " + ", ".join(unmatched)
        got = _formatted(tokens, args, kw) if _count_match(tokens, args, kw) else _desc(args, kw)
        return msg + f"got {got}, but expected {options[0]}"
    msg += f"got {_desc(args, kw)}, but expected one of:\n"
    for opt in options:
        msg += f" * {opt}\n"
        tokens = _tokens(opt)
        if _count_match(tokens, args, kw):
            unmatched = _unmatched_kwargs(tokens, kw) if kw else []
            if unmatched:
                msg += "      didn't match because some of the keywords were incorrect: "
                msg += ", ".join(unmatched) + "\n"
            else:
                msg += "      didn't match because some of the arguments have invalid types: "
                msg += _formatted(tokens, args, kw) + "\n"
    return msg


def _tokens(option: str) -> list[tuple[str, str]]:
    """(type, name) per comma-separated part of a listed signature, split at its last
    space (``Tensor min = None`` is of type ``Tensor min =``, named ``None``)."""
    out = []
    for part in option[1:-1].split(", "):
        typ, _, name = part.rpartition(" ")
        out.append((typ if typ else part, name))
    return out


def _matches(typ: str, obj) -> bool:
    t = type_name(obj).rpartition(".")[2]
    if typ == "float":
        return type_name(obj) in ("float", "int", "long")
    if typ == "int":
        return type_name(obj) in ("int", "long")
    return t == typ


def _count_match(tokens, args, kw) -> bool:
    return len(tokens) == len(args) + len(kw)


def _unmatched_kwargs(tokens, kw: list) -> list[str]:
    start = max(len(tokens) - len(kw), 0)
    names = {name for _, name in tokens[start:]}
    return [k for k, _ in kw if k not in names]


def _desc(args, kw) -> str:
    out = "(" + "".join(f"{type_name(a)}, " for a in args)
    out += "".join(f"{k}={type_name(v)}, " for k, v in kw)
    if args:
        out = out[:-2]
    return out + ")"


def _formatted(tokens, args, kw) -> str:
    by_name = dict(kw)
    out = "("
    for i in range(len(args) + len(kw)):
        is_kw = i >= len(args)
        name = tokens[i][1]
        obj = by_name.get(name) if is_kw else args[i]
        ok = _matches(tokens[i][0], obj)
        text = f"{name}=" if is_kw else ""
        if isinstance(obj, (tuple, list)) and not isinstance(obj, Size):
            items = ", ".join(type_name(v) for v in obj)
            if isinstance(obj, tuple):
                text += f"{type_name(obj)} of ({items}{',' if len(obj) == 1 else ''})"
            else:
                text += f"{type_name(obj)} of [{items}]"
        else:
            text += type_name(obj)
        out += (text if ok else f"!{text}!") + ", "
    if args:
        out = out[:-2]
    return out + ")"


# libstdc++'s std::hash<std::string> (_Hash_bytes, 64-bit) and its hash table's node order,
# which is the order PyTorch's message lists keywords in
_MUL = (0xC6A4A793 << 32) + 0x5BD1E995
_M64 = (1 << 64) - 1


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def _hash_bytes(data: bytes, seed: int = 0xC70F6907) -> int:
    n = len(data)
    h = (seed ^ (n * _MUL)) & _M64
    aligned = n & ~7
    for i in range(0, aligned, 8):
        d = (_shift_mix((int.from_bytes(data[i : i + 8], "little") * _MUL) & _M64) * _MUL) & _M64
        h = ((h ^ d) * _MUL) & _M64
    if n & 7:
        h = ((h ^ int.from_bytes(data[aligned:], "little")) * _MUL) & _M64
    h = (_shift_mix(h) * _MUL) & _M64
    return _shift_mix(h)


def _unordered(kwargs: dict) -> list[tuple[str, object]]:
    """kwargs's items in the iteration order of an ``unordered_map`` they were inserted
    into in order (13 buckets: a new key goes first in its bucket, a new bucket first)."""
    nodes: list[tuple[str, object, int]] = []
    for k, v in kwargs.items():
        b = _hash_bytes(k.encode()) % 13
        at = next((i for i, n in enumerate(nodes) if n[2] == b), 0)
        nodes.insert(at, (k, v, b))
    return [(k, v) for k, v, _ in nodes]


# ------------------------------------------------------------------ guards
# A quick yes, as a Python expression of ``{v}``, for the arguments a parameter of a kind
# surely takes; a no sends the call to the parser, which decides.
_QUICK = {
    "dtype": "({v}.__class__ is _Dt or {v} is float or {v} is int or {v} is bool or {v} is complex)",
    "int": "{v}.__class__ is int",
    "symint": "{v}.__class__ is int",
    "bool": "{v}.__class__ is bool",
    "ints": "({v}.__class__ is int or _int_seq({v}))",
    "symints": "({v}.__class__ is int or _int_seq({v}))",
    "tensor": "isinstance({v}, _T)",
    "scalar": "{v}.__class__ in _NUMBERS",
    "float": "{v}.__class__ in _NUMBERS",
    "device": "({v}.__class__ is _Dev or {v}.__class__ is str or {v}.__class__ is int)",
}
_CHECKED = frozenset(("dtype", "int", "symint", "bool", "ints", "symints"))


def _union(items) -> dict:
    """{key: (kinds, allow_none)}: the kinds the signatures give a position or a name, where
    each has a quick check and one of them is a kind worth checking."""
    out: dict = {}
    for key, kind, none in items:
        kinds, any_none = out.get(key, (frozenset(), False))
        out[key] = (kinds | {kind}, any_none or none)
    return {k: v for k, v in out.items() if v[0] <= _QUICK.keys() and v[0] & _CHECKED}


def _quick(kinds, allow_none: bool, v: str) -> str:
    test = " or ".join(_QUICK[k].format(v=v) for k in sorted(kinds, key=list(_QUICK).index))
    return f"({v} is None or {test})" if allow_none else f"({test})"


def compile_check(key: str):
    """A function of (args, kwargs): False where an argument fails the quick checks of the
    kinds PyTorch's signatures of ``key`` give its position (or its name)."""
    if not has(key):
        return lambda args, kwargs: True
    sigs = [s for s in signatures(key) if not s.hidden]
    pos = _union(
        (i, p.kind, p.allow_none)
        for s in sigs
        for i, p in enumerate(q for q in s.params if not q.keyword_only)
    )
    names = _union((p.name, p.kind, p.allow_none) for s in sigs for p in s.params)
    lines = ["def check(args, kwargs):", "    n = len(args)"]
    for i, (kinds, none) in sorted(pos.items()):
        lines.append(f"    if n > {i} and not {_quick(kinds, none, f'args[{i}]')}: return False")
    for name, most in _narrowing(sigs).items():
        lines.append(f"    if n > {most} and {name!r} in kwargs: return False")
    if not any(s.max_pos_args == 1 and s.params[0].kind in ("ints", "symints") for s in sigs):
        lines.append(f"    if n > {max((s.max_pos_args for s in sigs), default=0)}: return False")
    if names:
        lines.append("    if kwargs:")
        for name, (kinds, none) in names.items():
            lines.append(f"        v = kwargs.get({name!r}, _NO)")
            lines.append(
                f"        if v is not _NO and not {_quick(kinds, none, 'v')}: return False"
            )
    lines.append("    return True")
    env = {**QUICK_ENV, "_NO": _MISSING}
    exec("\n".join(lines), env)
    return env["check"]


def _narrowing(sigs) -> dict[str, int]:
    """{keyword: the most positional arguments a call giving it may have}, for the
    keywords only some signatures have, and those with fewer positional parameters than
    others (``sort(x, 0, stable=True)``: ``stable`` comes with the signature that takes
    ``dim`` by keyword only)."""
    most = max((s.max_pos_args for s in sigs), default=0)
    out = {}
    for name in {p.name for s in sigs for p in s.params if p.keyword_only}:
        having = [s for s in sigs if any(p.name == name for p in s.params)]
        m = max(s.max_pos_args for s in having)
        if len(having) < len(sigs) and m < most:
            out[name] = m
    return out


def narrowing(key: str) -> set[str]:
    """The keywords of ``key`` that only some signatures (with fewer positional parameters)
    take (see ``_narrowing``)."""
    return set(_narrowing([s for s in signatures(key) if not s.hidden])) if has(key) else set()


def parsed(key: str, method: bool = False):
    """A decorator: the function (a Tensor method, with ``method``) checks its arguments as
    PyTorch's parser checks those of ``key`` before it runs."""

    def wrap(fn):
        check = None  # (compiled on the first call)

        # (a failure of fn, a refusal of Python's binding included, is the parser's
        # TypeError where the parser refuses the call)
        if method:

            def call(self, *args, **kwargs):
                nonlocal check
                if check is None:
                    check = compile_check(key)
                if not check(args, kwargs):
                    judge(key, args, kwargs)
                try:
                    return fn(self, *args, **kwargs)
                except Exception:
                    if has(key):
                        judge(key, args, kwargs)
                    raise

        else:

            def call(*args, **kwargs):
                nonlocal check
                if check is None:
                    check = compile_check(key)
                if not check(args, kwargs):
                    judge(key, args, kwargs)
                try:
                    return fn(*args, **kwargs)
                except Exception:
                    if has(key):
                        judge(key, args, kwargs)
                    raise

        call = functools.update_wrapper(call, fn)
        call._rewrap = wrap  # (numpy_keywords wraps fn, then this again, outermost)
        call._parsed = True
        call._parsed_method = method
        return call

    return wrap


def checks(fn) -> bool:
    """Whether ``fn`` already checks its arguments as PyTorch's parser does (a parsed
    function, an op's generated function, or one marked so)."""
    env = getattr(fn, "__globals__", {})
    return getattr(fn, "_parsed", False) or "_judge" in env or "_rejudge" in env


def with_parser(fn, key: str, method: bool = False):
    """``fn`` (a public function written in Python, or a Tensor method) checking its
    arguments as PyTorch's parser of ``key`` does, where PyTorch parses ``key`` and checks
    one of its parameters' kinds; else ``fn``."""
    if checks(fn) or not has(key):
        return fn
    sigs = signatures(key)
    if not any(p.kind in _CHECKED for s in sigs for p in s.params) and not _narrowing(sigs):
        return fn
    return parsed(key, method)(fn)


# ------------------------------------------------------------------ an op's public function
_PYTHON_DTYPES = {float: dt.float64, int: dt.int64, bool: dt.bool_, complex: dt.complex128}


def int_seq(v) -> bool:
    """Whether v is a tuple or list of Python ints (an int list's quick yes)."""
    if not isinstance(v, (tuple, list)):
        return False
    for i in v:
        if type(i) is not int:
            return False
    return True


def attr_kinds(key: str, names) -> dict[str, tuple]:
    """{attribute: (its kinds, whether None is taken)} for an op's attributes ``names``
    that PyTorch's parser of ``key`` checks (see ``_union``)."""
    if not has(key):
        return {}
    sigs = signatures(key)
    return _union((p.name, p.kind, p.allow_none) for s in sigs for p in s.params if p.name in names)


def positional_match(key: str, ninputs: int, names: list) -> bool:
    """Whether an op's attributes ``names``, after its ``ninputs`` inputs, are the
    positional parameters of one of PyTorch's signatures of ``key``, in its order (then its
    function may word a refusal by the positions the call gave them)."""
    if not has(key):
        return True
    for s in signatures(key):
        pos = [p.name for p in s.params if not p.keyword_only][ninputs:]
        if pos[: len(names)] == list(names):
            return True
    return not names


def quick_test(name: str, kinds: tuple) -> str:
    """The quick yes of an op's function for attribute ``name`` of ``kinds`` (its default
    is always taken)."""
    return f"({name} is _d_{name} or {_quick(kinds[0], kinds[1], name)})"


def judge_op_call(
    key: str,
    method: bool,
    kinds: dict,
    inputs: tuple,
    attrs: dict,
    spec: tuple,
    out,
    by_pos: tuple,
) -> dict:
    """The attributes of an op's call whose quick check failed (``kinds``: those checked)
    as Python ints, tuples of ints and numtorch dtypes, or PyTorch's TypeError for the call
    as it was made: its inputs and the attributes ``by_pos`` by position, the others given
    (not at their defaults, ``spec[0]``) by keyword."""
    defaults, not_given, name, python = spec
    missing = [n for n, v in attrs.items() if v is not_given]
    if missing and python:
        raise TypeError(
            f"{python}() missing {len(missing)} required positional argument"
            f"{'s' if len(missing) > 1 else ''}: "
            + " and ".join(", ".join(f"'{n}'" for n in missing).rsplit(", ", 1))
        )
    args = [*(inputs[1:] if method else inputs), *(attrs[n] for n in by_pos)]
    kwargs = {
        n: v for n, v in attrs.items() if n not in by_pos and v is not defaults.get(n, _MISSING)
    }
    given = set(by_pos) | kwargs.keys()
    if out is not None:
        kwargs["out"] = out
    i = refuse(key, tuple(args), kwargs) if has(key) else 0
    missing = [n for n, v in attrs.items() if v is not_given]
    if missing:  # (numtorch's op requires an attribute PyTorch's parser does not)
        raise TypeError(f"{name}() missing 1 required keyword-only argument: '{missing[0]}'")
    public = signatures(key)[i].name if has(key) else name
    fixed = dict(attrs)
    for n, (ks, _) in kinds.items():
        v = attrs[n]
        if v is None or n not in given or (isinstance(v, Tensor) and "tensor" in ks):
            continue
        if "dtype" in ks and v in _PYTHON_DTYPES:
            fixed[n] = _PYTHON_DTYPES[v]
        elif isinstance(v, (tuple, list)):
            if ks & {"ints", "symints"}:
                fixed[n] = unpack_ints(public, n, v)
        elif ks & {"int", "symint", "ints", "symints"} and _is_int_or_symint(v):
            fixed[n] = _as_int(v)
    return fixed


def rejudge(
    key: str,
    method: bool,
    inputs: tuple,
    attrs: dict,
    spec: tuple,
    out,
    kw: dict,
    extra: tuple,
    failure: Exception | None = None,
) -> None:
    """After an op's function failed (with ``failure``): PyTorch's TypeError where its parser refuses the call
    as it was made (its inputs by position, less those not given; the attributes
    ``spec[1]`` bound from ``extra``, the positional arguments after the inputs, where
    ``spec[2]``; the other attributes given by keyword, with the keywords ``kw``
    no parameter took; ``spec[3]`` stands for an argument not given), else nothing.
    Where PyTorch's function is Python (``spec[4]``), Python's own refusal of a missing
    argument stands."""
    defaults, by_pos, bound, not_given, python = spec
    if python and not_given in attrs.values():
        return
    ins = list(inputs[1:] if method else inputs)
    if bound:  # (the attributes given by position are those ``extra`` holds)
        positional = by_pos[: len(extra)]
    else:  # (those before any at its default, or all, where more positional ones came)
        n = (
            len(by_pos)
            if extra
            else next((i for i, n in enumerate(by_pos) if attrs[n] is defaults[n]), len(by_pos))
        )
        positional = by_pos[:n]
        extra = (*(attrs[n] for n in positional), *extra)
    args = [*ins, *extra]
    while args and (args[-1] is not_given or args[-1] is None):
        args.pop()  # (an optional input or attribute left None is one not given)
    if not_given in args:  # (an input by keyword after one not given: no call to rebuild)
        return
    kwargs = {
        n: v
        for n, v in attrs.items()
        if n not in positional and v is not defaults.get(n) and v is not not_given and v is not None
    }
    names = {p.name for s in signatures(key) for p in s.params}
    if not kwargs.keys() <= names:  # (an attribute of numtorch's own)
        return
    kwargs.update((k, v) for k, v in kw.items() if k not in kwargs)
    if out is not None:
        kwargs["out"] = out
    try:
        judge(key, tuple(args), kwargs)
    except TypeError as e:
        # (the call rebuilt gives its attributes by position: a failure that is the same
        # refusal of one given by keyword stands)
        if type(failure) is not TypeError or _POSITION.sub("", str(e)) != str(failure):
            raise


def too_many(key: str, method: bool, inputs: tuple, extra: tuple, name: str) -> None:
    """PyTorch's error for an op's call with more positional arguments than it takes (else
    Python's, for a function PyTorch does not parse)."""
    args = (*(inputs[1:] if method else inputs), *extra)
    if has(key):
        refuse(key, args, {})
    n = len(args)
    raise TypeError(f"{name}() takes at most {n - 1} positional arguments ({n} given)")


def multiple_values(key: str, name: str) -> None:
    """The error for an attribute given by position and by keyword (PyTorch's and
    Python's)."""
    public = signatures(key)[0].name if has(key) else key.rpartition(".")[2]
    raise TypeError(f"{public}() got multiple values for argument '{name}'")


# the names the quick checks' expressions use
QUICK_ENV = {
    "_Dt": _Dtype,
    "_T": Tensor,
    "_Dev": _Device,
    "_NUMBERS": (int, float, bool, complex),
    "_int_seq": int_seq,
}
