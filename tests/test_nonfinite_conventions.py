"""What values, gradients and tangents are where the math runs out: all-NaN and empty
reductions, a variance with no degrees of freedom, p-norms below 1 at zeros, rounded
division, fmax/fmin with NaN, and the order of a chained contraction that decides where
inf * 0 makes a NaN. PyTorch's conventions, checked against it; where PyTorch's answer is
not the derivative of its own forward, finite differences decide and the case says so."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from twolibs import assert_same, assert_same_error, fd_grad, run_both

import numtorch as nt

NAN, INF = np.nan, np.inf
# Rows: all NaN, some NaN, ties, NaN first.
WITH_NAN = np.array([[NAN, NAN, NAN], [1.0, NAN, 2.0], [3.0, 3.0, 1.0], [NAN, 1.0, 1.0]])
TANGENT = np.arange(12.0).reshape(4, 3) - 4.0
NAN_TANGENT = np.where(np.arange(12).reshape(4, 3) % 5 == 1, NAN, TANGENT)


def derivatives(f):
    """(value, gradient of the sum, func.jvp's tangent along t) of ``f(L, x)``."""

    def prog(L, x, t):
        tangent = L.func.jvp(lambda x: f(L, x), (x,), (t,))[1]
        x.requires_grad_(True)
        y = f(L, x)
        y.sum().backward()
        return y.detach(), x.grad, tangent

    return prog


def fd_gradient(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """The central differences of the sum of numtorch's f(x)."""
    return fd_grad(lambda a: f(nt, nt.tensor(a)).sum().item(), x, eps)


# ------------------------------------------------------------------ extrema over NaN
EXTREMA = {
    "max()": lambda L, x: x.max(),
    "min()": lambda L, x: L.min(x),
    "max() of an all-NaN row": lambda L, x: x[0].max(),
    "amax": lambda L, x: L.amax(x, 1),
    "amin": lambda L, x: L.amin(x, (0, 1)),
    "amax of everything": lambda L, x: L.amax(x),
    "amax of an all-NaN row": lambda L, x: x[:1].amax(1),
    "median()": lambda L, x: L.median(x),
    "nanmedian()": lambda L, x: L.nanmedian(x),
    "nanmedian() of an all-NaN row": lambda L, x: L.nanmedian(x[0]),
    "median() of nothing": lambda L, x: L.median(x[:0]),
    "nanmedian() of nothing": lambda L, x: L.nanmedian(x[:, :0]),
}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("tangent", [TANGENT, NAN_TANGENT], ids=["tangent", "NaN tangent"])
@pytest.mark.parametrize("name", EXTREMA)
def test_extrema_over_nan_match_torch(name, tangent):
    # max()/min()/median() read a NaN result's tangent as NaN (PyTorch's evenly_read_jvp,
    # a product, so another element's NaN tangent shows too); amax/amin along dims drop
    # the other elements' tangents (amaxamin_jvp); the gradients split among ties or NaNs
    assert_same(derivatives(EXTREMA[name]), WITH_NAN, tangent)


MEDIANS = {
    "median()": (lambda L, x: L.median(x), [[NAN, -1.55]]),  # a NaN median
    "median() of numbers": (lambda L, x: L.median(x), [[1.53, -4.13, 0.2]]),
    "nanmedian()": (lambda L, x: L.nanmedian(x), [[NAN, -1.55, 0.2]]),
}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", MEDIANS)
def test_median_of_everything_with_a_nan_cotangent(name):
    """A NaN cotangent (sqrt of a negative median minus 1) reaches only the elements at the
    median, 0 elsewhere: eager PyTorch's masked_fill. torch.func's grad and vjp spread it
    over every element (mask * (g / count), CLASS_DIVERGENCES); the median at x -+ eps
    shows the other elements do not move it, so their derivative is 0."""
    med, x = MEDIANS[name]
    x = np.array(x)

    def f(L, x):
        return (med(L, x) - 1).sqrt()

    def eager(L, x):
        x.requires_grad_(True)
        f(L, x).backward()
        return x.grad

    ours = assert_same(eager, x).numpy()
    at = ~np.isnan(ours)
    assert at.sum() == x.size - 1 and (ours[at] == 0).all()
    for transform in ("grad", "vjp"):

        def prog(L, x, transform=transform):
            if transform == "grad":
                return L.func.grad(lambda a: f(L, a))(x)
            return L.func.vjp(lambda a: f(L, a), x)[1](L.tensor(1.0, dtype=x.dtype))[0]

        got, theirs = (r.numpy() for r in run_both(prog, x))
        np.testing.assert_array_equal(got, ours)
        assert np.isnan(theirs).all()  # (torch.func's spread)
    for idx in zip(*np.nonzero(at)):  # the median at x -+ eps there: the same (NaN too)
        lo, hi = x.copy(), x.copy()
        lo[idx] -= 1e-6
        hi[idx] += 1e-6
        np.testing.assert_array_equal(med(nt, nt.tensor(lo)), med(nt, nt.tensor(hi)))


# ------------------------------------------------------------------ empty and all-NaN means
EMPTY_OR_NAN = {
    "nanmean of an all-NaN row": lambda L, x: L.nanmean(x, 1),
    "nanmean of everything": lambda L, x: L.nanmean(x),
    "nanmean over an empty dim": lambda L, x: L.nanmean(x[:0], 0),
    "nanmean of nothing": lambda L, x: L.nanmean(x[:, :0]),
    "nanmean of nothing, keepdim": lambda L, x: L.nanmean(x[:, :0], 1, keepdim=True),
    "nanmedian along a dim": lambda L, x: L.nanmedian(x, 1)[0],
    "logsumexp over an empty dim": lambda L, x: L.logsumexp(x[:0], 0),
    "logsumexp of nothing": lambda L, x: L.logsumexp(x[:, :0], (0, 1)),
    "logsumexp of a -inf row": lambda L, x: L.logsumexp(x * 0 - INF, 1),
    "logsumexp with NaN": lambda L, x: L.logsumexp(x, 1),
}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("tangent", [TANGENT, NAN_TANGENT], ids=["tangent", "NaN tangent"])
@pytest.mark.parametrize("name", EMPTY_OR_NAN)
def test_empty_and_all_nan_selections_match_torch(name, tangent):
    # a mean of nothing is NaN and so is its tangent (PyTorch's 0 / 0)
    assert_same(derivatives(EMPTY_OR_NAN[name]), WITH_NAN, tangent)


# ------------------------------------------------------------------ no degrees of freedom
X23 = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]])
T23 = np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]])
SPREADS = {
    "var": lambda L, x, **kw: L.var(x, **kw),
    "std": lambda L, x, **kw: L.std(x, **kw),
    "var_mean": lambda L, x, **kw: L.var_mean(x, **kw)[0],
    "std_mean": lambda L, x, **kw: L.std_mean(x, **kw)[0],
    "var_mean's mean": lambda L, x, **kw: L.var_mean(x, **kw)[1],
}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("correction", [9, 10, 12.5])
@pytest.mark.parametrize("name", SPREADS)
def test_spread_of_everything_with_no_degrees_of_freedom_matches_torch(name, correction):
    # PyTorch's var gradient is then +inf, NaN where x is the mean (of either sign)
    x = np.concatenate([X23, [[1.75, 1.75, 1.75]]])  # 1.75 is the mean of the 9 values
    f = SPREADS[name]
    assert_same(derivatives(lambda L, x: f(L, x, correction=correction)), x, T23[[0, 1, 0]])


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("name", SPREADS)
def test_spread_along_a_dim_with_zero_degrees_of_freedom_matches_torch(name, dim):
    x = np.concatenate([X23, [[1.0, 2.0, 3.0]]])  # ties in column 0, the mean in row 1
    f = SPREADS[name]
    assert_same(
        derivatives(lambda L, x: f(L, x, dim=dim, correction=x.shape[dim])), x, T23[[0, 1, 0]]
    )


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", ["var", "std"])
def test_spread_along_a_dim_with_negative_degrees_of_freedom_is_its_zero_dof_one(name):
    # With correction > n the forward is S / max(0, n - correction): the same function
    # (inf, NaN where S is 0) as with correction == n, whose derivative PyTorch gives as
    # 2 (x - mean) / 0. For correction > n PyTorch differentiates S / (n - correction)
    # instead, which the forward does not compute: var(X23, 1, correction=4) has its
    # gradient [[2, 0, -2], [4/3, 13/3, -17/3]] there, std 0. numtorch keeps the zero-dof
    # gradient; the central differences of the forward are no number at all.
    f = SPREADS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        above = derivatives(lambda L, x: f(L, x, dim=1, correction=4))(
            nt, *map(nt.tensor, (X23, T23))
        )
        at_n = derivatives(lambda L, x: f(L, x, dim=1, correction=3))(
            nt, *map(nt.tensor, (X23, T23))
        )
        fd = fd_gradient(lambda L, x: f(L, x, dim=1, correction=4), X23)
    for got, same in zip(above, at_n):
        np.testing.assert_array_equal(got.numpy(), same.numpy())
    assert not np.isfinite(above[1].numpy()).any()
    assert np.isnan(fd).all()
    assert_same(derivatives(lambda L, x: f(L, x, dim=1, correction=3)), X23, T23)


