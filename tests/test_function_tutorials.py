"""PyTorch's tutorials on custom autograd Functions, followed step by step (in our own
words) with both libraries: "Double Backward with Custom Functions", "Creating Extensions
Using NumPy and SciPy", and the torch.func note "Extending torch.func with
autograd.Function" (NumpySort/NumpyTake with vmap staticmethods, MyCube with a generated
vmap rule, a jvp staticmethod)."""

from __future__ import annotations

import functools
import types

import numpy as np
import scipy.fft
import scipy.signal
import torch
from twolibs import arr, assert_close, assert_same, fd_grad

import numtorch as nt


# ------------------------------------------------------------------ double backward
@functools.cache
def double_backward(lib):
    Function = lib.autograd.Function

    class Square(Function):  # saves its input
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**2

        @staticmethod
        def backward(ctx, grad_out):
            (x,) = ctx.saved_tensors
            return grad_out * 2 * x

    class Exp(Function):  # saves its output
        @staticmethod
        def forward(ctx, x):
            result = lib.exp(x)
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_out):
            (result,) = ctx.saved_tensors
            return result * grad_out

    class Sinh(Function):  # intermediates returned as outputs, so double backward sees them
        @staticmethod
        def forward(ctx, x):
            expx = lib.exp(x)
            expnegx = lib.exp(-x)
            ctx.save_for_backward(expx, expnegx)
            return (expx - expnegx) / 2, expx, expnegx

        @staticmethod
        def backward(ctx, grad_out, grad_out_exp, grad_out_negexp):
            expx, expnegx = ctx.saved_tensors
            grad_input = grad_out * (expx + expnegx) / 2
            grad_input += grad_out_exp * expx
            grad_input -= grad_out_negexp * expnegx
            return grad_input

    class SinhBad(Function):  # intermediates kept on ctx: double backward is wrong
        @staticmethod
        def forward(ctx, x):
            expx = lib.exp(x)
            expnegx = lib.exp(-x)
            ctx.expx = expx
            ctx.expnegx = expnegx
            return (expx - expnegx) / 2

        @staticmethod
        def backward(ctx, grad_out):
            return grad_out * (ctx.expx + ctx.expnegx) / 2

    class Cube(Function):  # backward written as another Function
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, grad_out):
            (x,) = ctx.saved_tensors
            return CubeBackward.apply(grad_out, x)

    class CubeBackward(Function):
        @staticmethod
        def forward(ctx, grad_out, x):
            ctx.save_for_backward(x, grad_out)
            return grad_out * 3 * x**2

        @staticmethod
        def backward(ctx, grad_out):
            x, grad_out_saved = ctx.saved_tensors
            return grad_out * 3 * x**2, grad_out * 6 * x * grad_out_saved

    def sinh(x):
        return Sinh.apply(x)[0]

    return types.SimpleNamespace(
        square=Square.apply, exp=Exp.apply, sinh=sinh, sinh_bad=SinhBad.apply, cube=Cube.apply
    )


def test_double_backward_gradchecks():
    ns = double_backward(nt)
    x = nt.tensor(arr(3, 3), requires_grad=True)
    for f in (ns.square, ns.exp, ns.sinh, ns.cube):
        assert nt.autograd.gradcheck(f, x)
        assert nt.autograd.gradgradcheck(f, x)
    # keeping intermediates on ctx: first order is right, second order is not
    assert nt.autograd.gradcheck(ns.sinh_bad, x)
    assert not nt.autograd.gradgradcheck(ns.sinh_bad, x, raise_exception=False)


def test_double_backward_values_against_torch():
    def prog(lib, x):
        ns = double_backward(lib)
        x.requires_grad_()
        res = []
        for f in (ns.square, ns.exp, ns.sinh, ns.cube):
            (g,) = lib.autograd.grad(f(x).sum(), x, create_graph=True)
            (gg,) = lib.autograd.grad(g.sum(), x)
            res.append((f(x), g, gg))
        return res

    assert_same(prog, arr(3, 3))


