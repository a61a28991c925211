"""Issue 14, "lenient where PyTorch refuses": programs PyTorch refuses must fail on numtorch
with the same exception type and text, before any input is modified."""

from __future__ import annotations

import pytest
import torch
from twolibs import arr, assert_same, assert_same_error, assert_same_outcome

import numtorch as nt


# ------------------------------------------------------------------ 1. views an op returned several of
def _rg(lib, shape=(4, 6, 6)):
    return lib.tensor(arr(*shape), requires_grad=True).clone()


PIECES = {
    "split": lambda x: x.split(2)[1],
    "split_fn": lambda x: nt_or_torch(x).split(x, 3)[0],
    "split_list": lambda x: x.split([1, 3])[0],
    "split_with_sizes": lambda x: x.split_with_sizes([3, 1])[1],
    "chunk": lambda x: x.chunk(3)[1],
    "unbind": lambda x: x.unbind(0)[2],
    "unbind_dim": lambda x: x.unbind(-1)[5],
    "unbind_of_unbind": lambda x: x.unbind(0)[1].unbind(0)[2],
    "select": lambda x: x.split(2)[0][0],
    "slice": lambda x: x.split(2)[0][1:],
    "narrow": lambda x: x.split(2)[1].narrow(0, 0, 1),
    "transpose": lambda x: x.unbind(1)[0].mT,
    "swapaxes": lambda x: x.split(2)[0].swapaxes(0, 1),
    "permute": lambda x: x.split(2)[0].permute(2, 1, 0),
    "movedim": lambda x: x.split(2)[0].movedim(0, 1),
    "view": lambda x: x.split(2)[0].view(2, 36),
    "flatten": lambda x: x.split(2)[0].flatten(),
    "reshape": lambda x: x.unbind(0)[1].reshape(-1),
    "unflatten": lambda x: x.split(2)[0].unflatten(0, (1, 2)),
    "squeeze": lambda x: x.split(1)[0].squeeze(),
    "diagonal": lambda x: x.unbind(0)[1].diagonal(),
    "expand": lambda x: x.unbind(0)[1].unsqueeze(0).expand(2, 6, 6),
}


def nt_or_torch(t):
    return torch if isinstance(t, torch.Tensor) else nt


WRITES = {
    "mul_": lambda p: p.mul_(2),
    "add_tensor": lambda p: p.add_(p.detach() * 0 + 1),
    "iadd": lambda p: p.__iadd__(1),
    "copy_": lambda p: p.copy_(p.detach() * 3),
    "zero_": lambda p: p.zero_(),
    "fill_": lambda p: p.fill_(2.0),
    "relu_inplace": lambda p: nt_or_torch(p).nn.functional.relu(p, inplace=True),
}


@pytest.mark.parametrize("piece", list(PIECES))
def test_write_into_a_piece_is_refused(piece):
    def prog(lib):
        x = _rg(lib)
        before = x.detach().clone()
        try:
            PIECES[piece](x).mul_(2)
        finally:
            assert (x.detach() == before).all()  # nothing written

    assert_same_error(prog)


@pytest.mark.parametrize("write", list(WRITES))
def test_every_inplace_write_is_refused(write):
    assert_same_error(lambda lib: WRITES[write](_rg(lib).split(2)[0]))


@pytest.mark.parametrize(
    "index",
    [0, (slice(1, None),), Ellipsis, (slice(None), 1), "tensor"],
    ids=["int", "slice", "ellipsis", "column", "tensor"],
)
def test_setitem_into_a_piece_is_refused(index):
    def prog(lib):
        p = _rg(lib).unbind(0)[1]
        p[lib.tensor([0, 1]) if index == "tensor" else index] = 3.0

    assert_same_error(prog)


def test_index_fill_into_a_piece_is_refused():
    assert_same_error(lambda lib: _rg(lib).unbind(0)[1].index_fill_(0, lib.tensor([0]), 1.0))


@pytest.mark.parametrize(
    "prog",
    [
        lambda lib: lib.tensor(arr(4, 2)).unbind(0)[0].mul_(2),  # no autograd involved
        lambda lib: _rg(lib).tensor_split(2)[0].mul_(2),
        lambda lib: _rg(lib).tensor_split([1, 3])[1].mul_(2),
        lambda lib: _rg(lib).split(2)[0].detach().mul_(2),
        lambda lib: _rg(lib).split(2)[0].data.mul_(2),
    ],
    ids=["no_grad_base", "tensor_split", "tensor_split_idx", "detach", "data"],
)  # fmt: skip
def test_writes_pytorch_allows(prog):
    def full(lib):
        x = prog(lib)
        return x.detach() if x is not None else None

    assert_same(full)


