"""Dtypes against PyTorch: the dtypes ops refuse (no kernel, bool arithmetic) and accept,
integer dtype= results and autograd, sources and values of another dtype, and the texts
that name dtypes, eagerly and under transforms.

The sweep runs every op that declares ``no_kernel`` (numtorch._core.op.NoKernel) on bool and
int64 versions of its first samples and compares whether and what both libraries raise. The
other tests check the causes the random-program fuzzer found, and the places where numtorch
keeps an answer other than torch.func's (eager PyTorch agrees with us)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as fwAD
from opdb import resolve, samples
from twolibs import (
    arr,
    as_numpy,
    assert_same,
    assert_same_error,
    assert_same_outcome,
    fd_grad,
    grad_prog,
    lib_of,
    run_both,
    tensor_leaves,
    to_nt,
    to_torch,
)

import numtorch as nt
from numtorch._core.op import REGISTRY

# ==================================================================
# Causes behind the bad-input sweep's DIFFERS cases (tests/test_bad_inputs.py), fixed.


X = np.array([[0.25, 0.5, 0.75], [0.125, 0.625, 0.875]])


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, c, x: L.clamp_min(c, 0),  # a number bound: clamp's kernel
        lambda L, c, x: L.clamp_max(c, 0.5),
        lambda L, c, x: c.clamp_min_(0),
        lambda L, c, x: L.clamp_min(c, x),  # a tensor bound: maximum's
        lambda L, c, x: L.clamp_max(c, x),
        lambda L, c, x: L.nn.functional.cosine_similarity(c, x),
        lambda L, c, x: L.nn.functional.scaled_dot_product_attention(c, x, x),
        lambda L, c, x: L.nn.functional.scaled_dot_product_attention(x.long(), x, x),
    ],
)
def test_complex_and_dtype_texts(prog):
    assert_same_error(prog, X * (1 + 0.5j), X)


# ==================================================================
# Core behaviour found wrong by the nn.functional work (issue 10's follow-ups).


# ------------------------------------------------------------------ rounding and abs on bool
@pytest.mark.parametrize(
    "prog",
    [
        lambda lib, x: x.abs(),
        lambda lib, x: lib.absolute(x),
        lambda lib, x: x.floor(),
        lambda lib, x: x.round(),
        lambda lib, x: x.frac(),
    ],
    ids=["abs", "absolute", "floor", "round", "frac"],
)
def test_bool_kernels_that_do_not_exist_raise_not_implemented(prog):
    assert_same_error(prog, np.array([True, False]))


# ==================================================================
# Issue 14, "lenient where PyTorch refuses": PyTorch's refusals, before any input is modified.


# ------------------------------------------------------------------ 3. integer dtype= results
_INT_DTYPES = ["int64", "int32", "uint8", "bool"]


@pytest.mark.parametrize(
    "call",
    [
        lambda x, d: x.sum(dtype=d),
        lambda x, d: x.sum(0, dtype=d),
        lambda x, d: x.prod(dtype=d),
        lambda x, d: x.prod(1, dtype=d),
        lambda x, d: x.nansum(dtype=d),
        lambda x, d: x.cumsum(0, dtype=d),
        lambda x, d: x.cumprod(1, dtype=d),
        lambda x, d: x.mean(dtype=d),
        lambda x, d: x.nanmean(dtype=d),
        lambda x, d: lib_of(x).linalg.vector_norm(x, dtype=d),
    ],
)
@pytest.mark.parametrize("dtype", _INT_DTYPES)
def test_integer_result_of_a_tensor_that_requires_grad_is_refused(call, dtype):
    assert_same_error(
        lambda lib: call(lib.tensor(arr(2, 3), requires_grad=True), getattr(lib, dtype))
    )


def test_integer_result_under_grad_transforms_is_refused():
    assert_same_error(
        lambda lib: lib.func.grad(lambda y: y.sum(dtype=lib.int64).float())(lib.tensor(arr(3)))
    )
    assert_same_error(
        lambda lib: lib.func.vmap(
            lib.func.grad(lambda y: y.cumsum(0, dtype=lib.int32).sum().float())
        )(lib.tensor(arr(2, 3)))
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda x, d: x.sum(dtype=d),
        lambda x, d: x.sum(1, dtype=d),
        lambda x, d: x.prod(dtype=d),
        lambda x, d: x.prod(0, dtype=d),
        lambda x, d: x.nansum(dtype=d),
        lambda x, d: x.cumsum(0, dtype=d),
        lambda x, d: x.cumprod(1, dtype=d),
        lambda x, d: (x > 0).sum(dtype=d),
        lambda x, d: (x > 0).cumsum(1, dtype=d),
        lambda x, d: (x * 3).to(lib_of(x).int32).sum(dtype=d),
        lambda x, d: x[0, 0].cumsum(0, dtype=d),
    ],
)
@pytest.mark.parametrize("dtype", _INT_DTYPES)
def test_integer_dtype_results_without_autograd(call, dtype):
    """Without autograd the result has the dtype asked for (NumPy widens small integers);
    PyTorch refuses a bool scan."""

    def prog(lib, x):
        return call(x, getattr(lib, dtype))

    assert_same_outcome(prog, arr(2, 3))


def test_conversions_leave_autograd_without_error():
    def prog(lib, x):
        x = x.requires_grad_()
        outs = (x.to(lib.int64), x.long(), x.bool(), x.type(lib.int32), (x * 2).int())
        return [(o, o.requires_grad) for o in outs]

    assert_same(prog, arr(2, 3))


# ------------------------------------------------------------------ 4. a source of another dtype
def _f32(lib):
    return lib.zeros(3, 4)


_IDX, _ROWS = [[0, 1, 2, 0]], [0, 2]


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, s: _f32(lib).scatter_(0, lib.tensor(_IDX), s((1, 4))),
        lambda lib, s: _f32(lib).scatter(0, lib.tensor(_IDX), s((1, 4))),
        lambda lib, s: lib.scatter(_f32(lib), 0, lib.tensor(_IDX), s((1, 4))),
        lambda lib, s: _f32(lib).scatter_(0, lib.tensor(_IDX), s((1, 4)), reduce="add"),
        lambda lib, s: _f32(lib).scatter_add_(0, lib.tensor(_IDX), s((1, 4))),
        lambda lib, s: lib.scatter_add(_f32(lib), 0, lib.tensor(_IDX), s((1, 4))),
        lambda lib, s: _f32(lib).scatter_reduce_(0, lib.tensor(_IDX), s((1, 4)), "sum"),
        lambda lib, s: _f32(lib).scatter_reduce(0, lib.tensor(_IDX), s((1, 4)), "amax"),
        lambda lib, s: _f32(lib).scatter_(0, lib.tensor(_IDX) + 5, s((1, 4))),  # before bounds
        lambda lib, s: _f32(lib).index_add_(0, lib.tensor(_ROWS), s((2, 4))),
        lambda lib, s: lib.index_add(_f32(lib), 0, lib.tensor(_ROWS), s((2, 4)), alpha=2),
        lambda lib, s: _f32(lib).index_add_(0, lib.tensor(_ROWS), s((2, 5))),  # before shapes
        lambda lib, s: _f32(lib).index_copy_(0, lib.tensor(_ROWS), s((2, 4))),
        lambda lib, s: _f32(lib).index_copy(0, lib.tensor(_ROWS) + 5, s((2, 4))),
        lambda lib, s: _f32(lib).masked_scatter_(_f32(lib) == 0, s((12,))),
        lambda lib, s: lib.masked_scatter(_f32(lib), _f32(lib), s((12,))),  # before the mask's
        lambda lib, s: _f32(lib).put_(lib.tensor(_ROWS), s((2,))),
        lambda lib, s: _f32(lib).put(lib.tensor(_ROWS), s((3,)), accumulate=True),
        lambda lib, s: _f32(lib).index_put_((lib.tensor(_ROWS),), s((4,))),
        lambda lib, s: _f32(lib).__setitem__(lib.tensor(_ROWS), s((4,))),
        lambda lib, s: _f32(lib).__setitem__((slice(None), lib.tensor([1])), s(())),
    ],
)
@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_source_of_another_dtype_is_refused(call, dtype):
    def prog(lib):
        x = _f32(lib)
        before = x.clone()
        try:
            return call(lib, lambda shape: lib.ones(shape, dtype=getattr(lib, dtype)))
        finally:
            assert (x == before).all()

    assert_same_error(prog)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: x.scatter_(0, lib.tensor(_IDX), 2),
        lambda lib, x: x.index_fill_(0, lib.tensor(_ROWS), lib.tensor(1.0, dtype=lib.float64)),
        lambda lib, x: x.masked_fill_(x == 0, lib.tensor(1.5, dtype=lib.float64)),
        lambda lib, x: x.__setitem__(x == 0, lib.tensor(2)) or x,
        lambda lib, x: x.__setitem__(0, lib.ones(4, dtype=lib.float64)) or x,
        lambda lib, x: x.__setitem__(lib.tensor(_ROWS), 3) or x,
        lambda lib, x: x.copy_(lib.ones(3, 4, dtype=lib.float64)),
    ],
)
def test_values_of_another_dtype_pytorch_casts(call):
    assert_same(lambda lib: call(lib, _f32(lib)))


@pytest.mark.parametrize(
    "args",
    [
        ("float64", "float32", "float32"),
        ("float32", "float32", "float64"),
        ("float32", "float64", "float64"),
        ("float64", "float64", "float32"),
    ],
)
def test_addmm_names_the_mismatched_pair(args):
    def prog(lib):
        a, b, c = (getattr(lib, n) for n in args)
        return lib.zeros(3, 3, dtype=a).addmm(lib.ones(3, 4, dtype=b), lib.ones(4, 3, dtype=c))

    assert_same_error(prog)


# ==================================================================
# The dtype sweep: dtypes PyTorch refuses and the texts that name dtypes.


# ------------------------------------------------------------------ the declared refusals
_DECLARED = sorted(
    n
    for n, op in REGISTRY.items()
    if getattr(op, "no_kernel", ()) and op.samples is not None and not op.test.no_oracle
)
_KIND_DTYPES = {"b": "bool", "i": "int64", "f": "float64", "c": "complex128"}


def _as(a, dtype: str):
    """A float sample array as ``dtype`` (bools: the positive entries; ints: scaled)."""
    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
        if dtype == "complex128":
            return a.astype(np.complex128)
        return np.asarray(a > 0) if dtype == "bool" else np.asarray(np.round(a * 3), np.int64)
    if isinstance(a, list):
        return [_as(x, dtype) for x in a]
    if isinstance(a, tuple):
        return tuple(_as(x, dtype) for x in a)
    if isinstance(a, dict):
        return {k: _as(v, dtype) for k, v in a.items()}
    return a


def _outcome(fn, args, kwargs):
    try:
        out = fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        return type(e), str(e)
    outs = out if isinstance(out, tuple) else (out,)
    return "ok", tuple(str(o.dtype).replace("torch.", "") for o in outs)


def test_some_ops_declare_no_kernel():
    assert {"logcumsumexp", "median", "matmul", "argmax", "addcdiv"} <= set(_DECLARED)


@pytest.mark.parametrize("name", _DECLARED)
def test_no_kernel_matches_torch(name):
    """Each refused dtype of the declaration, on the op's first two samples: the same error
    (type and text) as PyTorch, or the same result dtypes where PyTorch runs."""
    op = REGISTRY[name]
    kinds = {c for k in op.no_kernel for c in k.kinds}
    ours, theirs = resolve(nt, op.api), resolve(torch, op.oracle or op.api)
    for s in samples(op, "float64")[:2]:
        for kind in sorted(kinds):
            args, kwargs = _as(s.args, _KIND_DTYPES[kind]), _as(s.kwargs, _KIND_DTYPES[kind])
            got = _outcome(ours, to_nt(args), to_nt(kwargs))
            want = _outcome(theirs, to_torch(args), to_torch(kwargs))
            assert got == want, f"{name} {s} as {_KIND_DTYPES[kind]}"


# ------------------------------------------------------------------ cause 1: no kernel
B = np.array([[True, False, True], [False, True, True]])
INTS = np.array([[1, -2, 3], [0, 2, -1]])
F = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=np.float32)


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, b, i: L.logcumsumexp(b, 1),
        lambda L, b, i: L.logcumsumexp(i, 0),
        lambda L, b, i: L.logaddexp(i, i),
        lambda L, b, i: L.logaddexp2(b, i),  # promotes to Long first
        lambda L, b, i: L.hypot(i, b),
        lambda L, b, i: L.median(b),
        lambda L, b, i: L.median(b, 1),
        lambda L, b, i: L.kthvalue(b, 1, 0),
        lambda L, b, i: L.topk(b, 1),
        lambda L, b, i: b.argmax(),
        lambda L, b, i: L.argmin(b, 1),
        lambda L, b, i: L.pow(b, b),
        lambda L, b, i: L.pow(True, b),
        lambda L, b, i: L.addcmul(b, b, b, value=2),
        lambda L, b, i: L.bitwise_left_shift(b, b),
        lambda L, b, i: b.mT @ b,
        lambda L, b, i: b @ b[0],
        lambda L, b, i: b[0] @ b[0],
        lambda L, b, i: b.unsqueeze(0) @ b.mT.unsqueeze(0),
        lambda L, b, i: L.mm(b, b.mT),
        lambda L, b, i: L.bmm(b.unsqueeze(0), b.mT.unsqueeze(0)),
        lambda L, b, i: L.addmm(b[:, :2], b, b.mT),
        lambda L, b, i: L.baddbmm(b[None, :, :2], b[None], b.mT[None]),
        lambda L, b, i: L.einsum("ij,kj->ik", b, b),
        lambda L, b, i: L.tensordot(b, b, dims=([1], [1])),
        lambda L, b, i: L.inner(b[0], b[1]),
        lambda L, b, i: L.trace(b[:, :2]),
        lambda L, b, i: L.linalg.cross(b, b),
        lambda L, b, i: L.var_mean(i, 1),
        lambda L, b, i: L.std_mean(b),
        lambda L, b, i: L.var(b),
        lambda L, b, i: L.floor(b),
        lambda L, b, i: b.trunc(),
        lambda L, b, i: L.round(b),
        lambda L, b, i: L.round(b, decimals=1),
        lambda L, b, i: L.round(i, decimals=1),
        lambda L, b, i: L.frac(i),
        lambda L, b, i: L.remainder(b, True),
        lambda L, b, i: L.fmod(b, b),
        lambda L, b, i: L.floor_divide(b, b[0]),
        lambda L, b, i: L.remainder(b[0], b[1, :2]),  # the broadcast error comes first
    ],
)
def test_refused_dtypes(prog):
    assert_same_error(prog, B, INTS)


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, b, i: L.pow(b, True),  # x ** True runs no kernel
        lambda L, b, i: L.pow(2.5, b),
        lambda L, b, i: L.hypot(b, L.tensor(1.0)),  # a float 0-d operand: Float
        lambda L, b, i: L.logaddexp(i, L.tensor(0.5)),
        lambda L, b, i: L.addcmul(i, b, b),
        lambda L, b, i: b[:0] @ b.mT,  # empty products run no kernel
        lambda L, b, i: L.mm(b[:, :0], b.mT[:0]),
        lambda L, b, i: L.median(b[:0]),
        lambda L, b, i: L.einsum("ij,ij->ij", b, b),
        lambda L, b, i: L.einsum("i,j->ij", b[0], b[1]),
        lambda L, b, i: (i @ i.mT, L.topk(i, 2), L.median(i, 1), i.argmax()),
        lambda L, b, i: (L.round(i), L.floor(i), L.remainder(i, 2), L.fmod(b, 2)),
        # a subscript summed within one operand sums with sum(), which promotes to int64
        lambda L, b, i: [
            L.einsum(e, x[:, :2]) for e in ("ij->i", "ij->", "ii") for x in (b, i.int())
        ],
        lambda L, b, i: (L.einsum("ii->i", b[:, :2]), L.einsum("ij,k->ik", b, b[0])),
    ],
)
def test_accepted_dtypes(prog):
    assert_same(prog, B, INTS)


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, b: L.logaddexp(b[0], b[1, :2]),
        lambda L, b: L.pow(b[0], b[1, :2]),
        lambda L, b: L.addcmul(b[0], b[1, :2], b[0]),
        lambda L, b: L.bitwise_right_shift(b[0], b[1, :2]),
        lambda L, b: L.mm(b, b),
        lambda L, b: b @ b,
        lambda L, b: L.dot(b[0], b[1, :2]),
        lambda L, b: L.bmm(b, b),
        lambda L, b: L.addmm(b[:, :2], b, b),
        lambda L, b: L.linalg.cross(b[:, :2], b[:, :2]),
        lambda L, b: L.logcumsumexp(b, 3),
        lambda L, b: L.topk(b, 1, 3),
    ],
)
def test_shapes_are_checked_before_the_dtype(prog):
    assert_same_error(prog, B)


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, b, i: L.nn.functional.conv1d(b.repeat(1, 3)[None], b[None, :, :2], None, 1, 0, 2),
        lambda L, b, i: L.nn.functional.conv3d(b.reshape(1, 1, 1, 2, 3), b.reshape(1, 1, 1, 2, 3)),
        lambda L, b, i: L.nn.functional.conv_transpose2d(b[None, None], b[None, None]),
        lambda L, b, i: L.nn.functional.conv_transpose3d(
            b.reshape(1, 1, 1, 2, 3), b[None, None, None]
        ),
        lambda L, b, i: L.nn.functional.conv2d(b[None, None], b[None, None, :, :2]),
        lambda L, b, i: L.nn.functional.conv1d(b[None], b[None, :, :2].expand(3, 2, 2), padding=3),
        lambda L, b, i: L.nn.functional.conv1d(b[:1], b[None, :1, :2]),  # unbatched
        lambda L, b, i: L.nn.functional.conv1d(b[None], b[None, :, :2], dilation=3),  # too wide
        lambda L, b, i: L.nn.functional.conv1d(b[None], b[None, :1, :2]),  # wrong channels
        lambda L, b, i: L.nn.functional.unfold(i[None, None], 2),
        lambda L, b, i: L.nn.functional.kl_div(i.double(), i),
        lambda L, b, i: L.nn.functional.nll_loss(b, i[:, 0].abs().clamp(max=2)),
        lambda L, b, i: L.nn.functional.layer_norm(i, (3,)),
        lambda L, b, i: L.nn.functional.local_response_norm(b[None], 2),
        lambda L, b, i: L.nn.functional.adaptive_max_pool3d(b.reshape(1, 1, 1, 2, 3), 1),
        lambda L, b, i: L.linalg.eigvalsh(i[:, :2]),
        lambda L, b, i: L.linalg.solve_triangular(b[:, :2], b[:, :2].double(), upper=True),
    ],
)
def test_nn_and_linalg_refusals(prog):
    assert_same_error(prog, B, INTS)


def test_nn_accepted_dtypes():
    assert_same(
        lambda L, b, i: (
            L.nn.functional.unfold(b[None, None], 2),  # bool has im2col, integers not
            L.nn.functional.conv1d(b[:0, None], b[:, None]),  # an empty batch runs no kernel
            L.nn.functional.conv1d(i[None], i[:, None].expand(2, 2, 3)),
            L.nn.functional.batch_norm(b[:0], None, None, training=True),
            L.nn.functional.mse_loss(b, i.float()),  # PyTorch's kernel promotes the bool
            L.nn.functional.smooth_l1_loss(i.double(), b, reduction="none"),
        ),
        B,
        INTS,
    )


def test_refusal_inside_transforms():
    """The check runs where the kernel runs: under vmap, grad and jvp alike."""
    assert_same_error(lambda L, b: L.func.vmap(lambda r: L.logcumsumexp(r, 0))(b), B)
    assert_same_error(lambda L, b: L.func.vmap(L.median)(b), B)
    assert_same_error(lambda L, b: L.func.vmap(lambda r: r @ r)(b[:, :2].reshape(1, 2, 2)), B)
    assert_same_error(
        lambda L, x, i: L.func.grad(lambda x: L.logaddexp(i, i).sum() + x.sum())(x), F, INTS
    )
    assert_same_error(
        lambda L, x, b: L.func.jvp(lambda x: x + L.argmax(b), (x,), (L.ones_like(x),)), F, B
    )


# ------------------------------------------------------------------ cause 2: bool arithmetic
@pytest.mark.parametrize(
    "prog",
    [
        lambda L, b, x: b - 1,
        lambda L, b, x: 1.5 - b,
        lambda L, b, x: L.rsub(b, 2),
        lambda L, b, x: L.sub(x, True),
        lambda L, b, x: -b,
        lambda L, b, x: b.neg(),
        lambda L, b, x: L.addcdiv(x, b, b),
        lambda L, b, x: L.addcdiv(x.double(), b.long(), b.long(), value=0.5),
        lambda L, b, x: L.addcdiv(x, b.long(), b),
    ],
)
def test_bool_and_integer_arithmetic_refused(prog):
    assert_same_error(prog, B, F)


def test_addcdiv_integer_division_under_transforms():
    """Refused on the original dtypes of tensor1 and tensor2, whatever input is, in every
    mode (the fuzzer's jvp and forward repros)."""
    x, i = np.array([[[-2.78]]], np.float32), np.array([[1]])
    assert_same_error(lambda L, x, i: L.addcdiv(x, i, i, value=0.5), x, i)
    assert_same_error(
        lambda L, x, i: L.func.jvp(lambda x: L.addcdiv(x, i, i, value=0.5), (x,), (x,)), x, i
    )
    xb = np.array([[-2.78], [1.0]], np.float32)
    assert_same_error(lambda L, x, i: L.func.vmap(lambda r: L.addcdiv(r, i, i))(x), xb, i)
    assert_same(lambda L, x, i: L.addcdiv(x, i, i.double()), x, i)


# ------------------------------------------------------------------ cause 3: dtype texts
@pytest.mark.parametrize(
    "prog",
    [
        lambda L, i, b, f: i.clamp_(max=1.5),  # clamp's own check: C++ names
        lambda L, i, b, f: b.clamp_(max=2),
        lambda L, i, b, f: b.clamp_(min=0.5),
        lambda L, i, b, f: i.clamp_(1, 1.5),
        lambda L, i, b, f: i.clamp_min_(1.5),
        lambda L, i, b, f: b.clamp_max_(2),
        lambda L, i, b, f: i.clamp_(min=f),  # TensorIterator's check: ScalarType names
        lambda L, i, b, f: i.clamp_min_(L.tensor(1.5)),
        lambda L, i, b, f: i.add_(f),
        lambda L, i, b, f: b.mul_(i),
        lambda L, i, b, f: i[:1].add_(f.unsqueeze(0)),  # the shape is checked first
        lambda L, i, b, f: i.clamp_(min=f.unsqueeze(0)),
        lambda L, i, b, f: L.func.vmap(lambda r: r.clamp_(max=1.5))(i),
        lambda L, i, b, f: L.func.jvp(lambda x: x.long().clamp_(max=0.5), (f,), (f,)),
    ],
)
def test_inplace_cast_errors(prog):
    assert_same_error(prog, INTS, B, F)


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, i, f: L.mm(i, f.mT),
        lambda L, i, f: L.mm(f, i.mT),
        lambda L, i, f: L.addmm(f[:, :2], i, f.mT),
        lambda L, i, f: L.addmm(f[:, :2], f, i.mT),
        lambda L, i, f: L.addmm(i[:, :2], f, f.mT),
        lambda L, i, f: L.addmv(f[:, 0], i, f[0]),
        lambda L, i, f: L.addmv(i[:, 0], f, f[0]),
        lambda L, i, f: L.baddbmm(f[None, :, :2], i[None], f.mT[None]),
        lambda L, i, f: L.addbmm(f[:, :2], i[None], f.mT[None]),
        lambda L, i, f: L.vdot(i[0], f[0]),
        lambda L, i, f: L.linalg.multi_dot([f, f.mT, i]),
        lambda L, i, f: L.linalg.vecdot(i, f),
        lambda L, i, f: L.linalg.vecdot(f, f.double()),
        lambda L, i, f: f.var_mean(0) + i.var_mean(0),
        lambda L, i, f: L.ones(3).mT,
    ],
)
def test_texts_naming_dtypes(prog):
    assert_same_error(prog, INTS, F)


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, x: L.nn.functional.conv1d(x.long(), x[:, :, :2]),
        lambda L, x: L.nn.functional.conv1d(x.long(), x[:, :, :2], x[0, :, 0]),  # bias first
        lambda L, x: L.nn.functional.conv1d(x, x[:, :, :2], x[0, :, 0].long()),
        lambda L, x: L.nn.functional.conv1d(x, x[:, :, :2].long(), x[0, :, 0]),
        lambda L, x: L.nn.functional.conv_transpose1d(x.long(), x[:, :, :2], x[0, :, 0]),
    ],
)
def test_convolution_dtype_texts(prog):
    assert_same_error(prog, np.ones((2, 2, 5)))


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, x: L.nn.functional.bilinear(x.long(), x, x[:2, None].expand(2, 3, 3)),
        lambda L, x: L.nn.functional.bilinear(x, x[:1], x[:2, None].expand(2, 3, 3).long()),
        lambda L, x: L.nn.functional.bilinear(x, x, x[:2, None].expand(2, 3, 3), x[0, :2].int()),
    ],
)
def test_bilinear_dtype_texts(prog):
    assert_same_error(prog, np.ones((2, 3)))


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, x: L.nn.functional.layer_norm(x.long(), (3,), x[0]),
        lambda L, x: L.nn.functional.layer_norm(x.long(), (3,), x[0].float()),
        lambda L, x: L.nn.functional.layer_norm(x, (3,), x[0].float()),
        lambda L, x: L.nn.functional.layer_norm(x.float(), (3,), x[0]),
        lambda L, x: L.nn.functional.layer_norm(x.float(), (3,), x[0].float(), x[0]),
        lambda L, x: L.nn.functional.group_norm(x, 1, x[0].float()),
    ],
)
def test_norm_parameter_dtype_texts(prog):
    assert_same_error(prog, np.ones((2, 3)))


