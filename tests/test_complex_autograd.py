"""Complex autograd: gradients are conjugate Wirtinger derivatives, as PyTorch's.

The sweeps run every op whose generic tests include complex128 on complex samples: the vjp
against PyTorch and against central finite differences of the real loss
``sum(Re(conj(v) * f(z)))`` (whose gradient is dL/dRe z + i dL/dIm z), the jvp against
finite differences along complex tangents. Then focused tests: a complex MLP, gradcheck,
the parts of a complex number, the conjugate bit.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from opdb import float_arg_positions, get_path, ops_with_samples, resolve, samples, set_path
from test_ops import _jvp_through_trace
from twolibs import as_numpy, assert_close, inexact, normal, tensor_leaves, to_nt, to_torch

import numtorch as nt

CGRAD = [
    pytest.param(op, id=op.name)
    for op in ops_with_samples()
    if op.ndiff and op.complex_grad and not op.test.no_grad_test and "complex128" in op.test.dtypes
]
REFUSED = [
    pytest.param(op, id=op.name)
    for op in ops_with_samples()
    if op.ndiff and not op.complex_grad and "complex128" in op.test.dtypes
]


def _paths(op, args) -> list:
    """Positions of the float and complex arrays among a sample's differentiable args."""
    paths = float_arg_positions(args, "fc")
    return [p for p in paths if op.grad_args is None or p[0] in op.grad_args]


def _complex_samples(op):
    return [s for s in samples(op, "complex128") if _paths(op, s.args)]


def _loss(op, s, args, vs, seen) -> float:
    """sum(Re(conj(v) * out)) over the outputs of op at args that autograd sees (``seen``,
    one flag per tensor output: a factor such as lu's P is left out)."""
    with nt.no_grad():
        out = resolve(nt, op.api)(*to_nt(args), **to_nt(s.kwargs))
    outs = [o for o, d in zip(tensor_leaves(out, nt.Tensor), seen) if d]
    return sum(float(np.real(np.conj(v) * as_numpy(o)).sum()) for o, v in zip(outs, vs))


def _fd_gradient(op, s, p, vs, seen, eps=1e-6) -> np.ndarray:
    base = get_path(s.args, p)
    grad = np.zeros(base.shape, dtype=base.dtype)
    parts = (1.0, 1j) if base.dtype.kind == "c" else (1.0,)
    for idx in np.ndindex(base.shape):
        for c in parts:
            hi, lo = base.copy(), base.copy()
            hi[idx] += eps * c
            lo[idx] -= eps * c
            d = _loss(op, s, set_path(s.args, p, hi), vs, seen) - _loss(
                op, s, set_path(s.args, p, lo), vs, seen
            )
            grad[idx] += c * d / (2 * eps)
    return grad


@pytest.mark.parametrize("op", CGRAD)
def test_complex_vjp_matches_torch_and_finite_differences(op):
    rng = np.random.default_rng(1)
    for s in _complex_samples(op):
        paths = _paths(op, s.args)
        args = to_nt(s.args)
        ins = [get_path(args, p).requires_grad_(True) for p in paths]
        out = resolve(nt, op.api)(*args, **to_nt(s.kwargs))
        seen = [o.requires_grad for o in tensor_leaves(out, nt.Tensor)]
        outs = [o for o in tensor_leaves(out, nt.Tensor) if o.requires_grad]
        if not outs:
            continue
        vs = [normal(rng, o.shape, o.dtype) for o in outs]
        grads = nt.autograd.grad(outs, ins, [nt.tensor(v) for v in vs], allow_unused=True)
        grads = [np.zeros(i.shape) if g is None else as_numpy(g) for g, i in zip(grads, ins)]
        for p, g in zip(paths, grads):
            np.testing.assert_allclose(
                g,
                _fd_gradient(op, s, p, vs, seen),
                rtol=1e-5,
                atol=1e-6,
                err_msg=f"{op.name} {s} FD",
            )
        if op.test.no_oracle or op.test.torch_complex_vjp_wrong:
            continue
        targs = to_torch(s.args)
        tins = [get_path(targs, p).requires_grad_(True) for p in paths]
        tout = resolve(torch, op.oracle or op.api)(*targs, **to_torch(s.kwargs))
        touts = [o for o in tensor_leaves(tout, torch.Tensor) if o.requires_grad]
        tgs = torch.autograd.grad(touts, tins, [torch.tensor(v) for v in vs], allow_unused=True)
        for g, t, i in zip(grads, tgs, ins):
            want = np.zeros(i.shape) if t is None else as_numpy(t)
            np.testing.assert_allclose(
                g, want, rtol=1e-7, atol=1e-9, err_msg=f"{op.name} {s} vs torch"
            )


@pytest.mark.parametrize("op", CGRAD)
def test_complex_jvp_matches_finite_differences(op):
    rng = np.random.default_rng(2)
    eps = 1e-6
    for s in _complex_samples(op):
        paths = _paths(op, s.args)
        tangents = [
            normal(rng, get_path(s.args, p).shape, get_path(s.args, p).dtype) for p in paths
        ]
        outs, tans = _jvp_through_trace(op, s, tangents, paths=paths)

        def shifted(sign):
            args = s.args
            for p, t in zip(paths, tangents):
                args = set_path(args, p, np.asarray(get_path(s.args, p) + sign * eps * t))
            out = resolve(nt, op.api)(*to_nt(args), **to_nt(s.kwargs))
            return [as_numpy(o) for o in tensor_leaves(out, nt.Tensor) if inexact(o)]

        for o, t, up, down in zip(outs, tans, shifted(1), shifted(-1)):
            got = np.zeros(o.shape) if t is None else as_numpy(t)
            np.testing.assert_allclose(
                got, (up - down) / (2 * eps), rtol=1e-5, atol=1e-6, err_msg=f"{op.name} {s} jvp"
            )


