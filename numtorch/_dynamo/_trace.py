"""The tracing interpreter: runs ops on real values and records them as a program of
kernel calls on arrays.

It sits at the bottom of the transform stack and sees every op call that reaches level
0 (``sees_all``), including calls with no traced argument (a formula's ``zeros(shape)``,
a batch rule's call on untraced inputs under a vmap above it), so that everything a
program allocates is recomputed when it runs again. A value read into Python (``item()``,
``bool()``, a tensor's array) makes the trace invalid: what was traced may then depend on
the values.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from .._core import inplace
from .._core import symbolic as _symbolic
from .._core.dispatch import dispatch
from .._core.interpreter import Interpreter, Kind, WrapperTensor, untraced
from .._core.out import internal_overlap
from .._core.state import state
from .._core.symbolic import concrete
from .._core.tensor import Size, Tensor, _wrap_dim
from ._ir import Call, Commit, Factory, Guard, Op, _Slot, made
from ._lower import KERNELS, LOWER, Fresh


class Untraceable(Exception):
    """What was being traced cannot become straight-line code (values read into Python,
    random draws, user-defined ops, writes into constants)."""


class TracedTensor(WrapperTensor):
    """A value of the program being traced: a slot, with the real tensor it holds now.
    Reading its values (or its autograd state) is the tracer's ``read``."""

    __slots__ = ("_slot",)

    @property
    def shape(self):
        shape = self._inner.shape
        if not self._interp.symbolic:
            return shape
        return Size(_symbolic.size(n, self._slot, d) for d, n in enumerate(shape))

    def size(self, dim=None):
        shape = self.shape
        return shape if dim is None else shape[_wrap_dim(dim, len(shape))]

    def numel(self) -> int:
        return self.shape.numel()

    nelement = numel

    def __len__(self) -> int:
        return int(self.shape[0]) if self._inner.ndim else len(self._inner)

    @property
    def _data(self):
        return self._interp.read(self)._data

    def _readable(self):
        return self._interp.read(self)

    def tolist(self):
        return self._interp.read(self).tolist()

    def numpy(self, *, force: bool = False):
        return self._interp.read(self).numpy(force=force)

    @property
    def requires_grad(self) -> bool:
        return self._inner.requires_grad

    @property
    def _rg(self) -> bool:
        # (eager's checks read it, out='s refusal of autograd among them: the real value's)
        return self._inner._rg

    @_rg.setter
    def _rg(self, value: bool) -> None:
        self._rg_bit = value

    @property
    def grad_fn(self):
        return self._inner.grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._inner.is_leaf

    def requires_grad_(self, requires_grad: bool = True) -> TracedTensor:
        self._interp.read(self).requires_grad_(requires_grad)
        return self

    def register_hook(self, hook):
        return self._interp.read(self).register_hook(hook)

    def retain_grad(self) -> None:
        self._interp.read(self).retain_grad()

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        self._interp.backward(self, gradient, retain_graph, create_graph, inputs)

    def detach(self) -> Tensor:
        return self._interp.wrap(self._inner.detach(), self._slot)

    def __repr__(self) -> str:
        return repr(self._interp.read(self))

    __str__ = __repr__


# What Python shows of a traced value's type (an operator's TypeError, type(t).__name__)
# is eager's: the function runs as it would on plain tensors.
TracedTensor.__name__ = TracedTensor.__qualname__ = "Tensor"


