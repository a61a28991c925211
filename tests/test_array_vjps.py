"""Formulas' array forms (``op.on_arrays``): where the engine runs them instead of the
formulas (a backward pass nothing observes), the gradients are the formulas' to the bit,
with the same dtype and strides."""

from __future__ import annotations

import numpy as np
import pytest
from opdb import autograd_outputs, float_arg_positions, float_paths, resolve, samples

import numtorch as nt
from numtorch._core.op import REGISTRY
from numtorch.autograd import node


def _with_forms():
    return [
        op
        for op in REGISTRY.values()
        if op.samples is not None and any(getattr(f, "on_arrays", None) for f in op.vjps)
    ]


def _grads(op, args, kwargs, seed: int, forms: bool):
    """The gradients of op's sample for random output gradients (array forms on or off)."""
    node.use_array_forms(forms)
    try:
        rng = np.random.default_rng(seed)
        leaves = []
        targs = []
        paths = {p[0] for p in float_paths(op, args) if p[1] is None}
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray):
                t = nt.from_numpy(a.copy()) if a.flags.c_contiguous else nt.from_numpy(a)
                if i in paths:
                    t.requires_grad_()
                    leaves.append(t)
                a = t
            targs.append(a)
        if not leaves:
            return None
        out = op.fn(*targs, **kwargs)
        gos = nt.from_numpy(rng.standard_normal(out.shape).astype(out.dtype.np))
        return nt.autograd.grad(out, leaves, gos, allow_unused=True)
    finally:
        node.use_array_forms(True)


def _transform_grads(op, args, kwargs, seed: int, forms: bool):
    """``_grads`` by torch.func.vjp, whose backward runs the formulas on plain inner values
    (array forms on or off)."""
    node.use_array_forms(forms)
    try:
        rng = np.random.default_rng(seed)
        paths = {p[0] for p in float_paths(op, args) if p[1] is None}
        targs = [
            nt.from_numpy(a.copy() if a.flags.c_contiguous else a)
            if isinstance(a, np.ndarray)
            else a
            for a in args
        ]
        where = [i for i in range(len(targs)) if i in paths]
        if not where:
            return None

        def f(*xs):
            full = list(targs)
            for i, x in zip(where, xs):
                full[i] = x
            return op.fn(*full, **kwargs)

        out, back = nt.func.vjp(f, *(targs[i] for i in where))
        gos = nt.from_numpy(rng.standard_normal(out.shape).astype(out.dtype.np))
        return back(gos)
    finally:
        node.use_array_forms(True)


def _step_grads(op, args, kwargs, seed: int):
    """The gradients of op's sample (each float or complex output's, for random output
    gradients), for its float and complex arguments."""
    rng = np.random.default_rng(seed)
    leaves = []
    targs = []
    paths = {p[0] for p in float_arg_positions(args, "fc") if p[1] is None}
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            a = nt.from_numpy(a.copy())
            if i in paths and (op.grad_args is None or i in op.grad_args):
                a.requires_grad_()
                leaves.append(a)
        targs.append(a)
    if not leaves:
        return None
    out = autograd_outputs(resolve(nt, op.api)(*targs, **kwargs), op)
    outs = [o for o in (out if isinstance(out, tuple) else (out,)) if o.requires_grad]
    if not outs:
        return None
    gos = []
    for o in outs:
        g = rng.standard_normal(o.shape)
        if o.dtype.is_complex:
            g = g + 1j * rng.standard_normal(o.shape)
        gos.append(nt.from_numpy(g.astype(o.dtype.np)))
    return nt.autograd.grad(outs, leaves, gos, allow_unused=True)


class _Loops(dict):
    """A table of steps that gives every op the plan's loop."""

    def get(self, op, default=None):
        return node.Node._apply


def _looped(op, args, kwargs, seed: int, monkeypatch):
    """``_step_grads`` with every node's apply run by the plan's loop, not its unrolled
    step."""
    with monkeypatch.context() as m:
        m.setattr(node, "_STEPS", _Loops())
        return _step_grads(op, args, kwargs, seed)


def _bits(t) -> np.ndarray:
    return np.ascontiguousarray(t.detach().numpy()).reshape(-1).view(np.uint8)


def _layouts(a: np.ndarray):
    """A sample's array, and the same values laid out transposed (a weight seen through .T)."""
    yield a
    if a.ndim == 2:
        yield np.asfortranarray(a)


@pytest.mark.parametrize("op", _with_forms(), ids=lambda op: op.name)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_array_forms_equal_formulas(op, dtype):
    ran = 0
    for k, s in enumerate(samples(op, dtype)):
        variants = [s.args]
        if len(s.args) == 2 and all(isinstance(a, np.ndarray) for a in s.args):
            variants = [(a, b) for a in _layouts(s.args[0]) for b in _layouts(s.args[1])]
        for args in variants:
            try:
                want = _grads(op, args, s.kwargs, k, False)
            except Exception:  # (an error sample: the formulas' path has nothing to compare)
                continue
            if want is None:
                continue
            got = _grads(op, args, s.kwargs, k, True)
            ran += 1
            for w, g in zip(want, got):
                assert (w is None) == (g is None)
                if w is None:
                    continue
                assert g.dtype == w.dtype and g.shape == w.shape and g.stride() == w.stride()
                assert np.array_equal(_bits(g), _bits(w))
                assert type(g._data) is np.ndarray  # (never a NumPy scalar)
    assert ran


