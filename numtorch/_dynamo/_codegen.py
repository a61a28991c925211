"""A traced program as a Python function on arrays: one line per kernel call, hook call
or accumulation, each value a local freed after its last use."""

from __future__ import annotations

import math
import re

import numpy as np

from .._core.device import xp_of
from .._core.dispatch import run_kernel
from .._core.out import internal_overlap
from .._core.symbolic import Recheck, SymFloat, SymInt, has_sym, slots_of
from .._core.tensor import _make, bump_version
from ..autograd import engine
from ..autograd.grad_layout import copy_obeying
from ._ir import Call, Commit, Factory, Guard, Op, Sizes, _Slot


def _leaf_hooks(node, grads, _extra):
    return [engine.run_hooks(node.variable._hooks, grads[0])]


def _tensor_prehooks(node, grads, _extra):
    engine.run_tensor_prehooks(node, grads)
    return grads


def _node_prehooks(node, grads, _extra):
    return engine.run_node_prehooks(node, grads)


def _accumulate(node, grads, _extra):
    engine.accumulate_grad(node.variable, grads[0], False)
    return []


def _leaf_posthooks(node, grads, _extra):
    engine.run_node_posthooks(node, [], grads)
    return []


def _node_posthooks(node, values, _extra):
    n = len(node.next_functions)
    return engine.run_node_posthooks(node, values[:n], values[n:])


def _opaque(node, grads, wanted):
    outs = node.apply(grads, list(wanted))
    return outs if node._fits else engine.validate_outputs(node, outs)


# The calls into eager code a program makes: fn(node, tensors, extra) -> tensors.
RUNTIME = {
    "leaf": _leaf_hooks,
    "tensor_pre": _tensor_prehooks,
    "node_pre": _node_prehooks,
    "accumulate": _accumulate,
    "leaf_post": _leaf_posthooks,
    "node_post": _node_posthooks,
    "opaque": _opaque,
}


def _call(fn, node, arrays, extra):
    res = fn(node, [None if a is None else _make(a) for a in arrays], extra)
    return [None if r is None else r._data for r in res]


def _fresh(var, a):
    """A first gradient accumulated into a leaf's .grad (``engine.accumulate_grad``), laid
    out as PyTorch's is."""
    return _make(copy_obeying(a, var._data))


def _add_into(var, a) -> None:
    """A gradient accumulated into a leaf's .grad (``engine.accumulate_grad``, grad mode
    off): in place where the shapes agree."""
    grad = var._grad
    gd = grad._data
    if gd.shape == a.shape and gd.flags.writeable:
        gd += a
        bump_version(grad)
    else:
        engine.accumulate_grad(var, _make(a), False)


def _commit(target, source) -> None:
    """An in-place write (as ``inplace.commit`` at level 0, its checks passed)."""
    if 0 in target.strides and internal_overlap(target):
        xp_of(target).copyto(target, source, where=source != target)
    else:
        target[...] = source


def generate(program: list, n_inputs: int, outputs: list | None) -> tuple:
    """(function, its source) for a program whose first ``n_inputs`` slots are its inputs
    and whose result is the list of ``outputs`` slots (None: it returns None)."""
    env: dict = {"rk": run_kernel, "np": np, "_call": _call, "_commit": _commit, **RUNTIME}
    env["Recheck"] = Recheck
    env["_fresh"] = _fresh
    env["_add_into"] = _add_into
    consts: dict = {}

    def const(v, kind: str = "c") -> str:
        name = consts.get(id(v))
        if name is None:
            name = consts[id(v)] = f"{kind}{len(consts)}"
            env[name] = v
        return name

    def ref(r) -> str:
        if type(r) is _Slot:
            return f"s{r}"
        if isinstance(r, list):
            return "[" + ", ".join(ref(x) for x in r) + "]"
        if type(r) is SymInt or type(r) is SymFloat:
            return r.expr
        if r is None or type(r) in (bool, int) or (type(r) is float and math.isfinite(r)):
            return repr(r)
        return const(r)

    def lit(v, kind: str = "c") -> str:
        """v as an expression: its symbolic sizes computed where the program runs."""
        if not has_sym(v):
            return ref(v) if type(v) in (bool, int) or v is None else const(v, kind)
        if type(v) is SymInt or type(v) is SymFloat:
            return v.expr
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k!r}: {lit(x)}" for k, x in v.items()) + "}"
        items = ", ".join(lit(x) for x in v)
        return f"[{items}]" if isinstance(v, list) else f"({items},)"

    last: dict = {}
    for i, ins in enumerate(program):
        for s in _reads(ins):
            last[s] = i
    keep = set(outputs or ())
    body = []
    if n_inputs:
        body.append(", ".join(f"s{i}" for i in range(n_inputs)) + ", = inputs")
    for i, ins in enumerate(program):
        kind = type(ins)
        if kind is Op:
            _op(body, ins, ref, lit, const)
        elif kind is Commit:
            body.append(f"_commit(s{ins.target}, {ref(ins.source)})")
        elif kind is Guard:
            body.append(f"if not ({ins.expr}): raise Recheck")
        elif kind is Sizes:  # sizes a symbolic backward reads
            body.append(f"s{ins.slot} = [" + ", ".join(v.expr for v in ins.sizes) + "]")
        elif kind is Factory:
            call = f"{const(ins.fn, 'factory')}(*{lit(ins.args)}, **{lit(ins.kwargs)})"
            body.append(f"s{ins.out} = {call}._data")
        else:
            _call_line(body, ins, const)
        dead = [s for s in _reads(ins) if last.get(s) == i and s not in keep]
        if dead:
            body.append("del " + ", ".join(f"s{s}" for s in sorted(set(dead))))
    if outputs is None:
        body.append("return None")
    else:
        body.append("return [" + ", ".join("None" if s is None else f"s{s}" for s in outputs) + "]")
    src = "def compiled(inputs, nodes, m=None):\n" + "".join(f"    {line}\n" for line in body)
    code = _CODE.get(src)
    if code is None:  # (a new size of a dynamic graph often makes the same text)
        if len(_CODE) >= _CODE_KEPT:
            del _CODE[next(iter(_CODE))]
        code = _CODE[src] = compile(src, "<compiled autograd>", "exec")
    exec(code, env)
    fn = env["compiled"]
    fn.consts = [env[name] for name in consts.values()]
    return fn, src


