"""Issue 14, second fuzz round: wrong numbers, wrong dtypes and errors, against PyTorch
(and finite differences or PyTorch's own documentation where PyTorch is wrong)."""

import warnings

import numpy as np
import pytest
from twolibs import assert_same, assert_same_error

import numtorch as nt


def _grads(f, *which):
    """``f(L, *tensors)``'s gradients with respect to the arguments ``which`` (backward())."""

    def prog(L, *ts):
        for i in which:
            ts[i].requires_grad_(True)
        f(L, *ts).backward()
        return [ts[i].grad for i in which]

    return prog


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# ------------------------------------------------------------------ missing output gradients
def test_moments_skip_the_output_without_gradient():
    # PyTorch passes an undefined gradient for the unused output, whose term is skipped:
    # var_mean(x)[1] of one element has gradient 1 (not 0 * the NaN of var's 1 / dof)
    one = np.array([[-1.6]])
    for fn in ("var_mean", "std_mean"):
        for k in (0, 1):
            assert_same(_grads(lambda L, x: (getattr(L, fn)(x, 1)[k] * 1.5).sum(), 0), one)
            prog = _grads(lambda L, x: getattr(L, fn)(x, 1, correction=0)[k].sum(), 0)
            assert_same(prog, np.array([[1.5, 1.5, -2.0]]))
    assert_same(lambda L, x: L.func.grad(lambda x: L.var_mean(x, 1)[1].sum())(x), one)


# ------------------------------------------------------------------ std at zero spread
def test_std_gradient_is_zero_where_the_spread_is_zero_even_for_an_infinite_cotangent():
    # rsqrt(std) of equal values: an infinite cotangent meets std's zero partial; PyTorch
    # masks the product (std is constant in x there, so 0 is its derivative)
    def f(L, x):
        return (x.expand(2, 3).std(-2, keepdim=True).rsqrt() * L.tensor([1.0, -1.0, 2.0])).sum()

    assert_same(_grads(f, 0), np.array([[-1.01]]))
    assert_same(lambda L, x: L.func.grad(f, argnums=1)(L, x), np.array([[-1.01]]))

    def g(L, x, t):
        return L.func.jvp(lambda x: L.std_mean(x.expand(2, 3), 0)[0], (x,), (t,))

    assert_same(g, np.array([[-1.01, 2.0, 0.5]]), np.array([[float("inf"), 1.0, 2.0]]))


@pytest.mark.parametrize("op", ["std", "var", "std_mean", "var_mean"])
def test_spread_tangents_over_an_empty_or_single_element_dim(op):
    # PyTorch's std tangent is var's over twice the result: NaN where the result is NaN
    for shape in [(0, 3), (1, 3)]:
        x, t = np.zeros(shape), np.full(shape, 0.5)
        assert_same(lambda L, x, t: L.func.jvp(lambda x: getattr(L, op)(x, 0), (x,), (t,)), x, t)


def test_variance_of_equal_values_is_exactly_zero():
    # NumPy's mean of equal float32 values can round away from them (var 1.5e-14 for ten
    # copies of 1.0663246); PyTorch's dim reductions give exactly 0
    for v in (np.float32(1.0663246), np.float32(-0.038835037), 1.5744083):
        x = np.full((2, 10), v)
        assert_same(lambda L, x: (x.var(1), x.std(1), L.var_mean(x, 1)[0]), x)
        assert_same(lambda L, x: x[:1].expand(3, 10).std(0), x)


