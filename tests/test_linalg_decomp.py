"""Decompositions whose outputs are sign-ambiguous or that read one triangle of their input
(eigh, eigvalsh, cholesky, svd), checked through gauge-invariant quantities against PyTorch
and against finite differences along symmetric directions; and the composite linalg
functions (norms, matrix_power, tensordot, kron, ...) that are not single ops."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from twolibs import (
    arr,
    assert_same,
    assert_same_error,
    grad_prog,
    jvp_prog,
)

import numtorch as nt
from numtorch.func._jvp import apply_jvp
from numtorch.ops import linalg as L

RNG = np.random.default_rng(0)


def spd(n, batch=()):
    b = RNG.uniform(-1, 1, batch + (n, n))
    return b @ np.swapaxes(b, -1, -2) * 0.3 + np.diag(np.arange(1.0, n + 1) * 2.0) + np.eye(n)


def sym(n, batch=()):
    e = RNG.standard_normal(batch + (n, n))
    return e + np.swapaxes(e, -1, -2)


def nt_grad(f, a):
    x = nt.tensor(a, requires_grad=True)
    (g,) = nt.autograd.grad(f(nt, x), [x])
    return g.detach().numpy()


def torch_grad(f, a):
    x = torch.tensor(a, requires_grad=True)
    (g,) = torch.autograd.grad(f(torch, x), [x])
    return g.numpy()


def fd_along(f, a, e, eps=1e-6):
    with nt.no_grad():
        hi = f(nt, nt.tensor(np.asarray(a + eps * e))).item()
        lo = f(nt, nt.tensor(np.asarray(a - eps * e))).item()
    return (hi - lo) / (2 * eps)


def check_grad(f, a, symmetric=False):
    """numtorch's gradient equals torch's and matches FD along (symmetric) directions."""
    g = nt_grad(f, a)
    np.testing.assert_allclose(g, torch_grad(f, a), rtol=1e-6, atol=1e-8)
    for _ in range(3):
        e = sym(a.shape[-1], a.shape[:-2]) if symmetric else RNG.standard_normal(a.shape)
        np.testing.assert_allclose((g * e).sum(), fd_along(f, a, e), rtol=1e-5, atol=1e-6)


W3 = RNG.standard_normal((3, 3))
W3v = RNG.standard_normal(3)


# ------------------------------------------------------------------ eigh / eigvalsh
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_forward_gauge_invariant(uplo):
    a = spd(3, (2,))
    w, v = nt.linalg.eigh(nt.tensor(a), UPLO=uplo)
    tw, tv = torch.linalg.eigh(torch.tensor(a), UPLO=uplo)
    np.testing.assert_allclose(w.numpy(), tw.numpy(), rtol=1e-10)
    rec = v.numpy() @ (w.numpy()[..., None] * np.swapaxes(v.numpy(), -1, -2))
    np.testing.assert_allclose(rec, a, atol=1e-10)
    overlap = np.abs(np.swapaxes(v.numpy(), -1, -2) @ tv.numpy())
    np.testing.assert_allclose(overlap, np.broadcast_to(np.eye(3), overlap.shape), atol=1e-8)
    r = nt.linalg.eigh(nt.tensor(a))
    assert type(r).__name__ == "linalg_eigh" and r.eigenvalues is r[0] and r.eigenvectors is r[1]


def _eigh_loss(m, x):
    w, v = m.linalg.eigh(x)
    return (w * m.tensor(W3v)).sum() + (v * v * m.tensor(W3)).sum()


def test_eigh_grad_gauge_invariant_loss():
    check_grad(_eigh_loss, spd(3), symmetric=True)


def test_eigvalsh_grad():
    check_grad(lambda m, x: (m.linalg.eigvalsh(x) * m.tensor(W3v)).sum(), spd(3), symmetric=True)
    check_grad(lambda m, x: m.linalg.eigvalsh(x, UPLO="U").sum(), spd(3, (2,)), symmetric=True)


def test_eigh_second_order_matches_torch():
    a = spd(3)

    def gg(m, x):
        (g,) = m.autograd.grad(_eigh_loss(m, x), [x], create_graph=True)
        return (g * m.tensor(W3)).sum()

    x = nt.tensor(a, requires_grad=True)
    (h,) = nt.autograd.grad(gg(nt, x), [x])
    tx = torch.tensor(a, requires_grad=True)
    (th,) = torch.autograd.grad(gg(torch, tx), [tx])
    np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-6, atol=1e-8)


def _jvp(op, args, attrs, tangents):
    res = op.fn(*[nt.tensor(a) for a in args], **attrs)
    return res, apply_jvp(
        op, tuple(nt.tensor(a) for a in args), attrs, res, tuple(nt.tensor(t) for t in tangents)
    )


def _fd_out(fn, a, t, eps=1e-6):
    return (fn(a + eps * t) - fn(a - eps * t)) / (2 * eps)


def test_eigh_jvp():
    a, t = spd(3), sym(3)
    (w, v), (tw, tv) = _jvp(L.linalg_eigh_p, (a,), {}, (t,))
    np.testing.assert_allclose(
        tw.numpy(), _fd_out(lambda x: np.linalg.eigh(x)[0], a, t), rtol=1e-5, atol=1e-6
    )
    fd_vv = _fd_out(lambda x: np.linalg.eigh(x)[1] ** 2, a, t)
    np.testing.assert_allclose(2 * v.numpy() * tv.numpy(), fd_vv, rtol=1e-5, atol=1e-6)
    (tvals,) = [
        apply_jvp(L.linalg_eigvalsh_p, (nt.tensor(a),), {"UPLO": "L"}, None, (nt.tensor(t),))
    ]
    np.testing.assert_allclose(tvals.numpy(), tw.numpy(), rtol=1e-8, atol=1e-10)


# ------------------------------------------------------------------ cholesky
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_grad(upper):
    check_grad(
        lambda m, x: (m.linalg.cholesky(x, upper=upper) * m.tensor(W3)).sum(),
        spd(3),
        symmetric=True,
    )


def test_cholesky_batched_grad_and_jvp():
    a = spd(3, (2,))
    check_grad(lambda m, x: (m.linalg.cholesky(x) ** 2).sum(), a, symmetric=True)
    t = sym(3, (2,))
    _, tl = _jvp(L.linalg_cholesky_p, (a,), {"upper": False}, (t,))
    np.testing.assert_allclose(tl.numpy(), _fd_out(np.linalg.cholesky, a, t), rtol=1e-5, atol=1e-6)


def test_cholesky_errors():
    with pytest.raises(nt.linalg.LinAlgError, match="not positive-definite"):
        nt.linalg.cholesky(-nt.eye(3))
    assert issubclass(nt.linalg.LinAlgError, RuntimeError)


# ------------------------------------------------------------------ svd
@pytest.mark.parametrize(
    "shape,full", [((4, 3), False), ((3, 4), False), ((4, 3), True), ((2, 3, 3), True)]
)
def test_svd_forward_gauge_invariant(shape, full):
    a = RNG.standard_normal(shape)
    u, s, vh = nt.linalg.svd(nt.tensor(a), full_matrices=full)
    tu, ts, tvh = torch.linalg.svd(torch.tensor(a), full_matrices=full)
    assert u.shape == tuple(tu.shape) and vh.shape == tuple(tvh.shape)
    np.testing.assert_allclose(s.numpy(), ts.numpy(), rtol=1e-10)
    k = s.shape[-1]
    rec = (u.numpy()[..., :k] * s.numpy()[..., None, :]) @ vh.numpy()[..., :k, :]
    np.testing.assert_allclose(rec, a, atol=1e-10)
    np.testing.assert_allclose(nt.linalg.svdvals(nt.tensor(a)).numpy(), ts.numpy(), rtol=1e-10)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3)])
def test_svd_grad_gauge_invariant_loss(shape):
    a = RNG.standard_normal(shape)
    k = min(shape)
    c = RNG.standard_normal(k)
    W = RNG.standard_normal(shape)

    def loss(m, x):
        u, s, vh = m.linalg.svd(x, full_matrices=False)
        # U diag(c) Vh and |U|^2 are invariant under the sign gauge of singular vectors.
        p = (u * m.tensor(c)) @ vh
        return (
            (p * m.tensor(W)).sum()
            + (s * m.tensor(c)).sum()
            + (u * u).sum(-1).mul(m.tensor(W[:, 0])).sum()
        )

    check_grad(loss, a)


def test_svd_full_matrices_square_grad():
    a = RNG.standard_normal((3, 3))
    check_grad(lambda m, x: (m.linalg.svd(x)[1] ** 2).sum() + m.linalg.svdvals(x).sum(), a)


def test_svd_jvp():
    a, t = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    (u, s, vh), (tu, ts, tvh) = _jvp(L.linalg_svd_p, (a,), {"full_matrices": False}, (t,))
    np.testing.assert_allclose(
        ts.numpy(), _fd_out(lambda x: np.linalg.svd(x)[1], a, t), rtol=1e-5, atol=1e-6
    )
    fd_p = _fd_out(
        lambda x: (lambda r: (r[0] * np.arange(1.0, 4)) @ r[2])(
            np.linalg.svd(x, full_matrices=False)
        ),
        a,
        t,
    )
    d = np.arange(1.0, 4)
    got = (tu.numpy() * d) @ vh.numpy() + (u.numpy() * d) @ tvh.numpy()
    np.testing.assert_allclose(got, fd_p, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ norms and composites
ORDS = ["fro", "nuc", 2, -2, 1, -1, float("inf"), float("-inf")]


@pytest.mark.parametrize("ord", ORDS)
def test_matrix_norm_value_and_grad(ord):
    a = RNG.standard_normal((2, 3, 4))
    np.testing.assert_allclose(
        nt.linalg.matrix_norm(nt.tensor(a), ord).numpy(),
        torch.linalg.matrix_norm(torch.tensor(a), ord).numpy(),
        rtol=1e-10,
    )
    out = nt.linalg.matrix_norm(nt.tensor(a), ord, dim=(0, 2), keepdim=True)
    ref = torch.linalg.matrix_norm(torch.tensor(a), ord, dim=(0, 2), keepdim=True)
    assert out.shape == tuple(ref.shape)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-10)
    check_grad(lambda m, x: (m.linalg.matrix_norm(x, ord) * m.tensor([1.0, -2.0])).sum(), a)


def test_matrix_norm_errors():
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        nt.linalg.matrix_norm(nt.ones(3))
    with pytest.raises(RuntimeError, match="Order foo not supported"):
        nt.linalg.matrix_norm(nt.ones(3, 3), "foo")


@pytest.mark.parametrize(
    "args,kwargs",
    [
        ((), {}),
        ((None, (0, 1)), {}),
        (("fro",), {}),
        ((2,), {}),
        ((None, 1), {}),
        ((3, 1), {"keepdim": True}),
    ],
)
def test_norm(args, kwargs):
    a = RNG.standard_normal((3, 4)) + 0.1
    ref = torch.linalg.norm(torch.tensor(a), *args, **kwargs)
    out = nt.linalg.norm(nt.tensor(a), *args, **kwargs)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-10)
    check_grad(lambda m, x: m.linalg.norm(x, *args, **kwargs).sum(), a)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -2])
def test_matrix_power(n):
    a = RNG.uniform(-1, 1, (2, 3, 3)) + 3 * np.eye(3)
    np.testing.assert_allclose(
        nt.linalg.matrix_power(nt.tensor(a), n).numpy(),
        torch.linalg.matrix_power(torch.tensor(a), n).numpy(),
        rtol=1e-10,
    )
    np.testing.assert_allclose(
        nt.tensor(a).matrix_power(n).numpy(),
        torch.matrix_power(torch.tensor(a), n).numpy(),
        rtol=1e-10,
    )
    if n:
        check_grad(lambda m, x: (m.linalg.matrix_power(x, n) * m.tensor(W3)).sum(), a)


@pytest.mark.parametrize(
    "sa,sb,dims",
    [
        ((2, 3, 4), (3, 4, 5), 2),
        ((2, 3), (3, 4), 1),
        ((2, 3), (4, 5), 0),
        ((2, 3, 4), (4, 3), ([1, 2], [1, 0])),
    ],
)
def test_tensordot(sa, sb, dims):
    a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
    out = nt.tensordot(nt.tensor(a), nt.tensor(b), dims)
    np.testing.assert_allclose(
        out.numpy(), torch.tensordot(torch.tensor(a), torch.tensor(b), dims).numpy(), rtol=1e-10
    )
    check_grad(lambda m, x: m.tensordot(x, m.tensor(b), dims).sum(), a)


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (4, 3)), ((), (2, 3)), ((2, 2, 3), (3,))])
def test_inner(sa, sb):
    a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
    ref = torch.inner(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(
        nt.inner(nt.tensor(a), nt.tensor(b)).numpy(), ref.numpy(), rtol=1e-10
    )
    check_grad(lambda m, x: (m.inner(x, m.tensor(b)) ** 2).sum(), a)


@pytest.mark.parametrize(
    "sa,sb", [((2,), (3,)), ((2, 3), (2, 2)), ((2, 1, 2), (3, 2)), ((2, 2), ())]
)
def test_kron(sa, sb):
    a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
    ref = torch.kron(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(nt.kron(nt.tensor(a), nt.tensor(b)).numpy(), ref.numpy(), rtol=1e-10)
    check_grad(lambda m, x: (m.kron(x, m.tensor(b)) ** 2).sum(), a)


def test_multi_dot_vecdot_cross():
    ms = [RNG.standard_normal(s) for s in [(3,), (3, 4), (4, 2), (2,)]]
    ref = torch.linalg.multi_dot([torch.tensor(m) for m in ms])
    np.testing.assert_allclose(
        nt.linalg.multi_dot([nt.tensor(m) for m in ms]).numpy(), ref.numpy(), rtol=1e-10
    )
    x, y = RNG.standard_normal((2, 3)), RNG.standard_normal((3,))
    ref = torch.linalg.vecdot(torch.tensor(x), torch.tensor(y))
    np.testing.assert_allclose(
        nt.linalg.vecdot(nt.tensor(x), nt.tensor(y)).numpy(), ref.numpy(), rtol=1e-10
    )
    a, b = RNG.standard_normal((3, 2)), RNG.standard_normal((3, 2))
    with pytest.warns(UserWarning):
        out = nt.cross(nt.tensor(a), nt.tensor(b))
    np.testing.assert_allclose(
        out.numpy(), torch.cross(torch.tensor(a), torch.tensor(b), dim=0).numpy(), rtol=1e-10
    )
    with pytest.raises(RuntimeError, match="expected at least 2 tensors but got 1"):
        nt.linalg.multi_dot([nt.ones(3)])


def test_return_types_and_aliases():
    a = spd(3)
    r = nt.linalg.slogdet(nt.tensor(a))
    assert type(r).__name__ == "linalg_slogdet" and r.sign.item() == 1.0
    np.testing.assert_allclose(r.logabsdet.item(), np.linalg.slogdet(a)[1])
    r2 = nt.slogdet(nt.tensor(a))
    assert type(r2).__name__ == "slogdet" and type(r2)(list(r2)).logabsdet is r2[1]
    q, rr = nt.linalg.qr(nt.tensor(a))
    np.testing.assert_allclose((q @ rr).numpy(), a, atol=1e-12)
    np.testing.assert_allclose(nt.det(nt.tensor(a)).item(), np.linalg.det(a))
    np.testing.assert_allclose(nt.inverse(nt.tensor(a)).numpy(), np.linalg.inv(a), atol=1e-12)
    np.testing.assert_allclose(nt.tensor(a).logdet().item(), np.log(np.linalg.det(a)))
    np.testing.assert_allclose(
        nt.matrix_exp(nt.tensor(a) * 0.1).numpy(), torch.matrix_exp(torch.tensor(a) * 0.1).numpy()
    )
    with pytest.raises(nt.linalg.LinAlgError):
        nt.linalg.inv(nt.zeros(3, 3))


def test_matmul_mixed_dtypes_raise():
    with pytest.raises(
        RuntimeError, match=r"expected m1 and m2 to have the same dtype, but got: float != double"
    ):
        nt.ones(2, 3) @ nt.ones(3, 2, dtype=nt.float64)
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        nt.matmul(nt.ones(2, 2, 3), nt.ones(2, 3, 2, dtype=nt.float64))


@pytest.mark.parametrize("kw", [{}, {"atol": 0.5}, {"rtol": 0.3}, {"hermitian": False}])
def test_pinv(kw):
    a = RNG.standard_normal((2, 4, 3))
    a[1, :, 2] = a[1, :, 0]  # rank deficient
    ref = torch.linalg.pinv(torch.tensor(a), **kw)
    np.testing.assert_allclose(nt.linalg.pinv(nt.tensor(a), **kw).numpy(), ref.numpy(), atol=1e-10)
    full = RNG.standard_normal((4, 3))
    w = RNG.standard_normal((3, 4))
    check_grad(lambda m, x: (m.linalg.pinv(x) * m.tensor(w)).sum(), full)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse(upper):
    a, b = spd(3), RNG.standard_normal((3, 2))
    fac = np.linalg.cholesky(a)
    fac = fac.T.copy() if upper else fac
    ref = torch.cholesky_solve(torch.tensor(b), torch.tensor(fac), upper)
    np.testing.assert_allclose(
        nt.cholesky_solve(nt.tensor(b), nt.tensor(fac), upper).numpy(), ref.numpy(), rtol=1e-10
    )
    ref = torch.cholesky_inverse(torch.tensor(fac), upper)
    np.testing.assert_allclose(
        nt.cholesky_inverse(nt.tensor(fac), upper).numpy(), ref.numpy(), rtol=1e-10
    )
    check_grad(lambda m, x: (m.cholesky_solve(x, m.tensor(fac), upper) ** 2).sum(), b)


def test_legacy_svd_qr():
    a = RNG.standard_normal((4, 3))
    u, s, v = nt.svd(nt.tensor(a))
    assert type(nt.svd(nt.tensor(a))).__name__ == "svd"
    np.testing.assert_allclose(((u * s) @ v.mT).numpy(), a, atol=1e-12)
    q, r = nt.qr(nt.tensor(a), some=False)
    tq, tr = torch.linalg.qr(torch.tensor(a), mode="complete")
    np.testing.assert_allclose(q.numpy(), tq.numpy(), atol=1e-12)
    np.testing.assert_allclose(r.numpy(), tr.numpy(), atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_modes_forward(shape, mode):
    a = RNG.standard_normal(shape)
    q, r = nt.linalg.qr(nt.tensor(a), mode=mode)
    tq, tr = torch.linalg.qr(torch.tensor(a), mode=mode)
    assert q.shape == tuple(tq.shape) and r.shape == tuple(tr.shape)
    np.testing.assert_allclose(r.numpy(), tr.numpy(), atol=1e-12)
    np.testing.assert_allclose(q.numpy(), tq.numpy(), atol=1e-12)


def test_qr_backward_errors():
    x = nt.tensor(RNG.standard_normal((4, 3)), requires_grad=True)
    with pytest.raises(
        RuntimeError, match="not differentiable when mode='complete' and nrows > ncols"
    ):
        nt.linalg.qr(x, mode="complete").Q.sum().backward()
    with pytest.raises(RuntimeError, match="which is not computed when mode='r'"):
        nt.linalg.qr(x, mode="r").R.sum().backward()


# ==================================================================
# Found by issue 14's sweep of silently wrong values and derivatives.


# ------------------------------------------------------------------ eigh, svd at repeated values
DEGENERATE = [np.eye(3), np.diag([2.0, 2.0, 5.0])]
SPECTRAL = [
    lambda L, x: L.linalg.eigh(x)[0].sum(),
    lambda L, x: (L.linalg.eigh(x)[0] * L.arange(1.0, 4.0, dtype=L.float64)).sum(),
    lambda L, x: L.linalg.eigh(x).eigenvalues.pow(2).sum(),
    lambda L, x: L.linalg.svd(x)[1].sum(),
    lambda L, x: L.linalg.svd(x, full_matrices=False)[1].pow(2).sum(),
    lambda L, x: L.svd(x)[1].sum(),
]


@pytest.mark.parametrize("a", DEGENERATE, ids=["eye", "diag"])
@pytest.mark.parametrize("f", SPECTRAL)
def test_values_of_eigh_svd_at_repeated_values_have_finite_gradients(a, f):
    assert_same(grad_prog(f), a, rtol=1e-12, atol=1e-12)
    assert_same(jvp_prog(f), a, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("a", DEGENERATE, ids=["eye", "diag"])
def test_vectors_of_eigh_svd_along_the_identity(a):
    # PyTorch's tangents of the vectors here are NaN (0 * inf); A + eps*I keeps A's vectors
    # exactly, so finite differences give 0, and so do we.
    t = nt.eye(3, dtype=nt.float64)
    for f in (lambda x: nt.linalg.eigh(x).eigenvectors, lambda x: nt.linalg.svd(x).U):
        tan = nt.func.jvp(f, (nt.tensor(a),), (t,))[1]
        fd = (f(nt.tensor(a + 1e-6 * np.eye(3))) - f(nt.tensor(a - 1e-6 * np.eye(3)))) / 2e-6
        np.testing.assert_allclose(tan.numpy(), fd.numpy(), atol=1e-9)
        np.testing.assert_array_equal(tan.numpy(), 0.0)


# ==================================================================
# Causes behind the bad-input sweep's DIFFERS cases (tests/test_bad_inputs.py), fixed.


def test_svd_of_nonfinite_input():
    """LAPACK's failure on NaN/inf in PyTorch's words (NumPy: 'SVD did not converge')."""
    a = np.eye(3)
    a[0, 1] = np.nan
    progs = [
        lambda L, a: L.linalg.svdvals(a),
        lambda L, a: L.linalg.svd(a),
        lambda L, a: L.linalg.pinv(a),
        lambda L, a: L.linalg.svdvals(L.stack([a.nan_to_num(), a])),  # a batch element
    ]
    for prog in progs:
        assert_same_error(prog, a)


# ==================================================================
# Issue 14, "unclear errors": PyTorch's exception type and text; NumPy's errors never leak.


@pytest.mark.parametrize(
    "a",
    [
        [[float("nan"), 0.0], [0.0, 1.0]],
        [[[1.0, 0.0], [0.0, 1.0]], [[4.0, 1.0], [1.0, float("nan")]]],
        [[1.0, 2.0], [2.0, 1.0]],
    ],
)
def test_cholesky_of_a_nan_pivot_fails_as_a_non_positive_one(a):
    assert_same_error(lambda T: T.linalg.cholesky(T.tensor(a)))


# ==================================================================
# The functions added for issue 14, beyond the op database's generic tests.


# ------------------------------------------------------------------ inv_ex, cholesky_ex
def test_inv_ex_reports_singular_matrices_instead_of_raising():
    a = np.stack([np.eye(3) * 2, np.zeros((3, 3)), np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]])])

    def prog(T, a):
        r = T.linalg.inv_ex(a)
        return r.info, r.inverse[0], type(r).__name__

    assert_same(prog, a)
    assert_same_error(lambda T: T.linalg.inv_ex(T.tensor(a), check_errors=True))
    assert_same_error(lambda T: T.linalg.inv_ex(T.zeros(3, 3), check_errors=True))
    assert_same_error(lambda T: T.linalg.inv_ex(T.eye(2, dtype=T.long)))


def test_cholesky_ex_reports_the_failing_minor_instead_of_raising():
    a = np.stack(
        [
            np.eye(3),
            np.diag([4.0, -1, 1]),
            np.diag([1.0, 1, 0]),
            np.array([[1.0, 2, 0], [2, 1, 0], [0, 0, 1]]),
        ]
    )

    def prog(T, a):
        r = T.linalg.cholesky_ex(a)
        u = T.linalg.cholesky_ex(a[:1], upper=True)
        return r.info, r.L[0], u.L, u.info, type(r).__name__

    assert_same(prog, a)
    assert_same_error(lambda T: T.linalg.cholesky_ex(T.tensor(a), check_errors=True))
    assert_same_error(lambda T: T.linalg.cholesky_ex(T.zeros(3, 2)))


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_ex_gradient_matches_torch(upper):
    b = arr(2, 3, 3)
    spd = b @ np.swapaxes(b, -1, -2) + 3 * np.eye(3)

    def prog(T, a, w):
        a = a.requires_grad_()
        L = T.linalg.cholesky_ex(a, upper=upper).L
        return T.autograd.grad((L * w).sum(), a)

    assert_same(prog, spd, arr(2, 3, 3, seed=3), rtol=1e-9)


def test_ex_functions_under_vmap_report_per_matrix():
    a = nt.tensor(np.stack([np.eye(2), np.zeros((2, 2))]))
    inv, info = nt.vmap(nt.linalg.inv_ex)(a)
    assert info.tolist() == [0, 1] and info.dtype == nt.int32
    L, info = nt.vmap(nt.linalg.cholesky_ex)(a)
    assert info.tolist() == [0, 1] and np.isnan(L[1].numpy()).all()
    X, info = nt.vmap(nt.linalg.solve_ex)(a, nt.ones(2, 2, dtype=nt.float64))
    assert info.tolist() == [0, 1] and X[0].tolist() == [1.0, 1.0] and np.isnan(X[1].numpy()).all()


def test_solve_ex_reports_singular_matrices_instead_of_raising():
    a = np.stack([np.eye(3) * 2, np.zeros((3, 3))])

    def prog(T, a, b, m):
        r = T.linalg.solve_ex(a, b)
        s = T.linalg.solve_ex(a, m)
        return r.info, r.result[0], s.result[0], s.info, type(r).__name__

    assert_same(prog, a, arr(2, 3), arr(2, 3, 2))
    assert_same_error(lambda T: T.linalg.solve_ex(T.tensor(a), T.ones(3), check_errors=True))
    assert_same_error(lambda T: T.linalg.solve_ex(T.zeros(3, 3), T.ones(3), check_errors=True))
    assert_same_error(lambda T: T.linalg.solve_ex(T.eye(3), T.ones(2, 3, 2), left=False))
    assert_same_error(lambda T: T.linalg.solve(T.eye(3), T.ones(2, 3, 2), left=False))


# ------------------------------------------------------------------ LU, eig, QR reflectors, LDL
def cplx(*shape, seed=0):
    r = np.random.default_rng(seed)
    return r.standard_normal(shape) + 1j * r.standard_normal(shape)


def complex_grads(f, *args, seed=1):
    """Each library's outputs of ``f`` and the gradients of its complex (or real) arguments,
    pulled back from fixed complex cotangents (real ones for real outputs)."""
    res = []
    for lib in (nt, torch):
        xs = [lib.tensor(a, requires_grad=a.dtype.kind in "fc") for a in args]
        outs = [o for o in f(lib, *xs) if o.requires_grad]
        r = np.random.default_rng(seed)
        vs = [
            lib.tensor(r.standard_normal(o.shape) + 1j * r.standard_normal(o.shape))
            if o.is_complex()
            else lib.tensor(r.standard_normal(o.shape))
            for o in outs
        ]
        ins = [x for x in xs if x.requires_grad]
        gs = lib.autograd.grad(outs, ins, vs)
        res.append(
            [o.detach().resolve_conj().numpy() for o in outs]
            + [g.resolve_conj().numpy() for g in gs]
        )
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("shape", [(3, 3), (3, 5), (5, 3), (2, 3, 3)])
def test_lu_complex_gradients_match_torch(shape):
    A = cplx(*shape)
    complex_grads(lambda T, a: T.linalg.lu(a)[1:], A)
    complex_grads(lambda T, a: T.linalg.lu_factor(a)[:1], A)
    piv = torch.linalg.lu_factor(torch.tensor(A))[1]
    complex_grads(lambda T, a: T.lu_unpack(a, T.tensor(piv.numpy()))[1:], A)


@pytest.mark.parametrize(
    "kw", [{}, {"adjoint": True}, {"left": False}, {"left": False, "adjoint": True}]
)
def test_lu_solve_complex_gradients_match_torch(kw):
    LU, piv = (t.numpy() for t in torch.linalg.lu_factor(torch.tensor(cplx(3, 3) + 3 * np.eye(3))))
    B = cplx(3, 2) if kw.get("left", True) else cplx(2, 3)

    def f(T, lu, b):
        return (T.linalg.lu_solve(lu, T.tensor(piv), b, **kw),)

    complex_grads(f, LU, B)


def test_lu_edge_values_match_torch():
    A = arr(3, 3)
    singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]])
    nan_first = A.copy()
    nan_first[0, 0] = np.nan
    inf_in = A.copy()
    inf_in[1, 2] = np.inf
    for M in (singular, np.zeros((2, 3, 3)), nan_first, inf_in, np.zeros((0, 0))):
        assert_same(lambda T, a: T.linalg.lu_factor_ex(a), M)
        assert_same(lambda T, a: T.linalg.lu(a), M)
    assert_same_error(lambda T, a: T.linalg.lu_factor(a), np.zeros((2, 3, 3)))
    assert_same_error(lambda T, a: T.linalg.lu_factor_ex(a, check_errors=True), singular)
    assert_same_error(lambda T, a: T.linalg.lu_factor(a.long()), A)


def test_lu_unpack_without_data_backward_raises_as_torch():
    LU, piv = (t.numpy() for t in torch.linalg.lu_factor(torch.tensor(arr(3, 3))))

    def prog(T, lu):
        lu.requires_grad_(True)
        P, L, U = T.lu_unpack(lu, T.tensor(piv), unpack_data=False)
        return T.autograd.grad(L.sum() + U.sum(), lu)

    assert_same_error(prog, LU)


def test_torch_lu_and_lu_solve_spellings():
    A = arr(3, 3) + 3 * np.eye(3)
    B = arr(3, 2, seed=1)

    def prog(T, a, b):
        LU, piv, info = T.lu(a, get_infos=True)
        return T.lu(a), info, T.lu_solve(b, LU, piv), a.lu_solve(LU, piv), a.lu()

    assert_same(prog, A, B, atol=1e-12)


def _phase_free(V):
    """Eigenvectors up to a unit phase per column: each scaled so its largest entry is real
    and positive."""
    idx = np.abs(V).argmax(-2)
    ph = np.take_along_axis(V, idx[..., None, :], -2)
    return V * (np.abs(ph) / ph)


@pytest.mark.parametrize(
    "A", [arr(4, 4), cplx(3, 3), arr(2, 3, 3), np.array([[1.0, 2.0], [-3.0, 1.0]])]
)
def test_eig_values_and_vectors_up_to_phase_match_torch(A):
    w, V = (t.numpy() for t in nt.linalg.eig(nt.tensor(A)))
    tw, tV = (t.numpy() for t in torch.linalg.eig(torch.tensor(A)))
    np.testing.assert_allclose(w, tw, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_phase_free(V), _phase_free(tV), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(nt.linalg.eigvals(nt.tensor(A)).numpy(), tw, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("A", [arr(4, 4), cplx(3, 3)])
def test_eig_gradients_of_phase_invariant_losses_match_torch(A):
    W = np.random.default_rng(2).standard_normal(A.shape)

    def loss(T, a):
        w, V = T.linalg.eig(a)
        return w.real.sum() + 2 * w.imag.sum() + (V.abs() ** 2 * T.tensor(W)).sum()

    assert_same(grad_prog(loss), A, rtol=1e-8, atol=1e-10)
    assert_same(grad_prog(lambda T, a: T.linalg.eigvals(a).abs().sum()), A, rtol=1e-8, atol=1e-10)
    complex_grads(lambda T, a: (T.linalg.eigvals(a),), A)


def test_eig_forward_mode_matches_torch_on_values():
    A = arr(3, 3)
    T0 = arr(3, 3, seed=4)
    ours = nt.func.jvp(lambda a: nt.linalg.eigvals(a), (nt.tensor(A),), (nt.tensor(T0),))[1]
    theirs = torch.func.jvp(
        lambda a: torch.linalg.eigvals(a), (torch.tensor(A),), (torch.tensor(T0),)
    )[1]
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-8, atol=1e-10)


def test_eig_errors_match_torch():
    assert_same_error(lambda T: T.linalg.eig(T.tensor([[1.0, math.nan], [0.0, 1.0]])))
    assert_same_error(lambda T: T.linalg.eig(T.eye(2, dtype=T.long)))
    assert_same_error(lambda T: T.linalg.eigvals(T.ones(3)))
    assert_same_error(lambda T: T.linalg.eig(T.ones(3, 2)))


def test_eigh_and_eigvalsh_take_complex_hermitian_input():
    H = cplx(4, 4)
    H = H + H.conj().T
    assert_same(lambda T, h: T.linalg.eigvalsh(h), H)
    assert_same(lambda T, h: T.linalg.eigvalsh(h, UPLO="U"), H)
    w, V = (t.numpy() for t in nt.linalg.eigh(nt.tensor(H)))
    tw, tV = (t.numpy() for t in torch.linalg.eigh(torch.tensor(H)))
    np.testing.assert_allclose(w, tw, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_phase_free(V), _phase_free(tV), rtol=1e-8, atol=1e-10)
    complex_grads(lambda T, h: (T.linalg.eigvalsh(h),), H)
    complex_grads(lambda T, h: (T.linalg.eigh(h)[0], T.linalg.eigh(h)[1].abs() ** 2), H)


def _svd_phase_free(T, a, full):
    """Outputs of a complex svd that do not depend on the phase of its singular pairs:
    S, U diag(c) Vh and |U|^2, |Vh|^2."""
    U, S_, Vh = T.linalg.svd(a, full_matrices=full)
    k = S_.shape[-1]
    c = T.arange(1.0, k + 1, dtype=T.float64)
    Uk, Vk = U[..., :k], Vh[..., :k, :]
    return S_, (Uk * c) @ Vk, U.abs() ** 2, Vh.abs() ** 2


@pytest.mark.parametrize(
    "shape,full", [((4, 3), False), ((3, 4), False), ((3, 3), True), ((2, 3, 3), False)]
)
def test_svd_of_complex_input_matches_torch(shape, full):
    # the generic sweeps leave linalg.svd real: a random cotangent of U or Vh depends on the
    # phase of each singular pair (PyTorch raises on it), and so does a finite difference
    A, tA = cplx(*shape, seed=4), cplx(*shape, seed=5)
    assert_same(lambda T, a: T.linalg.svd(a, full_matrices=full), A)
    complex_grads(lambda T, a: _svd_phase_free(T, a, full), A)
    if full and shape[-1] != shape[-2]:
        return

    def jvp(T, a, t):  # the phase of each pair split between U and V, as PyTorch's
        return T.func.jvp(lambda x: T.linalg.svd(x, full_matrices=full), (a,), (t,))

    assert_same(jvp, A, tA)


def test_geqrf_matches_torch_and_has_no_derivative():
    A = arr(5, 3)
    assert_same(lambda T, a: T.geqrf(a), A)
    assert_same(lambda T, a: a.geqrf(), cplx(3, 4))

    def prog(T, a):
        a.requires_grad_(True)
        return T.autograd.grad(T.geqrf(a)[0].sum(), a)

    assert_same_error(prog, A)


def test_householder_product_and_ormqr_complex_gradients_match_torch():
    a, tau = (t.numpy() for t in torch.geqrf(torch.tensor(cplx(5, 3))))
    complex_grads(lambda T, x, t: (T.linalg.householder_product(x, t),), a, tau)
    complex_grads(lambda T, x, t: (T.orgqr(x, t), x.orgqr(t)), a, tau)
    for kw, C in (
        ({}, cplx(5, 2)),
        ({"transpose": True}, cplx(5, 2)),
        ({"left": False}, cplx(2, 5)),
    ):
        complex_grads(lambda T, x, t, c, kw=kw: (T.ormqr(x, t, c, **kw),), a, tau, C)


def test_householder_product_reads_only_below_the_diagonal():
    a, tau = (t.numpy() for t in torch.geqrf(torch.tensor(arr(4, 3))))
    a = a.copy()
    a[0, 2] = np.nan  # R's part: never read
    assert_same(lambda T, x, t: T.linalg.householder_product(x, t), a, tau)


def test_ldl_matches_torch_and_has_no_derivative():
    S_ = sym(4)
    H = cplx(3, 3)
    H = H + H.conj().T
    B = arr(4, 2, seed=3)
    assert_same(lambda T, a: T.linalg.ldl_factor(a), S_)
    assert_same(lambda T, a: T.linalg.ldl_factor_ex(a, hermitian=True), H)

    def solve(T, a, b, herm):
        LD, piv = T.linalg.ldl_factor(a, hermitian=herm)
        return T.linalg.ldl_solve(LD, piv, b, hermitian=herm)

    assert_same(lambda T, a, b: solve(T, a, b, False), S_, B)
    assert_same(lambda T, a, b: solve(T, a, b, True), H, cplx(3, 2))

    def back(T, a):
        a.requires_grad_(True)
        return T.autograd.grad(T.linalg.ldl_factor(a)[0].sum(), a)

    assert_same_error(back, S_)

    def back_solve(T, a, b):
        LD, piv = T.linalg.ldl_factor(a)
        b.requires_grad_(True)
        return T.autograd.grad(T.linalg.ldl_solve(LD, piv, b).sum(), b)

    assert_same_error(back_solve, S_, B)
    assert_same_error(lambda T, a: T.linalg.ldl_factor(a), np.zeros((2, 3, 3)))
    assert_same_error(lambda T, a, b: T.linalg.ldl_solve(*T.linalg.ldl_factor(a), b[:, 0]), S_, B)


@pytest.mark.parametrize("name", ["svd_lowrank", "pca_lowrank"])
@pytest.mark.parametrize("shape", [(6, 5), (5, 6)])
def test_lowrank_on_a_low_rank_matrix_matches_torch(name, shape):
    r = np.random.default_rng(3)
    A = r.standard_normal((shape[0], 2)) @ r.standard_normal((2, shape[1]))
    U, S_, V = getattr(nt, name)(nt.tensor(A))
    tU, tS, tV = getattr(torch, name)(torch.tensor(A))
    assert tuple(U.shape) == tuple(tU.shape) and tuple(V.shape) == tuple(tV.shape)
    np.testing.assert_allclose(S_.numpy(), tS.numpy(), rtol=1e-8, atol=1e-10)
    if name == "svd_lowrank":
        np.testing.assert_allclose((U * S_) @ V.mT, A, rtol=1e-8, atol=1e-10)


def test_lowrank_errors_match_torch():
    assert_same_error(lambda T, a: T.pca_lowrank(a, q=7), arr(5, 4))
    assert_same_error(lambda T, a: T.pca_lowrank(a, niter=-1), arr(5, 4))


@pytest.mark.parametrize(
    "prog",
    [
        lambda T, a: T.eig(a),
        lambda T, a: T.eig(a, True),
        lambda T, a: a.eig(),
        lambda T, a: T.symeig(a),
        lambda T, a: a.symeig(True),
        lambda T, a: T.lstsq(a, a),
        lambda T, a: a.lstsq(a),
        lambda T, a: T.solve(a, a),
        lambda T, a: a.solve(a),
        lambda T, a: T.matrix_rank(a),
    ],
)
def test_removed_functions_raise_as_torch(prog):
    assert_same_error(prog, arr(3, 3))


@pytest.mark.parametrize("largest", [True, False])
def test_lobpcg_pairs_and_gradient_match_torch(largest):
    r = np.random.default_rng(5)
    a = r.standard_normal((9, 9))
    A = a @ a.T + np.eye(9)
    E, X = nt.lobpcg(nt.tensor(A), k=2, largest=largest)
    torch.manual_seed(0)  # PyTorch's iteration starts from a random basis
    tE, tX = torch.lobpcg(torch.tensor(A), k=2, largest=largest)
    np.testing.assert_allclose(E.numpy(), tE.numpy(), rtol=1e-8)
    # its vectors are as exact as its tolerance (about 1e-8 on the values) allows
    np.testing.assert_allclose(np.abs(X.numpy()), np.abs(tX.numpy()), rtol=1e-4, atol=1e-6)
    # PyTorch stops its iteration at tol = sqrt(eps): its pairs are exact to about 1e-8
    assert_same(
        grad_prog(lambda T, a: T.lobpcg(a, k=2, largest=largest)[0].sum()), A, rtol=1e-4, atol=1e-6
    )
    B = np.diag(np.arange(1.0, 10.0))
    E, X = nt.lobpcg(nt.tensor(A), k=2, B=nt.tensor(B), largest=largest)
    tE, _ = torch.lobpcg(torch.tensor(A), k=2, B=torch.tensor(B), largest=largest)
    np.testing.assert_allclose(E.numpy(), tE.numpy(), rtol=1e-6)
    np.testing.assert_allclose((X.mT @ nt.tensor(B) @ X).numpy(), np.eye(2), atol=1e-10)
    assert_same_error(lambda T, a: T.lobpcg(a[:5, :5], k=2), A)
    assert_same_error(lambda T, a: T.lobpcg(a[:5, :4], k=1), A)
