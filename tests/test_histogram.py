"""searchsorted, bucketize, histogram and histogramdd against PyTorch: NaN, inf, ties and
unsorted boundaries (PyTorch's binary search decides), Python numbers, sorter, out=, the
absent derivatives and the errors."""

from __future__ import annotations

import numpy as np
import pytest
from twolibs import assert_same, assert_same_error, run

import numtorch as nt

INF, NAN = np.inf, np.nan


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_at_nan_inf_and_ties(right):
    bd = np.array([-INF, -1.0, 0.0, 0.0, 0.0, 2.0, INF, NAN])
    v = np.array([-INF, -2.0, -0.0, 0.0, 1.0, 2.0, 3.0, INF, NAN])
    assert_same(lambda L, b, v: L.searchsorted(b, v, right=right), bd, v)
    assert_same(lambda L, b, v: L.bucketize(v, b, right=right), bd, v)
    unsorted = np.array([3.0, 1.0, 2.0, NAN, 0.0])
    assert_same(lambda L, b, v: L.searchsorted(b, v, right=right), unsorted, v)
    ints = np.array([1, 3, 3, 7])
    assert_same(lambda L, b, v: L.searchsorted(b, v, right=right), ints, v)  # promoted
    assert_same(lambda L, b, v: L.searchsorted(b, v, right=right), ints, np.array([3, 0, 9]))


def test_searchsorted_numbers_rows_sorter_and_out():
    bd = np.array([1.0, 3.0, 5.0, 7.0])
    assert_same(lambda L, b: (L.searchsorted(b, 3), L.searchsorted(b, 3.5, side="right")), bd)
    assert_same(lambda L, b: L.bucketize(3, b, out_int32=True), bd)
    rows = np.array([[1.0, 3.0, 5.0], [0.0, 0.0, 4.0]])
    vals = np.array([[0.0, 3.0, 6.0, 5.0], [0.0, 1.0, 4.0, -1.0]])
    assert_same(lambda L, b, v: L.searchsorted(b, v, side="right"), rows, vals)
    unsorted = np.array([[3.0, 1.0, 2.0], [9.0, 7.0, 8.0]])
    sorter = np.argsort(unsorted, axis=-1)
    assert_same(lambda L, b, v, s: L.searchsorted(b, v, sorter=s), unsorted, vals[:, :3], sorter)

    def out(L, b, v):
        o = L.empty(0, dtype=L.int32)
        return L.searchsorted(b, v, out_int32=True, out=o) is o, o

    assert_same(out, bd, vals)
    assert_same(lambda L, b, v: L.func.vmap(L.searchsorted)(b, v), rows, vals)
    assert_same(lambda L, b, v: L.func.vmap(lambda v: L.bucketize(v, b))(v), bd, vals)


def test_searchsorted_errors():
    bd, v = np.array([1.0, 3.0, 5.0]), np.array([2.0, 4.0])
    for prog in (
        lambda L, b, v: L.searchsorted(b, v, side="foo"),
        lambda L, b, v: L.searchsorted(b, v, side="left", right=True),
        lambda L, b, v: L.searchsorted(b.reshape(3, 1), v),
        lambda L, b, v: L.searchsorted(b.reshape(3, 1), 2.0),
        lambda L, b, v: L.searchsorted(b[0], v),
        lambda L, b, v: L.searchsorted(b, v, sorter=L.tensor([0, 1])),
        lambda L, b, v: L.searchsorted(b, v, sorter=L.tensor([0.0, 1.0, 2.0])),
        lambda L, b, v: L.searchsorted(b, v, sorter=L.tensor([0, 1, 3])),
        lambda L, b, v: L.searchsorted(b, v, out_int32=True, out=L.empty(0, dtype=L.long)),
        lambda L, b, v: L.searchsorted(b.bool(), v.bool()),
        lambda L, b, v: L.searchsorted(b.to(L.complex64), v),
        lambda L, b, v: L.bucketize(v, b.reshape(1, 3)),
    ):
        assert_same_error(prog, bd, v)
    assert (
        run(lambda L, b, v: L.searchsorted(b.requires_grad_(), v).requires_grad, nt, bd, v) is False
    )


