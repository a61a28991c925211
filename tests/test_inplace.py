"""In-place writes against PyTorch: internal and partial overlap (expanded tensors, out=),
the checks in-place ops make before writing (casts, shapes) and their order, what an
in-place op saves and the version-counter errors, copy_ and predicates into other dtypes."""

from __future__ import annotations

import numpy as np
import pytest
from twolibs import arr, assert_same, assert_same_error, assert_same_outcome, fd_grad, run

import numtorch as nt

# ==================================================================
# Found by issue 14's second fuzz round.


# ------------------------------------------------------------------ copy_ into a non-float
@pytest.mark.filterwarnings("ignore")
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


# ------------------------------------------------------------------ clamp_'s number bounds
@pytest.mark.filterwarnings("ignore")
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


# ==================================================================
# Found by issue 14's third fuzz round (fresh seeds, 68,000 programs).


@pytest.mark.filterwarnings("ignore")
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


@pytest.mark.filterwarnings("ignore")
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


# ==================================================================
# Causes behind the bad-input sweep's DIFFERS cases (tests/test_bad_inputs.py), fixed.


W = np.arange(15.0).reshape(5, 3) / 10


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, x: x[:, :1].clone().addmm_(x[:, :2], x[:2]),
        lambda L, x: x[:2, 0].clone()[:1].addmv_(x[:2, :2], x[:2, 0]),
        lambda L, x: x[None, :, :1].clone().baddbmm_(x[None, :, :2], x[None, :2]),
        lambda L, x: (x > 0.3).cumsum_(0),
        lambda L, x: (x > 0.3).cumprod_(1),
        lambda L, x: x.clone().cumsum_(0, dtype=L.int64),
        lambda L, x: x.long().cumprod_(0, dtype=L.float32),
        lambda L, x: x.long().mvlgamma_(1),
        lambda L, x: x.int().mvlgamma_(1),
    ],
)
def test_inplace_texts(prog):
    assert_same_error(prog, W)


# ==================================================================
# Issue 14, "lenient where PyTorch refuses": PyTorch's refusals, before any input is modified.


# ------------------------------------------------------------------ 6. partial overlap with the written tensor
def _sq(lib):
    return lib.arange(9.0).reshape(3, 3)


_ROW3 = [[0, 1, 2]]


@pytest.mark.parametrize(
    "write",
    [
        lambda lib, x: x.mT.mul_(x),
        lambda lib, x: x.mul_(x.mT),
        lambda lib, x: x.__imul__(x.mT),
        lambda lib, x: x.add_(x[0]),
        lambda lib, x: x.add_(x[2, 2]),
        lambda lib, x: x.view(9)[1:].add_(x.view(9)[:-1]),
        lambda lib, x: x[:2].mul_(x[1:]),
        lambda lib, x: x.copy_(x.mT),
        lambda lib, x: x.mT.copy_(x),
        lambda lib, x: x.copy_(x[0, 0]),
        lambda lib, x: x.view(9)[1:].copy_(x.view(9)[:-1]),
        lambda lib, x: x.__setitem__(lib.tensor([0, 1]), x[1:]),
        lambda lib, x: x.addcmul_(x.mT, x),
        lambda lib, x: x.addcdiv_(x.mT, lib.ones(3, 3)),
        lambda lib, x: x.clamp_(min=x.mT),
        lambda lib, x: x.lerp_(x.mT, 0.5),
        lambda lib, x: x.pow_(x.mT),
        lambda lib, x: x.atan2_(x.mT),
        lambda lib, x: x.div_(x.mT),
        lambda lib, x: x.xlogy_(x.mT),
        lambda lib, x: x.fmod_(x.mT),
        lambda lib, x: x.copysign_(x.mT),
        lambda lib, x: x.logical_and_(x.mT),
        lambda lib, x: x.eq_(x.mT),
        lambda lib, x: x.index_add_(0, lib.tensor([0, 1, 2]), x.mT),
        lambda lib, x: x.index_copy_(0, lib.tensor([0, 1, 2]), x.mT),
        lambda lib, x: x.scatter_(0, lib.tensor(_ROW3), x.mT),
        lambda lib, x: x.scatter_add_(0, lib.tensor(_ROW3), x.mT),
        lambda lib, x: x.scatter_reduce_(0, lib.tensor(_ROW3), x.mT, "sum"),
        lambda lib, x: x.put_(lib.tensor([0, 1]), x[1, :2]),
        lambda lib, x: x.index_put_((lib.tensor([0, 1]),), x[1:], accumulate=True),
    ],
)
def test_partial_overlap_is_refused(write):
    def prog(lib):
        x = _sq(lib)
        try:
            write(lib, x)
        finally:
            assert x.tolist() == _sq(lib).tolist()  # nothing written

    assert_same_error(prog)