def test_transposed_convolution_adds_a_bias_of_another_dtype():
    assert_same(
        lambda L, x: L.nn.functional.conv_transpose1d(x, x[:, :, :2], x[0, :, 0].long()),
        np.ones((2, 2, 5)),
    )


# ------------------------------------------------------------------ kept different from torch
def test_vmap_promotes_by_logical_shapes():
    """A batched operand 0-d per sample promotes as a 0-d tensor, as eager PyTorch does per
    sample; torch.func.vmap gives float64 here (its ternary pointwise batch rules promote
    with the physical shapes): we keep eager PyTorch's answer."""
    xb = np.array([-2.13, -4.38], np.float32).reshape(2, 1, 1, 1)
    bb = np.array([0.54, -1.47])
    progs = [
        lambda L, x, b: L.addcdiv(x, b, b, value=0.5),
        lambda L, x, b: L.addcmul(x, b, b),
        lambda L, x, b: L.where(x > 0, x, b),
        lambda L, x, b: L.clamp(x, b, b),
    ]
    for prog in progs:
        got = nt.func.vmap(lambda x, b, p=prog: p(nt, x, b), in_dims=(0, -1))(
            nt.tensor(xb), nt.tensor(bb)
        )
        eager = torch.stack([prog(torch, torch.tensor(x), torch.tensor(b)) for x, b in zip(xb, bb)])
        assert got.dtype == nt.float32 and eager.dtype == torch.float32
        np.testing.assert_allclose(got.numpy(), eager.numpy())


