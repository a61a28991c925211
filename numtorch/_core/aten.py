"""PyTorch's aten names for numtorch's ops, and the calls into dispatch modes.

A ``TorchDispatchMode`` handler sees an op as an ``OpOverload`` (``aten.mul.Tensor``).
The aten name of a registry op is ``aten.<name>.default`` unless ``_ATEN`` below says
otherwise: a fixed name, or a rule choosing the overload from the call (a Tensor or a
Scalar ``other``, a ``dim`` given or not, matmul by rank: ``mm``/``mv``/``dot``).

The handler's ``args``/``kwargs`` follow the op's own signature, in PyTorch's shape:
- positional: the op's inputs (trailing None ones left out: ``clamp(x, 0)``), then its
  positional attributes in order, trailing ones at their default left out;
- ``kwargs``: its keyword-only attributes that differ from their default;
- sizes and dims are lists (aten's ``int[]``), an int ``dim`` of a reduction too;
- a scalar-first call puts the tensor first (``2 * x`` is ``mul.Tensor(x, 2)``, ``1 - x``
  is ``rsub.Scalar(x, 1)``); ``full_like`` with 0 or 1 is ``zeros_like``/``ones_like``
  with ``dtype``/``device`` as keywords.
Where numtorch's signature differs from aten's schema (``gather(x, index, dim)``,
``getitem``'s index tuple), the handler sees numtorch's order. ``func(*args, **kwargs)``
maps them back and runs the op. An in-place method is seen as its in-place overload
(``x.add_(y)`` as ``aten.add_.Tensor``); inside a handler that overload computes the new
value and the method writes it into ``x`` (after autograd has saved what it needs).
Two ops seen as one overload (reshape and view as ``aten.view.default``) get equal
``OpOverload`` objects, each running its own op; ``aten.x.y`` is the canonical one.

Modes sit below autograd, as in PyTorch: the handler runs the op with no recording (ops
it calls itself record nothing either), and the node is recorded around its result.
"""

from __future__ import annotations

import inspect

from . import upcalls
from .dispatch import _make_view, dispatch, make_views, run_kernel
from .inplace import commit
from .op import REGISTRY
from .state import state
from .tensor import Tensor, _make

_POSITIONAL = inspect.Parameter.POSITIONAL_OR_KEYWORD


def _other_kind(tensor: str, scalar: str, pos: int = 1):
    """``tensor`` when input ``pos`` is a Tensor, else ``scalar``."""

    def rule(args, attrs):
        return tensor if isinstance(args[pos], Tensor) else scalar

    return rule


def _given(attr: str, without: str, with_: str):
    """``with_`` when attribute ``attr`` is given (not None), else ``without``."""

    def rule(args, attrs):
        return without if attrs.get(attr) is None else with_

    return rule


def _pow(args, attrs):
    if not isinstance(args[0], Tensor):
        return "Scalar"
    return "Tensor_Tensor" if isinstance(args[1], Tensor) else "Tensor_Scalar"


def _squeeze(args, attrs):
    dim = attrs.get("dim")
    return "default" if dim is None else "dims" if isinstance(dim, (tuple, list)) else "dim"


def _split(args, attrs):
    return "Tensor" if isinstance(args[1], int) else "split_with_sizes"


def _reflected(name: str, reflected: str | None = None):
    """A scalar-first call (``2 * x``, ``1 - x``) as PyTorch records it: the tensor first,
    under ``reflected`` (``rsub.Scalar``) if the op does not commute."""

    def rule(args, attrs):
        if isinstance(args[0], Tensor) or not isinstance(args[1], Tensor):
            return name
        return (reflected or name, (args[1], args[0]))

    return rule


def _matmul(args, attrs):
    ranks = tuple(a.dim() if isinstance(a, Tensor) else -1 for a in args)
    return _MATMUL.get(ranks, "default")


_MATMUL = {(2, 2): "mm.default", (2, 1): "mv.default", (1, 1): "dot.default"}


