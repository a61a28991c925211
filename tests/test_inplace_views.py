"""In-place view methods (t_, transpose_, swapdims_, swapaxes_, unsqueeze_, squeeze_,
as_strided_) and NumPy's keyword names (axis=, keepdims=), against PyTorch."""

from __future__ import annotations

import pytest
from twolibs import arr, assert_same, assert_same_error

# (name, shape of the tensor, the call): each leaves a tensor of a new layout.
CALLS = [
    ("t_", (2, 3), lambda x: x.t_()),
    ("t_1d", (3,), lambda x: x.t_()),
    ("transpose_", (2, 3, 4), lambda x: x.transpose_(0, -1)),
    ("transpose_kw", (2, 3), lambda x: x.transpose_(dim0=1, dim1=0)),
    ("swapdims_", (2, 3, 4), lambda x: x.swapdims_(1, 2)),
    ("swapaxes_", (2, 3, 4), lambda x: x.swapaxes_(0, 2)),
    ("unsqueeze_", (2, 3), lambda x: x.unsqueeze_(1)),
    ("unsqueeze_kw", (2, 3), lambda x: x.unsqueeze_(dim=-1)),
    ("squeeze_", (2, 1, 3, 1), lambda x: x.squeeze_()),
    ("squeeze_int", (2, 1, 3, 1), lambda x: x.squeeze_(1)),
    ("squeeze_tuple", (2, 1, 3, 1), lambda x: x.squeeze_((1, 3))),
    ("squeeze_varargs", (1, 2, 1), lambda x: x.squeeze_(0, 2)),
    ("squeeze_kw", (2, 1), lambda x: x.squeeze_(dim=1)),
    ("as_strided_", (2, 3), lambda x: x.as_strided_((3, 2), (1, 3))),
    ("as_strided_offset", (2, 3), lambda x: x.as_strided_((2, 2), (3, 1), 1)),
]
IDS = [c[0] for c in CALLS]


@pytest.mark.parametrize(("name", "shape", "call"), CALLS, ids=IDS)
def test_layout_in_place(name, shape, call):
    """The same object, the new shape and strides, the same memory, one version on."""

    def prog(lib, x):
        y = x * 1  # a fresh contiguous tensor
        before = (y.data_ptr(), y._version)
        r = call(y)
        return r is y, y.shape, y.stride(), y.data_ptr() == before[0], y._version - before[1], y

    assert_same(prog, arr(*shape))


@pytest.mark.parametrize(("name", "shape", "call"), CALLS, ids=IDS)
def test_history_and_gradient(name, shape, call):
    """A non-leaf takes the view's node under PyTorch's in-place name (TBackward1,
    SqueezeBackward3, ...); the gradient flows through it."""

    def prog(lib, x):
        x.requires_grad_()
        y = x * 2
        call(y)
        w = lib.arange(float(y.numel()), dtype=y.dtype).reshape(y.shape)
        (y * w).sum().backward()
        return y.grad_fn.name(), y.is_leaf, y._base is None, x.grad

    assert_same(prog, arr(*shape))


@pytest.mark.parametrize(("name", "shape", "call"), CALLS, ids=IDS)
def test_leaf_refused(name, shape, call):
    def prog(lib, x):
        x.requires_grad_()
        call(x)

    assert_same_error(prog, arr(*shape))


def test_leaf_refused_before_the_arguments_are_checked():
    assert_same_error(lambda lib, x: x.requires_grad_().transpose_(0, 5), arr(2, 3))


@pytest.mark.parametrize(
    "call",
    [
        lambda x: x.transpose_(0, 5),
        lambda x: x.unsqueeze_(3),
        lambda x: x.squeeze_(dim=5),
        lambda x: x.squeeze_((0, 0)),
        lambda x: x.as_strided_((2,), (1,), -1),
        lambda x: x.as_strided_((20,), (1,)),
        lambda x: x.unsqueeze(0).t_(),
    ],
    ids=["transpose", "unsqueeze", "squeeze", "squeeze_dup", "offset", "storage", "t_3d"],
)
def test_bad_arguments_change_nothing(call):
    def prog(lib, x):
        try:
            call(x)
        except (RuntimeError, IndexError) as e:
            return type(e).__name__, str(e), x.shape, x.stride(), x._version
        raise AssertionError("no error")

    assert_same(prog, arr(2, 3))


