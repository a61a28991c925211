"""Engine edge cases against PyTorch: materialized gradients under create_graph, backward
with ``inputs=`` on a tensor that retains its gradient, how ``.grad`` accumulates after a
create_graph backward, the ``.grad`` setter's checks and the argument errors of
backward() and grad()."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from twolibs import arr, assert_same, assert_same_error, run_both


def _x(T, n=3):
    return T.tensor(arr(n), requires_grad=True)


# ------------------------------------------------------------------ materialize_grads
@pytest.mark.parametrize("create_graph", [False, True])
def test_materialized_zeros_require_grad_under_create_graph(create_graph):
    def prog(T):
        x, y = _x(T), _x(T)
        gx, gy = T.autograd.grad(
            (x**2).sum(),
            [x, y],
            materialize_grads=True,
            create_graph=create_graph,
        )
        return gx.detach(), gy.detach(), gx.requires_grad, gy.requires_grad, gy.grad_fn is None

    assert_same(prog)


def test_materialized_zeros_take_part_in_double_backward():
    def prog(T):
        x, y = _x(T), _x(T)
        gx, gy = T.autograd.grad((x**3).sum(), [x, y], materialize_grads=True, create_graph=True)
        (gx.sum() + (gy * y).sum()).backward()
        return x.grad, y.grad

    assert_same(prog)


# ------------------------------------------------------------------ backward(inputs=)
def test_backward_inputs_non_leaf_that_retains_grad_counts_once():
    def prog(T):
        x = _x(T)
        h = x * 2
        h.retain_grad()
        (h * h).sum().backward(inputs=[h])
        return h.grad, x.grad, h.retains_grad

    assert_same(prog)


def test_retained_grad_under_create_graph_is_a_copy():
    def prog(T):
        x = _x(T)
        h = x * 2
        h.retain_grad()
        (h * h).sum().backward(create_graph=True)
        g = h.grad
        (g * g).sum().backward()  # differentiable, through the copy into x
        return g, g.grad_fn.name(), g.requires_grad, x.grad

    assert_same(prog)


def test_backward_inputs_non_leaf_retains_grad_afterwards():
    def prog(T):
        x = _x(T)
        h = x * 2
        (h * h).sum().backward(inputs=[h], retain_graph=True)
        first = h.grad.clone()
        (h * h).sum().backward(inputs=[h])
        return first, h.grad, h.retains_grad, x.grad

    assert_same(prog)


def test_backward_inputs_dict_and_leaf():
    def prog(T):
        x, y = _x(T), _x(T)
        (x * y).sum().backward(inputs={"x": x})
        return x.grad, y.grad

    assert_same(prog)


def test_grad_with_dict_inputs_returns_a_dict():
    def prog(T):
        x, y = _x(T), _x(T)
        return T.autograd.grad((x * y.exp()).sum(), {"a": x, "b": y})

    assert_same(prog)


# ------------------------------------------------------------------ accumulation into .grad
def test_accumulate_after_create_graph():
    """First create_graph backward: a copy in the graph; then out of place under
    create_graph, in place (same object, graph kept) without it."""

    def prog(T):
        x = _x(T)
        log = []

        def state(g0=None):
            g = x.grad
            log.append((g is g0, g.requires_grad, g.grad_fn is not None, g.detach().clone()))
            return g

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (x**3).sum().backward(create_graph=True)
            g1 = state()
            (x**3).sum().backward(create_graph=True)
            g2 = state(g1)
            (x**3).sum().backward()
            state(g2)
            (x**3).sum().backward()
            g4 = state(g2)
        version = g4._version
        (x**2).sum().backward()
        log.append(x.grad._version - version)
        return log

    assert_same(prog)


def test_accumulate_into_a_grad_set_by_hand_that_requires_grad():
    def prog(T):
        x = _x(T)
        g0 = T.ones(3, dtype=T.float64, requires_grad=True)
        x.grad = g0
        (x * 3).sum().backward()
        return x.grad is g0, x.grad.requires_grad, x.grad.grad_fn is None, x.grad.detach()

    assert_same(prog)


def test_accumulate_plain_then_create_graph_is_out_of_place():
    def prog(T):
        x = _x(T)
        (x**3).sum().backward()
        g0 = x.grad
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (x**3).sum().backward(create_graph=True)
        return x.grad is g0, g0, x.grad.requires_grad, x.grad.grad_fn is not None, x.grad

    assert_same(prog)


def test_create_graph_grad_is_not_shared_between_leaves():
    """Two leaves that get the same gradient object must not share their .grad: a later
    in-place accumulation into one would change the other."""

    def prog(T):
        a, b = _x(T), _x(T)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (a + b).sum().backward(create_graph=True)
        (a * 5).sum().backward()
        return a.grad, b.grad

    assert_same(prog)


def test_double_backward_through_accumulated_grad():
    def prog(T):
        x = _x(T)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (x**3).sum().backward(create_graph=True)
        g = x.grad
        x.grad = None
        g.sum().backward()
        return x.grad

    assert_same(prog)


# ------------------------------------------------------------------ the .grad setter
def _set_grad(T, make):
    x = T.ones(2, 3, dtype=T.float64, requires_grad=True)
    x.grad = make(T, x)
    return x.grad


SETTER_CASES = {
    "size": lambda T, x: T.ones(3, 2, dtype=T.float64),
    "0d": lambda T, x: T.ones((), dtype=T.float64),
    "dtype_f32": lambda T, x: T.ones(2, 3),
    "dtype_i64": lambda T, x: T.ones(2, 3, dtype=T.int64),
    "dtype_c128": lambda T, x: T.ones(2, 3, dtype=T.complex128),
    "dtype_and_size": lambda T, x: T.ones(3, dtype=T.float32),
    "not_a_tensor": lambda T, x: 1.0,
    "a_list": lambda T, x: [1.0, 2.0],
    "itself": lambda T, x: x,
}


@pytest.mark.parametrize("case", sorted(SETTER_CASES))
def test_grad_setter_errors(case):
    assert_same_error(lambda T: _set_grad(T, SETTER_CASES[case]))


def test_grad_setter_accepts_matching_tensor_and_none():
    def prog(T):
        x = T.ones(2, dtype=T.float64, requires_grad=True)
        x.grad = T.tensor([1.0, 2.0], dtype=T.float64)
        a = x.grad.clone()
        x.grad = None
        y = T.ones(2, dtype=T.int64)  # not requiring grad: any matching gradient goes
        y.grad = T.ones(2, dtype=T.int64)
        return a, x.grad, y.grad

    assert_same(prog)


# ------------------------------------------------------------------ argument errors
def _bw(T, **kw):
    x = _x(T)
    return T.autograd.backward(**{"tensors": [(x * 2).sum()], **kw(T, x)})


def _grad_tensors_list(T):
    return (lambda x: T.autograd.backward([x * 2], [[1.0, 2.0, 3.0]]))(_x(T))


def _second_output_no_grad(T):
    return (lambda x: T.autograd.grad([(x * 2).sum(), T.ones(2)], [x]))(_x(T))


ERRORS = {
    "backward_inputs_empty_list": lambda T: (_x(T) * 2).sum().backward(inputs=[]),
    "backward_inputs_empty_tuple": lambda T: T.autograd.backward((_x(T) * 2).sum(), inputs=()),
    "grad_inputs_empty": lambda T: T.autograd.grad((_x(T) * 2).sum(), []),
    "grad_inputs_empty_dict": lambda T: T.autograd.grad((_x(T) * 2).sum(), {}),
    "backward_inputs_mapping": lambda T: (
        lambda x: T.autograd.backward(
            (x * 2).sum(), inputs=__import__("collections").OrderedDict(a=x)
        )
    )(_x(T)),
    "grad_inputs_mapping": lambda T: (
        lambda x: T.autograd.grad((x * 2).sum(), __import__("collections").OrderedDict(a=x))
    )(_x(T)),
    "fewer_grad_tensors": lambda T: (
        lambda x: T.autograd.backward([(x * 2).sum(), (x * 3).sum()], [T.ones((), dtype=T.float64)])
    )(_x(T)),
    "fewer_grad_outputs": lambda T: (
        lambda x: T.autograd.grad(
            [(x * 2).sum(), (x * 3).sum()], [x], [T.ones((), dtype=T.float64)]
        )
    )(_x(T)),
    "grad_tensors_shape": lambda T: (
        lambda x: T.autograd.backward([x * 2], [T.ones(2, dtype=T.float64)])
    )(_x(T)),
    "grad_tensors_0d_for_vector": lambda T: (
        lambda x: T.autograd.backward([x * 2], [T.tensor(1.0, dtype=T.float64)])
    )(_x(T)),
    "grad_outputs_shape": lambda T: (
        lambda x: T.autograd.grad([x * 2], [x], [T.ones(2, dtype=T.float64)])
    )(_x(T)),
    "grad_outputs_complex_for_real": lambda T: (
        lambda x: T.autograd.grad([x * 2], [x], [T.ones(3, dtype=T.complex128)])
    )(_x(T)),
    "grad_tensors_float": lambda T: (lambda x: T.autograd.backward([x * 2], [3.0]))(_x(T)),
    "grad_tensors_list": _grad_tensors_list,
    "output_not_a_tensor": lambda T: T.autograd.backward([3.0]),
    "grad_output_not_a_tensor": lambda T: T.autograd.grad([3.0], [_x(T)]),
    "output_no_grad": lambda T: T.autograd.backward([T.ones(3)]),
    "second_output_no_grad": _second_output_no_grad,
    "non_scalar_implicit": lambda T: (_x(T) * 2).backward(),
    "none_for_non_scalar": lambda T: (lambda x: T.autograd.backward([x * 2], [None]))(_x(T)),
    "complex_implicit": lambda T: (_x(T) * 1j).sum().backward(),
    "backward_input_no_grad": lambda T: (_x(T) * 2).sum().backward(inputs=[T.ones(3)]),
    "backward_input_non_leaf_no_grad": lambda T: (_x(T) * 2).sum().backward(inputs=[T.ones(3) * 2]),
    "grad_input_no_grad": lambda T: T.autograd.grad((_x(T) * 2).sum(), [T.ones(3)]),
    "backward_input_float": lambda T: (_x(T) * 2).sum().backward(inputs=[3.0]),
    "grad_input_float": lambda T: T.autograd.grad((_x(T) * 2).sum(), [3.0]),
    "grad_unused": lambda T: T.autograd.grad((_x(T) * 2).sum(), [_x(T)]),
    "materialize_with_allow_unused_false": lambda T: (
        lambda x: T.autograd.grad((x * 2).sum(), [x], allow_unused=False, materialize_grads=True)
    )(_x(T)),
    "grad_tensors_and_grad_variables": lambda T: (
        lambda x: T.autograd.backward([(x * 2).sum()], T.ones(()), grad_variables=[T.ones(())])
    )(_x(T)),
    "backward_twice": lambda T: (lambda y: (y.backward(), y.backward()))(
        (lambda x: (x * x).sum())(_x(T))
    ),
    "grad_twice": lambda T: (
        lambda x: (lambda y: (T.autograd.grad(y, x), T.autograd.grad(y, x)))((x * x).sum())
    )(_x(T)),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_argument_errors(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert_same_error(ERRORS[case])


def test_more_grad_tensors_than_outputs_are_ignored():
    def prog(T):
        x = _x(T)
        T.autograd.backward([(x * 2).sum()], [T.ones((), dtype=T.float64), T.ones(())])
        g = T.autograd.grad([(x * 3).sum()], [x], [T.ones((), dtype=T.float64), None])
        return x.grad, g

    assert_same(prog)


def test_grad_outputs_of_another_real_dtype_are_accepted():
    def prog(T):
        x = _x(T)
        a = T.autograd.grad([x * 2], [x], [T.ones(3, dtype=T.float32)])
        b = T.autograd.grad([x * 2], [x], [T.ones(3, dtype=T.int64)])
        return a, b

    assert_same(prog)


def test_deprecation_warnings():
    def prog(T):
        x = _x(T)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            T.autograd.backward([(x * 2).sum()], grad_variables=[T.ones((), dtype=T.float64)])
            T.autograd.grad((x * 2).sum(), [x], only_inputs=False)
        return [(c.category.__name__, str(c.message)) for c in w], x.grad

    nt, th = run_both(prog)
    assert nt[0] == [m for m in th[0] if m[0] == "FutureWarning"]
    np.testing.assert_array_equal(nt[1].numpy(), th[1].numpy())


# ------------------------------------------------------------------ transforms, gradient edges
@pytest.mark.parametrize("transform", ["grad", "vmap", "vjp"])
def test_backward_inside_a_function_transform(transform):
    def prog(T):
        x = T.tensor(arr(4), requires_grad=True)

        def f(t):
            (t.sin().sum() if transform != "vmap" else t.sin()).backward()
            return t.sum()

        if transform == "vjp":
            return T.func.vjp(f, x)
        return getattr(T.func, transform)(f)(x)

    assert_same_error(prog)


def test_gradient_edges_as_outputs():
    def prog(T):
        x = T.tensor(arr(4), requires_grad=True)
        y = x.exp()
        (g,) = T.autograd.grad(
            T.autograd.graph.get_gradient_edge(y), x, T.tensor(arr(4, seed=1)), retain_graph=True
        )
        z = (y * 3).sum()
        T.autograd.backward(T.autograd.graph.get_gradient_edge(z), retain_graph=True)
        leaf = T.autograd.grad(T.autograd.graph.get_gradient_edge(x), x, T.ones(4, dtype=T.float64))
        return g, x.grad, leaf

    assert_same(prog)


EDGE_ERRORS = {
    "implicit_non_scalar": lambda T, x: T.autograd.backward(
        T.autograd.graph.get_gradient_edge(x * 3)
    ),
    "wrong_shape": lambda T, x: T.autograd.backward(
        T.autograd.graph.get_gradient_edge(x * 3), T.ones(3, dtype=T.float64)
    ),
    "complex_for_real": lambda T, x: T.autograd.grad(
        T.autograd.graph.get_gradient_edge(x * 3), x, T.ones(4, dtype=T.complex128)
    ),
    "materialize": lambda T, x: T.autograd.grad(
        (x * 3).sum(),
        [x, T.autograd.graph.get_gradient_edge(T.ones(2, requires_grad=True))],
        materialize_grads=True,
    ),
}


@pytest.mark.parametrize("case", sorted(EDGE_ERRORS))
def test_gradient_edge_errors(case):
    assert_same_error(lambda T: EDGE_ERRORS[case](T, T.tensor(arr(4), requires_grad=True)))


# ------------------------------------------------------------------ is_grads_batched
def test_batched_grads_materialize_unbatched_zeros_and_dict_inputs():
    """torch materializes an unused input's gradient after the vmapped pass: unbatched."""

    def prog(T):
        x = T.tensor(arr(3), requires_grad=True)
        y = T.tensor(arr(2), requires_grad=True)
        eye = T.eye(3, dtype=T.float64)
        a = T.autograd.grad(
            x.exp(),
            [x, y],
            eye,
            is_grads_batched=True,
            materialize_grads=True,
            retain_graph=True,
        )
        b = T.autograd.grad(x.exp(), {"x": x}, eye, is_grads_batched=True)
        return a, b

    assert_same(prog)


