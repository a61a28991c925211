"""Linear algebra against PyTorch beyond the decompositions (test_linalg_decomp.py): the
addmm family, addr, outer, matmul's shapes, einsum's dtypes, det, inv, pinv, dist and the
vector and matrix norms: values, derivatives at singular and non-finite matrices, and error
texts."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from twolibs import (
    arr,
    assert_same,
    assert_same_error,
    assert_same_outcome,
    error_of,
    fd_grad,
    grad_prog,
    ints,
    run,
)

import numtorch as nt

# ==================================================================
# Found by issue 14's sweep of silently wrong values and derivatives.


ADDPROD = {
    "addmm": ((2, 2), (2, 2), (2, 2)),
    "addmv": ((2,), (2, 2), (2,)),
    "addbmm": ((2, 2), (3, 2, 2), (3, 2, 2)),
    "baddbmm": ((3, 2, 2), (3, 2, 2), (3, 2, 2)),
}
SCALARS = [
    {"alpha": 0.5},
    {"beta": 0.5},
    {"beta": 2.0, "alpha": -1.7},
    {"alpha": True},
    {"beta": 0.0},
]


@pytest.mark.parametrize("name", sorted(ADDPROD))
@pytest.mark.parametrize("kw", SCALARS)
def test_integral_addprod_truncates_float_scalars(name, kw):
    args = [ints(*s) for s in ADDPROD[name]]
    assert_same(lambda L, *a: getattr(L, name)(*a, **kw), *args)
    assert_same(lambda L, a, *r: getattr(a.clone(), name + "_")(*r, **kw), *args)
    # vmap over a stack of the first operand (the rule recomposes the op from its parts)
    stack = np.stack([args[0], 2 * args[0]])
    got = nt.func.vmap(lambda i: getattr(nt, name)(i, *map(nt.tensor, args[1:]), **kw))(
        nt.tensor(stack)
    )
    ref = [run(lambda L, *a: getattr(L, name)(*a, **kw), nt, s, *args[1:]) for s in stack]
    assert got.dtype == nt.int64 and np.array_equal(got.numpy(), np.stack([r.numpy() for r in ref]))


@pytest.mark.parametrize(
    "src, dst",
    [
        ("float64", "float32"),
        ("float32", "complex64"),
        ("complex64", "float64"),
        ("float32", "float64"),
    ],
)
def test_vector_norm_dtype_never_narrows(src, dst):
    prog = lambda L, x: L.linalg.vector_norm(x.to(getattr(L, src)), dtype=getattr(L, dst))  # noqa: E731
    if src == "float32" and dst == "float64":
        assert_same(prog, np.array([3.0, 4.0]))
    else:
        assert_same_error(prog, np.array([3.0, 4.0]))


# ==================================================================
# Found by issue 14's third fuzz round (fresh seeds, 68,000 programs).


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("ord", [2, 3, 1])
def test_norm_tangent_at_zero_is_masked_as_pytorchs(ord):
    # PyTorch masks the tangent where the norm is 0 (a NaN tangent gives 0) except for ord 1
    def prog(L, x, t):
        return L.func.jvp(lambda x: L.linalg.vector_norm(x, ord, 0, True), (x,), (t,))

    assert_same(prog, np.zeros(2), np.array([np.nan, 1.0]))


# ==================================================================
# Causes behind the bad-input sweep's DIFFERS cases (tests/test_bad_inputs.py), fixed.


W = np.arange(15.0).reshape(5, 3) / 10


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, a: L.linalg.pinv(a.long()),
        lambda L, a: L.pinverse(a.bool()),
        lambda L, a: L.linalg.pinv(a[0]),
    ],
)
def test_pinv_refusals(prog):
    assert_same_error(prog, W)


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, b, f: L.einsum("ij,jk->ik", b, f),  # bmm looks at its first operand's dtype
        lambda L, b, f: L.einsum("ij,jk->ik", f, b),
        lambda L, b, f: L.einsum("ij,jk", b, f.long()),  # the implicit output contracts j
        lambda L, b, f: L.einsum("ij,ij", b, f),
    ],
)
def test_einsum_mixed_dtypes_refused(prog):
    assert_same_error(prog, W[:2, :2] > 0.1, W[:2, :2])


def test_einsum_mixed_dtypes_without_contraction():
    """No bmm runs: PyTorch's products promote, with every gradient in its input's dtype."""

    def prog(L, a, b):
        a, b = a.float().requires_grad_(), b.requires_grad_()
        r = L.einsum("i,j->ij", a, b)
        r.sum().backward()
        jvp = L.func.jvp(lambda x: L.einsum("i,j", x, b.detach()), (a.detach(),), (a.detach(),))
        return r, a.grad, b.grad, jvp, L.einsum("i,i->i", a.detach().long()[:2], b)

    assert_same(prog, W[0], W[1, :2], rtol=1e-6)


_BOOL_EINSUMS = [
    ("ij,ij->i", (2, 1), (2, 1)),  # a summed subscript of size 1 everywhere: a product
    ("ij,kj->ik", (2, 1), (3, 1)),
    ("ij,jk->ik", (2, 1), (1, 3)),
    ("i,i->", (1,), (1,)),
    ("bij,bjk->bik", (1, 2, 1), (1, 1, 2)),
    ("ij,jk->", (2, 1), (1, 2)),  # i and k summed alone: sums, to int64
    ("ij,ij->i", (2, 2), (2, 2)),  # contracted: bmm, which has no bools
    ("ij,kj->ik", (2, 3), (2, 3)),
    ("ij,ij,ij->i", (2, 1), (2, 1)),
    ("i->", (1,), (1,)),  # one operand: summed, to int64
    ("ij->i", (1, 1), (1,)),
]


@pytest.mark.parametrize("second", ["bool", "long", "float"])
@pytest.mark.parametrize("eq,s1,s2", _BOOL_EINSUMS, ids=[e for e, _, _ in _BOOL_EINSUMS])
def test_einsum_of_bools_runs_bmm_only_to_contract(eq, s1, s2, second):
    """PyTorch's einsum contracts a subscript with bmm only where two operands hold it with
    size > 1; otherwise it multiplies (and promotes) and sums, which bools allow."""
    a = np.arange(int(np.prod(s1))).reshape(s1) % 3 > 0
    b = np.arange(int(np.prod(s2))).reshape(s2) % 2 > 0

    def prog(L, a, b):
        b = getattr(b, second)()
        return L.einsum(eq, *([a, b, a][: eq.count(",") + 1]))

    assert_same_outcome(prog, a, b)


# One operand with nothing summed: PyTorch's einsum returns a view (its diagonals, permuted),
# so a write into the result reaches the operand and what autograd saved of it.
@pytest.mark.parametrize(
    "eq, shape",
    [("ii->i", (3, 3)), ("ij->ji", (2, 3)), ("ij", (2, 3)), ("...ii->...i", (2, 3, 3))]
    + [("jii->ij", (2, 3, 3)), ("ijk->kji", (2, 3, 2)), ("ii", (3, 3)), ("ij->j", (2, 3))],
)
def test_einsum_of_one_operand_is_a_view(eq, shape):
    def prog(L, x):
        y = x.clone()
        r = L.einsum(eq, y)
        r[(0,) * r.dim()] = -2.5
        r.mul_(2)
        return r, y, r.stride(), r._base is y

    assert_same(prog, arr(*shape))


def test_einsum_view_written_after_a_save():
    def prog(L, x):
        x.requires_grad_(True)
        y = x.amin(-1, keepdim=True).expand(3, 3) * 1
        z = y.amin(-1, keepdim=True)  # saves y's values
        L.einsum("ii->i", y)[0] = -2.5
        (z.sum() + y.sum()).backward()
        return x.grad

    assert_same_outcome(prog, arr(3, 3))
    assert_same(lambda L, x: L.func.vmap(lambda a: L.einsum("ii->i", a).mul_(2))(x), arr(2, 2, 2))


def test_complex_matrix_norms_and_logdet():
    c = (np.arange(9.0).reshape(3, 3) / 7 + np.eye(3)) * (1 + 0.5j) + 0.1j
    singular = c.copy()
    singular[0] = 0
    assert_same(
        lambda L, c, s: (
            [L.linalg.matrix_norm(c, o) for o in ("fro", "nuc", 2, 1, -1, float("inf"))],
            L.linalg.norm(c),
            L.logdet(c),
            L.logdet(L.stack([c, -c, s])),
        ),
        c,
        singular,
        atol=1e-12,
    )


# ==================================================================
# Core behaviour found wrong by the nn.functional work (issue 10's follow-ups).


@pytest.mark.parametrize(
    "sa, sb",
    [
        ((2, 3, 4), (5, 4, 2)),
        ((6, 2, 3, 4), (5, 1, 4, 2)),
        ((3, 2, 3, 4), (2, 6, 4, 2)),
        ((2, 3, 4), (2, 5, 2)),
        ((2, 2, 3, 4), (2, 5, 2)),
        ((3, 4), (2, 5, 2)),
        ((4,), (2, 5, 2)),
        ((2, 3, 4), (5,)),
        ((2, 3, 4), (5, 2)),
    ],
)
def test_matmul_shapes_that_do_not_fit_raise_torchs_error(sa, sb):
    assert_same_error(lambda lib, a, b: a @ b, arr(*sa), arr(*sb))


# ==================================================================
# Found by issue 14's sweep of crashes where PyTorch succeeds.


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, a: L.norm(a, p="nuc", dim=0),
        lambda L, a: L.norm(a, p="nuc", dim=[0]),
        lambda L, a: L.norm(a, p="nuc", dim=(0, 1, 1)),
        lambda L, a: L.linalg.matrix_norm(a, dim=(0,)),
        lambda L, a: L.linalg.matrix_norm(a, "nuc", dim=(1, -1)),
        lambda L, a: L.linalg.matrix_norm(a, dim=(0, 3)),
        lambda L, a: L.linalg.norm(a, "nuc", dim=(0,)),
    ],
)
def test_matrix_norm_dim_errors(prog):
    assert_same_error(prog, arr(3, 3))


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, a: L.linalg.norm(a, "nuc", dim=(0, 1, 1)),
        lambda L, a: L.linalg.norm(a, 3, dim=(0, 1, 1)),
        lambda L, a: L.linalg.norm(a[0], "fro"),
        lambda L, a: L.linalg.norm(a.expand(2, 3, 3), "fro"),
        lambda L, a: L.linalg.norm(a.expand(2, 3, 3), "fro", dim=(0,)),
    ],
)
def test_linalg_norm_dim_errors(prog):
    assert_same_error(prog, arr(3, 3))


def test_linalg_norm_string_order_on_a_matrix():
    assert_same(lambda L, a: [L.linalg.norm(a, o) for o in ("fro", "nuc")], arr(3, 4))


NAN_MATRICES = [
    [[np.nan, 1.0], [1.0, 1.0]],
    [[1.0, 1.0], [1.0, np.nan]],
    [[np.inf, 1.0], [1.0, 1.0]],
    [[np.nan, np.nan], [np.nan, np.nan]],
]


@pytest.mark.parametrize("m", NAN_MATRICES)
def test_linalg_on_nonfinite_matrices(m):
    a = np.array(m)
    assert_same(lambda L, a: L.linalg.inv(a), a)
    assert_same(lambda L, a: L.linalg.solve(a, L.ones(2, dtype=a.dtype)), a)
    assert_same(lambda L, a: L.cholesky_solve(a, L.eye(2, dtype=a.dtype)), a)
    assert_same(lambda L, a: L.linalg.solve_triangular(a, a[:, :1], upper=True), a)
    assert_same(lambda L, a: L.linalg.det(a), a)


def test_inv_batch_with_nan_and_singular():
    good = np.array([[[np.nan, 1.0], [1.0, 1.0]], [[2.0, 1.0], [1.0, 1.0]]])
    assert_same(lambda L, a: L.linalg.inv(a), good)
    bad = np.array([[[np.nan, 1.0], [1.0, 1.0]], [[1.0, 1.0], [1.0, 1.0]]])
    want = error_of(lambda L, a: L.linalg.inv(a), torch, bad)
    with pytest.raises(nt.linalg.LinAlgError) as e:
        nt.linalg.inv(nt.tensor(bad))
    assert str(e.value) == want.text


@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("float64", "float32")])
def test_outer_mixed_float_backward(dtypes):
    def prog(L, a, b):
        a, b = a.requires_grad_(), b.requires_grad_()
        y = L.outer(a, b)
        (y * y).sum().backward()
        return y, a.grad, b.grad

    a, b = arr(3).astype(dtypes[0]), arr(2, seed=1).astype(dtypes[1])
    assert_same(prog, a, b, rtol=1e-6, atol=1e-6)


SINGULAR = [
    np.zeros((3, 3)),
    np.array([[1.0, 2.0], [2.0, 4.0]]),  # rank 1
    np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]),  # rank 2
    np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]]),  # rank 2
]


@pytest.mark.parametrize("a", SINGULAR)
def test_det_derivatives_at_singular_matrices(a):
    # PyTorch's eager backward gives 0 at a matrix of rank n-1 (its vmap(grad) gives the
    # cofactors): finite differences decide, the derivative is the matrix of cofactors.
    want = fd_grad(lambda m: np.linalg.det(m), a)
    x = nt.tensor(a, requires_grad=True)
    nt.linalg.det(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), want, atol=1e-8)
    np.testing.assert_allclose(nt.func.grad(nt.linalg.det)(nt.tensor(a)).numpy(), want, atol=1e-8)
    batch = nt.tensor(np.stack([a, np.eye(len(a))]))
    g = nt.func.vmap(nt.func.grad(nt.linalg.det))(batch).numpy()
    np.testing.assert_allclose(g[0], want, atol=1e-8)
    t = np.ones_like(a)
    _, tangent = nt.func.jvp(nt.linalg.det, (nt.tensor(a),), (nt.tensor(t),))
    np.testing.assert_allclose(float(tangent), (want * t).sum(), atol=1e-8)


def test_det_backward_of_the_zero_matrix_like_torch():
    def prog(L, a):
        a = a.requires_grad_()
        L.linalg.det(a).backward()
        return a.grad

    assert_same(prog, np.zeros((3, 3)))


# ==================================================================
# The functions added for issue 14, beyond the op database's generic tests.


NAN = math.nan


# ------------------------------------------------------------------ dist, addr
def test_dist_forms_and_errors():
    def prog(T, x, y):
        return (
            T.dist(x, y),
            x.dist(y, 0),
            x.dist(y, 1.5),
            T.dist(x.float(), y),
            T.dist(x, x),
            T.dist(T.tensor([1, 2]), T.tensor([1.0, 4.0])),
        )

    assert_same(prog, arr(2, 3), arr(3, seed=1))
    assert_same_error(lambda T: T.dist(T.ones(3), 2.0))
    assert_same_error(lambda T: T.dist(T.ones(2, dtype=T.long), T.ones(2, dtype=T.long)))


def test_addr_inplace_promotion_and_errors():
    def prog(T, m, a, b):
        m = m.clone().requires_grad_()
        y = m * 1.0
        y.addr_(a, b, beta=0.5, alpha=2.0)
        (g,) = T.autograd.grad(y.sum(), m)
        n = m.detach().clone()
        n[0, 0] = NAN
        return (
            y,
            g,
            T.addr(m.detach(), a.long(), b),
            T.addr(n, a, b, beta=0),
            T.addr(T.zeros(2, 3, dtype=T.long), a.long(), b.long(), beta=2, alpha=3),
        )

    assert_same(prog, arr(2, 3), arr(2, seed=1), arr(3, seed=2))
    assert_same_error(lambda T: T.addr(T.zeros(2, 3), T.ones(2, 1), T.ones(3)))
    assert_same_error(lambda T: T.addr(T.zeros(2, 3), T.ones(2), T.ones(4)))
    assert_same_error(lambda T: T.addr(T.zeros(2, 3, 1), T.ones(2), T.ones(3)))


def test_addr_integral_scalars_and_inplace_shape():
    i = lambda T: T.ones(2, dtype=T.long)  # noqa: E731
    assert_same_error(lambda T: T.addr(T.zeros(2, 2, dtype=T.long), i(T), i(T), beta=2.5))
    assert_same_error(
        lambda T: T.addr(T.zeros(2, 2, dtype=T.bool), i(T).bool(), i(T).bool(), alpha=0.5)
    )
    assert_same_error(lambda T: T.zeros(1, 3).addr_(T.ones(2), T.ones(3)))


# ------------------------------------------------------------------ lstsq, cond, rank, ...
def _rank_deficient(seed=0):
    a = arr(5, 3, seed=seed)
    a[:, 2] = a[:, 0] - a[:, 1]
    return a


@pytest.mark.parametrize("driver", [None, "gelsy", "gelsd", "gelss"])
def test_lstsq_rank_deficient_fields_match_torch(driver):
    a, b = _rank_deficient(), arr(5, 2, seed=1)
    assert_same(lambda T, a, b: T.linalg.lstsq(a, b, driver=driver), a, b, rtol=1e-8, atol=1e-10)
    batch = np.stack([arr(5, 3, seed=2), a])  # one full-rank matrix, one not: no residuals
    bb = np.stack([b, b])
    assert_same(
        lambda T, a, b: T.linalg.lstsq(a, b, driver=driver), batch, bb, rtol=1e-8, atol=1e-10
    )


def test_lstsq_rcond_and_vector_rhs_match_torch():
    a, b = arr(5, 3), arr(5, seed=1)
    assert_same(lambda T, a, b: T.linalg.lstsq(a, b, 0.5, driver="gelsd"), a, b)
    assert_same(lambda T, a, b: T.linalg.lstsq(a, b, driver="gelss"), a, b)
    assert_same(lambda T, a, b: T.linalg.lstsq(a, b), arr(2, 5, 3), arr(2, 5, seed=3))
    assert_same_error(lambda T, a, b: T.linalg.lstsq(a, b), a, arr(3, 5, 2))
    assert_same_error(lambda T, a, b: T.linalg.lstsq(a, b.float()), a, arr(5, 2))


@pytest.mark.parametrize("driver", ["gels", "gelsd"])
def test_lstsq_complex_gradients_match_torch(driver):
    r = np.random.default_rng(0)
    a = r.standard_normal((5, 3)) + 1j * r.standard_normal((5, 3))
    b = r.standard_normal((5, 2)) + 1j * r.standard_normal((5, 2))

    def loss(T, a, b):
        res = T.linalg.lstsq(a, b, driver=driver)
        return res.solution.abs().sum() + res.residuals.sum()

    for k in range(2):

        def prog(T, a, b, k=k):
            a.requires_grad_(True)
            b.requires_grad_(True)
            return T.autograd.grad(loss(T, a, b), (a, b))[k]

        assert_same(prog, a, b, rtol=1e-8, atol=1e-10)


def test_triangular_solve_matches_torch():
    A = arr(3, 3) + 3 * np.eye(3)
    b = arr(3, 2, seed=1)
    for kw in ({}, {"upper": False}, {"transpose": True}, {"unitriangular": True}):
        assert_same(lambda T, b, A, kw=kw: T.triangular_solve(b, A, **kw), b, A)

        def prog(T, b, A, kw=kw):
            A.requires_grad_(True)
            b.requires_grad_(True)
            X, C = T.triangular_solve(b, A, **kw)
            return T.autograd.grad((X * X).sum() + (C * C).sum(), (b, A))

        assert_same(prog, b, A)
    assert_same(lambda T, b, A: b.triangular_solve(A), arr(2, 3, 2), A)
    assert_same_error(lambda T, b, A: T.triangular_solve(b, A), b[:2], A)
    assert_same_error(lambda T, b, A: T.triangular_solve(b.long(), A.long()), b, A)


def test_triangular_solve_forward_mode_reads_the_triangle():
    """PyTorch's forward-mode triangular_solve takes the whole tangent of A (its backward and
    the finite differences only the triangle): numtorch's jvp is the derivative."""
    A = arr(3, 3) + 3 * np.eye(3)
    b = arr(3, 2, seed=1)
    tA = np.tril(arr(3, 3, seed=2), -1)  # outside the upper triangle read
    out = nt.func.jvp(
        lambda a: nt.triangular_solve(nt.tensor(b), a)[0], (nt.tensor(A),), (nt.tensor(tA),)
    )
    np.testing.assert_allclose(out[1].numpy(), 0, atol=1e-12)


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", math.inf, -math.inf, 1, -1])
def test_cond_matches_torch(p):
    A = arr(2, 3, 3) + 2 * np.eye(3)
    singular = np.stack([A[0], np.ones((3, 3))])
    assert_same(lambda T, a: T.linalg.cond(a, p), A)
    if p not in (None, 2, -2):
        assert_same(lambda T, a: T.linalg.cond(a, p), singular)
    assert_same(lambda T, a: T.linalg.cond(a.to(T.complex128), p), A)
    # PyTorch fills the inverse of a singular matrix with inf in place, after linalg.inv_ex
    # saved it: the backward of these orders fails, and numtorch's does as well
    assert_same_outcome(grad_prog(lambda T, a: T.linalg.cond(a, p)), A[0])


