"""Forward mode: autograd.forward_ad and func.jvp for every op (against finite differences
and torch), compositions with vmap, nesting, in-place writes, and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from opdb import (
    differentiable_ops,
    float_leaves,
    float_outputs,
    float_paths,
    get_path,
    resolve,
    samples,
    set_path,
)
from twolibs import (
    arr,
    as_numpy,
    assert_same,
    assert_same_error,
    jvp_prog,
    tensor_leaves,
    to_nt,
    to_torch,
)

import numtorch as nt
import numtorch.autograd.forward_ad as fwAD

OPS = differentiable_ops()


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in OPS])
def test_forward_ad_matches_finite_differences(op):
    fn = resolve(nt, op.api)
    rng = np.random.default_rng(0)
    for s in samples(op, "float64"):
        paths = float_paths(op, s.args)
        if not paths:
            continue
        tans = [rng.standard_normal(get_path(s.args, p).shape) for p in paths]
        with fwAD.dual_level():
            args = to_nt(s.args)
            for p, t in zip(paths, tans):
                args = set_path(args, p, fwAD.make_dual(get_path(args, p), nt.tensor(t)))
            out = fn(*args, **to_nt(s.kwargs))
            got = [fwAD.unpack_dual(o) for o in float_leaves(out, op)]
            got = [
                np.zeros(tuple(u.primal.shape)) if u.tangent is None else as_numpy(u.tangent)
                for u in got
            ]
        eps = 1e-6

        def at(sign):
            args = s.args
            for p, t in zip(paths, tans):
                args = set_path(args, p, np.asarray(get_path(s.args, p) + sign * eps * t))
            return [as_numpy(o) for o in float_leaves(fn(*to_nt(args), **to_nt(s.kwargs)), op)]

        for g, hi, lo in zip(got, at(1), at(-1)):
            np.testing.assert_allclose(
                g, (hi - lo) / (2 * eps), rtol=1e-5, atol=1e-6, err_msg=f"{op.name} {s}"
            )


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in OPS])
def test_func_jvp_matches_torch_and_composes_with_vmap(op, no_fallback):
    fn = resolve(nt, op.api)
    rng = np.random.default_rng(1)
    s = next(
        (s for s in samples(op, "float64") if float_paths(op, s.args) and float_outputs(op, s)),
        None,
    )
    if s is None:
        return
    paths = float_paths(op, s.args)
    kw = to_nt(s.kwargs)

    def f(*xs):
        args = to_nt(s.args)
        for p, x in zip(paths, xs):
            args = set_path(args, p, x)
        return tuple(float_leaves(fn(*args, **kw)))

    prim = tuple(nt.tensor(get_path(s.args, p)) for p in paths)
    tans = tuple(nt.tensor(rng.standard_normal(x.shape)) for x in prim)
    out, jv = nt.func.jvp(f, prim, tans)
    if not op.test.no_oracle:
        tfn = resolve(torch, op.oracle or op.api)
        tkw = to_torch(s.kwargs)

        def tf(*xs):
            args = to_torch(s.args)
            for p, x in zip(paths, xs):
                args = set_path(args, p, x)
            return tuple(
                o for o in tensor_leaves(tfn(*args, **tkw), torch.Tensor) if o.is_floating_point()
            )

        try:
            ref = torch.func.jvp(
                tf,
                tuple(torch.tensor(x.numpy()) for x in prim),
                tuple(torch.tensor(t.numpy()) for t in tans),
            )
        except (RuntimeError, NotImplementedError):
            ref = None  # no forward-mode formula in torch for this op
        if ref is not None:
            for a, b in zip(jv, ref[1]):
                np.testing.assert_allclose(
                    as_numpy(a), b.clone().numpy(), rtol=1e-7, atol=1e-9, err_msg=op.name
                )
    # vmap over jvp (a batch of tangents) and jvp over vmap (a batch of primals), vs loops.
    B = 3
    tb = tuple(nt.tensor(rng.standard_normal((B, *x.shape))) for x in prim)
    got = nt.vmap(lambda *ts: nt.func.jvp(f, prim, ts)[1])(*tb)
    for k, g in enumerate(got):
        want = nt.stack([nt.func.jvp(f, prim, tuple(t[b] for t in tb))[1][k] for b in range(B)])
        np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=1e-10, atol=1e-12, err_msg=op.name)
    if op.test.vmap_unbatched or any(
        isinstance(a, np.ndarray) and a.dtype.kind == "b" for a in s.args
    ):
        return
    pb = tuple(
        nt.stack([x] * B) + 0.01 * nt.tensor(rng.standard_normal((B, *x.shape))) for x in prim
    )
    got = nt.func.jvp(nt.vmap(f), pb, tb)[1]
    for k, g in enumerate(got):
        want = nt.stack(
            [
                nt.func.jvp(f, tuple(x[b] for x in pb), tuple(t[b] for t in tb))[1][k]
                for b in range(B)
            ]
        )
        np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=1e-9, atol=1e-11, err_msg=op.name)


def test_perturbation_confusion_nested_jvp():
    # d/dx [x * d/dy (x + y)] = 1 for every x
    def outer(x):
        inner = nt.func.jvp(lambda y: x + y, (nt.tensor(1.0),), (nt.tensor(1.0),))[1]
        return x * inner

    for x0 in (0.5, 3.0):
        _, d = nt.func.jvp(outer, (nt.tensor(x0),), (nt.tensor(1.0),))
        assert d.item() == 1.0


def test_second_derivative_by_nested_jvp():
    f = lambda x: x.sin() * x  # noqa: E731
    x = nt.tensor(0.7, dtype=nt.float64)
    one = nt.tensor(1.0, dtype=nt.float64)
    d2 = nt.func.jvp(lambda a: nt.func.jvp(f, (a,), (one,))[1], (x,), (one,))[1]
    np.testing.assert_allclose(d2.item(), 2 * np.cos(0.7) - 0.7 * np.sin(0.7))


def test_inplace_ops_carry_tangents_through_views():
    def prog(lib, fw):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
        with fw.dual_level():
            d = fw.make_dual(x.clone(), lib.tensor([1.0, 10.0, 100.0], dtype=lib.float64))
            d.mul_(2)
            d[1:].add_(d[:2].clone())
            d.sin_()
            p, t = fw.unpack_dual(d)
            return p.numpy().copy(), t.numpy().copy()

    assert_same(lambda lib: prog(lib, lib.autograd.forward_ad), rtol=1e-7, atol=0)


def test_forward_ad_with_reverse_mode_on_the_primal():
    x = nt.tensor([0.3, 0.9], dtype=nt.float64, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, nt.ones(2, dtype=nt.float64))
        y = fwAD.unpack_dual((d * d).exp().sum())
    (g,) = nt.autograd.grad(y.primal, x)
    xs = x.detach().numpy()
    np.testing.assert_allclose(g.numpy(), 2 * xs * np.exp(xs**2).sum() ** 0 * np.exp(xs**2))
    np.testing.assert_allclose(y.tangent.item(), (2 * xs * np.exp(xs**2)).sum())


def test_unpack_dual_and_api_shapes_match_torch():
    for lib, fw in ((nt, fwAD), (torch, torch.autograd.forward_ad)):
        x = lib.zeros(2)
        with fw.dual_level():
            u = fw.unpack_dual(x)
            assert type(u).__name__ == "UnpackedDualTensor" and u._fields == ("primal", "tangent")
            assert u.tangent is None and u.primal.shape == x.shape
            d = fw.make_dual(x, lib.ones(2))
            assert fw.unpack_dual(d.detach()).tangent is None


@pytest.mark.parametrize(
    "prog",
    [
        lambda lib, fw: fw.make_dual(lib.zeros(3), lib.zeros(3)),
        lambda lib, fw: _in_level(fw, lambda: fw.make_dual(lib.zeros(3), lib.zeros(4))),
        lambda lib, fw: _in_level(fw, lambda: fw.make_dual(lib.arange(3), lib.arange(3))),
        lambda lib, fw: _in_level(fw, lambda: _in_level(fw, lambda: None)),
        lambda lib, fw: lib.func.jvp(lambda x: x, [lib.zeros(2)], [lib.zeros(2)]),
        lambda lib, fw: lib.func.jvp(lambda x: x, (lib.zeros(2),), [lib.zeros(2)]),
        lambda lib, fw: lib.func.jvp(lambda x: x, (), ()),
        lambda lib, fw: lib.func.jvp(lambda x: x, (1.0,), (1.0,)),
        lambda lib, fw: lib.func.jvp(lambda x: 3, (lib.zeros(2),), (lib.zeros(2),)),
        lambda lib, fw: lib.func.jvp(lambda x: x, (lib.zeros(2),), (lib.zeros(2),), has_aux=True),
        lambda lib, fw: lib.func.jvp(
            lambda x: lib.ones(2), (lib.zeros(2),), (lib.zeros(2),), strict=True
        ),
    ],
)
def test_errors_match_torch(prog):
    assert_same_error(lambda lib: prog(lib, lib.autograd.forward_ad))


def _in_level(fw, fn):
    with fw.dual_level():
        return fn()


def test_jvp_has_aux_and_independent_outputs():
    x = nt.tensor([1.0, 2.0])
    (out, const), (t, tc), aux = nt.func.jvp(
        lambda a: ((a * 3, nt.ones(2)), {"k": a + 1}), (x,), (nt.ones(2),), has_aux=True
    )
    np.testing.assert_array_equal(t.numpy(), [3.0, 3.0])
    np.testing.assert_array_equal(tc.numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(aux["k"].numpy(), [2.0, 3.0])
    assert type(aux["k"]) is nt.Tensor


def test_reverse_mode_over_dual_tensors():
    """Dual tensors that require grad (or meet a leaf that does) record the tape: backward
    fills a plain leaf's .grad with the primal gradient, and autograd.grad of a dual leaf
    gives a dual gradient (forward over reverse)."""

    def prog(lib, x, w, t):
        fwAD = lib.autograd.forward_ad
        w = w.requires_grad_()
        with fwAD.dual_level():
            d = fwAD.make_dual(x, t)
            (d.sin() * w).sum().backward()
            dd = fwAD.make_dual(x, t).requires_grad_()
            (g,) = lib.autograd.grad((dd.exp() * w).sum(), dd, create_graph=True)
            primal, tangent = fwAD.unpack_dual(g)
            return w.grad, primal.detach(), tangent.detach()

    assert_same(prog, arr(4), arr(4, seed=1), arr(4, seed=2))


# ==================================================================
# Found by issue 14's sweep of silently wrong values and derivatives.


DTYPED = [
    lambda L, x: L.softmax(x, 0, dtype=L.float32),
    lambda L, x: L.log_softmax(x, 0, dtype=L.float32),
    lambda L, x: L.cumprod(x, 0, dtype=L.float32),
    lambda L, x: L.nansum(x, dtype=L.float32),
    lambda L, x: L.nansum(x, 0, dtype=L.float32),
    lambda L, x: L.nanmean(x, dtype=L.float32),
    lambda L, x: x.clone().add_(L.ones(3, dtype=L.float64)),  # in-place: no promotion
    lambda L, x: x.float().clone().mul_(x),
    lambda L, x: x.float().clone().copy_(x),
]


@pytest.mark.parametrize("f", DTYPED)
def test_jvp_tangent_has_the_output_dtype(f):
    assert_same(jvp_prog(f), np.array([1.0, 2.0, 3.0]), rtol=1e-6, atol=1e-6)
    assert_same(jvp_prog(f), np.array([1.0, 2.0, 3.0], np.float32), rtol=1e-6, atol=1e-6)


def test_jvp_tangent_dtype_where_pytorch_differs():
    # PyTorch leaves prod(dtype=float32)'s tangent of a float64 input in float64; a tangent
    # has its primal's dtype everywhere else (forward_ad.make_dual insists on it).
    p, t = jvp_prog(lambda L, x: L.prod(x, dtype=L.float32))(
        nt, nt.tensor([1.0, 2.0, 3.0]).double()
    )
    assert p.dtype == t.dtype == nt.float32
    np.testing.assert_allclose(t.numpy(), [11.0], rtol=1e-6)


# ==================================================================
# Found by issue 14's second fuzz round.


# ------------------------------------------------------------------ jvp of products
@pytest.mark.filterwarnings("ignore")
def test_jvp_of_a_product_skips_the_term_of_an_input_without_tangent():
    # the other operand has no tangent (PyTorch's undefined one): no inf * 0 NaN from it
    x, b = np.array([1e30]), np.array([-3.94])

    def outer(L, x, b):
        return L.func.jvp(lambda x: L.outer(x.sinh(), b), (x,), (L.tensor([-0.33]),))

    assert_same(outer, x, b)
    # x -> x @ b is linear: its tangent is t @ b wherever x is infinite; PyTorch's matmul,
    # mm, mv and bmm give NaN there (x @ 0), its outer and dot do not (finite differences
    # decide: the map is linear)
    xi = nt.tensor([[float("inf"), 1.0], [2.0, 3.0]])
    m = nt.tensor([[1.0, 0.0], [2.0, 1.0]])
    t = nt.ones(2, 2)
    for f in (lambda x: x @ m, lambda x: nt.mm(x, m), lambda x: nt.bmm(x[None], m[None])[0]):
        np.testing.assert_array_equal(nt.func.jvp(f, (xi,), (t,))[1].numpy(), (t @ m).numpy())
    np.testing.assert_array_equal(
        nt.func.jvp(lambda x: nt.mv(x, m[0]), (xi,), (t,))[1].numpy(), [1.0, 1.0]
    )
    np.testing.assert_array_equal(
        nt.func.jvp(lambda x, y: x @ y, (xi, m), (t, t))[1].numpy(), (t @ m + xi @ t).numpy()
    )


# ==================================================================
# Found by issue 14's sweep of crashes where PyTorch succeeds.


BOOL_OPERAND = [
    lambda L, a, m: L.minimum(a, m),
    lambda L, a, m: L.maximum(m, a),
    lambda L, a, m: a / m,
    lambda L, a, m: m / a,
    lambda L, a, m: L.addcdiv(a, a, m),
    lambda L, a, m: L.addcdiv(a, m, a),
    lambda L, a, m: L.addcmul(a, m, a),
    lambda L, a, m: L.atan2(a, m),
    lambda L, a, m: L.fmod(a, m),
    lambda L, a, m: L.remainder(m, a),
    lambda L, a, m: L.where(a > 0, a, m),
]


@pytest.mark.parametrize("f", BOOL_OPERAND)
@pytest.mark.parametrize("dtype", [bool, np.int64])
def test_jvp_with_an_integer_operand(f, dtype):
    def prog(L, a, t):
        m = L.tensor(np.array([True, True, True]).astype(dtype))
        return L.func.jvp(lambda a: f(L, a, m), (a,), (t,))

    assert_same(prog, np.array([2.0, -1.5, 0.5]), np.array([1.0, 0.5, -2.0]))


# ==================================================================
# Issue 14's sweep of aliasing and saved values.


# ------------------------------------------------------------------ absent tangents
@pytest.mark.parametrize(
    "f",
    [
        pytest.param(lambda L, a, c: a * 0.5, id="mul-number"),
        pytest.param(lambda L, a, c: c * a, id="mul-constant"),
        pytest.param(lambda L, a, c: a / c, id="div-constant"),
        pytest.param(lambda L, a, c: c / (a + 5), id="div-by-dual"),
        pytest.param(lambda L, a, c: L.atan2(a, c), id="atan2-constant"),
        pytest.param(lambda L, a, c: a + c.expand(2, 3), id="add-broadcast-constant"),
        pytest.param(lambda L, a, c: L.maximum(a, c), id="maximum-constant"),
    ],
)
def test_jvp_skips_the_term_of_an_operand_without_tangent(f):
    a = arr(3)
    a[0] = -np.inf
    c = np.array([0.5, 2.0, -1.5])

    def prog(lib, a, c):
        return lib.func.jvp(lambda x: f(lib, x, c), (a,), (lib.ones_like(a),))

    assert_same(prog, a, c)