def _getitem(args, attrs):
    """``x[i]`` and ``x[:, None]`` (one int or None after full slices) are select and
    unsqueeze at that dim; one slice is slice.Tensor."""
    index = attrs.get("index")
    if not isinstance(index, tuple) or not index:
        return "default"
    *lead, last = index
    if any(i != slice(None) for i in lead):
        return "default"
    if type(last) is int:
        return ("select.int", args, {"dim": len(lead), "index": last})
    if last is None:
        return ("unsqueeze.default", args, {"dim": len(lead)})
    return "slice.Tensor" if type(last) is slice else "default"


def _full_like(args, attrs):
    fill = attrs.get("fill_value", 0)
    if type(fill) in (int, float) and fill in _LIKE:
        return _LIKE[fill]
    return "default"


# Overloads that stand for a numtorch op with some attributes fixed: the handler sees the
# op's inputs and its other attributes as keywords (aten's ``zeros_like(self, *, dtype)``).
_FIXED = {
    "zeros_like": ("full_like", {"fill_value": 0}),
    "ones_like": ("full_like", {"fill_value": 1}),
}
_LIKE = {0: "zeros_like.default", 1: "ones_like.default"}


def _clamp(args, attrs):
    return "Tensor" if any(isinstance(a, Tensor) for a in args[1:]) else "default"


_SCALAR_OR_TENSOR = _other_kind("Tensor", "Scalar")

# registry name -> overload name, "packet.overload", or rule(args, attrs) -> one of those,
# or ("packet.overload", args[, attrs]): the call rewritten as a call of op ``packet``.
_ATEN: dict = {
    # Python scalars are wrapped as tensors by these, so the overload is always Tensor.
    "add": _reflected("Tensor"),
    "sub": _reflected("Tensor", "rsub.Scalar"),
    "mul": _reflected("Tensor"),
    "div": _given("rounding_mode", "Tensor", "Tensor_mode"),
    "rsub": _SCALAR_OR_TENSOR,
    "pow": _pow,
    **{n: _SCALAR_OR_TENSOR for n in ("eq", "ne", "lt", "le", "gt", "ge", "remainder", "fmod")},
    **{n: _SCALAR_OR_TENSOR for n in ("bitwise_and", "bitwise_or", "bitwise_xor")},
    "masked_fill": _other_kind("Tensor", "Scalar", 2),
    "fill": _SCALAR_OR_TENSOR,
    "clamp": _clamp,
    "where": "self",
    "matmul": _matmul,
    "full_like": _full_like,
    "sum": _given("dim", "default", "dim_IntList"),
    "mean": _given("dim", "default", "dim"),
    "prod": _given("dim", "default", "dim_int"),
    "max": "dim",
    "min": "dim",
    **{n: "correction" for n in ("var", "std", "var_mean", "std_mean")},
    "squeeze": _squeeze,
    "transpose": "int",
    "select": "int",
    "unbind": "int",
    "split": _split,
    "index": "index.Tensor",
    "getitem": _getitem,
    "softmax": "_softmax.default",
    "log_softmax": "_log_softmax.default",
    "reshape": "view.default",
    "to_dtype": "_to_copy.default",
    "vector_norm": "linalg_vector_norm.default",
    # PyTorch's narrow is its slice (the handler sees narrow's start and length)
    "narrow": lambda args, attrs: "slice.Tensor",
}


