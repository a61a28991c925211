"""Tensor creation, dtypes, type promotion, conversion and printing, against PyTorch."""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest
import torch
from twolibs import assert_same, assert_same_error

import numtorch as nt

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


# Tensors built from the same data: float32 by default, compared at rtol=1e-6.
@pytest.mark.parametrize(
    "data",
    [1, 2.5, True, [1, 2, 3], [1.0, 2.0], [[1, 2], [3, 4]], [True, False], [1, 2.0], [], 1 + 2j],
)
def test_tensor_infers_dtype_like_torch(data):
    assert_same(lambda T: T.tensor(data), rtol=1e-6, atol=0)


@pytest.mark.parametrize("d", DTYPES)
def test_tensor_with_dtype(d):
    assert_same(lambda T: T.tensor([0, 1, 2], dtype=getattr(T, d)), rtol=1e-6, atol=0)


def test_from_numpy_shares_memory_and_tensor_copies():
    a = np.arange(4.0)
    t = nt.from_numpy(a)
    c = nt.tensor(a)
    a[0] = 10.0
    assert t[0].item() == 10.0
    assert c.numpy()[0] == 0.0
    assert str(t.dtype) == "torch.float64"
    assert nt.as_tensor(a).numpy() is a


def _factories(T):
    T.manual_seed(0)
    return [
        T.zeros(2, 3),
        T.ones((2,)),
        T.empty(0, 2),
        T.full((2, 2), 7),
        T.full((2,), 1.5),
        T.full((1,), True),
        T.zeros(2, dtype=T.int32),
        T.ones_like(T.ones(2, dtype=T.int64)),
        T.zeros_like(T.ones(3)),
        T.full_like(T.ones(2), 3.0),
        T.arange(5),
        T.arange(1, 4, 0.5),
        T.arange(0.0, 1.0, 0.25),
        T.arange(10, 0, -3),
        T.linspace(0, 1, 5),
        T.linspace(-1, 1, steps=4, dtype=T.float64),
        T.eye(3),
        T.eye(2, 3, dtype=T.int64),
    ]


def test_factories_match_torch():
    assert_same(_factories, rtol=1e-6, atol=0)


def test_random_factories_shapes_dtypes_and_seed():
    def draw():
        nt.manual_seed(123)
        return [
            nt.rand(2, 3),
            nt.randn(4),
            nt.randint(0, 5, (3,)),
            nt.randint(3, (2,)),
            nt.normal(0.0, 1.0, (2,)),
            nt.normal(nt.zeros(3), 2.0),
            nt.rand_like(nt.ones(2)),
            nt.randn_like(nt.ones(2, dtype=nt.float64)),
            nt.randperm(5),
        ]

    a, b = draw(), draw()
    torch.manual_seed(0)
    ref = [
        torch.rand(2, 3),
        torch.randn(4),
        torch.randint(0, 5, (3,)),
        torch.randint(3, (2,)),
        torch.normal(0.0, 1.0, (2,)),
        torch.normal(torch.zeros(3), 2.0),
        torch.rand_like(torch.ones(2)),
        torch.randn_like(torch.ones(2, dtype=torch.float64)),
        torch.randperm(5),
    ]
    for x, y, r in zip(a, b, ref):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
        assert str(x.dtype) == str(r.dtype) and tuple(x.shape) == tuple(r.shape)
    u = nt.rand(10000).numpy()
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.02
    assert sorted(nt.randperm(6).tolist()) == list(range(6))
    assert abs(nt.randn(20000).numpy().std() - 1) < 0.03


# ------------------------------------------------------------------ type promotion
OPERANDS = [
    ("t_f32", lambda T: T.ones(2)),
    ("t_f64", lambda T: T.ones(2, dtype=T.float64)),
    ("t_i32", lambda T: T.ones(2, dtype=T.int32)),
    ("t_i64", lambda T: T.ones(2, dtype=T.int64)),
    ("t_u8", lambda T: T.ones(2, dtype=T.uint8)),
    ("t_i8", lambda T: T.ones(2, dtype=T.int8)),
    ("t_bool", lambda T: T.ones(2, dtype=T.bool)),
    ("t_f16", lambda T: T.ones(2, dtype=T.float16)),
    ("z_f64", lambda T: T.tensor(1.0, dtype=T.float64)),
    ("z_i64", lambda T: T.tensor(3)),
    ("z_f32", lambda T: T.tensor(1.0)),
    ("s_int", lambda T: 2),
    ("s_float", lambda T: 2.5),
    ("s_bool", lambda T: True),
]


@pytest.mark.parametrize("a", OPERANDS, ids=lambda p: p[0])
@pytest.mark.parametrize("b", OPERANDS, ids=lambda p: p[0])
def test_type_promotion_of_add_and_mul(a, b):
    if a[0].startswith("s_") and b[0].startswith("s_"):
        return
    if a[0] == "t_bool" and b[0] == "t_bool" or {a[0], b[0]} <= {"t_bool", "s_bool"}:
        return  # torch's bool + bool is an error case for sub; add gives bool

    def prog(T):
        x, y = a[1](T), b[1](T)
        return str((x + y).dtype), str((x * y).dtype)

    assert_same(prog)


def test_promote_types_and_result_dtype_helpers():
    def prog(T):
        return {
            (a, b): str(T.promote_types(getattr(T, a), getattr(T, b)))
            for a in DTYPES
            for b in DTYPES
        }

    assert_same(prog)


def test_int_tensor_divided_by_two_is_float32():
    assert (nt.tensor([1, 2]) / 2).dtype == nt.float32