class Tracer(Interpreter):
    """Records a program of ``_ir`` instructions: an ``Op`` per kernel call, a ``Commit``
    per in-place write, a ``Guard`` per decision on symbolic sizes and (the forward
    tracer's) a ``Factory`` per factory function's call."""

    sees_all = True
    kind = Kind.TRACE
    random = False  # random draws may be recorded (a replay draws from the generator again)
    static = False  # the program's strides are fixed (its guards cover its inputs')

    def __init__(self, symbolic: bool = False) -> None:
        self.program: list = []
        self.nslots = 0
        # sizes read are expressions (``_symbolic``): the program serves other sizes
        self.symbolic = symbolic
        self.guards: set = set()

    def __enter__(self):
        out = super().__enter__()
        if self.symbolic:
            _symbolic._GUARDS[0] = self
        return out

    def __exit__(self, *exc):
        if self.symbolic:
            _symbolic._GUARDS[0] = None
        return super().__exit__(*exc)

    def guard(self, expr: str, slots: frozenset) -> None:
        """A decision taken on symbolic sizes: checked where the program reaches it."""
        if expr not in self.guards:
            self.guards.add(expr)
            self.program.append(Guard(expr, slots))

    def wrap(self, t: Tensor, slot: int | None = None) -> TracedTensor:
        if slot is None:
            slot = self.nslots
            self.nslots += 1
        w = TracedTensor._new(t, self)
        w._slot = slot
        return w

    def _ref(self, x):
        if isinstance(x, TracedTensor) and x._interp is self:
            return x._inner, _Slot(x._slot)
        if isinstance(x, Tensor):
            if x._level:
                raise Untraceable
            return x, x._data  # a constant tensor: its array is baked in
        if isinstance(x, (list, tuple)):
            pairs = [self._ref(v) for v in x]
            return type(x)(p[0] for p in pairs), [p[1] for p in pairs]
        return x, x

    def read(self, t: TracedTensor) -> Tensor:
        """A traced value read into Python (or its autograd state used): the real tensor."""
        raise Untraceable

    def backward(self, t: TracedTensor, gradient, retain_graph, create_graph, inputs) -> None:
        """``t.backward(...)`` on a traced value: a read (the pass runs eagerly)."""
        self.read(t).backward(gradient, retain_graph, create_graph, inputs)

    def process(self, op, args: tuple, attrs: dict):
        if op.impl is not None or (op.random and not self.random):
            raise Untraceable
        pairs = [self._ref(a) for a in args]
        # the kernel runs on plain numbers (NumPy takes an int or float subclass for a
        # strong scalar) and decides again as the program runs
        values, given = tuple(concrete(p[0]) for p in pairs), concrete(attrs)
        with _symbolic.unguarded(), untraced():
            out = dispatch(op, values, given)
            outs = out if isinstance(out, tuple) else (out,)
            arrays = [_array(v) for v in values]
            on_cpu = all(type(o._data) is np.ndarray for o in outs)
            plain = on_cpu and not op.random and _passes(op, arrays, given, outs)
        wrapped = tuple(self.wrap(o) for o in outs)
        refs = [p[1] for p in pairs]
        if not self.symbolic:  # sizes a symbolic trace left in attributes are constants here
            refs, attrs = concrete(refs), concrete(attrs)
        scalars = [w._slot for w, o in zip(wrapped, outs) if not o._data.ndim]
        # (a lowering decides from sizes once, for the sizes traced)
        rule = None
        if on_cpu and not self.symbolic:
            rule = LOWER.get(op.name) or (KERNELS.get(op.name) if plain else None)
        expr = rule(given, arrays, self.static) if rule else None
        settled = False
        if expr is not None and op.layout is not None:
            if self.static:
                settled = _settled(op, arrays, given, expr)
            else:  # (a program for these sizes: a new array of at most one dim is laid out)
                settled = type(expr) is Fresh and all(o._data.ndim <= 1 for o in outs)
        slots = [w._slot for w in wrapped]
        self.program.append(Op(op, refs, attrs, slots, plain, scalars, expr, settled))
        return wrapped if isinstance(out, tuple) else wrapped[0]

    def factory(self, fn, args: tuple, kwargs: dict):
        if not self.symbolic or _holds_data((args, kwargs)):
            return fn(*args, **kwargs)  # (its result is a constant of the program)
        return self._record_factory(fn, args, kwargs)

    def _record_factory(self, fn, args: tuple, kwargs: dict):
        """A factory call the program makes again as it runs (with its sizes' expressions)."""
        with _symbolic.unguarded(), untraced():  # (it decides again as it runs)
            t = fn(*args, **kwargs)
        w = self.wrap(t)
        if not self.symbolic:
            args, kwargs = concrete(args), concrete(kwargs)
        self.program.append(Factory(fn, args, kwargs, w._slot))
        return w

    def commit(self, target: Tensor, result: Tensor, op=None) -> None:
        if not (isinstance(target, TracedTensor) and target._interp is self):
            raise Untraceable  # a write into a constant would change it for later runs
        source = self._ref(result)
        direct = self.static and not self.symbolic and _direct(target._inner._data)
        self.program.append(Commit(target._slot, source[1], False, direct))
        inplace.commit(target._inner, source[0], op)

    @contextmanager
    def paused(self):
        """Run user code (hooks, opaque nodes) eagerly, unrecorded."""
        top = state.stack.pop()
        self.alive = False
        try:
            with _symbolic.unguarded():
                yield
        finally:
            state.stack.append(top)
            self.alive = True


