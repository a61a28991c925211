"""The 'meta' device: tensors with shape, dtype and strides but no data, against PyTorch's
meta device on the same programs, and the op database's metadata rules."""

from __future__ import annotations

import time
import tracemalloc

import numpy as np
import pytest
import torch
from opdb import ops_with_samples, resolve, samples
from twolibs import assert_same_error, tensor_leaves, to_nt, to_torch

import numtorch as nt
from numtorch._core.meta import nonzero_sized, output_meta, value_sized
from numtorch._core.op import REGISTRY


def _sig(out, cls):
    """Shape, dtype, strides (of dims longer than 1; none for an empty tensor), device and
    requires_grad of every tensor in ``out``."""
    return [
        (
            tuple(t.shape),
            str(t.dtype),
            tuple(s for s, n in zip(t.stride(), t.shape) if n > 1) if t.numel() else (),
            str(t.device),
            t.requires_grad,
        )
        for t in tensor_leaves(out, cls)
    ]


def _same(prog):
    got, ref = prog(nt), prog(torch)
    assert _sig(got, nt.Tensor) == _sig(ref, torch.Tensor)
    return got, ref


# ------------------------------------------------------------------ programs
def _linear(lib):
    lib.manual_seed(0)
    return lib.nn.Linear(10, 5, device="meta")(lib.randn(4, 10, device="meta"))


def _mlp(lib):
    nn = lib.nn
    m = nn.Sequential(nn.Linear(10, 20, device="meta"), nn.ReLU(), nn.Linear(20, 3, device="meta"))
    return m(lib.randn(4, 10, device="meta"))


def _conv(lib):
    m = lib.nn.Conv2d(3, 6, 3, stride=2, padding=1, device="meta")
    return m(lib.randn(2, 3, 9, 9, device="meta"))


def _embedding(lib):
    idx = lib.zeros(2, 5, dtype=lib.long, device="meta")
    return lib.nn.Embedding(10, 4, device="meta")(idx)


def _layer_norm(lib):
    return lib.nn.LayerNorm(10, device="meta")(lib.randn(3, 4, 10, device="meta"))


def _batch_norm_train(lib):
    return lib.nn.BatchNorm1d(10, device="meta")(lib.randn(4, 10, device="meta"))


def _batch_norm_eval(lib):
    return lib.nn.BatchNorm2d(3, device="meta").eval()(lib.randn(2, 3, 4, 4, device="meta"))


def _attention(lib):
    q = lib.randn(2, 4, 6, 8, device="meta")
    k = lib.randn(2, 4, 7, 8, device="meta")
    s = (q @ k.transpose(-2, -1) / 8**0.5).softmax(-1)
    return s @ lib.randn(2, 4, 7, 8, device="meta")


def _sdpa(lib):
    q = lib.randn(2, 4, 6, 8, device="meta")
    return lib.nn.functional.scaled_dot_product_attention(q, q, q)


def _cross_entropy(lib):
    x = lib.randn(4, 10, device="meta")
    return lib.nn.functional.cross_entropy(x, lib.zeros(4, dtype=lib.long, device="meta"))


def _elementwise(lib):
    a = lib.ones(3, 1, 4, dtype=lib.int32, device="meta")
    b = lib.ones(5, 1, dtype=lib.float16, device="meta")
    return a + b, a * 2.5, a > 1, (a.t() if False else a).exp(), lib.where(a > 0, b, 0.0)


def _reductions(lib):
    x = lib.randn(3, 4, 5, device="meta")
    return x.sum(), x.sum(1), x.mean((0, 2), keepdim=True), x.sum(1, dtype=lib.float64), x.var(-1)


def _views(lib):
    x = lib.randn(3, 4, 5, device="meta")
    return x[0].t(), x.transpose(0, 2), x.permute(2, 0, 1), x.view(12, 5), x[1:, ::2, None]


def _joins(lib):
    x = lib.randn(3, 4, device="meta")
    return lib.cat([x, x], 1), lib.stack([x, x]), x.split(3, 1), x.reshape(2, 6), x.t().reshape(12)


def _matmuls(lib):
    a, b = lib.randn(2, 3, 4, device="meta"), lib.randn(4, 5, device="meta")
    return (
        a @ b,
        lib.mm(b.t(), b),
        lib.bmm(a, a.transpose(1, 2)),
        lib.mv(b.t(), lib.randn(4, device="meta")),
    )


