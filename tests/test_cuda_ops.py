"""The op database on device='cuda' against the same programs on the CPU: forward values in
every dtype CuPy has, gradients, tangents, second derivatives, vmap with the fallback off, and
error inputs (the same error type and text). Without a GPU the ``cuda`` fixture runs them on
the CPU stand-in for CuPy in strict mode, so a NumPy call on device data fails the test."""

from __future__ import annotations

import re

import numpy as np
import pytest
from opdb import (
    autograd_outputs,
    float_arg_positions,
    ops_with_samples,
    resolve,
    samples,
    set_path,
)
from twolibs import assert_close, inexact, leaves, normal, op_tol, tensor_leaves, to_nt

import numtorch as nt

OPS = ops_with_samples()
# CuPy has no bfloat16, float8 or complex32: those dtypes are CPU-only in numtorch.
CUDA_DTYPES = {"float64", "float32", "float16", "complex128", "complex64", "int64", "int32"}
CUDA_DTYPES |= {"int16", "int8", "uint8", "bool"}
FWD = [
    pytest.param(op, d, id=f"{op.name}-{d}")
    for op in OPS
    for d in op.test.dtypes
    if d in CUDA_DTYPES
]
GRAD = [pytest.param(op, id=op.name) for op in OPS if op.ndiff and not op.test.no_grad_test]
JVP = [p for p in GRAD if p.values[0].jvp is not None and not p.values[0].random]
GRADGRAD = [p for p in GRAD if not p.values[0].test.no_gradgrad]
VMAP = [pytest.param(op, id=op.name) for op in OPS if not op.random and op.test.vmap != "dynamic"]
ERR = [pytest.param(op, id=op.name) for op in OPS if op.error_samples is not None]


def to(x, dev):
    """Tensors in a nested structure moved to ``dev`` (leaves keep requires_grad)."""
    if isinstance(x, nt.Tensor):
        y = x.detach().to(dev)
        return y.requires_grad_(True) if x.requires_grad else y
    if isinstance(x, (list, tuple)):
        return type(x)(to(v, dev) for v in x)
    if isinstance(x, dict):
        return {k: to(v, dev) for k, v in x.items()}
    return x


def _devices_of(x) -> set:
    return {t.device.type for t in tensor_leaves(x, nt.Tensor)}


def _run(op, s, dev, grad_paths=()):
    """The op on a sample's arguments on ``dev``: (args, kwargs, result)."""
    args, kwargs = to(to_nt(s.args), dev), to(to_nt(s.kwargs), dev)
    for i, j in grad_paths:
        (args[i] if j is None else args[i][j]).requires_grad_(True)
    nt.manual_seed(0)
    return args, kwargs, resolve(nt, op.api)(*args, **kwargs)


def _same(got, want, what, dtype="float64", random=False):
    """``got`` (from the GPU) is on the GPU and equals ``want`` (from the CPU)."""
    assert _devices_of(got) <= {"cuda"}, f"{what}: a result left the GPU"
    if random:  # the GPU's generator draws other numbers: shapes and dtypes only
        g, w = tensor_leaves(got, nt.Tensor), tensor_leaves(want, nt.Tensor)
        assert [(t.shape, t.dtype) for t in g] == [(t.shape, t.dtype) for t in w], what
        return
    assert_close(to(got, "cpu"), want, **op_tol(dtype), where=what)


@pytest.mark.parametrize("op,dtype", FWD)
def test_forward_on_cuda_matches_cpu(op, dtype, cuda):
    for s in samples(op, dtype):
        want = _run(op, s, "cpu")[2]
        _same(_run(op, s, cuda)[2], want, f"{op.name} {s}", dtype, op.random)


def _paths(op, s):
    paths = float_arg_positions(s.args)
    return [p for p in paths if op.grad_args is None or p[0] in op.grad_args]


def _leaf(args, p):
    i, j = p
    return args[i] if j is None else args[i][j]


def _grads(op, s, dev, create_graph=False):
    """The vjp of the op's float outputs with fixed cotangents: (inputs, grads)."""
    paths = _paths(op, s)
    args, _, out = _run(op, s, dev, paths)
    outs = [o for o in tensor_leaves(out, nt.Tensor) if inexact(o) and o.requires_grad]
    if not paths or not outs:
        return None, None
    rng = np.random.default_rng(1)
    vs = [nt.tensor(normal(rng, o.shape, o.dtype), device=dev) for o in outs]
    ins = [_leaf(args, p) for p in paths]
    return ins, nt.autograd.grad(outs, ins, vs, allow_unused=True, create_graph=create_graph)


