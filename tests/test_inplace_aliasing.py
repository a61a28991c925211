"""In-place ops whose operands alias the tensor they write (``y.mul_(y)``, a view written
with its base or with itself): their tangents under ``func.jvp`` and forward_ad, their
gradients, and their values.

Finite differences of the function decide. PyTorch 2.13 gets many of these tangents wrong:
its in-place jvp formulas update self's tangent in place and then read the aliased operand's
tangent, which is that same, already updated, tensor. numtorch computes the tangent from the
operands' tangents before the write; each such case names PyTorch's value beside it."""

import numpy as np
import pytest
from twolibs import assert_same, assert_same_outcome, to_nt

import numtorch as nt

X = np.array([0.7, 1.3, -0.4, 2.1])
T = np.array([1.0, -0.5, 2.0, 0.3])
FD_EPS = 1e-6
# Central differences: truncation ~ eps**2 * |f'''|, rounding ~ 1e-16 * |f| / eps.
FD_TOL = {"rtol": 1e-7, "atol": 1e-8}


def _inplace(write):
    """The program ``write(L, y)`` on a clone y of x, returning y (the base)."""

    def f(L, x):
        y = x.clone()
        write(L, y)
        return y

    return f


# PyTorch's tangent, along T at X, is given after each case where it is wrong.
TORCH_WRONG = {
    # [1.19, -1.495, -0.48, 1.953] = T*y*(1 + y), not 2*T*y
    "mul_": _inplace(lambda L, y: y.mul_(y)),
    # [0.565064, -0.966867, -0.566141, 24.070937]
    "pow_": _inplace(lambda L, y: y.abs_().pow_(y)),
    # [1.945, -1.5725, 1.36, 1.5915]
    "addcmul_": _inplace(lambda L, y: y.addcmul_(y, y, value=0.5)),
    # [7.26202, -13.471121, 2.444921, 49.906927]
    "addcmul_ by exp": _inplace(lambda L, y: y.addcmul_(y, y.exp())),
    # [1.031333, -0.467491, 4.533663, 0.277433]
    "addcdiv_": _inplace(lambda L, y: y.addcdiv_(y, y.exp(), value=0.5)),
    # [1.173611, -0.53858, 52.0, 0.311095]: y + y/(2y) has the tangent T
    "addcdiv_ by self": _inplace(lambda L, y: y.addcdiv_(y * 1, y, value=0.5)),
    # [2.89, -2.645, 0.72, 2.883]
    "lerp_": _inplace(lambda L, y: y.lerp_(y * 2, y)),
    # [0.077154, 0.111538, -0.684984, -0.078455]: atan2(y, y) is constant where y != 0
    "atan2_": _inplace(lambda L, y: y.atan2_(y)),
    # [1.707107, -0.853553, 0.585786, 0.512132]: hypot(y, y) = sqrt(2)|y|
    "hypot_": _inplace(lambda L, y: y.hypot_(y)),
    # [0.868819, -6.79642, -0.089088, 46.594869]
    "mul_ twice": _inplace(lambda L, y: y.mul_(y).mul_(y)),
    # [12.22137, -31.433094, 1.501046, 183.377472]
    "exp_ then mul_": _inplace(lambda L, y: y.exp_().mul_(y)),
    # [1.19, -1.495, 2.0, 0.3]
    "a view times itself": _inplace(lambda L, y: y[:2].mul_(y[:2])),
    # [1.19, -1.495, -0.48, 1.953]
    "a view times its base's view": _inplace(lambda L, y: y.view(2, 2).mul_(y.view(2, 2))),
    # [1.19, -0.5, 2.0, -0.66]
    "a diagonal times a row": _inplace(lambda L, y: y.view(2, 2).diagonal().mul_(y.view(2, 2)[0])),
}

TORCH_RIGHT = {
    "add_": _inplace(lambda L, y: y.add_(y)),
    "add_ alpha": _inplace(lambda L, y: y.add_(y, alpha=3.0)),
    "sub_": _inplace(lambda L, y: y.sub_(y, alpha=0.5)),
    "div_": _inplace(lambda L, y: y.div_(y)),
    "copy_": _inplace(lambda L, y: y.copy_(y)),
    "copy_ of a product": _inplace(lambda L, y: y.copy_(y * 3)),
    "lerp_ to exp": _inplace(lambda L, y: y.lerp_(y.exp(), 0.3)),
    "clamp_ by a multiple": _inplace(lambda L, y: y.clamp_(min=y * 0.5)),
    "a view times another": _inplace(lambda L, y: y[:2].mul_(y[2:])),
    "a view times an element": _inplace(lambda L, y: y[1:].mul_(y[0])),
    "mul_ by its flip": _inplace(lambda L, y: y.mul_(y.flip(0))),
    "masked_scatter_ of a clone": _inplace(
        lambda L, y: y.masked_scatter_(L.tensor([True, False, True, True]), y.clone())
    ),
}