def _factories(lib):
    x = lib.randn(2, 3, device="meta")
    return (
        lib.empty(2, 3, device="meta"),
        lib.zeros(2, dtype=lib.int64, device="meta"),
        lib.full((2,), 3, device="meta"),
        lib.rand(4, device="meta"),
        lib.arange(10, device="meta"),
        lib.eye(3, device="meta"),
        lib.tensor([1.0, 2.0], device="meta"),
        lib.zeros_like(x),
        lib.ones_like(x.t()),
        x.new_zeros(5),
        x.new_full((2, 2), 1.0),
    )


def _bfloat16(lib):
    x = lib.randn(4, 6, device="meta", dtype=lib.bfloat16)
    w = lib.randn(6, 3, device="meta", dtype=lib.bfloat16)
    y = (x @ w).softmax(-1)
    return y, y.sum(0), x.float(), x * 2.5, lib.nn.functional.gelu(x), y.argmax(-1)


def _cross_entropy_backward(lib):
    x = lib.randn(4, 10, device="meta", requires_grad=True)
    t = lib.zeros(4, dtype=lib.long, device="meta")
    lib.nn.functional.cross_entropy(x, t).backward()
    return x.grad


def _losses(lib):
    f = lib.nn.functional
    x, t = lib.rand(3, 4, device="meta"), lib.zeros(3, dtype=lib.long, device="meta")
    return (
        f.binary_cross_entropy(x, lib.rand(3, 4, device="meta")),
        f.multi_margin_loss(x, t),
        f.multilabel_margin_loss(x, lib.zeros(3, 4, dtype=lib.long, device="meta")),
        f.embedding_bag(lib.zeros(2, 3, dtype=lib.long, device="meta"), x),
        f.nll_loss(x.log_softmax(-1), t, reduction="none"),
    )


def _value_free(lib):
    """Ops whose CPU kernels read values (a check, a sign fix, a range) on shapes alone."""
    x = lib.randn(3, 5, device="meta")
    i = lib.zeros(3, 2, dtype=lib.long, device="meta")
    return (
        x.sign(),
        x.round(decimals=1),
        x.amax(1),
        x.remainder(2),
        lib.nn.functional.hardtanh(x),
        lib.special.chebyshev_polynomial_t(x, 3),
        x.gather(1, i),
        x.scatter_add(1, i, x[:, :2]),
        x.sort(1),
        x.topk(2),
        lib.fft.rfft(x),
        lib.linalg.inv(lib.randn(2, 4, 4, device="meta")),
        lib.nn.functional.max_pool2d(lib.randn(1, 2, 6, 6, device="meta"), 2),
    )


PROGRAMS = [
    _linear,
    _bfloat16,
    _cross_entropy_backward,
    _losses,
    _value_free,
    _mlp,
    _conv,
    _embedding,
    _layer_norm,
    _batch_norm_train,
    _batch_norm_eval,
    _attention,
    _sdpa,
    _cross_entropy,
    _elementwise,
    _reductions,
    _views,
    _joins,
    _matmuls,
    _factories,
]


@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.__name__)
def test_program_metadata_matches_torch(prog):
    got, _ = _same(prog)
    assert all(t.is_meta for t in tensor_leaves(got, nt.Tensor))


def test_backward_gives_meta_grads():
    def prog(lib):
        x = lib.randn(4, 10, device="meta")
        m = lib.nn.Sequential(lib.nn.Linear(10, 8, device="meta"), lib.nn.ReLU())
        w = lib.randn(8, 3, device="meta", requires_grad=True)
        loss = (m(x) @ w).softmax(-1).sum()
        loss.backward()
        return w.grad, m[0].weight.grad, m[0].bias.grad

    _same(prog)


def test_grad_fn_names_and_requires_grad():
    def prog(lib):
        w = lib.randn(3, 4, device="meta", requires_grad=True)
        return w * 2, w.sum(1), w.t(), w.exp()

    got, ref = _same(prog)
    assert [t.grad_fn.name() for t in got] == [t.grad_fn.name() for t in ref]