def test_vmap_promotes_a_0d_sample_with_a_0d_operand_as_two_0d_tensors():
    """x float32 batched, 0-d per sample, and an unbatched float64 0-d b: where(x > 0, x, b)
    is float64 in each sample (two 0-d tensors), so lerp(..., b, 0.25) takes b as its end;
    torch.func.vmap makes it float32 and lerp refuses the float64 end."""
    xb, b = np.array([1.61, -1.93], np.float32), np.array(-0.56)

    def prog(L, x, b):
        return L.lerp(L.where(x > 0, x, b), b, 0.25)

    got = nt.func.vmap(lambda x: prog(nt, x, nt.tensor(b)))(nt.tensor(xb))
    eager = torch.stack([prog(torch, torch.tensor(x), torch.tensor(b)) for x in xb])
    assert got.dtype == nt.float64 and eager.dtype == torch.float64
    np.testing.assert_allclose(got.numpy(), eager.numpy())


def test_jvp_tangents_keep_the_primal_dtype():
    """The tangent of a float32 result is float32. PyTorch's forward AD gives a float64
    tangent for addcmul(x: float32, int64, int64, value=0.5) (torch.autograd.forward_ad and
    torch.func.jvp alike) and torch.func.jvp for -2.5 + x with a 0-d x: both against its
    own rule that a tangent has its primal's dtype; the values agree."""
    x, t, i = np.array([[0.13]], np.float32), np.array([[1.58]], np.float32), np.array([[-2]])
    with fwAD.dual_level():
        d = fwAD.make_dual(torch.tensor(x), torch.tensor(t))
        p, tt = fwAD.unpack_dual(torch.addcmul(d, torch.tensor(i), torch.tensor(i), value=0.5))
    assert p.dtype == torch.float32 and tt.dtype == torch.float64  # PyTorch's bug
    ours = nt.func.jvp(
        lambda x: nt.addcmul(x, nt.tensor(i), nt.tensor(i), value=0.5),
        (nt.tensor(x),),
        (nt.tensor(t),),
    )
    assert [r.dtype for r in ours] == [nt.float32, nt.float32]
    np.testing.assert_allclose(ours[1].numpy(), tt.numpy(), rtol=1e-6)
    x0, t0 = np.array(1.72, np.float32), np.array(-0.31, np.float32)
    ours = nt.func.jvp(lambda x: -2.5 + x, (nt.tensor(x0),), (nt.tensor(t0),))
    assert [r.dtype for r in ours] == [nt.float32, nt.float32]
    with fwAD.dual_level():
        d = fwAD.make_dual(torch.tensor(x0), torch.tensor(t0))
        assert fwAD.unpack_dual(-2.5 + d)[1].dtype == torch.float32  # forward_ad agrees


