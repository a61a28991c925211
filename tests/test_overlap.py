"""The written tensor sharing memory with an operand, against PyTorch: the indexing ops
refuse any overlap (assert_no_overlap: the same elements too, self as its own source or
index), some operands only a partial one, after the op's own argument checks and before
the bounds checks, and never with a tensor half-written. (Partial overlap of the other
in-place ops is in test_inplace.py.)"""

from __future__ import annotations

import pytest
from twolibs import assert_same, assert_same_error


def _sq(lib):
    return lib.arange(9.0).reshape(3, 3)


def _perm(lib):
    return lib.tensor([2, 0, 1])


def _rows(lib):
    return lib.tensor([[1, 0, 2], [2, 1, 0], [0, 2, 1]])


def _refused(write, make=_sq):
    """``write`` raises (the same error in both libraries) and leaves x as it was."""

    def prog(lib):
        x = make(lib)
        try:
            write(lib, x)
        finally:
            assert x.tolist() == make(lib).tolist()  # nothing written

    assert_same_error(prog)


@pytest.mark.parametrize(
    "write",
    [
        lambda lib, x: x.index_add_(0, _perm(lib), x),
        lambda lib, x: x.index_add_(0, _perm(lib), x.view(3, 3)),  # another view, same layout
        lambda lib, x: x.index_add_(0, _perm(lib), x, alpha=2),
        lambda lib, x: x.index_copy_(0, _perm(lib), x),
        lambda lib, x: x.index_reduce_(0, _perm(lib), x, "prod"),
        lambda lib, x: x.index_reduce_(0, _perm(lib), x, "amax", include_self=False),
        lambda lib, x: x.scatter_(0, _rows(lib), x),
        lambda lib, x: x.scatter_(1, _rows(lib), x, reduce="add"),
        lambda lib, x: x.scatter_add_(0, _rows(lib), x),
        lambda lib, x: x.scatter_reduce_(0, _rows(lib), x, "amin"),
        lambda lib, x: x.put_(lib.arange(8, -1, -1), x),
        lambda lib, x: x.put_(lib.arange(9), x, accumulate=True),
        lambda lib, x: x.index_put_((_perm(lib),), x),
        lambda lib, x: x.index_put_((_perm(lib),), x, accumulate=True),
        lambda lib, x: x.index_put_((lib.tensor([0, 1]), _perm(lib)[:2]), x[0, :2]),
        lambda lib, x: x.__setitem__(_perm(lib), x),
        lambda lib, x: x.index_put_((x > 3,), x[1, :2].reshape(1, 2).mT, accumulate=True),
        # a 0-d tensor, an empty one, and one not dense: the same tensor refused all the same
        lambda lib, x: x[0, 0].index_add_(0, lib.tensor([0]), x[0, 0]),
        lambda lib, x: (lambda v: v.index_add_(0, lib.tensor([], dtype=lib.long), v))(x[:0]),
        lambda lib, x: (lambda v: v.index_add_(1, lib.tensor([1, 0]), v))(x[:, ::2]),
        lambda lib, x: (lambda v: v.scatter_(1, lib.tensor([[1, 0]] * 3), v))(x[:, ::2]),
    ],
)
def test_self_as_its_own_source_is_refused(write):
    _refused(write)


def _ivec(lib):
    return lib.tensor([1, 0, 2])


def _imat(lib):
    return lib.tensor([[1, 0, 1], [0, 1, 0]])


@pytest.mark.parametrize(
    "write",
    [
        lambda lib, i: i.index_add_(0, i, lib.zeros(3, dtype=lib.long)),
        lambda lib, i: i.index_copy_(0, i, lib.zeros(3, dtype=lib.long)),
        lambda lib, i: i.index_fill_(0, i, 5),
        lambda lib, i: i.index_reduce_(0, i, lib.ones(3, dtype=lib.long), "prod"),
        lambda lib, i: i.put_(i, lib.zeros(3, dtype=lib.long)),
        lambda lib, i: i.put_(lib.tensor([0, 1, 2]), i),
        lambda lib, i: i.index_put_((i,), lib.zeros(3, dtype=lib.long)),
        lambda lib, i: i.index_put_((i,), lib.zeros(3, dtype=lib.long), accumulate=True),
        lambda lib, i: i[:2].index_fill_(0, i[1:], 7),  # a partial overlap
    ],
)
def test_self_as_its_own_index_is_refused(write):
    _refused(write, _ivec)