@pytest.mark.parametrize(
    "write",
    [
        lambda lib, x: x.mul_(x),
        lambda lib, x: x.copy_(x),
        lambda lib, x: x[0].add_(x[0]),
        lambda lib, x: x[0].add_(x[1]),
        lambda lib, x: x.view(9).add_(x.reshape(9)),
        lambda lib, x: x.mul_(x.mT.contiguous()),
        lambda lib, x: x.diagonal().mul_(x[0]),  # a diagonal is not dense: PyTorch lets it be
        lambda lib, x: x[:, 0].mul_(x[0]),
        lambda lib, x: x[0].mul_(x[:, 0]),
        lambda lib, x: [x.add_(lib.broadcast_to(x[0], (3, 3)))] and None,  # (values alias in
        lambda lib, x: x.view(9)[::2].add_(x.view(9)[1::2][:4].reshape(4).repeat(2)[:5]),
        lambda lib, x: x.__setitem__(0, x[:, 0]),
        lambda lib, x: x.fill_(x[0, 0]),
        lambda lib, x: x.masked_fill_(x > 3, x[0, 0]),
        lambda lib, x: x.index_fill_(0, lib.tensor([1]), x[0, 1]),
        lambda lib, x: x.masked_scatter_(x > 3, x.mT),
        lambda lib, x: [x.addmm_(x.mT, x)] and None,  # PyTorch, as the writes go: no error)
        lambda lib, x: x.scatter_(0, lib.tensor(_ROW3), 1.0),
    ],
)
def test_overlaps_pytorch_allows(write):
    def prog(lib):
        x = _sq(lib)
        return x if write(lib, x) is not None else None

    assert_same(prog)


def test_partial_overlap_under_transforms():
    assert_same_error(
        lambda lib: lib.func.grad(lambda y: (lambda z: z.mul_(z.mT).sum())(y * 1))(lib.ones(3, 3))
    )
    assert_same_error(
        lambda lib: lib.func.vmap(lambda y: y.mul_(y.mT))(_sq(lib).expand(2, 3, 3).clone())
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: lib.mul(x, 2, out=x.mT),
        lambda lib, x: lib.add(x, x.mT, out=x),
        lambda lib, x: lib.neg(x, out=x.mT),
        lambda lib, x: lib.where(x > 1, x, x.mT, out=x),
        lambda lib, x: lib.gather(x, 0, lib.tensor(_ROW3), out=x[0:1]),
        lambda lib, x: lib.index_select(x, 0, lib.tensor([0]), out=x[1:2]),
        lambda lib, x: lib.cat([x[0], x[1]], out=x[1:3].reshape(6)),
    ],
)
def test_out_partly_overlapping_an_input_is_refused(call):
    def prog(lib):
        x = _sq(lib)
        try:
            call(lib, x)
        finally:
            assert x.tolist() == _sq(lib).tolist()

    assert_same_error(prog)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: lib.mul(x, 2, out=x),
        lambda lib, x: [lib.sum(x, 0, out=x[0])] and None,  # (PyTorch's values alias: no
        lambda lib, x: [lib.mm(x, x, out=x.mT)] and None,  # error is what is compared)
    ],
)
def test_out_overlaps_pytorch_allows(call):
    assert_same(lambda lib: call(lib, _sq(lib)))


# ==================================================================
# The in-place sweep: internal overlap, saved outputs, errors under torch.func.


X = np.array([1.5, -2.0])


# ------------------------------------------------------------------ internal overlap
@pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")
@pytest.mark.parametrize(
    "write",
    [
        # no element of the written tensor repeats: the write goes through
        lambda T, x: x.expand(3, 2)[0].mul_(2),
        lambda T, x: x.expand(3, 2).select(0, 1).add_(1),
        lambda T, x: x.expand(3, 2)[:1].mul_(2),
        lambda T, x: x.expand(3, 2).diagonal().mul_(2),
        lambda T, x: x.expand(3, 2).unsqueeze(0)[0, 0].sin_(),
        lambda T, x: x.expand(0, 2).mul_(2),
        lambda T, x: T.broadcast_to(x, (2,)).mul_(2),
        lambda T, x: T.broadcast_to(x.reshape(2, 1), (2, 1)).triu_(),
        lambda T, x: T.broadcast_to(x.sum(), (2,)).view(-1)[:1].sin_(),
        # PyTorch's fill_, zero_, masked_fill_, index_fill_, index_put_, tril_, triu_ write
        # into repeated elements (the ones they change)
        lambda T, x: x.expand(3, 2).zero_(),
        lambda T, x: x.expand(3, 2).fill_(4.0),
        lambda T, x: x.expand(3, 2).masked_fill_(
            T.tensor([[True, False], [False, False], [False, False]]), 7.0
        ),
        lambda T, x: x.expand(3, 2).index_fill_(1, T.tensor([1]), 7.0),
        lambda T, x: x.expand(3, 2).index_put_(
            (T.tensor([1]),), T.tensor(7.0, dtype=x.dtype), accumulate=True
        ),
        lambda T, x: x.expand(3, 2).tril_(),
        lambda T, x: x.expand(3, 2).triu_(1),
        lambda T, x: x.expand(3, 2).__setitem__(
            T.tensor([[True, False], [False, False], [False, True]]), 7.0
        ),
        lambda T, x: x.expand(3, 2).__setitem__(0, T.tensor([5.0, 6.0])),
    ],
)
def test_writes_without_internal_overlap_or_allowed_go_through(write):
    def prog(T, x):
        write(T, x)
        return x

    assert_same(prog, X.copy())


@pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")
@pytest.mark.parametrize(
    "write",
    [
        lambda T, x: x.expand(3, 2).mul_(2),
        lambda T, x: x[:1].expand(3).sin_(),
        lambda T, x: x.expand(3, 2).copy_(T.ones(3, 2)),
        lambda T, x: x.expand(3, 2).__setitem__(..., 1.0),
        lambda T, x: T.add(x, x, out=x.expand(3, 2)),
        # the overlap check comes before the cast, broadcast and kernel checks ...
        lambda T, x: x.ge(0).expand(3, 2).sin_(),
        lambda T, x: x.expand(3, 2).add_(T.ones(4, 2)),
        lambda T, x: x.ge(0).expand(3, 2).abs_(),
        lambda T, x: x.long().expand(3, 2).div_(0, rounding_mode="floor"),
        lambda T, x: x.expand(3, 2).mul_(T.ones(3, 2, dtype=T.complex64)),
        # ... and after the argument checks of sub and addcdiv
        lambda T, x: x.bool().expand(3, 2).sub_(True),
        lambda T, x: x.expand(3, 2).addcdiv_(
            T.ones(3, 2, dtype=T.long), T.ones(3, 2, dtype=T.long)
        ),
    ],
)
def test_writes_into_repeated_elements_raise(write):
    assert_same_error(lambda T, x: write(T, x), X.copy())


@pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")
def test_expand_strides_are_pytorchs():
    def prog(T, x):
        return [
            x.expand(3, 2).stride(),
            x.reshape(2, 1).expand(1, 2, 1).stride(),
            x[0].expand(2).stride(),
            x.reshape(2, 1).expand(2, 3).stride(),
        ]

    assert_same(prog, X.copy())


# ------------------------------------------------------------------ saved results
def _exp_then_write_through_expand(T, x):
    y = x.cos()
    y.exp_()  # saves its output: y at version 1
    T.broadcast_to(y, (2,)).view(-1)[:1].sin_()
    return y.sum()


@pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")
def test_an_inplace_ops_saved_output_is_the_written_tensor():
    def prog(T, x):
        _exp_then_write_through_expand(T, x).backward()
        return x.grad

    assert_same_error(prog, np.array(-1.94).astype(np.float32))


@pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")
@pytest.mark.parametrize("vmapped", [False, True])
def test_version_error_under_grad_names_the_node(vmapped):
    def prog(T, x):
        g = T.func.grad(lambda x: _exp_then_write_through_expand(T, x))
        return (T.func.vmap(g) if vmapped else g)(x)

    assert_same_error(prog, np.array([-1.94, 0.5] if vmapped else -1.94).astype(np.float32))


# ------------------------------------------------------------------ what ops save
@pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")
@pytest.mark.parametrize(
    "make",
    [
        lambda T, x, b: T.logaddexp(x, b),  # saves its inputs, not its result
        lambda T, x, b: T.logaddexp2(x, b),
        lambda T, x, b: (x * 0.5).erfinv(),
        lambda T, x, b: T.var_mean(x, 0)[0],
    ],
)
def test_writing_an_output_the_node_does_not_save_is_fine(make):
    def prog(T, x, b):
        x.requires_grad_()
        b.requires_grad_()
        y = make(T, x, b)
        y.mul_(2)
        y.sum().backward()
        return x.grad

    assert_same(prog, arr(3, 2) * 0.5, arr(2, seed=1))


# an output of a multi-output op that its node saves, written in place: (values, one of
# them written); std_mean saves its std (refused), var_mean nothing, max(dim) its indices
_SAVED_OUTPUTS = {
    "std_mean": lambda T, x: T.std_mean(x)[0].exp_(),
    "std_mean dim": lambda T, x: T.std_mean(x, 0)[0].exp_(),
    "std_mean lt_": lambda T, x: T.std_mean(x, 0)[0].lt_(2) * T.std_mean(x, 0)[1],
    "var_mean": lambda T, x: T.var_mean(x, 0)[0].exp_(),
    "max values": lambda T, x: T.max(x, 0)[0].mul_(3),
    "sort values": lambda T, x: T.sort(x, 0)[0].mul_(3),
}


@pytest.mark.parametrize("name", _SAVED_OUTPUTS)
@pytest.mark.parametrize("how", ["eager", "grad", "vjp", "vmap grad"])
def test_a_saved_output_of_several_written_in_place(name, how):
    """Under a transform as in eager mode, the outputs a node saved are version-checked."""

    def prog(T, x):
        f = lambda a: _SAVED_OUTPUTS[name](T, a).sum()  # noqa: E731
        if how == "grad":
            return T.func.grad(f)(x)
        if how == "vjp":
            return T.func.vjp(f, x)[1](T.tensor(1.0))
        if how == "vmap grad":
            return T.func.vmap(T.func.grad(f))(x.expand(2, 3, 2))
        f(x.requires_grad_()).backward()
        return x.grad

    assert_same_outcome(prog, arr(3, 2))


