"""ZeroTensors (torch._efficientzerotensor, issue 35): zeros that PyTorch keeps immutable.
Every in-place writer refuses one (its views and detached aliases too) with PyTorch's text,
before anything is written; a layout change (t_, resize_) and everything out of place is
taken. Each program runs on both libraries."""

from __future__ import annotations

import pytest
from twolibs import assert_same_outcome

import numtorch as nt


def _zt(T):
    return T._efficientzerotensor(2, 3)


WRITES = {
    "add_": lambda T, z: z.add_(1),
    "mul_": lambda T, z: z.mul_(2),
    "zero_": lambda T, z: z.zero_(),
    "fill_": lambda T, z: z.fill_(0),
    "copy_": lambda T, z: z.copy_(T.ones(2, 3)),
    "setitem": lambda T, z: z.__setitem__(0, 1.0),
    "out=": lambda T, z: T.add(T.ones(2, 3), 1, out=z),
    "index_put_": lambda T, z: z.index_put_((T.tensor([0]),), T.tensor(1.0)),
    "masked_fill_": lambda T, z: z.masked_fill_(z > 1, 1.0),
    "set_": lambda T, z: z.set_(T.ones(2, 3)),
    "view-add_": lambda T, z: z.view(6).add_(1),
    "slice-fill_": lambda T, z: z[0].fill_(1),
    "detach-add_": lambda T, z: z.detach().add_(1),
}
TAKEN = {  # (a ZeroTensor has no values to read: its shape, or a clone, is compared)
    "t_": lambda T, z: z.t_().shape,
    "resize_": lambda T, z: z.resize_(6).clone(),
    "clone-add_": lambda T, z: z.clone().add_(1),
    "plus": lambda T, z: z + 1,
    "sum": lambda T, z: z.sum(),
    "requires_grad_": lambda T, z: z.requires_grad_().requires_grad,
    "numpy": lambda T, z: z.numpy(),
    "tolist": lambda T, z: z.tolist(),
}


@pytest.mark.parametrize("name", list(WRITES) + list(TAKEN))
def test_writes_into_a_zerotensor(name):
    how = {**WRITES, **TAKEN}[name]
    assert_same_outcome(lambda T: how(T, _zt(T)))


@pytest.mark.parametrize("name", list(WRITES))
def test_a_refused_write_leaves_the_zerotensor(name):
    z = _zt(nt)
    with pytest.raises(RuntimeError, match="^ZeroTensors are immutable"):
        WRITES[name](nt, z)
    assert z.clone().tolist() == [[0.0] * 3] * 2


def test_what_is_a_zerotensor():
    assert_same_outcome(
        lambda T: (
            _zt(T).clone(),
            _zt(T)._is_zerotensor(),
            _zt(T).view(6)._is_zerotensor(),
            _zt(T).clone()._is_zerotensor(),
            T.zeros(2)._is_zerotensor(),
            _zt(T)._version,
            T._efficientzerotensor((2,), dtype=T.int64).clone(),
        )
    )