# ------------------------------------------------------------------ copy_ into a non-float
def test_copy_into_a_non_float_tensor_leaves_autograd():
    # PyTorch's copy_ records nothing when self's dtype is not differentiable
    x, b = np.array([-0.16, 2.0]), np.array([1.24, -0.5])

    def prog(L, x, b):
        b.requires_grad_(True)
        y = x.ge(b)
        y.copy_(b)
        z = x.long()
        z.copy_(b)
        out = L.logaddexp(y.erf(), b) + L.logaddexp(z.double(), b)
        out.sum().backward()
        return y, z, y.requires_grad, z.requires_grad, b.grad

    assert_same(prog, x, b)

    def no_grad_fn(L, x, b):
        b.requires_grad_(True)
        y = x.lt(b)
        y.copy_(b)
        return (y * L.tensor([1.0, 2.0])).sum().backward()

    assert_same_error(no_grad_fn, x, b)
    f = lambda L, b: L.logaddexp(L.tensor([1.0, 2.0]).lt(1.5).copy_(b).erf(), b).sum()  # noqa: E731
    assert_same(lambda L, b: L.func.grad(f, argnums=1)(L, b), b)


# ------------------------------------------------------------------ max() of nothing under vmap
@pytest.mark.parametrize("fn", ["max", "min"])
def test_extremum_of_an_empty_sample_under_vmap(fn):
    # torch.func's rule reduces the flattened sample (dim 1): its IndexError, not eager's
    empty = np.zeros((2, 0))
    assert_same_error(lambda L, x: L.func.vmap(lambda x: getattr(x, fn)())(x), empty)
    prog = lambda L, x: L.func.vmap(L.func.grad(lambda x: getattr(L, fn)(x * 2)))(x)  # noqa: E731
    assert_same_error(prog, empty)
    # an unbatched empty tensor inside vmap: eager's RuntimeError
    prog = lambda L, x: L.func.vmap(lambda x: x + L.zeros(0).max())(x)  # noqa: E731
    assert_same_error(prog, empty)


# ------------------------------------------------------------------ in-place writes under vmap
def test_inplace_broadcast_into_a_batched_self_under_vmap():
    # torch.func pads self to the result's rank: when that fits it checks the cast (its
    # error) and otherwise writes into the padded view, where each sample refuses; numtorch
    # gives each sample's error then (not the padded shapes, which are equal)
    bools, floats = np.zeros((2, 1), bool), np.ones((2, 1, 1))
    assert_same_error(lambda L, y, b: L.func.vmap(lambda y, b: y.add_(b))(y, b), bools, floats)
    prog = lambda L, y: L.func.vmap(lambda y: y.add_(L.ones(1, 1, dtype=L.float64)))(y)  # noqa: E731
    assert_same_error(prog, bools)
    wide = np.ones((2, 1, 3))
    assert_same_error(lambda L, y, b: L.func.vmap(lambda y, b: y.mul_(b))(y, b), floats[:, 0], wide)

    def each(L, y, b):  # what torch.func's per-sample meaning is
        return [y[i].mul_(b[i]) for i in range(2)]

    assert_same_error(each, floats[:, 0], floats)
    err = pytest.raises(
        RuntimeError, match=r"output with shape \[1\] doesn't match the broadcast shape \[1, 1\]"
    )
    with err:
        nt.func.vmap(lambda y, b: y.mul_(b))(nt.zeros(2, 1), nt.ones(2, 1, 1))


@pytest.mark.parametrize("write", ["setitem", "mul_"])
def test_inplace_checks_follow_the_transform_levels(write):
    # the innermost transform checks first: grad's leaf check inside vmap(grad), vmap's
    # batched-into-unbatched check inside grad(vmap)
    def inner(L, x, b):
        if write == "setitem":
            x[...] = b
        else:
            x.mul_(b)
        return x

    def vmap_of_grad(L, x, b):
        loss = lambda x, b: inner(L, x, b).sum()  # noqa: E731
        return L.func.vmap(L.func.grad(loss), in_dims=(None, 0))(x, b)

    def grad_of_vmap(L, x, b):
        loss = lambda x, b: L.func.vmap(lambda x, b: inner(L, x, b), in_dims=(None, 0))(x, b).sum()  # noqa: E731
        return L.func.grad(loss)(x, b)

    def view_of_leaf(L, x, b):
        loss = lambda x, b: inner(L, x.mT, b).sum()  # noqa: E731
        return L.func.vmap(L.func.grad(loss), in_dims=(None, 0))(x, b)

    for prog in (vmap_of_grad, grad_of_vmap, view_of_leaf):
        assert_same_error(prog, np.zeros((1, 1)), np.ones(2))