@pytest.mark.parametrize("op", GRAD)
def test_vjp_on_cuda_matches_cpu(op, cuda):
    for s in samples(op, "float64"):
        _, want = _grads(op, s, "cpu")
        if want is not None:
            _same(_grads(op, s, cuda)[1], want, f"{op.name} {s} vjp", random=op.random)


def _tangents(op, s, dev):
    """func.jvp of the op along fixed tangents of its float arguments."""
    paths = _paths(op, s)
    if not paths:
        return None
    args, kwargs = to(to_nt(s.args), dev), to(to_nt(s.kwargs), dev)
    rng = np.random.default_rng(2)
    tans = [
        nt.tensor(normal(rng, _leaf(s.args, p).shape, _leaf(s.args, p).dtype), device=dev)
        for p in paths
    ]

    def f(*prims):
        a = args
        for p, v in zip(paths, prims):
            a = set_path(a, p, v)  # (a tuple argument stays a tuple: an index, a size)
        out = autograd_outputs(resolve(nt, op.api)(*a, **kwargs), op)
        return tuple(t for t in tensor_leaves(out, nt.Tensor) if inexact(t))

    primals = tuple(_leaf(args, p) for p in paths)
    if not f(*primals):  # no float output (a cast to an integer dtype): nothing to compare
        return None
    return nt.func.jvp(f, primals, tuple(tans))[1]


@pytest.mark.parametrize("op", JVP)
def test_jvp_on_cuda_matches_cpu(op, cuda):
    for s in samples(op, "float64"):
        want = _tangents(op, s, "cpu")
        if want is not None:
            _same(_tangents(op, s, cuda), want, f"{op.name} {s} jvp")


def _gradgrad(op, s, dev):
    ins, gs = _grads(op, s, dev, create_graph=True)
    if ins is None:
        return None
    pairs = [(g, i) for g, i in zip(gs, ins) if g is not None and g.requires_grad]
    if not pairs:
        return None
    rng = np.random.default_rng(3)
    total = sum(
        (g * nt.tensor(normal(rng, g.shape, g.dtype), device=dev)).real.sum() for g, _ in pairs
    )
    return nt.autograd.grad(total, ins, allow_unused=True)


@pytest.mark.parametrize("op", GRADGRAD)
def test_second_order_on_cuda_matches_cpu(op, cuda):
    for s in samples(op, "float64")[:2]:
        want = _gradgrad(op, s, "cpu")
        if want is not None:
            _same(_gradgrad(op, s, cuda), want, f"{op.name} {s} gradgrad", random=op.random)


def _batched(op, dev):
    """vmap over two seeds' versions of each sample, every array argument batched along 0."""
    dtype = "float64" if "float64" in op.test.dtypes else op.test.dtypes[0]
    for group in zip(samples(op, dtype, seed=0), samples(op, dtype, seed=1)):
        s = group[0]
        pos = [
            i
            for i, a in enumerate(s.args)
            if isinstance(a, np.ndarray) and i not in op.test.vmap_unbatched
        ]
        if not pos:
            continue
        args = list(to(to_nt(s.args), dev))
        for i in pos:
            args[i] = nt.stack([to(to_nt(g.args[i]), dev) for g in group])
        kwargs = to(to_nt(s.kwargs), dev)
        dims = tuple(0 if i in pos else None for i in range(len(args)))
        fn = resolve(nt, op.api)
        yield nt.vmap(lambda *a: fn(*a, **kwargs), in_dims=dims)(*args)


@pytest.mark.parametrize("op", VMAP)
def test_vmap_on_cuda_matches_cpu(op, cuda, no_fallback):
    for got, want in zip(_batched(op, cuda), _batched(op, "cpu")):
        _same(got, want, f"{op.name} vmap")


def _error(op, e, dev):
    try:
        to(_run(op, e.sample, dev)[2], "cpu")  # (a GPU's deferred checks raise at the copy)
    except Exception as err:
        return type(err), str(err)
    return None


def _cupy_has_dtypes(s) -> bool:
    """Whether every array of a sample has a dtype CuPy has (not bfloat16, float8, complex32:
    those tensors cannot be on the GPU, so their errors are CPU-only)."""
    arrays = [a for a in leaves((s.args, s.kwargs)) if isinstance(a, np.ndarray)]
    return all(np.dtype(a.dtype).name in CUDA_DTYPES for a in arrays)