def test_matrix_rank_tolerances_match_torch():
    a = _rank_deficient()
    a[:, 1] *= 1e-3
    assert_same(lambda T, a: T.linalg.matrix_rank(a), a)
    assert_same(lambda T, a: T.linalg.matrix_rank(a, atol=1e-2), a)
    assert_same(lambda T, a: T.linalg.matrix_rank(a, rtol=1e-2), a)
    assert_same(lambda T, a: T.linalg.matrix_rank(a, 1e-2), a)
    assert_same(
        lambda T, a: T.linalg.matrix_rank(a, atol=T.tensor([0.0, 1e-2, 10.0]).double()),
        np.stack([a, a, a]),
    )
    s = a.T @ a
    assert_same(lambda T, a: T.linalg.matrix_rank(a, hermitian=True), s)
    assert_same(lambda T, a: T.linalg.matrix_rank(a), np.zeros((3, 0)))


def test_vander_matches_torch_at_zero_negative_and_integers():
    x = np.array([0.0, -2.0, 1.5, 3.0])
    assert_same(lambda T, x: T.linalg.vander(x), x)
    assert_same(lambda T, x: T.linalg.vander(x, N=6), x)
    assert_same(lambda T, x: T.vander(x), x)
    assert_same(lambda T, x: T.vander(x, 3, True), x)
    assert_same(lambda T, x: T.vander(x.long(), 3), x)
    assert_same(lambda T, x: T.vander(x.bool()), x)
    assert_same(grad_prog(lambda T, x: (T.linalg.vander(x) ** 2).sum()), x)
    # torch.vander's own backward fails (an in-place cumprod_): finite differences decide
    g = nt_grad_of(lambda x: (nt.vander(x, 4, True) ** 2).sum(), x)
    np.testing.assert_allclose(
        g, fd_grad(lambda x: float((np.vander(x, 4, True) ** 2).sum()), x), rtol=1e-6
    )


