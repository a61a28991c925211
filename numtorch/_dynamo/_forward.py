"""The forward half of numtorch.compile: a function traced once per guard set into a
program of kernel calls, the backward of its outputs captured from the traced run's graph
into a second program, and both replayed, the backward as one node (PyTorch's
CompiledFunction from AOTAutograd's joint graph).

The traced run is the call's own eager run: ops go through the tracer, which records them
and runs them on the real tensors (autograd records as usual). When something cannot
become straight-line code (a value read into Python, a tensor the guards do not cover, a
custom autograd.Function) the tracer stops recording and the run goes on eagerly, so no
call runs twice.
"""

from __future__ import annotations

import weakref

import numpy as np

from .._core import inplace
from .._core.device import xp_of
from .._core.dispatch import dispatch
from .._core.state import state
from .._core.symbolic import Recheck, has_sym
from .._core.tensor import Tensor, _make, bump_version
from ..autograd import engine
from ..autograd.grad_mode import enable_grad
from ..autograd.graph import FREED, AccumulateGrad, Node, Saved, _new, _seq, edge_of
from ..ops.creation import zeros_like
from . import _codegen, _inline
from ._capture import NodeSizes, _Capture
from ._ir import Call, Commit, Op, Sizes, _Slot
from ._trace import TracedTensor, Tracer, Untraceable, _direct, _holds_data, hoist_guards
from ._walk import _Break, walk
from .exc import Unsupported

# Every compiled callable (numtorch.compile's frames), for reset()
FRAMES: weakref.WeakSet = weakref.WeakSet()

DOUBLE_BACKWARD = "torch.compile with aot_autograd does not currently support double backward"


