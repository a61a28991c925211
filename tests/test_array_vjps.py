"""Formulas' array forms (``op.on_arrays``): where the engine runs them instead of the
formulas (a backward pass nothing observes), the gradients are the formulas' to the bit,
with the same dtype and strides."""

from __future__ import annotations

import numpy as np
import pytest
from opdb import float_paths, samples

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
    assert ran


def _counting(monkeypatch) -> list:
    """Whether each array form tried ran (True) or left the call to the formula."""
    calls = []
    real = node._on_arrays

    def counting(afn, kw, fast):
        r = real(afn, kw, fast)
        calls.append(r is not None)
        return r

    monkeypatch.setattr(node, "_on_arrays", counting)
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