def test_gradient_of_the_float_operand_beside_a_bool():
    """PyTorch's backward of atan2(bool, float) and logaddexp(bool, float) raises its bool
    Negation/Subtraction error although only the float operand needs a gradient; the
    gradient exists (finite differences), and numtorch gives it."""
    b0 = np.array([0.34, -1.2])

    def ours(fn):
        b = nt.tensor(b0, requires_grad=True)
        fn(nt, b).sum().backward()
        return b.grad.numpy()

    for fn in (
        lambda L, b: L.atan2(b.lt(1.0), b),
        lambda L, b: L.logaddexp(b, b.lt(1.0)),
    ):
        with pytest.raises(RuntimeError, match="with a bool tensor|on a bool tensor"):
            b = torch.tensor(b0, requires_grad=True)
            fn(torch, b).sum().backward()
        ref = fd_grad(lambda v, fn=fn: float(fn(nt, nt.tensor(v)).sum()), b0)
        np.testing.assert_allclose(ours(fn), ref, rtol=1e-6)


def test_vmap_subtraction_of_a_bool_is_refused():
    """torch.func.vmap lets ``bool - number`` through (``x.any(-1) - -2.5`` gives 3.5) where
    eager PyTorch refuses it per sample; numtorch refuses it under vmap too."""
    xb = np.array([[2.08, -0.88]])
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool"):
        nt.func.vmap(lambda r: r.any(-1) - -2.5)(nt.tensor(xb))
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool"):
        torch.tensor(xb[0]).any(-1) - -2.5


# ==================================================================
# bfloat16 and float8 (ml_dtypes arrays): PyTorch's promotion, conversions and rounding.

_REDUCED = ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]
_REDUCED += ["float8_e8m0fnu"]
_OTHERS = ["bool", "uint8", "int8", "int64", "float16", "float32", "float64", "complex64"]


