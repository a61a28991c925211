"""func.functionalize and func.debug_unwrap against torch.func's."""

from twolibs import arr, assert_close, assert_same, assert_same_error, assert_same_outcome


def _fresh_write(L, x):
    y = L.zeros(3, dtype=L.float64)
    y.copy_(x)
    return y * 2


def _intermediate(L, x):
    y = x.clone()
    y.mul_(2)
    y[0].add_(1)
    return y.sin()


def _input_through_view(L, x):
    x.add_(1)
    x[1:].mul_(3)
    return x.sum()


def test_vmap_over_a_write_into_a_fresh_tensor():
    assert_same(
        lambda L, x: L.func.vmap(L.func.functionalize(lambda t: _fresh_write(L, t)))(x), arr(4, 3)
    )


def test_without_functionalize_vmap_refuses_it():
    assert_same_error(lambda L, x: L.func.vmap(lambda t: _fresh_write(L, t))(x), arr(4, 3))


def test_jacrev_of_a_function_mutating_an_intermediate():
    assert_same(
        lambda L, x: L.func.jacrev(L.func.functionalize(lambda t: _intermediate(L, t)))(x), arr(3)
    )


def test_input_mutations_are_written_back():
    def prog(L, x):
        out = L.func.functionalize(lambda t: _input_through_view(L, t))(x)
        return out, x

    assert_same(prog, arr(3))


def test_grad_of_an_input_mutation_is_refused():
    assert_same_outcome(
        lambda L, x: L.func.grad(L.func.functionalize(lambda t: _input_through_view(L, t)))(x),
        arr(3),
    )


def test_vmap_write_into_an_unbatched_input_is_refused_at_write_back():
    def prog(L, x, y):
        def k(a, b):
            b.add_(a)
            return b

        return L.func.vmap(L.func.functionalize(k), in_dims=(0, None))(x, y)

    assert_same_outcome(prog, arr(2, 3), arr(3))


def test_vmap_of_grad_of_functionalize():
    """(torch lacks copy_'s derivative here: the gradient of sum(t * t) is 2t)"""
    import numtorch as nt

    def f(t):
        y = nt.zeros(3, dtype=nt.float64)
        y.copy_(t)
        y.mul_(t)
        return y.sum()

    x = arr(4, 3)
    got = nt.func.vmap(nt.func.grad(nt.func.functionalize(f)))(nt.tensor(x))
    assert_close(got.numpy(), 2 * x)


def test_bad_remove():
    assert_same_error(lambda L, x: L.func.functionalize(lambda t: t, remove="x"), arr(2))


def test_debug_unwrap():
    def prog(L, x):
        seen = {}

        def f(t):
            seen["all"] = L.func.debug_unwrap(t)
            seen["one"] = L.func.debug_unwrap(t, recurse=False)
            return t

        L.func.vmap(L.func.vmap(f))(x)
        return seen["all"], seen["one"].shape, L.func.debug_unwrap(x)

    assert_same(prog, arr(2, 3, 4))


def test_plain_functionalize_matches_the_function():
    assert_same(lambda L, t: L.func.functionalize(lambda u: _intermediate(L, u))(t), arr(3))