def test_batched_grads_shape_mismatch():
    assert_same_error(
        lambda T: (
            lambda x: T.autograd.grad(
                x * 2, x, T.ones(2, 4, 5, dtype=T.float64), is_grads_batched=True
            )
        )(_x(T))
    )


def test_batched_grads_unused_input():
    assert_same_error(
        lambda T: (
            lambda x: T.autograd.grad(
                x * 2, [x, _x(T, 2)], T.eye(3, dtype=T.float64), is_grads_batched=True
            )
        )(_x(T))
    )


@pytest.mark.parametrize("shape", [(), (0, 3), (2, 3, 5)])
def test_batched_grads_first_gradient_errors(shape):
    # the first gradient decides: a 0-d or empty batch fails at its indexing, as torch's
    assert_same_error(
        lambda T: T.autograd.grad(
            _x(T) * 2, _x(T), T.zeros(*shape, dtype=T.float64), is_grads_batched=True
        )
    )


def test_batched_grads_free_only_the_nodes_they_run():
    """A non-retaining batched pass frees the saved values of the nodes it runs, as any
    pass: a node off its path (w's sin) still backpropagates afterwards."""

    def prog(T):
        x, w = _x(T), _x(T)
        y = x.exp() * 2 + w.sin() * 3
        gx = T.autograd.grad(y, x, T.eye(3, dtype=T.float64), is_grads_batched=True)
        return gx, T.autograd.grad(y.sum(), w)

    assert_same(prog)