@pytest.mark.parametrize("a", _REDUCED)
@pytest.mark.parametrize("b", _REDUCED[:3] + _OTHERS)
def test_promote_types_of_reduced_floats(a, b):
    for x, y in ((a, b), (b, a)):
        assert_same_outcome(lambda L, x=x, y=y: str(L.promote_types(getattr(L, x), getattr(L, y))))


@pytest.mark.parametrize("name", _REDUCED)
def test_reduced_dtype_attributes(name):
    def prog(L):
        d = getattr(L, name)
        f = L.finfo(d)
        flags = (d.is_floating_point, d.is_complex, d.is_signed, d.itemsize, str(d))
        return flags, (f.bits, f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.resolution)

    assert_same(prog)


# Tricky values: signed zeros, ties of bfloat16's rounding, subnormals, the largest finite
# value and beyond, inf, nan.
_EDGES = np.array(
    [0.0, -0.0, 1.0, -1.5, 1 + 2**-8, 1 + 3 * 2**-8, 3e-39, 1e-3, 0.1, 3.3e38, 1e39]
    + [-1e39, np.inf, -np.inf, np.nan, 65504.0, 2.5, -7.25]
)
_BF16 = _EDGES.astype(np.float32).astype(nt.bfloat16.np)


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, x: x + x.flip(0),
        lambda L, x: x - 0.1,
        lambda L, x: x * 3.3,
        lambda L, x: x / x.flip(0),
        lambda L, x: 2.5 / x,
        lambda L, x: x.exp(),
        lambda L, x: x.log(),
        lambda L, x: x.sqrt(),
        lambda L, x: x.sigmoid(),
        lambda L, x: x.tanh(),
        lambda L, x: x.pow(2),
        lambda L, x: x.abs().neg(),
        lambda L, x: x.clamp(-1, 1),
        lambda L, x: x.maximum(x.flip(0)),
        lambda L, x: x.round(),
        lambda L, x: x > 0.1,
        lambda L, x: x[:10].sum(),
        lambda L, x: x[:10].mean(),
        lambda L, x: x[:10].prod(),
        lambda L, x: x[:10].max(),
        lambda L, x: x[:10].cumsum(0),
        lambda L, x: x[2:8].softmax(0),
        lambda L, x: x[2:8].log_softmax(0),
        lambda L, x: x[2:8] @ x[2:8],
        lambda L, x: x[2:8].reshape(2, 3) @ x[2:5],
        lambda L, x: x[2:8].sum(dtype=L.float32),
        lambda L, x: x + L.tensor([1, 2, 3, 257, -5, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]),
        lambda L, x: x + L.tensor(0.1, dtype=L.float16).expand(18),
        lambda L, x: x * L.tensor(0.3),  # a float32 0-d tensor: the result stays bfloat16
        lambda L, x: str((x + L.tensor(np.linspace(-2, 2, 18), dtype=L.float32)).dtype),
        lambda L, x: x.float() + 0.1,
        lambda L, x: x.double().bfloat16(),
        lambda L, x: x.clone().add_(1e-2),
        lambda L, x: x.clone().mul_(L.tensor([0.3] * 18)),
        lambda L, x: L.where(x > 0, x, 0.1),
        lambda L, x: L.cat([x, x]).reshape(2, 18).t().contiguous(),
    ],
)
def test_bfloat16_results_are_bit_identical(prog):
    """PyTorch's CPU kernels compute bfloat16 in float32 and round once: so does numtorch,
    for the common ops, bit for bit."""
    assert_same(prog, _BF16, rtol=0, atol=0)


def test_bfloat16_linear_layer_and_normalization_are_bit_identical():
    w = (arr(4, 6) * 0.5).astype(np.float32).astype(nt.bfloat16.np)
    x = arr(3, 6, seed=1).astype(np.float32).astype(nt.bfloat16.np)
    assert_same(lambda L, w, x: L.nn.functional.linear(x, w).relu(), w, x, rtol=0, atol=0)
    assert_same(lambda L, w, x: L.nn.functional.layer_norm(x, (6,)), w, x, rtol=0, atol=0)


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, x: L.tensor(x.tolist(), dtype=L.bfloat16),
        lambda L, x: L.tensor(x).to(L.bfloat16),
        lambda L, x: L.tensor(x, dtype=L.bfloat16),
        lambda L, x: L.full((2,), x[4].item(), dtype=L.bfloat16),
        lambda L, x: L.tensor(x).float().bfloat16(),
        lambda L, x: L.tensor(x).type(L.bfloat16).float(),
    ],
)
def test_conversions_to_bfloat16_round_through_float32(prog):
    """PyTorch converts a double or an integer to bfloat16 through float32 (two roundings,
    where ml_dtypes rounds once): 1 + 2^-8 + 2^-30 is 1, and 2^32 + 2^24 + 1 is 2^32."""
    x = np.concatenate([_EDGES, [1 + 2**-8 + 2**-30, 2.0**32 + 2**24 + 1, -(1 + 2**-8 + 2**-30)]])
    assert_same(prog, x, rtol=0, atol=0)
    assert_same(lambda L: L.tensor([2**32 + 2**24 + 1]).to(L.bfloat16), rtol=0, atol=0)


@pytest.mark.parametrize("name", _REDUCED)
def test_conversions_to_float8_match_torch_bit_for_bit(name):
    """float8_e4m3fn saturates (inf too), e5m2's nan is 0x7F, e8m0fnu takes the magnitude;
    the others as ml_dtypes converts."""
    x = np.concatenate([_EDGES, [464.0, 470.0, 480.0, 1.25, 1.75, 3.0, 0.75, 1e-6, -2e-3]])

    def prog(L, x):
        d = getattr(L, name)
        return x.to(d), x.float().to(d), L.tensor(x.tolist(), dtype=d)

    bits = np.uint16 if name == "bfloat16" else np.uint8
    for ours, theirs in zip(*run_both(prog, x)):
        assert ours.dtype is getattr(nt, name) and theirs.dtype == getattr(torch, name)
        a, b = as_numpy(ours), as_numpy(theirs)
        nan = np.isnan(b.astype(np.float32))
        np.testing.assert_array_equal(np.isnan(a.astype(np.float32)), nan)
        if name != "bfloat16":  # (a float64 nan's bfloat16 bits vary with torch's path)
            nan[:] = False
        np.testing.assert_array_equal(a.view(bits)[~nan], b.view(bits)[~nan])


def test_bfloat16_and_its_python_and_numpy_faces():
    x = nt.tensor([1.5, -2.25, 0.1], dtype=nt.bfloat16)
    t = torch.tensor([1.5, -2.25, 0.1], dtype=torch.bfloat16)
    assert repr(x) == repr(t)
    assert repr(x.reshape(3, 1) * 1e6) == repr(t.reshape(3, 1) * 1e6)
    assert repr(nt.tensor([], dtype=nt.bfloat16)) == repr(torch.tensor([], dtype=torch.bfloat16))
    assert x.tolist() == t.tolist() and x[2].item() == t[2].item()
    assert x.is_floating_point() and x.type() == t.type() == "torch.BFloat16Tensor"
    assert x.dtype.to_complex() is nt.complex64 and x.element_size() == 2
    # NumPy: an ml_dtypes array both ways (torch.from_numpy takes none)
    a = x.numpy()
    assert a.dtype == nt.bfloat16.np and nt.from_numpy(a).dtype is nt.bfloat16
    assert nt.tensor(a).dtype is nt.bfloat16 and nt.as_tensor(a).dtype is nt.bfloat16


def test_default_dtype_bfloat16():
    def prog(L):
        old = L.get_default_dtype()
        L.set_default_dtype(L.bfloat16)
        try:
            return L.tensor([1.1, 2.0]), L.ones(2) * 0.1, str(L.get_default_dtype())
        finally:
            L.set_default_dtype(old)

    assert_same(prog, rtol=0, atol=0)