@pytest.mark.parametrize(
    "then",
    [
        lambda T, a: T.linalg.vector_norm(a, ord=0),  # no gradient flows back
        lambda T, a: a.sign().sum(),  # a zero gradient flows back
        lambda T, a: T.linalg.vector_norm(a, ord=2),
    ],
)
def test_a_node_reached_by_no_gradient_still_checks_what_it_saved(then):
    """PyTorch runs a node whose outputs got no gradient too, and its saved tensors are
    unpacked first: exp's result written in place raises the modified-variable error."""

    def prog(T, x):
        x.requires_grad_()
        a = x.exp()
        a.add_(1)
        then(T, a).backward()
        return x.grad

    assert_same_outcome(prog, arr(3))


# A multi-output op, the output written in place, the output followed to a loss that sends
# it no gradient: PyTorch's node saves the outputs its derivatives.yaml formulas read
# (std_mean's result0, max(dim)'s indices, eigh's both) and unpacks them though it computes
# nothing, so a written saved output raises and a written unsaved one does not.
_SQUARE = lambda T, x: x @ x.mT + T.eye(3, dtype=x.dtype)  # noqa: E731
_MULTI_OUTPUT = {
    "std_mean": (lambda T, x: T.std_mean(x, 0), 0, 0),
    "std_mean mean": (lambda T, x: T.std_mean(x, 0), 1, 1),
    "var_mean": (lambda T, x: T.var_mean(x, 0), 0, 0),
    "max values": (lambda T, x: T.max(x, 0), 0, 0),
    "max indices": (lambda T, x: T.max(x, 0), 1, 0),
    "min indices": (lambda T, x: T.min(x, 1), 1, 0),
    "sort indices": (lambda T, x: T.sort(x, 0), 1, 0),
    "topk indices": (lambda T, x: T.topk(x, 2), 1, 0),
    "kthvalue indices": (lambda T, x: T.kthvalue(x, 2), 1, 0),
    "mode indices": (lambda T, x: T.mode(x, 0), 1, 0),
    "cummax indices": (lambda T, x: T.cummax(x, 0), 1, 0),
    "cummin values": (lambda T, x: T.cummin(x, 0), 0, 0),
    "frexp exponent": (lambda T, x: T.frexp(x), 1, 0),
    "frexp mantissa": (lambda T, x: T.frexp(x), 0, 0),
    "eigh eigenvalues": (lambda T, x: T.linalg.eigh(_SQUARE(T, x)), 0, 0),
    "eigh eigenvectors": (lambda T, x: T.linalg.eigh(_SQUARE(T, x)), 1, 0),
    "qr R": (lambda T, x: T.linalg.qr(x), 1, 0),
    "svd S": (lambda T, x: T.linalg.svd(x), 1, 0),
    "slogdet sign": (lambda T, x: T.linalg.slogdet(x), 0, 1),
    "slogdet logabsdet": (lambda T, x: T.linalg.slogdet(x), 1, 1),
    "cholesky_ex L": (lambda T, x: T.linalg.cholesky_ex(_SQUARE(T, x)), 0, 0),
    "cholesky_ex info": (lambda T, x: T.linalg.cholesky_ex(_SQUARE(T, x)), 1, 0),
    "inv_ex inverse": (lambda T, x: T.linalg.inv_ex(x), 0, 0),
    "lu_factor pivots": (lambda T, x: T.linalg.lu_factor(x), 1, 0),
    "lu_factor_ex info": (lambda T, x: T.linalg.lu_factor_ex(x), 2, 0),
    "lu P": (lambda T, x: T.linalg.lu(x), 0, 2),  # (P is no output of the node's)
    "lu L": (lambda T, x: T.linalg.lu(x), 1, 2),
    "lstsq solution": (lambda T, x: T.linalg.lstsq(x, x[:, :2]), 0, 0),
    "max_pool2d indices": (
        lambda T, x: T.nn.functional.max_pool2d(x[None], 2, 1, return_indices=True),
        1,
        0,
    ),
    "adaptive_max_pool2d indices": (
        lambda T, x: T.nn.functional.adaptive_max_pool2d(x[None], 2, return_indices=True),
        1,
        0,
    ),
}


@pytest.mark.parametrize("how", ["eager", "grad"])
@pytest.mark.parametrize("name", _MULTI_OUTPUT)
def test_a_node_reached_by_no_gradient_checks_the_outputs_it_saved(name, how):
    make, written, followed = _MULTI_OUTPUT[name]

    def prog(T, x):
        def loss(x):
            outs = make(T, x)
            o = outs[written]
            o.mul_(2) if o.dtype.is_floating_point else o.add_(0)
            return T.linalg.vector_norm(outs[followed], ord=0)

        if how == "grad":
            return T.func.grad(loss)(x)
        x.requires_grad_()
        loss(x).backward()
        return x.grad is None

    assert_same_outcome(prog, np.array([[0.3, -1.2, 2.0], [1.5, 0.7, -0.4], [0.9, 2.2, -1.1]]))


@pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")
def test_backward_through_a_write_into_an_expanded_view_raises_pytorchs_overlap_error():
    """PyTorch copies the gradient into the written view's region (CopySlices): overlap."""

    def prog(T, x):
        x.requires_grad_()
        y = (x * 1).sigmoid()
        y.expand(2, 2).masked_fill_(y.expand(2, 2) > 0.6, 0.0)
        y.sum().backward()
        return x.grad

    assert_same_error(prog, np.array([0.3, 0.7]))


@pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")
def test_version_error_under_grad_names_the_latest_writer():
    def prog(T, x):
        def f(x):
            y = x * 1
            z = y**2
            y.mul_(2)
            return z.sum()

        return T.func.grad(f)(x)

    assert_same_error(prog, np.array([0.3, 0.7]))


def _save_a_view_then_write_its_base(T, x):
    y = x * 1
    v = y[0]
    z = v * v  # saves the view
    y.mul_(2)  # the view is stale: its grad_fn regenerates (AsStrided)
    return z.sum()


def _save_a_transpose_then_write_another_view(T, x):
    y = x * 1
    z = y.t().sin()
    y.view(-1).add_(1)
    return z.sum()


# the vjp_fn runs after vjp returned: the stale view's node is named, not regenerated
@pytest.mark.parametrize(
    "f", [_save_a_view_then_write_its_base, _save_a_transpose_then_write_another_view]
)
@pytest.mark.parametrize("how", ["vjp", "grad", "jacrev", "vmap vjp", "eager"])
def test_version_error_of_a_stale_saved_view_under_transforms(f, how):
    def prog(T, x):
        g = lambda a: f(T, a)  # noqa: E731
        if how == "vjp":
            return T.func.vjp(g, x)[1](T.tensor(1.0))
        if how == "grad":
            return T.func.grad(g)(x)
        if how == "jacrev":
            return T.func.jacrev(g)(x)
        if how == "vmap vjp":
            return T.func.vmap(lambda a: T.func.vjp(g, a)[1](T.tensor(1.0)))(x.expand(2, 2, 2))
        return g(x.requires_grad_()).backward()

    assert_same_error(prog, arr(2, 2))


# ==================================================================
# Issue 14's sweep of aliasing and saved values.


# ------------------------------------------------------------------ what an op saves
def _write_output_then_backward(op):
    """An in-place write into the op's output, then backward: PyTorch succeeds where the
    formulas do not read the output."""

    def prog(lib, x):
        x = x.clone().requires_grad_()
        y = op(lib, x * 1)
        y.mul_(2)
        y.sum().backward()
        return x.grad

    return prog


@pytest.mark.parametrize(
    "op",
    [
        pytest.param(lambda L, x: x.min(1)[0], id="min-dim"),
        pytest.param(lambda L, x: x.max(1, keepdim=True)[0], id="max-dim"),
        pytest.param(lambda L, x: x.cummin(1)[0], id="cummin"),
        pytest.param(lambda L, x: x.cummax(0)[0], id="cummax"),
        pytest.param(lambda L, x: x.topk(2)[0], id="topk"),
        pytest.param(lambda L, x: x.sort(1)[0], id="sort"),
        pytest.param(lambda L, x: x.var(1), id="var"),
        pytest.param(lambda L, x: x.nansum(1), id="nansum"),
        pytest.param(lambda L, x: x.nanmean(1), id="nanmean"),
        pytest.param(lambda L, x: x / (x.detach() + 5), id="div"),
        pytest.param(lambda L, x: (x + 5) / x, id="div-other"),
    ],
)
def test_writing_an_unsaved_output_is_no_error(op):
    assert_same(_write_output_then_backward(op), arr(2, 3))


def test_writing_the_saved_output_still_raises():
    from twolibs import assert_same_error

    def prog(lib, x):
        x = x.clone().requires_grad_()
        v, i = (x * 1).max(1)
        i.add_(0)
        v.sum().backward()

    assert_same_error(prog, arr(2, 3))
    assert_same_error(_write_output_then_backward(lambda L, x: x.std(1)), arr(2, 3))


# ------------------------------------------------------------------ in-place predicates
def _predicate_prog(name, arg):
    def prog(lib, x, y):
        x = x.clone().requires_grad_()
        z = x * 1
        args = () if arg is None else (y if arg == "t" else arg,)
        getattr(z, name)(*args)
        (z * x).sum().backward()
        return z, z.requires_grad, x.grad

    return prog


@pytest.mark.parametrize("name,arg", [("lt_", 0.0), ("eq_", 0.5), ("ge_", "t")])
def test_inplace_predicate_has_no_gradient(name, arg):
    assert_same(_predicate_prog(name, arg), arr(2, 3), arr(2, 3, seed=1))


