"""Tensor creation, dtypes, type promotion, conversion and printing, against PyTorch."""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest
import torch
from twolibs import arr, assert_same, assert_same_error, assert_same_outcome

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


@pytest.mark.parametrize("default", ["float64", "float16"])
def test_repr_leaves_out_the_dtypes_the_default_dtype_implies(default):
    def prog(T):
        saved = T.get_default_dtype()
        T.set_default_dtype(getattr(T, default))
        try:
            dtypes = (T.float64, T.float32, T.complex128, T.complex64, T.int64)
            return [repr(T.ones(2, dtype=d)) for d in dtypes] + [repr(T.zeros(0, dtype=T.float64))]
        finally:
            T.set_default_dtype(saved)

    assert_same(prog)


# ==================================================================
# Printing options: numtorch's repr follows set_printoptions as PyTorch's does.
_PRINTED = [
    np.array([1.0, 2000.0]),
    np.arange(2000.0),
    np.array([1e-5, 1.0]),
    np.array([1e9, 1.0]),
    np.array([1.5, np.inf, -2.0, np.nan]),
    np.array([0.0, -0.0]),
    np.array([1.2345, 3.0]),
    np.arange(10.0).reshape(5, 2) * 1.5,
    np.ones((1, 30)),
    np.arange(40.0).reshape(2, 4, 5) / 7,
    np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
    np.array(2.5),
]
_OPTIONS = [
    {},
    {"precision": 2},
    {"sci_mode": True},
    {"sci_mode": False},
    {"profile": "short"},
    {"profile": "full", "precision": 6},
    {"threshold": 5, "edgeitems": 1},
    {"threshold": 5, "edgeitems": 0},
    {"edgeitems": 0},
    {"linewidth": 40},
]


@pytest.fixture
def default_printing():
    yield
    nt.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


@pytest.mark.parametrize("options", _OPTIONS, ids=str)
def test_print_options_change_repr_as_torch(options, default_printing):
    for data in _PRINTED:
        nt.set_printoptions(**options)
        torch.set_printoptions(**options)
        assert repr(nt.tensor(data)) == repr(torch.tensor(data)), (options, data)


def test_print_options_reset_sci_mode_and_ignore_unknown_profiles(default_printing):
    for lib in (nt, torch):
        lib.set_printoptions(sci_mode=True)
        lib.set_printoptions(precision=3)
        lib.set_printoptions(profile="bogus")
    assert repr(nt.tensor([1.5, 2.0])) == repr(torch.tensor([1.5, 2.0]))


# ==================================================================
# Settings of the torch namespace.
def test_thread_counts():
    n = nt.get_num_threads()
    try:
        nt.set_num_threads(1)
        assert nt.get_num_threads() == 1
    finally:
        nt.set_num_threads(n)
    for bad in (0, -1, "a"):
        assert_same_error(lambda L: L.set_num_threads(bad))
    assert_same_error(lambda L: L.set_num_interop_threads(0))
    assert nt.get_num_interop_threads() >= 1


def test_deterministic_modes():
    def prog(L):
        seen = []
        for mode in ("default", "warn", "error", 0, 1, 2):
            L.set_deterministic_debug_mode(mode)
            seen.append(
                (
                    L.get_deterministic_debug_mode(),
                    L.are_deterministic_algorithms_enabled(),
                    L.is_deterministic_algorithms_warn_only_enabled(),
                )
            )
        L.use_deterministic_algorithms(True, warn_only=True)
        seen.append(L.get_deterministic_debug_mode())
        L.use_deterministic_algorithms(False)
        seen.append(L.get_deterministic_debug_mode())
        return seen

    assert_same(prog)
    for bad in ("x", 3, 1.5, None):
        assert_same_error(lambda L: L.set_deterministic_debug_mode(bad))
    assert_same_error(lambda L: L.use_deterministic_algorithms("a"))


def test_matmul_precision_and_warn_always():
    def prog(L):
        seen = [L.get_float32_matmul_precision()]
        for p in ("high", "medium", "highest"):
            L.set_float32_matmul_precision(p)
            seen.append(L.get_float32_matmul_precision())
        L.set_warn_always(True)
        seen.append(L.is_warn_always_enabled())
        L.set_warn_always(False)
        return seen + [L.is_warn_always_enabled()]

    assert_same(prog)
    with pytest.warns(UserWarning, match="bogus is not one of 'highest', 'high', or 'medium'"):
        nt.set_float32_matmul_precision("bogus")
    assert nt.get_float32_matmul_precision() == "highest"


