"""Inference tensors (issue 35): a tensor made in inference mode is an inference tensor, as in
PyTorch; outside the mode it refuses in-place writes (before any is made), saving for
backward, version reads and requires_grad=True, with PyTorch's texts, and takes everything
else. Each program runs on both libraries; where PyTorch raises, numtorch raises the same."""

from __future__ import annotations

import pytest
from twolibs import assert_same_outcome

import numtorch as nt


def _made(T, shape=(3,)):
    with T.inference_mode():
        return T.arange(float(shape[0] * (shape[1] if len(shape) > 1 else 1))).reshape(shape)


def _write(how):
    """A program writing into an inference tensor outside the mode."""

    def prog(T):
        x = _made(T, (2, 3))
        how(T, x)
        return x

    return prog


WRITES = {
    "add_": lambda T, x: x.add_(1),
    "mul_-no_grad": lambda T, x: _in(T.no_grad(), lambda: x.mul_(2)),
    "setitem": lambda T, x: x.__setitem__(0, 5.0),
    "setitem-mask": lambda T, x: x.__setitem__(x > 2, 0.0),
    "copy_": lambda T, x: x.copy_(T.zeros(2, 3)),
    "zero_": lambda T, x: x.zero_(),
    "fill_": lambda T, x: x.fill_(2.0),
    "out=": lambda T, x: T.add(T.ones(2, 3), 1, out=x),
    "view-add_": lambda T, x: x.view(6).add_(1),
    "slice-add_": lambda T, x: x[0].add_(1),
    "t_": lambda T, x: x.t_(),
    "unsqueeze_": lambda T, x: x.unsqueeze_(0),
    "resize_": lambda T, x: x.resize_(6),
    "set_": lambda T, x: x.set_(T.ones(2, 3)),
    "index_put_": lambda T, x: x.index_put_((T.tensor([0]),), T.tensor(9.0)),
    "clamp_": lambda T, x: x.clamp_(0.0, 1.0),
    "inference_mode(False)": lambda T, x: _in(T.inference_mode(False), lambda: x.add_(1)),
    "detach-add_": lambda T, x: x.detach().add_(1),
    "detach-view-add_": lambda T, x: x.detach().view(6).add_(1),
    "clone-add_": lambda T, x: x.clone().add_(1),
}


def _in(mode, fn):
    with mode:
        return fn()


REFUSED = [n for n in WRITES if n not in ("detach-add_", "clone-add_")]


@pytest.mark.parametrize("name", list(WRITES))
def test_in_place_write_outside_inference_mode(name):
    """PyTorch's refusal (it writes first, then refuses; numtorch refuses before writing)."""
    assert_same_outcome(_write(WRITES[name]))


@pytest.mark.parametrize("name", REFUSED)
def test_a_refused_write_leaves_the_tensor(name):
    x = _made(nt, (2, 3))
    with pytest.raises(RuntimeError, match="^Inplace update to inference tensor"):
        WRITES[name](nt, x)
    with nt.inference_mode():
        assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


PROGRAMS = {
    "is_inference": lambda T: (_made(T).is_inference(), T.ones(3).is_inference()),
    "view-is_inference": lambda T: (_made(T).view(3).is_inference(), _made(T)[1:].is_inference()),
    "result-is_inference": lambda T: (
        (_made(T) + 1).is_inference(),
        _made(T).clone().is_inference(),
    ),
    "view-made-inside": lambda T: _view_made_inside(T),
    "write-inside": lambda T: _write_inside(T),
    "version": lambda T: _made(T)._version,
    "version-detached": lambda T: _made(T).detach()._version,
    "version-normal": lambda T: T.ones(3).add_(1)._version,
    "saved-by-mul": lambda T: (T.ones(3, requires_grad=True) * _made(T)).sum(),
    "saved-by-matmul": lambda T: (T.ones(3, 3, requires_grad=True) @ _made(T, (3, 3))).sum(),
    "saved-by-exp-mul": lambda T: (T.ones(3, requires_grad=True).exp() * _made(T)).sum(),
    "not-saved-by-add": lambda T: (T.ones(3, requires_grad=True) + _made(T)).sum(),
    "no_grad-mul": lambda T: _no_grad_mul(T),
    "requires_grad_": lambda T: _made(T).requires_grad_(),
    "requires_grad_-False": lambda T: _made(T).requires_grad_(False).requires_grad,
    "requires_grad-setter": lambda T: setattr(_made(T), "requires_grad", True),
    "data-set": lambda T: _data_set(T),
}


def _view_made_inside(T):
    x = T.ones(3)
    with T.inference_mode():
        v = x.view(3)
    v.add_(1)  # a view of a normal tensor is normal
    return v.is_inference(), x


def _write_inside(T):
    x = _made(T)
    with T.inference_mode():
        x.add_(1)
    return x


def _no_grad_mul(T):
    w = T.ones(3, requires_grad=True)
    with T.no_grad():
        return (w * _made(T)).requires_grad


def _data_set(T):
    y = T.ones(3)
    y.data = _made(T)
    y.add_(1)
    return y.is_inference(), y


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_inference_tensor_outside_inference_mode(name):
    assert_same_outcome(PROGRAMS[name])