@pytest.mark.parametrize("op", REFUSED)
def test_complex_results_pytorch_cannot_differentiate_refuse_as_pytorch(op):
    s = _complex_samples(op)[0]
    for lib, conv in ((nt, to_nt), (torch, to_torch)):
        args = conv(s.args)
        for p in _paths(op, s.args):
            get_path(args, p).requires_grad_(True)
        with pytest.raises(RuntimeError, match="does not support automatic differentiation"):
            resolve(lib, op.oracle or op.api if lib is torch else op.api)(*args, **conv(s.kwargs))


# ------------------------------------------------------------------ focused tests
def _cplx(rng, *shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def test_a_complex_mlp_trains_with_pytorchs_gradients():
    rng = np.random.default_rng(0)
    W1, W2, X = _cplx(rng, 5, 4), _cplx(rng, 3, 5), _cplx(rng, 8, 4)
    Y = rng.standard_normal((8, 3)).astype(np.float32)

    def train(lib):
        w1 = lib.tensor(W1, requires_grad=True)
        w2 = lib.tensor(W2, requires_grad=True)
        opt = lib.optim.SGD([w1, w2], lr=0.05)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            h = lib.tensor(X) @ w1.T
            h = h * lib.sigmoid(h.abs())
            o = h @ w2.mH
            loss = ((o.abs() - lib.tensor(Y)) ** 2).mean() + o.angle().sum() * 1e-2
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, w1.grad, w2.grad, w1.detach(), w2.detach()

    got, ref = train(nt), train(torch)
    assert_close(got, ref, rtol=1e-4, atol=1e-5)


def test_a_real_leaf_through_complex_intermediates_gets_a_real_gradient():
    def prog(lib):
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        c = lib.tensor([1 + 2j, -0.5j, 3.0], dtype=lib.complex128)
        y = (x * c).exp().abs().sum() + lib.view_as_real(x * c).pow(2).sum()
        y.backward()
        return x.grad

    assert_close(prog(nt), prog(torch))


def test_gradcheck_passes_on_complex_functions_and_fails_on_a_wrong_formula():
    z = nt.tensor(_cplx(np.random.default_rng(1), 3).astype(np.complex128), requires_grad=True)
    assert nt.autograd.gradcheck(lambda z: (z * z.conj() + z.exp()).sin(), (z,))
    assert nt.autograd.gradgradcheck(lambda z: z * z * z, (z,))

    class Wrong(nt.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors
            return g * 2 * z  # the conjugate is missing

    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        nt.autograd.gradcheck(Wrong.apply, (z,))


def test_parts_of_complex_numbers_match_pytorch():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))

    def prog(lib):
        x = lib.tensor(a, requires_grad=True)
        y = lib.tensor(b, requires_grad=True)
        z = lib.complex(x, y) * lib.polar(x.abs(), y)
        r = lib.view_as_real(z)
        w = lib.view_as_complex(r * 2) + z.real - z.imag * 1j
        loss = (w * w.conj()).real.sum() + z.angle().sum() + z.abs().sum()
        gx, gy = lib.autograd.grad(loss, (x, y))
        return z, r.shape, w, gx, gy

    assert_close(prog(nt), prog(torch))


def test_sgn_of_complex_numbers_and_its_gradients_match_pytorch():
    z0 = np.array([1 + 1j, -2 + 0.5j, 0j, 3j])

    def prog(lib):
        z = lib.tensor(z0, requires_grad=True)
        s = z.sgn()
        (g,) = lib.autograd.grad((s * lib.tensor(z0[::-1].copy())).real.sum(), z)
        return s, g

    assert_close(prog(nt), prog(torch))
    z = nt.tensor(z0[:2])
    t = nt.tensor(np.array([0.3 - 1j, 2 + 0.1j]))
    eps = 1e-6
    _, jt = nt.func.jvp(nt.sgn, (z,), (t,))
    fd = ((z + eps * t).sgn() - (z - eps * t).sgn()) / (2 * eps)
    assert_close(jt, fd, rtol=1e-5, atol=1e-6)


def test_the_conjugate_bit_is_observable_as_in_pytorch():
    z0 = np.array([1 + 2j, 3 - 1j])

    def prog(lib):
        z = lib.tensor(z0)
        c = z.conj()
        r = lib.tensor([1.0, 2.0])
        return (
            c.is_conj(),
            c[:1].is_conj(),
            (c + 1).is_conj(),
            c.resolve_conj().is_conj(),
            c.conj().is_conj(),
            lib.is_conj(c),
            r.conj() is r,
            c.is_neg(),
            c,
        )

    assert_close(prog(nt), prog(torch))
    for lib in (nt, torch):
        with pytest.raises(RuntimeError, match="view_as_real doesn't work on unresolved"):
            lib.view_as_real(lib.tensor(z0).conj())


def test_view_as_complex_and_complex_refuse_as_pytorch():
    for lib in (nt, torch):
        with pytest.raises(RuntimeError, match="last dimension with stride 1"):
            lib.view_as_complex(lib.zeros(3, 4)[:, ::2])
        with pytest.raises(RuntimeError, match="storage_offset divisible by 2"):
            lib.view_as_complex(lib.zeros(6)[1:5].reshape(2, 2))
        with pytest.raises(RuntimeError, match="Expected object of scalar type Float"):
            lib.complex(lib.zeros(2), lib.zeros(2, dtype=lib.float64))