def test_set_default_tensor_type_warns_and_sets_the_dtype():
    try:
        with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
            nt.set_default_tensor_type("torch.DoubleTensor")
        assert nt.get_default_dtype() == nt.float64
    finally:
        nt.set_default_dtype(nt.float32)


def test_constants_and_build_facts():
    for name in ("e", "pi", "inf", "newaxis", "has_lapack", "has_spectral", "has_openmp"):
        assert getattr(nt, name) == getattr(torch, name), name
    assert np.isnan(nt.nan)
    assert nt.compiled_with_cxx11_abi() == torch.compiled_with_cxx11_abi()
    assert nt.is_vulkan_available() is False
    assert repr(nt.strided) == repr(torch.strided) and nt.tensor(1.0).layout is nt.strided


# ==================================================================
# Tensor queries and utilities.
def test_size_and_memory_facts():
    def prog(L, x):
        views = (x, x[1], x[:, 1:], x.transpose(0, 2), x[:, ::2], x.permute(2, 0, 1))
        return [
            (v.itemsize, v.nbytes, v.storage_offset(), v.dim_order(), v.is_cpu, v.is_sparse)
            for v in views
        ]

    assert_same(prog, arr(2, 3, 4))
    assert_same(lambda L, x: (x.int().itemsize, x.bool().nbytes, x.name, x.is_pinned()), arr(2))
    assert_same_error(lambda L, x: x.unsqueeze(0).dim_order(ambiguity_check=True), arr(2))
    assert_same_error(lambda L, x: x.pin_memory(), arr(2))


@pytest.mark.parametrize("value", [0.0, -0.0, 1.0, np.nan, np.inf, -3.0])
def test_is_nonzero(value):
    assert_same(
        lambda L, x: (L.is_nonzero(x), x.is_nonzero(), x.reshape(1).is_nonzero()), np.array(value)
    )


@pytest.mark.parametrize("data", [np.zeros(0), np.ones(2)])
def test_is_nonzero_refuses_other_sizes(data):
    assert_same_error(lambda L, x: L.is_nonzero(x), data)


@pytest.mark.parametrize("dtype", DTYPES + ["complex64"])
def test_is_signed_and_same_size(dtype):
    def prog(L, x):
        x = x.to(getattr(L, dtype))
        return L.is_signed(x), x.is_signed(), L.is_same_size(x, x.t()), x.is_same_size(x[:])

    assert_same(prog, arr(2, 2))


def test_typename_and_get_device():
    for data, dtype in (([1.0], "float32"), ([1], "int64"), ([True], "bool"), ([1.0], "float64")):
        x, y = (
            nt.tensor(data, dtype=getattr(nt, dtype)),
            torch.tensor(data, dtype=getattr(torch, dtype)),
        )
        assert nt.typename(x) == torch.typename(y)
        assert nt.get_device(x) == torch.get_device(y)
    assert nt.typename(3) == torch.typename(3) and nt.typename(len) == torch.typename(len)


def test_apply_and_map():
    def prog(L, x, i):
        a = x.clone().apply_(lambda v: v * 2 + 1)
        b = i.clone().map_(i * 10, lambda p, q: p + q)
        c = x.clone().map2_(x, x[:1], lambda p, q, r: p - q * r)
        d = i.clone().apply_(lambda v: v / 3)
        return a, b, c, d

    assert_same(prog, arr(2, 3), np.arange(6).reshape(2, 3))
    assert_same_error(lambda L, x: x.requires_grad_().apply_(lambda v: v), arr(2))
    assert_same_error(lambda L, x: x.apply_(lambda v: "a"), arr(2))
    assert_same_error(lambda L, x: x.map_(x.long(), lambda p, q: p), arr(2))


def test_set_and_deprecated_resizes():
    def prog(L, x):
        a = x.new_empty(0).set_(x)
        b = x.new_empty(0).set_(x, 1, (2,), (2,))
        c = x.new_empty(3).set_()
        with pytest.warns(UserWarning, match="non-inplace resize"):
            d = x.resize(3, 2)
        with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
            e = x.resize_as(x.reshape(-1))
        return a, a.data_ptr() == x.data_ptr(), b, c.shape, d, e

    assert_same(prog, arr(2, 3))
    assert_same_error(lambda L, x: x.set_(x.long()), arr(2))
    assert_same_error(lambda L, x: x.requires_grad_().set_(x.detach()), arr(2))