@pytest.mark.parametrize("name,arg", [("logical_or_", "t"), ("logical_not_", None)])
def test_inplace_logical_op_gradient_by_finite_differences(name, arg):
    """PyTorch divergence: its logical_*_ keep self's old history, so the gradient flows
    through values that no longer depend on x. (z * x).sum() with z piecewise constant in x
    has the gradient z, as finite differences show."""
    x, y = arr(2, 3), arr(2, 3, seed=1)
    z, _, grad = run(_predicate_prog(name, arg), nt, x, y)

    def f(v):
        return float(
            run(lambda L, a, b: (getattr(a * 1, name)(*((b,) if arg else ())) * a).sum(), nt, v, y)
        )

    np.testing.assert_allclose(grad.numpy(), fd_grad(f, x), atol=1e-6)
    np.testing.assert_allclose(grad.numpy(), z.detach().numpy())


def test_inplace_predicate_tangent_is_zero_in_self_dtype():
    def prog(lib, x):
        return lib.func.jvp(lambda a: (a * 1).lt_(0), (x,), (lib.ones_like(x),))

    assert_same(prog, arr(2, 3))


# ------------------------------------------------------------------ names of in-place nodes
# Each write of a clone of x, by its own node: ZeroBackward0, FillBackward2 (a number) and
# FillBackward3 (a tensor) for fill_, FillBackward0/1 for the functional fill, LtBackward0 (a
# number) and LtBackward1 (a tensor, which gets an edge and a zero gradient) for lt_ and the
# other comparisons.
INPLACE_NODES = {
    "zero_": lambda L, y, b: y.zero_(),
    "torch.zero_": lambda L, y, b: L.zero_(y),
    "fill_ number": lambda L, y, b: y.fill_(2),
    "torch.fill_": lambda L, y, b: L.fill_(y, 2.5),
    "fill_ tensor": lambda L, y, b: y.fill_(b.sum()),
    "fill": lambda L, y, b: L.fill(y, 2.5),
    "fill by a tensor": lambda L, y, b: L.fill(y, b.mean()),
    **{
        f"{n}_ number": lambda L, y, b, n=n: getattr(y, n + "_")(0.5) for n in "lt le gt ge".split()
    },
    **{f"{n}_ tensor": lambda L, y, b, n=n: getattr(y, n + "_")(b) for n in "eq ne gt ge".split()},
    "lt_ broadcast tensor": lambda L, y, b: y.lt_(b.sum(0, keepdim=True)),
    # (a subscript write of a 0-d tensor of another shape is fill_ in PyTorch)
    "setitem of a 0-d tensor": lambda L, y, b: (y.__setitem__(..., b.sum()), y)[1],
}


@pytest.mark.parametrize("write", list(INPLACE_NODES))
def test_inplace_node_names_edges_and_gradients(write):
    def prog(L, x, b):
        x.requires_grad_()
        b.requires_grad_()
        y = INPLACE_NODES[write](L, x * 1, b)
        fn = y.grad_fn
        kind = type(fn).__name__  # (before name(): the class is the name's from the start)
        edges = [f and f.name() for f, _ in fn.next_functions]
        (y * L.tensor([1.0, -2.0, 3.0], dtype=L.float64)).sum().backward()
        return kind, fn.name(), edges, x.grad, b.grad

    assert_same(prog, arr(3), np.array([0.5, 2.0, -1.0]))


@pytest.mark.parametrize("write", list(INPLACE_NODES))
def test_modified_variable_error_names_the_inplace_node(write):
    def prog(L, x, b):
        x.requires_grad_()
        y = INPLACE_NODES[write](L, x * 1, b)
        z = y * y  # (saves y at its version now)
        y.add_(1)
        z.sum().backward()

    assert_same_error(prog, arr(3), np.array([0.5, 2.0, -1.0]))


@pytest.mark.parametrize("mode", ["vmap", "vmap_grad", "grad_vmap", "jvp_vmap"])
def test_inplace_comparison_under_transforms(mode):
    """A comparison written into a batched self: in self's dtype (float32 self, float64
    other; an integer self), with a zero gradient and tangent, at every nesting."""
    f32, f64 = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]], np.float32), arr(2, 3)

    def prog(L, a, b, c):
        F = L.func
        w = lambda r, s: (r * 1).lt_(s) * r  # noqa: E731
        if mode == "vmap":
            return F.vmap(lambda r, s, k: (r.clone().ge_(s), k.clone().lt_(s)))(a, b, c)
        if mode == "vmap_grad":
            return F.vmap(F.grad(lambda r, s: w(r, s).sum(), argnums=(0, 1)))(a.double(), b)
        if mode == "grad_vmap":
            return F.grad(lambda r: F.vmap(w)(r, b).sum())(a)
        return F.jvp(lambda r: F.vmap(w)(r, b), (a,), (L.ones_like(a),))

    assert_same(prog, f32, f64, np.array([[1, 2, 3], [3, 2, 1]]))


# ------------------------------------------------------------------ writes into a median
MEDIANS = {
    "median(-2)": lambda x: x.median(-2),
    "median(0, keepdim)": lambda x: x.median(0, keepdim=True),
    "nanmedian(1)": lambda x: x.nanmedian(1),
    "median of a NaN row": lambda x: (x / (x != 0)).median(1),  # (0 / 0 in the last)
}