# ------------------------------------------------------------------ clamp_'s number bounds
@pytest.mark.parametrize("dtype", ["bool", "int64"])
@pytest.mark.parametrize(
    "write",
    [
        lambda L, y: y.clamp_(max=1.5),
        lambda L, y: y.clamp_min_(2),
        lambda L, y: y.clamp_(min=1),
        lambda L, y: y.clamp_(max=True),
        lambda L, y: y.clamp_(max=L.tensor(1.5)),
    ],
)
def test_clamp_checks_a_number_bound_before_the_overlap(dtype, write):
    # a number bound that does not fit self's dtype: its cast error before the
    # single-memory-location one (a tensor bound, a fitting number: the overlap first)
    def prog(L, x):
        return write(L, x.to(getattr(L, dtype)).expand(2, 3))

    assert_same_error(prog, np.zeros((1, 3)))
    assert_same_error(lambda L, x: L.func.vmap(lambda x: prog(L, x))(x), np.zeros((2, 1, 3)))


# ------------------------------------------------------------------ CopySlices with an expanded gradient
def test_backward_through_a_written_view_with_an_expanded_gradient():
    # the overlap error is the written view's (PyTorch lays the gradient out as the base
    # first): an expanded incoming gradient (sum_to_size's) is none
    def prog(L, x):
        x.requires_grad_(True)
        a = x * 1
        a[:, 0].mul_(2)
        a.sum_to_size(1, 2).sum().backward()
        return x.grad

    assert_same(prog, np.array([[1.0, 2.0], [3.0, 4.0]]))

    def median_values(L, x):
        x.requires_grad_(True)
        y = x.median(1).values
        y.deg2rad_()
        (y.sum_to_size((1,)) * 2).sum().backward()
        return x.grad

    assert_same(median_values, np.array([[-0.08], [-2.65]]))


# ------------------------------------------------------------------ 0-d masks under vmap(grad)
@pytest.mark.parametrize("in_dims", [(None, 0), (0, 0)])
def test_a_batched_0d_mask_under_vmap_of_grad_is_read(in_dims):
    # PyTorch reads a 0-d bool index (.item()) unless vmap is the innermost transform
    def prog(L, x, b):
        loss = lambda x, b: x[b > 0].sum()  # noqa: E731
        return L.func.vmap(L.func.grad(loss), in_dims=in_dims)(x, b)

    assert_same_error(prog, np.ones(3) if in_dims[0] is None else np.ones((2, 3)), np.ones(2))
    prog = lambda L, x, b: L.func.vmap(lambda x, b: x[b > 0], in_dims=in_dims)(x, b)  # noqa: E731
    assert_same_error(prog, np.ones(3) if in_dims[0] is None else np.ones((2, 3)), np.ones(2))
    own = lambda L, x: L.func.vmap(L.func.grad(lambda x: x[x.sum() > 0].sum()))(x)  # noqa: E731
    assert_same_error(own, np.ones((2, 3)))


# ------------------------------------------------------------------ jvp of products
def test_jvp_of_a_product_skips_the_term_of_an_input_without_tangent():
    # the other operand has no tangent (PyTorch's undefined one): no inf * 0 NaN from it
    x, b = np.array([1e30]), np.array([-3.94])

    def outer(L, x, b):
        return L.func.jvp(lambda x: L.outer(x.sinh(), b), (x,), (L.tensor([-0.33]),))

    assert_same(outer, x, b)
    # x -> x @ b is linear: its tangent is t @ b wherever x is infinite; PyTorch's matmul,
    # mm, mv and bmm give NaN there (x @ 0), its outer and dot do not (finite differences
    # decide: the map is linear)
    xi = nt.tensor([[float("inf"), 1.0], [2.0, 3.0]])
    m = nt.tensor([[1.0, 0.0], [2.0, 1.0]])
    t = nt.ones(2, 2)
    for f in (lambda x: x @ m, lambda x: nt.mm(x, m), lambda x: nt.bmm(x[None], m[None])[0]):
        np.testing.assert_array_equal(nt.func.jvp(f, (xi,), (t,))[1].numpy(), (t @ m).numpy())
    np.testing.assert_array_equal(
        nt.func.jvp(lambda x: nt.mv(x, m[0]), (xi,), (t,))[1].numpy(), [1.0, 1.0]
    )
    np.testing.assert_array_equal(
        nt.func.jvp(lambda x, y: x @ y, (xi, m), (t, t))[1].numpy(), (t @ m + xi @ t).numpy()
    )