class OpOverload:
    """One overload of an aten operator (torch._ops.OpOverload), e.g. ``aten.mul.Tensor``;
    calling it runs the numtorch op it stands for."""

    __slots__ = ("_opname", "_overloadname", "overloadpacket", "_op", "_inplace")

    def __init__(self, packet: OpOverloadPacket, overload: str, op) -> None:
        self.overloadpacket = packet
        self._opname = packet._opname
        self._overloadname = overload
        self._op = op
        self._inplace = False  # ``add_``: writes its result into its first argument

    namespace = "aten"

    @property
    def __name__(self) -> str:  # noqa: PLW3201
        return f"{self._opname}.{self._overloadname}"

    def name(self) -> str:
        """``aten::mul.Tensor`` (``aten::sum`` for a default overload), as torch says."""
        if self._overloadname == "default":
            return f"aten::{self._opname}"
        return f"aten::{self._opname}.{self._overloadname}"

    def __str__(self) -> str:
        return f"aten.{self._opname}.{self._overloadname}"

    def __repr__(self) -> str:
        return f"<OpOverload(op='aten.{self._opname}', overload='{self._overloadname}')>"

    @property
    def _schema(self) -> FunctionSchema:
        """The signature of the numtorch op this overload runs, in FunctionSchema's form."""
        return FunctionSchema(self)

    def __eq__(self, other) -> bool:
        return isinstance(other, OpOverload) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    def __call__(self, *args, **kwargs):
        op = self._op
        if op is None:
            raise NotImplementedError(f"numtorch has no op for {self}")
        result = dispatch(op, *_from_aten(op, args, kwargs, self._opname))
        if not self._inplace or (state.modes and state.modes[0] is BELOW):
            # Inside a handler the in-place method that made the call writes the result
            # (after autograd has saved what it needs), so the overload only computes it.
            return result
        commit(args[0], result, op)
        return args[0]


def inplace_overload(func: OpOverload) -> OpOverload:
    """The in-place form of an overload: ``aten.add_.Tensor`` for ``aten.add.Tensor``."""
    return _inplace_of(aten.packet(func._opname + "_"), func._overloadname, func._op)


def _inplace_of(packet: OpOverloadPacket, overload: str, op) -> OpOverload:
    ov = packet._get(overload, op)
    ov._inplace = True
    return ov


class Argument:
    """One argument or return of a FunctionSchema: name, type (a string), default."""

    __slots__ = ("name", "type", "default_value", "kwarg_only", "_has_default")

    def __init__(self, name: str, type: str, default=inspect.Parameter.empty, kwarg_only=False):
        self.name = name
        self.type = type
        self._has_default = default is not inspect.Parameter.empty
        self.default_value = default if self._has_default else None
        self.kwarg_only = kwarg_only

    def __str__(self) -> str:
        default = f"={self.default_value}" if self._has_default else ""
        return f"{self.type} {self.name}{default}".strip()


class FunctionSchema:
    """torch.FunctionSchema of an OpOverload, read from the numtorch op it runs: the op's
    inputs are Tensors (Tensor[] for lists), its attributes typed by their default."""

    def __init__(self, func: OpOverload) -> None:
        op = func._op
        self.is_mutable = func._inplace
        self.name = f"aten::{func._opname}"
        self.overload_name = "" if func._overloadname == "default" else func._overloadname
        args = [
            Argument(n, "Tensor[]" if i in op.list_inputs else "Tensor")
            for i, n in enumerate(op.inputs)
        ]
        for name, default, kind in op.attrs:
            typ = "Any" if default is None or default is inspect.Parameter.empty else None
            args.append(Argument(name, typ or type(default).__name__, default, kind != _POSITIONAL))
        self.arguments = args
        self.returns = [Argument("", "Tensor") for _ in range(op.nout)]

    def __str__(self) -> str:
        name = self.name + (f".{self.overload_name}" if self.overload_name else "")
        pos = [str(a) for a in self.arguments if not a.kwarg_only]
        kw = [str(a) for a in self.arguments if a.kwarg_only]
        sig = ", ".join(pos + (["*", *kw] if kw else []))
        rets = [a.type for a in self.returns]
        return f"{name}({sig}) -> {rets[0] if len(rets) == 1 else '(' + ', '.join(rets) + ')'}"


