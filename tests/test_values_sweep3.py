"""Issue 14, third fuzz round (fresh seeds, 68,000 programs): signed zeros, the order of
shape and dtype checks under vmap, layouts of clones under vmap, and the nodes that
errors name, against PyTorch."""

import warnings

import numpy as np
import pytest
import torch
from twolibs import assert_same, assert_same_error, assert_same_outcome

import numtorch as nt


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_relu_keeps_a_negative_zero():
    # (x > 0.5) * b is -0.0 for a negative b; relu keeps it, so 2 / y is -inf
    def prog(L, x, b):
        y = ((x > 0.5) * b).relu()
        return y.signbit(), 2 / y, L.func.vmap(lambda r: r.relu().signbit())(y)

    assert_same(prog, np.array([[-0.62, 0.8]]), np.array([[-1.18, 2.0]]))


def test_remainder_zero_takes_the_dividends_sign():
    def prog(L, a, b):
        r = L.remainder(a, b)
        return r.signbit(), L.remainder(a, -2.0).signbit(), L.remainder(-0.0, b).signbit()

    assert_same(prog, np.array([0.0, -0.0, 4.0, -4.0, 3.0]), np.array([-2.18, 2.0, -2.0, 2.0, 2.0]))


@pytest.mark.parametrize("fn", ["remainder", "fmod", "floor_divide"])
def test_integer_division_checks_shapes_before_zeros(fn):
    assert_same_error(lambda L: getattr(L, fn)(L.tensor([1, 2]), L.tensor([0, 1, 2])))


@pytest.mark.parametrize("in_dims", [0, 1])
def test_a_clone_of_an_expanded_sample_is_contiguous_under_vmap(in_dims):
    def prog(L, x):
        f = lambda r: L.broadcast_to(r, (2, 4, 2)).clone()  # noqa: E731
        y = L.func.vmap(f, in_dims=in_dims)(x)
        return y, y.stride(), L.func.vmap(lambda r: f(r).view(-1), in_dims=in_dims)(x)

    assert_same(prog, np.arange(4.0).reshape((2, 1, 2) if in_dims == 0 else (1, 2, 2)))


@pytest.mark.parametrize("fn", ["hypot", "add", "lt", "remainder"])
def test_vmap_checks_shapes_before_dtypes(fn):
    def prog(L):
        f = getattr(L, fn)
        return L.func.vmap(f)(L.ones(2, 5, dtype=L.long), L.ones(2, 3, dtype=L.bool))

    assert_same_error(prog)


def _modified(L, write):
    """A saved output of an in-place op on a view, written again in place (``write``)."""
    x = L.tensor([0.49, 2.0], requires_grad=True)
    a = x * 1
    y = a[1:]
    y.exp_()
    keep = write(L, a, y)
    (y * 2).sum().backward()
    return keep


@pytest.mark.parametrize(
    "write",
    [
        lambda L, a, y: a.mul_(2),  # through the base: the node the output was saved by
        lambda L, a, y: y.mul_(2),  # the view again: the same
        # a later view keeps the view's node after the first write alive: it is named
        lambda L, a, y: (y[:1] * 2, y.index_add_(0, L.tensor([0]), y[:1] * -2.5)),
    ],
)
def test_errors_name_a_written_views_node_while_it_lives(write):
    assert_same_error(lambda L: _modified(L, write))


def test_reshape_of_a_viewable_non_contiguous_tensor_is_an_alias():
    def prog(L, x, z):
        x = (x * 1).requires_grad_()
        s = L.stack([x, x], 0).split(1, -2)[0]
        w = (z * 1).requires_grad_().chunk(3, 1)[0]
        views = [x.flatten(), x.reshape(-1), s.flatten(), s.reshape(-1), s.view(-1),
                 w.flatten(), w.reshape(2), x.t().flatten()]  # fmt: skip
        return [v.grad_fn.name() for v in views]

    assert_same(prog, np.ones((2, 1)), np.ones((2, 3)))
    assert_same_error(lambda L: L.stack([L.ones(2, 1, requires_grad=True) * 1] * 2, 0)
                      .split(1, -2)[0].flatten().zero_())  # fmt: skip