def nt_grad_of(f, x):
    t = nt.tensor(x, requires_grad=True)
    (g,) = nt.autograd.grad(f(t), [t])
    return g.numpy()


def test_vander_of_complex_input_has_the_gradient_pytorch_fails_to_give():
    x = np.array([0.5 + 1j, -1 + 0.3j, 2 - 1j, 0.2j])
    assert_same(lambda T, x: T.vander(x), x)
    assert_same(lambda T, x: T.vander(x, 3, True), x)
    assert_same(lambda T, x: T.linalg.vander(x, N=5), x)
    c = np.random.default_rng(3).standard_normal((4, 4, 2)) @ np.array([1, 1j])

    def loss(v, cv):
        return ((cv.conj() * v).real + abs(v) ** 2).sum()

    def real_loss(z):
        return float(loss(np.vander(z, 4), c))

    # DIFFERS: torch.vander's backward fails on complex input as on real (an in-place
    # cumprod_ on a saved view); numtorch's gradient is d/dRe + i d/dIm, by finite differences
    t = torch.tensor(x, requires_grad=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss(torch.vander(t, 4), torch.tensor(c)).backward()
    g = nt_grad_of(lambda z: loss(nt.vander(z, 4), nt.tensor(c)), x)
    fd = fd_grad(lambda r: real_loss(r + 1j * x.imag), x.real) + 1j * fd_grad(
        lambda i: real_loss(x.real + 1j * i), x.imag
    )
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_tensorinv_and_tensorsolve_match_torch():
    A = (arr(6, 6) + 4 * np.eye(6)).reshape(2, 3, 6)
    assert_same(lambda T, a: T.linalg.tensorinv(a, ind=1), A.reshape(6, 2, 3), rtol=1e-8)
    assert_same(lambda T, a, b: T.linalg.tensorsolve(a, b), A, arr(2, 3, seed=1), rtol=1e-8)
    assert_same_error(lambda T, a: T.linalg.tensorinv(a, ind=1), np.zeros((2, 2, 4)))
    assert_same_error(lambda T, a, b: T.linalg.tensorsolve(a, b, dims=(3,)), A, arr(2, 3))


def test_deprecated_norms_match_torch():
    x = arr(2, 3, 4)
    assert_same(lambda T, x: T.nuclear_norm(x[0]), x)
    assert_same(lambda T, x: T.nuclear_norm(x[0], True), x)
    assert_same(lambda T, x: T.nuclear_norm(x, (0, 2)), x)
    assert_same(lambda T, x: T.frobenius_norm(x, (0, 2), True), x)
    assert_same_error(lambda T, x: T.frobenius_norm(x, (0, 1, 2)), x)


def test_linalg_matmul_and_diagonal_are_torchs():
    a, b = arr(2, 3, 4), arr(4, 5, seed=1)
    assert_same(lambda T, a, b: T.linalg.matmul(a, b), a, b)
    assert_same(lambda T, a: T.linalg.diagonal(a, offset=1), a)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_solve_triangular_with_a_zero_diagonal_gives_pytorchs_inf_and_nan(dtype):
    """trsm divides by the zero: no error, PyTorch's inf/NaN pattern (complex: NaN)."""

    rng = np.random.default_rng(0)
    for trial in range(60):
        n, batched = int(rng.integers(1, 5)), bool(trial % 2)
        shape = ((2,) if batched else ()) + (n, n)
        A = rng.integers(-2, 3, shape).astype(dtype)
        if dtype == "complex128":
            A = A + 1j * rng.integers(-1, 2, shape)
        A[..., n // 2, n // 2] = 0
        B = rng.integers(-1, 2, shape[:-1] + (2,)).astype(dtype)
        kw = {"upper": bool(trial % 3), "unitriangular": trial % 5 == 0}
        want = torch.linalg.solve_triangular(torch.tensor(A), torch.tensor(B), **kw).numpy()
        got = nt.linalg.solve_triangular(nt.tensor(A), nt.tensor(B), **kw).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