def test_pieces_written_in_no_grad_mode():
    def prog(lib):
        x = _rg(lib, (4, 3))
        with lib.no_grad():
            p = x.split(2)
            p[0].mul_(2)
        q = x.unbind(0)
        with lib.no_grad():
            q[3].add_(1)
        return x.detach()

    assert_same(prog)


def _no_grad_view(lib, base, make=lambda v: v.view(-1)):
    with lib.no_grad():
        return make(base)


@pytest.mark.parametrize(
    "prog",
    [
        lambda lib: _no_grad_view(lib, _rg(lib)).mul_(2),
        lambda lib: _no_grad_view(lib, lib.tensor(arr(3), requires_grad=True)).mul_(2),
        lambda lib: _no_grad_view(lib, lib.tensor(arr(3))).mul_(lib.ones(3, requires_grad=True)),
        lambda lib: _no_grad_view(lib, _rg(lib), lambda v: v.split(2)[0]).mul_(2),
        lambda lib: _no_grad_view(lib, _rg(lib).split(2)[0], lambda v: v[1:]).mul_(2),
        lambda lib: lib.tensor(arr(4, 2)).split(2)[0].mul_(lib.ones(2, 2, requires_grad=True)),
    ],
    ids=["view", "leaf", "other_requires_grad", "split", "view_of_piece", "piece_other_rg"],
)
def test_view_made_in_no_grad_mode_is_refused(prog):
    assert_same_error(prog)


def _modify_base(lib, use, how=lambda x: x.mul_(2), no_grad=False):
    x = _rg(lib, (4, 3))
    p = x.unbind(0)
    if no_grad:
        with lib.no_grad():
            how(x)
    else:
        how(x)
    return use(p)


@pytest.mark.parametrize(
    "prog",
    [
        lambda lib: _modify_base(lib, lambda p: p[0].sum()),
        lambda lib: _modify_base(lib, lambda p: p[0].grad_fn),
        lambda lib: _modify_base(lib, lambda p: p[1].is_leaf),
        lambda lib: _modify_base(lib, lambda p: lib.stack(p)),
        lambda lib: _modify_base(lib, lambda p: p[2].view(-1)),
        lambda lib: _modify_base(lib, lambda p: p[0] * 2, how=lambda x: x[1].mul_(2)),
        lambda lib: _modify_base(lib, lambda p: p[0] * 2, no_grad=True),
        lambda lib: _modify_base(lib, lambda p: p[0] * 2, how=lambda x: x.detach().mul_(2)),
        lambda lib: _modify_base(lib, lambda p: p[0] * 2, how=lambda x: x.unbind(0)[0].detach().mul_(2)),
    ],
    ids=["sum", "grad_fn", "is_leaf", "stack", "view", "other_view", "no_grad", "detach",
         "piece_detach"],
)  # fmt: skip
def test_piece_used_after_its_base_was_written_is_refused(prog):
    assert_same_error(prog)


def test_piece_after_its_base_was_written_allowed_uses():
    def prog(lib):
        out = [_modify_base(lib, lambda p: p[0].requires_grad)]
        out.append(_modify_base(lib, lambda p: p[0].detach()))
        a = lib.tensor(arr(4, 3))
        p = a.split(2)
        a.mul_(2)
        out.append(p[0] * 2)
        return out

    assert_same(prog)


def _h(lib, piece, make=lambda v: v * 1):
    def h(v):
        y = make(v)
        piece(y).mul_(2)
        return (y * y).sum()

    return h


@pytest.mark.parametrize(
    "piece",
    [lambda y: y.split(2)[0], lambda y: y.unbind(0)[1], lambda y: y.split(2)[0][0]],
    ids=["split", "unbind", "select"],
)
@pytest.mark.parametrize("transform", ["grad", "vmap_grad", "vjp"])
def test_write_into_a_piece_under_transforms(piece, transform):
    def prog(lib):
        h = _h(lib, piece)
        x = lib.tensor(arr(4, 3))
        if transform == "grad":
            return lib.func.grad(h)(x)
        if transform == "vmap_grad":
            return lib.func.vmap(lib.func.grad(h))(lib.tensor(arr(2, 4, 3)))
        return lib.func.vjp(h, x)[0]

    assert_same_error(prog)