@pytest.mark.parametrize("ord", [2, 3, 1])
def test_norm_tangent_at_zero_is_masked_as_pytorchs(ord):
    # PyTorch masks the tangent where the norm is 0 (a NaN tangent gives 0) except for ord 1
    def prog(L, x, t):
        return L.func.jvp(lambda x: L.linalg.vector_norm(x, ord, 0, True), (x,), (t,))

    assert_same(prog, np.zeros(2), np.array([np.nan, 1.0]))


def test_a_value_cast_into_a_multi_output_view_is_refused_first():
    def prog(L):
        y = L.zeros(1, 2, dtype=L.bool).chunk(2, 1)[-1]
        y[...] = L.tensor(2.0, requires_grad=True)

    assert_same_error(prog)


@pytest.mark.parametrize("dtype", ["int64", "bool", "float32"])
def test_index_add_into_an_expanded_tensor_checks_dtypes_before_overlap(dtype):
    def prog(L):
        y = L.zeros(1, 2, dtype=getattr(L, dtype)).expand(3, 2)
        y.index_add_(0, L.tensor([0]), L.ones(1, 2))

    assert_same_error(prog)


def test_maximum_and_minimum_keep_the_first_operand_on_a_tie():
    # maximum(-0.0, 0.0) is -0.0 in PyTorch (NumPy's ufunc returns the second operand)
    def prog(L, a, b):
        return [f(a, b).signbit() for f in (L.maximum, L.minimum, L.fmax, L.fmin)]

    assert_same(prog, np.array([-0.0, 0.0, 1.0]), np.array([0.0, -0.0, 1.0]))


def test_a_dtype_conversion_keeps_the_layout():
    # _to_copy allocates empty_like (preserve_format): a transposed tensor stays transposed
    def prog(L, x):
        y = x.mT.long()
        return y, y.stride(), y.log().stride(), x.permute(1, 0).float().stride()

    assert_same(prog, np.array([[3.09, 3.16], [-0.84, 0.28]]))
    assert_same_error(lambda L: L.tensor([[3.0, 3.1], [-0.8, 0.2]]).mT.long().log().view(-1))


@pytest.mark.parametrize("weight", [0.25, "tensor"])
def test_lerp_of_integers_checks_shapes_before_its_kernel(weight):
    def prog(L):
        w = L.ones(1, dtype=L.long) if weight == "tensor" else weight
        return L.lerp(L.ones(1, 1, 2, dtype=L.long), L.ones(3, dtype=L.long), w)

    assert_same_error(prog)


@pytest.mark.parametrize("name", ["amax", "amin"])
def test_amax_and_amin_keep_the_first_of_equal_zeros(name):
    # NumPy's reduction may keep either signed zero; PyTorch's amax/amin keep the first
    def prog(L, a):
        f = getattr(L, name)
        cols = a.reshape(-1, 1).expand(-1, 3)
        outs = [f(a), f(a.flip(0)), f(cols, 0), f(cols, (1, 0), keepdim=True), f(cols.mT, -1)]
        batched = L.func.vmap(lambda r: f(r, 0))(L.stack([a, a.flip(0)]))
        return [o.signbit() for o in outs + [batched]]

    assert_same(prog, np.array([0.0, -0.0] * 3 + [-1.0] * 20))
    assert_same(prog, np.array([-1.0, -0.0, 0.0, -0.0]))


def test_copy_into_an_integer_output_of_a_multi_view_op_takes_no_history():
    # PyTorch's copy_ skips its view checks when self's dtype cannot require grad
    def prog(L):
        x, b = L.tensor([-0.74, 2.0], requires_grad=True), L.tensor(3.41, requires_grad=True)
        y = x.long().unbind(0)[0]
        y.copy_(b)
        return y, y.requires_grad

    assert_same(prog)
    for write in (lambda y, b: y.fill_(b), lambda y, b: y.__setitem__(slice(0, 1), b)):
        assert_same_error(
            lambda L, w=write: w(
                L.tensor([[-0.7, 2.5], [1.0, 2.0]]).long().unbind(0)[0],
                L.tensor(0.41, requires_grad=True),
            )
        )