def _op(body: list, ins: Op, ref, lit, const) -> None:
    """A kernel call's lines: its expression or its kernel called directly (then the
    strides run_kernel would give), else run_kernel."""
    op, refs, attrs, outs = ins.op, ins.refs, ins.attrs, ins.outs
    lhs = ", ".join(f"s{o}" for o in outs) + ("," if op.nout != 1 else "")
    if ins.expr is None and not ins.plain:
        args = ", ".join(ref(r) for r in refs)
        body.append(f"{lhs} = rk({const(op, _ident(op.name))}, [{args}], {lit(attrs, 'attrs')})")
        return
    if ins.expr is not None:
        call = ins.expr.format(*(ref(r) for r in refs))
    else:
        args = "".join(", " + ref(r) for r in refs)
        kw = f", **{lit(attrs, 'attrs')}" if attrs else ""
        call = f"{const(op.kernel, _ident(op.name))}(np{args}{kw})"
    body.append(f"{lhs} = {call}")
    for o in ins.scalars:  # a 0-d result may come back as a NumPy scalar
        body.append(f"s{o} = np.asarray(s{o})")
    if op.layout is not None:  # the strides run_kernel gives the result
        lay, args = const(op.layout, "layout"), "[" + ", ".join(map(ref, refs)) + "]"
        for o in outs:
            body.append(
                f"if s{o}.ndim > 1 or s{o}.base is not None: "
                f"s{o} = {lay}(s{o}, {args}, {lit(attrs, 'attrs')})"
            )


def _call_line(body: list, ins: Call, const) -> None:
    """A call into eager code (an accumulation into a leaf's .grad written out)."""
    what, k, extra = ins.what, ins.node, ins.extra
    args = "[" + ", ".join("None" if s is None else f"s{s}" for s in ins.ins) + "]"
    call = f"_call({what}, nodes[{k}], {args}, {const(extra)})"
    if what == "accumulate" and extra == "new":
        body.append(f"nodes[{k}].variable._grad = _fresh(nodes[{k}].variable, {args[1:-1]})")
    elif what == "accumulate" and extra == "add":
        body.append(f"_add_into(nodes[{k}].variable, {args[1:-1]})")
    elif ins.outs:
        lhs = ", ".join("_" if s is None else f"s{s}" for s in ins.outs)
        body.append(f"{lhs}, = {call}")
    else:
        body.append(call)


# Compiled sources, by text: the constants a program's text names live in its own env
_CODE: dict = {}
_CODE_KEPT = 256


def _ident(name: str) -> str:
    return re.sub(r"\W", "_", name) + "_"


def _reads(ins) -> list:
    """The slots an instruction reads."""
    kind = type(ins)
    if kind is Op:
        refs = ins.refs
        return [s for r in refs for s in _slots(r)] + [*slots_of(refs), *slots_of(ins.attrs)]
    if kind is Commit:
        return [ins.target, *_slots(ins.source)]
    if kind is Factory:
        return [*slots_of(ins.args), *slots_of(ins.kwargs)]
    if kind is Guard:
        return list(ins.slots)
    if kind is Sizes:
        return list(slots_of(ins.sizes))
    return [s for s in ins.ins if s is not None]


def _slots(r) -> list:
    if type(r) is _Slot:
        return [int(r)]
    if isinstance(r, list):
        return [s for x in r for s in _slots(x)]
    return []