def _on_cuda(text: str) -> str:
    """A CPU error text as PyTorch words it for CUDA tensors: the type names of the tensors
    it shows (torch.FloatTensor, CPUFloatType)."""
    text = re.sub(r"\btorch\.(\w+Tensor)\b", r"torch.cuda.\1", text)
    return re.sub(r"\bCPU(\w*Type)\b", r"CUDA\1", text)


@pytest.mark.parametrize("op", ERR)
def test_error_inputs_on_cuda_raise_as_on_cpu(op, cuda):
    from numtorch._opdb.samples import Maker

    for e in op.error_samples(Maker("float32")):
        want = _error(op, e, "cpu")
        assert want is not None and want[0] is e.error, f"{op.name}: {want}"
        if not _cupy_has_dtypes(e.sample):
            continue
        got = _error(op, e, cuda)
        assert got is not None, f"{op.name}: no error on cuda for {e.sample}"
        # a tensor's repr in a text shows its device
        text = got[1].replace(", device='cuda:0'", "")
        assert (got[0], text) == (want[0], _on_cuda(want[1])), op.name


def test_binary_ops_refuse_a_cpu_operand_with_pytorchs_text(cuda):
    x, y = nt.ones(3, device=cuda), nt.ones(3)
    for f in (nt.add, nt.mul, nt.maximum, nt.atan2, nt.sub):
        with pytest.raises(RuntimeError) as e:
            f(x, y)
        assert str(e.value) == (
            "Expected all tensors to be on the same device, but found at least two devices, "
            "cuda:0 and cpu!"
        )
    assert (x + nt.tensor(2.0)).device.type == "cuda"  # a CPU scalar tensor is accepted


def test_airy_ai_on_cuda_matches_cpu_over_the_real_line(cuda):
    # the GPU's formulation (a table's Taylor series, asymptotic series past |x| = 8) against
    # scipy's on the CPU, where the samples do not reach (far out, both lose the phase)
    x = np.concatenate([np.linspace(-300.0, 110.0, 40001), [-8.0, 8.0, 0.0, np.inf, -np.inf]])
    x = np.concatenate([x, [np.nan, 1e3]])
    want = nt.special.airy_ai(nt.tensor(x))
    got = nt.special.airy_ai(nt.tensor(x, device=cuda))
    assert got.device.type == "cuda"
    assert_close(got.cpu(), want, rtol=1e-10, atol=1e-13, where="airy_ai")
    got32 = nt.special.airy_ai(nt.tensor(x, dtype=nt.float32, device=cuda))
    assert_close(got32.cpu(), want.float(), **op_tol("float32"), where="airy_ai float32")


def test_histogram_edges_on_cuda_are_pytorchs_to_the_bit(cuda):
    # PyTorch's edges are fused multiply-adds; CuPy has no long double to widen them
    import torch

    rng = np.random.default_rng(0)
    for _ in range(50):
        lo, hi = sorted(float(v) for v in rng.normal(size=2) * 1e3)
        n = int(rng.integers(3, 200))
        want = torch.histogram(torch.tensor([lo, hi], dtype=torch.float64), n, range=(lo, hi))
        got = nt.histogram(nt.tensor([lo, hi], dtype=nt.float64, device=cuda), n, range=(lo, hi))
        np.testing.assert_array_equal(got.bin_edges.cpu().numpy(), want.bin_edges.numpy())
        np.testing.assert_array_equal(got.hist.cpu().numpy(), want.hist.numpy())


POLYNOMIALS = [n for n in dir(nt.special) if "_polynomial_" in n]


@pytest.mark.parametrize("name", POLYNOMIALS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_polynomials_on_cuda_equal_the_cpus_to_high_degrees(name, dtype, cuda):
    # the GPU runs every element to the largest degree (the CPU drops finished ones): the same
    # values, NaN and infinities where the recurrence overflows included
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.uniform(-3, 3, 200), rng.uniform(-1e4, 1e4, 100), [np.nan, 1, -1]])
    n = rng.integers(-2, 700, x.shape).astype(np.float64)
    fn = getattr(nt.special, name)
    want = fn(nt.tensor(x, dtype=getattr(nt, dtype)), nt.tensor(n))
    got = fn(nt.tensor(x, dtype=getattr(nt, dtype), device=cuda), nt.tensor(n, device=cuda))
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    assert not np.isfinite(want.numpy()).all()  # (the overflowing ones are there)


