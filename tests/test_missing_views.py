"""Regression tests for the view ops and tensor functions added in issue 14 (missing2)."""

from twolibs import arr, assert_same, assert_same_error


def test_shift_errors_name_torch_kernels():
    for fn in ("bitwise_left_shift", "bitwise_right_shift"):
        assert_same_error(lambda T, fn=fn: getattr(T, fn)(T.ones(2), T.ones(2)))
        assert_same_error(lambda T, fn=fn: getattr(T, fn)(T.ones(2, dtype=T.int64), 1.5))
        assert_same_error(
            lambda T, fn=fn: getattr(T, fn)(T.ones(2, dtype=T.bool), T.ones(2, dtype=T.bool))
        )


def test_unfold_is_a_view_written_through_with_autograd():
    def prog(T, a):
        a = a.requires_grad_()
        b = a * 1
        u = b.unfold(1, 2, 2)  # non-overlapping windows: a write reaches every element once
        u.mul_(3)
        w = b.unfold(1, 3, 1)  # overlapping windows: their gradients add up
        (w * w).sum().backward()
        return b, a.grad, u._base is b, w.grad_fn.name()

    assert_same(prog, arr(2, 6))


def test_real_and_imag():
    def prog(T):
        x = T.tensor([1 + 2j, 3 - 1j])
        x.real.mul_(2)
        x.imag = T.zeros(2)
        y = T.ones(2)
        y.real = T.tensor([3.0, 4.0])
        return x, y, y.real is y, x.real._base is x, x.imag.stride()

    assert_same(prog)
    assert_same_error(lambda T: T.ones(2).imag)
    assert_same_error(lambda T: T.imag(T.ones(2)))


def test_index_reduce_forward_inplace_and_errors():
    def prog(T, x, s):
        i = T.tensor([2, 0, 2], dtype=T.int32)
        y = x.clone()
        y.index_reduce_(0, i, s, "amin", include_self=False)
        return x.index_reduce(0, i, s, "mean"), T.index_reduce(x, 0, i, s, "prod"), y

    assert_same(prog, arr(3, 2), arr(3, 2, seed=1))
    x, s, i = "T.ones(3, 4)", "T.ones(2, 4)", "T.tensor([0, 2])"
    for call in (
        f"{x}.index_reduce_(0, {i}, {s}, 'sum')",
        f"{x}.index_reduce_(0, {i}.float(), {s}, 'mean')",
        f"{x}.index_reduce_(0, {i}, {s}, 'mean', include_self=3)",
        f"T.index_reduce({x}, 0, {i}, {s}, 'mean', include_self=3)",
        f"{x}.index_reduce(0, {i}, {s}.double(), 'amax')",
        f"{x}.index_reduce(0, {i}, T.ones(2), 'amax')",
    ):
        assert_same_error(lambda T, call=call: eval(call))


def test_as_strided_views_the_storage():
    def prog(T, a):
        a = a.requires_grad_()
        b = a * 1
        v = b[1:].as_strided((2, 2), (1, 3))  # default offset: the view's own
        w = T.as_strided(b, (3, 3), (1, 1), 2)  # overlapping windows
        v.mul_(10)
        (w * w).sum().backward()
        return b, v, w, a.grad, v._base is b, w.grad_fn.name()

    assert_same(prog, arr(8))
    for call in ("(3, 3), (1, 1), 5", "(3, 3), (1, 1), -1", "(3, 3), (-1, 1)", "(3,), (1, 1)"):
        assert_same_error(lambda T, call=call: eval(f"T.ones(8).as_strided({call})"))


def test_as_strided_under_vmap_is_functorchs():
    def prog(T, x):
        f = T.func.vmap
        y = x.T.contiguous()
        return (
            f(lambda t: t.as_strided((2, 2), (1, 2)))(x),
            f(lambda t: t.as_strided((2, 2), (1, 2), 1))(x),
            f(lambda t: t.as_strided((2, 2), (1, 2)))(x[:, 3:]),
            f(lambda t: t.as_strided((2, 2), (1, 2)), in_dims=1)(y),
        )

    assert_same(prog, arr(2, 15))