@pytest.mark.parametrize(
    "write",
    [
        lambda lib, m: m.scatter_(0, m, m),
        lambda lib, m: m.scatter_(0, m, 3),
        lambda lib, m: m.scatter_(0, m, 3, reduce="multiply"),
        lambda lib, m: m.scatter_(0, m.view(2, 3), lib.zeros(2, 3, dtype=lib.long)),
        lambda lib, m: m.scatter_add_(0, m, lib.zeros(2, 3, dtype=lib.long)),
        lambda lib, m: m.scatter_reduce_(0, m, lib.zeros(2, 3, dtype=lib.long), "sum"),
    ],
)
def test_scatters_refuse_self_as_index(write):
    _refused(write, _imat)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: lib.gather(x, 0, _rows(lib), out=x),
        lambda lib, x: lib.take(x.view(9), lib.arange(8, -1, -1), out=x.view(9)),
        lambda lib, x: lib.index_select(x, 0, _perm(lib), out=x),
        lambda lib, x: lib.index_select(x.view(9), 0, lib.arange(9), out=x.view(9)),
        lambda lib, x: lib.index_add(lib.zeros(3, 3), 0, _perm(lib), x, out=x),
        lambda lib, x: lib.scatter(lib.zeros(3, 3), 0, _rows(lib), x, out=x),
        lambda lib, x: lib.scatter_add(lib.zeros(3, 3), 0, _rows(lib), x, out=x),
        lambda lib, x: lib.scatter_reduce(lib.zeros(3, 3), 0, _rows(lib), x, "sum", out=x),
        lambda lib, x: lib.take(x.view(9)[2:5], lib.tensor([2, 1, 0]), out=x.view(9)[:3]),
    ],
)
def test_out_sharing_an_input_is_refused(call):
    _refused(call)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, i: lib.take(lib.arange(3), i, out=i),
        lambda lib, i: lib.index_select(lib.arange(3), 0, i, out=i),
        lambda lib, i: lib.index_add(lib.zeros(3, dtype=lib.long), 0, i, i, out=i),
    ],
)
def test_out_as_the_index_is_refused(call):
    _refused(call, _ivec)


@pytest.mark.parametrize(
    "write",
    [
        # gather checks only a partial overlap of out with its index
        lambda lib, m: lib.gather(lib.ones(2, 3, dtype=lib.long), 0, m, out=m),
        # out= of the input the op writes into: its copy comes first
        lambda lib, m: lib.index_add(m, 1, lib.tensor([0]), lib.ones(2, 1, dtype=lib.long), out=m),
        lambda lib, m: lib.scatter(m, 0, lib.zeros(1, 3, dtype=lib.long), 7, out=m),
        lambda lib, m: lib.scatter_add(m, 0, lib.zeros(1, 3, dtype=lib.long), m[:1] * 2, out=m),
        # index_put_ with a lone mask and one value fills (masked_fill_: no overlap check)
        lambda lib, m: (lambda b: b.index_put_((b,), lib.tensor(False)))(m > 0),
        lambda lib, m: (lambda b: b.index_put_((b,), lib.tensor([False])))(m > 0),
        lambda lib, m: (lambda b: b.__setitem__(b, False) or b)(m > 0),
        lambda lib, m: (lambda b: b.masked_fill_(b, False))(m > 0),
        lambda lib, m: (lambda b: b.masked_scatter_(b, lib.tensor([False] * 3)))(m > 0),
        # distinct empty views, and the value of index_fill_
        lambda lib, m: m[:0].put_(m[:0].view(-1), m[:0]),
        lambda lib, m: m.index_fill_(1, lib.tensor([2]), m[0, 1]),
    ],
)
def test_overlaps_pytorch_allows(write):
    assert_same(lambda lib: write(lib, _imat(lib)))


_BIG = [[5, 0, 1], [2, 1, 0], [0, 2, 1]]


