"""Decompositions whose outputs are sign-ambiguous or that read one triangle of their input
(eigh, eigvalsh, cholesky, svd), checked through gauge-invariant quantities against PyTorch
and against finite differences along symmetric directions; and the composite linalg
functions (norms, matrix_power, tensordot, kron, ...) that are not single ops."""

from __future__ import annotations

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
