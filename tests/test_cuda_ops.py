"""The op database on device='cuda' against the same programs on the CPU: forward values in
every dtype CuPy has, gradients, tangents, second derivatives, vmap with the fallback off, and
error inputs (the same error type and text). Without a GPU the ``cuda`` fixture runs them on
the CPU stand-in for CuPy in strict mode, so a NumPy call on device data fails the test."""

from __future__ import annotations

import numpy as np
import pytest
from opdb import autograd_outputs, float_arg_positions, ops_with_samples, resolve, samples
from twolibs import assert_close, inexact, normal, op_tol, tensor_leaves, to_nt

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
        a = [list(x) if isinstance(x, (list, tuple)) else x for x in args]
        for p, v in zip(paths, prims):
            i, j = p
            if j is None:
                a[i] = v
            else:
                a[i][j] = v
        out = autograd_outputs(resolve(nt, op.api)(*a, **kwargs), op)
        return tuple(t for t in tensor_leaves(out, nt.Tensor) if inexact(t))

    return nt.func.jvp(f, tuple(_leaf(args, p) for p in paths), tuple(tans))[1]


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


@pytest.mark.parametrize("op", ERR)
def test_error_inputs_on_cuda_raise_as_on_cpu(op, cuda):
    from numtorch._opdb.samples import Maker

    for e in op.error_samples(Maker("float32")):
        want = _error(op, e, "cpu")
        assert want is not None and want[0] is e.error, f"{op.name}: {want}"
        assert _error(op, e, cuda) == want, op.name


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