@pytest.mark.parametrize("call", list(MEDIANS))
def test_a_median_along_a_dim_is_written_as_its_own_tensor(call):
    # its values are no view: a write rebases their own history (the modified-variable
    # error names the write's node, output 0 of Mul, as PyTorch's)
    x = np.array([[1.08, 2.0, 0.3], [0.5, 3.0, -1.0], [0.1, 0.2, 0.0]])

    def written(L, x):
        x.requires_grad_()
        y = MEDIANS[call](x).values
        y.mul_(y)
        y.sum().backward()

    def grad(L, x):
        x.requires_grad_()
        y = MEDIANS[call](x).values
        y.add_(1)
        (y * y).sum().backward()
        return y, y._base is None, x.grad

    assert_same_error(written, x)
    assert_same(grad, x)


# Size-1 dims never make two layouts of the same element differ (PyTorch's overlap checks).


# A slice of size 1 written with a value of its own shape and strides is no overlap (PyTorch's
# setitem copies a value of the target's shape as it is).
@pytest.mark.parametrize(
    "write",
    [
        lambda x: x[:1].__iadd__(1),
        lambda x: x.__setitem__(slice(0, 1), x[:1] + 1),
        lambda x: x.view(3, 1)[1:2, :1].mul_(3),
        lambda x: x.__setitem__((slice(1, 2),), x[1:2] * 2),
    ],
)
def test_size_one_slices_are_no_overlap(write):
    def prog(T, x):
        write(x)
        x[:1] += 1
        return x

    assert_same(prog, arr(3))


def test_partial_overlap_still_refused():
    assert_same_error(lambda T, x: x[:2].add_(x[1:]), arr(3))


# The same memory seen with other strides (an unsqueezed or transposed self, a 0-d element
# against a (1,) slice) partly overlaps: PyTorch compares strides, size-1 dims included, and
# refuses before it broadcasts the operands, for in-place ops and out= alike.
@pytest.mark.parametrize(
    "write, shape",
    [
        (lambda T, y: y.unsqueeze(0).mul_(y), (1, 1)),
        (lambda T, y: y.unsqueeze(0).mul_(y), (3,)),
        (lambda T, y: y.add_(y.unsqueeze(0)), (3,)),  # not the broadcast-shape error
        (lambda T, y: y.add_(y.unsqueeze(0)), (1, 1)),
        (lambda T, y: y.t().mul_(y), (1, 2)),  # not the broadcast-shape error
        (lambda T, y: y.t().mul_(y), (2, 2)),
        (lambda T, y: y[0].add_(y[:1]), (3,)),
        (lambda T, y: y[:1].add_(y[0]), (3,)),
        (lambda T, y: y.view(3, 1)[:1].mul_(y[:1]), (3,)),
        (lambda T, y: y.unsqueeze(0).clamp_(min=y), (3,)),
        (lambda T, y: y.unsqueeze(0).copy_(y), (3,)),
        (lambda T, y: y.unsqueeze(0).addcmul_(y, y), (3,)),
        (lambda T, y: y.unsqueeze(0).lerp_(y, 0.5), (3,)),
        (lambda T, y: y.unsqueeze(0).eq_(y), (3,)),
        (lambda T, y: T.mul(y, y, out=y.unsqueeze(0)), (1, 1)),
    ],
)
def test_same_memory_other_strides_is_partial_overlap(write, shape):
    def prog(T, x):
        y = x.clone()
        try:
            write(T, y)
        finally:
            assert y.tolist() == x.tolist()  # refused before writing

    assert_same_error(prog, arr(*shape))


# Under vmap PyTorch checks the physical values: its in-place batch rules line them up (batch
# dims first, padded to one rank), its fallback checks each sample; clone keeps the layout.
@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(
    "shape, dim",
    [((2, 1, 1), 0), ((1, 1, 2), -1), ((2, 3), 0), ((3, 2), 1), ((2, 1, 2), 0), ((2, 1, 2), -1)],
)
@pytest.mark.parametrize(
    "write",
    [
        lambda y: y.unsqueeze(0).mul_(y),
        lambda y: y.t().mul_(y) if y.dim() == 2 else y.mul_(y[1:]),
        lambda y: y.unsqueeze(0).clamp_(min=y),
        lambda y: y.unsqueeze(0).copy_(y),
    ],
)
def test_partial_overlap_under_vmap(write, shape, dim):
    def prog(T, x):
        def f(x):
            y = x.clone()
            write(y)
            return y

        return T.func.vmap(f, in_dims=dim)(x)

    assert_same_outcome(prog, arr(*shape))


@pytest.mark.parametrize(
    "write, shape",
    [
        (lambda T, y: y.t().mul_(y), (2, 1)),  # the same strides (1, 1): the broadcast error
        (lambda T, y: y.view(3, 1)[:1, 0].mul_(y[:1]), (3,)),  # the same layout: no overlap
        (lambda T, y: y.squeeze(1).mul_(y[:, 0]), (3, 1)),
        (lambda T, y: y.view(3).mul_(y.view(3)), (3, 1)),
    ],
)
def test_same_memory_same_strides_is_full_overlap(write, shape):
    def prog(T, x):
        y = x.clone()
        write(T, y)
        return y

    assert_same_outcome(prog, arr(*shape))