def test_write_into_a_piece_of_a_grad_input_and_of_a_constant():
    assert_same_error(lambda lib: lib.func.grad(_h(lib, lambda y: y.unbind(0)[1], lambda v: v))(
        lib.tensor(arr(4, 3))))  # fmt: skip

    def const(lib):
        def h(v):
            y = lib.zeros(4, 3)
            y.unbind(0)[1].mul_(v.sum())
            return y.sum()

        return lib.func.grad(h)(lib.tensor(arr(4, 3)))

    assert_same_error(const)


def test_write_into_a_piece_under_vmap_and_jvp_is_allowed():
    def prog(lib):
        h = _h(lib, lambda y: y.split(2)[0])
        x = lib.tensor(arr(4, 3))
        return lib.func.vmap(h)(lib.tensor(arr(2, 4, 3))), lib.func.jvp(h, (x,), (x,))

    assert_same(prog)


# ------------------------------------------------------------------ 2. a dim listed twice
_DUP_DIMS = [(0, 0), (0, -3), (1, 1, 2), (2, -1)]


@pytest.mark.parametrize(
    "call",
    [
        lambda x, d: x.sum(d),
        lambda x, d: x.sum(d, keepdim=True),
        lambda x, d: x.mean(list(d)),
        lambda x, d: x.mean(d, dtype=nt_or_torch(x).float64),
        lambda x, d: x.nansum(d),
        lambda x, d: x.nanmean(d),
        lambda x, d: x.amax(d),
        lambda x, d: x.amin(d),
        lambda x, d: x.std(d),
        lambda x, d: x.var(d, correction=0),
        lambda x, d: x.logsumexp(d),
        lambda x, d: nt_or_torch(x).special.logsumexp(x, d),
        lambda x, d: x.norm(dim=d[:2]),
        lambda x, d: x.norm(dim=d),
        lambda x, d: nt_or_torch(x).linalg.vector_norm(x, dim=d),
        lambda x, d: nt_or_torch(x).linalg.norm(x, dim=d[:2]),
        lambda x, d: (x > 0).any(d),
        lambda x, d: (x > 0).all(d),
        lambda x, d: x.count_nonzero(d),
        lambda x, d: x.squeeze(d),
        lambda x, d: x.flip(d),
    ],
)
@pytest.mark.parametrize("dims", _DUP_DIMS, ids=str)
def test_duplicate_dims_are_refused(call, dims):
    assert_same_error(lambda lib: call(lib.tensor(arr(2, 3, 4), requires_grad=True), dims))


@pytest.mark.parametrize(
    "prog",
    [
        lambda lib: lib.tensor(1.0).sum((0, -1)),
        lambda lib: lib.tensor(1.0).squeeze((0, 0)),
        lambda lib: lib.zeros(0, 3).sum((0, 0)),
    ],
    ids=["0d", "squeeze_0d", "empty"],
)
def test_duplicate_dims_of_odd_shapes_are_refused(prog):
    assert_same_error(prog)


def test_norm_without_order_over_two_dims_is_the_elements_2_norm():
    assert_same(lambda lib, x: (lib.linalg.norm(x, dim=(0, 2)), x.norm(dim=(1, 0))), arr(2, 3, 4))


# ------------------------------------------------------------------ 3. integer dtype= results
_INT_DTYPES = ["int64", "int32", "uint8", "bool"]


@pytest.mark.parametrize(
    "call",
    [
        lambda x, d: x.sum(dtype=d),
        lambda x, d: x.sum(0, dtype=d),
        lambda x, d: x.prod(dtype=d),
        lambda x, d: x.prod(1, dtype=d),
        lambda x, d: x.nansum(dtype=d),
        lambda x, d: x.cumsum(0, dtype=d),
        lambda x, d: x.cumprod(1, dtype=d),
        lambda x, d: x.mean(dtype=d),
        lambda x, d: x.nanmean(dtype=d),
        lambda x, d: nt_or_torch(x).linalg.vector_norm(x, dtype=d),
    ],
)
@pytest.mark.parametrize("dtype", _INT_DTYPES)
def test_integer_result_of_a_tensor_that_requires_grad_is_refused(call, dtype):
    assert_same_error(
        lambda lib: call(lib.tensor(arr(2, 3), requires_grad=True), getattr(lib, dtype))
    )


def test_integer_result_under_grad_transforms_is_refused():
    assert_same_error(lambda lib: lib.func.grad(lambda y: y.sum(dtype=lib.int64).float())(
        lib.tensor(arr(3))))  # fmt: skip
    assert_same_error(lambda lib: lib.func.vmap(lib.func.grad(
        lambda y: y.cumsum(0, dtype=lib.int32).sum().float()))(lib.tensor(arr(2, 3))))  # fmt: skip