def _with_steps():
    """The ops whose nodes' apply is unrolled (``node._make_step``), with samples."""
    return [
        op
        for op in REGISTRY.values()
        if op.samples is not None
        and not op.test.no_grad_test
        and any(f is not None for f in op.vjps)
        and node._make_step(op) is not node.Node._apply
    ]


@pytest.mark.parametrize("op", _with_steps(), ids=lambda op: op.name)
def test_unrolled_steps_equal_the_loop(op, monkeypatch):
    """A node's unrolled apply gives the plan's loop's gradients, to the bit, with their
    dtype and strides (array forms where they run, formulas elsewhere)."""
    ran = 0
    for k, s in enumerate(samples(op, "float64")):
        try:
            want = _looped(op, s.args, s.kwargs, k, monkeypatch)
        except Exception as e:  # (an error sample: the unrolled step raises the same)
            with pytest.raises(type(e)):
                _step_grads(op, s.args, s.kwargs, k)
            continue
        if want is None:
            continue
        got = _step_grads(op, s.args, s.kwargs, k)
        ran += 1
        for w, g in zip(want, got):
            assert (w is None) == (g is None)
            if w is not None:
                assert g.dtype == w.dtype and g.shape == w.shape and g.stride() == w.stride()
                assert np.array_equal(_bits(g), _bits(w))
                assert type(g._data) is np.ndarray  # (never a NumPy scalar)
    assert ran


@pytest.mark.parametrize("op", _with_forms(), ids=lambda op: op.name)
def test_array_forms_under_a_grad_transform_equal_formulas(op):
    ran = 0
    for k, s in enumerate(samples(op, "float32")):
        try:
            want = _transform_grads(op, s.args, s.kwargs, k, False)
        except Exception:  # (an error sample)
            continue
        if want is None:
            continue
        got = _transform_grads(op, s.args, s.kwargs, k, True)
        ran += 1
        for w, g in zip(want, got):
            assert g.dtype == w.dtype and g.shape == w.shape and g.stride() == w.stride()
            assert np.array_equal(_bits(g), _bits(w))
            assert type(g._data) is np.ndarray  # (never a NumPy scalar)
    assert ran


def _counting(monkeypatch) -> list:
    """Whether each array form tried ran (True) or left the call to the formula."""
    calls = []
    seen = set()
    for op in _with_forms():
        for f in op.vjps:
            afn = getattr(f, "on_arrays", None)
            if afn is None or f in seen:
                continue
            seen.add(f)

            def counting(*args, _afn=afn, **kwargs):
                r = _afn(*args, **kwargs)
                calls.append(r is not NotImplemented)
                return r

            monkeypatch.setattr(f, "on_arrays", counting)
    # (plans and steps made anew with the counting forms; the old ones back afterwards)
    monkeypatch.setattr(node, "_PLANS", {})
    monkeypatch.setattr(node, "_STEPS", {})
    return calls


def test_array_forms_run_in_a_grad_transforms_backward(monkeypatch):
    """torch.func.grad's backward runs its formulas on plain inner values that need no
    graph: as arrays; where they need one (x requires grad outside), the formulas run."""
    import torch

    calls = _counting(monkeypatch)
    rng = np.random.default_rng(0)
    xs, ws = rng.standard_normal((2, 1, 16)), rng.standard_normal((2, 16, 16))
    x, w = (nt.tensor(a, dtype=nt.float32) for a in (xs[0], ws[0]))

    def loss(w, x):
        h = (x @ w).relu()
        return (h * h).mean()

    gw = nt.func.grad(loss)(w, x)
    assert calls and all(calls)
    tx, tw = (torch.tensor(a, dtype=torch.float32) for a in (xs[0], ws[0]))
    np.testing.assert_allclose(gw.numpy(), torch.func.grad(loss)(tw, tx).numpy(), rtol=1e-6)
    calls.clear()
    x.requires_grad_()
    tx.requires_grad_()
    (gx,) = nt.autograd.grad(nt.func.grad(loss)(w, x).sum(), x)
    (tgx,) = torch.autograd.grad(torch.func.grad(loss)(tw, tx).sum(), tx)
    assert not all(calls)  # (the formulas whose operands need a graph)
    np.testing.assert_allclose(gx.numpy(), tgx.numpy(), rtol=1e-5, atol=1e-6)


def test_array_forms_run_in_a_plain_backward(monkeypatch):
    """The MLP backward of bench_eager runs its formulas as arrays (and only there)."""
    calls = _counting(monkeypatch)
    nt.manual_seed(0)
    x = nt.randn(1, 16)
    w = nt.randn(16, 16, requires_grad=True)
    b = nt.zeros(16, requires_grad=True)
    h = nt.relu(x @ w + b)
    (h * h).mean().backward()
    assert calls and all(calls)
    calls.clear()
    h = nt.relu(x @ w + b)
    (gw,) = nt.autograd.grad((h * h).mean(), w, create_graph=True)
    assert not calls  # a graph of the backward is built: the formulas run
    assert gw.requires_grad


def test_array_forms_of_0d_operands_give_arrays():
    """A 0-d product's array form gives a 0-d array (NumPy's product of 0-d arrays is a
    scalar), which the next node's formulas take as a tensor's."""
    import torch

    def grads(T):
        a = T.tensor(0.5, dtype=T.float64, requires_grad=True)
        b = T.tensor(3.0, dtype=T.float64, requires_grad=True)
        return T.autograd.grad(T.tanh(a) * b, (a, b))

    got, want = grads(nt), grads(torch)
    for g, w in zip(got, want):
        assert type(g._data) is np.ndarray
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-15)