class ForwardTracer(Tracer):
    """Traces a forward function whose tensors are ``lifted`` (inputs, parameters,
    buffers, globals): any other tensor, or a value read, stops the recording."""

    random = True
    static = True

    def __init__(self, lifted: list, fullgraph: bool, symbolic: bool = False) -> None:
        super().__init__(symbolic)
        self.lifted = lifted
        self.slot_of: dict = {}
        for i, t in enumerate(lifted):
            self.slot_of.setdefault(id(t), i)
        self.nslots = len(lifted)
        self.fullgraph = fullgraph
        self.broken: str | None = None
        self.mutated: dict = {}  # lifted slot -> writes into it
        # id(array) -> slot, for the saved values of the backward and other tensors over
        # the same arrays (the arrays kept alive, so that ids stay theirs)
        self.made: dict = {id(t._data): self.slot_of[id(t)] for t in lifted}
        self.keep: list = [t._data for t in lifted]
        self.ver_of: dict = {id(t._ver): self.slot_of[id(t)] for t in lifted}
        self.sizes: dict = {}  # node -> its NodeSizes, symbolic
        # whether the guards cover the lifted tensors' .grad (a backward may be inlined),
        # the compiler its passes count under, their .grad when the call began
        self.grads = False
        self.compiler = None
        self.grads0 = [t._grad for t in lifted]
        self.backwards = 0  # the passes inlined

    def stop(self, why: str) -> None:
        """Record no more: the call finishes eagerly."""
        if self.broken is None:
            self.broken = why
            self.sees_all = False
            if self.fullgraph:
                raise Unsupported(why)

    def read(self, t: TracedTensor) -> Tensor:
        if self.alive:
            self.stop("a tensor's value or autograd state is read in Python")
        return t._inner

    def backward(self, t: TracedTensor, gradient, retain_graph, create_graph, inputs) -> None:
        """The pass inlined into the program (``_inline``), or run eagerly, the call then
        finishing eagerly."""
        why = _inline.refusal(self, t, gradient, create_graph, inputs)
        if why is None:
            why = _inline.inline_backward(self, t, retain_graph)
            if why is None:
                return
        if self.alive:
            self.stop(why)
        t._inner.backward(gradient, retain_graph, create_graph, inputs)

    def wrap(self, t: Tensor, slot: int | None = None) -> TracedTensor:
        w = super().wrap(t, slot)
        a = t._data
        self.made[id(a)] = w._slot
        self.keep.append(a)
        return w

    def _ref(self, x):
        if isinstance(x, Tensor) and not (isinstance(x, TracedTensor) and x._interp is self):
            slot = None if x._level else self.slot_of.get(id(x))
            if slot is None and not x._level:  # another tensor over a value's very array
                slot = self.made.get(id(x._data))  # (a detach(), a saved tensor)
            if slot is None:
                raise Untraceable("a tensor that is not an input, parameter, buffer or global")
            return x, _Slot(slot)
        return super()._ref(x)

    def process(self, op, args: tuple, attrs: dict):
        if self.broken is None:
            if op.impl is not None:
                casting = getattr(op.impl, "autocast_casting", False)
                self.stop(
                    f"{op.name} under autocast (autocast regions are not traced)"
                    if casting
                    else "a custom autograd.Function"
                )
            elif _value_shaped(op, args, attrs):
                self.stop(f"{op.name}'s result shape depends on values")
            else:
                try:
                    out = super().process(op, args, attrs)
                except Untraceable as e:
                    self.stop(str(e) or f"{op.name} cannot be traced")
                else:
                    if self.symbolic:
                        self._node_sizes(op, args, attrs, out)
                    return out
        return dispatch(op, _inner(args), attrs)

    def _node_sizes(self, op, args: tuple, attrs: dict, out) -> None:
        """The symbolic sizes of the node the op's run recorded (its attributes', its
        inputs', its outputs', its saved shapes and numbers), for the capture of the
        backward (the node itself holds the plain values its kernel ran on)."""
        outs = out if isinstance(out, tuple) else (out,)
        node = next((o._inner._grad_fn for o in outs if o._inner._grad_fn is not None), None)
        if node is None or getattr(node, "_op", None) is not op or node in self.sizes:
            return
        in_meta = [_sym_meta(m, a) for m, a in zip(node.in_meta, args)]
        out_meta = node._out_meta
        if len(out_meta) == len(outs):
            out_meta = tuple(
                (tuple(o.shape), *m[1:]) if m is not None else m for m, o in zip(out_meta, outs)
            )
        saved = {}
        for name, v in (node.saved or {}).items():
            if name.endswith("_shape") and isinstance(v, tuple) and name[:-6] in op.inputs:
                a = args[op.inputs.index(name[:-6])]
                if isinstance(a, TracedTensor) and a._interp is self:
                    saved[name] = tuple(a.shape)
            elif name in op.inputs and has_sym(args[op.inputs.index(name)]):
                saved[name] = args[op.inputs.index(name)]  # a number: a size, or 1/size
        self.sizes[node] = NodeSizes(attrs, in_meta, out_meta, saved)

    def side_effect(self, what: str) -> None:
        self.stop(f"{what} (a replay cannot repeat it)")

    def factory(self, fn, args: tuple, kwargs: dict):
        if self.broken is None:
            if _holds_data((args, kwargs)):
                self.stop(f"{fn.__name__}() of tensors or arrays")
            else:
                return self._record_factory(fn, args, kwargs)
        return fn(*args, **kwargs)

    def commit(self, target: Tensor, result: Tensor, op=None) -> None:
        if self.broken is None:
            try:
                if isinstance(target, TracedTensor) and target._interp is self:
                    slot = self.ver_of.get(id(target._ver))  # a view of a lifted tensor
                    k = target._slot
                    if k < len(self.lifted) and self.lifted[k] is target._inner:
                        _outside(target._inner, result)  # (an argument, as the tracer's value)
                    super().commit(target, result, op)
                    if slot is not None:
                        self.mutated[slot] = self.mutated.get(slot, 0) + 1
                        self.program[-1] = self.program[-1]._replace(visible=True)
                    return
                slot = self.slot_of.get(id(target))
                if slot is None:
                    raise Untraceable(_OUTSIDE)
                _outside(target, result)
                ref = self._ref(result)[1]
            except Untraceable as e:
                self.stop(str(e))
            else:
                direct = not self.symbolic and _direct(target._data)
                self.program.append(Commit(slot, ref, True, direct))
                self.mutated[slot] = self.mutated.get(slot, 0) + 1
        inplace.commit(_inner1(target), _inner1(result), op)

    def finish(self, outs: list):
        """The program for the traced call whose flat outputs are ``outs`` (None where an
        output is not a tensor), or the reason there is none."""
        for t in self.lifted:  # (a .grad set to a traced value holds its real tensor)
            g = t._grad
            if isinstance(g, TracedTensor) and g._interp is self and self.broken is not None:
                t._grad = g._inner
        if self.broken is not None:
            return self.broken
        grads = _inline.grad_changes(self)
        if isinstance(grads, str):
            return grads
        slots, inner = [], []
        roots = {id(_root(t._data)) for t in self.lifted}
        for o in outs:
            if o is None:
                continue
            if not (isinstance(o, TracedTensor) and o._interp is self):
                return "an output that is an input (or a tensor the function did not make)"
            root = id(_root(o._inner._data))
            if root in roots:  # (views of one another, or of an input: eager keeps them)
                return "an output that shares memory with an input or another output"
            roots.add(root)
            slots.append(o._slot)
            inner.append(o._inner)
        if self.symbolic:
            hoist_guards(self.program)
        return _build(self, slots, inner, grads)


