"""Undefined gradients against PyTorch: a formula that gives no gradient (vector_norm of
order 0) leaves the inputs behind it without one, through every node kind (views,
reshapes, arithmetic, CopySlices), for backward and autograd.grad (allow_unused,
materialize_grads), with hooks called as PyTorch calls them (None)."""

from __future__ import annotations

import pytest
from twolibs import arr, assert_same, assert_same_error


def _norm0(L, t):
    return L.linalg.vector_norm(t, 0)


# ways to reach vector_norm(., 0) from the leaf x (2 x 3)
PATHS = {
    "direct": lambda L, x: x,
    "flatten": lambda L, x: x.flatten(),
    "reshape": lambda L, x: x.reshape(6),
    "view slice": lambda L, x: x.view(6)[1:],
    "t flatten": lambda L, x: x.t().flatten(),
    "mul reshape": lambda L, x: (x * 2).reshape(3, 2),
    "exp t": lambda L, x: x.exp().t(),
    "sum": lambda L, x: x.sum(0),
    "cat": lambda L, x: L.cat([x, x]),
    "expand": lambda L, x: x[:1].expand(4, 3),
    "unsqueeze select": lambda L, x: x.unsqueeze(0)[0, 1],
    "copy slices": lambda L, x: (lambda y: (y[0].mul_(2), y)[1])(x * 1),
    "index_put": lambda L, x: (x * 1).index_put((L.tensor([0]),), L.ones(3, dtype=x.dtype)),
}


@pytest.mark.parametrize("path", PATHS)
def test_backward_leaves_grad_none(path):
    def prog(L, x):
        x.requires_grad_(True)
        _norm0(L, PATHS[path](L, x)).backward()
        return x.grad

    assert_same(prog, arr(2, 3))


@pytest.mark.parametrize("path", PATHS)
def test_autograd_grad_of_an_undefined_gradient(path):
    x = arr(2, 3)

    def grad(L, x, **kw):
        x.requires_grad_(True)
        return L.autograd.grad(_norm0(L, PATHS[path](L, x)), x, **kw)

    assert_same_error(grad, x)
    assert_same(lambda L, x: grad(L, x, allow_unused=True), x)
    assert_same(lambda L, x: grad(L, x, materialize_grads=True), x)

    def created(L, x):
        (g,) = grad(L, x, materialize_grads=True, create_graph=True)
        return g, g.requires_grad

    assert_same(created, x)


def test_an_undefined_gradient_beside_a_defined_one():
    def prog(L, x, w):
        x.requires_grad_(True)
        w.requires_grad_(True)
        y = x.flatten()
        (_norm0(L, y) * w + (x[0] * w).sum()).backward()
        a, b = x.unbind(0)
        g = L.autograd.grad(_norm0(L, a) + b.sum(), x)
        return x.grad, w.grad, g

    assert_same(prog, arr(2, 3), arr(1, seed=1).reshape(()))


def test_hooks_see_none():
    def prog(L, x):
        x.requires_grad_(True)
        log = []
        x.register_hook(lambda g: log.append(("x", g)))
        y = x * 2
        y.register_hook(lambda g: log.append(("y", g)))
        z = y.flatten()
        z.retain_grad()
        z.grad_fn.register_prehook(lambda go: log.append(("pre", go)))
        z.grad_fn.register_hook(lambda gi, go: log.append(("post", gi, go)))
        _norm0(L, z).backward()
        return log, x.grad, z.grad

    assert_same(prog, arr(2, 3))


def test_an_existing_grad_is_kept_and_transforms_give_zeros():
    def prog(L, x):
        x.requires_grad_(True)
        x.grad = L.ones_like(x)
        _norm0(L, x.flatten()).backward()
        f = lambda a: _norm0(L, a.flatten())  # noqa: E731
        return x.grad, L.func.grad(f)(x.detach()), L.func.vjp(f, x.detach())[1](L.tensor(1.0))

    assert_same(prog, arr(2, 3))


def test_inputs_given_to_backward():
    def prog(L, x, w):
        x.requires_grad_(True)
        w.requires_grad_(True)
        log = []
        w.register_hook(lambda g: log.append(g))
        (_norm0(L, x.flatten()) * w).backward(inputs=[x])
        return x.grad, w.grad, log

    assert_same(prog, arr(2, 3), arr(1, seed=1).reshape(()))