@pytest.mark.parametrize(
    "f",
    [
        lambda L, x: (x * x).sum(),
        lambda L, x: (x * 3).exp().sum(),
        lambda L, x: (x / 7 + x.float().pow(2).bfloat16()).mean(),
        lambda L, x: (x.reshape(2, 2) @ x.reshape(2, 2)).sum(),
    ],
)
def test_gradients_of_bfloat16_leaves_are_bfloat16(f):
    x = np.array([0.5, 1.5, -2.5, 3.25]).astype(nt.bfloat16.np)
    assert_same(grad_prog(f), x, rtol=0, atol=0)


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, x: x + x,
        lambda L, x: -x,
        lambda L, x: x.sum(),
        lambda L, x: x < x,
        lambda L, x: x + L.tensor([1.0, 2.0]),
        lambda L, x: L.tensor([1, 2]) * x,
        lambda L, x: x.to(L.bfloat16) + x,
    ],
)
@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu"])
def test_float8_arithmetic_is_refused(prog, name):
    """float8 promotes with no other dtype, and has no arithmetic kernel but a few."""
    x = np.array([1.0, 2.0]).astype(getattr(nt, name).np)
    assert_same_error(prog, x)


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu"])
def test_float8_copies_casts_and_views(name):
    x = np.array([[1.0, 2.0], [0.5, 4.0]]).astype(getattr(nt, name).np)

    def prog(L, x):
        y = L.cat([x, x.flip(0)]).t().contiguous()[:, 1:]
        z = L.zeros(2, 2, dtype=x.dtype).copy_(x)
        return y.float(), z.float(), (x == x.clone()), (x * x).float(), L.stack([x, x]).float()

    assert_same(prog, x, rtol=0, atol=0)


@pytest.mark.parametrize("name", _REDUCED)
def test_save_and_load_reduced_floats_both_ways(name, tmp_path):
    """bfloat16 in a BFloat16Storage, float8 in an UntypedStorage (_rebuild_tensor_v3)."""
    src = torch.tensor([[1.5, -2.25], [0.125, 3.0]]).to(getattr(torch, name))
    torch.save({"w": src, "col": src[:, 1]}, tmp_path / "t.pt")
    got = nt.load(tmp_path / "t.pt")
    assert got["w"].dtype is getattr(nt, name)
    np.testing.assert_array_equal(got["w"].float().numpy(), src.float().numpy())
    nt.save(got, tmp_path / "n.pt")
    back = torch.load(tmp_path / "n.pt")
    assert back["w"].dtype == src.dtype and torch.equal(back["w"].float(), src.float())
    assert torch.equal(back["col"].float(), src[:, 1].float())


# ==================================================================
# complex32 (chalf): ml_dtypes' complex32, computed in complex64 and rounded once, as PyTorch's
# CPU kernels do; most kernels refuse it.

_C32 = nt.complex32.np
_CH = np.array([1 + 2j, 3.3 - 1j, -0.5 + 0.25j, 6e4 + 1e-9j, complex(1 + 2**-11 + 2**-40, 0.5)])


def _chalf_bits(t) -> np.ndarray:
    """The complex32 values of a tensor of either library, as int32 bits; another dtype's
    tensor as its NumPy values."""
    if isinstance(t, torch.Tensor):
        t = t.detach().resolve_conj()
        if t.dtype == torch.chalf:
            return t.contiguous().view(torch.int32).numpy()
        return t.numpy()
    if t.dtype is nt.complex32:
        return np.ascontiguousarray(t.detach().numpy()).view(np.int32)
    return t.detach().numpy()


def _chalf_same(prog, *args):
    """``prog(L, *args)`` (complex arrays as complex32 tensors) gives the same dtypes and bits in
    both libraries."""

    def lib_args(L):
        return [
            L.tensor(a.astype(np.complex64)).to(L.chalf) if a.dtype.kind == "c" else L.tensor(a)
            for a in args
        ]

    got, ref = prog(nt, *lib_args(nt)), prog(torch, *lib_args(torch))
    got, ref = (got, ref) if isinstance(ref, tuple) else ((got,), (ref,))
    for g, r in zip(got, ref, strict=True):
        assert str(g.dtype) == str(r.dtype)
        np.testing.assert_array_equal(_chalf_bits(g), _chalf_bits(r))


def test_complex32_dtype_facts():
    c = nt.complex32
    assert nt.chalf is c and repr(c) == "torch.complex32"
    assert (c.is_complex, c.is_floating_point, c.itemsize) == (True, False, 4)
    assert c.to_real() is nt.float16 and c.to_complex() is c
    assert nt.float16.to_complex() is c and nt.bfloat16.to_complex() is nt.complex64
    fi, ref = nt.finfo(c), torch.finfo(torch.chalf)
    for attr in ("bits", "eps", "max", "min", "tiny", "resolution", "dtype"):
        assert getattr(fi, attr) == getattr(ref, attr), attr
    assert nt.finfo(nt.complex64).dtype == torch.finfo(torch.complex64).dtype
    assert nt.can_cast(c, nt.float16) == torch.can_cast(torch.chalf, torch.float16)
    assert nt.can_cast(nt.float16, c) == torch.can_cast(torch.float16, torch.chalf)
    assert nt.tensor([1j], dtype=c).type() == "torch.ComplexHalfTensor"


_ALL_NAMES = [d.name for d in nt._core.dtype.ALL if d.name != "bool"] + ["bool"]


@pytest.mark.parametrize("name", _ALL_NAMES)
def test_complex32_promote_types(name):
    tname = "bool" if name == "bool" else name
    ours = outcome_of(lambda: nt.promote_types(nt.chalf, getattr(nt, name)))
    theirs = outcome_of(lambda: torch.promote_types(torch.chalf, getattr(torch, tname)))
    assert ours == theirs


def outcome_of(f):
    try:
        return repr(f())
    except Exception as e:  # noqa: BLE001 - the type and text are compared
        return (type(e).__name__, str(e))


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64", "int64"])
@pytest.mark.parametrize("zero", ["complex32", "complex64", "complex128"])
def test_complex_zero_dim_keeps_a_float_tensors_precision(name, zero):
    """PyTorch's combine_categories: a 0-dim complex with a dimensioned float is the complex of
    the float (float16 and a 0-dim complex128 make complex32)."""

    def prog(L):
        return L.result_type(
            L.ones(2, dtype=getattr(L, name)), L.tensor(1j, dtype=getattr(L, zero))
        )

    assert repr(prog(nt)) == repr(prog(torch))


@pytest.mark.parametrize(
    "other",
    [
        np.array([0.1, 2.5, -3.3, 1e-3, 7000.0], dtype=np.float16),
        np.array([0.1, 2.5, -3.3, 1e-3, 7.0], dtype=np.float32),
        np.array([1, 2, -3, 4, 7000]),
        np.array([True, False, True, True, False]),
        np.array(0.1, dtype=np.float32),
        np.array(0.1, dtype=np.float64),
        np.array(0.1 + 0.2j, dtype=np.complex64),
        np.array([0.1 + 0.3j, 2, -3, 1e-3, 7]),
    ],
    ids=["f16", "f32", "i64", "bool", "0d-f32", "0d-f64", "0d-c64", "c32"],
)
def test_complex32_arithmetic_bitwise(other):
    """Each operand cast to the common dtype (numbers and 0-dim tensors too), computed in
    complex64, rounded once."""
    o = other if other.dtype.kind != "c" or other.ndim == 0 else other

    def prog(L, x, y):
        if y.dtype == L.bool:  # (PyTorch refuses subtracting a bool tensor)
            return x + y, x * y
        return x + y, x - y, x * y, L.add(x, y, alpha=2), y - x

    x = _CH
    if o.dtype.kind == "c" and o.ndim == 0:  # a 0-dim complex64 tensor, not complex32

        def prog0(L, x):
            y = L.tensor(o)
            return x + y, x * y, x - y

        _chalf_same(prog0, x)
    else:
        _chalf_same(prog, x, o)


@pytest.mark.parametrize("number", [0.1, 3, 7000.0])
def test_complex32_with_python_numbers_bitwise(number):
    def prog(L, x):
        return x + number, x * number, x - number, number - x, L.add(x, x, alpha=number)

    _chalf_same(prog, _CH)