ACCUMULATING = {
    "index_put_": lambda x, i, v: x.index_put_((i,), v, accumulate=True),
    "index_add": lambda x, i, v: x.index_add(0, i, v, alpha=3 if x.dtype != nt.bool else True),
    "scatter_add": lambda x, i, v: x.scatter_add(0, i, v),
    "put_": lambda x, i, v: x.put_(i, v, accumulate=True),
    "scatter_reduce sum": lambda x, i, v: x.scatter_reduce(0, i, v, "sum"),
    "scatter_reduce mean": lambda x, i, v: x.scatter_reduce(0, i, v, "mean"),
}


@pytest.mark.parametrize("name", list(ACCUMULATING))
@pytest.mark.parametrize("dtype", sorted(CUDA_DTYPES))
def test_accumulating_writes_on_cuda_in_every_dtype(name, dtype, cuda):
    # CuPy's scatter-add has atomics for a few dtypes only; repeated indices must still sum
    # (integers wrapping as PyTorch's do)
    if dtype == "bool" and "mean" in name:
        return  # (PyTorch refuses it: the error samples compare that)
    rng = np.random.default_rng(6)
    i = np.array([0, 2, 2, 5, 2, 0, 1], dtype=np.int64)
    # (sums past 127 and 255 wrap in int8 and uint8)
    x = (rng.integers(0, 120, 6) * (1 + 1j if "complex" in dtype else 1)).astype(dtype)
    v = (rng.integers(0, 120, 7) * (1 - 2j if "complex" in dtype else 1)).astype(dtype)
    fn = ACCUMULATING[name]
    want = fn(nt.tensor(x), nt.tensor(i), nt.tensor(v))
    got = fn(nt.tensor(x, device=cuda), nt.tensor(i, device=cuda), nt.tensor(v, device=cuda))
    assert got.device.type == "cuda"
    assert_close(got.cpu(), want, **op_tol(dtype), where=f"{name} {dtype}")


def test_kernels_that_pytorch_runs_without_a_read_back_make_none(standin_cuda):
    # (the stand-in counts copies between host and device, with the numtorch line of each)
    from numtorch.testing import _cupy_standin as standin

    x = nt.randn(40, dtype=nt.float64, device=standin_cuda)
    c = nt.randn(6, dtype=nt.complex64, device=standin_cuda)
    nt.special.airy_ai(x)  # (its table goes to the GPU once)
    calls = (
        lambda: nt.histc(x, 10, -1, 1),
        lambda: nt.special.airy_ai(x),
        lambda: nt.logical_xor(c, c),
        lambda: nt.mode(x.reshape(4, 10), 1),
    )
    for f in calls:
        with standin.transfers() as log:
            f()
        assert log.sites() == []
    with standin.transfers() as log:  # the largest degree, read back once
        nt.special.hermite_polynomial_h(x, nt.full((40,), 9.0, device=standin_cuda))
    assert len(log.sites()) == 1


# ---------------------------------------------------------------- linalg failures on the GPU
# CuPy reports no singular or indefinite matrix unless asked; numtorch must find them on the
# device and raise PyTorch's LinAlgError, word for word, and the *_ex functions must return
# PyTorch's info codes as device tensors.
def _torch():
    import torch

    return torch


def _well(shape, dtype):
    rng = np.random.default_rng(5)
    a = rng.uniform(-1, 1, shape) + (shape[-1] + 1) * np.eye(shape[-1])
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.uniform(-1, 1, shape)
    return a.astype(dtype)


def _singular(batched, dtype):
    """The last matrix singular: a zero first column (batched) or, unbatched, a second column
    twice the first, so that LU meets its zero pivot second (exact in binary)."""
    if batched:
        a = _well((2, 3, 3), dtype)
        a[-1, :, 0] = 0
        return a
    return np.array([[4.0, 8, 1], [2, 4, 3], [1, 2, 5]], dtype)


def _not_pd(batched, dtype):
    """Symmetric (Hermitian) positive-definite matrices, the last one's minor of order 2 not."""
    a = _well((2, 3, 3) if batched else (3, 3), dtype)
    a = a @ np.swapaxes(a, -1, -2).conj() + 3 * np.eye(3, dtype=dtype)
    last = a[-1] if batched else a
    last[1, 1] = -1
    return a