def hoist_guards(program: list) -> None:
    """Move each guard of a symbolic program up to just after the values it reads are made
    (a size is known from then on), so that guards come before writes and draws."""
    maker: dict = {}  # slot -> the index in ``rest`` of the instruction that makes it
    moved: dict = {}  # instruction index -> the guards placed after it (-1: first)
    rest = []
    for ins in program:
        if type(ins) is Guard:
            at = max((maker.get(s, -1) for s in ins.slots), default=-1)
            moved.setdefault(at, []).append(ins)
            continue
        k = len(rest)
        rest.append(ins)
        for s in made(ins):
            if s is not None:
                maker[s] = k
    program[:] = moved.get(-1, [])
    for k, ins in enumerate(rest):
        program.append(ins)
        program.extend(moved.get(k, ()))


def guards_first(program: list) -> bool:
    """Whether every guard of a symbolic program comes before its first side effect (a
    write the caller sees, a random draw, a call into eager code): a guard that fails
    leaves nothing done."""
    done = False
    for ins in program:
        kind = type(ins)
        if kind is Guard:
            if done:
                return False
        elif kind is Call or (kind is Commit and ins.visible):
            done = True
        elif kind is Op and ins.op.random:
            done = True
        elif kind is Factory and getattr(ins.fn, "__module__", None) == _RANDOM:
            done = True
    return True


_RANDOM = "numtorch.ops.random"


def same_consts(a: list, b: list) -> bool:
    """Whether two generated programs' constants are the same values."""
    return len(a) == len(b) and all(_same_const(x, y) for x, y in zip(a, b))


def _same_const(x, y) -> bool:
    if x is y:
        return True
    if type(x) is not type(y):
        return False
    if isinstance(x, np.ndarray):
        return x.shape == y.shape and x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True)
    if isinstance(x, Tensor):
        return _same_const(x._data, y._data) and x._rg == y._rg
    try:
        return bool(x == y)
    except Exception:  # noqa: BLE001 - a value with no plain equality (arrays inside)
        return False


def _holds_data(x) -> bool:
    """Whether a factory's arguments hold tensors or arrays (values no guard covers)."""
    return _symbolic.any_in(x, _is_data)


def _is_data(v) -> bool:
    return isinstance(v, (Tensor, np.ndarray))


def _passes(op, arrays: list, attrs: dict, outs) -> bool:
    """Whether op's ``prepare`` (type promotion and dtype checks: a function of dtypes,
    shapes and constants) hands the kernel its arrays unchanged, so a replay on the same
    dtypes and shapes may call the kernel directly."""
    if op.prepare is None:
        return True
    prepared, odt = op.prepare(list(arrays), attrs)
    if odt is not None and outs[0]._data.dtype != odt:
        return False  # run_kernel casts the result
    return all(p is a for p, a in zip(prepared, arrays))


def _direct(target) -> bool:
    """Whether a write into ``target`` is a plain assignment (no element of it shares memory
    with another: ``_codegen._commit``'s test, decided once for fixed strides)."""
    return type(target) is np.ndarray and not (0 in target.strides and internal_overlap(target))


def _settled(op, arrays: list, attrs: dict, expr: str) -> bool:
    """Whether a lowered expression's results (NumPy calls without side effects, evaluated
    again here) come out laid out as run_kernel lays them out, at these inputs: in a static
    program (its inputs' strides guarded) the same holds on every run, and the layout call
    is left out."""
    names = [f"_a{i}" for i in range(len(arrays))]
    env = {"np": np, **dict(zip(names, arrays))}
    raw = eval(expr.format(*names), env)  # noqa: S307 - the lowering's own expression
    raws = raw if isinstance(raw, tuple) else (raw,)
    for r in raws:
        if type(r) is not np.ndarray:
            r = np.asarray(r)
            if r.ndim:  # (a 0-d result alone is made an array by the program)
                return False
        if op.layout(r, arrays, attrs) is not r:
            return False
    return True


def _array(v):
    if isinstance(v, Tensor):
        return v._data
    if isinstance(v, (list, tuple)):
        return [_array(x) for x in v]
    return v