# ------------------------------------------------------------------ the tensor's face
def test_repr_and_device():
    def prog(lib):
        x = lib.ones(2, 3, device="meta")
        return [
            repr(x),
            repr(lib.empty(0, device="meta")),
            repr(lib.tensor(3.0, device="meta")),
            repr(lib.ones(2, dtype=lib.int64, device="meta")),
            repr(lib.ones(2, 3, device="meta", requires_grad=True)),
            repr(lib.ones(2, 3, device="meta", requires_grad=True) * 2),
            repr(x.double()),
            str(x.device),
            repr(lib.device("meta")),
            x.is_meta,
            x.device == lib.device("meta"),
            lib.ones(2).is_meta,
        ]

    got, ref = prog(nt), prog(torch)
    assert got == ref


@pytest.mark.parametrize(
    "prog",
    [
        lambda lib: lib.ones(2, 3, device="meta").sum().item(),
        lambda lib: lib.ones(2, 3, device="meta").item(),
        lambda lib: lib.ones(2, 3, device="meta").numpy(),
        lambda lib: lib.ones(2, 3, device="meta").tolist(),
        lambda lib: float(lib.ones(1, device="meta")),
        lambda lib: bool(lib.ones(1, device="meta")),
        lambda lib: lib.ones(2, 3, device="meta") + lib.ones(2, 3),
        lambda lib: lib.ones(2, 3) + lib.ones(2, 3, device="meta"),
        lambda lib: lib.ones(2, device="meta").to("cpu"),
    ],
)
def test_errors_match_torch(prog):
    assert_same_error(prog)


def test_cpu_scalar_tensor_mixes_with_meta():
    _same(lambda lib: lib.ones(2, 3, device="meta") + lib.tensor(1.0))


def _m(lib, *shape, **kw):
    return lib.ones(*shape, device="meta", **kw)


def _c(lib, *shape, **kw):
    return lib.ones(*shape, **kw)


# PyTorch's mixes of a meta and a CPU operand: its matmul family takes them (the result on
# the device of the operand its meta function allocates from), an index on the CPU is taken;
# other ops refuse them.
_MIXES = [
    lambda lib: lib.mm(_m(lib, 3, 4), _c(lib, 4, 5)),
    lambda lib: lib.mm(_c(lib, 3, 4), _m(lib, 4, 5)),
    lambda lib: lib.bmm(_m(lib, 2, 3, 4), _c(lib, 2, 4, 5)),
    lambda lib: lib.bmm(_c(lib, 2, 3, 4), _m(lib, 2, 4, 5)),
    lambda lib: lib.matmul(_m(lib, 2, 3, 4), _c(lib, 4, 5)),
    lambda lib: lib.matmul(_c(lib, 4), _m(lib, 4, 5)),
    lambda lib: _m(lib, 3, 4)[lib.tensor([0, 2])],
    lambda lib: _m(lib, 3, 4).index_select(1, lib.tensor([0, 2])),
    lambda lib: _m(lib, 3, 4).gather(0, lib.zeros(2, 4, dtype=lib.long)),
    lambda lib: lib.mv(_m(lib, 3, 4), _c(lib, 4)),
    lambda lib: lib.dot(_c(lib, 4), _m(lib, 4)),
    lambda lib: lib.outer(_m(lib, 3), _c(lib, 4)),
    lambda lib: lib.cat([_m(lib, 3), _c(lib, 4)]),
    lambda lib: lib.where(_m(lib, 3) > 0, _m(lib, 3), _c(lib, 3)),
]


@pytest.mark.parametrize("prog", _MIXES)
def test_meta_and_cpu_operands_mix_as_in_torch(prog):
    try:
        prog(torch)
    except RuntimeError:
        assert_same_error(prog)
    else:
        _same(prog)


def test_op_without_a_rule_raises_not_implemented():
    x = nt.ones(3, device="meta")
    assert_same_error(lambda lib: lib.geqrf(lib.ones(3, 3, device="meta")))
    assert_same_error(lambda lib: lib.ones(3, device="meta").nonzero())
    assert_same_error(lambda lib: lib.ones(3, device="meta").masked_select(lib.ones(3) > 0))
    assert x.is_meta


# ------------------------------------------------------------------ modules and devices
def test_never_allocates():
    tracemalloc.start()
    try:
        start = time.perf_counter()
        m = nt.nn.Linear(100_000, 100_000, device="meta")
        y = m(nt.randn(64, 100_000, device="meta"))
        y.sum().backward()
        elapsed = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert tuple(y.shape) == (64, 100_000) and tuple(m.weight.grad.shape) == (100_000, 100_000)
    assert peak < 2**20, peak  # (the weight alone would be 40 GB)
    assert elapsed < 30  # (no timing claim: a sanity bound far above any real run)