def test_as_subclass_share_memory_and_detach():
    def prog(L, x):
        class Sub(L.Tensor):
            pass

        s = x.as_subclass(Sub)
        shared = x.share_memory_() is x and x.is_shared()
        d = L.detach(x.requires_grad_())
        return type(s).__name__, s.data_ptr() == x.data_ptr(), shared, d.requires_grad

    assert_same(prog, arr(2))


def test_empty_strided_and_permuted():
    def prog(L):
        return [
            L.empty_strided((2, 3), (1, 2)).stride(),
            L.empty_strided((0, 3), (5, 5)).stride(),
            str(L.empty_strided((2, 2), (0, 0), dtype=L.int64).dtype),
            L.empty_permuted((2, 3, 4), (2, 0, 1)).stride(),
            L.ones(2, dtype=L.float64).new_empty_strided((3, 2), (1, 3)).stride(),
        ]

    assert_same(prog)
    for bad in (((2, 3), (-1, 2)), ((2, 3), (1,)), ((2, -3), (1, 2)), (2, 3)):
        assert_same_error(lambda L: L.empty_strided(*bad))
    for bad in (((2, 3), (0, 0)), ((2, 3), (0,)), ((2, 3), (0, 2))):
        assert_same_error(lambda L: L.empty_permuted(*bad))


@pytest.mark.parametrize("size", [0, 1, 3, 8])
def test_nonzero_static(size):
    data = np.array([[0.0, 1.5, 0.0], [np.nan, 0.0, -2.0]])
    assert_same(
        lambda L, x: (L.nonzero_static(x, size=size), x.nonzero_static(size=size, fill_value=9)),
        data,
    )
    assert_same(lambda L, x: L.nonzero_static(x, size=size), np.array(3.0))


def test_inplace_function_forms():
    def prog(L, x, v):
        a = L.clamp_(x.clone(), -0.1, 0.1)
        b = L.clamp_min_(x.clone(), 0.0)
        c = L.clamp_max_(x.clone(), 0.0)
        d = L.clip_(x.clone(), max=0.2)
        e = L.addmv_(v.clone(), x, v[:3] if False else x[0], beta=0.5)
        f = L.as_strided_(x.clone(), (2,), (2,))
        g = L.resize_as_(x.clone(), v)
        h = L.conj_physical_(x.clone())
        return a, b, c, d, e, f, g.shape, h

    assert_same(prog, arr(3, 3), arr(3))


def test_aten_dropout_forms():
    def prog(L, x):
        return (
            L.feature_dropout(x, 0.5, False),
            L.alpha_dropout_(x.clone(), 0.5, False),
            L.feature_alpha_dropout_(x.clone(), 0.0, True),
            L.feature_dropout_(x.clone(), 1.0, True),
        )

    assert_same(prog, arr(2, 3, 4))
    assert_same_error(lambda L, x: L.alpha_dropout_(x, 1.5, True), arr(2, 3))
    assert_same_error(lambda L, x: L.feature_dropout(x, 0.5, True), arr(3))


def test_embedding_renorm_():
    def prog(L, w, i):
        out = L.embedding_renorm_(w, i, 1.0, 2.0)
        return out is w, w

    assert_same(prog, arr(5, 3) * 5, np.array([0, 1, 1]))


def test_dlpack_shares_memory_both_ways_and_refuses_grad_as_pytorch():
    x = nt.arange(4.0)
    y = nt.from_dlpack(x)
    y[0] = 9.0
    t = torch.from_dlpack(x)  # PyTorch reads numtorch's capsule
    z = nt.from_dlpack(torch.arange(3.0))
    assert x.tolist() == t.tolist() == [9.0, 1.0, 2.0, 3.0]
    assert z.tolist() == [0.0, 1.0, 2.0]
    assert torch.from_dlpack(nt.to_dlpack(nt.arange(2.0))).tolist() == [0.0, 1.0]
    for lib in (nt, torch):
        with pytest.raises(BufferError, match="Can't export tensors that require gradient"):
            lib.ones(2, requires_grad=True).__dlpack__()