# ------------------------------------------------------------------ copy_ of self into itself
# PyTorch's copy_ returns at once when src is self: no overlap check (an expanded self is
# fine) and nothing written, while autograd sees a write (version, CopyBackwards).
def test_copy_of_self_is_a_write_autograd_sees():
    def prog(T, x):
        a = x.clone().requires_grad_()
        y = a * 2
        v = y._version
        r = y.copy_(y)
        (y * y).sum().backward()
        return r is y, y._version - v, y.grad_fn.name(), a.grad

    assert_same(prog, arr(2, 1))

    def saved(T, x):
        y = x.clone().requires_grad_() * 2
        z = y * y
        y.copy_(y)
        z.sum().backward()

    assert_same_error(saved, arr(2, 1))


@pytest.mark.parametrize(
    "mode",
    ["eager", "int", "jvp", "vmap", "grad", "vmap_grad", "requires_grad"],
)
def test_copy_of_an_expanded_self_into_itself(mode):
    def f(y):
        y.copy_(y)
        return y

    def prog(T, x):
        F = T.func
        if mode == "eager":
            y = x.expand(2, 3)
            return f(y), x._version
        if mode == "int":
            return f(x.long().expand(2, 3))
        if mode == "jvp":
            return F.jvp(lambda a: f(a.expand(2, 3)), (x,), (x * 2,))
        if mode == "vmap":
            return F.vmap(lambda a: f(a.expand(2, 3)))(x)
        if mode == "grad":
            return F.grad(lambda a: f((a * 1).expand(2, 3)).sum())(x)
        if mode == "vmap_grad":
            return F.vmap(F.grad(lambda a: f((a * 1).expand(2, 3)).sum()))(x)
        return f((x.clone().requires_grad_() * 1).expand(2, 3))  # CopySlices' own copy refuses

    assert_same_outcome(prog, arr(2, 1))


# ------------------------------------------------------------------ the node the error names
# A write through a view saves its output with a weak reference to the view's node after the
# write (PyTorch's weak_grad_fn); the modified-variable error names that node while it lives,
# else the node unpacking. The next write through the view keeps it alive (its wrapped node's
# edge 0) until a backward pass that does not retain the graph runs that write's CopySlices;
# so does a saved tensor whose history holds it, until freed (under create_graph, never while
# the backward pass runs: the graph its formulas record holds it).
WRITES = {
    "two writes through an expanded view": lambda T, x: (
        T.broadcast_to(x**0.5, (1, 2, 3)).tanh_().neg_()
    ),
    "two writes through a view of a view": lambda T, x: (x * 1)[0][1:].exp_().mul_(3),
    "a write into the base after": lambda T, x: (lambda p: (p[0].tanh_(), p.mul_(2))[1])(x * 1),
    "the view used after the write": lambda T, x: (
        lambda p, y: (y.tanh_(), y * 2, y.neg_())[1] + p.sum()
    )(*(lambda p: (p, p[0]))(x * 1)),
    # (abs_ saves a copy of the view's old value, whose history holds the view's node: in
    # func.grad, whose backward records a graph (create_graph) that keeps the copy)
    "a write that saves the view's old value": lambda T, x: (x * 1)[0].sigmoid_().abs_(),
    "a write through a fresh view each time": lambda T, x: (
        lambda p: (p[:, 1].exp_(), p[:, 1].neg_(), p)[2]
    )(x * 1),
}


@pytest.mark.parametrize("mode", ["backward", "retain_graph", "grad", "vjp", "vjp_of_sum"])
@pytest.mark.parametrize("write", list(WRITES))
def test_the_modified_variable_error_names_the_views_node_while_it_lives(write, mode):
    f = WRITES[write]

    def prog(T, x):
        F = T.func
        if mode == "backward":
            return f(T, x.requires_grad_()).sum().backward()
        if mode == "retain_graph":
            return f(T, x.requires_grad_()).sum().backward(retain_graph=True)
        if mode == "grad":
            return F.grad(lambda a: f(T, a).sum())(x)
        if mode == "vjp":
            out, fn = F.vjp(lambda a: f(T, a), x)
            return fn(T.ones_like(out))
        return F.vjp(lambda a: f(T, a).sum(), x)[1](T.ones((), dtype=x.dtype))

    assert_same_error(prog, arr(2, 3) + 2.5)


def test_a_write_through_an_expanded_view_of_an_untracked_base():
    # CopySlices copies the gradient into the expanded region only where the base's is wanted
    def prog(T, x):
        x.requires_grad_()
        y = (x.detach() * 1).expand(2, 2, 3).masked_fill_(T.tensor(True), x.sum()) + x
        y.sum().backward()
        return x.grad

    assert_same(prog, arr(2, 3))