_OUTSIDE = "an in-place write into a tensor outside the function"


def _outside(target: Tensor, result) -> None:
    """A write into a lifted tensor: refused where autograd would have to see it (under
    no_grad it sees only the version, which the replay bumps)."""
    if state.grad_enabled and (target._rg or _inner1(result)._rg):
        raise Untraceable(_OUTSIDE)


def _value_shaped(op, args: tuple, attrs: dict) -> bool:
    """Whether op's result shape depends on its inputs' values (nonzero, unique, a boolean
    mask's selection, one_hot's inferred width), which a program fixed at its trace cannot
    replay."""
    shaped = op.value_shaped
    return shaped(args, attrs) if callable(shaped) else shaped


def _sym_meta(m, a):
    """An input's (shape, dtype, ...) with the traced value's symbolic shape."""
    if isinstance(m, tuple) and isinstance(a, TracedTensor):
        return (tuple(a.shape), *m[1:])
    if isinstance(m, list) and isinstance(a, (list, tuple)) and len(m) == len(a):
        return [_sym_meta(x, t) for x, t in zip(m, a)]
    return m


def _inner(args):
    return tuple(_inner1(a) for a in args)


def _inner1(a):
    if isinstance(a, TracedTensor):
        return a._inner
    if isinstance(a, (list, tuple)) and any(isinstance(x, TracedTensor) for x in a):
        return type(a)(_inner1(x) for x in a)
    return a