@pytest.mark.parametrize(
    "call",
    [
        lambda x, d: x.sum(dtype=d),
        lambda x, d: x.sum(1, dtype=d),
        lambda x, d: x.prod(dtype=d),
        lambda x, d: x.prod(0, dtype=d),
        lambda x, d: x.nansum(dtype=d),
        lambda x, d: x.cumsum(0, dtype=d),
        lambda x, d: x.cumprod(1, dtype=d),
        lambda x, d: (x > 0).sum(dtype=d),
        lambda x, d: (x > 0).cumsum(1, dtype=d),
        lambda x, d: (x * 3).to(nt_or_torch(x).int32).sum(dtype=d),
        lambda x, d: x[0, 0].cumsum(0, dtype=d),
    ],
)
@pytest.mark.parametrize("dtype", _INT_DTYPES)
def test_integer_dtype_results_without_autograd(call, dtype):
    """Without autograd the result has the dtype asked for (NumPy widens small integers);
    PyTorch refuses a bool scan."""

    def prog(lib, x):
        return call(x, getattr(lib, dtype))

    assert_same_outcome(prog, arr(2, 3))


def test_conversions_leave_autograd_without_error():
    def prog(lib, x):
        x = x.requires_grad_()
        outs = (x.to(lib.int64), x.long(), x.bool(), x.type(lib.int32), (x * 2).int())
        return [(o, o.requires_grad) for o in outs]

    assert_same(prog, arr(2, 3))


# ------------------------------------------------------------------ 4. a source of another dtype
def _f32(lib):
    return lib.zeros(3, 4)


_IDX, _ROWS = [[0, 1, 2, 0]], [0, 2]


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, s: _f32(lib).scatter_(0, lib.tensor(_IDX), s((1, 4))),
        lambda lib, s: _f32(lib).scatter(0, lib.tensor(_IDX), s((1, 4))),
        lambda lib, s: lib.scatter(_f32(lib), 0, lib.tensor(_IDX), s((1, 4))),
        lambda lib, s: _f32(lib).scatter_(0, lib.tensor(_IDX), s((1, 4)), reduce="add"),
        lambda lib, s: _f32(lib).scatter_add_(0, lib.tensor(_IDX), s((1, 4))),
        lambda lib, s: lib.scatter_add(_f32(lib), 0, lib.tensor(_IDX), s((1, 4))),
        lambda lib, s: _f32(lib).scatter_reduce_(0, lib.tensor(_IDX), s((1, 4)), "sum"),
        lambda lib, s: _f32(lib).scatter_reduce(0, lib.tensor(_IDX), s((1, 4)), "amax"),
        lambda lib, s: _f32(lib).scatter_(0, lib.tensor(_IDX) + 5, s((1, 4))),  # before bounds
        lambda lib, s: _f32(lib).index_add_(0, lib.tensor(_ROWS), s((2, 4))),
        lambda lib, s: lib.index_add(_f32(lib), 0, lib.tensor(_ROWS), s((2, 4)), alpha=2),
        lambda lib, s: _f32(lib).index_add_(0, lib.tensor(_ROWS), s((2, 5))),  # before shapes
        lambda lib, s: _f32(lib).index_copy_(0, lib.tensor(_ROWS), s((2, 4))),
        lambda lib, s: _f32(lib).index_copy(0, lib.tensor(_ROWS) + 5, s((2, 4))),
        lambda lib, s: _f32(lib).masked_scatter_(_f32(lib) == 0, s((12,))),
        lambda lib, s: lib.masked_scatter(_f32(lib), _f32(lib), s((12,))),  # before the mask's
        lambda lib, s: _f32(lib).put_(lib.tensor(_ROWS), s((2,))),
        lambda lib, s: _f32(lib).put(lib.tensor(_ROWS), s((3,)), accumulate=True),
        lambda lib, s: _f32(lib).index_put_((lib.tensor(_ROWS),), s((4,))),
        lambda lib, s: _f32(lib).__setitem__(lib.tensor(_ROWS), s((4,))),
        lambda lib, s: _f32(lib).__setitem__((slice(None), lib.tensor([1])), s(())),
    ],
)
@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_source_of_another_dtype_is_refused(call, dtype):
    def prog(lib):
        x = _f32(lib)
        before = x.clone()
        try:
            return call(lib, lambda shape: lib.ones(shape, dtype=getattr(lib, dtype)))
        finally:
            assert (x == before).all()

    assert_same_error(prog)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: x.scatter_(0, lib.tensor(_IDX), 2),
        lambda lib, x: x.index_fill_(0, lib.tensor(_ROWS), lib.tensor(1.0, dtype=lib.float64)),
        lambda lib, x: x.masked_fill_(x == 0, lib.tensor(1.5, dtype=lib.float64)),
        lambda lib, x: x.__setitem__(x == 0, lib.tensor(2)) or x,
        lambda lib, x: x.__setitem__(0, lib.ones(4, dtype=lib.float64)) or x,
        lambda lib, x: x.__setitem__(lib.tensor(_ROWS), 3) or x,
        lambda lib, x: x.copy_(lib.ones(3, 4, dtype=lib.float64)),
    ],
)
def test_values_of_another_dtype_pytorch_casts(call):
    assert_same(lambda lib: call(lib, _f32(lib)))