@pytest.mark.parametrize("name", ["neg_", "relu_"])
@pytest.mark.parametrize("dtype", ["bool", "int64", "float32"])
def test_neg_and_relu_refuse_bool_before_the_overlap_check(name, dtype):
    def write(L, x):
        return getattr(x.expand(3), name)()

    def prog(L):
        return write(L, L.zeros(1, dtype=getattr(L, dtype)))

    def batched(L):
        return L.func.vmap(lambda x: write(L, x))(L.zeros(2, 1, dtype=getattr(L, dtype)))

    assert_same_error(prog)
    assert_same_error(batched)


@pytest.mark.parametrize("index", ["ellipsis", "int", "slice", "none"])
@pytest.mark.parametrize("dtype", ["bool", "long"])
def test_setitem_into_an_integer_output_of_a_multi_view_op(index, dtype):
    # PyTorch copies into a 0-d target (no checks for an integer self) and fills a larger one
    def prog(L):
        x = L.tensor([[-1.4, 2.0], [1.0, 3.0]], requires_grad=True)
        y = (x.ge(0) if dtype == "bool" else x.long()).unbind(0)[0]
        if index == "ellipsis":
            y = y[0]
        y[{"ellipsis": ..., "int": 0, "slice": slice(0, 1), "none": None}[index]] = L.tensor(
            0.5, requires_grad=True
        )
        return y, y.requires_grad

    assert_same_outcome(prog)


@pytest.mark.parametrize("write", ["fill_(1.5)", "triu_()", "zero_()", "mul_(2)"])
@pytest.mark.parametrize("transform", ["grad", "vjp", "vmap_grad"])
def test_grad_refuses_a_write_through_an_expanded_view_in_backward(write, transform):
    # fill_, triu_ and zero_ may write shared elements; grad's backward refuses the write
    def run(L, fail_after):
        def f(x):
            y = x.log1p().expand(2, 2, 1)
            eval("y." + write)
            if fail_after:
                raise ValueError("the forward went on")
            return (y * L.arange(4.0).reshape(2, 2, 1)).sum()

        if transform == "grad":
            return L.func.grad(f)(L.tensor([[3.25]]))
        if transform == "vjp":
            return L.func.vjp(f, L.tensor([[3.25]]))[1](L.tensor(1.0))
        return L.func.vmap(L.func.grad(f))(L.tensor([[[3.25]], [[1.0]]]))

    assert_same_error(lambda L: run(L, True))
    assert_same_error(lambda L: run(L, False))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "int64", "uint8"])
@pytest.mark.parametrize("values", ["both", "zero_input", "zero_other"])
def test_where_on_large_arrays_selects_the_exact_bits(dtype, values):
    # large arrays take a branch-free select of bit patterns: NaN payloads, signed zeros and
    # broadcast operands come out as PyTorch's where gives them
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 1, 40000)) * 100).astype(dtype)
    b = (rng.standard_normal(40000) * 100).astype(dtype)
    if a.dtype.kind == "f":
        a[0, 0, :4] = [np.nan, -0.0, np.inf, -np.nan]
        b[:4] = [-0.0, np.nan, -np.inf, 0.0]
    c = rng.random((4, 40000)) < 0.5

    def bits(L):
        x, y = L.tensor(a), L.tensor(b)
        x, y = {"both": (x, y), "zero_input": (0, y), "zero_other": (x, 0)}[values]
        out = L.where(L.tensor(c), x, y).numpy()
        return out.dtype, out.shape, out.tobytes()

    assert bits(nt) == bits(torch)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("fn", ["var", "std", "var_mean", "std_mean"])
def test_moments_of_low_precision_floats_accumulate_in_double(fn, dtype):
    # PyTorch's CPU var/std accumulate float32 and half in double: the std of [1e30, -2.8]
    # is finite (its variance overflows float32), and ordinary values round as double's do
    rng = np.random.default_rng(3)
    values = [[6e4, -6e4], *(rng.standard_normal((4, 37)) * 1e3).tolist()]
    if dtype == "float32":  # (1e30 is no half)
        values.append([1e30, -2.77])

    def prog(L):
        xs = [L.tensor(v, dtype=getattr(L, dtype)) for v in values]
        return [(getattr(L, fn)(x), getattr(L, fn)(x, 0, keepdim=True)) for x in xs]

    assert_same(prog, rtol=0, atol=0)