def _root(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _build(tracer: ForwardTracer, slots: list, outs: list, grads: list):
    """Generate the forward program and, when its outputs need gradients, capture the
    backward from the traced run's graph (a program from output gradients and the saved
    values to the inputs' gradients). ``grads``: the .grad each lifted tensor ends with
    (a slot, or None), where the call changed it."""
    lifted = tracer.lifted
    diff_out = [j for j, o in enumerate(outs) if o._rg] if state.grad_enabled else []
    # outputs whose graph a backward inside the call freed: their replays' graph is freed
    dead = [j for j in diff_out if tracer.backwards and _freed(outs[j])]
    diff_out = [j for j in diff_out if j not in dead]
    backward = None
    saved: list = []  # the forward's slots the backward saves
    if diff_out:
        diff_in = sorted({tracer.slot_of[id(t)] for t in lifted if t._rg})
        backward = _capture_backward(tracer, [outs[j] for j in diff_out], diff_in)
        if isinstance(backward, str):
            return backward
        saved = backward.saved_slots
        if backward.sizes is not None:  # the sizes the backward reads, computed forward
            tracer.nslots += 1
            tracer.program.append(Sizes(tracer.nslots - 1, backward.sizes))
            saved = [*saved, tracer.nslots - 1]
    gslots = [s for _, s in grads if s is not None]
    fn, code = _codegen.generate(tracer.program, len(lifted), slots + gslots + saved)
    prog = Program(fn, code, len(slots), tracer.mutated, backward)
    k = iter(range(len(slots), len(slots) + len(gslots)))
    prog.grads = tuple((i, None if s is None else next(k)) for i, s in grads)
    prog.first_saved = len(slots) + len(gslots)
    prog.dead = tuple((j, outs[j]._data.shape, outs[j]._data.dtype) for j in dead)
    if dead:  # (their nodes' edges: the leaves eager's graph reaches, so that it runs them)
        prog.dead_in = sorted({tracer.slot_of[id(t)] for t in lifted if t._rg})
    if backward is not None:
        prog.diff_out = diff_out
        if backward.sizes is None:  # (a program for its sizes only: its outputs' are fixed)
            prog.out_meta = tuple((outs[j]._data.shape, outs[j]._data.dtype) for j in diff_out)
    return prog


def _freed(out: Tensor) -> bool:
    """Whether ``out``'s graph holds a node whose saved values a backward freed."""
    seen: set = set()
    todo = [out._grad_fn]
    while todo:
        node = todo.pop()
        if node is None or node in seen or type(node) is AccumulateGrad:
            continue
        seen.add(node)
        if node.saved is None:
            return True
        todo.extend(n for n, _ in node.next_functions)
    return False


def _capture_backward(tracer: ForwardTracer, outs: list, diff_in: list):
    """The backward of ``outs`` to the lifted inputs ``diff_in``, captured from the traced
    run's graph (compiled autograd's capture, stopping at the inputs' nodes), or the
    reason it cannot be."""
    lifted = tracer.lifted
    roots = [edge_of(o) for o in outs]
    grads = [_make(xp_of(o._data).ones_like(o._data)) for o in outs]
    inputs = [lifted[i] for i in diff_in]
    targets = {edge_of(t)[0] for t in inputs}
    try:
        w = walk(roots, grads, inputs, False, True, stop=targets)
    except _Break:
        return "its graph has a node that cannot be captured"
    for node in w.nodes:
        if node in targets:
            continue
        hooked = node._any_hooks or node._hooked
        if type(node) is AccumulateGrad or hooked or node._opaque:
            return "its graph has hooks or nodes outside the function"
    symbolic = tracer.symbolic and not any(
        type(ins) is Op and ins.op.random for ins in tracer.program
    )  # (a backward whose guard fails runs the forward again: it must draw nothing)
    run = _Capture(w, joint=True, symbolic=symbolic, sizes=tracer.sizes)
    run.run()
    if any(type(ins) is Call for ins in run.tracer.program):
        return "its backward calls into eager code"
    if symbolic:
        hoist_guards(run.tracer.program)
    saved_slots = []
    for a in w.arrays[len(roots) :]:
        slot = tracer.made.get(id(a))
        if slot is None:
            return "its backward saves a value the forward program does not make"
        saved_slots.append(slot)
    fn, code = _codegen.generate(run.tracer.program, len(w.arrays), run.outputs)
    checks = _checks(tracer, w.arrays[len(roots) :], outs)
    backward = Backward(fn, code, diff_in, saved_slots, checks, outs)
    backward.sizes = run.forward_sizes if symbolic else None
    return backward


def _checks(tracer: ForwardTracer, saved: list, outs: list) -> tuple:
    """The tensors the caller sees whose memory a saved value shares: (input slots,
    output indices), whose versions the backward checks as eager's saved tensors do."""
    seen: dict = {}
    for i, t in enumerate(tracer.lifted):
        seen.setdefault(id(_root(t._data)), ("in", i))
    for j, o in enumerate(outs):
        seen.setdefault(id(_root(o._data)), ("out", j))
    found = {seen[id(_root(a))] for a in saved if id(_root(a)) in seen}
    ins = tuple(sorted(i for kind, i in found if kind == "in"))
    outs_ = tuple(sorted(j for kind, j in found if kind == "out"))
    return ins, outs_


class Backward:
    """The captured backward of a traced forward: ``fn(grads + saved) -> input grads``."""

    def __init__(self, fn, code: str, slots: list, saved: list, checks: tuple, outs: list):
        self.fn = fn
        self.code = code
        self.slots = slots  # the lifted slots that get gradients
        self.saved_slots = saved  # the forward's slots that it saves
        self.checks = checks  # (input slots, output indices) whose versions it checks
        self.xps = [xp_of(o._data) for o in outs]  # where a missing gradient's zeros go
        self.sizes = None  # the forward's sizes it reads (a symbolic backward), as m


class Program:
    """A traced forward, replayed on the lifted tensors' arrays: returns the outputs as
    tensors, joined to autograd by one CompiledFunctionBackward node."""

    def __init__(self, fn, code: str, nout: int, mutated: dict, backward: Backward | None):
        self.fn = fn
        self.code = code
        self.nout = nout
        self.mutated = tuple(mutated.items())
        self.backward = backward
        self.vetoed: set = set()  # guard keys at which the backward ran the forward again
        self.out_meta = None  # the differentiable outputs' (shape, dtype), when fixed
        self.grads: tuple = ()  # (lifted index, result index or None): .grad set after
        self.first_saved = nout  # where the backward's saved values start in the results
        self.dead: tuple = ()  # (output index, shape, dtype): outputs whose graph is freed

    def __call__(self, lifted: list, rerun=None) -> list:
        """The outputs; ``rerun`` (the compiled frame, the call's guard key and its
        arguments) is what a symbolic backward whose guard fails runs again."""
        res = self.fn([t._data for t in lifted], None)
        n = self.nout
        outs = [_make(a) for a in res[:n]]
        b = self.backward
        if b is not None:
            node = _new(CompiledFunctionBackward)
            node._seq = next(_seq)
            node.program = b
            node.next_functions = tuple(edge_of(lifted[i]) for i in b.slots)
            node._out_meta = self.out_meta or tuple(
                (res[j].shape, res[j].dtype) for j in self.diff_out
            )
            node.saved = _Arrays(res[self.first_saved :])
            if b.sizes is not None:
                node.rerun = (rerun, [(t, t._ver.v) for t in lifted], lifted, self)
            ins, outs_ = b.checks
            checks = [(lifted[i], lifted[i]._ver.v) for i in ins]
            for k, j in enumerate(self.diff_out):
                t = outs[j]
                t._grad_fn = node
                t._rg = True
                if k:
                    t._out_nr = k
            node.checks = checks + [(outs[self.diff_out[j]], 0) for j in outs_]
        for i, j in self.grads:
            lifted[i]._grad = None if j is None else _make(res[j])
        for j, shape, dtype in self.dead:
            _freed_node(outs[j], shape, dtype, [lifted[i] for i in self.dead_in])
        for i, count in self.mutated:
            bump_version(lifted[i], count)
        return outs


def _freed_node(t: Tensor, shape, dtype, leaves: list) -> None:
    """Give ``t`` a node whose graph is freed (a backward through it raises eager's error)."""
    node = _new(_FreedBackward)
    node._seq = next(_seq)
    node.program = None
    node.leaves = leaves
    node._out_meta = ((shape, dtype),)
    node.saved = None
    node.checks = ()
    t._grad_fn = node
    t._rg = True


def _raise_modified(node: Node, t: Tensor, version: int):
    """Eager's error for a saved tensor modified in place (an output of the node names it)."""
    s = _new(Saved)
    s.version = version
    s.is_output = t._grad_fn is node
    if s.is_output:
        s.t, s.data, s.nr = t._ver, t._data, t._out_nr
    else:
        s.t = t
    s._raise_modified(node, t._ver.v)


class _Arrays(list):
    """A compiled node's saved arrays (freed by the engine as a node's saved values)."""

    __slots__ = ()


class CompiledFunctionBackward(Node):
    """The backward of a compiled forward: its captured program, on the saved arrays."""

    _name = "CompiledFunctionBackward"
    _opaque = True  # compiled autograd calls it as it is
    op = None
    attrs = None
    in_meta = None

    def apply(self, grads: list, wanted) -> list:
        if state.grad_enabled:
            raise RuntimeError(DOUBLE_BACKWARD)
        saved = self.saved
        if saved is None:
            raise RuntimeError(FREED)
        for t, version in self.checks:
            if t._ver.v != version:
                _raise_modified(self, t, version)
        b = self.program
        arrays = []
        for g, (shape, dtype), xp in zip(grads, self._out_meta, b.xps):
            if g is None:
                arrays.append(xp.zeros(shape, dtype))
            elif type(g) is not Tensor and g._level:
                raise RuntimeError(
                    "the backward of a compiled function cannot run inside a function transform"
                )
            else:
                arrays.append(g._data)
        if b.sizes is None:
            res = b.fn(arrays + saved, None)
        else:
            try:
                res = b.fn(arrays + saved[:-1], None, saved[-1])
            except Recheck:  # sizes the backward program was not made for
                return self._again(grads, wanted)
        return [None if r is None or not w else _make(r) for r, w in zip(res, wanted)]

    def _again(self, grads: list, wanted) -> list:
        """The gradients from the forward run again eagerly, on its unchanged inputs (the
        compiled frame traces these sizes anew at its next call)."""
        rerun, versions, lifted, forward = self.rerun
        if rerun is None or any(t._ver.v != v for t, v in versions):
            raise RuntimeError(
                "numtorch.compile: the backward of a compiled call at new sizes needs its "
                "forward again, and an input of it has been modified in place since"
            )
        frame, key, args, kwargs = rerun
        frame.veto(key, forward)
        with enable_grad():
            out = frame.fn(*args, **kwargs)
        flat = _tensors(out)
        outs = [flat[j] for j in forward.diff_out]
        ins = [lifted[i] for i in self.program.slots]
        grads = [g if g is not None else zeros_like(o) for g, o in zip(grads, outs)]
        got = engine.grad(outs, ins, grads, allow_unused=True)
        return [r if w else None for r, w in zip(got, wanted)]


class _FreedBackward(CompiledFunctionBackward):
    """The node of a compiled call's output whose graph a backward inside the call freed;
    its edges (to the leaves eager's graph reaches) are made when read."""

    __slots__ = ("leaves",)

    @property
    def next_functions(self) -> tuple:
        return tuple(edge_of(t) for t in self.leaves)


def _tensors(out) -> list:
    """The tensors of a function's output, in numtorch.compile's order."""
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for x in out for t in _tensors(x)]
    if isinstance(out, dict):
        return [t for x in out.values() for t in _tensors(x)]
    return []
