"""Every op of the database on a GPU (CuPy) against the same op on the CPU: the outputs and
the gradient of their sum. Runs only where numtorch sees a GPU."""

from __future__ import annotations

import numpy as np
import pytest
from opdb import resolve

import numtorch as nt
from numtorch._core.op import REGISTRY
from numtorch._opdb.samples import Maker

pytestmark = pytest.mark.skipif(not nt.cuda.is_available(), reason="needs a GPU and CuPy")

# Outputs defined only up to sign or order (eigenvectors, singular vectors): their own tests
# compare what is unique (reconstructions, subspaces).
_NOT_UNIQUE = {"linalg_eigh", "linalg_svd"}


def _on(a, dev):
    if isinstance(a, np.ndarray):
        t = nt.tensor(a, device=dev)
        return t.requires_grad_(True) if a.dtype.kind == "f" else t
    if isinstance(a, (list, tuple)):
        return type(a)(_on(x, dev) for x in a)
    if isinstance(a, dict):
        return {k: _on(v, dev) for k, v in a.items()}
    return a


def _tensors(x) -> list:
    if isinstance(x, (list, tuple)):
        return [y for v in x for y in _tensors(v)]
    if isinstance(x, dict):
        return _tensors(list(x.values()))
    return [x] if isinstance(x, nt.Tensor) else []


def _run(op, sample, dev) -> list:
    """The op's outputs and the gradients of their sum, as NumPy arrays (None: no grad)."""
    args, kwargs = _on(sample.args, dev), _on(sample.kwargs, dev)
    nt.manual_seed(0)
    outs = _tensors(resolve(nt, op.api)(*args, **kwargs))
    ins = [t for t in _tensors((args, kwargs)) if t.requires_grad]
    diff = [o for o in outs if o.requires_grad]
    grads = []
    if diff and ins:
        total = sum((o.float() if o.dtype == nt.float16 else o).sum() for o in diff)
        grads = nt.autograd.grad(total, ins, allow_unused=True)
    return [None if t is None else t.detach().cpu().numpy() for t in [*outs, *grads]]


def test_every_op_on_cuda_matches_cpu():
    failed = {}
    for name, op in sorted(REGISTRY.items()):
        if op.samples is None or op.api is None or name in _NOT_UNIQUE:
            continue
        for sample in op.samples(Maker("float64", 0)):
            try:
                want = _run(op, sample, "cpu")
            except Exception:  # an error sample's business, not this test's
                continue
            try:
                got = _run(op, sample, "cuda")
                assert len(got) == len(want)
                for a, b in zip(want, got):
                    assert (a is None) == (b is None)
                    if a is not None and op.random:
                        assert a.shape == b.shape
                    elif a is not None:
                        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-8, equal_nan=True)
            except Exception as e:
                failed.setdefault(name, f"{type(e).__name__}: {str(e)[:200]}")
    assert not failed, "\n".join(f"{k}: {v}" for k, v in failed.items())


def test_cpu_and_cuda_operands_mix_as_in_pytorch():
    x = nt.ones(3, device="cuda")
    assert (x + nt.tensor(2.0)).device.type == "cuda"  # a CPU scalar tensor is accepted
    assert x[nt.tensor([0, 2])].device.type == "cuda"  # and so are CPU indices
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        x + nt.ones(3)
