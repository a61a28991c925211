"""A ``backward()`` called inside a function that numtorch.compile traces, made part of the
traced program: the pass is captured as compiled autograd captures one, and its kernel
calls and ``.grad`` accumulations become instructions of the forward's program, so that a
training step written as a bare loop (forward, ``loss.backward()``, in-place updates under
no_grad, ``p.grad = None``) replays as one generated function.

Only a plain pass is inlined: an implicit gradient of a real scalar, no ``inputs=`` or
``create_graph``, every node an op's (no hooks, no custom Function, no node called as it
is), every leaf a tensor the program's guards cover whose ``.grad`` is None or a value of
the program. Any other pass runs eagerly and the call finishes eagerly (the tracer's
read). The capture runs the real pass, so the traced call's effects are eager's whether
the splice succeeds or not.
"""

from __future__ import annotations

from .._core.device import xp_of
from .._core.state import state
from .._core.tensor import _make
from ..autograd.graph import AccumulateGrad, edge_of
from ..ops.binary import add_p
from ..ops.conversion import clone_p
from . import compiled_autograd
from ._capture import _Capture, _task
from ._ir import Call, Commit, Op, _Slot
from ._trace import TracedTensor
from ._walk import _LEAF, _OP, _Break, _hook_flags, walk


def refusal(tracer, t, gradient, create_graph: bool, inputs) -> str | None:
    """Why ``t.backward(...)`` cannot be inlined into ``tracer``'s program (checked before
    anything runs), or None."""
    if tracer.broken is not None or not tracer.alive:
        return "a backward after the trace stopped"
    if state.stack[-1] is not tracer:
        return "a backward under a transform"
    if tracer.symbolic:
        return "a backward inside a trace with dynamic sizes"
    if not tracer.grads:
        return "a backward in a function whose guards do not cover .grad"
    if gradient is not None or create_graph or inputs is not None:
        return "a backward with a gradient, create_graph or inputs"
    inner = t._inner
    if not inner._rg or inner._data.size != 1 or inner.dtype.is_complex:
        return "a backward eager refuses"
    return None


def inline_backward(tracer, t, retain_graph) -> str | None:
    """Run ``t.backward(retain_graph=...)`` captured, its program appended to the forward
    tracer's; the reason it could not be (nothing run then), or None. A reason found after
    the pass ran stops the trace (the call goes on eagerly)."""
    inner = t._inner
    ones = _make(xp_of(inner._data).ones_like(inner._data))
    keep = bool(retain_graph)
    try:
        w = walk([edge_of(inner)], [ones], None, True, keep)
    except _Break:
        return "a backward eager runs (a freed graph, a stale saved tensor, a custom Function)"
    why = _plain(tracer, w)
    if why is not None:
        return why
    before = {}
    for node in w.nodes:
        if type(node) is AccumulateGrad:
            before[id(node.variable)] = node.variable._grad
    run = _Capture(w, static=True)  # (the forward's guards fix its inputs' strides)
    with tracer.paused(), _task(w):
        run.run()
    compiled_autograd.account(tracer.compiler, w)
    why = _splice(tracer, w, run, before)
    if why is not None:
        tracer.stop(why)
    return None


def _plain(tracer, w) -> str | None:
    """Why the walk's pass is not one the program can hold, or None."""
    made = tracer.made
    for node, kind in zip(w.nodes, w.kinds):
        if kind == _LEAF:
            var = node.variable
            if any(_hook_flags(node)) or id(var) not in tracer.slot_of:
                return "a backward into a leaf with hooks, or one the guards do not cover"
            if var.__dict__.get("_grad_dtype", var.dtype) != var.dtype:
                return "a backward into a leaf with its own grad_dtype"
            g = var._grad
            if g is not None and (g._level or id(g._data) not in made):
                return "a backward accumulating into a .grad the function did not make"
        elif kind != _OP or node._any_hooks or node._hooked:
            return "a backward through hooks or a node called as it is"
    if any(id(a) not in made for a in w.arrays[1:]):
        return "a backward that saves a value the forward program does not make"
    return None


def _splice(tracer, w, run, before: dict) -> str | None:
    """Append the captured program to the tracer's, its inputs renamed to the forward's
    values (the root gradient a constant array of ones); the reason it cannot be, or None."""
    n = len(w.arrays)
    base = tracer.nslots
    ones = w.arrays[0]
    made = tracer.made
    saved = [made[id(a)] for a in w.arrays[1:]]

    def slot(s: int):
        if s >= n:
            return _Slot(s - n + base)
        return ones if s == 0 else _Slot(saved[s - 1])

    def ref(r):
        if type(r) is _Slot:
            return slot(r)
        if isinstance(r, list):
            return [ref(x) for x in r]
        return r

    program = []
    top = base + run.tracer.nslots - n
    for ins in run.tracer.program:
        kind = type(ins)
        if kind is Op:
            program.append(
                ins._replace(
                    refs=ref(ins.refs),
                    outs=[slot(s) for s in ins.outs],
                    scalars=[slot(s) for s in ins.scalars],
                )
            )
        elif kind is Commit:
            program.append(ins._replace(target=slot(ins.target), source=ref(ins.source)))
        elif kind is Call and ins.what == "accumulate":
            if ins.ins[0] is None:
                continue  # (no gradient reached the leaf)
            var = w.nodes[ins.node].variable
            source = slot(ins.ins[0])
            if ins.extra == "new":
                g = _Slot(top)
                top += 1
                scalars = [g] if not var._data.ndim else []
                program.append(Op(clone_p, [source], {}, [g], True, scalars, "{0}.copy()"))
                made[id(var._grad._data)] = g
                tracer.keep.append(var._grad._data)
            elif ins.extra == "add" and var._grad is before[id(var)]:
                g = _Slot(made[id(var._grad._data)])
                total = _Slot(top)
                top += 1
                program.append(Op(add_p, [g, source], {}, [total], True, [], "{0} + {1}", True))
                program.append(Commit(g, total, False, True))  # (a copy of its own)
            else:
                return "a backward whose accumulation into .grad is not plain"
        else:
            return "a backward that calls into eager code"
    tracer.program += program
    tracer.nslots = top
    tracer.backwards += 1
    return None


def grad_changes(tracer) -> list | str:
    """(lifted index, the slot its ``.grad`` ends as, or None) for each lifted tensor whose
    ``.grad`` the traced call changed; or the reason a replay cannot repeat the changes."""
    out = []
    for i, (t, g0) in enumerate(zip(tracer.lifted, tracer.grads0)):
        g = t._grad
        if g is g0:
            continue
        if not tracer.grads:
            return "a .grad set in a function whose guards do not cover .grad"
        if g is None:
            out.append((i, None))
            continue
        if isinstance(g, TracedTensor) and g._interp is tracer:
            t._grad = g._inner  # (the real tensor keeps a real gradient)
            s = g._slot
        else:
            s = None if g._level else tracer.made.get(id(g._data))
        if s is None or s < len(tracer.lifted):
            return "a .grad set to a tensor the function did not make"
        out.append((i, s))
    return out