def test_leaf_without_grad_and_no_grad_mode():
    def prog(lib, x):
        x.t_()
        leaf = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
        with lib.no_grad():
            leaf.unsqueeze_(0)
        return x, x.stride(), x._version, leaf.shape, leaf.is_leaf, leaf.grad_fn

    assert_same(prog, arr(2, 3))


def test_parameter_laid_out_anew_in_no_grad():
    """A leaf may change layout in no_grad mode; its gradient then has the new layout."""

    def prog(lib, x):
        w = lib.nn.Parameter(x)
        (w * 2).sum().backward()
        g1 = w.grad.clone()
        w.grad = None
        with lib.no_grad():
            w.t_()
        (w * lib.arange(6.0, dtype=w.dtype).reshape(w.shape)).sum().backward()
        return g1, w.grad, w.shape, w.is_leaf, w.requires_grad

    assert_same(prog, arr(2, 3))


def test_view_of_a_leaf_refused():
    def prog(lib, x):
        x.requires_grad_()
        x[0].unsqueeze_(0)

    assert_same_error(prog, arr(2, 3))


def test_output_of_split_refused():
    assert_same_error(lambda lib, x: (x.requires_grad_() * 1).split(1)[0].t_(), arr(2, 3))


def test_view_made_in_no_grad_refused():
    def prog(lib, x):
        y = x.requires_grad_() * 1
        with lib.no_grad():
            v = y[0]
        v.unsqueeze_(0)

    assert_same_error(prog, arr(2, 3))


def test_saved_tensor_is_stale():
    """The version bump makes a tensor saved for backward stale, as any in-place op."""

    def prog(lib, x):
        y = x.requires_grad_() * 1
        z = y * y
        y.t_()
        z.sum().backward()

    assert_same_error(prog, arr(2, 3))


def test_view_of_a_view_then_write():
    """A view laid out anew, then written: the write reaches the base (CopySlices)."""

    def prog(lib, x):
        x.requires_grad_()
        y = x * 1
        v = y[1:]
        v.t_()
        v.mul_(lib.arange(4.0, dtype=x.dtype).reshape(4, 1))
        v.unsqueeze_(0)
        w = lib.arange(12.0, dtype=x.dtype).reshape(3, 4)
        (y * w).sum().backward()
        return y, v.shape, v.stride(), v._base is y, x.grad

    assert_same(prog, arr(3, 4))


def test_older_views_of_a_relaid_root():
    """Views made before the root was laid out anew keep their elements and history: a
    write through one, or into the root, reaches both."""

    def prog(lib, x):
        x.requires_grad_()
        y = x * 2
        v = y.view(12)
        y.t_()
        u = y[0]  # a view made after
        v.mul_(lib.arange(12.0, dtype=x.dtype))
        y.add_(1.0)
        u2 = u * 3
        w = lib.arange(12.0, dtype=x.dtype).reshape(4, 3)
        ((y * w).sum() + (v * v).sum() + u2.sum()).backward()
        return y, v, u, x.grad, y.stride()

    assert_same(prog, arr(3, 4))


def test_relaid_root_detached_stays_detached():
    def prog(lib, x):
        y = x.requires_grad_() * 1
        y.t_()
        y.detach_()
        v = y[0]
        v.mul_(2)
        return y, y.requires_grad, y.grad_fn, y.is_leaf

    assert_same(prog, arr(3, 2))


def test_relaid_root_as_strided():
    def prog(lib, x):
        y = x.requires_grad_() * 1
        y.t_()
        z = y.as_strided((2, 2), (1, 2), 1)
        z.sum().backward()
        return z, x.grad

    assert_same(prog, arr(2, 3))


def test_chained_in_place_views_and_retain_grad():
    def prog(lib, x):
        x.requires_grad_()
        y = x * 2  # (exp saves its result: torch refuses its backward after the bumps)
        y.retain_grad()
        y.unsqueeze_(0).transpose_(0, 2).squeeze_(2)
        w = lib.arange(6.0, dtype=x.dtype).reshape(y.shape)
        (y * w).sum().backward()
        return y, y.grad_fn.name(), y.grad, x.grad

    assert_same(prog, arr(2, 3))