# ------------------------------------------------------------------ p-norms below 1 at zeros
ZEROS = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, -2.0], [0.5, 0.0, 3.0]])
T33 = np.array([[1.0, -1.0, 2.0], [0.5, 1.0, -3.0], [2.0, -0.5, 1.0]])
NORMS = {
    "linalg.vector_norm": lambda L, x, p, dim: L.linalg.vector_norm(x, p, dim),
    "linalg.norm": lambda L, x, p, dim: L.linalg.norm(x.flatten() if dim is None else x, p, dim),
    "norm": lambda L, x, p, dim: L.norm(x, p, dim),
    "Tensor.norm": lambda L, x, p, dim: x.norm(p, dim),
}


@pytest.mark.parametrize("dim", [None, 1, 0])
@pytest.mark.parametrize("p", [0.5, 0.3, -0.5, -1, -2], ids=str)
@pytest.mark.parametrize("name", NORMS)
def test_p_norms_below_one_at_zeros_match_torch(name, p, dim):
    # |x|**p is even with an infinite slope at 0: PyTorch's gradient there is 0, the
    # central difference (and a zero-norm slice's gradient is 0 too)
    f = NORMS[name]
    assert_same(derivatives(lambda L, x: f(L, x, p, dim)), ZEROS, T33)


def test_p_norm_below_one_is_zero_at_zero_by_central_differences():
    f = lambda L, x: L.linalg.vector_norm(x, 0.5, 1)  # noqa: E731
    x = np.array([[0.0, 1.0, -2.0], [0.5, 0.0, 3.0]])
    g = derivatives(f)(nt, nt.tensor(x), nt.tensor(x))[1].numpy()
    np.testing.assert_allclose(g, fd_gradient(f, x), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", NORMS)
def test_zero_norm_has_no_gradient_and_a_zero_tangent_as_in_torch(name):
    # ord 0 counts the nonzero elements: PyTorch's backward gives no gradient at all
    f = NORMS[name]

    def prog(L, x, t):
        tangent = L.func.jvp(lambda x: f(L, x, 0, 1), (x,), (t,))[1]
        x.requires_grad_(True)
        f(L, x, 0, 1).sum().backward()
        return tangent, x.grad

    assert_same(prog, ZEROS[1:], T33[1:])


# ------------------------------------------------------------------ p-norms at inf and NaN
# Rows: an infinite element, a NaN, an infinite element among zeros, a zero among others.
NONFINITE = np.array([[-0.74, INF, 1.0], [NAN, 1.0, -2.0], [0.0, 0.0, -INF], [0.0, 1.0, -2.0]])
T43 = np.array([[1.0, -1.0, 2.0], [0.5, 1.0, -3.0], [2.0, -0.5, 1.0], [0.0, 1.5, 0.25]])


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("dim", [None, 1, 0])
@pytest.mark.parametrize("p", [0.5, 0.3, -0.5, -1, 1, 1.5, 2, 3, INF, -INF], ids=str)
@pytest.mark.parametrize("name", ["linalg.vector_norm", "norm"])
def test_p_norms_at_infinite_and_nan_elements_match_torch(name, p, dim):
    """Below 1, the tangent of an infinite norm is the tangents' sum times its power (inf,
    not inf / inf); +-inf along a dim splits among the elements at the norm or at a NaN
    (whose sign is 0), so a NaN slice's gradient and tangent are 0."""
    f = NORMS[name]
    assert_same(derivatives(lambda L, x: f(L, x, p, dim)), NONFINITE, T43)
    assert_same(derivatives(lambda L, x: f(L, x, p, dim)), NONFINITE[1:2], 0 * T43[1:2])


@pytest.mark.parametrize("ord", [INF, -INF, -0.5, -2])
@pytest.mark.parametrize("dim", [None, -1, 1, (0, 1), (-1, 0), ()])
def test_inf_norm_of_an_empty_dim_names_it_as_given(ord, dim):
    """An empty reduction has no identity for ord inf or below 0: PyTorch's text names the
    first empty dim as given (negative too), without a space before 'because'; over
    everything it says 'an empty tensor'."""

    def prog(L, x):
        return L.linalg.vector_norm(x, ord, dim)

    assert_same_error(prog, np.zeros((1, 0)))


# ------------------------------------------------------------------ powers by their kernels
EDGES = np.array([-INF, INF, -0.0, 0.0, -4.0, 4.0, NAN, 0.3])


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("e", [0.5, -0.5, -1, 2, 3, -2, 1.5])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_powers_with_their_own_kernels_at_the_edges(e, dtype):
    """PyTorch's pow by 0.5, -0.5, -1, 2, 3, -2 runs sqrt, rsqrt (1 / sqrt: -inf at -0, NaN
    at -inf, where a power gives inf and 0), a reciprocal or products; x ** 0.5's gradient
    reads x ** -0.5, so it is NaN at -inf."""

    def f(L, x):
        return x.to(getattr(L, dtype)) ** e

    assert_same(derivatives(f), EDGES, np.ones(8), rtol=1e-6 if dtype == "float32" else 1e-10)


# ------------------------------------------------------------------ rounded division
A = np.array([1.5, -2.5, 0.0, 3.0, INF, -INF, NAN, 1.0, 0.0, 7.0, -7.0])
B = np.array([2.0, 2.0, 0.0, 0.0, 2.0, 3.0, 1.0, NAN, 1.0, INF, -INF])


@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_rounded_division_has_zero_derivatives_everywhere(mode):
    # piecewise constant: zeros, as PyTorch's, even where the quotient is inf or NaN
    def prog(L, a, b, g, ta, tb):
        f = lambda a, b: L.div(a, b, rounding_mode=mode)  # noqa: E731
        tangent = L.func.jvp(f, (a, b), (ta, tb))[1]
        inplace = L.func.jvp(lambda a, b: a.clone().div_(b, rounding_mode=mode), (a, b), (ta, tb))
        number = L.func.jvp(lambda a: L.div(a, 0.0, rounding_mode=mode), (a,), (ta,))[1]
        a.requires_grad_(True)
        b.requires_grad_(True)
        f(a, b).backward(g)
        return tangent, inplace[1], number, a.grad, b.grad

    assert_same(prog, A, B, np.where(np.isnan(A), INF, 1.0), np.ones(11), A)


# ------------------------------------------------------------------ fmax and fmin
C = np.array([NAN, 1.0, NAN, 2.0, 2.0, -INF, INF, 0.0, -0.0])
D = np.array([1.0, NAN, NAN, 2.0, 1.0, -INF, INF, -0.0, 0.0])


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_with_nan_and_ties_match_torch(name):
    # the number wins over NaN; at a tie fmax's vjp takes input (>=), its jvp other's (>)
    def prog(L, c, d, tc, td):
        f = getattr(L, name)
        both = L.func.jvp(f, (c, d), (tc, td))[1]
        first = L.func.jvp(lambda c: f(c, d), (c,), (tc,))[1]
        second = L.func.jvp(lambda d: f(c, d), (d,), (td,))[1]
        c.requires_grad_(True)
        d.requires_grad_(True)
        y = f(c, d)
        y.backward(L.ones_like(y))
        return y.detach(), both, first, second, c.grad, d.grad

    assert_same(prog, C, D, np.arange(9.0), 100 * np.arange(9.0))


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_under_vmap_tie_in_each_samples_dtype(name):
    # a float64 bound that is 0-d per sample does not raise the float32 operand's dtype, so
    # the tie in float32 takes input's side, as torch.func.grad does on each sample (torch's
    # vmap promotes and compares in float64: not the samples' answer)
    x = np.array([[-0.39], [0.25]], dtype=np.float32)
    b = np.array([-0.39, 0.25])

    def loss(L, f):
        return lambda x, b: f(x, b).sqrt_().mul(-0.73).sum()

    def per_sample(L, x, b):
        g = L.func.grad(loss(L, getattr(L, name)))
        return L.stack([g(x[i], b[i]) for i in range(2)])

    want = run_both(per_sample, x, b)[1]
    got = nt.func.vmap(nt.func.grad(loss(nt, getattr(nt, name))))(nt.tensor(x), nt.tensor(b))
    assert got.dtype == nt.float32
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    assert np.isnan(got.numpy()[0, 0])


# ------------------------------------------------------------------ contraction order
def _with_specials(rng, shapes):
    ms = [rng.standard_normal(s) for s in shapes]
    for m in ms:
        for _ in range(rng.integers(1, 3)):
            m[tuple(rng.integers(0, n) for n in m.shape)] = rng.choice([INF, -INF, 0.0, NAN])
    return ms


EINSUMS = [
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ij,jk->i", [(2, 3), (3, 4)]),
    ("bi,i->b", [(2, 1), (3,)]),
    ("i,j,j->i", [(2,), (3,), (3,)]),
    ("ij,jk,kl,lm->im", [(2, 3), (3, 1), (1, 4), (4, 2)]),
    ("ij,kl,jl->ik", [(2, 3), (4, 5), (3, 5)]),
    ("ii,ij,jk->k", [(3, 3), (3, 2), (2, 2)]),
    ("ii->i", [(3, 3)]),
    ("...ij,...jk,...kl->...il", [(2, 2, 3), (1, 3, 4), (4, 2)]),
    ("ij,jk,ki->", [(2, 3), (3, 4), (4, 2)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUMS, ids=[e for e, _ in EINSUMS])
def test_einsum_contracts_in_torchs_order(eq, shapes):
    # left to right (without opt_einsum), a pair at a time, a subscript summed in one
    # operand first when nothing else needs it: where an inf meets a 0 decides the NaNs of the value and gradients
    rng = np.random.default_rng(3)
    for _ in range(8):
        ms = _with_specials(rng, shapes)

        def prog(L, *ms):
            # torch follows opt_einsum's path where that package is installed
            with L.backends.opt_einsum.flags(enabled=False):
                y = L.einsum(eq, *ms)
                tangent = L.func.jvp(lambda *a: L.einsum(eq, *a), ms, ms)[1]
                for m in ms:
                    m.requires_grad_(True)
                L.einsum(eq, *ms).sum().backward()
            return y, tangent, [m.grad for m in ms]

        assert_same(prog, *ms)


MULTI_DOTS = [
    [(2, 3), (3, 4), (4, 1)],
    [(5, 1), (1, 5), (5, 5)],
    [(1, 5), (5, 5), (5, 5), (5, 1)],
    [(3,), (3, 4), (4,)],
    [(4, 2), (2, 6), (6, 3), (3, 2)],
    [(6,), (6, 2), (2, 6), (6,)],
    [(2, 10), (10, 1), (1, 10), (10, 2), (2, 7)],
]


@pytest.mark.parametrize("shapes", MULTI_DOTS, ids=str)
def test_multi_dot_multiplies_in_torchs_order(shapes):
    # PyTorch's cheapest parenthesization (the first of equal cost) decides the NaNs
    rng = np.random.default_rng(5)
    for _ in range(8):
        ms = _with_specials(rng, shapes)

        def prog(L, *ms):
            for m in ms:
                m.requires_grad_(True)
            y = L.linalg.multi_dot(list(ms))
            y.sum().backward()
            return y.detach(), [m.grad for m in ms]

        assert_same(prog, *ms)


# ------------------------------------------------------------------ a zero power
@pytest.mark.parametrize("exponent", ["number", "tensor"])
def test_zero_power_has_zero_derivatives_at_nonfinite_tangents(exponent):
    # x ** 0 is constant: its derivative is 0 even where the incoming tangent or cotangent
    # is inf or NaN, as PyTorch's (0 * NaN would be NaN)
    def prog(L, x, t, g):
        e = 0 if exponent == "number" else L.zeros_like(x)
        f = lambda x: x.pow(e)  # noqa: E731
        tangent = L.func.jvp(f, (x,), (t,))[1]
        batched = L.func.vmap(lambda x, t: L.func.jvp(f, (x,), (t,))[1])(x, t)
        x.requires_grad_(True)
        (grad,) = L.autograd.grad(f(x), x, g)
        return tangent, batched, grad

    x = np.array([0.5, NAN, INF, 0.0, -2.0])
    assert_same(prog, x, np.array([NAN, 1.0, INF, NAN, -INF]), np.array([NAN, INF, 1.0, NAN, 2.0]))


# ------------------------------------------------------------------ softmax of one element
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_of_a_0d_tensor_at_nan_and_infinities_matches_torch(name):
    # a 0-d input is one element along its dim: x - max(x) is NaN at NaN and +-inf
    def prog(L, x, t):
        f = lambda x: getattr(x, name)(0)  # noqa: E731
        per_element = [f(x[i]) for i in range(x.shape[0])]
        tangent = L.func.jvp(f, (x[0],), (t[0],))[1]
        batched = L.func.vmap(f)(x)
        x.requires_grad_(True)
        (grad,) = L.autograd.grad(f(x[1]) * 0.3, x)
        return (*per_element, tangent, batched, grad)

    x = np.array([NAN, INF, -INF, 2.0])
    assert_same(prog, x, np.array([0.5, 1.0, 2.0, 3.0]))


@pytest.mark.parametrize("eps", [None, 0.0])
def test_logit_gradient_at_its_ends_is_the_one_sided_infinity(eps):
    """logit'(x) = 1 / (x (1 - x)) is +inf at 0 and 1 from inside [0, 1]: g * inf, for -0.0
    too (the sign of the zero is not the side), as PyTorch's kernel gives."""

    def prog(T, x):
        x.requires_grad_()
        x.logit(eps=eps).backward(T.tensor([-0.47, 0.8, -0.36, 0.0, 1.5], dtype=x.dtype))
        return x.grad

    x = np.array([-0.0, 0.0, 1.0, 0.0, 0.25])
    assert_same(prog, x)
    # the transforms give the same (torch.func.grad and forward AD take -0.0's sign: -inf)
    g = np.array([-0.47, 0.8, -0.36, 0.0, 1.5])
    eager = run_both(prog, x)[1].numpy()
    f = lambda x: (x.logit(eps=eps) * nt.tensor(g)).sum()  # noqa: E731
    np.testing.assert_array_equal(nt.func.grad(f)(nt.tensor(x)).numpy(), eager)
    np.testing.assert_array_equal(nt.vmap(nt.func.grad(f))(nt.tensor(x)[None]).numpy()[0], eager)
    tangent = nt.func.jvp(lambda x: x.logit(eps=eps), (nt.tensor(x),), (nt.tensor(g),))[1]
    np.testing.assert_array_equal(tangent.numpy(), eager)
