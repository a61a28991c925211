"""autograd.Function against PyTorch: values, gradients, nodes, ctx features, error texts,
forward mode, and every transform (the same Function code defined once per library)."""

from __future__ import annotations

import functools
import types
import warnings

import numpy as np
import pytest
import torch
from twolibs import arr, assert_close, assert_same, assert_same_error, fd_grad, run_both

import numtorch as nt


@functools.cache
def make(lib):
    """The test Functions, defined against ``lib`` (numtorch or torch)."""
    F = lib.autograd.Function
    once = lib.autograd.function.once_differentiable

    class Exp(F):  # ctx style, saves its output
        @staticmethod
        def forward(ctx, x):
            r = x.exp()
            ctx.save_for_backward(r)
            return r

        @staticmethod
        def backward(ctx, g):
            (r,) = ctx.saved_tensors
            return g * r

    class Scale(F):  # a non-tensor input; backward returns None for it
        @staticmethod
        def forward(ctx, x, k, y):
            ctx.k = k
            ctx.save_for_backward(x, y)
            return x * k * y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * ctx.k * y, None, g * ctx.k * x

    class Cube(F):  # setup_context style, jvp, generated vmap rule, differentiable backward
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x**3, 3 * x**2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0], output[1])
            ctx.save_for_forward(inputs[0], output[1])

        @staticmethod
        def backward(ctx, g, gd):
            x, d = ctx.saved_tensors
            return g * d + gd * 6 * x

        @staticmethod
        def jvp(ctx, t):
            x, d = ctx.saved_tensors
            return t * d, t * 6 * x

    class Cube1(F):  # one output (torch's generated rule fails grad-of-vmap for two)
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x**3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x**2

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return t * 3 * x**2

    class Ste(F):  # straight-through sign: backward is NOT the derivative of forward
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x.sign()

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 1.0

        @staticmethod
        def jvp(ctx, t):
            return t * 1.0

    class SortMe(F):  # two outputs, one marked non-differentiable
        @staticmethod
        def forward(ctx, x):
            v, i = x.sort()
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            return v, i

        @staticmethod
        def backward(ctx, gv, gi):
            (i,) = ctx.saved_tensors
            return lib.zeros_like(gv).scatter(0, i, gv)

    class AddOne(F):  # in place on its input
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class AddOneSetup(F):  # in place, setup_context style (usable under transforms)
        @staticmethod
        def forward(x):
            x.add_(1)
            return x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.mark_dirty(inputs[0])

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Same(F):  # returns its input as is
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    seen = []

    class Pair(F):  # two outputs; what backward sees for the unused one
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1 is None, g2 is None))
            g2 = lib.zeros_like(g1) if g2 is None else g2
            return g1 * 2 + g2 * 3, None

    class Short(F):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return (g,)

    class Long(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, None, None

    class TooLong(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, g

    class GradForInt(F):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    class Once(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**2

        @staticmethod
        @once
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    class Mixed(F):  # non-tensor outputs around a tensor
        @staticmethod
        def forward(ctx, x, name):
            return name, x * 2, 7

        @staticmethod
        def backward(ctx, a, g, b):
            return g * 2, None

    class Wide(F):  # returns a gradient of the wrong shape
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return g.expand(5)

    class Lin(F):  # setup_context style with an explicit vmap staticmethod
        @staticmethod
        def forward(x, w):
            return x * w

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g * w, g * x

        @staticmethod
        def vmap(info, in_dims, x, w):
            xd, wd = in_dims
            x = x.movedim(xd, 0) if xd is not None else x.expand(info.batch_size, *x.shape)
            w = w.movedim(wd, 0) if wd is not None else w.expand(info.batch_size, *w.shape)
            return Lin.apply(x, w), 0

    class NoVmap(F):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Both(NoVmap):
        generate_vmap_rule = True

        @staticmethod
        def vmap(info, in_dims, x):
            return x * 2, in_dims[0]

    return types.SimpleNamespace(**{k: v for k, v in locals().items() if k not in ("lib",)})


def fn(lib):
    return make(lib)


# ------------------------------------------------------------------ eager autograd
def test_node_name_edges_and_grads():
    def prog(lib, x, y):
        x.requires_grad_()
        y.requires_grad_()
        out = fn(lib).Scale.apply(x, 2.5, y)
        node = out.grad_fn
        edges = [None if n is None else n.name() for n, _ in node.next_functions]
        out.sum().backward()
        return (type(node).__name__, node.name(), edges, node.needs_input_grad, out, x.grad, y.grad)

    res = assert_same(prog, arr(3), arr(3, seed=1))
    assert res[:2] == ("ScaleBackward", "ScaleBackward")


def test_saved_output_and_values():
    def prog(lib, x):
        x.requires_grad_()
        y = fn(lib).Exp.apply(x)
        (g,) = lib.autograd.grad(y.sum(), x)
        return y, g, y.requires_grad, y.is_leaf

    assert_same(prog, arr(4))


def test_freed_and_version_errors():
    def twice(lib, x):
        x.requires_grad_()
        y = fn(lib).Exp.apply(x)
        y.sum().backward()
        y.sum().backward()

    def modified(lib, x):
        x.requires_grad_()
        y = fn(lib).Exp.apply(x)
        y.mul_(2)
        y.sum().backward()

    def modified_input(lib, x):
        x = x.clone().requires_grad_()
        h = x * 1
        y = fn(lib).Scale.apply(h, 2.0, h)
        with lib.no_grad():
            h.add_(1)
        y.sum().backward()

    for prog in (twice, modified, modified_input):
        assert_same_error(prog, arr(3))


def test_double_backward_through_backward():
    def prog(lib, x):
        x.requires_grad_()
        y, d = fn(lib).Cube.apply(x)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return y, d, g, gg

    assert_same(prog, arr(3))


def test_gradcheck_and_gradgradcheck():
    x = nt.tensor(arr(3), requires_grad=True)
    y = nt.tensor(arr(3, seed=2), requires_grad=True)
    ns = fn(nt)
    assert nt.autograd.gradcheck(lambda a: ns.Cube.apply(a), (x,))
    assert nt.autograd.gradgradcheck(lambda a: ns.Cube.apply(a)[0], (x,))
    assert nt.autograd.gradcheck(lambda a, b: ns.Scale.apply(a, 1.5, b), (x, y))
    assert nt.autograd.gradcheck(lambda a: ns.Exp.apply(a), (x,))


def test_gradcheck_forward_ad_and_batched():
    x = nt.tensor(arr(3), requires_grad=True)
    cube = fn(nt).Cube.apply
    assert nt.autograd.gradcheck(cube, (x,), check_forward_ad=True, check_batched_grad=True)
    assert nt.autograd.gradgradcheck(cube, (x,), check_fwd_over_rev=True, check_batched_grad=True)


def test_vmap_at_level_zero_records_the_vmapped_function():
    def prog(lib, x):
        x.requires_grad_()
        y, d = lib.func.vmap(fn(lib).Cube.apply)(x.reshape(3, 1))
        name = y.grad_fn.name()
        (y * d).sum().backward()
        return name, y, d, x.grad

    assert assert_same(prog, arr(3))[0] == "VmappedCubeBackward"


def test_wrong_number_of_gradients():
    def short(lib, x):
        x.requires_grad_()
        fn(lib).Short.apply(x, x).sum().backward()

    def too_long(lib, x):
        x.requires_grad_()
        fn(lib).TooLong.apply(x).sum().backward()

    def grad_for_int(lib, x):
        x.requires_grad_()
        fn(lib).GradForInt.apply(x, 2).sum().backward()

    def wide(lib, x):
        x.requires_grad_()
        fn(lib).Wide.apply(x).backward()

    for prog in (short, too_long, grad_for_int, wide):
        assert_same_error(prog, arr(3))
    assert "(expected 2, got 1)" in assert_same_error(short, arr(3)).text

    def long_nones(lib, x):  # extra None gradients are dropped
        x.requires_grad_()
        fn(lib).Long.apply(x).sum().backward()
        return x.grad

    assert_same(long_nones, arr(3))


def test_mark_dirty():
    def prog(lib, x):
        x = x.clone().requires_grad_()
        h = x * 1
        y = fn(lib).AddOne.apply(h)
        name = y.grad_fn.name()
        y.sum().backward()
        return y is h, name, h, x.grad

    def leaf(lib, x):
        x.requires_grad_()
        fn(lib).AddOne.apply(x)

    def no_grad_leaf(lib, x):  # nothing requires grad: plain in-place
        y = fn(lib).AddOne.apply(x)
        return y is x, x, y.requires_grad

    def under_grad(lib, x):
        def f(y):
            h = y.clone()
            out = fn(lib).AddOneSetup.apply(h)
            assert out is h
            return (out * y).sum()

        return lib.func.grad(f)(x), lib.func.vjp(lambda y: fn(lib).AddOneSetup.apply(y * 1), x)[1](
            x
        )

    assert_same(prog, arr(3))
    assert_same_error(leaf, arr(3))
    assert_same(no_grad_leaf, arr(3))
    assert_same(under_grad, arr(3))


def _marking(lib, write: int, marks):
    """A Function that writes its first input in place ``write`` times and marks
    ``marks(x, y)`` dirty, returning x (and y)."""

    class Marks(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            for _ in range(write):
                x.mul_(2)
            ctx.mark_dirty(*marks(x, y))
            return x, y

        @staticmethod
        def backward(ctx, gx, gy):
            return gx * 2, gy

    return Marks


def test_mark_dirty_bumps_the_version_once_per_mention():
    """As PyTorch's ``_mark_dirty``: each tensor ctx.mark_dirty names is bumped once per
    mention, with or without grad, after the forward's own writes."""

    def prog(lib, x, write, marks, rg, mode):
        a = x.clone().requires_grad_(rg)
        x, y = a.clone(), a.clone() * 3
        before = (x._version, y._version)
        with mode(lib):
            _marking(lib, write, marks).apply(x, y)
        return before, x._version, y._version

    grad_modes = (lambda lib: lib.enable_grad(), lambda lib: lib.no_grad())
    for write, marks in [
        (1, lambda x, y: (x,)),
        (0, lambda x, y: (x,)),
        (2, lambda x, y: (x,)),
        (1, lambda x, y: (x, x)),
        (1, lambda x, y: (x, y)),
    ]:
        for rg in (True, False):
            for mode in grad_modes:
                assert_same(lambda lib, x: prog(lib, x, write, marks, rg, mode), arr(3))


def test_mark_dirty_errors_and_the_version_they_leave():
    """A dirty leaf that requires grad, a dirty input not returned, a non-tensor marked:
    PyTorch's errors, raised after the bumps before them."""

    def dirty_not_returned(lib):
        class Dirty(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.mark_dirty(x)
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g, None

        return Dirty

    cases = [
        (True, lambda lib: _marking(lib, 1, lambda x, y: (x,))),
        (False, dirty_not_returned),
        (False, lambda lib: _marking(lib, 0, lambda x, y: (x, 3))),
    ]
    for rg, fn in cases:

        def call(lib, x):
            t = x.clone().requires_grad_(rg)
            fn(lib).apply(t, t.detach())

        def version(lib, x):
            t = x.clone().requires_grad_(rg)
            with pytest.raises(RuntimeError):
                fn(lib).apply(t, t.detach())
            return t._version

        assert_same_error(call, arr(3))
        assert_same(version, arr(3))


def test_mark_dirty_of_a_non_input_warns():
    def prog(lib, x):
        class Made(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                ctx.mark_dirty(y)
                return y

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = x.clone().requires_grad_()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = Made.apply(x)
        y.sum().backward()
        texts = [str(w.message).split(" (Triggered")[0] for w in caught]
        return texts, y._version, y.grad_fn.name(), x.grad

    assert_same(prog, arr(3))


def test_mark_non_differentiable_and_multiple_outputs():
    def prog(lib, x):
        x.requires_grad_()
        v, i = fn(lib).SortMe.apply(x)
        (v * lib.arange(4.0, dtype=x.dtype)).sum().backward()
        return v, i, v.requires_grad, i.requires_grad, x.grad

    assert_same(prog, arr(4))


def test_input_returned_as_is():
    def prog(lib, x):
        x.requires_grad_()
        y = fn(lib).Same.apply(x)
        name = y.grad_fn.name()
        y.sum().backward()
        return y is x, name, x.grad, y

    assert_same(prog, arr(3))


def test_inplace_into_a_returned_view_is_refused():
    """Writing into a view a Function returned would bypass its backward: PyTorch refuses,
    with one text for a single output and another for several; without grad it is allowed."""

    def one(T):
        y = T.ones(2, requires_grad=True) * 1
        fn(T).Same.apply(y).add_(1)

    def several(T, k):
        class Views(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x, x.view(-1)

            @staticmethod
            def backward(ctx, g, h):
                return g + h

        y = T.ones(2, requires_grad=True) * 1
        Views.apply(y)[k].mul_(2)

    assert_same_error(one)
    assert_same_error(lambda T: several(T, 0))
    assert_same_error(lambda T: several(T, 1))

    def allowed(lib, x):
        with lib.no_grad():
            y = fn(lib).Same.apply(x * 1)
            y.add_(1)
        return y

    assert_same(allowed, arr(3))


@pytest.mark.parametrize("materialize", [True, False])
def test_materialize_grads(materialize):
    def prog(lib, x):
        x.requires_grad_()
        ns = fn(lib)
        ns.seen.clear()
        a, _ = ns.Pair.apply(x, materialize)
        a.sum().backward()
        return list(ns.seen), x.grad

    assert_same(prog, arr(3))


def test_once_differentiable():
    def first(lib, x):
        x.requires_grad_()
        (g,) = lib.autograd.grad(fn(lib).Once.apply(x).sum(), x)
        return g, g.requires_grad

    def twice(lib, x):
        x.requires_grad_()
        go = lib.ones(3, dtype=x.dtype, requires_grad=True)
        (g,) = lib.autograd.grad(fn(lib).Once.apply(x), x, go, create_graph=True)
        assert g.requires_grad and g.grad_fn.name() == "torch::autograd::Error"
        g.sum().backward()

    def plain(lib, x):  # the gradient outputs do not require grad: nothing is recorded
        x.requires_grad_()
        (g,) = lib.autograd.grad(fn(lib).Once.apply(x).sum(), x, create_graph=True)
        return g.requires_grad, g.grad_fn

    assert_same(first, arr(3))
    assert_same(plain, arr(3))
    err = assert_same_error(twice, arr(3))
    assert "once_differentiable" in err.text


def test_non_tensor_inputs_and_outputs():
    def prog(lib, x):
        x.requires_grad_()
        name, y, seven = fn(lib).Mixed.apply(x, "hi")
        edges = [n is None for n, _ in y.grad_fn.next_functions]
        y.sum().backward()
        return name, seven, y, edges, x.grad

    assert_same(prog, arr(3))


def test_no_grad_and_no_requires_grad():
    def prog(lib, x):
        y = fn(lib).Exp.apply(x)
        x.requires_grad_()
        with lib.no_grad():
            z = fn(lib).Scale.apply(x, 2.0, x)
        return y, y.requires_grad, y.grad_fn is None, z.requires_grad, z.grad_fn is None


def test_needs_input_grad_and_freed_without_saved():
    def prog(lib, x):
        seen = []

        class Probe(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, k, b):
                seen.append(ctx.needs_input_grad)
                return a * k

            @staticmethod
            def backward(ctx, g):
                seen.append(ctx.saved_tensors)
                return g * ctx.needs_input_grad[0], None, None

        x.requires_grad_()
        with lib.no_grad():
            Probe.apply(x, 2.0, x.detach())
        y = Probe.apply(x, 2.0, x.detach())
        y.sum().backward(retain_graph=True)
        node = y.grad_fn
        y.sum().backward()  # nothing saved: a second pass runs, then the ctx is freed
        return seen, x.grad, node.needs_input_grad

    def freed(lib, x):
        x.requires_grad_()
        y = fn(lib).Same.apply(x)
        y.sum().backward()
        return y.grad_fn.saved_tensors

    assert_same(prog, arr(3))
    assert_same_error(freed, arr(3))

    assert_same(prog, arr(3))


def test_node_hooks_and_tensor_hooks():
    def prog(lib, x):
        x.requires_grad_()
        y = fn(lib).Exp.apply(x)
        events = []
        y.grad_fn.register_prehook(lambda go: events.append(("pre", go[0])) or (go[0] * 2,))
        y.grad_fn.register_hook(lambda gi, go: events.append(("post", gi[0], go[0])))
        y.register_hook(lambda g: events.append(("tensor", g)))
        y.sum().backward()
        return events, x.grad

    assert_same(prog, arr(3))


def test_anomaly_traceback_and_nan():
    x = nt.tensor(arr(3), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with nt.autograd.detect_anomaly():
            y = fn(nt).Exp.apply(x)
    tb = "".join(y.grad_fn.metadata["traceback_"])
    assert "fn(nt).Exp.apply(x)" in tb

    def nan(lib, x):
        x.requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                y = fn(lib).Scale.apply(x, float("nan"), x)
                y.sum().backward()

    assert_same_error(nan, arr(3))


def test_saved_tensors_hooks_apply():
    def prog(lib, x):
        x.requires_grad_()
        packed = []

        def pack(t):
            packed.append(t.shape)
            return t * 1

        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y = fn(lib).Exp.apply(x)
        y.sum().backward()
        return [list(s) for s in packed], x.grad

    assert_same(prog, arr(3))


def test_legacy_errors():
    def call_instance(lib, x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(lib).Exp()(x)

    assert_same_error(call_instance, arr(3))


# ------------------------------------------------------------------ forward mode
def test_forward_ad_with_jvp():
    def prog(lib, x, t):
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            y, d = fn(lib).Cube.apply(fwad.make_dual(x, t))
            return (
                fwad.unpack_dual(y).primal,
                fwad.unpack_dual(y).tangent,
                fwad.unpack_dual(d).tangent,
            )

    assert_same(prog, arr(3), arr(3, seed=1))


@pytest.mark.parametrize("materialize", [True, False])
def test_jvp_materialize_grads(materialize):
    def prog(lib, x, t):
        seen = []

        class M(lib.autograd.Function):
            @staticmethod
            def forward(a, b, k):
                return a * b * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.set_materialize_grads(materialize)

            @staticmethod
            def backward(ctx, g):
                return g, g, None

            @staticmethod
            def jvp(ctx, ta, tb, tk):
                seen.append((tb is None, tk is None))
                return ta if tb is None else ta + tb

        res = lib.func.jvp(lambda a: M.apply(a, x, 3), (x,), (t,))
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            d = fwad.unpack_dual(M.apply(fwad.make_dual(x, t), x, 3)).tangent
        return res, d, seen

    assert_same(prog, arr(3), arr(3, seed=1))


def test_jvp_not_implemented():
    def prog(lib, x, t):
        return lib.func.jvp(fn(lib).NoVmap.apply, (x,), (t,))

    def ctx_style(lib, x, t):
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            return fn(lib).Exp.apply(fwad.make_dual(x, t))

    assert_same_error(prog, arr(3), arr(3, seed=1))
    assert_same_error(ctx_style, arr(3), arr(3, seed=1))


# ------------------------------------------------------------------ transforms
def cube_sum(lib):
    return lambda x: fn(lib).Cube1.apply(x).sum()


def ste_sum(lib):
    return lambda x: (fn(lib).Ste.apply(x) * x).sum()


TRANSFORMS = {
    "grad": lambda lib, f, x: lib.func.grad(f)(x),
    "grad_grad": lambda lib, f, x: lib.func.grad(lambda y: lib.func.grad(f)(y).sum())(x),
    "vmap_grad": lambda lib, f, x: lib.func.vmap(lib.func.grad(f))(x.reshape(2, -1)),
    "grad_vmap": lambda lib, f, x: lib.func.grad(
        lambda y: lib.func.vmap(lambda r: f(r))(y.reshape(2, -1)).sum()
    )(x),
    "jacrev": lambda lib, f, x: lib.func.jacrev(f)(x),
    "jacfwd": lambda lib, f, x: lib.func.jacfwd(f)(x),
    "hessian": lambda lib, f, x: lib.func.hessian(f)(x),
    "jacfwd_jacrev": lambda lib, f, x: lib.func.jacfwd(lib.func.jacrev(f))(x),
    "jvp": lambda lib, f, x: lib.func.jvp(f, (x,), (lib.ones_like(x),)),
    "vjp": lambda lib, f, x: lib.func.vjp(f, x)[1](lib.ones_like(f(x))),
    "vmap_vmap": lambda lib, f, x: lib.func.vmap(lib.func.vmap(lambda r: f(r)))(
        x.reshape(2, 2, -1)
    ),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
@pytest.mark.parametrize("which", ["cube", "ste"])
def test_transforms_against_torch_func(name, which):
    make_f = cube_sum if which == "cube" else ste_sum

    def prog(lib, x):
        return TRANSFORMS[name](lib, make_f(lib), x)

    assert_same(prog, arr(8), rtol=1e-9)


def test_straight_through_is_not_autodiff():
    """Below a vmap the gradient still comes from the user's backward."""
    x = arr(2, 3)
    got = nt.func.grad(lambda y: nt.func.vmap(fn(nt).Ste.apply)(y).sum())(nt.tensor(x))
    assert_close(got, torch.ones(2, 3, dtype=torch.float64))
    xs = nt.tensor(x, requires_grad=True)
    nt.func.vmap(fn(nt).Ste.apply)(xs).sum().backward()
    assert_close(xs.grad, torch.ones(2, 3, dtype=torch.float64))


def test_vmap_staticmethod():
    def prog(lib, x, w):
        ns = fn(lib)
        a = lib.func.vmap(ns.Lin.apply)(x, w)
        b = lib.func.vmap(ns.Lin.apply, in_dims=(0, None))(x, w[0])
        c = lib.func.vmap(lib.func.grad(lambda p, q: ns.Lin.apply(p, q).sum()), (0, None))(x, w[0])
        d = lib.func.jacrev(lambda p: lib.func.vmap(ns.Lin.apply, (0, None))(p, w[0]))(x)
        return a, b, c, d

    assert_same(prog, arr(2, 3), arr(2, 3, seed=1))


def test_vmap_generated_rule_values_and_fd():
    x = arr(3, 4)
    out = nt.func.vmap(lambda r: fn(nt).Cube.apply(r)[0])(nt.tensor(x))
    assert_close(out, torch.tensor(x**3))
    g = nt.func.vmap(nt.func.grad(lambda r: fn(nt).Cube.apply(r)[0].sum()))(nt.tensor(x))
    assert_close(g, torch.tensor(fd_grad(lambda v: (v**3).sum(), x)).reshape(3, 4), rtol=1e-6)


def test_transform_errors():
    def ctx_style(lib, x):
        return lib.func.grad(lambda y: fn(lib).Exp.apply(y).sum())(x)

    def no_vmap(lib, x):
        return lib.func.vmap(fn(lib).NoVmap.apply)(x)

    def both(lib, x):
        return lib.func.vmap(fn(lib).Both.apply)(x)

    for prog in (ctx_style, no_vmap, both):
        assert_same_error(prog, arr(2, 3))


def test_exports():
    import numtorch.autograd.function as ntf

    for name in (
        "Function",
        "FunctionCtx",
        "once_differentiable",
        "InplaceFunction",
        "BackwardCFunction",
    ):
        assert hasattr(ntf, name)
    assert nt.autograd.Function is ntf.Function
    x = nt.tensor(arr(3), requires_grad=True)
    node = fn(nt).Exp.apply(x).grad_fn
    assert isinstance(node, ntf.BackwardCFunction) and isinstance(node, ntf.FunctionCtx)
    assert isinstance(node, nt.autograd.graph.Node)
    ours, theirs = run_both(lambda lib, a: type(fn(lib).Exp.apply(a).grad_fn).__module__, arr(3))
    assert ours.replace("numtorch", "torch") == theirs
    assert np.isfinite(x.detach().numpy()).all()


def test_ctx_takes_any_attribute_name_the_engine_uses_none_of_them():
    """PyTorch's node keeps its fields in C++, so a Function may name ctx attributes
    freely (``op``, ``next_op``, ``sizes``...): the engine's own fields must not collide."""

    def prog(lib, a):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.op, ctx.factor, ctx.kind = "scale", 3.0, "linear"
                return x * ctx.factor

            @staticmethod
            def backward(ctx, g):
                assert (ctx.op, ctx.kind) == ("scale", "linear")
                return g * ctx.factor

        x = a.requires_grad_()
        y = Scale.apply(x).sin().sum()
        (g,) = lib.autograd.grad(y, x)
        return y, g

    assert_same(prog, arr(4))