# ------------------------------------------------------------------ conversions
def test_python_conversions():
    t = nt.tensor([[1.5, 2.0]])
    assert t.tolist() == [[1.5, 2.0]]
    s = nt.tensor(3.5)
    assert s.item() == 3.5 and float(s) == 3.5 and int(s) == 3 and bool(s) is True
    assert isinstance(nt.tensor(3).item(), int)
    with pytest.raises(
        RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"
    ):
        t.item()
    with pytest.raises(
        RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"
    ):
        bool(t)
    assert np.asarray(t).shape == (1, 2)
    assert len(nt.zeros(3, 2)) == 3


def test_metadata_methods():
    def meta(T):
        x = T.zeros(2, 3, 4)
        return [
            tuple(x.shape),
            tuple(x.size()),
            x.size(1),
            x.size(-1),
            x.dim(),
            x.ndim,
            x.numel(),
            str(x.dtype),
            str(x.device),
            x.is_leaf,
            x.requires_grad,
            x.is_floating_point(),
            x.element_size(),
            x.stride(),
            x.is_contiguous(),
            str(x.shape),
            tuple(x.mT.shape),
        ]

    assert_same(meta)


def test_to_and_casting_methods():
    def conv(T):
        x = T.tensor([1.7, -2.2])
        outs = [
            x.to(T.float64),
            x.double(),
            x.long(),
            x.int(),
            x.bool(),
            x.half(),
            x.float(),
            x.to(T.ones(1, dtype=T.int16)),
            x.type_as(T.ones(1, dtype=T.int8)),
            x.to("cpu", T.float64),
            x.to(dtype=T.int64),
            x.cpu(),
        ]
        return outs, x.to(T.float32) is x, x.type()

    assert_same(conv, rtol=1e-6, atol=0)


def test_cast_is_differentiable():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        (x.double() * 3).sum().backward()
        return x.grad

    assert_same(prog, rtol=1e-7, atol=0)


def test_clone_detach_requires_grad():
    x = nt.tensor([1.0, 2.0], requires_grad=True)
    c = x.clone()
    assert c.requires_grad and c.grad_fn.name() == "CloneBackward0" and not c.is_leaf
    d = x.detach()
    assert not d.requires_grad and d.is_leaf and d._version == x._version
    with pytest.raises(
        RuntimeError, match="you can only change requires_grad flags of leaf variables"
    ):
        c.requires_grad_(False)
    y = nt.ones(2)
    assert y.requires_grad_() is y and y.requires_grad
    y.detach_()
    assert not y.requires_grad


def test_deepcopy_and_pickle():
    x = nt.tensor([1.0, 2.0], requires_grad=True)
    y = copy.deepcopy(x)
    assert y.requires_grad and y.tolist() == [1.0, 2.0] and y._data is not x._data
    z = pickle.loads(pickle.dumps(x))
    assert z.requires_grad and z.tolist() == [1.0, 2.0]


@pytest.mark.parametrize(
    "make",
    [
        lambda T: T.tensor([1.0, 2.0, 3.0]),
        lambda T: T.tensor(1.5),
        lambda T: T.tensor([[1, 2], [3, 4]]),
        lambda T: T.tensor([True, False]),
        lambda T: T.tensor([1.0, 2.5], dtype=T.float64),
        lambda T: T.tensor([1, 2], dtype=T.int32),
        lambda T: T.tensor([0.001, 1000.0]),
        lambda T: T.tensor([1.0], requires_grad=True),
        lambda T: T.tensor([1.25, -2.5]) * T.tensor([1.0], requires_grad=True),
        lambda T: T.zeros(0),
        lambda T: T.tensor([1e-5, 1.0]),
        lambda T: T.zeros(2, 0),
    ],
)
def test_repr_matches_torch(make):
    assert_same(lambda T: repr(make(T)))


def test_python_operators_all_work():
    def ops(T):
        a = T.tensor([1.0, 2.0, 3.0])
        b = T.tensor([4.0, 5.0, 6.0])
        out = [a + b, a - b, a * b, -a, +a, 2 + a, 2 - a, 2 * a, a + 1, a - 1, a * 2]
        c = a.clone()
        c += b
        c -= 1
        c *= 2
        out.append(c)
        return out

    assert_same(ops, rtol=1e-6, atol=0)


def test_new_factories():
    def prog(lib, x):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            copied = x.new_tensor(x)
        made = [
            x.new_zeros(2, 3),
            x.new_zeros((3,)),
            x.new_ones([2]),
            x.new_full((2,), 7),
            x.new_empty(0).shape,
            x.new_tensor([1, 2]),
            x.new_zeros(2, dtype=lib.int64),
            x.new_ones(2, requires_grad=True).requires_grad,
            copied,
            lib.vmap(lambda r: r.new_zeros(3) + r)(x),
        ]
        return made, [str(w.message) for w in caught]

    assert_same(prog, np.arange(6.0).reshape(2, 3))


def test_legacy_new():
    def prog(lib, x):
        same = x.new(x)
        same[0, 0] = 9.0  # new(tensor) shares the tensor's memory
        return [
            x.new([1, 2]),
            x.new((2, 3)),
            x.new(2, 3).shape,
            x.new(lib.Size([3, 1])).shape,
            x.new().shape,
            x.new(5).shape,
            x,
        ]

    assert_same(prog, np.arange(6.0).reshape(2, 3))
    assert_same_error(lambda T: T.ones(2).new(2.5))
    assert_same_error(lambda T: T.ones(2).new(T.ones(2, dtype=T.int64)))


# ==================================================================
# The in-place sweep: internal overlap, saved outputs, errors under torch.func.


@pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")
def test_an_empty_tensors_repr_names_its_dtype():
    def prog(T):
        return [repr(T.zeros(0, dtype=d)) for d in (T.int64, T.bool, T.float64, T.float32)]

    assert_same(prog)
