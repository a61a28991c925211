"""The autograd profiler and the high-level autograd API (after "The Fundamentals of
Autograd"): profile a loop of elementwise ops, then backward with a vector, and
torch.autograd.functional's jacobian and vjp."""

import torch

torch.manual_seed(0)
device = torch.device("cpu")
run_on_gpu = False
if torch.cuda.is_available():
    device = torch.device("cuda")
    run_on_gpu = True

x = torch.randn(2, 3, requires_grad=True)
y = torch.rand(2, 3, requires_grad=True)
z = torch.ones(2, 3, requires_grad=True)

with torch.autograd.profiler.profile(use_cuda=run_on_gpu) as prf:
    for _ in range(1000):
        z = (z / x) * y

averages = prf.key_averages()
print(sorted((e.key, e.count) for e in averages))
table = prf.key_averages().table(sort_by="self_cpu_time_total")
print(table.splitlines()[1].split())

x = torch.randn(3, requires_grad=True)
y = x * 2
while y.data.norm() < 1000:
    y = y * 2
v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(v)
print(x.grad / v / (y / x).detach())


def exp_adder(x, y):
    return 2 * x.exp() + 3 * y


inputs = (torch.rand(3), torch.rand(3))
jac = torch.autograd.functional.jacobian(exp_adder, inputs)
print(torch.allclose(jac[0], torch.diag(2 * inputs[0].exp())), jac[1])


def do_some_doubling(x):
    y = x * 2
    while y.data.norm() < 1000:
        y = y * 2
    return y


inputs = torch.randn(3)
my_gradients = torch.tensor([0.1, 1.0, 0.0001])
out, vjp = torch.autograd.functional.vjp(do_some_doubling, inputs, v=my_gradients)
print(vjp / my_gradients / (out / inputs))