def test_small_tensor_facts_match_pytorch():
    def prog(L):
        x = L.arange(4.0)
        m = L.zeros(2)
        loaded = m.module_load(L.ones(2))
        return (
            x.is_set_to(x),
            x.is_set_to(x[:2]),
            x.to_dense() is x,
            loaded,
            m,
            m.module_load(L.full((2,), 3.0), assign=True),
            L.is_storage(x),
        )

    assert_same(prog)
    for lib in (nt, torch):
        with pytest.raises(RuntimeError, match="reinforce\\(\\) was removed"):
            lib.ones(2).reinforce(1.0)
        with pytest.warns(UserWarning, match="volatile was removed"):
            assert lib.ones(2).volatile is False


# ------------------------------------------------------------------ NumPy's keyword names
# PyTorch's argument parser takes x=/a=/x1= for input=, x2= for other=, axis= for dim= and
# keepdims= for keepdim=, in every function and method it parses.
NUMPY_NAME_CALLS = {
    "sin_x": lambda T, x, y: T.sin(x=x),
    "sin_a": lambda T, x, y: T.sin(a=x),
    "sin_x1": lambda T, x, y: T.sin(x1=x),
    "add_x1_x2": lambda T, x, y: T.add(x1=x, x2=y, alpha=2),
    "add_x_other": lambda T, x, y: T.add(x=x, other=y),
    "add_input_other": lambda T, x, y: T.sub(input=x, other=y),
    "maximum": lambda T, x, y: T.maximum(x1=x, x2=y),
    "atan2": lambda T, x, y: T.atan2(x1=x, x2=y),
    "sum_a": lambda T, x, y: T.sum(a=x),
    "sum_all": lambda T, x, y: T.sum(a=x, axis=1, keepdims=True),
    "mean_input": lambda T, x, y: T.mean(input=x, dim=0),
    "method_x2": lambda T, x, y: x.mul(x2=y),
    "inplace_other": lambda T, x, y: (x * 1).add_(other=y, alpha=3),
    "inplace_x2": lambda T, x, y: (x * 1).mul_(x2=y),
    "where": lambda T, x, y: T.where(x > 0, input=x, x2=y),
    "matmul": lambda T, x, y: T.matmul(x1=x, x2=y.T),
    "transpose": lambda T, x, y: T.transpose(a=x, dim0=0, dim1=1),
    "clamp": lambda T, x, y: T.clamp(x=x, min=0),
    "linalg_norm": lambda T, x, y: T.linalg.vector_norm(x=x, axis=1),
    "special_erf": lambda T, x, y: T.special.erf(x=x),
    "fft": lambda T, x, y: T.fft.fft(x=x, axis=0),
    "F_linear": lambda T, x, y: T.nn.functional.linear(x=x, weight=y),
    "F_cosine": lambda T, x, y: T.nn.functional.cosine_similarity(x, y, axis=0),
    "F_gelu": lambda T, x, y: T.nn.functional.gelu(x=x),
}


@pytest.mark.parametrize("call", list(NUMPY_NAME_CALLS.values()), ids=list(NUMPY_NAME_CALLS))
def test_numpy_names_for_input_and_other(call):
    assert_same(lambda lib, x, y: call(lib, x, y), arr(2, 3), arr(2, 3, seed=1))


NUMPY_NAME_ERRORS = {  # the first keyword the function does not know by its own name
    "both": lambda T, x, y: T.sin(input=x, x=x),
    "two_aliases": lambda T, x, y: T.sin(x=x, a=x),
    "two_aliases_other_order": lambda T, x, y: T.sin(a=x, x=x),
    "positional_and_alias": lambda T, x, y: T.sin(x, x=x),
    "other_and_x2": lambda T, x, y: T.add(x, other=y, x2=y),
    "positional_and_x2": lambda T, x, y: T.add(x, y, x2=y),
    "alias_before_unknown": lambda T, x, y: T.add(x1=x, foo=1, x2=y),
    "method_both": lambda T, x, y: x.add(other=y, x2=y),
    "inplace_both": lambda T, x, y: (x * 1).add_(y, x2=y),
    "sum_dim_axis": lambda T, x, y: T.sum(x, dim=1, axis=0),
    "multiple_values": lambda T, x, y: T.sin(x, input=x),
    "F_relu_python": lambda T, x, y: T.nn.functional.relu(x=x),  # Python in PyTorch
    "split_python": lambda T, x, y: T.split(x=x, split_size_or_sections=1),
}