def test_histogram_values():
    x = np.array([1.0, 2.0, 1.0, 4.0, 2.5, 0.0, -1.0, 3.999999])
    for d in (np.float32, np.float64):
        xd = x.astype(d)
        assert_same(lambda L, x: L.histogram(x), xd)
        assert_same(lambda L, x: L.histogram(x, 4, range=(0.0, 4.0)), xd)
        assert_same(lambda L, x: L.histogram(x, 7, density=True), xd)
        assert_same(lambda L, x: x.histogram(3, weight=x.abs(), density=True), xd)
        assert_same(lambda L, x: L.histogram(x, L.tensor([0.0, 2.0, 1.0], dtype=x.dtype)), xd)
        assert_same(lambda L, x: L.histogram(x, 3, range=(2.0, 2.0)), xd)
    assert_same(lambda L, x: L.histogram(x[:0], 3), x)
    assert_same(lambda L, x: L.histogram(x[:2] * 0 + 1, 3), x)
    assert_same(lambda L, x: L.histogram(x.reshape(2, 4), 3), x)

    def out(L, x):
        o = (L.empty(0, dtype=x.dtype), L.empty(0, dtype=x.dtype))
        r = L.histogram(x, 2, out=o)
        return type(r).__name__, r.hist is o[0], r.bin_edges is o[1], o

    assert_same(out, x)


def test_histogram_named_tuple_and_no_derivative():
    x = np.array([1.0, 2.0, 1.0, 4.0])

    def prog(L, x):
        r = L.histogram(x.requires_grad_(), 2)
        return (
            type(r).__module__,
            type(r).__name__,
            r.hist.requires_grad,
            r.bin_edges.requires_grad,
            type(r.hist.grad_fn).__name__,
        )

    assert_same(prog, x)
    assert_same_error(lambda L, x: L.histogram(x.requires_grad_(), 2).hist.sum().backward(), x)
    assert_same_error(
        lambda L, x: L.histogramdd(x.reshape(2, 2).requires_grad_(), 2).hist.sum().backward(), x
    )


def test_histogram_errors():
    x = np.array([1.0, 2.0, 1.0, 4.0], dtype=np.float32)
    for prog in (
        lambda L, x: L.histogram(x, 0),
        lambda L, x: L.histogram(x, 3, range=(3.0, 1.0)),
        lambda L, x: L.histogram(x, 3, range=(0.0, 1.0, 2.0)),
        lambda L, x: L.histogram(x, 3, range=(0.0, INF)),
        lambda L, x: L.histogram(x * NAN, 3),
        lambda L, x: L.histogram(x, 3, weight=x[:2]),
        lambda L, x: L.histogram(x, 3, weight=x.double()),
        lambda L, x: L.histogram(x, L.tensor([0.0, 2.0, 5.0], dtype=L.float64)),
        lambda L, x: L.histogram(x, x.reshape(2, 2)),
        lambda L, x: L.histogram(x.long(), 3),
        lambda L, x: L.histogram(x.half(), 3),
        lambda L, x: L.histogramdd(x, 2),
        lambda L, x: L.histogramdd(x.reshape(2, 2), [2, 3, 4]),
        lambda L, x: L.histogramdd(x.reshape(2, 2), 2, range=[0.0, 1.0]),
        lambda L, x: L.histogramdd(x.reshape(2, 2), [2.0, 3]),
    ):
        assert_same_error(prog, x)


def test_histogramdd_values():
    pts = np.array([[1.0, 2.0], [1.0, 4.0], [2.5, 0.0], [0.5, 0.5], [2.5, 4.0]])
    assert_same(lambda L, p: L.histogramdd(p, 2), pts)
    assert_same(lambda L, p: L.histogramdd(p, [2, 3], range=[0.0, 4.0, 0.0, 4.0]), pts)
    edges = (np.array([0.0, 1.0, 3.0]), np.array([0.0, 2.0, 5.0]))
    assert_same(
        lambda L, p, a, b: L.histogramdd(p, [a, b], weight=p[:, 0], density=True), pts, *edges
    )
    assert_same(lambda L, p: L.histogramdd(p.reshape(5, 1, 2), [3, 1]), pts)
    # (PyTorch's vmap refuses histogramdd; ours batches it: each sample as alone)
    got = nt.func.vmap(lambda p: nt.histogramdd(p, [2, 2]))(nt.tensor(pts).reshape(1, 5, 2))
    want = nt.histogramdd(nt.tensor(pts), [2, 2])
    np.testing.assert_array_equal(got.hist[0].numpy(), want.hist.numpy())
