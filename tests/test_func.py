"""torch.func's reverse-mode transforms (grad, grad_and_value, vjp, jacrev, jacfwd, hessian,
linearize) and their compositions with vmap and jvp. Each program runs on numtorch and on
torch and the results (values or error texts) are compared."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from twolibs import arr, assert_close, assert_same, assert_same_error
from twomods import copy_weights

import numtorch as nt


# ------------------------------------------------------------------ perturbation confusion
@pytest.mark.parametrize("x0", [-2.0, 0.0, 0.5, 3.0])
def test_perturbation_confusion_nested_grad_is_one(x0):
    def f(lib, x):
        g = lib.func.grad

        def outer(x):
            return x * g(lambda y: x + y)(lib.tensor(1.0, dtype=lib.float64))

        return g(outer)(x)

    out = assert_same(f, np.array(x0))
    assert float(out) == 1.0


def test_perturbation_confusion_across_grad_and_jvp():
    # d/dx [x * d/dy (x * y)] = 2x, mixing forward inside reverse and reverse inside forward
    def f(lib, x):
        def inner_jvp(x):
            y = lib.tensor(1.5, dtype=lib.float64)
            return x * lib.func.jvp(lambda y: x * y, (y,), (lib.ones_like(y),))[1]

        def inner_grad(x):
            return x * lib.func.grad(lambda y: x * y)(lib.tensor(1.5, dtype=lib.float64))

        return (
            lib.func.grad(inner_jvp)(x),
            lib.func.jvp(inner_grad, (x,), (lib.ones_like(x),))[1],
        )

    a, b = assert_same(f, np.array(1.25))
    assert float(a) == float(b) == 2.5


# ------------------------------------------------------------------ per-sample gradients
def _mlp(lib):
    def loss(params, x, t):
        h = lib.tanh(x @ params["w1"] + params["b1"])
        y = h @ params["w2"] + params["b2"]
        return -lib.nn.functional.log_softmax(y, -1).gather(0, t.reshape(1)).sum()

    return loss


def test_per_sample_gradients_match_a_loop_and_torch():
    rng = np.random.default_rng(0)
    p = {
        "w1": rng.standard_normal((6, 5)),
        "b1": rng.standard_normal(5),
        "w2": rng.standard_normal((5, 3)),
        "b2": rng.standard_normal(3),
    }
    x, t = rng.standard_normal((7, 6)), rng.integers(0, 3, 7)

    def run(lib):
        params = {k: lib.tensor(v) for k, v in p.items()}
        return lib.vmap(lib.func.grad(_mlp(lib)), in_dims=(None, 0, 0))(
            params, lib.tensor(x), lib.tensor(t)
        )

    got = assert_same(run, rtol=1e-10, atol=1e-12)
    params = {k: nt.tensor(v) for k, v in p.items()}
    for k in p:
        loop = nt.stack(
            [nt.func.grad(_mlp(nt))(params, nt.tensor(x[i]), nt.tensor(t[i]))[k] for i in range(7)]
        )
        assert_close(got[k], loop, rtol=1e-10, atol=1e-12)


def test_per_sample_gradients_of_a_wide_layer():
    # 96 x 48 weights: the per-sample gradients are a stack of large outer products
    def f(lib, w, xs, ts):
        loss = lambda w, x, t: ((lib.tanh(w @ x) - t) ** 2).sum()  # noqa: E731
        return lib.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(w, xs, ts)

    assert_same(f, arr(96, 48), arr(5, 48, seed=1), arr(5, 96, seed=2), rtol=1e-10, atol=1e-12)
    xs = (arr(96, 48), arr(5, 48, seed=1), arr(5, 96, seed=2))
    assert_same(lambda lib, *a: f(lib, *(x.float() for x in a)), *xs, rtol=1e-4, atol=1e-5)


def test_per_sample_gradients_with_vmap_over_vjp_and_chunks():
    def f(lib, w, xs):
        def one(x):
            out, fn = lib.func.vjp(lambda w: lib.sin(w @ x), w)
            return fn(lib.ones_like(out))[0]

        return lib.vmap(one)(xs), lib.vmap(one, chunk_size=2)(xs)

    assert_same(f, arr(3, 4), arr(5, 4, seed=1))


# ------------------------------------------------------------------ Hessians
def _f_many_ops(lib, x, y):
    z = lib.tanh(x) * y.exp() + lib.sin(x * y).pow(2)
    z = z + lib.logsumexp(lib.stack([x, y]), dim=0) + lib.cumsum(x, 0) * 0.1
    w = lib.outer(z, y).softmax(-1)
    return (w @ x).sum() + lib.linalg.vector_norm(z) + (x[1:] * y[:-1]).mean()


def _f_matrix(lib, a, v):
    m = a @ a.T + lib.eye(a.shape[0], dtype=a.dtype)
    return lib.log(lib.linalg.det(m)) + v @ lib.linalg.solve(m, v) + lib.relu(a).pow(3).sum()


@pytest.mark.parametrize(
    "f, shapes",
    [(_f_many_ops, ((4,), (4,))), (_f_matrix, ((3, 3), (3,)))],
    ids=["elementwise+reductions", "linalg"],
)
@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_hessian_agrees_with_nested_jacobians_and_torch(f, shapes, argnums):
    xs = [arr(*s, seed=i) for i, s in enumerate(shapes)]
    fn = lambda *a: f(nt, *a)  # noqa: E731
    F = nt.func
    h = assert_same(
        lambda lib, *a: lib.func.hessian(lambda *b: f(lib, *b), argnums)(*a), *xs, rtol=1e-9
    )
    # torch's own forward-over-forward is wrong for linalg.det (finite differences agree with
    # ours), so the nested forms are checked against the Hessian rather than against torch's.
    for nested in (
        F.jacrev(F.jacrev(fn, argnums), argnums),
        F.jacfwd(F.jacfwd(fn, argnums), argnums),
        F.jacfwd(F.jacrev(fn, argnums), argnums),
        F.jacrev(F.jacfwd(fn, argnums), argnums),
    ):
        for a, b in zip(_flat(nested(*(nt.tensor(x) for x in xs))), _flat(h)):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-11)


def test_forward_over_forward_det_matches_finite_differences():
    rng = np.random.default_rng(0)
    a, t1, t2 = (rng.standard_normal((3, 3)) for _ in range(3))
    F = nt.func
    got = F.jvp(
        lambda A: F.jvp(nt.linalg.det, (A,), (nt.tensor(t1),))[1], (nt.tensor(a),), (nt.tensor(t2),)
    )[1]
    e = 1e-4
    d = lambda x, y: np.linalg.det(a + x * t1 + y * t2)  # noqa: E731
    fd = (d(e, e) - d(e, -e) - d(-e, e) + d(-e, -e)) / (4 * e * e)
    np.testing.assert_allclose(got.item(), fd, rtol=1e-6)


def _flat(x):
    if isinstance(x, (tuple, list)):
        return [v for e in x for v in _flat(e)]
    return [x]


# ------------------------------------------------------------------ compositions
def _sq(lib, x):
    return lib.sin(x) * x.sum() + x.pow(3)


COMPOSITIONS = {
    "vmap(grad)": lambda lib, x: lib.vmap(lib.func.grad(lambda r: _sq(lib, r).sum()))(x),
    "grad(vmap)": lambda lib, x: lib.func.grad(lambda x: lib.vmap(lambda r: _sq(lib, r))(x).sum())(
        x
    ),
    "grad(grad(grad))": lambda lib, x: lib.func.grad(
        lib.func.grad(lib.func.grad(lambda s: lib.sin(s) * s.exp()))
    )(x[0, 0]),
    "jacfwd(jacrev)": lambda lib, x: lib.func.jacfwd(lib.func.jacrev(lambda r: _sq(lib, r)))(x[0]),
    "jacrev(jacrev)": lambda lib, x: lib.func.jacrev(lib.func.jacrev(lambda r: _sq(lib, r)))(x[0]),
    "vmap(jvp)": lambda lib, x: lib.vmap(
        lambda r: lib.func.jvp(lambda r: _sq(lib, r), (r,), (lib.ones_like(r),))[1]
    )(x),
    "jvp(vjp)": lambda lib, x: lib.func.jvp(
        lambda r: lib.func.vjp(lambda r: _sq(lib, r), r)[1](lib.ones_like(r))[0],
        (x[0],),
        (x[1],),
    ),
    "vjp(jvp)": lambda lib, x: lib.func.vjp(
        lambda r: lib.func.jvp(lambda r: _sq(lib, r), (r,), (x[1],))[1], x[0]
    )[1](x[2]),
    "vmap(vmap(grad))": lambda lib, x: lib.vmap(
        lib.vmap(lib.func.grad(lambda s: lib.sin(s) * s * s))
    )(x),
    "vmap(jacrev)": lambda lib, x: lib.vmap(lib.func.jacrev(lambda r: _sq(lib, r)))(x),
    "jacrev(vmap)": lambda lib, x: lib.func.jacrev(lib.vmap(lambda r: _sq(lib, r)))(x),
    "vmap(hessian)": lambda lib, x: lib.vmap(lib.func.hessian(lambda r: _sq(lib, r).sum()))(x),
    "grad(jvp)": lambda lib, x: lib.func.grad(
        lambda r: lib.func.jvp(lambda r: _sq(lib, r).sum(), (r,), (x[1],))[1]
    )(x[0]),
    "vmap(vjp) in_dims None": lambda lib, x: lib.vmap(
        lambda ct: lib.func.vjp(lambda r: _sq(lib, r), x[0])[1](ct)[0]
    )(x),
}


@pytest.mark.parametrize("name", list(COMPOSITIONS))
def test_compositions_match_torch(name):
    assert_same(COMPOSITIONS[name], arr(3, 4), rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------------ the API
def test_argnums_pytrees_kwargs_and_aux():
    def f(lib, a, b, c):
        def fn(p, q, r, *, scale):
            loss = (p["w"] * q[0]).sum() * scale + (q[1] * r).sum()
            return loss, {"w": p["w"] * 2, "n": loss.detach()}

        args = ({"w": a}, (b, c), c)
        F = lib.func
        return (
            F.grad(fn, has_aux=True)(*args, scale=3.0),
            F.grad(fn, argnums=(0, 1), has_aux=True)(*args, scale=3.0),
            F.grad(fn, argnums=-1, has_aux=True)(*args, scale=3.0),
            F.grad_and_value(fn, argnums=(2, 0), has_aux=True)(*args, scale=0.5),
            # torch's jacrev and jacfwd take no kwargs
            F.jacrev(lambda *a: fn(*a, scale=1.0), argnums=(0, 2), has_aux=True)(*args),
            F.jacfwd(lambda *a: fn(*a, scale=1.0), argnums=1, has_aux=True)(*args),
        )

    assert_same(f, arr(2, 3), arr(2, 3, seed=1), arr(2, 3, seed=2))


def test_vjp_fn_pytrees_reuse_and_aux():
    def f(lib, a, b):
        def fn(d):
            return {"s": d["x"].sin() * d["y"], "t": (d["x"] @ d["y"].T,)}, d["x"].sum()

        out, vjp_fn, aux = lib.func.vjp(fn, {"x": a, "y": b}, has_aux=True)
        ct = {"s": lib.ones_like(out["s"]), "t": (out["t"][0] * 0 + 2,)}
        return (
            out,
            aux,
            vjp_fn(ct),
            vjp_fn(ct),
            lib.vmap(vjp_fn)({"s": a[None] * 3, "t": (b[None, :2, :2],)}),
        )

    assert_same(f, arr(2, 2), arr(2, 2, seed=1))


def test_jacrev_jacfwd_output_and_input_structures():
    def f(lib, x, y):
        fn = lambda x, y: {"a": x.sin(), "b": (x.sum() * y, y.exp())}  # noqa: E731
        F = lib.func
        return (
            F.jacrev(fn, argnums=(0, 1))(x, y),
            F.jacfwd(fn, argnums=(0, 1))(x, y),
            F.jacrev(fn, chunk_size=1)(x, y),
            F.jacrev(fn, argnums=1, chunk_size=2)(x, y),
            F.jacrev(lambda d: d["p"].cos() * 2)({"p": x}),
            F.jacfwd(lambda d: d["p"].cos() * 2)({"p": x}),
            F.jacrev(lambda s: (s * 2, s.exp()))(x[0]),
            F.jacrev(lambda m: m @ m)(lib.stack([x[:2], y])),
        )

    assert_same(f, arr(3), arr(2, seed=1), rtol=1e-12)


def test_jacfwd_randomness():
    # 'same' adds one shared draw (its Jacobian is the identity); 'error' refuses
    def f(lib, x):
        return lib.func.jacfwd(lambda x: x + lib.rand(3, dtype=x.dtype), randomness="same")(x)

    assert_same(f, arr(3))
    assert_same_error(lambda lib, x: lib.func.jacfwd(lambda x: x + lib.rand(3))(x), arr(3))


def test_linearize_matches_jvp():
    def f(lib, x, t):
        out, jvp_fn = lib.func.linearize(lambda x: lib.tanh(x) * x.sum(), x)
        return out, jvp_fn(t), jvp_fn(t * 2)

    assert_same(f, arr(4), arr(4, seed=1))


def test_grad_respects_inner_no_grad_and_ignores_outer():
    def f(lib, x):
        def fn(x):
            with lib.no_grad():
                c = x * 3  # a constant for the derivative
            return (c * x).sum() + x.pow(2).sum()

        with lib.no_grad():
            outer = lib.func.grad(fn)(x)
        return lib.func.grad(fn)(x), outer

    assert_same(f, arr(3))


def test_detach_and_item_inside_grad():
    def f(lib, x):
        def fn(x):
            k = float(x.sum().item()) + x.nelement() + x.ndimension() + len(x)
            return (x.detach() * x).sum() * k

        return lib.func.grad(fn)(x)

    assert_same(f, arr(3))


def test_tensor_detach_called_unbound_inside_transforms():
    """``Tensor.detach(t)`` on a transform's tensor (the op, through its level): no
    gradient, no tangent, the batch kept."""

    def f(lib, x):
        det = lib.Tensor.detach
        g = lib.func.grad(lambda t: (det(t) * t).sum())(x)
        j = lib.func.jvp(lambda t: det(t) * t, (x,), (lib.ones_like(x),))
        v = lib.func.vmap(lambda t: det(t) * 2)(x.reshape(3, 1))
        return g, j, v

    assert_same(f, arr(3))


def test_inplace_and_views_inside_grad():
    def f(lib, x):
        def fn(x):
            y = x * 1
            y[0] = 5.0
            y[1:].mul_(2)
            z = y.view(2, 2)
            z[:, 1] += x[:2]
            y.unsqueeze(0).sin_()
            return (y * y).sum()

        return lib.func.grad(fn)(x)

    assert_same(f, arr(4))


def test_grad_of_a_tensor_that_requires_grad_outside():
    # func.grad's result stays differentiable by the eager tape at level 0
    def f(lib, x):
        x = x.clone().requires_grad_()
        g = lib.func.grad(lambda x: (x.sin() * x).sum())(x)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return g.detach(), gg

    assert_same(f, arr(3))


def test_vjp_of_unrelated_output_gives_zeros():
    def f(lib, x, y):
        out, fn = lib.func.vjp(lambda x, y: y * 2, x, y)
        return fn(lib.ones_like(out)), lib.func.grad(lambda x, y: y.sum(), argnums=(0, 1))(x, y)

    assert_same(f, arr(3), arr(3, seed=1))


def test_grad_tracking_tensor_repr_and_state():
    def run(lib):
        seen = {}

        def fn(x):
            seen["repr"] = repr(x)
            seen["state"] = (x.requires_grad, x.grad_fn, (x * 2).grad_fn.name(), x.is_leaf)
            return x.sum()

        lib.func.grad(fn)(lib.tensor([1.0, 2.0]))
        return seen

    assert_same(run)


# ------------------------------------------------------------------ errors
def _vjp_twice(lib, x):
    vjp_fn = lib.func.vjp(lambda x: (x.sin() * x).exp(), x)[1]
    vjp_fn(x, retain_graph=False)
    return vjp_fn(x)


ERRORS = {
    "non-scalar output": lambda lib, x: lib.func.grad(lambda x: x)(x),
    "non-tensor output": lambda lib, x: lib.func.grad(lambda x: 3.0)(x),
    "integer input": lambda lib, x: lib.func.grad(lambda x: x.sum())(x.long()),
    "argnum out of range": lambda lib, x: lib.func.grad(lambda x: x.sum(), argnums=2)(x),
    "argnum negative out of range": lambda lib, x: lib.func.grad(lambda x: x.sum(), argnums=-2)(x),
    "argnums repeated": lambda lib, x: lib.func.grad(lambda x: x.sum(), argnums=(0, 0))(x),
    "argnums empty": lambda lib, x: lib.func.grad(lambda x: x.sum(), argnums=())(x),
    "argnums list": lambda lib, x: lib.func.grad(lambda x: x.sum(), argnums=[0])(x),
    "argnums float": lambda lib, x: lib.func.grad(lambda x: x.sum(), argnums=1.0)(x),
    "argnums tuple of float": lambda lib, x: lib.func.grad(lambda x: x.sum(), argnums=(0.0,))(x),
    "has_aux not a pair": lambda lib, x: lib.func.grad(lambda x: x.sum(), has_aux=True)(x),
    "has_aux one-tuple": lambda lib, x: lib.func.grad(lambda x: (x.sum(),), has_aux=True)(x),
    "non-tensor argument": lambda lib, x: lib.func.grad(lambda x: x)(3.0),
    "no arguments": lambda lib, x: lib.func.grad(lambda: x.sum())(),
    "vjp has_aux": lambda lib, x: lib.func.vjp(lambda x: x, x, has_aux=True),
    "vjp non-tensor output": lambda lib, x: lib.func.vjp(lambda x: 3, x),
    "vjp empty output": lambda lib, x: lib.func.vjp(lambda x: (), x),
    "vjp integer output": lambda lib, x: lib.func.vjp(lambda x: x.long(), x),
    "vjp cotangent structure": lambda lib, x: lib.func.vjp(lambda x: (x, x), x)[1](x),
    "vjp cotangent shape": lambda lib, x: lib.func.vjp(lambda x: x, x)[1](x[:2]),
    "vjp_fn after retain_graph=False": lambda lib, x: _vjp_twice(lib, x),
    "jacrev chunk_size 0": lambda lib, x: lib.func.jacrev(lambda x: x, chunk_size=0)(x),
    "jacrev non-tensor output": lambda lib, x: lib.func.jacrev(lambda x: 3)(x),
    "jacfwd non-tensor output": lambda lib, x: lib.func.jacfwd(lambda x: 3)(x),
    "jacfwd integer input": lambda lib, x: lib.func.jacfwd(lambda x: x)(x.long()),
    "jacrev integer input": lambda lib, x: lib.func.jacrev(lambda x: x)(x.long()),
    "jacrev has_aux": lambda lib, x: lib.func.jacrev(lambda x: x, has_aux=True)(x),
    "jacfwd has_aux": lambda lib, x: lib.func.jacfwd(lambda x: x, has_aux=True)(x),
    "leaf in-place": lambda lib, x: lib.func.grad(lambda x: x.mul_(2).sum())(x),
    "linearize tangent shape": lambda lib, x: lib.func.linearize(lambda x: x.sin(), x)[1](x[:2]),
    "linearize tangent count": lambda lib, x: lib.func.linearize(lambda x: x.sin(), x)[1](x, x),
    "linearize tangent dtype": lambda lib, x: lib.func.linearize(lambda x: x.sin(), x)[1](
        x.float()
    ),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    assert_same_error(ERRORS[name], arr(3))


def test_escaped_grad_tracking_tensor_raises():
    leaked = []
    nt.func.grad(lambda x: leaked.append(x * 2) or x.sum())(nt.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="escaped the transform"):
        leaked[0] + 1


def _cnn(lib, device: str = "cpu"):
    nn = lib.nn
    lib.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(1, 4, 3),
        nn.ReLU(),
        nn.MaxPool2d(2, 2),
        nn.Conv2d(4, 6, 2),
        nn.Flatten(),
        nn.Linear(24, 3),
    ).to(device, lib.float64)


def test_per_sample_gradients_of_a_cnn_on_either_device(dev, no_fallback):
    """vmap(grad) of a small CNN's loss over a batch on ``dev`` (every op with its batch
    rule): torch.func's per-sample gradients on the CPU, and they stay on the device."""
    rng = np.random.default_rng(5)
    x, t = rng.standard_normal((6, 1, 8, 8)), rng.integers(0, 3, 6)

    def per_sample(lib, model, where):
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, xi, ti):
            out = lib.func.functional_call(model, p, (xi.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, ti.unsqueeze(0))

        xs, ts = lib.tensor(x, device=where), lib.tensor(t, device=where)
        return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, xs, ts)

    tmodel, model = _cnn(torch), _cnn(nt)
    copy_weights(tmodel, model)
    got, want = per_sample(nt, model.to(dev), dev), per_sample(torch, tmodel, "cpu")
    assert {g.device.type for g in got.values()} == {nt.device(dev).type}
    assert_close(got, want, rtol=1e-10, atol=1e-12)