class OpOverloadPacket:
    """All overloads of one aten operator (torch._ops.OpOverloadPacket), e.g. ``aten.mul``."""

    def __init__(self, opname: str) -> None:
        self._opname = opname
        self._overloads: dict[str, OpOverload] = {}
        self._bound: dict[tuple, OpOverload] = {}

    @property
    def __name__(self) -> str:  # noqa: PLW3201
        return self._opname

    def __str__(self) -> str:
        return f"aten.{self._opname}"

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='aten.{self._opname}')>"

    def overloads(self) -> list[str]:
        return list(self._overloads)

    def _get(self, overload: str, op) -> OpOverload:
        """The overload, run by ``op``. Two numtorch ops seen as one overload (reshape and
        view as ``aten.view.default``) get equal objects that each map back to their op."""
        ov = self._overloads.get(overload)
        if ov is None:
            ov = self._overloads[overload] = OpOverload(self, overload, op)
        elif ov._op is None:
            ov._op = op
        elif ov._op is not op and op is not None:
            key = (overload, op.name)
            ov = self._bound.get(key)
            if ov is None:
                ov = self._bound[key] = OpOverload(self, overload, op)
        return ov

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__"):
            raise AttributeError(overload)
        name = self._opname
        op = _op_for(name, overload)
        if op is None and name.endswith("_"):  # an in-place form: ``aten.add_.Tensor``
            base = _op_for(name[:-1], overload)
            if base is not None:
                return _inplace_of(self, overload, base)
        return self._get(overload, op)

    def __call__(self, *args, **kwargs):
        op = _op_for(self._opname, None)
        if op is None:
            raise NotImplementedError(f"numtorch has no op for {self}")
        return dispatch(op, *_from_aten(op, args, kwargs, self._opname))


class _Namespace:
    """``aten``: attribute access gives the operator packets (torch.ops.aten)."""

    def __init__(self) -> None:
        self._packets: dict[str, OpOverloadPacket] = {}

    def packet(self, name: str) -> OpOverloadPacket:
        p = self._packets.get(name)
        if p is None:
            p = self._packets[name] = OpOverloadPacket(name)
        return p

    def __getattr__(self, name: str) -> OpOverloadPacket:
        if name.startswith("__"):
            raise AttributeError(name)
        return self.packet(name)

    def __repr__(self) -> str:
        return "<module 'torch.ops.aten' from 'torch.ops'>"


aten = _Namespace()


def _op_for(opname: str, overload: str | None):
    """The registry op a user-named aten overload stands for (None if there is none): the
    op of that name, else one the table shows under it (``_softmax`` is softmax)."""
    op = REGISTRY.get(opname)
    if op is not None and not op.composite:
        return op
    if opname in _FIXED:
        return REGISTRY[_FIXED[opname][0]]
    for name, rule in _ATEN.items():
        if isinstance(rule, str) and "." in rule:
            packet, ov = rule.split(".")
            if packet == opname and overload in (ov, None):
                return REGISTRY[name]
    return None


def overload_of(op, args: tuple, attrs: dict) -> OpOverload:
    """The OpOverload a call of ``op`` on ``args``/``attrs`` is seen as."""
    return _resolve(op, args, attrs)[0]


def _resolve(op, args: tuple, attrs: dict) -> tuple[OpOverload, tuple, dict]:
    """The overload a call is seen as, with the arguments in that overload's form (a call
    rewritten by its rule runs the op the overload names: ``1 - x`` is ``rsub(x, 1)``)."""
    rule = _ATEN.get(op.name, "default")
    if not isinstance(rule, str):
        rule = rule(args, attrs)
        if isinstance(rule, tuple):
            rule, args, *more = rule
            attrs = more[0] if more else attrs
            op = REGISTRY.get(rule.partition(".")[0], op)
    packet, _, overload = rule.rpartition(".")
    return aten.packet(packet or op.name)._get(overload, op), args, attrs