def test_module_to_meta_to_empty_reset_parameters():
    def prog(lib):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4)).to("meta")
        metas = [(n, p.is_meta) for n, p in m.state_dict().items()]
        m.to_empty(device="cpu")
        lib.manual_seed(1)
        m[0].reset_parameters()
        m[1].reset_parameters()
        return metas, [(n, str(p.device), tuple(p.shape)) for n, p in m.state_dict().items()]

    got, ref = prog(nt), prog(torch)
    assert got == ref


def test_reset_parameters_after_to_empty_matches_torch_values():
    def prog(lib):
        m = lib.nn.Linear(5, 3, device="meta").to_empty(device="cpu")
        lib.manual_seed(3)
        m.reset_parameters()
        return m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy()

    got, ref = prog(nt), prog(torch)
    assert got[0].shape == ref[0].shape and np.abs(got[0]).max() <= 1 / 5**0.5


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.nn.Conv1d(2, 4, 3, device="meta"),
        lambda lib: lib.nn.Conv2d(2, 4, 3, device="meta"),
        lambda lib: lib.nn.Embedding(7, 3, device="meta"),
        lambda lib: lib.nn.LayerNorm(6, device="meta"),
        lambda lib: lib.nn.BatchNorm2d(4, device="meta"),
        lambda lib: lib.nn.Linear(3, 2, bias=False, device="meta"),
    ],
)
def test_layers_built_on_meta(make):
    def prog(lib):
        return [p for _, p in sorted(make(lib).state_dict().items())]

    _same(prog)


def test_default_device_and_context_manager():
    def prog(lib):
        with lib.device("meta"):
            a = lib.ones(3)
        b = lib.ones(3)
        lib.set_default_device("meta")
        try:
            c = lib.zeros(2, 2)
        finally:
            lib.set_default_device(None)
        return a, b, c

    _same(prog)


# ------------------------------------------------------------------ output_meta
def test_output_meta_predicts_a_programs_shapes():
    """Shape propagation as compiled code needs it: each op call's outputs from its inputs'
    metadata alone, checked against running the ops on data."""
    rng = np.random.default_rng(0)
    x = nt.tensor(rng.standard_normal((4, 10)).astype(np.float32))
    w = nt.tensor(rng.standard_normal((10, 6)).astype(np.float32))
    steps = [
        (REGISTRY["matmul"], (x, w), {}),
        (REGISTRY["relu"], (x @ w,), {}),
        (REGISTRY["sum"], ((x @ w).relu(), 1), {"keepdim": True}),
        (REGISTRY["cat"], ([x, x],), {"dim": 0}),
        (REGISTRY["transpose"], (x, 0, 1), {}),
        (REGISTRY["softmax"], (x, -1), {}),
        (REGISTRY["to_dtype"], (x, nt.float64), {}),
    ]
    for op, args, kwargs in steps:
        pred = output_meta(op, args, kwargs)
        real = op.fn(*args, **kwargs)
        assert [(tuple(t.shape), t.dtype, t.stride()) for t in tensor_leaves(pred, nt.Tensor)] == [
            (tuple(t.shape), t.dtype, t.stride()) for t in tensor_leaves(real, nt.Tensor)
        ], op.name
        assert all(t.is_meta for t in tensor_leaves(pred, nt.Tensor))


# ------------------------------------------------------------------ the op database
def _meta_args(x, lib):
    if isinstance(x, lib.Tensor):
        return x.to("meta")
    if isinstance(x, (list, tuple)):
        return type(x)(_meta_args(v, lib) for v in x)
    if isinstance(x, dict):
        return {k: _meta_args(v, lib) for k, v in x.items()}
    return x


def _run(lib, fn, s, conv):
    return fn(*_meta_args(conv(s.args), lib), **_meta_args(conv(s.kwargs), lib))


ORACLE = [op for op in ops_with_samples() if not op.test.no_oracle]
RULED = [pytest.param(op, id=op.name) for op in ORACLE if op.meta is not None]
# Composites run on meta through the rules of the ops they call.
COMPOSED = [pytest.param(op, id=op.name) for op in ORACLE if op.composite or op.impl]
UNRULED = [
    pytest.param(op, id=op.name)
    for op in ORACLE
    if op.meta is None and not op.composite and op.impl is None
]