# ------------------------------------------------------------------ cumsum's transpose
def test_cumsum_gradient_is_a_reversed_scan():
    # sum_{k >= i} g_k: a NaN cotangent reaches the elements before it only (a total
    # minus the running sums spread it to all)
    x, w = np.array([[1.39, -2.27, -0.08, 1.59]]), np.array([[0.49, 3.56, -1.82, 0.56]])
    assert_same(_grads(lambda L, x, w: (x.cumsum(-1).rsqrt() * w).sum(), 0), x, w)
    big = np.array([1e20, 1.0, -1e20, 3.0])
    assert_same(_grads(lambda L, x, w: (x.cumsum(0) * w).sum(), 0), big, np.array([1e20, 1, 1, 2]))


# ------------------------------------------------------------------ extrema and products
def test_max_of_everything_gives_zero_to_the_other_elements_whatever_the_cotangent():
    # max()/min() (MaxBackward1) fill a zero tensor at the extremum; amax keeps g * 0
    x = np.array([[1.7, -2.2, 1.7]])
    for fn in ("max", "amax"):
        assert_same(_grads(lambda L, x: getattr(x, fn)().logit(), 0), x)
    assert_same(_grads(lambda L, x: x.min().mul(3), 0), np.array([[0.7, float("nan"), 0.7]]))


def test_prod_over_one_element_is_the_identity():
    # d prod / d x = 1 for one element (not result / x = inf / inf)
    # (torch.func.grad and forward mode agree; PyTorch's eager backward divides, NaN: the
    # derivative of the identity decides)
    x = np.array([[-np.inf]])
    for dim in (-1, 0, None):
        f = lambda L, x: (x.prod() if dim is None else x.prod(dim)).sum() * 2  # noqa: E731
        assert_same(lambda L, x: L.func.grad(lambda x: f(L, x))(x), x)
        t = nt.tensor(x, requires_grad=True)
        f(nt, t).backward()
        assert t.grad.tolist() == [[2.0]]
    jvp = lambda L, x: L.func.jvp(lambda x: x.prod(-2), (x,), (L.ones_like(x) * 2.25,))  # noqa: E731
    assert_same(jvp, np.full((1, 1, 1), -np.inf))


def test_a_view_regenerated_after_a_write_into_its_base_is_as_strided():
    # PyTorch regenerates a view's history as one AsStridedBackward0 node from the base;
    # errors name it, and overlapping views (expand) sum their gradient
    def prog(T, x):
        x = x.requires_grad_()
        a = x * 1
        views = [a.unsqueeze(0), a.expand(2, 4, 3)[1], a.t()[1:], a.view(12)[::5]]
        a.mul_(2)
        names = [v.grad_fn.name() for v in views]
        nexts = [v.grad_fn.next_functions[0][0].name() for v in views]
        loss = sum((v * v).sum() for v in views[1:]) + views[0].expand(5, 4, 3).sum()
        loss.backward()
        return names, nexts, x.grad

    assert_same(prog, np.arange(12.0).reshape(4, 3) / 7)

    def modified(T):
        a = T.ones(3, requires_grad=True) * 1
        v = a.unsqueeze(0)
        y = v * v
        a.mul_(2)
        y.sum().backward()

    assert_same_error(modified)