def _rhs(lib, A):
    return lib.ones(A.shape[:-1], dtype=A.dtype, device=A.device)


FAILING = {
    "linalg.inv": (_singular, lambda lib, A: lib.linalg.inv(A)),
    "inverse": (_singular, lambda lib, A: lib.inverse(A)),
    "inv_ex checked": (_singular, lambda lib, A: lib.linalg.inv_ex(A, check_errors=True)),
    "linalg.solve": (_singular, lambda lib, A: lib.linalg.solve(A, _rhs(lib, A))),
    "solve_ex checked": (
        _singular,
        lambda lib, A: lib.linalg.solve_ex(A, _rhs(lib, A), check_errors=True),
    ),
    "linalg.cholesky": (_not_pd, lambda lib, A: lib.linalg.cholesky(A)),
    "cholesky upper": (_not_pd, lambda lib, A: lib.linalg.cholesky(A, upper=True)),
    "cholesky_ex checked": (
        _not_pd,
        lambda lib, A: lib.linalg.cholesky_ex(A, check_errors=True),
    ),
}


@pytest.mark.parametrize("dtype", ["float64", "complex64"])
@pytest.mark.parametrize("batched", [False, True], ids=["matrix", "batch"])
@pytest.mark.parametrize("name", list(FAILING))
def test_linalg_failure_on_cuda_raises_pytorchs_error(name, batched, dtype, cuda):
    make, fn = FAILING[name]
    A = make(batched, dtype)
    torch = _torch()
    with pytest.raises(torch.linalg.LinAlgError) as want:
        fn(torch, torch.tensor(A))
    with pytest.raises(nt.linalg.LinAlgError) as got:
        fn(nt, nt.tensor(A, device=cuda))
    assert str(got.value) == str(want.value)


WITH_INFO = {
    "inv_ex": (_singular, lambda lib, A: lib.linalg.inv_ex(A)),
    "cholesky_ex": (_not_pd, lambda lib, A: lib.linalg.cholesky_ex(A)),
    "solve_ex": (_singular, lambda lib, A: lib.linalg.solve_ex(A, _rhs(lib, A))),
}


@pytest.mark.parametrize("dtype", ["float64", "complex128", "float32"])
@pytest.mark.parametrize("batched", [False, True], ids=["matrix", "batch"])
@pytest.mark.parametrize("name", list(WITH_INFO))
def test_ex_info_on_cuda_is_pytorchs_and_stays_on_the_device(name, batched, dtype, cuda):
    make, fn = WITH_INFO[name]
    A = make(batched, dtype)
    want = fn(_torch(), _torch().tensor(A))
    result, info = fn(nt, nt.tensor(A, device=cuda))
    assert (result.device.type, info.device.type, info.dtype) == ("cuda", "cuda", nt.int32)
    assert info.tolist() == want[1].tolist()
    ok = (want[1] == 0).numpy()  # the failed matrices' results are unspecified
    assert_close(result.cpu()[nt.tensor(ok)], fn(nt, nt.tensor(A))[0][nt.tensor(ok)])
    assert not nt.isfinite(result.cpu()[nt.tensor(~ok)]).any()  # NaN, as on the CPU


def test_ex_info_on_cuda_of_a_well_conditioned_and_an_empty_batch(cuda):
    for A in (_well((4, 3, 3), "float64"), np.zeros((0, 3, 3))):
        for res, info in (
            nt.linalg.inv_ex(nt.tensor(A, device=cuda)),
            nt.linalg.cholesky_ex(nt.tensor(A @ A.swapaxes(-1, -2) + np.eye(3), device=cuda)),
        ):
            assert info.device.type == "cuda" and info.tolist() == [0] * len(A)
            assert res.shape == A.shape


def test_linalg_eig_on_cuda_returns_device_tensors(cuda):
    A = _well((2, 3, 3), "float64")
    L, V = nt.linalg.eig(nt.tensor(A, device=cuda))
    assert (L.device.type, V.device.type, L.dtype) == ("cuda", "cuda", nt.complex128)
    want = _torch().linalg.eigvals(_torch().tensor(A)).numpy()
    got = L.cpu().numpy()
    assert np.allclose(np.sort_complex(got), np.sort_complex(want))
    recon = V.cpu().numpy() @ (got[..., None] * np.linalg.inv(V.cpu().numpy()))
    assert np.allclose(recon, A)
