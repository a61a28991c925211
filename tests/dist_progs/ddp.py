"""Run on 2 ranks: DistributedDataParallel against single-process training on the
concatenated batch (float64), no_sync, buffers, join,
unused parameters, comm hooks and the bucket rebuild."""

import copy

import numpy as np

import numtorch as torch
import numtorch.distributed as dist
import numtorch.nn.functional as F
from numtorch import nn
from numtorch.distributed.algorithms.ddp_comm_hooks import default_hooks
from numtorch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
R, N = dist.get_rank(), dist.get_world_size()
assert N == 2
checks = 0


def check(got, want, tol=1e-12):
    global checks
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)
    checks += 1


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        return self.fc(F.max_pool2d(F.relu(self.conv(x)), 2).flatten(1))


def data(step, n=8):
    g = np.random.default_rng(100 + step)
    x = torch.from_numpy(g.standard_normal((n, 1, 8, 8)))
    return x, torch.from_numpy(g.integers(0, 3, n))


def make(seed):
    torch.manual_seed(seed)
    return CNN().double()


# 1. k steps of DDP (rank r has half r of the batch; rank 1 starts from other weights,
# which the wrap-time broadcast replaces) equal one process on the whole batch
for kwargs in [{}, {"bucket_cap_mb": 0.0005}, {"gradient_as_bucket_view": True}]:
    ref, model = make(0), DDP(make(R), **kwargs)
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(4):
        x, y = data(step)
        opt_ref.zero_grad()
        F.cross_entropy(ref(x), y).backward()
        opt_ref.step()
        opt.zero_grad()
        half = slice(4 * R, 4 * R + 4)
        F.cross_entropy(model(x[half]), y[half]).backward()
        opt.step()
    for p, q in zip(model.module.parameters(), ref.parameters()):
        check(p.detach().numpy(), q.detach().numpy())
assert len(DDP(make(0), bucket_cap_mb=0.0005).reducer.buckets) > 1


# 1b. after the first iteration the buckets follow the order the gradients became ready
# (PyTorch's rebuild): here fc is registered first but used last, so its gradients come
# first; training still equals one process, with gradients as bucket views too
class Swapped(CNN):
    def __init__(self):
        nn.Module.__init__(self)
        self.fc = nn.Linear(4 * 4 * 4, 3)
        self.conv = nn.Conv2d(1, 4, 3, padding=1)


for kwargs in [{}, {"gradient_as_bucket_view": True}]:
    torch.manual_seed(0)
    ref = Swapped().double()
    model = DDP(copy.deepcopy(ref), bucket_cap_mb=0.0002, **kwargs)
    before = [b.indices for b in model.reducer.buckets]
    assert before[0] == [3, 2]  # reverse registration order: conv's bias and weight
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(3):
        x, y = data(step)
        opt_ref.zero_grad()
        F.cross_entropy(ref(x), y).backward()
        opt_ref.step()
        opt.zero_grad()
        F.cross_entropy(model(x[4 * R : 4 * R + 4]), y[4 * R : 4 * R + 4]).backward()
        opt.step()
    after = [b.indices for b in model.reducer.buckets]
    assert after != before and set(after[0]) <= {0, 1}, after  # fc's weight and bias
    for p, q in zip(model.module.parameters(), ref.parameters()):
        check(p.detach().numpy(), q.detach().numpy())

# 2. no_sync: two local backward passes, then a synced one, equal the whole sum
ref, model = make(0), DDP(make(0))
xs = [data(s) for s in range(3)]
for x, y in xs:
    F.cross_entropy(ref(x), y).backward()
with model.no_sync():
    for x, y in xs[:2]:
        F.cross_entropy(model(x[4 * R : 4 * R + 4]), y[4 * R : 4 * R + 4]).backward()
    local = [p.grad.numpy().copy() for p in model.parameters()]
x, y = xs[2]
F.cross_entropy(model(x[4 * R : 4 * R + 4]), y[4 * R : 4 * R + 4]).backward()
for p, q in zip(model.module.parameters(), ref.parameters()):
    check(p.grad.numpy(), q.grad.numpy())
assert not np.allclose(local[0], list(ref.parameters())[0].grad.numpy() / 4)