@pytest.mark.parametrize("call", list(NUMPY_NAME_ERRORS.values()), ids=list(NUMPY_NAME_ERRORS))
def test_numpy_names_refused_as_pytorch(call):
    assert_same_error(lambda lib, x, y: call(lib, x, y), arr(2, 3), arr(2, 3, seed=1))


def test_numpy_names_leave_signatures_alone():
    import inspect

    for name in ("add", "sum", "sin", "maximum"):
        ours = inspect.signature(getattr(nt, name)).parameters
        assert list(ours)[:2] in (["input", "other"], ["input", "dim"], ["input", "out"]), name
        assert not {"x", "a", "x1", "x2", "_kw"} & set(ours), name


# ------------------------------------------------------------------ torch.Size
class _Reflects:
    """An operand with reflected + and *: Size leaves the operation to it."""

    def __radd__(self, other):
        return "radd"

    def __rmul__(self, other):
        return "rmul"


_SIZE_EXPRESSIONS = {
    "size + tuple": lambda s, L: s + (4,),
    "size + size": lambda s, L: s + L.Size([1]),
    "tuple + size": lambda s, L: (4, 5) + s,
    "empty + size": lambda s, L: () + s,
    "size + bools and indexes": lambda s, L: s + (True, np.int64(3), L.tensor(7)),
    "size * int": lambda s, L: s * 2,
    "int * size": lambda s, L: 3 * s,
    "size * 0": lambda s, L: s * 0,
    "size * -1": lambda s, L: s * -1,
    "size * True": lambda s, L: s * True,
    "size * int tensor": lambda s, L: s * L.tensor(2),
    "size * numpy int": lambda s, L: s * np.int64(2),
    "size * 0-dim array": lambda s, L: s * np.array(2),
    "size + numpy float": lambda s, L: s + np.float64(2),
    "size + reflecting": lambda s, L: s + _Reflects(),
    "size * reflecting": lambda s, L: s * _Reflects(),
    "slice": lambda s, L: s[1:],
    "reversed slice": lambda s, L: s[::-1],
    "empty slice": lambda s, L: s[5:],
    "item": lambda s, L: s[-1],
    "bool index": lambda s, L: s[True],
    "hash": lambda s, L: hash(s) == hash((2, 3)),
    "equal tuple": lambda s, L: (s == (2, 3), (2, 3) == s, s != (2, 3), s == [2, 3]),
    "order": lambda s, L: (s < (3,), s <= s, s > (2,)),
    "dict key": lambda s, L: {(2, 3): "tuple"}[s],
    "repr": lambda s, L: repr(s),
    "str": lambda s, L: str(s),
    "format": lambda s, L: f"{s}",
    "empty repr": lambda s, L: repr(L.Size()),
    "numel, count, index": lambda s, L: (s.numel(), s.count(2), s.index(3), L.Size().numel()),
    "pickle": lambda s, L: pickle.loads(pickle.dumps(s)),
    "reduce": lambda s, L: s.__reduce__()[1],
    "copy": lambda s, L: (copy.copy(s), copy.deepcopy(s)),
    # refused, with PyTorch's texts
    "size + float": lambda s, L: s + (1.5,),
    "str + size": lambda s, L: ("a",) + s,
    "size + list": lambda s, L: s + [4],
    "size + int": lambda s, L: s + 1,
    "size + tensor": lambda s, L: s + L.tensor([1]),
    "size * float": lambda s, L: s * 2.0,
    "size * str": lambda s, L: s * "a",
    "size * list": lambda s, L: s * [1],
    "size * None": lambda s, L: s * None,
    "size * numpy bool": lambda s, L: s * np.bool_(True),
    "object * size": lambda s, L: object() * s,
    "index out of range": lambda s, L: s[5],
    "str index": lambda s, L: s["a"],
}


@pytest.mark.parametrize("name", list(_SIZE_EXPRESSIONS))
def test_size_operators_as_torch(name):
    """Each operator of torch.Size gives a Size (or the same number, text or error) as
    PyTorch's: a tuple on either side concatenates, ints repeat, slices stay Sizes."""
    expr = _SIZE_EXPRESSIONS[name]

    def prog(L):
        r = expr(L.Size([2, 3]), L)
        kinds = [type(v).__name__ for v in (r if isinstance(r, tuple) else (r,))]
        return type(r).__name__, kinds, r

    assert_same_outcome(prog)