def test_complex32_unary_and_predicates_bitwise():
    x = np.concatenate([_CH, [0j]])

    def prog(L, x):
        return (
            -x,
            x.abs(),
            x.sgn(),
            x.conj(),
            x.conj_physical(),
            x.real,
            x.imag,
            L.view_as_real(x),
            x.isnan(),
            x.isinf(),
            x.isfinite(),
            x == x,
            x != x.conj(),
            L.isclose(x, x),
        )

    _chalf_same(prog, x)
    # (PyTorch's addcmul rounds differently in the last bit now and then)
    got, ref = (
        nt.addcmul(*[nt.tensor(x).chalf()] * 3),
        torch.addcmul(*[torch.tensor(x).chalf()] * 3),
    )
    np.testing.assert_allclose(got.cfloat().numpy(), ref.cfloat().numpy(), rtol=1e-3)


@pytest.mark.parametrize(
    "target",
    ["float16", "float32", "float64", "bfloat16", "complex64", "complex128", "int32", "bool"],
)
def test_complex32_casts_bitwise(target):
    """From complex32 the complex64 value converts; to it, through complex64 (a float64's
    1 + 2**-11 + 2**-40 rounds twice, to 1)."""
    src = np.array([1 + 2**-11 + 2**-40, 0.1, -3.3, 70000.0, 65519.0, 1e-8])

    def prog(L, x):
        t = getattr(L, target)
        y = x.to(t) if target != "bfloat16" else x.to(t).float()
        back = L.tensor(src).to(t)
        return y, back.to(L.chalf), L.tensor(src * (1 + 1j)).to(L.chalf)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (casting complex values to real discards ...)
        _chalf_same(prog, src.astype(np.complex64))


def test_complex32_creation_and_methods():
    def prog(L):
        c = L.chalf
        x = L.tensor([1.1 + 2.2j, 3, -0.1j], dtype=c)
        return (
            L.zeros(2, 3, dtype=c),
            L.ones(2, dtype=c),
            L.full((2,), 0.1 + 1j, dtype=c),
            L.full((2,), 0.1, dtype=c),
            L.zeros_like(x),
            L.ones_like(x),
            L.full_like(x, 2 - 1j),
            x,
            L.tensor([0.1, 70000.0], dtype=c),
            L.tensor([0.1 + 0.1j]).chalf(),
            x.cfloat().chalf(),
            L.view_as_complex(L.tensor([[1.1, 2.2], [3.0, -4.0]], dtype=L.half)),
        )

    _chalf_same(prog)
    assert nt.randn(2, 3, dtype=nt.chalf).dtype is nt.chalf
    assert nt.rand(4, dtype=nt.chalf).dtype is nt.chalf
    assert nt.empty(2, dtype=nt.chalf).dtype is nt.chalf


def test_complex32_copies_shapes_and_indexing_bitwise():
    x = np.stack([_CH, _CH[::-1] * 1j])

    def prog(L, x):
        y = L.zeros(2, 5, dtype=L.chalf)
        y.copy_(x)
        z = x.clone()
        z[0, 1] = 7 + 1j
        z[1, :2] = x[0, 3:]
        w = L.zeros(2, 5, dtype=L.chalf).copy_(L.tensor([0.1, 0.2, 0.3, 0.4, 0.5]))
        return (
            y,
            z,
            w,
            L.cat([x, x[:1]]),
            L.stack([x, x]),
            x.reshape(5, 2),
            x.t().contiguous(),
            x.permute(1, 0),
            x[:, 1:],
            x[:, L.tensor([2, 0])],
            x[x.real > 0],
            x.roll(1, 1),
            x.repeat(2, 1),
            x.diagonal(),
            x.index_select(1, L.tensor([1, 1])),
            x.masked_fill(x.real > 0, 0.5j),
            L.where(x.real > 0, x, 0.0),
            x.masked_select(x.real > 0),
            x.index_put((L.tensor([0]), L.tensor([1])), L.tensor([5 + 5j], dtype=L.chalf)),
            x.tril(),
            x.unbind(0)[1],
            x.split(2, 1)[2],
            x.expand(3, 2, 5),
            x.flatten(),
            x.view(10),
            x.nonzero(),
            x.any(),
            x.count_nonzero(),
        )

    _chalf_same(prog, x)


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, x: x.sum(),
        lambda L, x: x.mean(),
        lambda L, x: x.prod(),
        lambda L, x: x.cumsum(0),
        lambda L, x: x.exp(),
        lambda L, x: x.log(),
        lambda L, x: x.sqrt(),
        lambda L, x: x**2,
        lambda L, x: x.square(),
        lambda L, x: x / x,
        lambda L, x: x.angle(),
        lambda L, x: x.flip(0),
        lambda L, x: x < x,
        lambda L, x: x.gather(0, L.tensor([0])),
        lambda L, x: L.dot(x, x),
        lambda L, x: L.vdot(x, x),
        lambda L, x: L.mm(x[None], x[:, None]),
        lambda L, x: x.trace() if x.dim() == 2 else x[None].trace(),
        lambda L, x: x.lerp(x, 0.5),
        lambda L, x: x.clamp(0, 1),
    ],
)
def test_complex32_refusals(prog):
    """PyTorch's CPU kernels have no ComplexHalf version: its words, naming the kernel."""

    def run(L):
        return prog(L, L.tensor([1 + 2j, 3 - 1j], dtype=L.chalf))

    ours, theirs = outcome_of(lambda: run(nt)), outcome_of(lambda: run(torch))
    assert isinstance(theirs, tuple) and ours == theirs


def test_complex32_repr_matches_torch():
    def reprs(L):
        c = L.chalf
        x = L.tensor([1 + 2j, 3.3 - 1j, -0.5 + 0.25j], dtype=c)
        return [
            repr(x),
            repr(x[0]),
            repr(L.zeros(2, 2, dtype=c)),
            repr(L.tensor([1e5 + 1j, float("nan")], dtype=c)),
            str(x.real),
            x.tolist(),
            x[1].item(),
        ]

    assert reprs(nt) == reprs(torch)


def test_complex32_autograd():
    """Gradients flow through the ops PyTorch differentiates on complex32; each grad is
    computed in complex32 as PyTorch's formulas are."""

    def prog(L, x, y):
        a = (x * y + x).cfloat()
        b = L.cat([x, y])[1:].cfloat()
        c = x.abs().float()
        d = L.view_as_real(y).float()
        return (a * a.conj()).real.sum() + b.real.sum() + c.sum() + d.sum()

    def grads(L):
        x = L.tensor(_CH[:3].astype(np.complex64)).to(L.chalf).requires_grad_()
        y = L.tensor(_CH[:3].astype(np.complex64)[::-1].copy()).to(L.chalf).requires_grad_()
        prog(L, x, y).backward()
        return x.grad, y.grad

    (gx, gy), (rx, ry) = grads(nt), grads(torch)
    assert gx.dtype is nt.chalf and gy.dtype is nt.chalf
    np.testing.assert_allclose(gx.cfloat().numpy(), rx.cfloat().numpy(), rtol=2e-3, atol=1e-3)
    np.testing.assert_allclose(gy.cfloat().numpy(), ry.cfloat().numpy(), rtol=2e-3, atol=1e-3)

    def refused(L):
        x = L.tensor([1 + 1j, 2], dtype=L.chalf, requires_grad=True)
        (x * x).sum()

    assert outcome_of(lambda: refused(nt)) == outcome_of(lambda: refused(torch))


def test_save_and_load_complex32_both_ways(tmp_path):
    src = torch.tensor([[1.5 - 1j, -2.25], [0.125j, 3.3]], dtype=torch.chalf)
    torch.save({"w": src, "col": src[:, 1]}, tmp_path / "t.pt")
    got = nt.load(tmp_path / "t.pt")
    assert got["w"].dtype is nt.chalf
    np.testing.assert_array_equal(_chalf_bits(got["w"]), _chalf_bits(src))
    np.testing.assert_array_equal(_chalf_bits(got["col"]), _chalf_bits(src[:, 1]))
    nt.save(got, tmp_path / "n.pt")
    back = torch.load(tmp_path / "n.pt")
    assert back["w"].dtype == torch.chalf and torch.equal(back["w"].cfloat(), src.cfloat())
    assert torch.equal(back["col"].cfloat(), src[:, 1].cfloat())


