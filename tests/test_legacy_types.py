"""The legacy tensor types (torch.FloatTensor and kin) as constructors and isinstance
targets, Tensor.type, set_default_tensor_type, autograd.Variable, torch.functional and
nn.DataParallel on the CPU, against torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from twolibs import arr, assert_same, assert_same_error

import numtorch as nt

NAMES = [
    "BFloat16Tensor",
    "BoolTensor",
    "ByteTensor",
    "CharTensor",
    "DoubleTensor",
    "FloatTensor",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "ShortTensor",
]


@pytest.mark.parametrize("name", NAMES)
def test_constructors_make_tensors_of_their_dtype(name):
    def prog(L):
        T = getattr(L, name)
        made = [T([1, 0, 1]), T([[1, 2]]), T(np.ones(2)), T(), T(2, 3), T(L.Size([1, 2]))]
        return [(str(m.dtype), tuple(m.shape), type(m) is L.Tensor) for m in made] + [made[0]]

    assert_same(prog)


@pytest.mark.parametrize("name", NAMES)
def test_isinstance_checks_dtype_and_device(name):
    for L in (nt, torch):
        T = getattr(L, name)
        matches = [
            n for n in NAMES if isinstance(L.zeros(2, dtype=getattr(L, name).dtype), getattr(L, n))
        ]
        assert matches == [name]
        assert not isinstance(3, T) and not issubclass(L.Tensor, T)
        assert not isinstance(L.zeros(2, dtype=T.dtype), L.cuda.FloatTensor)
        assert (T.dtype, T.is_cuda, T.is_sparse, T.layout) == (
            getattr(L, name).dtype,
            False,
            False,
            L.strided,
        )
    assert repr(getattr(nt, name)) == repr(getattr(torch, name))
    assert repr(getattr(nt.cuda, name)) == repr(getattr(torch.cuda, name))


@pytest.mark.parametrize(
    "prog",
    [
        lambda L: L.FloatTensor(2.5),
        lambda L: L.FloatTensor("a"),
        lambda L: L.FloatTensor(True),
        lambda L: L.FloatTensor(2, 3.0),
        lambda L: L.FloatTensor(2, -1),
        lambda L: L.FloatTensor(L.ones(2, dtype=L.float64)),
        lambda L: L.LongTensor(L.ones(2)),
        lambda L: L.FloatTensor(2, device="cuda"),
        lambda L: L.zeros(2).type("torch.Foo"),
        lambda L: L.zeros(2).type(int),
    ],
)
def test_constructor_and_type_errors_match_torch(prog):
    assert_same_error(prog)


def test_an_invalid_combination_names_what_it_got():
    for L in (nt, torch):
        with pytest.raises(
            TypeError,
            match=r"^new\(\) received an invalid combination of arguments - got \(list, int\)",
        ):
            L.FloatTensor([1, 2], 3)


def test_a_tensor_of_the_dtype_is_aliased():
    t = nt.ones(2)
    a = nt.FloatTensor(t)
    a[0] = 5.0
    assert a is not t and t[0].item() == 5.0


def test_type_names_and_conversions():
    x = arr(3)

    def prog(L, x):
        f = x.float()
        return (
            f.type(),
            f.long().type(),
            f.to(L.bfloat16).type(),
            f.to(L.complex64).type(),
            f.type(L.DoubleTensor),
            f.type("torch.IntTensor"),
            f.type(L.float64),
            f.type(L.FloatTensor) is f,
        )

    assert_same(prog, x)


def test_set_default_tensor_type():
    def prog(L):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            L.set_default_tensor_type(L.DoubleTensor)
            try:
                made = str(L.zeros(1).dtype)
                L.set_default_tensor_type("torch.HalfTensor")
                made = (made, str(L.tensor([1.5]).dtype))
            finally:
                L.set_default_tensor_type(L.FloatTensor)
        return made, caught[0].category.__name__, str(caught[0].message).split(" (Triggered")[0]

    assert_same(prog)
    for bad in (
        lambda L: L.set_default_tensor_type(L.IntTensor),
        lambda L: L.set_default_tensor_type("torch.IntTensor"),
        lambda L: L.set_default_tensor_type(3),
        lambda L: L.set_default_tensor_type("torch.Foo"),
        lambda L: L.set_default_tensor_type(L.cuda.FloatTensor),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert_same_error(bad)


def test_variable():
    x = arr(3)

    def prog(L, x):
        v = L.autograd.Variable(x, requires_grad=True)
        (v * v).sum().backward()
        return v.grad, isinstance(x, L.autograd.Variable), type(v) is L.Tensor, x.requires_grad

    assert_same(prog, x)
    assert not isinstance(np.ones(2), nt.autograd.Variable)


def test_torch_functional_names():
    import numtorch.functional as F

    for name in torch.functional.__all__:
        assert getattr(F, name).__name__ == getattr(nt, name).__name__, name
    x, y = arr(2, 3), arr(3, 2, seed=1)
    assert_same(lambda L, x, y: L.functional.einsum("ij,jk->ik", x, y), x, y)
    assert_same(lambda L, x: L.functional.atleast_3d(x).shape, x)


def test_data_parallel_on_the_cpu_runs_the_module():
    x = arr(4, 3)

    def prog(L, x):
        L.manual_seed(0)
        m = L.nn.Linear(3, 2, dtype=L.float64)
        dp = L.nn.DataParallel(m)
        return dp(x) - m(x), list(dp.state_dict()), dp.module is m, dp.device_ids

    assert_same(prog, x)
    assert_same_error(lambda L, x: L.nn.parallel.data_parallel(L.nn.Linear(3, 2), x), x)