# ------------------------------------------------------------------ format()
_FORMATS = {
    "float": (lambda L: L.tensor(0.5), ["", ".3f", ">8", "e"]),
    "float32 number": (lambda L: L.tensor(0.1), ["", ".2f"]),
    "float16": (lambda L: L.tensor(0.1, dtype=L.float16), ["", ".4f"]),
    "bfloat16": (lambda L: L.tensor(0.5, dtype=L.bfloat16), [""]),
    "int": (lambda L: L.tensor(3), ["", "5d", ".2f", "x"]),
    "uint8": (lambda L: L.tensor(5, dtype=L.uint8), ["", "03d"]),
    "bool": (lambda L: L.tensor(True), ["", ">6"]),
    "complex": (lambda L: L.tensor(1 + 2j), ["", ".2f"]),
    "requires grad": (lambda L: L.tensor(0.5, requires_grad=True) * 2, ["", ".2f"]),
    "view": (lambda L: L.arange(3.0)[1], ["", ".1f"]),
    "vector": (lambda L: L.tensor([0.5, 1.0]), ["", ".3f", ">40"]),
    "vector view": (lambda L: L.arange(3.0)[1:], ["", ".1f"]),
    "empty": (lambda L: L.tensor([]), ["", "d"]),
    "parameter": (lambda L: L.nn.Parameter(L.tensor(2.0)), ["", ".2f"]),
}


@pytest.mark.parametrize("name", list(_FORMATS))
def test_format_as_torch(name):
    """format()/f-strings: a 0-dim tensor formats as its Python number; any other tensor
    (and a subclass such as Parameter) as object does: its str, a TypeError for a spec."""
    make, specs = _FORMATS[name]
    for spec in specs:
        assert_same_outcome(lambda L: format(make(L), spec))


def test_format_under_transforms_as_torch():
    def under_grad(L):
        shown = []

        def f(x):
            shown.append(f"{x.sum():.3f}|{x[0]}|{x[1]:e}")
            return x.sin().sum()

        L.func.grad(f)(L.tensor([0.5, 2.0]))
        return shown

    assert_same(under_grad)
    assert_same_error(lambda L: L.func.vmap(lambda x: f"{x}")(L.ones(2)))


# ------------------------------------------------------------------ the class of views
def test_a_view_shows_the_class_name_tensor():
    """numtorch's views are a subclass kept for their autograd bookkeeping; as in PyTorch,
    where every tensor is a Tensor, its name reads Tensor everywhere it shows, and the
    class still pickles as itself."""

    def prog(L):
        v = L.arange(3.0)[1:]
        cls = type(v)
        return (
            cls.__name__,
            cls.__qualname__,
            isinstance(v, L.Tensor),
            issubclass(cls, L.Tensor),
            L.typename(v),
            pickle.loads(pickle.dumps(v)),
            copy.deepcopy(v),
        )

    assert_same(prog)
    assert_same_error(lambda L: format(L.arange(3.0)[1:], ".2f"))
    view = type(nt.arange(3.0)[1:])
    assert pickle.loads(pickle.dumps(view)) is view
    assert copy.deepcopy(view) is view
    assert pickle.loads(pickle.dumps(nt.Tensor)) is nt.Tensor


# .data shares memory but has a version counter of its own; detach shares the counter.
def _versions(T):
    x = T.zeros(3)
    d = x.data
    d[0] = 1
    seen = [x._version]
    d.add_(1)
    seen.append(x._version)
    d.copy_(T.ones(3))
    seen.append(x._version)
    x.detach().add_(1)
    return seen + [x._version, d._version, x]


def test_data_writes_leave_version_detach_shares_it():
    assert_same(_versions)


def test_saved_tensor_check_ignores_writes_through_data():
    def prog(T, w, via_data):
        w.requires_grad_()
        y = w.exp()
        (y.data if via_data else y.detach())[0] = 5
        y.sum().backward()
        return w.grad

    assert_same(prog, arr(3), True)
    assert_same_error(prog, arr(3), False)  # detach shares the counter: the check fires