# The sweep: every op with samples, on them with the float (complex) arrays as complex32
# tensors, against PyTorch (an op that can't be compared says why: ``no_complex32``).
def _c32_lib(lib, x, kinds: str):
    if isinstance(x, np.ndarray):
        if x.dtype.kind in kinds:
            return lib.tensor(x.astype(np.complex64)).to(lib.chalf)
        return lib.tensor(x)
    if isinstance(x, list | tuple):
        return type(x)(_c32_lib(lib, v, kinds) for v in x)
    if isinstance(x, dict):
        return {k: _c32_lib(lib, v, kinds) for k, v in x.items()}
    if lib is torch and isinstance(x, nt.dtype):
        return getattr(torch, x.name)
    return x


def _c32_values(t):
    if t.dtype in (nt.chalf, torch.chalf):
        t = t.cfloat()
    elif t.dtype in (nt.bfloat16, torch.bfloat16):
        t = t.float()
    return np.asarray(t.detach().resolve_conj().numpy())


def _c32_sweep_ops():
    return [
        pytest.param(op, id=op.name)
        for op in REGISTRY.values()
        if op.samples is not None
        and not op.test.no_oracle
        and not op.random
        and not op.test.no_complex32
    ]


@pytest.mark.parametrize("op", _c32_sweep_ops())
def test_complex32_sweep_matches_torch(op):
    """Each sample gives PyTorch's complex32 result (dtype, shape, values to complex32's
    precision) or raises its error type and text."""
    complex_op = any(d.startswith("complex") for d in op.test.dtypes)
    kinds = "c" if complex_op else "f"
    dtype = "complex64" if complex_op else "float32"
    theirs_fn = getattr(torch, op.api, None) or resolve(torch, op.oracle or op.api)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in samples(op, dtype):

            def run(L, fn, s=s):
                return fn(*_c32_lib(L, s.args, kinds), **_c32_lib(L, s.kwargs, kinds))

            ours = outcome_of(lambda: run(nt, resolve(nt, op.api)))
            theirs = outcome_of(lambda: run(torch, theirs_fn))
            assert isinstance(ours, tuple) == isinstance(theirs, tuple), (s, ours, theirs)
            if isinstance(theirs, tuple):
                assert ours == theirs, s
                continue
            got = tensor_leaves(run(nt, resolve(nt, op.api)), nt.Tensor)
            ref = tensor_leaves(run(torch, theirs_fn), torch.Tensor)
            assert len(got) == len(ref)
            for g, r in zip(got, ref, strict=True):
                assert str(g.dtype) == str(r.dtype), s
                np.testing.assert_allclose(
                    _c32_values(g),
                    _c32_values(r),
                    rtol=op.test.complex32_tol,
                    atol=op.test.complex32_tol,
                    err_msg=str(s),
                )


_C32_CALLS = {
    "arange": lambda L: L.arange(3, dtype=L.chalf),
    "arange_empty": lambda L: L.arange(0, dtype=L.chalf),
    "range": lambda L: L.range(0, 2, dtype=L.chalf),
    "linspace": lambda L: L.linspace(0, 1, 3, dtype=L.chalf),
    "linspace_one": lambda L: L.linspace(0, 1, 1, dtype=L.chalf),
    "logspace": lambda L: L.logspace(0, 1, 3, dtype=L.chalf),
    "logspace_empty": lambda L: L.logspace(0, 1, 0, dtype=L.chalf),
    "eye": lambda L: L.eye(2, dtype=L.chalf),
    "eye_empty": lambda L: L.eye(0, dtype=L.chalf),
    "complex_half": lambda L: L.complex(L.ones(2).half(), L.full((2,), -0.5).half()),
    "polar_half": lambda L: L.polar(L.ones(2).half(), L.ones(2).half()),
    "polar_half_empty": lambda L: L.polar(L.ones(0).half(), L.ones(0).half()),
    "add_alpha": lambda L: L.add(L.ones(2, dtype=L.chalf), L.ones(2, dtype=L.chalf), alpha=1e6),
    "add_alpha_max": lambda L: L.add(
        L.ones(2, dtype=L.chalf), L.ones(2, dtype=L.chalf), alpha=65504
    ),
    "sub_alpha": lambda L: L.sub(L.ones(2, dtype=L.chalf), L.ones(2, dtype=L.chalf), alpha=7e4),
    "where": lambda L: L.where(L.ones(2).bool(), L.ones(2, dtype=L.chalf), 1e6),
    "where_imag": lambda L: L.where(L.ones(2).bool(), 1e6j, L.ones(2, dtype=L.chalf)),
    "where_inf": lambda L: L.where(L.ones(2).bool(), L.ones(2, dtype=L.chalf), float("inf")),
    "masked_fill": lambda L: L.ones(2, dtype=L.chalf).masked_fill(L.ones(2).bool(), 1e6),
    "masked_fill_int": lambda L: L.ones(2, dtype=L.chalf).masked_fill(L.ones(2).bool(), 70000),
    "index_fill": lambda L: L.ones(2, dtype=L.chalf).index_fill(0, L.tensor([0]), 65520.0),
    "scalar_tensor": lambda L: L.scalar_tensor(1e6, dtype=L.chalf),
    "scalar_tensor_ok": lambda L: L.scalar_tensor(65504, dtype=L.chalf),
    "addcmul": lambda L: L.addcmul(*[L.ones(2, dtype=L.chalf)] * 3, value=1e6),
    "full_unchecked": lambda L: L.full((2,), 1e6, dtype=L.chalf),
    "fill_unchecked": lambda L: L.ones(2, dtype=L.chalf).fill_(1e6),
    "add_big_number": lambda L: L.ones(2, dtype=L.chalf) + (1e6 + 1j),
    "add_inf_tensor": lambda L: L.ones(2, dtype=L.chalf) + L.full((2,), float("inf")).chalf(),
    "sub_inf_complex64": lambda L: L.ones(2, dtype=L.cfloat) - L.full((2,), float("inf")).cfloat(),
    "add_inf_number_complex64": lambda L: L.ones(2, dtype=L.cfloat) + float("inf"),
}


@pytest.mark.parametrize("name", list(_C32_CALLS))
def test_complex32_factories_parts_and_overflow_match_torch(name):
    """Factories refusing ComplexHalf, complex/polar of half parts, the overflow check of the
    numbers converted into complex32, add's complex product (inf + nanj) against torch."""
    f = _C32_CALLS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = outcome_of(lambda: f(nt)), outcome_of(lambda: f(torch))
        assert isinstance(ours, tuple) == isinstance(theirs, tuple), (ours, theirs)
        if isinstance(theirs, tuple):
            assert ours == theirs
            return
        got, ref = f(nt), f(torch)
    assert str(got.dtype) == str(ref.dtype)
    np.testing.assert_array_equal(_c32_values(got), _c32_values(ref))


@pytest.mark.parametrize(
    "make",
    [
        lambda L: L.zeros(2, dtype=L.chalf),
        lambda L: L.ones(2).to(L.chalf),
        lambda L: L.complex(L.ones(1).half(), L.ones(1).half()),
    ],
)
def test_complex32_experimental_warning_once_as_torch(make):
    """PyTorch warns where it allocates a complex32 tensor, once per process."""
    from numtorch._core import dtype as conversion

    def caught(L):
        with warnings.catch_warnings(record=True) as c:
            warnings.simplefilter("always")
            make(L)
            make(L)
        return [(w.category, str(w.message).split(" (Triggered")[0]) for w in c]

    conversion._warned_complex32.clear()  # (once per process, as PyTorch's TORCH_WARN_ONCE)
    ours = caught(nt)
    torch.set_warn_always(True)  # (torch has warned already in this process)
    try:
        theirs = caught(torch)
    finally:
        torch.set_warn_always(False)
    assert ours == [(UserWarning, conversion._COMPLEX32_EXPERIMENTAL)]
    assert theirs[0] == ours[0]
    conversion._warned_complex32.clear()
    assert caught(nt) == ours  # (warned again only after the reset)
