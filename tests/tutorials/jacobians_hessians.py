"""Jacobians, Hessians, hvp and more (after "Jacobians, Hessians, hvp, vhp, and more:
composing function transforms"): the Jacobian of a tanh layer by a loop of vjps, by
vmap(vjp), by jacrev and jacfwd, Hessians, batch Jacobians and Hessian-vector products."""

from functools import partial

import torch
import torch.nn.functional as F
from torch.func import hessian, jacfwd, jacrev, jvp, vjp, vmap

torch.manual_seed(0)


def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()


D = 16
weight = torch.randn(D, D)
bias = torch.randn(D)
x = torch.randn(D)

xp = x.clone().requires_grad_()
unit_vectors = torch.eye(D)


def compute_jac(xp):
    jacobian_rows = [
        torch.autograd.grad(predict(weight, bias, xp), xp, vec)[0] for vec in unit_vectors
    ]
    return torch.stack(jacobian_rows)


jacobian = compute_jac(xp)
print(jacobian.shape)
print(jacobian[0])

_, vjp_fn = vjp(partial(predict, weight, bias), x)
(ft_jacobian,) = vmap(vjp_fn)(unit_vectors)
assert torch.allclose(ft_jacobian, jacobian)

ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)
assert torch.allclose(ft_jacobian, jacobian)
jacfwd_jacobian = jacfwd(predict, argnums=2)(weight, bias, x)
assert torch.allclose(jacfwd_jacobian, jacobian, atol=1e-6)

ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)
ref_jac_bias = torch.autograd.functional.jacobian(lambda b: predict(weight, b, x), bias)
assert torch.allclose(ft_jac_bias, ref_jac_bias, atol=1e-6)
print(ft_jac_weight.shape, ft_jac_bias.shape)

hess_api = hessian(predict, argnums=2)(weight, bias, x)
hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
print(hess_api.shape, torch.allclose(hess_api, hess_fwdfwd, atol=1e-5))
print(torch.allclose(hess_api, hess_revrev, atol=1e-5))

Din, Dout = 32, 2048
weight = torch.randn(Dout, Din)
bias = torch.randn(Dout)
x = torch.randn(Din)
using_fwd = jacfwd(predict, argnums=2)(weight, bias, x)
using_bwd = jacrev(predict, argnums=2)(weight, bias, x)
print(using_fwd.shape, torch.allclose(using_fwd, using_bwd, atol=1e-5))


batch_size = 64
Din = 31
Dout = 33
weight = torch.randn(Dout, Din)
bias = torch.randn(Dout)
x = torch.randn(batch_size, Din)
compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
batch_jacobian0 = compute_batch_jacobian(weight, bias, x)
print(batch_jacobian0.shape)


def predict_with_output_summed(weight, bias, x):
    return predict(weight, bias, x).sum(0)


batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, x).movedim(1, 0)
assert torch.allclose(batch_jacobian0, batch_jacobian1, atol=1e-6)

compute_batch_hessian = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))
batch_hess = compute_batch_hessian(weight, bias, x)
print(batch_hess.shape)


def hvp(f, primals, tangents):
    return jvp(jacrev(f), primals, tangents)[1]


def f(x):
    return x.sin().sum()


x = torch.randn(2048)
tangent = torch.randn(2048)
result = hvp(f, (x,), (tangent,))
assert torch.allclose(result, -x.sin() * tangent, atol=1e-6)
print(result.shape)