# ------------------------------------------------------------------ numpy and scipy
@functools.cache
def numpy_extensions(lib):
    class BadFFTFunction(lib.autograd.Function):
        """|rfft2| forward; its 'backward' is irfft2 (not the true gradient, as the tutorial
        says: it only shows the mechanics)."""

        @staticmethod
        def forward(ctx, input):
            numpy_input = input.detach().numpy()
            result = abs(scipy.fft.rfft2(numpy_input))
            return input.new(result)

        @staticmethod
        def backward(ctx, grad_output):
            numpy_go = grad_output.numpy()
            result = scipy.fft.irfft2(numpy_go)
            return grad_output.new(result)

    class ScipyConv2dFunction(lib.autograd.Function):
        @staticmethod
        def forward(ctx, input, filter, bias):
            input, filter, bias = input.detach(), filter.detach(), bias.detach()
            result = scipy.signal.correlate2d(input.numpy(), filter.numpy(), mode="valid")
            result += bias.numpy()
            ctx.save_for_backward(input, filter, bias)
            return lib.as_tensor(result, dtype=input.dtype)

        @staticmethod
        def backward(ctx, grad_output):
            grad_output = grad_output.detach()
            input, filter, bias = ctx.saved_tensors
            grad_output = grad_output.numpy()
            grad_bias = np.sum(grad_output, keepdims=True)
            grad_input = scipy.signal.convolve2d(grad_output, filter.numpy(), mode="full")
            grad_filter = scipy.signal.correlate2d(input.numpy(), grad_output, mode="valid")
            return (
                lib.from_numpy(grad_input),
                lib.from_numpy(grad_filter).to(lib.float),
                lib.from_numpy(grad_bias).to(lib.float),
            )

    class ScipyConv2d(lib.nn.Module):
        def __init__(self, filter, bias):
            super().__init__()
            self.filter = lib.nn.Parameter(filter)
            self.bias = lib.nn.Parameter(bias)

        def forward(self, input):
            return ScipyConv2dFunction.apply(input, self.filter, self.bias)

    return types.SimpleNamespace(incorrect_fft=BadFFTFunction.apply, ScipyConv2d=ScipyConv2d)


def test_bad_fft():
    def prog(lib, x, go):
        x.requires_grad_()
        result = numpy_extensions(lib).incorrect_fft(x)
        result.backward(go)
        return result, x.grad, result.grad_fn.name()

    assert_same(prog, arr(8, 8).astype(np.float32), arr(8, 5, seed=1).astype(np.float32), rtol=1e-5)


def test_scipy_conv2d_with_learnable_weights():
    def prog(lib, x, filt, bias, go):
        module = numpy_extensions(lib).ScipyConv2d(filt, bias)
        x.requires_grad_()
        output = module(x)
        output.backward(go)
        return output, x.grad, module.filter.grad, module.bias.grad

    f32 = np.float32
    args = (arr(10, 10).astype(f32), arr(3, 3, seed=1).astype(f32), arr(1, 1, seed=2).astype(f32))
    assert_same(prog, *args, arr(8, 8, seed=3).astype(f32), rtol=1e-5, atol=1e-6)


def test_scipy_conv2d_gradcheck():
    module = numpy_extensions(nt).ScipyConv2d(nt.tensor(arr(3, 3)).float(), nt.randn(1, 1))
    x = [nt.tensor(arr(20, 20), requires_grad=True)]
    assert nt.autograd.gradcheck(module, x, eps=1e-6, atol=1e-4)