CASES = {**TORCH_WRONG, **TORCH_RIGHT}


def _fd_tangent(f) -> np.ndarray:
    """The directional central difference of numtorch's f at X along T."""

    def value(x):
        return f(nt, nt.tensor(x)).numpy()

    return (value(X + FD_EPS * T) - value(X - FD_EPS * T)) / (2 * FD_EPS)


def _jvp(L, f, x, t):
    return L.func.jvp(lambda x: f(L, x), (x,), (t,))[1]


def _forward_ad(L, f, x, t):
    fwd = L.autograd.forward_ad
    with fwd.dual_level():
        return fwd.unpack_dual(f(L, fwd.make_dual(x, t))).tangent


@pytest.mark.parametrize("mode", [_jvp, _forward_ad], ids=["func.jvp", "forward_ad"])
@pytest.mark.parametrize("name", CASES)
def test_aliased_inplace_tangent_is_the_finite_difference(name, mode):
    got = mode(nt, CASES[name], *to_nt((X, T)))
    np.testing.assert_allclose(got.numpy(), _fd_tangent(CASES[name]), **FD_TOL)


@pytest.mark.parametrize("mode", [_jvp, _forward_ad], ids=["func.jvp", "forward_ad"])
@pytest.mark.parametrize("name", TORCH_RIGHT)
def test_aliased_inplace_tangent_matches_torch(name, mode):
    assert_same(lambda L, x, t: mode(L, TORCH_RIGHT[name], x, t), X, T)


# (ops that save an operand refuse instead, in both libraries: it was modified in place)
GRADIENT_CASES = {
    name: CASES[name] for name in ("add_", "add_ alpha", "sub_", "copy_", "copy_ of a product")
}
GRADIENT_CASES["masked_scatter_ of self"] = _inplace(
    lambda L, y: y.masked_scatter_(L.tensor([True, False, True, True]), y)
)


@pytest.mark.parametrize("name", GRADIENT_CASES)
def test_aliased_inplace_gradient_matches_torch(name):
    def prog(L, x, g):
        x.requires_grad_(True)
        GRADIENT_CASES[name](L, x).backward(g)
        return x.grad

    assert_same(prog, X, T)


def test_masked_scatter_of_self_reads_the_source_before_writing():
    # PyTorch 2.13 gives [1, 2, 2, 2]: it reads source element 2 after writing element 2
    # of the same memory. masked_scatter(y, m, y) is [1, 2, 2, 3].
    y = nt.tensor([1.0, 2.0, 3.0, 4.0])
    m = nt.tensor([True, False, True, True])
    expected = nt.masked_scatter(y, m, y.clone())
    y.masked_scatter_(m, y)
    np.testing.assert_array_equal(y.numpy(), expected.numpy())
    np.testing.assert_array_equal(y.numpy(), [1.0, 2.0, 2.0, 3.0])


@pytest.mark.parametrize("how", ["eager", "grad", "vjp"])
def test_copy_of_an_expanded_tensor_into_itself(how):
    """PyTorch's copy_ kernel returns at once for a source that is self, so nothing refuses
    the shared elements at the write (under grad too): backward through the expanded write
    would, but a later saved value written in place fails first."""

    def f(T, x):
        y = x.clone().expand(1, 4, 2, 2)
        y.copy_(y)
        y = y.clone()
        y.mul_(y.detach())
        return (y * T.arange(16.0, dtype=x.dtype).reshape(1, 4, 2, 2)).sum()

    def prog(T, x):
        if how == "grad":
            return T.func.grad(lambda x: f(T, x))(x)
        if how == "vjp":
            return T.func.vjp(lambda x: f(T, x), x)[1](T.tensor(1.0, dtype=x.dtype))
        x.requires_grad_()
        f(T, x).backward()
        return x.grad

    assert_same_outcome(prog, np.array([[[2.76]]]))