def aten_call(op, args: tuple, attrs: dict) -> tuple[OpOverload, tuple, dict]:
    """A call of ``op`` as aten sees it: its overload and the (args, kwargs) a handler
    gets (the profiler names and measures calls this way)."""
    func, args, attrs = _resolve(op, args, attrs)
    return (func, *to_aten(func._op, args, attrs, func._opname))


def to_aten(op, args: tuple, attrs: dict, packet: str = "") -> tuple[tuple, dict]:
    """The (args, kwargs) a handler sees for a call of ``op`` (see the module doc): sizes
    and dims (tuples here) are lists, as aten's int[] arguments are."""
    if op.aten_dim_list and isinstance(attrs.get("dim"), int):
        attrs = {**attrs, "dim": [attrs["dim"]]}
    if packet in _FIXED:
        fixed = _FIXED[packet][1]
        kwargs = {k: v for k, v in attrs.items() if k not in fixed and v is not None}
        return tuple(args), kwargs
    pos = list(args)
    while pos and pos[-1] is None and len(pos) > 1:  # optional inputs left out (clamp's max)
        pos.pop()
    kwargs = {}
    keywords = _KEYWORDS.get(op.name, ())
    trailing = []  # positional attributes at their default, kept until a later one is not
    for name, default, kind in op.attrs:
        if name not in attrs:
            if kind == _POSITIONAL:
                trailing.append(default)
            continue
        v = attrs[name]
        same = _is_default(v, default)
        if type(v) is tuple:
            v = list(v)
        if kind == _POSITIONAL and name not in keywords:
            if same:
                trailing.append(v)
            else:
                pos.extend(trailing)
                trailing = []
                pos.append(v)
        elif not same:
            kwargs[name] = v
    return (*pos, *_EXTRA.get(op.name, ())), kwargs


# attributes that aten takes as keywords where numtorch's op takes them positionally
_KEYWORDS = {"to_dtype": ("dtype",), "to_device": ("device",)}
# aten arguments numtorch's op does not have, at the values numtorch implies
_EXTRA = {"softmax": (False,), "log_softmax": (False,)}  # half_to_float


def _is_default(v, default) -> bool:
    plain = (bool, int, float, str, tuple, type(None))
    return v is default or (isinstance(v, plain) and isinstance(default, plain) and v == default)


def _from_aten(op, args: tuple, kwargs: dict, packet: str = "") -> tuple[tuple, dict]:
    """The inverse of ``to_aten``: numtorch's (inputs, attrs) for a handler's call."""
    if packet in _FIXED:
        return tuple(args), {**_FIXED[packet][1], **kwargs}
    if packet in _FORMS:
        args = (*args, *_FORMS[packet])
    n = op.nin
    if len(args) < n:
        args = (*args, *(None,) * (n - len(args)))
    attrs = dict(kwargs)
    names = [name for name, _, kind in op.attrs if kind == _POSITIONAL]
    for name, v in zip(names, args[n:]):
        attrs[name] = v
    for name, v in attrs.items():
        if type(v) is list:
            attrs[name] = tuple(v)
    return tuple(args[:n]), attrs


class _BelowAutograd:
    """Bottom entry of the mode stack while a handler runs: ops run and record nothing."""

    def __repr__(self) -> str:
        return "<below autograd>"


BELOW = _BelowAutograd()


def real_modes() -> list:
    """The active dispatch modes, innermost last."""
    return [m for m in state.modes if m is not BELOW]


def call_modes(op, args: tuple, attrs: dict):
    """A level-0 op call while dispatch modes are on (``dispatch`` sends it here): the
    innermost mode handles it with itself popped; autograd records around the result."""
    modes = state.modes
    below = modes[0] is BELOW
    mode = modes[-1]
    if mode is BELOW:
        return _run(op, args, attrs)
    state.modes = [BELOW, *modes[1 if below else 0 : -1]]
    try:
        func, targs, tattrs = _resolve(op, args, attrs)
        if state.inplace_op is op:  # the call an in-place method makes (see run_inplace)
            state.inplace_op = None
            func, targs = _inplace_call(func, targs)
        targs, kwargs = to_aten(func._op, targs, tattrs, func._opname)
        types = tuple(dict.fromkeys(type(a) for a in args if _subclass(a)))
        res = mode.__torch_dispatch__(func, types, targs, kwargs)
    finally:
        state.modes = modes
    if isinstance(res, list):
        res = tuple(res)
    if not below and op.ndiff and state.grad_enabled and _requires_grad(op, args):
        upcalls.record(op, args, attrs, res)
    return res