# the op's argument checks first, then the overlap, then the bounds and the reduce
@pytest.mark.parametrize(
    "write",
    [
        lambda lib, x: x.index_add_(0, lib.tensor([2.0, 0, 1]), x),
        lambda lib, x: x.index_add_(0, _perm(lib), x.double()),
        lambda lib, x: x.index_add_(0, _perm(lib)[:2], x),
        lambda lib, x: x.index_add_(2, _perm(lib), x),
        lambda lib, x: x.index_add_(0, lib.tensor([5, 0, 1]), x),
        lambda lib, x: x.index_copy_(0, lib.tensor([2.0, 0, 1]), x),  # (overlap first)
        lambda lib, x: x.index_copy_(0, _perm(lib)[:2], x),
        lambda lib, x: x.index_reduce_(0, _perm(lib), x, "sum"),
        lambda lib, x: x.index_reduce_(0, lib.tensor([2.0, 0, 1]), x, "prod"),
        lambda lib, x: x.index_reduce_(0, lib.tensor([5, 0, 1]), x, "prod"),
        lambda lib, x: x.scatter_(0, _rows(lib).double(), x),
        lambda lib, x: x.scatter_(0, _rows(lib), x.double()),
        lambda lib, x: x.scatter_(0, lib.zeros(4, 3, dtype=lib.long), x),
        lambda lib, x: x.scatter_(0, lib.tensor(_BIG), x),
        lambda lib, x: x.scatter_add_(0, lib.tensor(_BIG), x),
        lambda lib, x: x.scatter_reduce_(0, _rows(lib), x, "foo"),
        lambda lib, x: x.scatter_reduce_(0, _rows(lib).float(), x, "sum"),
        lambda lib, x: x.put_(lib.arange(9.0), x),
        lambda lib, x: x.put_(lib.arange(9), x.double()),
        lambda lib, x: x.put_(lib.arange(3), x),
        lambda lib, x: x.put_(lib.arange(9) + 5, x),
        lambda lib, x: x.index_put_((_perm(lib).float(),), x),
        lambda lib, x: x.index_put_((_perm(lib),), x.double()),
        lambda lib, x: x.index_put_((_perm(lib)[:2],), x),
        lambda lib, x: x.index_put_((lib.tensor([5, 0, 1]),), x),
        lambda lib, x: x.index_put_((_perm(lib), _perm(lib), _perm(lib)), x[0]),
        lambda lib, x: lib.gather(x, 0, _rows(lib).float(), out=x),
        lambda lib, x: lib.gather(x, 2, _rows(lib), out=x),
        lambda lib, x: lib.gather(x, 0, lib.tensor(_BIG), out=x),
        lambda lib, x: lib.take(x, lib.arange(9.0).view(3, 3), out=x),
        lambda lib, x: lib.take(x, lib.arange(9).view(3, 3) + 5, out=x),
        lambda lib, x: lib.index_select(x, 0, _perm(lib).float(), out=x),
        lambda lib, x: lib.index_select(x, 2, _perm(lib), out=x),
        lambda lib, x: lib.index_select(x, 0, _rows(lib), out=x),
        lambda lib, x: lib.index_select(x, 0, lib.tensor([5, 0, 1]), out=x),
        lambda lib, x: x.index_fill_(0, _perm(lib), lib.ones(1)),
    ],
)
def test_checks_before_and_after_the_overlap(write):
    _refused(write)


@pytest.mark.parametrize(
    "write",
    [
        lambda lib, i: i.index_fill_(0, i.view(3, 1), 5),
        lambda lib, i: i.index_fill_(3, i, 5),
        lambda lib, i: i.index_fill_(0, i, lib.tensor([5])),
        lambda lib, i: i.index_fill_(0, i * 3, 5),
        lambda lib, i: i.index_fill_(0, i, 1.5),
    ],
)
def test_index_fill_checks_its_value_first(write):
    _refused(write, _ivec)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(
    "write",
    [
        lambda lib, x: x.index_add_(0, lib.tensor([1, 0]), x),
        lambda lib, x: x.index_copy_(0, lib.tensor([1, 0]), x),
        lambda lib, x: x.index_reduce_(0, lib.tensor([1, 0]), x, "prod"),
        lambda lib, x: x.scatter_(0, lib.tensor([[1, 0, 1], [0, 1, 0]]), x),
        lambda lib, x: x.scatter_add_(0, lib.tensor([[1, 0, 1], [0, 1, 0]]), x),
        lambda lib, x: x.put_(lib.arange(6), x),
        lambda lib, x: x.index_put_((lib.tensor([1, 0]),), x),
    ],
)
@pytest.mark.parametrize("transform", ["vmap", "grad", "jvp", "eager"])
def test_refused_under_transforms(write, transform):
    def prog(lib):
        x = lib.arange(12.0).reshape(2, 2, 3)

        def f(y):
            y = y.clone()
            return write(lib, y)

        if transform == "vmap":
            return lib.func.vmap(f)(x)
        if transform == "grad":
            return lib.func.grad(lambda y: f(y).sum())(x[0])
        if transform == "jvp":
            return lib.func.jvp(f, (x[0],), (x[0],))
        return f(x[0].requires_grad_())

    assert_same_error(prog)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: lib.gather(x, 0, lib.tensor([[1, 0, 1]]), out=x[:1]),
        lambda lib, x: lib.index_select(x, 0, lib.tensor([1]), out=x[:1]),
    ],
)
def test_out_under_jvp_is_refused(call):
    assert_same_error(
        lambda lib: lib.func.jvp(lambda y: call(lib, y.clone()), (_sq(lib),), (_sq(lib),))
    )