# 3. buffers: rank 0's running stats reach rank 1 before each forward
bn = DDP(nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3)).double())
bn(torch.ones(4, 3, dtype=torch.float64) * (R + 1) + torch.arange(4.0).double()[:, None])
got = [torch.zeros(3, dtype=torch.float64) for _ in range(N)]
dist.all_gather(got, bn.module[1].running_mean.detach().clone())
assert not np.allclose(got[0].numpy(), got[1].numpy())  # each rank's own statistics
bn(torch.zeros(4, 3, dtype=torch.float64))  # starts from rank 0's, same input everywhere
dist.all_gather(got, bn.module[1].running_mean.detach().clone())
check(got[0].numpy(), got[1].numpy())
quiet = DDP(nn.BatchNorm1d(3).double(), broadcast_buffers=False)
quiet(torch.ones(4, 3, dtype=torch.float64) * R + torch.arange(4.0).double()[:, None])
quiet(torch.ones(4, 3, dtype=torch.float64))
dist.all_gather(got, quiet.module.running_mean.detach().clone())
assert not np.allclose(got[0].numpy(), got[1].numpy())
checks += 1

# 4. join: rank 0 has 3 batches, rank 1 has 2; the models end equal, and equal one process
# that steps on rank 0's third batch alone with its gradient halved
ref, model = make(0), DDP(make(0))
opt_ref = torch.optim.SGD(ref.parameters(), lr=0.1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [data(10 + s) for s in range(3)]
for s, (x, y) in enumerate(batches):
    opt_ref.zero_grad()
    if s < 2:
        F.cross_entropy(ref(x), y).backward()
    else:
        (F.cross_entropy(ref(x[:4]), y[:4]) / 2).backward()
    opt_ref.step()
with model.join():
    for x, y in batches[: 3 - R]:
        opt.zero_grad()
        F.cross_entropy(model(x[4 * R : 4 * R + 4]), y[4 * R : 4 * R + 4]).backward()
        opt.step()
for p, q in zip(model.module.parameters(), ref.parameters()):
    check(p.detach().numpy(), q.detach().numpy())


# 5. find_unused_parameters: a branch used on rank 1 only gets rank 1's half; one used on
# no rank keeps grad None
class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2)

    def forward(self, x, use_b):
        return self.a(x) + (self.b(x) if use_b else 0)


torch.manual_seed(0)
m = DDP(Branchy().double(), find_unused_parameters=True)
x = torch.ones(1, 2, dtype=torch.float64) * (R + 1)
m(x, R == 1).sum().backward()
check(m.module.a.weight.grad.numpy(), np.full((2, 2), 1.5))
check(m.module.b.weight.grad.numpy(), np.full((2, 2), 1.0))
assert m.module.c.weight.grad is None


# 6. comm hooks: allreduce_hook equals the default; fp16 and bf16 to their precision; a
# custom hook sees every bucket with its parameters
def hooked(hook, seed: int):
    """(DDP's gradient, one process's gradient on the whole batch) per parameter, with
    ``hook`` as DDP's communication hook and small buckets."""
    ref, model = make(0), DDP(make(0), bucket_cap_mb=0.0005)
    model.register_comm_hook(None, hook)
    x, y = data(seed)
    F.cross_entropy(ref(x), y).backward()
    F.cross_entropy(model(x[4 * R : 4 * R + 4]), y[4 * R : 4 * R + 4]).backward()
    return zip(model.module.parameters(), ref.parameters())


for hook, tol in [
    (default_hooks.allreduce_hook, 1e-12),
    (default_hooks.fp16_compress_hook, 1e-3),
    (default_hooks.bf16_compress_hook, 1e-2),
]:
    for p, q in hooked(hook, 20):
        check(p.grad.numpy(), q.grad.numpy(), tol)
seen = []


def summing(state, bucket):
    seen.append((bucket.index(), bucket.is_last(), len(bucket.parameters())))
    assert sum(g.numel() for g in bucket.gradients()) == bucket.buffer().numel()
    return dist.all_reduce(bucket.buffer(), async_op=True).get_future()


for p, q in hooked(summing, 21):
    check(p.grad.numpy(), 2 * q.grad.numpy())
assert [s[0] for s in seen] == list(range(len(seen))) and seen[-1][1]
assert sum(s[2] for s in seen) == 4

print(f"rank {R}: {checks} checks", flush=True)
dist.destroy_process_group()