def test_double_backward_through_t_():
    def prog(lib, x):
        x.requires_grad_()
        y = x * x
        y.t_()
        (g,) = lib.autograd.grad(y.sum() * 1, x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        return g, gg

    assert_same(prog, arr(2, 3))


# ------------------------------------------------------------------ transforms
TRANSFORM_CALLS = [c for c in CALLS if c[0] not in ("as_strided_", "as_strided_offset")]
T_IDS = [c[0] for c in TRANSFORM_CALLS]


def _weighted_loss(lib, call):
    """sin(x), laid out anew by ``call``, weighted by 0, 1, 2, ... and summed."""

    def f(x):
        y = x.sin()
        call(y)
        w = lib.arange(float(y.numel()), dtype=y.dtype).reshape(y.shape)
        return (y * w).sum()

    return f


@pytest.mark.parametrize(("name", "shape", "call"), TRANSFORM_CALLS, ids=T_IDS)
def test_grad_through_in_place_view(name, shape, call):
    def prog(lib, x):
        return lib.func.grad(_weighted_loss(lib, call))(x)

    assert_same(prog, arr(*shape))


@pytest.mark.parametrize(("name", "shape", "call"), TRANSFORM_CALLS, ids=T_IDS)
def test_grad_of_an_input_refused(name, shape, call):
    assert_same_error(lambda lib, x: lib.func.grad(lambda x: call(x).sum())(x), arr(*shape))


@pytest.mark.parametrize(("name", "shape", "call"), TRANSFORM_CALLS, ids=T_IDS)
def test_jvp_through_in_place_view(name, shape, call):
    def prog(lib, x, t):
        def f(x):
            y = x * x
            call(y)
            return y

        return lib.func.jvp(f, (x,), (t,))

    assert_same(prog, arr(*shape), arr(*shape, seed=1))


@pytest.mark.parametrize(("name", "shape", "call"), TRANSFORM_CALLS, ids=T_IDS)
def test_vmap_of_in_place_view(name, shape, call):
    """vmap of a function laying out a fresh tensor anew (torch also changes an input's
    own layout under vmap, and then miscomputes its logical shape: numtorch does neither)."""

    def prog(lib, x):
        def f(x):
            y = x.cos()
            call(y)
            return y

        return lib.func.vmap(f)(x)

    assert_same(prog, arr(2, *shape))


@pytest.mark.parametrize(("name", "shape", "call"), TRANSFORM_CALLS, ids=T_IDS)
def test_vmap_of_grad_through_in_place_view(name, shape, call):
    def prog(lib, x):
        return lib.func.vmap(lib.func.grad(_weighted_loss(lib, call)))(x)

    assert_same(prog, arr(2, *shape))


def test_in_place_view_of_an_unbatched_tensor_under_vmap():
    def prog(lib, x, b):
        def f(b):
            y = x * 1
            y.t_()
            return y * b

        return lib.func.vmap(f)(b)

    assert_same(prog, arr(2, 3), arr(4, 3, 2))


def test_saved_result_is_stale():
    def prog(lib, x):
        y = x.requires_grad_().exp()
        y.unsqueeze_(0)
        y.sum().backward()

    assert_same_error(prog, arr(2, 3))


@pytest.mark.parametrize("shape", [(2, 3), (0, 3)])
def test_as_strided_in_place_of_a_view(shape):
    def prog(lib, x):
        y = x.requires_grad_() * 1
        v = y[1:]
        v.as_strided_((2,), (2,), 3) if x.numel() else v.as_strided_((0,), (1,))
        v.sum().backward()
        return v, v.stride(), v._base is y, x.grad

    assert_same(prog, arr(*shape))


@pytest.mark.parametrize(
    "make",
    [lambda y: y.sum(0), lambda y: y.squeeze_(), lambda y: y.exp()],
    ids=["sum1", "squeeze3", "exp"],
)
def test_stale_saved_tensor_names_its_node(make):
    """PyTorch's text names the node less ``Backward`` and less a number 0 (Sum1, Squeeze3,
    Exp)."""

    def prog(lib, x):
        y = make(x.requires_grad_() * 1)
        z = y * y
        with lib.no_grad():
            y.add_(1)
        z.sum().backward()

    assert_same_error(prog, arr(2, 3))


# ------------------------------------------------------------------ axis= and keepdims=
# PyTorch's argument parser takes NumPy's axis= for dim= and keepdims= for keepdim= in
# every function it parses (generated ops, Python-written functions, Tensor methods).
NUMPY_CALLS = {
    "sum": lambda T, x: T.sum(x, axis=1),
    "sum_keepdims": lambda T, x: T.sum(x, 1, keepdims=True),
    "sum_method": lambda T, x: x.sum(axis=0, keepdims=True),
    "mean": lambda T, x: T.mean(x, axis=(0, 1)),
    "amax": lambda T, x: T.amax(x, axis=1, keepdims=True),
    "argmax": lambda T, x: x.argmax(axis=1),
    "std": lambda T, x: T.std(x, axis=1, keepdims=True),
    "var_method": lambda T, x: x.var(axis=0),
    "max": lambda T, x: tuple(T.max(x, axis=1, keepdims=True)),
    "min_method": lambda T, x: tuple(x.min(axis=0)),
    "cat": lambda T, x: T.cat([x, x], axis=1),
    "stack": lambda T, x: T.stack([x, x], axis=2),
    "squeeze": lambda T, x: T.squeeze(x.unsqueeze(0), axis=0),
    "unsqueeze": lambda T, x: x.unsqueeze(axis=-1),
    "squeeze_": lambda T, x: x.unsqueeze(1).squeeze_(axis=1),
    "unsqueeze_": lambda T, x: (x * 1).unsqueeze_(axis=0),
    "softmax": lambda T, x: T.softmax(x, axis=1),
    "log_softmax_method": lambda T, x: x.log_softmax(axis=0),
    "cumsum": lambda T, x: T.cumsum(x, axis=1),
    "cumsum_": lambda T, x: (x * 1).cumsum_(axis=0),
    "sort": lambda T, x: tuple(T.sort(x, axis=0)),
    "median": lambda T, x: tuple(x.median(axis=1, keepdims=True)),
    "logsumexp": lambda T, x: T.logsumexp(x, axis=1, keepdims=True),
    "unbind": lambda T, x: T.unbind(x, axis=1),
    "chunk": lambda T, x: T.chunk(x, 2, axis=1),
    "gather": lambda T, x: T.gather(x, axis=1, index=T.zeros(2, 1, dtype=T.long)),
    "narrow": lambda T, x: x.narrow(axis=0, start=0, length=1),
    "vector_norm": lambda T, x: T.linalg.vector_norm(x, axis=1, keepdims=True),
    "special_softmax": lambda T, x: T.special.softmax(x, axis=0),
}


@pytest.mark.parametrize("call", list(NUMPY_CALLS.values()), ids=list(NUMPY_CALLS))
def test_numpy_keyword_names(call):
    assert_same(lambda lib, x: call(lib, x), arr(2, 3))


NUMPY_ERRORS = {
    "both": lambda T, x: T.sum(x, dim=1, axis=1),
    "positional_and_alias": lambda T, x: T.sum(x, 1, axis=1),
    "both_keepdim": lambda T, x: x.sum(1, keepdim=True, keepdims=True),
    "method_both": lambda T, x: x.max(1, axis=1),
    "cat_both": lambda T, x: T.cat([x, x], 1, axis=1),
    "inplace_both": lambda T, x: (x * 1).cumsum_(0, axis=0),
    "roll_dims": lambda T, x: T.roll(x, 1, axis=1),  # dims= has no alias
    "F_softmax": lambda T, x: T.nn.functional.softmax(x, axis=1),  # Python in PyTorch
    "split": lambda T, x: T.split(x, 1, axis=0),
}


@pytest.mark.parametrize("call", list(NUMPY_ERRORS.values()), ids=list(NUMPY_ERRORS))
def test_numpy_keyword_names_refused(call):
    assert_same_error(lambda lib, x: call(lib, x), arr(2, 3))


NO_ALIAS = {  # a TypeError in both (PyTorch's parser words a missing argument its own way)
    "flip_dims": lambda T, x: T.flip(x, axis=(0,)),
    "transpose_dim0": lambda T, x: T.transpose(x, axis0=0, axis1=1),
    "swapaxes_dim0": lambda T, x: T.swapaxes(x, dim0=0, dim1=1),  # none the other way
    "tensor_norm": lambda T, x: x.norm(axis=1),
    "gather_missing": lambda T, x: T.gather(x, axis=1),
}


@pytest.mark.parametrize("call", list(NO_ALIAS.values()), ids=list(NO_ALIAS))
def test_no_alias_there(call):
    import torch

    import numtorch

    for lib in (numtorch, torch):
        with pytest.raises(TypeError):
            call(lib, lib.tensor(arr(2, 3)))


def test_numpy_keyword_names_leave_signatures_alone():
    import inspect

    import numtorch

    for fn in (numtorch.sum, numtorch.max, numtorch.Tensor.std, numtorch.cat):
        assert not {"axis", "keepdims"} & set(inspect.signature(fn).parameters), fn


def test_numpy_keyword_names_under_transforms():
    def prog(lib, x):
        f = lambda x: x.sin().sum(axis=1, keepdims=True).amax(axis=0).sum()  # noqa: E731
        return lib.func.grad(f)(x), lib.func.vmap(lambda r: r.softmax(axis=0))(x)

    assert_same(prog, arr(2, 3))


# ------------------------------------------------------------------ resize_, resize_as_
RESIZES = {
    "smaller": lambda x: x.resize_(2),
    "reshape": lambda x: x.resize_(3, 2),
    "list": lambda x: x.resize_([1, 6]),
    "same": lambda x: x.resize_(2, 3),
    "empty": lambda x: x.resize_(0, 4),
    "transposed": lambda x: x.t().resize_(6),
    "offset": lambda x: x[:, 1:].resize_(4),
    "as_template": lambda x: x.resize_as_(x.new_zeros(3, 1)),
}


@pytest.mark.parametrize("call", list(RESIZES.values()), ids=list(RESIZES))
def test_resize_in_place(call):
    """Contiguous strides over the same storage from self's first element; the version
    moves when the shape does."""

    def prog(lib, x):
        y = call(x)
        moved = y.data_ptr() - x.data_ptr() if y.numel() else None
        return y.shape, y.stride(), y.clone(), x._version, moved

    assert_same(prog, arr(2, 3))


def test_resize_grows_keeping_the_storage():
    def prog(lib, x):
        v = x.view(6)
        x.resize_(2)
        x.resize_(4, 3)
        return x[:2], x.shape, x.stride(), v, x._version

    assert_same(prog, arr(2, 3))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: x.requires_grad_().resize_(3),
        lambda lib, x: (x.requires_grad_() * 1).resize_(2, 3),
        lambda lib, x: x.resize_(2, -1),
        lambda lib, x: x.resize_(2.0),
        lambda lib, x: x.resize_([2, 2.5]),
        lambda lib, x: x.resize_([2.5]),
        lambda lib, x: x.resize_(2, 2.5),
        lambda lib, x: x.resize_as_(3),
        lambda lib, x: lib.func.grad(lambda t: (t * 1).resize_(3).sum())(x),
    ],
    ids=[
        "leaf",
        "nonleaf",
        "negative",
        "float",
        "float_in_list",
        "float_first",
        "float_varargs",
        "template",
        "grad",
    ],
)
def test_resize_errors(call):
    assert_same_error(call, arr(2, 3))


@pytest.mark.parametrize("n", [2, 3], ids=["smaller", "same"])
def test_resize_under_vmap(n):
    """PyTorch resizes the physical tensor (the batch in front), storage order kept."""
    assert_same(lambda lib, x: lib.func.vmap(lambda t: (t * 1).resize_(n))(x), arr(2, 3))


def test_resize_under_jvp_refused():
    def prog(lib, x):
        return lib.func.jvp(lambda t: (t * 1).resize_(2), (x,), (x,))

    assert_same_error(prog, arr(3))


def test_older_views_of_a_relaid_root_under_grad():
    def prog(lib, x):
        def f(x):
            y = x * 2
            v = y.view(12)
            y.t_()
            v.mul_(lib.arange(12.0, dtype=x.dtype))
            y.add_(1.0)
            w = lib.arange(12.0, dtype=x.dtype).reshape(4, 3)
            return (y * w).sum() + (v * v).sum()

        return lib.func.grad(f)(x), lib.func.vmap(lib.func.grad(f))(x.unsqueeze(0).expand(2, 3, 4))

    assert_same(prog, arr(3, 4))
