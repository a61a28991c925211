"""Programs written once against a library argument (numtorch or torch), run on both and
compared: values leaf by leaf, or the exception type and text."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import numtorch as nt


def arr(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def both(fn, *arrays, rtol: float = 1e-10, atol: float = 0.0):
    """Run fn(lib, *tensors) on numtorch and on torch; compare every output leaf."""
    a = fn(nt, *(nt.tensor(x) for x in arrays))
    b = fn(torch, *(torch.tensor(x) for x in arrays))
    la, lb = _leaves(a), _leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        if isinstance(y, torch.Tensor):
            assert tuple(x.shape) == tuple(y.shape)
            np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=rtol, atol=atol)
        else:
            assert x == y
    return a


def _leaves(x):
    if isinstance(x, dict):
        return [v for k in x for v in _leaves(x[k])]
    if isinstance(x, (tuple, list)):
        return [v for e in x for v in _leaves(e)]
    return [x]


def same_error(fn, *arrays):
    """fn(lib, *tensors) raises the same exception type and text on both libraries."""
    with pytest.raises(Exception) as ref:
        fn(torch, *(torch.tensor(x) for x in arrays))
    with pytest.raises(type(ref.value)) as got:
        fn(nt, *(nt.tensor(x) for x in arrays))
    assert str(got.value) == str(ref.value)
