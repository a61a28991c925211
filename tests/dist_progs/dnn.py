"""Run on 2 ranks: the gradients of numtorch.distributed.nn.functional's collectives
against the same arithmetic done locally (rank r's input is a known function of r)."""

import numpy as np

import numtorch as torch
import numtorch.distributed as dist
import numtorch.distributed.nn.functional as dnn

dist.init_process_group("gloo")
R, N = dist.get_rank(), dist.get_world_size()
checks = 0


def check(got, want):
    global checks
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-12)
    checks += 1


def x_of(r):
    return np.arange(3.0) + 10 * r + 1


def w_of(r):  # the weights of each rank's loss, sum(w * out)
    return np.array([1.0, -2.0, 0.5]) * (r + 1)


def leaf():
    return torch.from_numpy(x_of(R)).requires_grad_()


W = torch.from_numpy(w_of(R))
all_w = sum(w_of(r) for r in range(N))

x = leaf()
out = dnn.all_reduce(x)
check(out.detach().numpy(), sum(x_of(r) for r in range(N)))
(out * W).sum().backward()
check(x.grad.numpy(), all_w)  # d/dx_R of sum_r w_r . sum_j x_j

x = leaf()
(dnn.broadcast(x, 1) * W).sum().backward()
check(x.grad.numpy(), all_w if R == 1 else np.zeros(3))

x = leaf()
out = dnn.reduce(x, 0)
(out * W).sum().backward()
check(x.grad.numpy(), w_of(0))  # only rank 0's output holds the sum

x = leaf()
outs = dnn.all_gather(x)
sum((o * W * (j + 1)).sum() for j, o in enumerate(outs)).backward()
check(x.grad.numpy(), all_w * (R + 1))

x = leaf()
outs = dnn.gather(x, dst=1)
sum((o * W * (j + 1)).sum() for j, o in enumerate(outs)).backward()
check(x.grad.numpy(), w_of(1) * (R + 1))

xs = [torch.from_numpy(x_of(R) * (j + 1)).requires_grad_() for j in range(N)]
out = dnn.scatter(xs, src=0)
(out * W).sum().backward()
for j in range(N):
    check(xs[j].grad.numpy(), w_of(j) if R == 0 else np.zeros(3))

xs = [torch.from_numpy(x_of(R) * (j + 1)).requires_grad_() for j in range(N)]
out = dnn.reduce_scatter(torch.zeros(3, dtype=torch.float64), xs)
check(out.detach().numpy(), sum(x_of(r) for r in range(N)) * (R + 1))
(out * W).sum().backward()
for j in range(N):
    check(xs[j].grad.numpy(), w_of(j))

xs = [torch.from_numpy(x_of(R) + j).requires_grad_() for j in range(N)]
outs = dnn.all_to_all([torch.zeros(3, dtype=torch.float64) for _ in range(N)], xs)
sum((o * W * (j + 1)).sum() for j, o in enumerate(outs)).backward()
for j in range(N):
    check(xs[j].grad.numpy(), w_of(j) * (R + 1))

x = leaf()
out = dnn.all_to_all_single(torch.zeros(3 * N, dtype=torch.float64), x.repeat(N))
(out * torch.cat([W] * N)).sum().backward()
check(x.grad.numpy(), all_w)

print(f"rank {R}: {checks} checks", flush=True)
dist.destroy_process_group()