# ------------------------------------------------------------------ torch.func + Function
@functools.cache
def func_examples(lib):
    def to_numpy(tensor):
        return tensor.cpu().numpy()

    class NumpySort(lib.autograd.Function):
        @staticmethod
        def forward(x, dim):
            device = x.device
            x = to_numpy(x)
            ind = np.argsort(x, axis=dim)
            ind_inv = np.argsort(ind, axis=dim)
            result = np.take_along_axis(x, ind, axis=dim)
            return (
                lib.tensor(result, device=device),
                lib.tensor(ind, device=device),
                lib.tensor(ind_inv, device=device),
            )

        @staticmethod
        def setup_context(ctx, inputs, output):
            _, dim = inputs
            _, ind, ind_inv = output
            ctx.mark_non_differentiable(ind, ind_inv)
            ctx.save_for_backward(ind, ind_inv)
            ctx.dim = dim

        @staticmethod
        def backward(ctx, grad_output, _0, _1):
            ind, ind_inv = ctx.saved_tensors
            return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None

        @staticmethod
        def vmap(info, in_dims, x, dim):
            x_bdim, _ = in_dims
            x = x.movedim(x_bdim, 0)
            dim = dim if dim >= 0 else dim + x.dim() - 1
            return NumpySort.apply(x, dim + 1), (0, 0, 0)

    class NumpyTake(lib.autograd.Function):
        @staticmethod
        def forward(x, ind, ind_inv, dim):
            device = x.device
            x, ind = to_numpy(x), to_numpy(ind)
            return lib.tensor(np.take_along_axis(x, ind, dim), device=device)

        @staticmethod
        def setup_context(ctx, inputs, output):
            _, ind, ind_inv, dim = inputs
            ctx.save_for_backward(ind, ind_inv)
            ctx.dim = dim

        @staticmethod
        def backward(ctx, grad_output):
            ind, ind_inv = ctx.saved_tensors
            return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None, None, None

        @staticmethod
        def vmap(info, in_dims, x, ind, ind_inv, dim):
            x_bdim, ind_bdim, ind_inv_bdim, _ = in_dims
            logical_dim = x.dim() if x_bdim is None else x.dim() - 1
            dim = dim if dim >= 0 else dim + logical_dim

            def front(t, bdim):
                return t.expand(info.batch_size, *t.shape) if bdim is None else t.movedim(bdim, 0)

            x, ind, ind_inv = front(x, x_bdim), front(ind, ind_bdim), front(ind_inv, ind_inv_bdim)
            return NumpyTake.apply(x, ind, ind_inv, dim + 1), 0

    class MyCube(lib.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x**3, 3 * x**2

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            _, dx = output
            ctx.save_for_backward(x, dx)

        @staticmethod
        def backward(ctx, grad_output, grad_dx):
            x, dx = ctx.saved_tensors
            return grad_output * dx + grad_dx * 6 * x

    class MySin(lib.autograd.Function):
        generate_vmap_rule = True  # jacfwd and hessian vmap over it

        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)

        @staticmethod
        def backward(ctx, gy):
            (x,) = ctx.saved_tensors
            return gy * x.cos()

        @staticmethod
        def jvp(ctx, x_t):
            (x,) = ctx.saved_tensors
            return x_t * x.cos()

    def my_cube(x):
        return MyCube.apply(x)[0]

    return types.SimpleNamespace(sort=NumpySort.apply, cube=my_cube, sin=MySin.apply)


def test_numpy_sort_with_vmap_staticmethod():
    def prog(lib, x):
        ns = func_examples(lib)
        f = lib.func
        values = f.vmap(ns.sort, in_dims=(0, None))(x, 0)
        g = f.grad(lambda y: (ns.sort(y, 1)[0] * lib.arange(4.0, dtype=y.dtype)).sum())(x)
        per_row = f.vmap(f.grad(lambda r: (ns.sort(r, 0)[0] ** 2).sum()))(x)
        jac = f.jacrev(lambda y: ns.sort(y, 0)[0])(x[0])
        return values, g, per_row, jac

    assert_same(prog, arr(3, 4))


def test_my_cube_generated_vmap_rule():
    def prog(lib, x):
        ns = func_examples(lib)
        f = lib.func
        result = f.vmap(ns.cube)(x)
        grad_x = f.grad(ns.cube)(x[0])
        ggx = f.grad(f.grad(ns.cube))(x[0])
        per_example = f.vmap(f.grad(ns.cube))(x)
        jac = f.jacrev(f.vmap(ns.cube))(x)
        return result, grad_x, ggx, per_example, jac

    got = assert_same(prog, arr(5))
    assert_close(got[0], torch.tensor(arr(5) ** 3))


def test_jvp_staticmethod():
    def prog(lib, x, t):
        ns = func_examples(lib)
        f = lib.func
        primal, tangent = f.jvp(ns.sin, (x,), (t,))
        return primal, tangent, f.jacfwd(ns.sin)(x), f.hessian(lambda y: ns.sin(y).sum())(x)

    got = assert_same(prog, arr(4), arr(4, seed=1))
    x, t = arr(4), arr(4, seed=1)
    fd = np.array([fd_grad(lambda v, i=i: np.sin(v)[i], x) @ t for i in range(4)])
    assert_close(got[1], torch.tensor(fd), rtol=1e-6)