@pytest.mark.parametrize(
    "args", [("float64", "float32", "float32"), ("float32", "float32", "float64"),
             ("float32", "float64", "float64"), ("float64", "float64", "float32")],
)  # fmt: skip
def test_addmm_names_the_mismatched_pair(args):
    def prog(lib):
        a, b, c = (getattr(lib, n) for n in args)
        return lib.zeros(3, 3, dtype=a).addmm(lib.ones(3, 4, dtype=b), lib.ones(4, 3, dtype=c))

    assert_same_error(prog)


# ------------------------------------------------------------------ 5. Python numbers where a tensor is needed
_TENSORS_ONLY = ["maximum", "minimum", "fmax", "fmin", "atan2", "hypot", "logaddexp",
                 "logaddexp2", "logical_and", "logical_or", "logical_xor", "isclose"]  # fmt: skip
_NUMBER_OTHER = ["fmod", "copysign", "clamp_min", "clamp_max", "eq", "ne", "lt", "le", "gt", "ge"]
_NUMBERS = [2.0, 3, True]


@pytest.mark.parametrize("number", _NUMBERS, ids=repr)
@pytest.mark.parametrize("name", _TENSORS_ONLY)
def test_tensors_only_ops_refuse_numbers(name, number):
    x = lambda lib: lib.tensor([1.5, -2.0])  # noqa: E731
    assert_same_error(lambda lib: getattr(lib, name)(x(lib), number))
    assert_same_error(lambda lib: getattr(lib, name)(number, x(lib)))
    assert_same_error(lambda lib: getattr(x(lib), name)(number))
    assert_same_error(lambda lib: getattr(lib.tensor([1, 2]), name)(number))


@pytest.mark.parametrize(
    "method", ["atan2_", "arctan2_", "arctan2", "hypot_", "logical_and_", "logical_or_",
               "logical_xor_"],
)  # fmt: skip
def test_tensors_only_methods_refuse_numbers(method):
    def prog(lib):
        x = lib.tensor([1.5, -2.0])
        try:
            getattr(x, method)(2.0)
        finally:
            assert x.tolist() == [1.5, -2.0]

    assert_same_error(prog)
    assert_same_error(lambda lib: getattr(lib.tensor([1.5, -2.0]), method)(other=1))


@pytest.mark.parametrize("number", _NUMBERS, ids=repr)
@pytest.mark.parametrize("name", _NUMBER_OTHER)
def test_number_input_refused_where_only_other_may_be_one(name, number):
    assert_same_error(lambda lib: getattr(lib, name)(number, lib.tensor([1.5, -2.0])))
    assert_same(lambda lib: getattr(lib, name)(lib.tensor([1.5, -2.0]), number))
    assert_same(lambda lib: getattr(lib.tensor([1.5, -2.0]), name)(number))


def test_numbers_refused_under_transforms():
    assert_same_error(lambda lib: lib.func.grad(lambda y: lib.fmin(y, 0.5).sum())(
        lib.tensor([1.0, 2.0])))  # fmt: skip
    assert_same_error(lambda lib: lib.func.vmap(lambda y: y.maximum(0.5))(lib.ones(2, 3)))


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
    assert_same_error(lambda lib: lib.func.grad(lambda y: (lambda z: z.mul_(z.mT).sum())(y * 1))(
        lib.ones(3, 3)))  # fmt: skip
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


def test_prod_over_several_dims_is_refused():
    """prod takes one dim: a tuple reduced only its first dim (a silent wrong answer)."""
    assert_same_error(lambda lib: lib.prod(lib.ones(2, 3), (0, 1)))
