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


def test_array_forms_run_in_a_plain_backward(monkeypatch):
    """The MLP backward of bench_eager runs its formulas as arrays (and only there)."""
    calls = []
    real = node._on_arrays

    def counting(afn, kw):
        r = real(afn, kw)
        calls.append(r is not None)
        return r

    monkeypatch.setattr(node, "_on_arrays", counting)
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
