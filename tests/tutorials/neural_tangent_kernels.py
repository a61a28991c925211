"""Neural tangent kernels (after "Neural Tangent Kernels"): the empirical NTK of a small
CNN, by contracting Jacobians (full, trace, diagonal) and by NTK-vector products, the
two checked against each other."""

import torch
import torch.nn as nn
from torch.func import functional_call, jacrev, jvp, vjp, vmap

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, (3, 3))
        self.conv2 = nn.Conv2d(32, 32, (3, 3))
        self.conv3 = nn.Conv2d(32, 32, (3, 3))
        self.fc = nn.Linear(21632, 10)

    def forward(self, x):
        x = self.conv1(x).relu()
        x = self.conv2(x).relu()
        x = self.conv3(x)
        return self.fc(x.flatten(1))


x_train = torch.randn(20, 3, 32, 32, device=device)
x_test = torch.randn(5, 3, 32, 32, device=device)
net = CNN().to(device)
params = {k: v.detach() for k, v in net.named_parameters()}


def fnet_single(params, x):
    return functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)


def empirical_ntk_jacobian_contraction(fnet_single, params, x1, x2, compute="full"):
    jac1 = vmap(jacrev(fnet_single), (None, 0))(params, x1)
    jac1 = [j.flatten(2) for j in jac1.values()]
    jac2 = vmap(jacrev(fnet_single), (None, 0))(params, x2)
    jac2 = [j.flatten(2) for j in jac2.values()]
    expr = {"full": "Naf,Mbf->NMab", "trace": "Naf,Maf->NM", "diagonal": "Naf,Maf->NMa"}
    result = torch.stack([torch.einsum(expr[compute], j1, j2) for j1, j2 in zip(jac1, jac2)])
    return result.sum(0)


for compute in ("full", "trace", "diagonal"):
    result = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test, compute)
    print(compute, result.shape)


def empirical_ntk_ntk_vps(func, params, x1, x2, compute="full"):
    def get_ntk(x1, x2):
        def func_x1(params):
            return func(params, x1)

        def func_x2(params):
            return func(params, x2)

        output, vjp_fn = vjp(func_x1, params)

        def get_ntk_slice(vec):
            vjps = vjp_fn(vec)  # vec @ J(x2).T
            _, jvps = jvp(func_x2, (params,), vjps)  # J(x1) @ vjps
            return jvps

        basis = torch.eye(output.numel(), dtype=output.dtype, device=output.device)
        return vmap(get_ntk_slice)(basis.view(output.numel(), -1))

    result = vmap(vmap(get_ntk, (None, 0)), (0, None))(x1, x2)
    if compute == "full":
        return result
    if compute == "trace":
        return torch.einsum("NMKK->NM", result)
    return torch.einsum("NMKK->NMK", result)


result_from_jacobian_contraction = empirical_ntk_jacobian_contraction(
    fnet_single, params, x_test, x_train
)
result_from_ntk_vps = empirical_ntk_ntk_vps(fnet_single, params, x_test, x_train)
assert torch.allclose(result_from_jacobian_contraction, result_from_ntk_vps, atol=1e-5)
print(result_from_ntk_vps.shape)