# Ops whose output's size is their input's values: PyTorch refuses them on meta, and so
# does numtorch, with PyTorch's text (test_data_dependent_ops_refuse_as_torch_does).
_VALUE_SIZED = [op for op in ORACLE if op.meta in (value_sized, nonzero_sized)]


# Ops where some sample PyTorch runs on meta differs here, and why.
_DIFFERS = {
    # PyTorch's meta function differs from its own CPU kernel, which numtorch follows
    "multi_margin_loss": "torch's meta gives (1,) for a 1-d input unreduced; its CPU ()",
    "multilabel_margin_loss": "torch's meta gives (1,) for a 1-d input unreduced; its CPU ()",
    "native_batch_norm": "torch's meta saves (C,) statistics in eval; its CPU kernel (0,)",
    # numtorch reads what PyTorch keeps in its storage's metadata
    "as_strided": "the storage offset is read from the array's address",
    "as_strided_copy": "the storage offset is read from the array's address",
    "segment_reduce": "the segments' lengths are read as Python ints",
}


def _matches_torch_meta(op, dtype=None):
    """Every sample PyTorch runs on meta gives the same shapes and dtypes here."""
    checked = 0
    for s in samples(op, dtype or op.test.dtypes[0]):
        try:
            ref = _run(torch, resolve(torch, op.oracle or op.api), s, to_torch)
        except Exception:  # (PyTorch's meta kernel refuses it, or the sample is an error)
            continue
        got = _run(nt, resolve(nt, op.api), s, to_nt)
        g, r = _sig(got, nt.Tensor), _sig(ref, torch.Tensor)
        assert [x[:2] for x in g] == [x[:2] for x in r], f"{op.name} {s}"
        checked += 1
    return checked


@pytest.mark.parametrize("op", RULED)
def test_op_with_a_rule_matches_torch_meta(op):
    assert _matches_torch_meta(op) or op in _VALUE_SIZED, op.name


@pytest.mark.parametrize(
    "op",
    [
        pytest.param(op, id=op.name)
        for op in ORACLE
        if "bfloat16" in op.test.dtypes and (op.meta or op.composite or op.impl)
    ],
)
def test_bfloat16_matches_torch_meta(op):
    """bfloat16 operands compute in float32 and give bfloat16, as PyTorch's kernels."""
    _matches_torch_meta(op, "bfloat16")


@pytest.mark.parametrize("op", COMPOSED)
def test_composite_matches_torch_meta(op):
    if op.name in _DIFFERS:
        with pytest.raises((AssertionError, NotImplementedError)):
            _matches_torch_meta(op)
    else:
        _matches_torch_meta(op)


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in _VALUE_SIZED])
def test_data_dependent_ops_refuse_as_torch_does(op):
    refused = 0
    for s in samples(op, op.test.dtypes[0]):
        try:
            _run(torch, resolve(torch, op.oracle or op.api), s, to_torch)
        except NotImplementedError:
            assert_same_error(
                lambda lib: _run(
                    lib,
                    resolve(lib, op.oracle or op.api if lib is torch else op.api),
                    s,
                    to_torch if lib is torch else to_nt,
                )
            )
            refused += 1
    assert refused, op.name


@pytest.mark.parametrize("op", UNRULED)
def test_op_without_a_rule_raises(op):
    """A primitive without a rule raises PyTorch's error naming an op (its own, or one it
    calls), or runs through ops that have rules; it never computes on data."""
    for s in samples(op, op.test.dtypes[0]):
        try:
            out = _run(nt, resolve(nt, op.api), s, to_nt)
        except NotImplementedError as e:
            assert str(e).startswith(("aten::", "Cannot copy out of meta")), str(e)
        except Exception:  # (an argument error that comes before any kernel)
            pass
        else:
            assert all(t.is_meta for t in tensor_leaves(out, nt.Tensor) if t.dim()), op.name


def test_rule_counts():
    """Every elementwise, reduction and view op of the families has a rule."""
    ruled = [op for op in REGISTRY.values() if op.meta is not None]
    assert len(ruled) >= 370, len(ruled)
    for op in ORACLE:
        if op.broadcasts or op.view:
            assert op.meta is not None, op.name