def _subclass(a) -> bool:
    # PyTorch lists only tensor subclasses that define __torch_dispatch__.
    return isinstance(a, Tensor) and "__torch_dispatch__" in type(a).__dict__


def _requires_grad(op, args: tuple) -> bool:
    for a in args:
        if isinstance(a, Tensor):
            if a._rg:
                return True
        elif op.list_inputs and isinstance(a, (list, tuple)):
            if any(isinstance(t, Tensor) and t._rg for t in a):
                return True
    return False


def _run(op, args: tuple, attrs: dict):
    """The kernel on level-0 tensors, with no node recorded."""
    arrays = []
    for a in args:
        if isinstance(a, Tensor):
            arrays.append(a._data)
        elif op.list_inputs and isinstance(a, (list, tuple)):
            arrays.append([t._data if isinstance(t, Tensor) else t for t in a])
        else:
            arrays.append(a)
    outs = run_kernel(op, arrays, attrs)
    if op.nout == 1:
        return _make_view(args[0], outs, op, attrs) if op.view else _make(outs)
    if op.view:
        return make_views(args[0], outs, op, attrs)
    return tuple(_make(o) for o in outs)


def inplace_name(op, args: tuple | None, attrs: dict) -> str:
    """The name PyTorch's errors give an in-place call of ``op`` (``aten::add_.Tensor``);
    without its operands, the op's default overload's."""
    if args is None:
        return f"aten::{op.name}_"
    return _inplace_call(overload_of(op, args, attrs), args)[0].name()


# In-place methods that are aten ops of their own (default overload), not their op's in-place
# form (run_inplace's ``form``): the op's trailing arguments that the method fixes.
_FORMS = {"zero_": (0,)}


def _inplace_call(func: OpOverload, args: tuple) -> tuple[OpOverload, tuple]:
    """The overload and arguments of the in-place method call that runs ``func``."""
    form = state.inplace_form
    fixed = _FORMS.get(form)
    if fixed is None:
        return inplace_overload(func), args
    return _inplace_of(aten.packet(form), "default", func._op), args[: len(args) - len(fixed)]


# functional overload -> its out= overload, where that is not ``<overload>_out``
_OUT_OVERLOAD = {
    "default": "out",
    "Tensor_mode": "out_mode",
    "dim_IntList": "IntList_out",
    "dim_int": "int_out",
    "self": "self_out",
}
_OUT_OF_TENSOR = frozenset(("add", "sub", "mul", "div"))  # add.Tensor's is add.out
_OUT_OF_DIM = {"mean": "out", "max": "dim_max", "min": "dim_min"}


def out_names(op, args: tuple, attrs: dict) -> tuple[str, str]:
    """The names PyTorch's errors give an ``out=`` call of ``op``: its out overload's
    (``aten::add.out``) and its autograd kernel's (``add_out``)."""
    func = overload_of(op, args, attrs)
    name, ov = func._opname, func._overloadname
    if ov == "Tensor" and name in _OUT_OF_TENSOR:
        out = "out"
    elif ov == "dim" and name in _OUT_OF_DIM:
        out = _OUT_OF_DIM[name]
    else:
        out = _OUT_OVERLOAD.get(ov, f"{ov}_out")
    return f"aten::{name}.{out}", f"{name}_out"


upcalls.provide(dispatch_mode=call_modes, inplace_name=inplace_name, out_names=out_names)
